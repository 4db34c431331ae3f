import Foundation
import InlineSnapshotTesting
import GRDB
import SQLiteTriggersGRDB
import Testing

/// The six Reminders rules, built with the typed API: their SQL, then each
/// proven by reads after writes on real SQLite through GRDB.
@Suite struct ReminderRulesTests {
    /// A queue with the sync-ready schema and all six rules installed.
    func makeQueue(recursiveTriggers: Bool = true) throws -> DatabaseQueue {
        var config = Configuration()
        config.prepareDatabase { db in
            try db.installSQLiteTriggers()
            if recursiveTriggers { try db.execute(sql: "PRAGMA recursive_triggers = ON") }
        }
        let dbQueue = try DatabaseQueue(configuration: config)
        try dbQueue.write { db in
            try db.execute(sql: syncReadyRemindersSchema)
            for rule in ReminderRules.all { try rule.execute(db) }
            try db.execute(sql: "INSERT INTO remindersLists(title) VALUES ('Personal')")
        }
        return dbQueue
    }

    @Test func theRulesSQL() {
        assertInlineSnapshot(of: ReminderRules.stampCreatedAt.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_touch_97078ee3dfe466e4"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            WHEN "new"."createdAt" IS NULL
            BEGIN
              UPDATE "reminders"
              SET "createdAt" = coalesce("createdAt", datetime_subsec())
              WHERE "rowid" = "new"."rowid" AND ("createdAt" IS NOT coalesce("createdAt", datetime_subsec()));
            END;
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_touch_97078ee3dfe466e4_kept"
            AFTER UPDATE OF "createdAt" ON "main"."reminders"
            FOR EACH ROW
            WHEN ("new"."createdAt" IS NULL AND "old"."createdAt" IS NOT NULL)
            BEGIN
              UPDATE "reminders"
              SET "createdAt" = coalesce("new"."createdAt", "old"."createdAt")
              WHERE "rowid" = "new"."rowid";
            END
            """
        }
        assertInlineSnapshot(of: ReminderRules.stampUpdatedAt.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_update_touch_b94e4cf5227f5603"
            AFTER UPDATE ON "main"."reminders"
            FOR EACH ROW
            WHEN "new"."updatedAt" IS "old"."updatedAt"
            BEGIN
              UPDATE "reminders"
              SET "updatedAt" = datetime_subsec()
              WHERE "rowid" = "new"."rowid" AND ("updatedAt" IS NOT datetime_subsec());
            END
            """
        }
        assertInlineSnapshot(of: ReminderRules.neverEmpty.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "remindersLists_after_delete_0eca6264e3592548"
            AFTER DELETE ON "main"."remindersLists"
            FOR EACH ROW
            WHEN NOT EXISTS (SELECT 1 FROM "remindersLists")
            BEGIN
              INSERT INTO "remindersLists" ("title")
              VALUES ('Reminders');
            END
            """
        }
        assertInlineSnapshot(of: ReminderRules.newListsGoLast.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "remindersLists_after_insert_0d81ad332cc5b973"
            AFTER INSERT ON "main"."remindersLists"
            FOR EACH ROW
            BEGIN
              UPDATE "remindersLists"
              SET "position" = (SELECT count(*) FROM "remindersLists") - 1
              WHERE "remindersLists"."id" = "new"."id";
            END
            """
        }
        assertInlineSnapshot(of: ReminderRules.atMostFiveTags.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminderTags_before_insert_523956f85add43ab"
            BEFORE INSERT ON "main"."reminderTags"
            FOR EACH ROW
            BEGIN
              SELECT RAISE(ABORT, 'Reminders can have a maximum of 5 tags.')
              WHERE (SELECT count(*) FROM "reminderTags" WHERE "reminderTags"."reminderID" = "new"."reminderID") >= 5;
            END
            """
        }
        assertInlineSnapshot(of: ReminderRules.completionCallback.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_update_of_770f2799b694123a"
            AFTER UPDATE OF "status" ON "main"."reminders"
            FOR EACH ROW
            WHEN ("new"."status" = 1) AND ("old"."status" <> 1)
            BEGIN
              SELECT swift_callback('reminderCompleted', "new"."id", "new"."title");
            END
            """
        }
    }

    @Test func timestampsWithRecursiveTriggersAndAPinnedClock() throws {
        let dbQueue = try makeQueue()
        let row = try dbQueue.write { db in
            try db.pinClock(to: Date(timeIntervalSince1970: 1_704_164_645.678))
            let listID = try String.fetchOne(db, sql: "SELECT id FROM remindersLists")!
            try db.execute(sql: "INSERT INTO reminders(remindersListID, title) VALUES (?, 'Milk')", arguments: [listID])
            let inserted = try Row.fetchOne(db, sql: "SELECT createdAt, updatedAt FROM reminders")!
            #expect(inserted["createdAt"] as String? == "2024-01-02 03:04:05.678")
            // The clock stays pinned: the touch would write the same value, and must still terminate.
            try db.execute(sql: "UPDATE reminders SET title = 'Oat milk'")
            try db.execute(sql: "UPDATE reminders SET title = 'Whole milk'")
            try db.pinClock(to: Date(timeIntervalSince1970: 1_704_164_700))
            try db.execute(sql: "UPDATE reminders SET notes = 'raw SQL is touched too'")
            return try Row.fetchOne(db, sql: "SELECT createdAt, updatedAt FROM reminders")!
        }
        #expect(row["createdAt"] as String? == "2024-01-02 03:04:05.678")
        #expect(row["updatedAt"] as String? == "2024-01-02 03:05:00.000")
    }

    @Test func explicitTimestampsWin() throws {
        let dbQueue = try makeQueue()
        let row = try dbQueue.write { db in
            try db.pinClock(to: Date(timeIntervalSince1970: 1_704_164_645))
            let listID = try String.fetchOne(db, sql: "SELECT id FROM remindersLists")!
            try db.execute(sql: "INSERT INTO reminders(remindersListID, title, createdAt) VALUES (?, 'Milk', '2000-01-01 00:00:00.000')", arguments: [listID])
            try db.execute(sql: "UPDATE reminders SET title = 'x', updatedAt = '2001-01-01 00:00:00.000'")
            return try Row.fetchOne(db, sql: "SELECT createdAt, updatedAt FROM reminders")!
        }
        #expect(row["createdAt"] as String? == "2000-01-01 00:00:00.000")
        #expect(row["updatedAt"] as String? == "2001-01-01 00:00:00.000")
    }

    @Test func neverAnEmptyListTable() throws {
        let dbQueue = try makeQueue()
        let (afterFirst, afterLast) = try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO remindersLists(title) VALUES ('Work')")
            try db.execute(sql: "DELETE FROM remindersLists WHERE title = 'Work'")
            let afterFirst = try String.fetchAll(db, sql: "SELECT title FROM remindersLists")
            try db.execute(sql: "DELETE FROM remindersLists")
            return (afterFirst, try String.fetchAll(db, sql: "SELECT title FROM remindersLists"))
        }
        #expect(afterFirst == ["Personal"], "deleting another list inserts nothing")
        #expect(afterLast == ["Reminders"])
    }

    @Test func newListsGoLast() throws {
        let dbQueue = try makeQueue()
        let positions = try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO remindersLists(title) VALUES ('Work'), ('Home')")
            return try Row.fetchAll(db, sql: "SELECT title, position FROM remindersLists ORDER BY position")
                .map { "\($0["title"] as String) \($0["position"] as Int)" }
        }
        #expect(positions == ["Personal 0", "Work 1", "Home 2"])
    }

    @Test func atMostFiveTagsRollsBackTheWholeSave() throws {
        let dbQueue = try makeQueue()
        let reminderID = try dbQueue.write { db in
            let listID = try String.fetchOne(db, sql: "SELECT id FROM remindersLists")!
            try db.execute(sql: "INSERT INTO reminders(remindersListID, title) VALUES (?, 'Milk')", arguments: [listID])
            try db.execute(sql: "INSERT INTO tags(title) VALUES ('a'), ('b'), ('c'), ('d'), ('e'), ('f')")
            return try String.fetchOne(db, sql: "SELECT id FROM reminders")!
        }
        // The app saves the reminder's edits and its six tags in one transaction.
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in
                try db.execute(sql: "UPDATE reminders SET title = 'Edited' WHERE id = ?", arguments: [reminderID])
                try db.execute(sql: "INSERT INTO reminderTags(reminderID, tagID) SELECT ?, id FROM tags ORDER BY title",
                               arguments: [reminderID])
            }
        }
        #expect(error.resultCode == .SQLITE_CONSTRAINT)
        #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_TRIGGER)
        #expect(error.extendedResultCode.rawValue == 1811)
        #expect(error.message == "Reminders can have a maximum of 5 tags.")
        let (title, tagCount) = try dbQueue.read { db in
            (try String.fetchOne(db, sql: "SELECT title FROM reminders")!,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM reminderTags")!)
        }
        #expect(title == "Milk", "the reminder's edits were rolled back too")
        #expect(tagCount == 0)
        let fiveFit = try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO reminderTags(reminderID, tagID) SELECT ?, id FROM tags ORDER BY title LIMIT 5",
                           arguments: [reminderID])
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM reminderTags")!
        }
        #expect(fiveFit == 5)
    }

    @Test func completionIsObservedAfterCommit() throws {
        let dbQueue = try makeQueue()
        let completed = Locked<[String]>([])
        let observation = try dbQueue.write { db in
            try db.observeCallback("reminderCompleted") { (id: UUID, title: String) in
                completed.mutate { $0.append(title) }
            }
        }
        defer { observation.cancel() }
        try dbQueue.write { db in
            let listID = try String.fetchOne(db, sql: "SELECT id FROM remindersLists")!
            try db.execute(sql: "INSERT INTO reminders(remindersListID, title) VALUES (?, 'Milk'), (?, 'Bread')",
                           arguments: [listID, listID])
        }
        try dbQueue.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Bread'")
                return .rollback
            }
            try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Milk'")
            try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Milk'")
        }
        #expect(completed.value == ["Milk"])
    }

    @Test func allRulesOnAPoolWriterOnly() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        do {
            let setup = try DatabaseQueue(path: path, configuration: installingConfiguration())
            try setup.write { db in try db.execute(sql: syncReadyRemindersSchema) }
        }
        var config = Configuration()
        config.prepareDatabase { db in
            try db.installSQLiteTriggers()
            if !db.configuration.readonly {
                for rule in ReminderRules.all { try rule.execute(db) }
            }
        }
        let dbPool = try DatabasePool(path: path, configuration: config)
        let (writerTriggers, titles) = try dbPool.write { db in
            try db.execute(sql: "INSERT INTO remindersLists(title) VALUES ('A'); DELETE FROM remindersLists")
            return (try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'")!,
                    try String.fetchAll(db, sql: "SELECT title FROM remindersLists"))
        }
        let readerTriggers = try dbPool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'")!
        }
        #expect(writerTriggers == 7, "six rules; the insert touch has a companion that keeps its stamp")
        #expect(readerTriggers == 0)
        #expect(titles == ["Reminders"])
    }
}
