import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

/// Rule sets: installed once on the writer, back after every migration
/// that drops their tables, loud when they no longer fit.
@Suite struct RuleSetTests {
    static let rules = RuleSet {
        Chore.afterInsertTouch(\.createdAt)
        Chore.afterUpdateTouch(\.updatedAt)
        Chore.createTempTrigger(before: .insert { new in
            .raise(.abort, "A chore needs a title.", when: new.title == "")
        })
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("chores") { db in
            try db.execute(sql: choresSchema)
        }
        return migrator
    }

    /// A later migration that recreates the table, the way SQLite changes
    /// a table's shape.
    static func recreateChores(_ migrator: inout DatabaseMigrator, keeping columns: String = "id, title, createdAt, updatedAt",
                               named name: String = "recreate chores") {
        migrator.registerMigration(name) { db in
            try db.execute(sql: """
                CREATE TABLE new_chores(id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', \
                \(columns.contains("createdAt") ? "createdAt TEXT," : "") updatedAt TEXT, notes TEXT);
                INSERT INTO new_chores(\(columns)) SELECT \(columns) FROM chores;
                DROP TABLE chores;
                ALTER TABLE new_chores RENAME TO chores;
                """)
        }
    }

    func triggerCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.sqlite_master WHERE type = 'trigger'") ?? 0
    }

    @Test(arguments: WriterKind.allCases)
    func aMigrationThatRecreatesATableGetsTheRulesBack(_ kind: WriterKind) throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        var migrator = Self.migrator
        try migrator.migrate(writer)
        try Self.rules.install(in: writer)
        if kind == .pool {
            #expect(try writer.read(triggerCount) == 0, "a pool's readers get no rules")
        }
        let installed = try writer.write(triggerCount)
        #expect(installed == 4, "three rules, and the insert touch's companion")

        Self.recreateChores(&migrator)
        try migrator.migrate(writer)
        #expect(try writer.write(triggerCount) == installed)
        try writer.write { db throws in
            try Chore(id: 1, title: "Milk").insert(db)
            #expect(try Chore.fetchOne(db, key: 1)?.createdAt != nil, "the touch is back")
            #expect(throws: DatabaseError.self) { try Chore(id: 2, title: "").insert(db) }
        }
    }

    @Test func thePrimaryKeyMigrationGetsTheRulesBack() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in
            try db.execute(sql: choresSchema)
            try db.execute(sql: "INSERT INTO chores(title) VALUES ('Milk')")
        }
        try Self.rules.install(in: dbQueue)
        let installed = try dbQueue.read(triggerCount)
        try dbQueue.writeWithoutTransaction { db in _ = try migratePrimaryKeys(db, tables: ["chores"]) }
        #expect(try dbQueue.read(triggerCount) == installed)
        try dbQueue.write { db throws in
            try db.execute(sql: "INSERT INTO chores(title) VALUES ('Bread')")
            #expect(try String.fetchOne(db, sql: "SELECT createdAt FROM chores WHERE title = 'Bread'") != nil)
        }
    }

    @Test func aRuleThatNoLongerFitsRefusesWritesUntilItFitsAgain() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        var migrator = Self.migrator
        try migrator.migrate(dbQueue)
        let reported = Locked<[String]>([])
        try Self.rules.install(in: dbQueue, onError: { error in reported.mutate { $0.append("\(error)") } })

        Self.recreateChores(&migrator, keeping: "id, title, updatedAt", named: "drop createdAt")
        try migrator.migrate(dbQueue)
        #expect(reported.value.count == 1)
        #expect(reported.value.first?.contains("rule \"\(Chore.afterInsertTouch(\.createdAt).name)\" on \"chores\" was dropped by a schema change") == true)
        #expect(reported.value.first?.contains("no such column") == true)
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in try db.execute(sql: "INSERT INTO chores(title) VALUES ('Milk')") }
        }
        #expect(error.message?.contains("cannot be installed again") == true, "the write names the lost rule")
        try dbQueue.write { db in try db.execute(sql: "UPDATE chores SET title = title") }   // UPDATE rules still work

        migrator.registerMigration("add createdAt back") { db in
            try db.execute(sql: "ALTER TABLE chores ADD COLUMN createdAt TEXT")
        }
        try migrator.migrate(dbQueue)
        try dbQueue.write { db throws in
            try db.execute(sql: "INSERT INTO chores(title) VALUES ('Milk')")
            #expect(try String.fetchOne(db, sql: "SELECT createdAt FROM chores") != nil)
            #expect(try String.fetchAll(db, sql: "SELECT name FROM temp.sqlite_master WHERE name LIKE '%unfit%'").isEmpty)
        }
    }

    @Test func installingBeforeTheMigrationsIsRefused() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let error = try #require(throws: DatabaseError.self) { try Self.rules.install(in: dbQueue) }
        #expect(error.message == "rule \"\(Chore.afterInsertTouch(\.createdAt).name)\" is on \"chores\", which does not exist: "
                + "run the migrations first, then install the rules")
        #expect(try dbQueue.read(triggerCount) == 0, "nothing half-installed")
    }

    @Test func readersAreRefused() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let dbPool = try DatabasePool(path: path, configuration: installingConfiguration())
        try Self.migrator.migrate(dbPool)
        let error = try #require(throws: DatabaseError.self) {
            try dbPool.read { db in try Self.rules.install(db) }
        }
        #expect(error.message?.contains("install rules on the writer") == true)
        let single = try #require(throws: DatabaseError.self) {
            try dbPool.read { db in try Chore.afterUpdateTouch(\.updatedAt).execute(db) }
        }
        #expect(single.message?.contains("is read-only (a DatabasePool reader, or a file opened read-only)") == true)
    }

    @Test func installingTwiceIsHarmless() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try Self.migrator.migrate(dbQueue)
        try Self.rules.install(in: dbQueue)
        try Self.rules.install(in: dbQueue)
        #expect(try dbQueue.read(triggerCount) == 4)
    }
}
