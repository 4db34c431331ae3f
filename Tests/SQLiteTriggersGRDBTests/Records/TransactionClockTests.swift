import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

/// One clock: "now" in triggers is GRDB's transaction date.
@Suite struct TransactionClockTests {
    func makeQueue(clock: TriggerClock = .transactionDate, transactionClock: (any TransactionClock)? = nil) throws -> DatabaseQueue {
        var config = Configuration()
        if let transactionClock { config.transactionClock = transactionClock }
        config.prepareDatabase { db in try db.installSQLiteTriggers(clock: clock) }
        let dbQueue = try DatabaseQueue(configuration: config)
        try dbQueue.write { db in
            try db.execute(sql: choresSchema)
        }
        try RuleSet { Chore.afterInsertTouch(\.createdAt); Chore.afterUpdateTouch(\.updatedAt) }.install(in: dbQueue)
        return dbQueue
    }

    @Test func nowIsTheTransactionDateForAWholeTransaction() throws {
        let dbQueue = try makeQueue()
        try dbQueue.write { db throws in
            let first = try String.fetchOne(db, sql: "SELECT datetime_subsec()")
            Thread.sleep(forTimeInterval: 0.01)
            try Chore(id: 1, title: "Milk").insert(db)
            let second = try String.fetchOne(db, sql: "SELECT datetime_subsec()")
            #expect(first == second, "constant within the transaction")
            let stored = try String.fetchOne(db, sql: "SELECT createdAt FROM chores")
            #expect(stored == first)
            let date = try db.transactionDate
            let grdbText = date.databaseValue.storage.value as? String
            #expect(stored == grdbText, "the text GRDB writes for its transaction date \(date.timeIntervalSince1970)")
        }
    }

    @Test func gRDBsTransactionClockControlsTheTriggers() throws {
        let instant = Date(timeIntervalSince1970: 1_700_000_000.25)
        let dbQueue = try makeQueue(transactionClock: .custom { _ in instant })
        try dbQueue.write { db throws in
            try Chore(id: 1, title: "Milk").insert(db)
            try db.execute(sql: "UPDATE chores SET title = 'Oat milk'")
        }
        let chore = try dbQueue.read { db in try Chore.fetchOne(db, key: 1) }
        #expect(chore?.createdAt == instant)
        #expect(chore?.updatedAt == instant)
        #expect(try dbQueue.read { db in try Double.fetchOne(db, sql: "SELECT unixepoch_subsec()") } == 1_700_000_000.25)
    }

    @Test func theSystemClockReadsAnewAndAPinWinsOverBoth() throws {
        let dbQueue = try makeQueue(clock: .system, transactionClock: .custom { _ in Date(timeIntervalSince1970: 0) })
        try dbQueue.write { db throws in
            let first = try String.fetchOne(db, sql: "SELECT datetime_subsec()")
            Thread.sleep(forTimeInterval: 0.01)
            let second = try String.fetchOne(db, sql: "SELECT datetime_subsec()")
            #expect(first != second)
            #expect(first.map { $0 > "2020" } == true, "not GRDB's clock")
            try db.pinClock(to: Date(timeIntervalSince1970: 86_400))
            #expect(try String.fetchOne(db, sql: "SELECT datetime_subsec()") == "1970-01-02 00:00:00.000")
        }
        let pinnedOverGRDB = try makeQueue()
        try pinnedOverGRDB.write { db throws in
            try db.pinClock(to: Date(timeIntervalSince1970: 86_400))
            #expect(try String.fetchOne(db, sql: "SELECT datetime_subsec()") == "1970-01-02 00:00:00.000")
        }
    }

    @Test func aFailingTransactionClockFailsTheCallByName() throws {
        struct ClockBroke: Error {}
        let dbQueue = try makeQueue(transactionClock: .custom { db in
            if try Bool.fetchOne(db, sql: "SELECT count(*) FROM chores") == true { throw ClockBroke() }
            return Date()
        })
        try dbQueue.write { db in try Chore(id: 1, title: "Milk").insert(db) }
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.writeWithoutTransaction { db in try db.execute(sql: "SELECT datetime_subsec()") }
        }
        #expect(error.message == "datetime_subsec: the connection's clock failed (SQL logic error)")
    }
}
