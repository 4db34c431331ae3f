import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

@Suite struct AfterCommitTests {
    /// A writer with the `t` schema and an after-commit observer recording
    /// the values of 'inserted' events.
    struct Fixture {
        let writer: any DatabaseWriter
        let cleanup: () -> Void
        let seen = Locked<[String]>([])
        let observation: CallbackObservation

        init(_ kind: WriterKind) throws {
            (writer, cleanup) = try makeWriter(kind)
            let seen = self.seen
            observation = try writer.write { db in
                try db.execute(sql: insertedSchema)
                return try db.observeCallback("inserted") { (value: String) in
                    seen.mutate { $0.append(value) }
                }
            }
        }
    }

    @Test(arguments: WriterKind.allCases)
    func aCommitDeliversOnceInOrder(_ kind: WriterKind) throws {
        let fixture = try Fixture(kind)
        defer { fixture.cleanup() }
        try fixture.writer.write { db in
            try db.execute(sql: "INSERT INTO t(v) VALUES ('a'), ('b')")
            #expect(fixture.seen.value.isEmpty, "nothing before the commit")
        }
        try fixture.writer.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('c')") }
        #expect(fixture.seen.value == ["a", "b", "c"])
    }

    @Test(arguments: WriterKind.allCases)
    func aRollbackDeliversNothing(_ kind: WriterKind) throws {
        let fixture = try Fixture(kind)
        defer { fixture.cleanup() }
        try fixture.writer.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "INSERT INTO t(v) VALUES ('a')")
                return .rollback
            }
        }
        #expect(fixture.seen.value.isEmpty)
    }

    @Test(arguments: WriterKind.allCases)
    func aFailedStatementMidTransactionDeliversOnlyTheRest(_ kind: WriterKind) throws {
        let fixture = try Fixture(kind)
        defer { fixture.cleanup() }
        try fixture.writer.write { db in
            try db.execute(sql: "INSERT INTO t(v) VALUES ('a')")
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO t(v) VALUES ('b'), ('c'), ('a')")
            }
            try db.execute(sql: "INSERT INTO t(v) VALUES ('d')")
        }
        #expect(fixture.seen.value == ["a", "d"])
    }

    @Test(arguments: WriterKind.allCases)
    func aSavepointRollbackThroughInSavepointDropsItsEvents(_ kind: WriterKind) throws {
        let fixture = try Fixture(kind)
        defer { fixture.cleanup() }
        try fixture.writer.write { db in
            try db.execute(sql: "INSERT INTO t(v) VALUES ('before')")
            try db.inSavepoint {
                try db.execute(sql: "INSERT INTO t(v) VALUES ('undone')")
                return .rollback
            }
            try db.inSavepoint {
                try db.execute(sql: "INSERT INTO t(v) VALUES ('kept')")
                return .commit
            }
        }
        #expect(fixture.seen.value == ["before", "kept"])
    }

    @Test(arguments: WriterKind.allCases)
    func raiseRollbackDeliversNothing(_ kind: WriterKind) throws {
        let fixture = try Fixture(kind)
        defer { fixture.cleanup() }
        try fixture.writer.writeWithoutTransaction { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER t_rollback AFTER INSERT ON t WHEN new.v = 'abandon'
                  BEGIN SELECT RAISE(ROLLBACK, 'abandoned'); END;
                """)
            #expect(throws: DatabaseError.self) {
                try db.inTransaction {
                    try db.execute(sql: "INSERT INTO t(v) VALUES ('a')")
                    try db.execute(sql: "INSERT INTO t(v) VALUES ('abandon')")
                    return .commit
                }
            }
            try db.execute(sql: "INSERT INTO t(v) VALUES ('b')")
        }
        #expect(fixture.seen.value == ["b"])
    }

    @Test(arguments: WriterKind.allCases)
    func anObserverWritesToTheDatabaseWhenCalled(_ kind: WriterKind) throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        let seen = Locked<[String]>([])
        let observation = try writer.write { db in
            try db.execute(sql: insertedSchema)
            try db.execute(sql: "CREATE TABLE history(v TEXT)")
            return try db.observeCallback("inserted") { (db: Database, value: String) in
                seen.mutate { $0.append(value) }
                try db.execute(sql: "INSERT INTO history VALUES (?)", arguments: [value])
                if value == "first" {
                    try db.execute(sql: "INSERT INTO t(v) VALUES ('second')")
                }
            }
        }
        defer { observation.cancel() }
        try writer.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('first')") }
        let history = try writer.read { db in try String.fetchAll(db, sql: "SELECT v FROM history") }
        #expect(history == ["first", "second"])
        #expect(seen.value == ["first", "second"], "its own write's event follows, once")
    }

    @Test func undecodableEventsGoToTheErrorHandler() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let errors = Locked<[String]>([])
        let observation = try dbQueue.write { db in
            try db.observeCallback("typed", onError: { error in errors.mutate { $0.append("\(error)") } }) { (_: Int) in }
        }
        defer { observation.cancel() }
        try dbQueue.write { db in try db.execute(sql: "SELECT swift_callback('typed', 'not a number')") }
        #expect(errors.value == ["swift_callback 'typed': argument 1 should be an integer, found text 'not a number'"])
    }

    @Test func aCancelledObserverHearsNothingMore() throws {
        let fixture = try Fixture(.queue)
        try fixture.writer.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('a')") }
        fixture.observation.cancel()
        try fixture.writer.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('b')") }
        #expect(fixture.seen.value == ["a"])
    }
}
