import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// Scenario 5 of shared/SCENARIOS.md: completing a reminder calls
/// swift_callback('reminderCompleted', new.id, new.title).
@Suite struct ReminderScenarioTests {
    /// The integer-keyed schema, plus three reminders the test names.
    static let schema = integerRemindersSchema + """
        INSERT INTO reminders(id, remindersListID, title) VALUES (101, 1, 'Buy milk'), (102, 1, 'Call mom'), (103, 1, 'Pay rent');
        """
    /// status 1 means completed.
    static let trigger = """
        CREATE TEMP TRIGGER reminderCompleted AFTER UPDATE OF status ON reminders
        WHEN new.status = 1 AND old.status <> 1
        BEGIN SELECT swift_callback('reminderCompleted', new.id, new.title); END;
        """

    struct Vetoed: Error, CustomStringConvertible { var description: String { "rent cannot be completed yet" } }

    @Test(arguments: WriterKind.allCases)
    func completingAReminderTellsTheAppOnceAfterCommit(_ kind: WriterKind) throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        let completed = Locked<[String]>([])
        let observations = try writer.write { db in
            try db.execute(sql: Self.schema)
            try db.execute(sql: Self.trigger)
            return [
                try db.observeCallback("reminderCompleted") { (id: Int, title: String) in
                    completed.mutate { $0.append("\(id) \(title)") }
                },
                try db.observeCallback("reminderCompleted", delivery: .immediate) { (_: Int, title: String) in
                    if title == "Pay rent" { throw Vetoed() }
                },
            ]
        }
        defer { observations.forEach { $0.cancel() } }

        // Told once the transaction commits, not before.
        try writer.write { db in
            try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Buy milk'")
            try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Buy milk'")  // no change
            #expect(completed.value.isEmpty)
        }
        #expect(completed.value == ["101 Buy milk"])

        // Never told when it rolls back.
        try writer.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Call mom'")
                return .rollback
            }
        }
        #expect(completed.value == ["101 Buy milk"])

        // The immediate observer refuses: the statement fails with its message.
        let error = try #require(throws: DatabaseError.self) {
            try writer.write { db in try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Pay rent'") }
        }
        #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_FUNCTION)
        #expect(error.message == "rent cannot be completed yet")
        let rentStatus = try writer.read { db in try Int.fetchOne(db, sql: "SELECT status FROM reminders WHERE title = 'Pay rent'") }
        #expect(rentStatus == 0)
        #expect(completed.value == ["101 Buy milk"])
    }
}
