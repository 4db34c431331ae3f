import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

@Suite struct ImmediateObserverTests {
    struct Refusal: Error, CustomStringConvertible {
        var description: String { "titles may not be empty" }
    }

    @Test(arguments: WriterKind.allCases)
    func anObserverAnswersTheCall(_ kind: WriterKind) throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        let answer = try writer.write { db in
            let observation = try db.observeCallback("shout", delivery: .immediate) { (text: String) in
                text.uppercased()
            }
            defer { observation.cancel() }
            return try String.fetchOne(db, sql: "SELECT swift_callback('shout', 'hello')")
        }
        #expect(answer == "HELLO")
    }

    @Test(arguments: WriterKind.allCases)
    func aThrowingObserverVetoesLikeRaiseAbort(_ kind: WriterKind) throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        let (error, raiseError, titles, twinTitles) = try writer.write { db in
            try db.execute(sql: """
                CREATE TABLE reminder(title TEXT);
                CREATE TABLE twin(title TEXT);
                CREATE TEMP TRIGGER reminder_bi BEFORE INSERT ON reminder
                  BEGIN SELECT swift_callback('validate', new.title); END;
                CREATE TEMP TRIGGER twin_bi BEFORE INSERT ON twin WHEN new.title = ''
                  BEGIN SELECT RAISE(ABORT, 'titles may not be empty'); END;
                """)
            let observation = try db.observeCallback("validate", delivery: .immediate) { (title: String) in
                if title.isEmpty { throw Refusal() }
            }
            defer { observation.cancel() }
            try db.execute(sql: "INSERT INTO reminder VALUES ('kept'); INSERT INTO twin VALUES ('kept')")
            let error = try #require(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO reminder VALUES ('undone'), ('')")
            }
            let raiseError = try #require(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO twin VALUES ('undone'), ('')")
            }
            #expect(db.isInsideTransaction, "the surrounding transaction goes on")
            return (error, raiseError,
                    try String.fetchAll(db, sql: "SELECT title FROM reminder"),
                    try String.fetchAll(db, sql: "SELECT title FROM twin"))
        }
        #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_FUNCTION)
        #expect(error.extendedResultCode.rawValue == 1043)
        #expect(error.message == "titles may not be empty")
        #expect(raiseError.message == error.message)
        #expect(titles == ["kept"])
        #expect(titles == twinTitles, "the veto undoes exactly what RAISE(ABORT) undoes")
    }

    @Test(arguments: WriterKind.allCases)
    func anObserverReadsTheDatabase(_ kind: WriterKind) throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        let count = try writer.write { db in
            try db.execute(sql: "CREATE TABLE item(x); INSERT INTO item VALUES (1), (2), (3)")
            let observation = try db.observeCallback("count", delivery: .immediate) { (db: Database) in
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM item")
            }
            defer { observation.cancel() }
            let seen = Locked(0)
            let counting = try db.observeCallbacks(named: "count", delivery: .immediate) { _ in
                seen.mutate { $0 += 1 }
                return .integer(Int64(try Int.fetchOne(db, sql: "SELECT count(*) FROM item")!))
            }
            defer { counting.cancel() }
            let answer = try Int.fetchOne(db, sql: "SELECT swift_callback('count')")
            #expect(seen.value == 1)
            return answer
        }
        #expect(count == 3)
    }

    @Test func aCancelledObserverIsNeverCalledAgain() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let calls = Locked(0)
        let answers = try dbQueue.write { db in
            let observation = try db.observeCallback("ping", delivery: .immediate) { () in
                calls.mutate { $0 += 1 }
                return "pong"
            }
            let first = try String.fetchOne(db, sql: "SELECT swift_callback('ping')")
            observation.cancel()
            let second = try String.fetchOne(db, sql: "SELECT swift_callback('ping')")
            return [first, second]
        }
        #expect(answers == ["pong", nil])
        #expect(calls.value == 1)
    }

    @Test func releasingTheTokenStopsTheObserverAndFreesWhatItCaptured() throws {
        final class Captured {}
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        weak var weakCaptured: Captured?
        try dbQueue.write { db in
            let captured = Captured()
            weakCaptured = captured
            var observation: CallbackObservation? = try db.observeCallback("ping", delivery: .immediate) { () in
                _ = captured
            }
            _ = observation
            observation = nil
        }
        #expect(weakCaptured == nil)
    }
}
