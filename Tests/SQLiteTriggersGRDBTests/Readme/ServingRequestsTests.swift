import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

@TriggerTable("tasks") struct ServedTask {
    var id: String
    var title: String
}

/// What "Serving requests" says a refused write gives: a rule's RAISE fails
/// the request with SQLITE_CONSTRAINT_TRIGGER and the rule's message, from
/// a writer with SQLiteTriggers and from one without, and nothing of it is
/// logged.
@Suite struct ServingRequestsTests {
    @Test func aRuleRefusesWithItsMessageAndConstraintTrigger() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let pool = try DatabasePool(path: path, configuration: installingConfiguration())
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE tasks(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL)")
            try RuleSet {
                ServedTask.createTempTrigger(before: .insert { new in .raise(.abort, "A task needs a title.", when: new.title == "") })
            }.installPersistently(db)
            try db.installDurableLog(for: ["tasks"])
        }
        let plain = try DatabaseQueue(path: path)
        for writer in [pool as any DatabaseWriter, plain] {
            let error = #expect(throws: DatabaseError.self) {
                try writer.write { db in try db.execute(sql: "INSERT INTO tasks VALUES ('t1', '')") }
            }
            #expect(error?.extendedResultCode == .SQLITE_CONSTRAINT_TRIGGER)
            #expect(error?.message == "A task needs a title.")
        }
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlitetriggers_log") } == 0)
        try plain.close()
    }
}
