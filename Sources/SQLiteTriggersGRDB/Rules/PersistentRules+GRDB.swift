import GRDB
import Foundation

extension RuleSet {
    /// Writes the rules into the database file as ordinary triggers, which
    /// every writer obeys: the sqlite3 shell with or without the extension,
    /// Python, other processes, other connections of this one. Run it as a
    /// migration step.
    ///
    /// ```swift
    /// migrator.registerMigration("Rules every writer obeys") { db in
    ///     try RuleSet {
    ///         Reminder.afterInsertTouch(\.createdAt)
    ///         Reminder.afterUpdateTouch(\.updatedAt)
    ///     }.installPersistently(db)
    /// }
    /// ```
    ///
    /// What persists: rules plain SQL can express, such as touch stamps,
    /// `RAISE` validations and invariants. `.now` stamps with the app's
    /// clock on connections with SQLiteTriggers (one clock with
    /// `datetime_subsec()` and GRDB's `transactionDate`) and with SQLite's
    /// own time, in the same text format, everywhere else. A rule that calls
    /// `swift_callback()` or any other function of ours, or a function the
    /// app registered on its connection, is refused, naming the rule and the
    /// function: such rules stay TEMP (``install(in:onError:)``).
    ///
    /// The set is the file's whole set of persistent rules: installing it
    /// again changes nothing when nothing changed, replaces a rule whose
    /// definition changed, installs rules a table recreation dropped, and
    /// drops rules a previous install wrote that the set no longer has
    /// (one changed by hand since is refused, never dropped unseen).
    /// They are recorded in the table `sqlitetriggers_rules`, which
    /// ``persistentRuleDrift(_:)`` compares with the file. All or nothing:
    /// a refusal leaves the file as it was. A rule is also checked against
    /// the live schema, as a TEMP one is (every column it names exists).
    ///
    /// Persistent rules call no function of ours, so they hold with
    /// `PRAGMA trusted_schema = OFF` and the schema guard never objects to
    /// them. A rule that is persistent cannot also be installed TEMP on a
    /// connection (it would run twice): that install is refused.
    public func installPersistently(_ db: Database) throws {
        if db.configuration.readonly {
            throw DatabaseError(resultCode: .SQLITE_READONLY, message: readOnlyRefusal(
                "installing persistent rules", consequence: "nothing would be written", remedy: "install them from a migration"))
        }
        let rendered = try persistentTriggers(db)
        try db.inSavepoint {
            try db.execute(sql: PersistentRuleRegistry.createTable)
            let registered = try PersistentRuleRegistry.registered(db)
            let inFile = try PersistentRuleRegistry.fileTriggers(db)
            let wanted = Set(rendered.flatMap { $0.triggers.map(\.name) })
            let temporary = try Set(String.fetchAll(db, sql: "SELECT name FROM temp.sqlite_master WHERE type = 'trigger'"))
            if let rule = rendered.first(where: { $0.triggers.contains { temporary.contains($0.name) } })?.rule {
                throw DatabaseError(resultCode: .SQLITE_MISUSE, message:
                    "rule \"\(rule.name)\" cannot be installed persistently: this connection has it as a TEMP rule "
                    + "(RuleSet.install), and with both it would run twice. Install it one way: persistently, for every writer")
            }
            for entry in registered.values where !wanted.contains(entry.triggerName) {
                // Only what was installed goes: a trigger changed since is
                // someone's work, never dropped unseen.
                if let fileSQL = inFile[entry.triggerName] {
                    guard fileSQL == entry.sql else {
                        throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                            "persistent rule \"\(entry.rule)\" is no longer in the rule set, but its trigger \"\(entry.triggerName)\" "
                            + "was changed in the file since it was installed: drop it (or restore it) in a migration first")
                    }
                    try db.execute(sql: "DROP TRIGGER main.\(SQLQuoting.identifier(entry.triggerName))")
                }
                try db.execute(sql: "DELETE FROM main.sqlitetriggers_rules WHERE triggerName = ?", arguments: [entry.triggerName])
            }
            for (rule, triggers) in rendered {
                for trigger in triggers {
                    let fileSQL = inFile[trigger.name]
                    if fileSQL == trigger.sql, registered[trigger.name]?.sql == trigger.sql { continue }
                    if fileSQL != nil, registered[trigger.name] == nil {
                        throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                            "rule \"\(rule.name)\" cannot be installed persistently: the file already has a trigger "
                            + "\"\(trigger.name)\" that no rule set installed. Name the rule differently, or drop that trigger in a migration first")
                    }
                    if fileSQL != nil { try db.execute(sql: "DROP TRIGGER main.\(SQLQuoting.identifier(trigger.name))") }
                    try db.execute(sql: trigger.sql)
                    try db.execute(sql: """
                        INSERT OR REPLACE INTO main.sqlitetriggers_rules(triggerName, rule, tableName, sql)
                        SELECT name, ?, tbl_name, sql FROM main.sqlite_schema WHERE type = 'trigger' AND name = ?
                        """, arguments: [rule.name, trigger.name])
                }
                try rule.refuseIfUnfit(db)
            }
            return .commit
        }
    }

    /// How the file's persistent rules differ from this set: rules missing
    /// (never installed, or changed in code since: run a migration that
    /// installs the set), changed in the file, dropped from it (a table
    /// recreation drops its triggers), or installed by an earlier set and
    /// no longer in this one. Empty when the file has exactly these rules.
    ///
    /// ```swift
    /// let drift = try dbQueue.read { db in try rules.persistentRuleDrift(db) }
    /// assert(drift.isEmpty, "\(drift)")
    /// ```
    public func persistentRuleDrift(_ db: Database) throws -> [PersistentRuleDrift] {
        let rendered = try persistentTriggers(db)
        let hasRegistry = try db.tableExists("sqlitetriggers_rules", in: "main")
        let registered = hasRegistry ? try PersistentRuleRegistry.registered(db) : [:]
        let inFile = try PersistentRuleRegistry.fileTriggers(db)
        var drift: [PersistentRuleDrift] = []
        for (rule, triggers) in rendered {
            let kinds = triggers.map { trigger -> PersistentRuleDrift.Kind? in
                guard let entry = registered[trigger.name] else { return .missing }
                guard let fileSQL = inFile[trigger.name] else { return .dropped }
                return fileSQL == entry.sql && trigger.sql == entry.sql ? nil : .changed
            }
            if let kind = kinds.compactMap({ $0 }).first {
                drift.append(PersistentRuleDrift(rule: rule.name, tableName: rule.tableName, kind: kind))
            }
        }
        let wanted = Set(rendered.map(\.rule.name))
        var reported: Set<String> = []
        for entry in registered.values.sorted(by: { $0.triggerName < $1.triggerName })
        where !wanted.contains(entry.rule) && reported.insert(entry.rule).inserted {
            drift.append(PersistentRuleDrift(rule: entry.rule, tableName: entry.tableName, kind: .notInRuleSet))
        }
        return drift
    }

    // MARK: - Rendering and refusals

    /// Every rule's triggers as triggers of the file; throws, naming the
    /// rule, when one cannot persist or its table is not in the file.
    private func persistentTriggers(_ db: Database) throws -> [(rule: TempTrigger, triggers: [PersistentTrigger])] {
        let builtin = try builtinFunctions(db)
        return try rules.map { rule in
            let triggers: [PersistentTrigger]
            do {
                triggers = try rule.persistentTriggers()
            } catch let error as PersistenceRefusal {
                throw DatabaseError(resultCode: .SQLITE_MISUSE, message:
                    "rule \"\(error.rule)\" cannot be installed persistently: \(error.reason)")
            }
            for function in rule.calledFunctionNames() where !isSQLiteTriggersFunction(function) {
                guard let isBuiltin = builtin?[sqliteFolded(function)], !isBuiltin else { continue }
                throw DatabaseError(resultCode: .SQLITE_MISUSE, message:
                    "rule \"\(rule.name)\" cannot be installed persistently: it calls \(function)(), which this connection "
                    + "defines and SQLite does not, so every other writer of the file would fail on the writes it fires on. "
                    + "Keep this rule TEMP: install it with RuleSet.install(in:)")
            }
            if try !db.tableExists(rule.tableName, in: "main") && !db.viewExists(rule.tableName, in: "main") {
                throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                    "rule \"\(rule.name)\" is on \"\(rule.tableName)\", which is not a table of the file: "
                    + "create it in an earlier migration (persistent rules fire on the file's own tables and views)")
            }
            return (rule, triggers)
        }
    }

    /// Whether SQLite itself defines each function name (folded), or nil
    /// where PRAGMA function_list is compiled out.
    private func builtinFunctions(_ db: Database) throws -> [String: Bool]? {
        do {
            let rows = try Row.fetchAll(db, sql: "SELECT name, max(builtin) AS builtin FROM pragma_function_list GROUP BY name")
            return Dictionary(rows.map { (sqliteFolded($0["name"] as String), ($0["builtin"] as Int) != 0) }) { first, _ in first }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            return nil
        }
    }
}

/// One way the file's persistent rules differ from a ``SQLiteTriggers/RuleSet``; see
/// ``SQLiteTriggers/RuleSet/persistentRuleDrift(_:)``. Its description names the remedy.
public struct PersistentRuleDrift: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// In the set, never installed (or its definition changed in code:
        /// a derived name is a hash of the definition).
        case missing
        /// Installed, and the file's trigger, or the set's definition of a
        /// named rule, is no longer what was installed.
        case changed
        /// Installed, then dropped from the file: a migration that
        /// recreated the table, or a DROP TRIGGER.
        case dropped
        /// Installed by an earlier set, no longer in this one.
        case notInRuleSet
    }

    /// The rule's name (its first trigger's).
    public let rule: String
    /// The table or view it is on.
    public let tableName: String
    public let kind: Kind

    public init(rule: String, tableName: String, kind: Kind) {
        self.rule = rule
        self.tableName = tableName
        self.kind = kind
    }

    public var description: String {
        let what: String
        switch kind {
        case .missing: what = "is not in the file"
        case .changed: what = "is in the file with another definition"
        case .dropped: what = "was installed, then dropped from the file (a table recreation drops its triggers)"
        case .notInRuleSet: what = "is in the file but no longer in the rule set"
        }
        return "persistent rule \"\(rule)\" on \"\(tableName)\" \(what): install the rule set again in a new migration"
    }
}

/// The file's record of the persistent rules it holds:
/// `sqlitetriggers_rules`, a row per trigger (a rule's companions too), with
/// the SQL `sqlite_schema` held when it was installed.
enum PersistentRuleRegistry {
    static let createTable = """
        CREATE TABLE IF NOT EXISTS main.sqlitetriggers_rules(
          triggerName TEXT PRIMARY KEY NOT NULL,
          rule TEXT NOT NULL,
          tableName TEXT NOT NULL,
          sql TEXT NOT NULL
        ) WITHOUT ROWID
        """

    struct Entry { let triggerName: String; let rule: String; let tableName: String; let sql: String }

    static func registered(_ db: Database) throws -> [String: Entry] {
        let rows = try Row.fetchAll(db, sql: "SELECT triggerName, rule, tableName, sql FROM main.sqlitetriggers_rules")
        return Dictionary(uniqueKeysWithValues: rows.map {
            ($0["triggerName"], Entry(triggerName: $0["triggerName"], rule: $0["rule"], tableName: $0["tableName"], sql: $0["sql"]))
        })
    }

    /// The file's triggers, by name, with their SQL.
    static func fileTriggers(_ db: Database) throws -> [String: String] {
        let rows = try Row.fetchAll(db, sql: "SELECT name, sql FROM main.sqlite_schema WHERE type = 'trigger'")
        return Dictionary(uniqueKeysWithValues: rows.map { ($0["name"], $0["sql"]) })
    }

    /// The names of the rules installed persistently (none when the file
    /// has no registry).
    static func persistentRuleNames(_ db: Database) throws -> Set<String> {
        guard try db.tableExists("sqlitetriggers_rules", in: "main") else { return [] }
        return try Set(String.fetchAll(db, sql: "SELECT rule FROM main.sqlitetriggers_rules"))
    }
}
