import GRDB
import Foundation

extension RuleSet {
    /// Installs the rules on the writer's connection, after migrations, and
    /// keeps them installed for the connection's lifetime.
    ///
    /// TEMP triggers vanish when a migration drops their table (as
    /// `DatabaseMigrator` migrations that recreate a table do, and as
    /// `migratePrimaryKeys` does). After every commit on the writer that
    /// changed the schema, missing rules are installed again. A rule that no
    /// longer fits the schema (its column is gone) cannot be: every write
    /// it would have fired on then fails, with a message naming the rule and
    /// SQLite's reason, and `onError` hears it too (default:
    /// `CallbackObservation.defaultErrorHandler`). A later schema change
    /// retries.
    ///
    /// Runs on the writer's queue; readers never get rules (TEMP triggers
    /// are per connection, and only the writer writes). Installing before
    /// the tables exist throws, naming the rule and the table.
    ///
    /// ```swift
    /// try migrator.migrate(dbQueue)
    /// try rules.install(in: dbQueue)
    /// ```
    public func install(in writer: some DatabaseWriter, onError: (@Sendable (any Error) -> Void)? = nil) throws {
        try writer.writeWithoutTransaction { db in try install(db, onError: onError) }
    }

    /// Installs the rules on one connection and keeps them installed, as
    /// ``install(in:onError:)`` does; `db` must be a writer's.
    ///
    /// ```swift
    /// try dbQueue.writeWithoutTransaction { db in try rules.install(db) }
    /// ```
    public func install(_ db: Database, onError: (@Sendable (any Error) -> Void)? = nil) throws {
        if db.configuration.readonly {
            throw DatabaseError(resultCode: .SQLITE_READONLY, message: readOnlyRefusal(
                "installing rules", consequence: "its triggers would never fire", remedy: "install rules on the writer"))
        }
        let persistent = try PersistentRuleRegistry.persistentRuleNames(db)
        for rule in rules {
            try rule.refuseIfInvalid()
            if persistent.contains(sqliteFolded(rule.name)) {
                throw DatabaseError(resultCode: .SQLITE_MISUSE, message:
                    "rule \"\(rule.name)\" is a persistent rule of the file (RuleSet.installPersistently): installed TEMP too, "
                    + "it would run twice. Leave it out of the rules installed TEMP")
            }
            if try !db.tableExists(rule.tableName) && !db.viewExists(rule.tableName) {
                throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                    "rule \"\(rule.name)\" is on \"\(rule.tableName)\", which does not exist: "
                    + "run the migrations first, then install the rules")
            }
        }
        try RuleKeeper.start(on: db, extent: .databaseLifetime, onError: onError) { _ in rules }
    }
}

/// Puts lost rules back after each commit that changed a schema. The rules
/// come from a function of the live schema (a change feed lists the table's
/// current columns); rules it no longer returns are dropped.
///
/// Lifetime: a transaction observer of the writer's connection, used on the
/// writer's queue only. A rule set's keeper lasts as long as the connection
/// (`.databaseLifetime`); a feed's or a check's lasts as long as its
/// `ChangeDecoder`, which removes the keeper's rules when it goes
/// (`.observerLifetime`, GRDB holding the keeper weakly).
final class RuleKeeper: TransactionObserver {
    let currentRules: (Database) throws -> [TempTrigger]
    let onError: @Sendable (any Error) -> Void
    var schemaVersions: [Int] = []
    /// The names of the triggers last installed.
    var installed: Set<String> = []
    /// Triggers that refuse writes a rule that cannot be reinstalled would
    /// have fired on, by rule name.
    var blockers: [String: [String]] = [:]
    private var isReinstalling = false
    private var isStopped = false

    init(rules: @escaping (Database) throws -> [TempTrigger], onError: @escaping @Sendable (any Error) -> Void) {
        self.currentRules = rules
        self.onError = onError
    }

    /// Installs the rules on `db` now, all or none, and keeps them there.
    /// Returns the keeper, which an `.observerLifetime` extent needs kept.
    @discardableResult
    static func start(on db: Database, extent: Database.TransactionObservationExtent,
                      onError: (@Sendable (any Error) -> Void)?,
                      rules: @escaping (Database) throws -> [TempTrigger]) throws -> RuleKeeper {
        let keeper = RuleKeeper(rules: rules, onError: onError ?? CallbackObservation.defaultErrorHandler)
        try db.inSavepoint {
            try keeper.installMissing(db)
            return .commit
        }
        keeper.schemaVersions = try keeper.readSchemaVersions(db)
        db.add(transactionObserver: keeper, extent: extent)
        return keeper
    }

    /// Removes the rules this keeper installed, for good (its observation
    /// ended): the commit of the removal must not bring them back.
    func removeRules(_ db: Database) throws {
        isStopped = true
        for name in installed { try db.execute(sql: "DROP TRIGGER IF EXISTS temp.\(SQLQuoting.identifier(name))") }
        installed = []
    }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidRollback(_ db: Database) {}

    func databaseDidCommit(_ db: Database) {
        guard !isReinstalling, !isStopped else { return }
        isReinstalling = true
        defer { isReinstalling = false }
        do {
            let versions = try readSchemaVersions(db)
            guard versions != schemaVersions else { return }
            try reinstall(db)
            schemaVersions = try readSchemaVersions(db)
        } catch {
            onError(error)
        }
    }

    /// A drop of a table drops its TEMP triggers (the temp schema changes);
    /// a table created again shows in the main schema.
    func readSchemaVersions(_ db: Database) throws -> [Int] {
        [try Int.fetchOne(db.cachedStatement(sql: "PRAGMA main.schema_version")) ?? 0,
         try Int.fetchOne(db.cachedStatement(sql: "PRAGMA temp.schema_version")) ?? 0]
    }

    /// The rules not (wholly) installed; drops those no longer current.
    func missingRules(_ db: Database) throws -> [TempTrigger] {
        let rules = try currentRules(db)
        let current = Set(rules.flatMap(\.names))
        for stale in installed.subtracting(current) {
            try db.execute(sql: "DROP TRIGGER IF EXISTS temp.\(SQLQuoting.identifier(stale))")
        }
        installed = current
        let present = try Set(String.fetchAll(db, sql: "SELECT name FROM temp.sqlite_master WHERE type = 'trigger'"))
        return try rules.filter { rule in
            guard rule.names.allSatisfy(present.contains) else { return true }
            // Still there, but ALTER TABLE ... DROP COLUMN may have taken a
            // column its UPDATE OF names, which leaves it never firing: it
            // goes, and installing it again says why.
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?)", arguments: [rule.tableName])
            guard rule.updateOfColumns().allSatisfy(columns.containsName) else {
                try rule.drop().execute(db)
                return true
            }
            return false
        }
    }

    func installMissing(_ db: Database) throws {
        for rule in try missingRules(db) {
            try rule.drop().execute(db)        // a companion may have survived
            try rule.execute(db)
        }
    }

    /// Each missing rule again; one that does not fit gets blockers.
    func reinstall(_ db: Database) throws {
        for rule in try missingRules(db) {
            for blocker in blockers.removeValue(forKey: rule.name) ?? [] {
                try db.execute(sql: "DROP TRIGGER IF EXISTS temp.\(SQLQuoting.identifier(blocker))")
            }
            do {
                try rule.drop().execute(db)
                try rule.execute(db)
            } catch let error as DatabaseError {
                let reason = "SQLiteTriggers: rule \"\(rule.name)\" on \"\(rule.tableName)\" was dropped by a schema change "
                    + "and cannot be installed again: \(error.message ?? "\(error.resultCode)")"
                onError(DatabaseError(resultCode: error.resultCode, message: reason))
                let timing: TriggerTiming? = try db.tableExists(rule.tableName) ? .before : db.viewExists(rule.tableName) ? .insteadOf : nil
                guard let timing else { continue }     // no table, no writes to refuse; its return retries
                blockers[rule.name] = try rule.firedBy.sorted().map { statement in
                    let name = "\(rule.name)_unfit_\(statement.lowercased())"
                    let blocker = TriggerDefinition(timing: timing, event: statement, target: SQLQuoting.identifier(rule.tableName),
                                                    condition: nil, body: [["SELECT RAISE(ABORT, \(SQLQuoting.string(reason)))"]])
                    try db.execute(sql: blocker.createStatement(named: name, ifNotExists: true))
                    return name
                }
            }
        }
    }
}
