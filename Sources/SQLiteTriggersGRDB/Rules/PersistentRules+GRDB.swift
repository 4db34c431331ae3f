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
    /// drops rules a previous install wrote that the set no longer has.
    /// They are recorded in the table `sqlitetriggers_rules`, which
    /// ``persistentRuleDrift(_:)`` compares with the file. A trigger is
    /// dropped or replaced only when it is exactly what that table records
    /// an install wrote: one changed by hand since, or one the table names
    /// that no install wrote, is refused, naming it, never dropped unseen;
    /// and a `sqlitetriggers_rules` in another shape (a view, missing
    /// columns, duplicate or NULL names) is refused, naming the table and
    /// the remedy. All or nothing: a refusal leaves the file as it was. A
    /// rule is also checked against the live schema, as a TEMP one is
    /// (every column it names exists).
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
            // The registry is read and judged before anything is written: a
            // table of that name in another shape (planted, or written by
            // hand) is refused, naming it, and never trusted with a DROP.
            if try !PersistentRuleRegistry.exists(db) { try db.execute(sql: PersistentRuleRegistry.createTable) }
            let registered = try PersistentRuleRegistry.registered(db)
            let inFile = try PersistentRuleRegistry.fileTriggers(db)
            let wanted = Set(rendered.flatMap { $0.triggers.map { sqliteFolded($0.name) } })
            let temporary = try Set(String.fetchAll(db, sql: "SELECT name FROM temp.sqlite_master WHERE type = 'trigger'").map(sqliteFolded))
            if let rule = rendered.first(where: { $0.triggers.contains { temporary.contains(sqliteFolded($0.name)) } })?.rule {
                throw DatabaseError(resultCode: .SQLITE_MISUSE, message:
                    "rule \"\(rule.name)\" cannot be installed persistently: this connection has it as a TEMP rule "
                    + "(RuleSet.install), and with both it would run twice. Install it one way: persistently, for every writer")
            }
            for (key, entry) in registered.sorted(by: { $0.key < $1.key }) where !wanted.contains(key) {
                // Only what was installed goes: a trigger changed since, or
                // one the registry names that an install never wrote (a row
                // forged for a trigger written by hand), is someone's work,
                // never dropped unseen.
                if let fileTrigger = inFile[key] {
                    if let reason = PersistentRuleRegistry.mismatch(entry, fileTrigger) {
                        throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                            "persistent rule \"\(entry.rule)\" is no longer in the rule set, but the file's trigger \"\(fileTrigger.name)\" "
                            + "is not what sqlitetriggers_rules records as installed (\(reason)): it was changed in the file since it "
                            + "was installed, or the registry's row was not written by an install. Nothing was dropped. "
                            + "Drop it (or restore it) in a migration first; if the trigger is yours, delete its row from "
                            + "sqlitetriggers_rules instead")
                    }
                    try db.execute(sql: "DROP TRIGGER main.\(SQLQuoting.identifier(fileTrigger.name))")
                }
                try db.execute(sql: "DELETE FROM main.sqlitetriggers_rules WHERE triggerName = ?", arguments: [entry.triggerName])
            }
            for (rule, triggers) in rendered {
                for trigger in triggers {
                    let key = sqliteFolded(trigger.name)
                    let fileTrigger = inFile[key]
                    let entry = registered[key]
                    if let fileTrigger, let entry, fileTrigger.sql == trigger.sql, entry.sql == trigger.sql,
                       PersistentRuleRegistry.mismatch(entry, fileTrigger) == nil { continue }
                    if let fileTrigger {
                        guard let entry else {
                            throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                                "rule \"\(rule.name)\" cannot be installed persistently: the file already has a trigger "
                                + "\"\(fileTrigger.name)\" that no rule set installed. Name the rule differently, or drop that trigger in a migration first")
                        }
                        // Replaced only when it is what the registry says an
                        // install wrote: a registry row alone (forged for a
                        // trigger written by hand) must not hand it over.
                        if let reason = PersistentRuleRegistry.mismatch(entry, fileTrigger) {
                            throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                                "rule \"\(rule.name)\" cannot be installed persistently: the file's trigger \"\(fileTrigger.name)\" "
                                + "is not what sqlitetriggers_rules records as installed (\(reason)): it was changed in the file "
                                + "since it was installed, or the registry's row was not written by an install. Nothing was "
                                + "replaced. Drop that trigger in a migration first (or name the rule differently, if the trigger is yours)")
                        }
                        try db.execute(sql: "DROP TRIGGER main.\(SQLQuoting.identifier(fileTrigger.name))")
                    }
                    try db.execute(sql: trigger.sql)
                    // Any row of that name goes, whatever its letter case (SQLite's
                    // names fold ASCII case; the registry's key is exact).
                    try db.execute(sql: "DELETE FROM main.sqlitetriggers_rules WHERE triggerName = ? COLLATE NOCASE", arguments: [trigger.name])
                    try db.execute(sql: """
                        INSERT INTO main.sqlitetriggers_rules(triggerName, rule, tableName, sql)
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
    /// Throws, naming the table and the remedy, when `sqlitetriggers_rules`
    /// is not in the shape an install writes.
    ///
    /// ```swift
    /// let drift = try dbQueue.read { db in try rules.persistentRuleDrift(db) }
    /// assert(drift.isEmpty, "\(drift)")
    /// ```
    public func persistentRuleDrift(_ db: Database) throws -> [PersistentRuleDrift] {
        let rendered = try persistentTriggers(db)
        let registered = try PersistentRuleRegistry.exists(db) ? try PersistentRuleRegistry.registered(db) : [:]
        let inFile = try PersistentRuleRegistry.fileTriggers(db)
        var drift: [PersistentRuleDrift] = []
        for (rule, triggers) in rendered {
            let kinds = triggers.map { trigger -> PersistentRuleDrift.Kind? in
                guard let entry = registered[sqliteFolded(trigger.name)] else { return .missing }
                guard let fileTrigger = inFile[sqliteFolded(trigger.name)] else { return .dropped }
                return PersistentRuleRegistry.mismatch(entry, fileTrigger) == nil && trigger.sql == entry.sql ? nil : .changed
            }
            if let kind = kinds.compactMap({ $0 }).first {
                drift.append(PersistentRuleDrift(rule: rule.name, tableName: rule.tableName, kind: kind))
            }
        }
        let wanted = Set(rendered.map { sqliteFolded($0.rule.name) })
        var reported: Set<String> = []
        for entry in registered.values.sorted(by: { $0.triggerName < $1.triggerName })
        where !wanted.contains(sqliteFolded(entry.rule)) && reported.insert(sqliteFolded(entry.rule)).inserted {
            drift.append(PersistentRuleDrift(rule: entry.rule, tableName: entry.tableName, kind: .notInRuleSet))
        }
        return drift
    }

    // MARK: - Rendering and refusals

    /// Every rule's triggers as triggers of the file; throws, naming the
    /// rule, when one cannot persist or its table is not in the file.
    private func persistentTriggers(_ db: Database) throws -> [(rule: TempTrigger, triggers: [PersistentTrigger])] {
        let builtin = try builtinFunctions(db)
        let hasDurableLog = try db.tableExists("sqlitetriggers_log_tables", in: "main")
        return try rules.map { rule in
            var triggers: [PersistentTrigger]
            do {
                triggers = try rule.persistentTriggers()
                // A rule that stamps the row it fired on, on a logged table,
                // takes back the change its own write logged: one write is
                // one change from every writer (ext/log_rules.c, which the
                // log's install applies to the rules installed before it).
                if hasDurableLog {
                    triggers = try triggers.map { trigger in
                        PersistentTrigger(name: trigger.name, sql: try String.fetchOne(db, sql: "SELECT sqlitetriggers_log_rule_sql(?, ?)",
                                                                                        arguments: [rule.tableName, trigger.sql]) ?? trigger.sql)
                    }
                }
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
        /// named rule, is no longer what was installed (or the registry's
        /// row does not match the file's trigger: an install refuses to
        /// replace that trigger until a migration drops it).
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
        case .changed:
            // Installing again replaces only what an install wrote: a
            // trigger edited by hand must go first.
            return "persistent rule \"\(rule)\" on \"\(tableName)\" is in the file with another definition: install the rule "
                + "set again in a new migration (if its trigger was edited in the file, drop it in that migration first: "
                + "an install never drops a trigger that is not what it installed)"
        case .dropped: what = "was installed, then dropped from the file (a table recreation drops its triggers)"
        case .notInRuleSet: what = "is in the file but no longer in the rule set"
        }
        return "persistent rule \"\(rule)\" on \"\(tableName)\" \(what): install the rule set again in a new migration"
    }
}

/// The file's record of the persistent rules it holds:
/// `sqlitetriggers_rules`, a row per trigger (a rule's companions too), with
/// the SQL `sqlite_schema` held when it was installed.
///
/// The file is the only record, and a file is written by others too: a
/// table of that name may be planted in another shape (no primary key,
/// duplicate names, NULL or non-text values, missing columns, a view), and
/// a row may name a trigger no install wrote. Everything read here is
/// therefore judged before it is used: another shape is refused with an
/// error naming the table and the remedy (never a trap: no force unwrap
/// or non-optional decoding of the file's values), and a row is trusted
/// with a DROP only when the file's trigger is exactly what it records
/// (``mismatch(_:_:)``). A row that copies a hand-written trigger's SQL,
/// table and name, for a trigger written in exactly the shape an install
/// writes, cannot be told from ours: nothing in a file can prove who wrote
/// it, and the registry asks no more than that the trigger is unchanged.
enum PersistentRuleRegistry {
    static let tableName = "sqlitetriggers_rules"

    static let createTable = """
        CREATE TABLE IF NOT EXISTS main.sqlitetriggers_rules(
          triggerName TEXT PRIMARY KEY NOT NULL,
          rule TEXT NOT NULL,
          tableName TEXT NOT NULL,
          sql TEXT NOT NULL
        ) WITHOUT ROWID
        """

    struct Entry { let triggerName: String; let rule: String; let tableName: String; let sql: String }

    /// A trigger of the main schema, as `sqlite_schema` lists it.
    struct FileTrigger { let name: String; let tableName: String; let sql: String? }

    /// The refusal of a registry in another shape: names the table, what is
    /// wrong, and the remedy. Nothing was changed when it is thrown.
    static func refusal(_ problem: String) -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_ERROR, message:
            "the file's table \"sqlitetriggers_rules\" is not the registry of persistent rules that SQLiteTriggers writes: "
            + "\(problem). Nothing was changed. The name is reserved for SQLiteTriggers: in a migration, rename or drop that "
            + "table (and drop the triggers of persistent rules it listed, if any), then install the rule set again")
    }

    /// Whether the registry exists. Throws when an object of its name is
    /// not a table (a view or an index of the file), or the table is not in
    /// the shape ``createTable`` writes, or a trigger of the file names it
    /// (it could write or rewrite rows while an install runs).
    static func exists(_ db: Database) throws -> Bool {
        let objects = try Row.fetchAll(db, sql: """
            SELECT type, name FROM main.sqlite_schema WHERE name = ? COLLATE NOCASE AND type IN ('table', 'view', 'index', 'trigger')
            """, arguments: [tableName])
        guard !objects.isEmpty else { return false }
        for object in objects {
            let type = (object[0] as DatabaseValue).registryText ?? "object"
            if type != "table" { throw refusal("it is a \(type)") }
        }
        try checkColumns(db)
        try checkNoTriggerNamesIt(db)
        return true
    }

    // Kept apart, each column's judgment in a function of its own: Swift
    // 6.3.1's optimizer crashed on the checks written inline in one loop
    // (CopyPropagation, release builds only; the consumer stage of make
    // test builds the package in release to catch such a crash).

    /// Columns: exactly triggerName, rule, tableName and sql, TEXT NOT
    /// NULL, none generated, triggerName the one primary key column.
    private static func checkColumns(_ db: Database) throws {
        let columns = try Row.fetchAll(db, sql: """
            SELECT name, upper(type), "notnull", pk, hidden FROM pragma_table_xinfo(?, 'main')
            """, arguments: [tableName])
        var seen: [String] = []
        for column in columns {
            let name = (column[0] as DatabaseValue).registryText
            if let problem = columnProblem(name: name, type: (column[1] as DatabaseValue).registryText,
                                           notNull: (column[2] as DatabaseValue).registryInteger,
                                           pk: (column[3] as DatabaseValue).registryInteger,
                                           hidden: (column[4] as DatabaseValue).registryInteger) {
                throw refusal(problem)
            }
            seen.append(sqliteFolded(name ?? ""))
        }
        let missing = ["triggerName", "rule", "tableName", "sql"].filter { !seen.contains(sqliteFolded($0)) }
        if !missing.isEmpty { throw refusal("it has no column \(missing.map { "\"\($0)\"" }.joined(separator: ", "))") }
    }

    /// What is wrong with one column of the registry, or nil.
    private static func columnProblem(name: String?, type: String?, notNull: Int64?, pk: Int64?, hidden: Int64?) -> String? {
        guard let name else { return "a column has no name" }
        let folded = sqliteFolded(name)
        if !["triggername", "rule", "tablename", "sql"].contains(folded) {
            return "it has a column \"\(name)\" that the registry does not"
        }
        if type != "TEXT" || notNull != 1 || hidden != 0 {
            return "its column \"\(name)\" is not a stored TEXT NOT NULL column"
        }
        let isKey = pk == 1
        if isKey != (folded == "triggername") || (pk != 0 && pk != 1) {
            return "its primary key is not triggerName alone"
        }
        return nil
    }

    /// A trigger that names the registry (on it, or writing it from
    /// another table) could change rows between our reads and writes.
    private static func checkNoTriggerNamesIt(_ db: Database) throws {
        for row in try Row.fetchAll(db, sql: "SELECT name, sql FROM main.sqlite_schema WHERE type = 'trigger'") {
            guard let sql = (row[1] as DatabaseValue).registryText else { continue }
            if tokenizeSQL(sql).contains(where: { $0.isName && sqliteNamesEqual($0.name, tableName) }) {
                let name = (row[0] as DatabaseValue).registryText ?? "?"
                throw refusal("the file's trigger \"\(name)\" names it, and could rewrite what it records")
            }
        }
    }

    /// The registry's rows, by folded trigger name (SQLite's names fold
    /// ASCII case). Throws, naming the table, on a value that is not text
    /// or a trigger named twice; call ``exists(_:)`` first.
    static func registered(_ db: Database) throws -> [String: Entry] {
        let rows = try Row.fetchAll(db, sql: "SELECT triggerName, rule, tableName, sql FROM main.sqlitetriggers_rules")
        var entries: [String: Entry] = [:]
        for row in rows {
            let values = (0..<4).map { (row[$0] as DatabaseValue).registryText }
            guard let triggerName = values[0], let rule = values[1], let table = values[2], let sql = values[3] else {
                let name = values[0].map { "\"\($0)\"" } ?? "a row"
                throw refusal("\(name) has a value that is not text (NULL, a number or a blob)")
            }
            let key = sqliteFolded(triggerName)
            if entries[key] != nil { throw refusal("it names the trigger \"\(triggerName)\" twice") }
            entries[key] = Entry(triggerName: triggerName, rule: rule, tableName: table, sql: sql)
        }
        return entries
    }

    /// The file's triggers, by folded name. A trigger SQLite lists twice
    /// (a corrupt schema) is refused, not trapped on.
    static func fileTriggers(_ db: Database) throws -> [String: FileTrigger] {
        let rows = try Row.fetchAll(db, sql: "SELECT name, tbl_name, sql FROM main.sqlite_schema WHERE type = 'trigger'")
        var triggers: [String: FileTrigger] = [:]
        for row in rows {
            guard let name = (row[0] as DatabaseValue).registryText else { continue }
            let trigger = FileTrigger(name: name, tableName: (row[1] as DatabaseValue).registryText ?? "",
                                      sql: (row[2] as DatabaseValue).registryText)
            if triggers.updateValue(trigger, forKey: sqliteFolded(name)) != nil {
                throw DatabaseError(resultCode: .SQLITE_CORRUPT, message:
                    "the file's sqlite_schema lists the trigger \"\(name)\" twice: the file is corrupt (run PRAGMA integrity_check)")
            }
        }
        return triggers
    }

    /// Why the file's trigger is not the one `entry` records an install
    /// wrote, or nil when it is: the name, its table and its SQL exactly as
    /// recorded, and that SQL in the shape an install writes (`CREATE
    /// TRIGGER "name"`, the name quoted as the renderer quotes it; a
    /// trigger typed by hand in the shell usually is not).
    static func mismatch(_ entry: Entry, _ trigger: FileTrigger) -> String? {
        guard trigger.sql == entry.sql else { return "its SQL differs from the SQL recorded" }
        guard trigger.name == entry.triggerName, sqliteNamesEqual(trigger.tableName, entry.tableName) else {
            return "it is recorded under another name or table"
        }
        guard entry.sql.hasPrefix("CREATE TRIGGER \(SQLQuoting.identifier(entry.triggerName))") else {
            return "its SQL is not in the shape an install writes"
        }
        return nil
    }

    /// The names of the rules installed persistently, folded as SQLite
    /// folds names (none when the file has no registry); throws, naming the
    /// table, on another shape.
    static func persistentRuleNames(_ db: Database) throws -> Set<String> {
        guard try exists(db) else { return [] }
        return Set(try registered(db).values.map { sqliteFolded($0.rule) })
    }
}

/// A value of the file as it is stored, never converted: GRDB's
/// non-optional decoding traps on NULL, and its String decoding would take
/// a number for text.
private extension DatabaseValue {
    var registryText: String? { if case .string(let text) = storage { return text } else { return nil } }
    var registryInteger: Int64? { if case .int64(let integer) = storage { return integer } else { return nil } }
}
