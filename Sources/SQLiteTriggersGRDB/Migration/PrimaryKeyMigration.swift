import GRDB
import Foundation

// MARK: - The API

/// Which function fills the migrated keys of new rows.
public enum UUIDFunction: String, Sendable {
    /// `uuid()`: random, version 4.
    case uuid
    /// `uuidv7()`: time-ordered, version 7.
    case uuidv7
}

/// Makes integer-keyed tables sync-ready, in one transaction that either
/// fully succeeds or changes nothing.
///
/// For each table, an integer primary key (INTEGER, INT or BIGINT, with or
/// without AUTOINCREMENT) becomes
/// `"id" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid())` (or
/// `uuidv7()`), keeping its name, and a table without a primary key gains
/// such an `"id"`. Foreign keys to migrated tables become TEXT holding the
/// new ids. Existing rows get version 8 UUIDs derived from the table, the
/// old id and a random salt (`sqlitetriggers_derived_uuid`), so keys and
/// foreign keys stay consistent and two devices never mint the same id; a
/// seeded connection reproduces them. Everything else of the stored CREATE
/// TABLE text is kept, comments included; indexes and triggers are
/// recreated; views keep working. `PRAGMA foreign_key_check` must pass on
/// the migrated tables before (the first violation is named, with nothing
/// changed), and so passes after.
///
/// Refused, naming the table and the reason, with nothing changed:
/// composite or non-integer keys, foreign keys to tables outside the
/// migration, WITHOUT ROWID and virtual tables, and any SQL the rewriter
/// does not fully understand. With foreign keys enforced, DROP TABLE would
/// cascade to child rows: outside a transaction enforcement is switched off
/// for the migration and restored; inside one (where SQLite ignores the
/// pragma) the migration refuses. GRDB's `DatabaseMigrator` runs
/// migrations with enforcement off, so the call fits in a migration:
///
/// ```swift
/// migrator.registerMigration("sync-ready keys") { db in
///     try migratePrimaryKeys(db, tables: ["remindersLists", "reminders", "tags", "reminderTags"], uuidFunction: .uuidv7)
/// }
/// ```
///
/// Every row keeps its rowid, so after the migration `SELECT rowid, id FROM t`
/// maps each old integer id to its new UUID, and what is keyed on rowids
/// (external-content full-text tables) keeps working.
///
/// Integer ids held outside foreign keys (a full-text table's `UNINDEXED`
/// column, an audit table) are rewritten in the same transaction when named
/// in `extraReferences`. The returned report warns of columns that look like
/// such references but were not named.
///
/// `dropUniqueConstraints` names tables whose UNIQUE constraints and unique
/// indexes are dropped: synced data cannot enforce uniqueness across
/// devices. `addedKeyName` names the key that tables without one gain.
/// `dryRun` does everything, checks included, then rolls it back: the
/// report's `statements` show what would be created. `progress` is called
/// with a line before each table's rows are copied, and `rowsCopied` as
/// they are, a chunk at a time (from 0 of the table's count to all of them).
// Disfavored: given an array of types that are not table descriptions (a
// StructuredQueries table), Swift then diagnoses it against the overload
// below ("does not conform to 'TableDescription'") instead of failing to
// produce a diagnostic between the two.
@_disfavoredOverload
@discardableResult
public func migratePrimaryKeys(_ db: Database, tables: [String], uuidFunction: UUIDFunction = .uuid,
                               extraReferences: [ExtraReference] = [], dropUniqueConstraints: [String] = [],
                               addedKeyName: String = "id", dryRun: Bool = false,
                               progress: @escaping (String) -> Void = { _ in },
                               rowsCopied: @escaping (MigrationProgress) -> Void = { _ in }) throws -> PrimaryKeyMigrationReport {
    var migration = PrimaryKeyMigration(tables: tables, uuidFunction: uuidFunction, extraReferences: extraReferences,
                                        dropUniqueConstraints: dropUniqueConstraints, addedKeyName: addedKeyName)
    migration.dryRun = dryRun
    migration.progress = progress
    migration.rowsCopied = rowsCopied
    return try migration.run(db)
}

/// How far a migration's copy of a table's rows got.
///
/// ```swift
/// try migratePrimaryKeys(db, tables: ["reminders"], rowsCopied: { step in
///     print("\(step.table): \(step.rowsCopied) of \(step.rowCount) rows")
/// })
/// ```
public struct MigrationProgress: Sendable, Equatable {
    public var table: String
    public var rowsCopied: Int
    public var rowCount: Int
}

/// The same, naming the tables by their descriptions (`@TriggerTable` structs).
///
/// ```swift
/// try migratePrimaryKeys(db, tables: [RemindersList.self, Reminder.self, Tag.self, ReminderTag.self])
/// ```
@discardableResult
public func migratePrimaryKeys(_ db: Database, tables: [any TableDescription.Type], uuidFunction: UUIDFunction = .uuid,
                               extraReferences: [ExtraReference] = [], dropUniqueConstraints: [any TableDescription.Type] = [],
                               addedKeyName: String = "id", dryRun: Bool = false,
                               progress: @escaping (String) -> Void = { _ in },
                               rowsCopied: @escaping (MigrationProgress) -> Void = { _ in }) throws -> PrimaryKeyMigrationReport {
    try migratePrimaryKeys(db, tables: tables.map { $0.tableName }, uuidFunction: uuidFunction, extraReferences: extraReferences,
                           dropUniqueConstraints: dropUniqueConstraints.map { $0.tableName }, addedKeyName: addedKeyName,
                           dryRun: dryRun, progress: progress, rowsCopied: rowsCopied)
}

/// A column holding ids of a migrated table without a foreign key: the
/// migration rewrites its values to the new UUIDs too.
///
/// ```swift
/// try migratePrimaryKeys(db, tables: ["reminders"], extraReferences: [
///     ExtraReference(table: "reminderTexts", column: "reminderID", referencing: "reminders"),
/// ])
/// ```
public struct ExtraReference: Sendable, Equatable {
    public var table: String
    public var column: String
    public var referencedTable: String

    public init(table: String, column: String, referencing referencedTable: String) {
        self.table = table
        self.column = column
        self.referencedTable = referencedTable
    }
}

/// What a migration found worth telling.
///
/// ```swift
/// let report = try migratePrimaryKeys(db, tables: ["reminders"])
/// for warning in report.warnings { print(warning) }
/// ```
public struct PrimaryKeyMigrationReport: Sendable, Equatable {
    /// Columns that look like they hold migrated ids (by their name, or
    /// because every value is one) but are neither foreign keys nor
    /// extra references: their values no longer match anything. Foreign
    /// key violations that existed before, in tables the migration did not
    /// touch.
    public var warnings: [String] = []
    /// What the migration changed beyond the keys: CHECKs on integer keys
    /// dropped, UNIQUE constraints dropped.
    public var notes: [String] = []
    /// The new CREATE TABLE statements, then the indexes and triggers
    /// created again, in order.
    public var statements: [String] = []
}

// MARK: - Orchestration

/// One migration: the API's arguments, then `run`, which plans, refuses or
/// rewrites, copies and checks, in one transaction.
struct PrimaryKeyMigration {
    let tables: [String]
    let uuidFunction: UUIDFunction
    var extraReferences: [ExtraReference] = []
    var dropUniqueConstraints: [String] = []
    var addedKeyName = "id"
    var dryRun = false
    var progress: (String) -> Void = { _ in }
    var rowsCopied: (MigrationProgress) -> Void = { _ in }
    #if DEBUG
    /// Called after each step with its name: the tests' fault injection,
    /// compiled into debug builds only.
    var afterStep: (String) throws -> Void = { _ in }
    #endif

    /// The end of a step (`afterStep` hears it in debug builds).
    private func finished(_ step: String) throws {
        #if DEBUG
        try afterStep(step)
        #endif
    }

    struct Plan {
        let table: String
        let temporaryName: String
        let rewrite: PrimaryKeyRewrite
        /// Column -> the migrated table it references.
        let foreignKeys: [String: String]
        let copiedColumns: [String]
        /// A name that means the rowid in this table (no column hides it).
        let rowidAlias: String
        let indexesAndTriggers: [String]
        let droppedUniqueIndexes: [String]
        /// Rows whose non-alias integer key held NULL: they get fresh keys.
        var nullKeys = 0
    }

    func run(_ db: Database) throws -> PrimaryKeyMigrationReport {
        let enforced = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
        if enforced && db.isInsideTransaction {
            throw PrimaryKeyMigrationError(table: tables.first ?? "", reason:
                "foreign keys are enforced inside a transaction, where SQLite cannot turn them off, "
                + "and DROP TABLE would delete child rows through ON DELETE CASCADE. Run the migration "
                + "outside a transaction, or in a DatabaseMigrator migration (its foreign key checks are deferred).")
        }
        if enforced { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
        defer { if enforced { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
        // Renaming must not re-check views and triggers that name a table
        // dropped a moment before its replacement takes its name.
        let legacyAlter = try Bool.fetchOne(db, sql: "PRAGMA legacy_alter_table") ?? false
        try db.execute(sql: "PRAGMA legacy_alter_table = ON")
        defer { if !legacyAlter { try? db.execute(sql: "PRAGMA legacy_alter_table = OFF") } }
        var report = PrimaryKeyMigrationReport()
        try db.inSavepoint {
            report = try migrate(db)
            return dryRun ? .rollback : .commit
        }
        return report
    }

    private func migrate(_ db: Database) throws -> PrimaryKeyMigrationReport {
        let names = try resolvedNames(db)
        try refuseReferencesFromOutside(names, db)
        let extra = try resolvedExtraReferences(names, db)
        let salt = try Row.fetchOne(db, sql: "SELECT uuid_blob(uuid()) AS a, uuid_blob(uuid()) AS b")
            .map { ($0["a"] as Data) + ($0["b"] as Data) }!
        let plans = try names.map { table in
            try plan(for: table, migrating: names,
                     extraReferences: extra.filter { sqliteNamesEqual($0.table, table) }, salt: salt, db)
        }
        var report = PrimaryKeyMigrationReport(notes: plans.flatMap { plan in
            plan.rewrite.notes.map { "\"\(plan.table)\": \($0)" } + plan.droppedUniqueIndexes.map {
                "\"\(plan.table)\": its unique index \"\($0)\" is dropped"
            } + (plan.nullKeys > 0
                ? ["\"\(plan.table)\": \(plan.nullKeys) row\(plan.nullKeys == 1 ? "" : "s") whose key held NULL got a fresh key (nothing can reference them)"]
                : [])
        })
        report.warnings = try suspectedReferences(names, plans: plans, extra: extra, db)
        report.statements = plans.map { plan in
            plan.rewrite.sql.replacingOccurrences(of: SQLQuoting.identifier(plan.temporaryName), with: SQLQuoting.identifier(plan.table))
        } + plans.flatMap(\.indexesAndTriggers)
        try refuseColumnCountDependents(plans.filter { $0.rewrite.oldKeyColumn == nil }.map(\.table), db)
        report.warnings += try foreignKeyViolations(outside: names, db)
        try refuseForeignKeyViolations(names, db)
        let foreignKeysBefore = try foreignKeyLists(names, db)
        let analyzed = try analyzedTables(names, db)
        try finished("planned")
        for plan in plans {
            try explained(plan.table, "creating its new table") { try db.execute(sql: plan.rewrite.sql) }
        }
        try finished("created")
        for plan in plans {
            progress("\(plan.table): copying its rows")
            try explained(plan.table, "copying its rows") {
                do {
                    try copy(plan, salt: salt, db)
                } catch let error as DatabaseError {
                    try refuseNonIntegerReferences(plan, db)
                    throw error
                }
            }
        }
        for reference in extra where !names.containsName(reference.table) {
            let column = SQLQuoting.identifier(reference.column)
            try db.execute(sql: """
                UPDATE \(SQLQuoting.identifier(reference.table))
                SET \(column) = sqlitetriggers_derived_uuid(:salt, \(SQLQuoting.string(reference.referencedTable)), \(column))
                WHERE \(column) IS NOT NULL
                """, arguments: ["salt": salt])
        }
        try finished("copied")
        for plan in plans { try db.execute(sql: "DROP TABLE \(SQLQuoting.identifier(plan.table))") }
        try finished("dropped")
        for plan in plans {
            try db.execute(sql: "ALTER TABLE \(SQLQuoting.identifier(plan.temporaryName)) RENAME TO \(SQLQuoting.identifier(plan.table))")
        }
        try finished("renamed")
        for plan in plans {
            try explained(plan.table, "recreating its indexes and triggers") {
                for sql in plan.indexesAndTriggers { try db.execute(sql: sql) }
            }
        }
        for table in analyzed { try db.execute(sql: "ANALYZE \(SQLQuoting.identifier(table))") }
        try finished("recreated")
        // The references held before the copy (refuseForeignKeyViolations),
        // and each became the same function of the same integer id as the
        // key it references (plan(for:) accepts no other reference): they
        // hold after, if the new tables declare the same foreign keys.
        // That is checked here, in the schema; checking every row again
        // would look each one up by a 36-character key (12% of a
        // migration's instructions). Debug builds, which the tests run,
        // check every row as well.
        for (table, before) in foreignKeysBefore where try foreignKeyLists([table], db)[table] != before {
            throw PrimaryKeyMigrationError(table: table, reason: "its foreign keys differ after the rewrite (a bug of the migration: please report it)")
        }
        #if DEBUG
        for table in names where try Row.fetchOne(db, sql: "SELECT 1 FROM pragma_foreign_key_check(?)", arguments: [table]) != nil {
            throw PrimaryKeyMigrationError(table: table, reason: "foreign key violations after the migration (a bug of the migration: please report it)")
        }
        #endif
        try finished("checked")
        return report
    }

    /// Runs a step, turning SQLite's errors into the user's terms: the
    /// table and the step, never our temporary table's name.
    private func explained<T>(_ table: String, _ step: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            let message = (error.message ?? "\(error.resultCode)")
                .replacingOccurrences(of: "sqlitetriggers_new_\(table)", with: table)
            throw PrimaryKeyMigrationError(table: table, reason: "\(step) failed: \(message)")
        }
    }


    // MARK: - Refusals: what the migration will not do, said before anything changes

    /// A table that gains an "id" column has one column more: a trigger's
    /// `INSERT INTO t VALUES (...)` or `INSERT INTO t SELECT ...` without a
    /// column list, and a view or trigger selecting `*` from it, would break
    /// (or shift values) after the migration. Refused before anything
    /// changes, naming the object.
    private func refuseColumnCountDependents(_ gaining: [String], _ db: Database) throws {
        guard !gaining.isEmpty else { return }
        let objects = try Row.fetchAll(db, sql: """
            SELECT type, name, sql FROM sqlite_schema WHERE type IN ('trigger', 'view') AND sql IS NOT NULL
            UNION ALL
            SELECT type, name, sql FROM sqlite_temp_schema WHERE type IN ('trigger', 'view') AND sql IS NOT NULL
            """)
        for object in objects {
            let kind: String = object["type"]
            let name: String = object["name"]
            let tokens = tokenizeSQL(object["sql"]).filter { $0.kind != .trivia }
            func gainingTable(at index: Int) -> String? {
                // A name, or schema.name.
                var nameIndex = index
                if index + 2 < tokens.count, tokens[index + 1].text == "." { nameIndex = index + 2 }
                guard nameIndex < tokens.count, tokens[nameIndex].isName else { return nil }
                return gaining.firstName(matching: tokens[nameIndex].name)
            }
            for (index, token) in tokens.enumerated() where token.isWord("INTO") && index > 0 {
                guard let table = gainingTable(at: index + 1) else { continue }
                var next = index + 2
                if next < tokens.count, tokens[next].text == "." { next += 2 }
                if next < tokens.count, tokens[next].isWord("AS") { next += 2 }
                if next < tokens.count, ["VALUES", "SELECT", "WITH"].contains(where: tokens[next].isWord) {
                    throw PrimaryKeyMigrationError(table: table, reason:
                        "\(kind) \"\(name)\" inserts into it without a column list, and it gains an \"id\" column: "
                        + "name the columns in that INSERT first")
                }
            }
            let selectsStar = tokens.indices.contains { (index: Int) -> Bool in
                guard index > 0, tokens[index].text == "*" else { return false }
                let before = tokens[index - 1]
                return before.isWord("SELECT") || before.isWord("DISTINCT") || before.isWord("ALL")
                    || before.text == "," || before.text == "."
            }
            if selectsStar, let table = tokens.indices.lazy.compactMap({ gainingTable(at: $0) }).first {
                throw PrimaryKeyMigrationError(table: table, reason:
                    "\(kind) \"\(name)\" selects * where it is used, and it gains an \"id\" column: "
                    + "name the columns in that \(kind) first")
            }
        }
    }

    /// A table left out whose foreign keys point into the migration would
    /// keep integer values that no longer match anything.
    private func refuseReferencesFromOutside(_ names: [String], _ db: Database) throws {
        let outside = try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
            .filter { name in !names.containsName(name) }
        for table in outside {
            for parent in try String.fetchAll(db, sql: "SELECT \"table\" FROM pragma_foreign_key_list(?)", arguments: [table]) {
                if let migrated = names.firstName(matching: parent) {
                    throw PrimaryKeyMigrationError(table: migrated, reason:
                        "\"\(table)\" references it but is not part of the migration")
                }
            }
        }
    }

    /// An external-content full-text table of `table` (FTS5's
    /// `content="table"`, FTS4's too) that uses the key as its rowid, through
    /// FTS5's `content_rowid="key"` or through triggers writing `new.key` into
    /// it, as GRDB's `t.synchronize(withTable:)` makes them: once the key is
    /// text, its reads fail ("database disk image is malformed") and every
    /// write to the table fails ("datatype mismatch"). Refused before
    /// anything changes, naming the table and the remedy.
    private func refuseFullTextTablesKeyedOn(_ key: String, of table: String, _ db: Database) throws {
        let virtualTables = try Row.fetchAll(db, sql: """
            SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'
            """)
        let triggers = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ? AND sql IS NOT NULL",
                                           arguments: [table])
        for virtualTable in virtualTables {
            let (name, sql): (String, String) = (virtualTable["name"], virtualTable["sql"])
            let options = moduleOptions(tokenizeSQL(sql).filter { $0.kind != .trivia })
            guard let content = options["content"], sqliteNamesEqual(content, table) else { continue }
            let isKeyedByOption = options["content_rowid"].map { sqliteNamesEqual($0, key) } ?? false
            let isKeyedByTrigger = triggers.contains { trigger in
                let tokens = tokenizeSQL(trigger).filter { $0.kind != .trivia }
                return tokens.contains { $0.isName && sqliteNamesEqual($0.name, name) }
                    && tokens.indices.dropFirst(2).contains { index in
                        tokens[index].isName && sqliteNamesEqual(tokens[index].name, key) && tokens[index - 1].text == "."
                            && ["new", "old"].contains(tokens[index - 2].name.lowercased())
                    }
            }
            if isKeyedByOption || isKeyedByTrigger {
                throw PrimaryKeyMigrationError(table: table, reason:
                    "its full-text table \"\(name)\" uses \"\(key)\" as its rowid (\(isKeyedByOption ? "content_rowid" : "its triggers write it")), "
                    + "which becomes text: drop \"\(name)\" and its triggers first, migrate, then create it again "
                    + "(GRDB's t.synchronize(withTable:) then keys it on the rowid, which the migration keeps)")
            }
        }
    }

    /// A migrated table that fails PRAGMA foreign_key_check is refused
    /// before anything changes, its first violation described. Checked on
    /// the integer keys, a lookup of the rowid per reference.
    private func refuseForeignKeyViolations(_ names: [String], _ db: Database) throws {
        for table in names {
            if let violation = try Row.fetchOne(db, sql: "SELECT * FROM pragma_foreign_key_check(?)", arguments: [table]) {
                throw PrimaryKeyMigrationError(table: table, reason: try describeViolation(violation, db) + ", before the migration: fix it first")
            }
        }
    }

    /// Each table's foreign keys as SQLite reads them (id, column, parent,
    /// parent column, actions), to compare before and after the rewrite.
    private func foreignKeyLists(_ names: [String], _ db: Database) throws -> [String: [Row]] {
        var lists: [String: [Row]] = [:]
        for table in names {
            lists[table] = try Row.fetchAll(db, sql: """
                SELECT id, seq, "from", "table", "to", on_update, on_delete, "match" FROM pragma_foreign_key_list(?) ORDER BY id, seq
                """, arguments: [table])
        }
        return lists
    }

    /// Foreign key violations in tables the migration leaves alone: they
    /// were there before, so they are reported, not blamed on it.
    private func foreignKeyViolations(outside names: [String], _ db: Database) throws -> [String] {
        var warnings: [String] = []
        let tables = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'")
        for table in tables where !names.containsName(table) {
            for violation in try Row.fetchAll(db, sql: "SELECT * FROM pragma_foreign_key_check(?)", arguments: [table]) {
                warnings.append("\"\(table)\": \(try describeViolation(violation, db)), before the migration (left as it was)")
            }
        }
        return warnings
    }

    /// "row 7 references "lists" id 99, which does not exist": a row of
    /// PRAGMA foreign_key_check (table, rowid, parent, fkid), with the value
    /// the row holds. Rowids are kept, so they are the original ones.
    private func describeViolation(_ violation: Row, _ db: Database) throws -> String {
        let table: String = violation[0]
        let rowid: Int64? = violation[1]
        let parent: String = violation[2]
        let column = try String.fetchOne(db, sql: "SELECT \"from\" FROM pragma_foreign_key_list(?) WHERE id = ?",
                                         arguments: [table, violation[3] as Int]) ?? "?"
        let value = try rowid.flatMap { rowid in
            try String.fetchOne(db, sql: "SELECT quote(\(SQLQuoting.identifier(column))) FROM \(SQLQuoting.identifier(table)) WHERE rowid = ?",
                                arguments: [rowid])
        } ?? "?"
        return "row \(rowid.map(String.init) ?? "?") holds \"\(column)\" = \(value), which is no row of \"\(parent)\""
    }

    // MARK: - Planning: which tables, keys and references, and the new schema

    /// The tables as the schema spells them, each once.
    private func resolvedNames(_ db: Database) throws -> [String] {
        var names: [String] = []
        for table in tables {
            guard let name = try storedTableName(table, db) else {
                throw PrimaryKeyMigrationError(table: table, reason: "no such table")
            }
            if !names.containsName(name) { names.append(name) }
        }
        return names
    }

    /// The migrated tables that ANALYZE had statistics for: analyzed again
    /// afterwards, so that query plans do not change.
    private func analyzedTables(_ names: [String], _ db: Database) throws -> [String] {
        guard try db.tableExists("sqlite_stat1") else { return [] }
        let analyzed = try String.fetchSet(db, sql: "SELECT DISTINCT tbl FROM sqlite_stat1")
        return names.filter { name in analyzed.containsName(name) }
    }

    /// A table's name as the schema spells it (SQLite matches names
    /// ignoring ASCII case), or nil.
    private func storedTableName(_ name: String, _ db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE", arguments: [name])
    }

    /// The integer primary key column of a table, or nil when it has none.
    private func integerKey(of table: String, _ db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT name FROM pragma_table_info(?) WHERE pk = 1", arguments: [table])
    }

    /// The extra references as the schema spells them, checked before
    /// anything changes: the column exists, the referenced table is
    /// migrated, and every value is an integer id the new column can hold.
    private func resolvedExtraReferences(_ names: [String], _ db: Database) throws -> [ExtraReference] {
        try extraReferences.map { reference in
            func refuse(_ reason: String) -> PrimaryKeyMigrationError {
                PrimaryKeyMigrationError(table: reference.table, reason: reason)
            }
            guard let table = try storedTableName(reference.table, db) else { throw refuse("no such table") }
            let columns = try Row.fetchAll(db, sql: "SELECT name, type FROM pragma_table_xinfo(?)", arguments: [table])
            guard let column = columns.first(where: { sqliteNamesEqual($0["name"], reference.column) }) else {
                throw refuse("it has no column \"\(reference.column)\" (named as an extra reference)")
            }
            let columnName: String = column["name"]
            guard let parent = names.firstName(matching: reference.referencedTable) else {
                throw refuse("its column \"\(columnName)\" is named as referencing \"\(reference.referencedTable)\", which is not part of the migration")
            }
            let isStrict = try Bool.fetchOne(db, sql: "SELECT strict FROM pragma_table_list WHERE name = ? AND schema = 'main'", arguments: [table]) ?? false
            let isMigrated = names.containsName(table)
            if isStrict, !isMigrated, (column["type"] as String).uppercased().hasPrefix("INT") {
                throw refuse("its column \"\(columnName)\" is an integer column of a STRICT table, which cannot hold the new UUIDs")
            }
            let quoted = SQLQuoting.identifier(columnName)
            if let value = try String.fetchOne(db, sql: """
                SELECT quote(\(quoted)) FROM \(SQLQuoting.identifier(table))
                WHERE \(quoted) IS NOT NULL AND typeof(\(quoted)) <> 'integer' LIMIT 1
                """) {
                throw refuse("its column \"\(columnName)\" holds \(value), which is not an integer id of \"\(parent)\"")
            }
            return ExtraReference(table: table, column: columnName, referencing: parent)
        }
    }

    /// Integer columns that look like references to migrated ids: named
    /// after a migrated table (`reminderID`, `reminder_id`, `remindersID`),
    /// or named `...id` with every value an id of one. They are neither
    /// foreign keys nor extra references, so their values stop matching.
    private func suspectedReferences(_ names: [String], plans: [Plan], extra: [ExtraReference], _ db: Database) throws -> [String] {
        var warnings: [String] = []
        // Shadow tables (a full-text index's own) hold ids of their own.
        let tables = try String.fetchAll(db, sql: """
            SELECT name FROM pragma_table_list
            WHERE schema = 'main' AND type IN ('table', 'virtual') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
            """)
        for table in tables {
            let tablePlan = plan(forName: table, plans)
            let foreignKeys = try String.fetchAll(db, sql: "SELECT \"from\" FROM pragma_foreign_key_list(?)", arguments: [table])
            for column in try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?) WHERE hidden <> 1", arguments: [table]) {
                if foreignKeys.containsName(column)
                    || extra.contains(where: { sqliteNamesEqual($0.table, table) && sqliteNamesEqual($0.column, column) })
                    || tablePlan?.rewrite.oldKeyColumn.map({ sqliteNamesEqual($0, column) }) == true { continue }
                let folded = sqliteFolded(column)
                guard folded.hasSuffix("id"), folded.count > 2 else { continue }
                let stem = folded.hasSuffix("_id") ? String(folded.dropLast(3)) : String(folded.dropLast(2))
                let byName = names.first { name in
                    let lower = sqliteFolded(name)
                    return stem == lower || stem + "s" == lower || stem + "es" == lower || (stem.hasSuffix("y") && stem.dropLast() + "ies" == lower)
                }
                let quoted = SQLQuoting.identifier(column), from = SQLQuoting.identifier(table)
                var byValues: (String, Int)?
                for name in names {
                    guard let key = plan(forName: name, plans)?.rewrite.oldKeyColumn else { continue }
                    let counts = try Row.fetchOne(db, sql: """
                        SELECT count(*) AS total, count(*) FILTER (WHERE typeof(\(quoted)) = 'integer'
                          AND \(quoted) IN (SELECT \(SQLQuoting.identifier(key)) FROM \(SQLQuoting.identifier(name)))) AS matching
                        FROM \(from) WHERE \(quoted) IS NOT NULL
                        """)!
                    let total: Int = counts["total"], matching: Int = counts["matching"]
                    if total > 0, matching == total { byValues = (name, total); break }
                }
                guard let parent = byName ?? byValues?.0 else { continue }
                var evidence = byName != nil ? ["by its name"] : []
                if let (valuesParent, count) = byValues, valuesParent == parent {
                    evidence.append("all \(count) of its values are ids of \"\(parent)\"")
                }
                warnings.append("\"\(table)\".\"\(column)\" looks like it holds ids of \"\(parent)\" (\(evidence.joined(separator: ", and "))) but is "
                                + "not a foreign key: its values will not match the new UUIDs; name it in extraReferences")
            }
        }
        return warnings
    }

    private func plan(for table: String, migrating names: [String], extraReferences: [ExtraReference],
                      salt: Data, _ db: Database) throws -> Plan {
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", arguments: [table])!
        let statement = try CreateTableStatement(sql: sql, table: table)
        var foreignKeys: [String: String] = [:]
        let keyColumns = Dictionary(grouping: try Row.fetchAll(db, sql: "SELECT * FROM pragma_foreign_key_list(?)", arguments: [table]),
                                    by: { $0["id"] as Int })
        for (_, rows) in keyColumns {
            guard rows.count == 1, let row = rows.first else {
                throw PrimaryKeyMigrationError(table: table, reason: "composite foreign keys cannot be migrated")
            }
            let parent: String = row["table"]
            guard let migratedParent = names.firstName(matching: parent) else {
                throw PrimaryKeyMigrationError(table: table, reason:
                    "its foreign key \"\(row["from"] as String)\" references \"\(parent)\", which is not part of the migration")
            }
            let parentKey = try integerKey(of: migratedParent, db)
            if let target = row["to"] as String?, parentKey.map({ !sqliteNamesEqual(target, $0) }) ?? true {
                throw PrimaryKeyMigrationError(table: table, reason:
                    "its foreign key \"\(row["from"] as String)\" references \"\(parent)\".\"\(target)\", which is not that table's integer primary key")
            }
            foreignKeys[row["from"]] = migratedParent
        }
        for reference in extraReferences { foreignKeys[reference.column] = reference.referencedTable }
        let quotedTable = SQLQuoting.identifier(table)
        func refuse(_ reason: String) -> PrimaryKeyMigrationError { PrimaryKeyMigrationError(table: table, reason: reason) }
        // Every value that becomes a derived UUID must be an integer id:
        // the copy fails on any other (refuseNonIntegerReferences says why).
        var foreignKeyDefaults: [String: String] = [:]
        for (column, parent) in foreignKeys {
            if let value = statement.defaultValue(ofColumn: column), value.uppercased() != "NULL" {
                guard let id = Int64(value.trimmingCharacters(in: CharacterSet(charactersIn: "()"))) else {
                    throw refuse("its column \"\(column)\" defaults to \(value), which is not an integer id of \"\(parent)\"")
                }
                let derived = try String.fetchOne(db, sql: "SELECT sqlitetriggers_derived_uuid(?, ?, ?)", arguments: [salt, parent, id])!
                foreignKeyDefaults[column] = SQLQuoting.string(derived)
            }
        }
        let isUniqueDropped = dropUniqueConstraints.containsName(table)
        let temporaryName = "sqlitetriggers_new_\(table)"
        let rewrite = try statement.rewritten(temporaryName: temporaryName, foreignKeyColumns: Set(foreignKeys.keys),
                                             uuidFunction: uuidFunction.rawValue, foreignKeyDefaults: foreignKeyDefaults,
                                             dropUnique: isUniqueDropped, addedKeyName: addedKeyName)
        var nullKeys = 0
        // A rowid alias has no index of its own; any other key has one
        // (origin 'pk'), "id INTEGER PRIMARY KEY DESC" and "id INT PRIMARY
        // KEY" included: SQLite alone decides what aliases the rowid.
        if let key = rewrite.oldKeyColumn,
           try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM pragma_index_list(?) WHERE origin = 'pk')",
                             arguments: [table]) == true {
            // Not a rowid alias: SQLite lets such a key hold text, or NULL.
            // A NULL key identifies nothing, so no row can reference it: it
            // gets a fresh key, as the new key column's default gives.
            let quoted = SQLQuoting.identifier(key)
            if let value = try String.fetchOne(db, sql: """
                SELECT quote(\(quoted)) FROM \(quotedTable) WHERE typeof(\(quoted)) NOT IN ('integer', 'null') LIMIT 1
                """) {
                throw refuse("its primary key \"\(key)\" holds \(value), which is not an integer")
            }
            nullKeys = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quotedTable) WHERE \(quoted) IS NULL") ?? 0
        }
        // Expressions of the columns that turn from integers into text.
        let changing = Array(foreignKeys.keys) + (rewrite.oldKeyColumn.map { [$0] } ?? [])
        func mentionsChanging(_ sql: String) -> String? {
            let tokens = tokenizeSQL(sql)
            return changing.first { column in tokens.contains { $0.isName && sqliteNamesEqual($0.name, column) } }
        }
        for (name, expression) in statement.generatedColumns {
            if let column = mentionsChanging(expression) {
                throw refuse("its generated column \"\(name)\" computes with \"\(column)\", which becomes text: drop or rewrite that column first")
            }
        }
        if let key = rewrite.oldKeyColumn { try refuseFullTextTablesKeyedOn(key, of: table, db) }
        var droppedUniqueIndexes: [String] = []
        var indexesAndTriggers: [String] = []
        for object in try Row.fetchAll(db, sql: """
            SELECT type, name, sql FROM sqlite_schema
            WHERE type IN ('index', 'trigger') AND tbl_name = ? AND sql IS NOT NULL ORDER BY rowid
            """, arguments: [table]) {
            let (type, name, sql): (String, String, String) = (object["type"], object["name"], object["sql"])
            if type == "index" {
                let tokens = tokenizeSQL(sql).filter { $0.kind != .trivia }
                if isUniqueDropped, tokens.count > 1, tokens[1].isWord("UNIQUE") {
                    droppedUniqueIndexes.append(name)
                    continue
                }
                // An index is rebuilt from the new table: a column it merely
                // lists is fine; one it computes with (an expression, the
                // WHERE of a partial index) would compute something else.
                if let column = indexComputations(tokens).lazy.compactMap({ mentionsChanging($0) }).first {
                    throw refuse("its index \"\(name)\" computes with \"\(column)\" in an expression or WHERE clause, "
                                 + "which changes meaning when it becomes text: drop or rewrite that index first")
                }
            }
            indexesAndTriggers.append(sql)
        }
        let copiedColumns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0", arguments: [table])
        let allColumns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?)", arguments: [table])
        guard let rowidAlias = ["rowid", "oid", "_rowid_"].first(where: { alias in
            !allColumns.containsName(alias)
        }) else {
            throw PrimaryKeyMigrationError(table: table, reason:
                "its columns \"rowid\", \"oid\" and \"_rowid_\" hide the rowid, which the migration keeps")
        }
        return Plan(table: table, temporaryName: temporaryName, rewrite: rewrite, foreignKeys: foreignKeys,
                    copiedColumns: copiedColumns, rowidAlias: rowidAlias, indexesAndTriggers: indexesAndTriggers,
                    droppedUniqueIndexes: droppedUniqueIndexes, nullKeys: nullKeys)
    }

    private func plan(forName name: String, _ plans: [Plan]) -> Plan? {
        plans.first { sqliteNamesEqual($0.table, name) }
    }

    /// The `name = value` arguments of a `CREATE VIRTUAL TABLE ... USING
    /// module(...)`, names lowercased, values unquoted.
    private func moduleOptions(_ tokens: [SQLToken]) -> [String: String] {
        var options: [String: String] = [:]
        for index in tokens.indices.dropFirst().dropLast() where tokens[index].text == "=" {
            let name = tokens[index - 1], value = tokens[index + 1]
            if name.isName, value.isName || value.kind == .number { options[name.name.lowercased()] = value.name }
        }
        return options
    }

    /// What a `CREATE INDEX` computes with: each indexed term that is not a
    /// plain column (with its optional COLLATE and ASC or DESC), and its
    /// WHERE clause; as SQL text. `tokens` has no trivia.
    private func indexComputations(_ tokens: [SQLToken]) -> [String] {
        guard let open = tokens.firstIndex(where: { $0.text == "(" }) else { return [] }
        var depth = 0, term: [SQLToken] = [], computations: [String] = [], index = open
        func isPlainColumn(_ term: [SQLToken]) -> Bool {
            guard let first = term.first, first.isName else { return false }
            var rest = term.dropFirst()
            if rest.first?.isWord("COLLATE") == true { rest = rest.dropFirst(2) }
            if rest.first?.isWord("ASC") == true || rest.first?.isWord("DESC") == true { rest = rest.dropFirst() }
            return rest.isEmpty
        }
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if token.text == "(" { depth += 1; if depth == 1 { continue } }
            if token.text == ")" { depth -= 1 }
            if depth == 0 || (depth == 1 && token.text == ",") {
                if !term.isEmpty, !isPlainColumn(term) { computations.append(term.map(\.text).joined(separator: " ")) }
                term = []
                if depth == 0 { break }
                continue
            }
            term.append(token)
        }
        if let whereIndex = tokens[index...].firstIndex(where: { $0.isWord("WHERE") }) {
            computations.append(tokens[(whereIndex + 1)...].map(\.text).joined(separator: " "))
        }
        return computations
    }

    // MARK: - Copying the rows

    /// A copy failed: if a reference holds a value that is not an integer
    /// id (sqlitetriggers_derived_uuid refuses it, which failed the copy),
    /// that is refused in the user's terms. Looked for only then: a scan of
    /// every reference before copying costs a sixth of the copy.
    private func refuseNonIntegerReferences(_ plan: Plan, _ db: Database) throws {
        for (column, parent) in plan.foreignKeys.sorted(by: { $0.key < $1.key }) {
            let quoted = SQLQuoting.identifier(column)
            if let value = try String.fetchOne(db, sql: """
                SELECT quote(\(quoted)) FROM \(SQLQuoting.identifier(plan.table)) WHERE \(quoted) IS NOT NULL AND typeof(\(quoted)) <> 'integer' LIMIT 1
                """) {
                throw PrimaryKeyMigrationError(table: plan.table, reason: "its column \"\(column)\" holds \(value), which is not an integer id of \"\(parent)\"")
            }
        }
    }

    /// Copies every row, keeping its rowid: `SELECT rowid, id` is then the
    /// old-to-new mapping, and whatever is keyed on rowids (external-content
    /// FTS tables, an app's caches) stays right.
    private func copy(_ plan: Plan, salt: Data, _ db: Database) throws {
        let rowid = SQLQuoting.identifier(plan.rowidAlias)
        var targets: [String] = [rowid]
        var values: [String] = [rowid]
        func derived(_ table: String, _ idExpression: String) -> String {
            "sqlitetriggers_derived_uuid(:salt, \(SQLQuoting.string(table)), \(idExpression))"
        }
        if plan.rewrite.oldKeyColumn == nil {
            targets.append(SQLQuoting.identifier(plan.rewrite.keyColumn))
            values.append(derived(plan.table, rowid))
        }
        for column in plan.copiedColumns {
            let quoted = SQLQuoting.identifier(column)
            targets.append(quoted)
            if plan.rewrite.oldKeyColumn.map({ sqliteNamesEqual(column, $0) }) == true {
                values.append(derived(plan.table, quoted))
            } else if let parent = plan.foreignKeys.first(where: { sqliteNamesEqual($0.key, column) })?.value {
                values.append(derived(parent, quoted))
            } else {
                values.append(quoted)
            }
        }
        // In rowid order, a chunk at a time, so that a long copy can say how
        // far it got; each chunk is a range of the rowid, which stays.
        let table = SQLQuoting.identifier(plan.table), copy = SQLQuoting.identifier(plan.temporaryName)
        let rowCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0
        var copied = 0
        var after: Int64?       // the last rowid copied
        var limit = Self.firstChunk
        rowsCopied(MigrationProgress(table: plan.table, rowsCopied: 0, rowCount: rowCount))
        while true {
            try db.execute(sql: """
                INSERT INTO \(copy) (\(targets.joined(separator: ", ")))
                SELECT \(values.joined(separator: ", ")) FROM \(table) \(after == nil ? "" : "WHERE \(rowid) > :after")
                ORDER BY \(rowid) LIMIT \(limit)
                """, arguments: after.map { ["salt": salt, "after": $0] } ?? ["salt": salt])
            let chunk = db.changesCount
            guard chunk > 0 else { break }
            copied += chunk
            after = try Int64.fetchOne(db, sql: "SELECT max(\(rowid)) FROM \(copy)")
            rowsCopied(MigrationProgress(table: plan.table, rowsCopied: copied, rowCount: max(rowCount, copied)))
            if chunk < limit { break }
            limit = min(2 * limit, Self.largestChunk)
        }
    }

    /// Rows copied by the first statement; each next one copies twice as
    /// many, up to `largestChunk`. Every statement after the first changes
    /// pages of the new key's index that earlier ones wrote (its keys are
    /// random), and SQLite keeps a copy of each such page in a statement
    /// journal: with chunks of 50,000 rows throughout, a file of 10,000,000
    /// rows took 63 s to migrate, 47 s in one statement, and 55 s so (52 s
    /// with chunks of up to 2,000,000), while progress still moves every
    /// second or two (a fraction of a second at first).
    static let firstChunk = 50_000
    static let largestChunk = 500_000
}
