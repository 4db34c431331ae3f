import Foundation
import InlineSnapshotTesting
import GRDB
import SQLiteTriggersGRDB
import Testing

/// Every trigger of StructuredQueries' trigger tests and documentation,
/// said with our builders and no raw string where the builders can say it,
/// then run. Our own data; where a trigger there relies on something we do
/// not have (a nested `@Selection` group of columns), the test says so.
@Suite struct StructuredQueriesPortTests {
    let dbQueue: DatabaseQueue

    init() throws {
        dbQueue = try makeRemindersQueue("""
            INSERT INTO remindersLists(id, title, position) VALUES
              ('00000000-0000-4000-8000-000000000001', 'Home', 0),
              ('00000000-0000-4000-8000-000000000002', 'Work', 4)
            """)
    }

    /// New lists go after the last one (their "basics").
    @Test func newListsGoAfterTheLast() throws {
        let trigger = RemindersList.createTempTrigger(after: .insert { new in
            RemindersList.update { $0.position = RemindersList.aggregate { coalesce($0.position.max(), -1) + 1 } }.find(new.id)
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "remindersLists_after_insert_69ec90017f451445"
            AFTER INSERT ON "main"."remindersLists"
            FOR EACH ROW
            BEGIN
              UPDATE "remindersLists"
              SET "position" = (SELECT coalesce(max("remindersLists"."position"), -1) + 1 FROM "remindersLists")
              WHERE "remindersLists"."id" = "new"."id";
            END
            """
        }
        let positions = try dbQueue.write { db in
            try trigger.execute(db)
            try db.execute(sql: "INSERT INTO remindersLists(title) VALUES ('Errands')")
            return try Int.fetchAll(db, sql: "SELECT position FROM remindersLists ORDER BY title")
        }
        #expect(positions == [5, 0, 4])
        #expect(try dbQueue.read { db in try String.fetchOne(db, sql: "SELECT name FROM sqlite_temp_master WHERE type = 'trigger'") } == trigger.name,
                "the name is derived from the definition, so drop() needs nothing else")
        try dbQueue.write { db in try trigger.drop().execute(db) }
        #expect(try dbQueue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'") } == 0)
    }

    /// Their counter touch (`$0.position += 1`), which terminates here.
    @Test func aCounterTouch() throws {
        let trigger = RemindersList.createTempTrigger(after: .touch { $0.position = $0.position + 1 })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "remindersLists_after_update_touch_387ab87fba887bc6"
            AFTER UPDATE ON "main"."remindersLists"
            FOR EACH ROW
            WHEN "new"."position" IS "old"."position"
            BEGIN
              UPDATE "remindersLists"
              SET "position" = "position" + 1
              WHERE "rowid" = "new"."rowid" AND ("position" IS NOT ("position" + 1));
            END
            """
        }
        let positions = try dbQueue.write { db in
            try db.execute(sql: "PRAGMA recursive_triggers = ON")
            try trigger.execute(db)
            try db.execute(sql: "UPDATE remindersLists SET title = title || '!'")
            return try Int.fetchAll(db, sql: "SELECT position FROM remindersLists ORDER BY title")
        }
        #expect(positions == [1, 5], "bumped once per update, even with recursive triggers")
    }

    /// Their date touch, and the same with another date expression (their
    /// `customDate()`, here a function the app registers).
    @Test func dateTouches() throws {
        let standard = Reminder.afterUpdateTouch(\.updatedAt)
        let custom = Reminder.createTempTrigger(after: .touch { $0.dueDate = TypedSQL<Date?>(sql: "customDate()") })
        assertInlineSnapshot(of: custom.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_update_touch_6fe0bcb23e36e16c"
            AFTER UPDATE ON "main"."reminders"
            FOR EACH ROW
            WHEN "new"."dueDate" IS "old"."dueDate"
            BEGIN
              UPDATE "reminders"
              SET "dueDate" = customDate()
              WHERE "rowid" = "new"."rowid" AND ("dueDate" IS NOT (customDate()));
            END
            """
        }
        let row = try dbQueue.write { db in
            db.add(function: DatabaseFunction("customDate", argumentCount: 0, pure: false) { _ in "2030-01-01 00:00:00.000" })
            try db.pinClock(to: Date(timeIntervalSince1970: 0))
            try standard.execute(db)
            try custom.execute(db)
            try db.execute(sql: "INSERT INTO reminders(remindersListID, title) VALUES ('00000000-0000-4000-8000-000000000001', 'a')")
            try db.execute(sql: "UPDATE reminders SET title = 'b'")
            return try Row.fetchOne(db, sql: "SELECT updatedAt, dueDate FROM reminders")!
        }
        #expect(row["updatedAt"] as String == "1970-01-01 00:00:00.000")
        #expect(row["dueDate"] as String == "2030-01-01 00:00:00.000")
    }

    /// Their documentation's first trigger: every reminder's `updatedAt`
    /// set on any update, as a plain UPDATE of the whole table (their
    /// example has no WHERE); `afterUpdateTouch` is what one wants instead.
    @Test func aWholeTableUpdate() throws {
        let trigger = Reminder.createTempTrigger(after: .update { _, _ in
            Reminder.update { $0.updatedAt = .now }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_update_3354c445172eb6b5"
            AFTER UPDATE ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              UPDATE "reminders"
              SET "updatedAt" = datetime_subsec();
            END
            """
        }
        let stamps = try dbQueue.write { db in
            try db.pinClock(to: Date(timeIntervalSince1970: 0))
            try trigger.execute(db)
            try db.execute(sql: "INSERT INTO reminders(remindersListID, title) VALUES ('00000000-0000-4000-8000-000000000001', 'a'), ('00000000-0000-4000-8000-000000000001', 'b')")
            try db.execute(sql: "UPDATE reminders SET title = 'c' WHERE title = 'a'")
            return try String.fetchAll(db, sql: "SELECT updatedAt FROM reminders")
        }
        #expect(stamps == ["1970-01-01 00:00:00.000", "1970-01-01 00:00:00.000"], "every row, as written")
    }

    /// Three statements in one body: UPDATE with a subquery, DELETE, SELECT.
    @Test func multipleStatements() throws {
        let trigger = RemindersList.createTempTrigger(after: .insert { new in
            RemindersList.update { $0.position = RemindersList.aggregate { coalesce($0.position.max(), -1) + 1 } }.find(new.id)
            RemindersList.delete { $0.position == 0 }
            RemindersList.select { $0.position }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "remindersLists_after_insert_3ac33dfedbfa8dac"
            AFTER INSERT ON "main"."remindersLists"
            FOR EACH ROW
            BEGIN
              UPDATE "remindersLists"
              SET "position" = (SELECT coalesce(max("remindersLists"."position"), -1) + 1 FROM "remindersLists")
              WHERE "remindersLists"."id" = "new"."id";
              DELETE FROM "remindersLists"
              WHERE "remindersLists"."position" = 0;
              SELECT "remindersLists"."position"
              FROM "remindersLists";
            END
            """
        }
        let titles = try dbQueue.write { db in
            try trigger.execute(db)
            try db.execute(sql: "INSERT INTO remindersLists(title) VALUES ('Errands')")
            return try String.fetchAll(db, sql: "SELECT title FROM remindersLists ORDER BY position")
        }
        #expect(titles == ["Work", "Errands"])
    }

    /// Their non-empty table: a stub list when the last one goes.
    @Test func neverEmpty() throws {
        let trigger = RemindersList.createTempTrigger(after: .delete(when: { _ in !RemindersList.exists() }) { _ in
            RemindersList.insert { $0.title = "Personal" }
        })
        let titles = try dbQueue.write { db in
            try trigger.execute(db)
            try db.execute(sql: "DELETE FROM remindersLists")
            return try String.fetchAll(db, sql: "SELECT title FROM remindersLists")
        }
        #expect(titles == ["Personal"])
    }

    /// Their Swift call from a trigger (`Values($didInsertReminder(new.id))`),
    /// and their `Values(1)`: a SELECT of expressions.
    @Test func callingTheApp() throws {
        let trigger = Reminder.createTempTrigger(after: .insert { new in
            TriggerStatement.select(TypedSQL<Int?>(sql: "didInsertReminder(\(new.id))"))
            TriggerStatement.select(1)    // a line that starts with "." would continue the one above
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_0d25a9c26dfb6a18"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              SELECT didInsertReminder("new"."id");
              SELECT 1;
            END
            """
        }
        let seen = Locked<[String]>([])
        try dbQueue.write { db in
            db.add(function: DatabaseFunction("didInsertReminder", argumentCount: 1, pure: false) { values in
                seen.mutate { $0.append(String.fromDatabaseValue(values[0]) ?? "?") }
                return nil
            })
            try trigger.execute(db)
            try db.execute(sql: "INSERT INTO reminders(id, remindersListID, title) VALUES ('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-000000000001', 'a')")
        }
        #expect(seen.value == ["00000000-0000-4000-8000-0000000000a1"])
    }
}
