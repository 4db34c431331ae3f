import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// Runs the README's list of builder constructs on a real database.
@Suite struct ReadmeConstructsTests {
    typealias C = ReadmeConstructs

    @Test func everyConstructDoesWhatTheReadmeSays() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let (log, reminder, list) = try dbQueue.write { db in
            try db.execute(sql: syncReadyRemindersSchema)
            try db.execute(sql: """
                CREATE TABLE logs(id TEXT PRIMARY KEY NOT NULL DEFAULT (uuid()), text TEXT NOT NULL DEFAULT '', count INTEGER NOT NULL DEFAULT 0);
                INSERT INTO remindersLists(id, title, position) VALUES ('00000000-0000-4000-8000-000000000001', 'Home', 3);
                """)
            try db.execute(sql: "PRAGMA recursive_triggers = ON")
            try db.pinClock(to: Date(timeIntervalSince1970: 0))
            try C.openReminders.execute(db)
            for trigger in C.triggers { try trigger.execute(db) }
            try db.execute(sql: """
                INSERT INTO reminders(id, remindersListID, title, notes, priority, isFlagged, dueDate)
                VALUES ('0189f7a0-0000-7000-8000-000000000000', '00000000-0000-4000-8000-000000000001', ' Milk ', '{"place": "Market"}', 3, 1,
                        '2024-02-28 10:00:00.000')
                """)
            try db.execute(sql: "DELETE FROM openReminders")        // INSTEAD OF: completes instead
            try db.execute(sql: "UPDATE reminders SET title = 'Oat milk'")
            return (try Row.fetchAll(db, sql: "SELECT text, count FROM logs ORDER BY rowid").map { "\($0["text"] as String)|\($0["count"] as Int)" },
                    try Row.fetchOne(db, sql: "SELECT notes, status, createdAt, updatedAt FROM reminders")!,
                    try Int.fetchOne(db, sql: "SELECT position FROM remindersLists"))
        }
        #expect(log == [
            "open|7",                             // CASE, then the typed raw UPDATE
            "high|0",
            "milk!|6",
            "|6",                                 // max(3, 1) + abs(3)
            #"{"title":" Milk ","tags":[1,2]}|0"#,
            "Market|0",
            "2024-02-29|0",
            "|7",                                 // uuid_version
            "|1",                                 // aggregate
            "Home|0",                             // scalar subquery
            " Milk  #3|0",                        // typed raw SQL
            "upserted|0",                         // INSERT OR IGNORE, then the upsert
            "Home|0",                             // INSERT … SELECT
        ])
        #expect(reminder["notes"] as String == "in Home", "UPDATE … FROM")
        #expect(reminder["status"] as Int == 1, "the view's INSTEAD OF trigger")
        #expect(reminder["createdAt"] as String == "1970-01-01 00:00:00.000", "insert touch")
        #expect(reminder["updatedAt"] as String? == nil, "a retitle of a completed reminder is not touched")
        #expect(list == 0, "the list touched as a statement")
    }
}
