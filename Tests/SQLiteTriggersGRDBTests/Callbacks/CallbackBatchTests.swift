import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// Batch observers: a round of committed events at once, read with GRDB
/// from `swift_callback_batch`.
@Suite struct CallbackBatchTests {
    @Test(arguments: WriterKind.allCases)
    func aBatchIsEachCommitsEventsReadAsRows(_ kind: WriterKind) throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        let batches = Locked<[[String]]>([])
        let counts = Locked<[Int]>([])
        let observation = try writer.write { db in
            try db.execute(sql: insertedSchema)
            return try db.observeCallbackBatches(named: "inserted") { db, count in
                counts.mutate { $0.append(count) }
                let rows = try Row.fetchAll(db, sql: "SELECT seq, name, argc, arg1 FROM swift_callback_batch")
                batches.mutate { $0.append(rows.map { "\($0["seq"] as Int64) \($0["name"] as String) \($0["argc"] as Int) \($0["arg1"] as String)" }) }
            }
        }
        defer { observation.cancel() }
        try writer.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('a'), ('b')") }
        try? writer.write { db in
            try db.execute(sql: "INSERT INTO t(v) VALUES ('rolled back')")
            throw DatabaseError(message: "abandoned")
        }
        try writer.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('c')") }
        #expect(batches.value == [["1 inserted 1 a", "2 inserted 1 b"], ["3 inserted 1 c"]])
        #expect(counts.value == [2, 1])
        let outside = try writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM swift_callback_batch") }
        #expect(outside == 0, "empty outside a batch call")
    }

    @Test func aFailingBatchGoesToOnErrorAndTheNextRoundStillComes() throws {
        struct Refused: Error {}
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let errors = Locked<[String]>([])
        let calls = Locked(0)
        let observation = try dbQueue.write { db in
            try db.execute(sql: insertedSchema)
            return try db.observeCallbackBatches(named: "inserted", onError: { error in errors.mutate { $0.append("\(error)") } }) { _, _ in
                calls.mutate { $0 += 1 }
                throw Refused()
            }
        }
        defer { observation.cancel() }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('a')") }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('b')") }
        #expect(calls.value == 2 && errors.value == ["Refused()", "Refused()"])
    }

    @Test func aReadOnlyConnectionIsRefused() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let dbPool = try DatabasePool(path: path, configuration: installingConfiguration())
        let error = try #require(throws: DatabaseError.self) {
            try dbPool.read { db in try db.observeCallbackBatches(named: "inserted") { _, _ in } }
        }
        #expect(error.resultCode == .SQLITE_READONLY)
    }
}
