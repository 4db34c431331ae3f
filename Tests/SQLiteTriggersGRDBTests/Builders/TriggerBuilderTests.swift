import Foundation
import InlineSnapshotTesting
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

/// A table for watching what trigger bodies do.
enum Note: TableDescription {
    static let tableName = "notes"
    enum TriggerColumns {
        static let id = ColumnDescription<UUID>("id", primaryKey: true)
        static let text = ColumnDescription<String>("text")
        static let at = ColumnDescription<Date?>("at")
        static let count = ColumnDescription<Int>("count")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.text, TriggerColumns.at, TriggerColumns.count]
}

/// A view, for INSTEAD OF triggers.
enum ReminderTitle: TableDescription {
    static let tableName = "reminderTitles"
    enum TriggerColumns {
        static let id = ColumnDescription<UUID>("id", primaryKey: true)
        static let title = ColumnDescription<String>("title")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title]
}

/// Every construct of the builders: the SQL it generates, then what it does.
@Suite struct TriggerBuilderTests {
    let dbQueue: DatabaseQueue

    init() throws {
        dbQueue = try makeRemindersQueue("""
            CREATE VIEW reminderTitles AS SELECT id, title FROM reminders;
            INSERT INTO remindersLists(id, title) VALUES ('00000000-0000-4000-8000-000000000001', 'Personal');
            """)
    }

    func insertReminder(_ db: Database, title: String, priority: Int? = nil, notes: String = "") throws {
        try db.execute(sql: "INSERT INTO reminders(remindersListID, title, priority, notes) VALUES ('00000000-0000-4000-8000-000000000001', ?, ?, ?)",
                       arguments: [title, priority, notes])
    }

    func notes(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT text FROM notes ORDER BY rowid")
    }

    @Test func comparisonsLogicAndArithmetic() throws {
        let trigger = Reminder.createTempTrigger(after: .insert(when: { new in
            (new.priority == 1 || new.priority > 2) && !(new.title == "skip") && coalesce(new.priority, 0) * 2 + 1 >= 3
        }) { new in
            Note.insert { $0.text = new.title }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_8f5d445cb5612be2"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            WHEN ((("new"."priority" = 1) OR ("new"."priority" > 2)) AND (NOT ("new"."title" = 'skip'))) AND (((coalesce("new"."priority", 0) * 2) + 1) >= 3)
            BEGIN
              INSERT INTO "notes" ("text")
              VALUES ("new"."title");
            END
            """
        }
        let seen = try dbQueue.write { db in
            try trigger.execute(db)
            for (title, priority) in [("one", 1), ("two", 2), ("three", 3), ("skip", 3)] as [(String, Int?)] {
                try insertReminder(db, title: title, priority: priority)
            }
            try insertReminder(db, title: "none", priority: nil)
            return try notes(db)
        }
        #expect(seen == ["one", "three"])
    }

    @Test func nullTestsInLikeAndIs() throws {
        let trigger = Reminder.createTempTrigger(after: .insert(when: { new in
            (new.priority.isNull && new.title.like("%milk%")) || (new.priority.isNotNull && new.priority.in([7, 8]))
                || new.notes.is("same")
        }) { new in
            Note.insert { $0.text = new.title }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_707417bf8253a908"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            WHEN ((("new"."priority" IS NULL) AND ("new"."title" LIKE '%milk%')) OR (("new"."priority" IS NOT NULL) AND ("new"."priority" IN (7, 8)))) OR ("new"."notes" IS 'same')
            BEGIN
              INSERT INTO "notes" ("text")
              VALUES ("new"."title");
            END
            """
        }
        let seen = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "Oat MILK")
            try insertReminder(db, title: "bread")
            try insertReminder(db, title: "eight", priority: 8)
            try insertReminder(db, title: "nine", priority: 9)
            try insertReminder(db, title: "noted", priority: 1, notes: "same")
            return try notes(db)
        }
        #expect(seen == ["Oat MILK", "eight", "noted"])
    }

    @Test func subqueriesCountAndExists() throws {
        let trigger = Reminder.createTempTrigger(after: .insert(when: { new in
            Reminder.exists { $0.title == new.title && $0.id != new.id }
        }) { new in
            Note.insert { $0.text = new.title; $0.count = Reminder.count { $0.title == new.title } }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_b2658a136015c1bf"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            WHEN EXISTS (SELECT 1 FROM "reminders" WHERE ("reminders"."title" = "new"."title") AND ("reminders"."id" <> "new"."id"))
            BEGIN
              INSERT INTO "notes" ("text", "count")
              VALUES ("new"."title", (SELECT count(*) FROM "reminders" WHERE "reminders"."title" = "new"."title"));
            END
            """
        }
        let counts = try dbQueue.write { db in
            try trigger.execute(db)
            for title in ["a", "b", "a", "a"] { try insertReminder(db, title: title) }
            return try Int.fetchAll(db, sql: "SELECT count FROM notes ORDER BY rowid")
        }
        #expect(counts == [2, 3])
    }

    @Test func ourFunctionsAtFireTime() throws {
        let trigger = Reminder.createTempTrigger(after: .insert { new in
            Note.insert { $0.id = .uuidv7; $0.text = new.title + " at " + TypedSQL<String>(unchecked: "datetime_subsec()"); $0.at = .now }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_c3529a2bff6de929"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              INSERT INTO "notes" ("id", "text", "at")
              VALUES (uuidv7(), ("new"."title" || ' at ') || (datetime_subsec()), datetime_subsec());
            END
            """
        }
        let row = try dbQueue.write { db in
            try trigger.execute(db)
            try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000.5))
            try insertReminder(db, title: "Milk")
            return try Row.fetchOne(db, sql: "SELECT uuid_version(id) AS version, text, at FROM notes")!
        }
        #expect(row["version"] as Int == 7)
        #expect(row["text"] as String == "Milk at 2023-11-14 22:13:20.500")
        #expect(row["at"] as String == "2023-11-14 22:13:20.500")
    }

    @Test func insertFromASelectUpdateAndDelete() throws {
        let trigger = Reminder.createTempTrigger(after: .update(of: \.status) { old, new in
            Note.insert(from: Reminder.self, where: { $0.status == 1 }) { row, reminder in row.text = reminder.title }
            Note.update { $0.count = $0.count + 10 }.where { $0.text == new.title }
            Note.delete { $0.text == "gone" }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_update_of_1efc49556d73ec91"
            AFTER UPDATE OF "status" ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              INSERT INTO "notes" ("text")
              SELECT "reminders"."title"
              FROM "reminders"
              WHERE "reminders"."status" = 1;
              UPDATE "notes"
              SET "count" = "count" + 10
              WHERE "notes"."text" = "new"."title";
              DELETE FROM "notes"
              WHERE "notes"."text" = 'gone';
            END
            """
        }
        let result = try dbQueue.write { db in
            try trigger.execute(db)
            try db.execute(sql: "INSERT INTO notes(text) VALUES ('gone')")
            try insertReminder(db, title: "Milk")
            try insertReminder(db, title: "Bread")
            try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Milk'")
            return try Row.fetchAll(db, sql: "SELECT text, count FROM notes ORDER BY rowid").map { "\($0["text"] as String) \($0["count"] as Int)" }
        }
        #expect(result == ["Milk 10"])
    }

    @Test func updateFindUsesThePrimaryKey() throws {
        let trigger = Reminder.createTempTrigger(after: .update(of: \.status) { _, new in
            Reminder.update { $0.isFlagged = true }.find(new.id)
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_update_of_bdbd0336b038118e"
            AFTER UPDATE OF "status" ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              UPDATE "reminders"
              SET "isFlagged" = 1
              WHERE "reminders"."id" = "new"."id";
            END
            """
        }
        let flagged = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "a")
            try insertReminder(db, title: "b")
            try db.execute(sql: "UPDATE reminders SET status = 2 WHERE title = 'a'")
            return try String.fetchAll(db, sql: "SELECT title FROM reminders WHERE isFlagged")
        }
        #expect(flagged == ["a"])
    }

    @Test func raiseActions() throws {
        let fail = Note.createTempTrigger(before: .insert { new in
            .raise(.fail, "no empty notes", when: new.text == "")
        })
        let ignore = Note.createTempTrigger(before: .insert(when: { new in new.text == "ignored" }) { _ in
            .raise(.ignore)
        })
        let rollback = Note.createTempTrigger(before: .insert(when: { new in new.text == "rollback" }) { _ in
            .raise(.rollback, "rolled back")
        })
        assertInlineSnapshot(of: [fail.sql, ignore.sql, rollback.sql].joined(separator: "\n"), as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "notes_before_insert_6776e57f09981a0a"
            BEFORE INSERT ON "main"."notes"
            FOR EACH ROW
            BEGIN
              SELECT RAISE(FAIL, 'no empty notes')
              WHERE "new"."text" = '';
            END
            CREATE TEMP TRIGGER IF NOT EXISTS "notes_before_insert_0363ca547d764b5a"
            BEFORE INSERT ON "main"."notes"
            FOR EACH ROW
            WHEN "new"."text" = 'ignored'
            BEGIN
              SELECT RAISE(IGNORE);
            END
            CREATE TEMP TRIGGER IF NOT EXISTS "notes_before_insert_230df02955fdc723"
            BEFORE INSERT ON "main"."notes"
            FOR EACH ROW
            WHEN "new"."text" = 'rollback'
            BEGIN
              SELECT RAISE(ROLLBACK, 'rolled back');
            END
            """
        }
        try dbQueue.writeWithoutTransaction { db in
            for trigger in [fail, ignore, rollback] { try trigger.execute(db) }
            let failure = try #require(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO notes(text) VALUES ('kept'), (''), ('after')")
            }
            #expect(failure.message == "no empty notes")
            #expect(try notes(db) == ["kept"], "FAIL keeps the rows before the failure")
            try db.execute(sql: "INSERT INTO notes(text) VALUES ('ignored')")
            #expect(try notes(db) == ["kept"])
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "INSERT INTO notes(text) VALUES ('in transaction')")
            #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO notes(text) VALUES ('rollback')") }
            #expect(!db.isInsideTransaction, "ROLLBACK ends the transaction")
            #expect(try notes(db) == ["kept"])
        }
    }

    @Test func insteadOfOnAView() throws {
        let trigger = ReminderTitle.createTempTrigger(insteadOf: .update(of: \.title) { old, new in
            Reminder.update { $0.title = new.title }.find(old.id)
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminderTitles_instead_of_update_of_3c68a5195921131e"
            INSTEAD OF UPDATE OF "title" ON "reminderTitles"
            FOR EACH ROW
            BEGIN
              UPDATE "reminders"
              SET "title" = "new"."title"
              WHERE "reminders"."id" = "old"."id";
            END
            """
        }
        let titles = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "old")
            try db.execute(sql: "UPDATE reminderTitles SET title = 'new'")
            return try String.fetchAll(db, sql: "SELECT title FROM reminders")
        }
        #expect(titles == ["new"])
    }

    @Test func callbacksCarryTypedValues() throws {
        let trigger = Reminder.createTempTrigger(after: .delete { old in
            .callback("reminderDeleted", old.id, old.title, old.priority)
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_delete_8211084441b32be3"
            AFTER DELETE ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              SELECT swift_callback('reminderDeleted', "old"."id", "old"."title", "old"."priority");
            END
            """
        }
        let deleted = Locked<[String]>([])
        try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "Milk", priority: 2)
        }
        let observation = try dbQueue.write { db in
            try db.observeCallback("reminderDeleted") { (id: UUID, title: String, priority: Int?) in
                deleted.mutate { $0.append("\(title) \(priority ?? 0)") }
            }
        }
        defer { observation.cancel() }
        try dbQueue.write { db in try db.execute(sql: "DELETE FROM reminders") }
        #expect(deleted.value == ["Milk 2"])
    }

    @Test func namesAreDerivedStableAndDistinct() throws {
        let touch = Reminder.afterUpdateTouch(\.updatedAt)
        let again = Reminder.afterUpdateTouch(\.updatedAt)
        let other = Reminder.afterUpdateTouch { $0.notes = "touched" }
        let named = Reminder.createTempTrigger("my trigger", ifNotExists: true, after: .insert { _ in Note.insert { $0.text = "x" } })
        let strict = Reminder.createTempTrigger("strict", after: .insert { _ in Note.insert { $0.text = "x" } })
        assertInlineSnapshot(of: [touch.name, other.name, named.name, strict.sql.components(separatedBy: "\n")[0],
                                  named.sql.components(separatedBy: "\n")[0], touch.drop().sql].joined(separator: "\n"), as: .lines) {
            """
            reminders_after_update_touch_b94e4cf5227f5603
            reminders_after_update_touch_ef8240e23b44ace9
            my trigger
            CREATE TEMP TRIGGER "strict"
            CREATE TEMP TRIGGER IF NOT EXISTS "my trigger"
            DROP TRIGGER IF EXISTS "temp"."reminders_after_update_touch_b94e4cf5227f5603"
            """
        }
        #expect(touch.name == again.name && touch.sql == again.sql)
        #expect(touch.name != other.name)
        let (count, afterDrop) = try dbQueue.write { db in
            try touch.execute(db)
            try again.execute(db)           // idempotent
            try other.execute(db)
            try named.execute(db)
            try named.execute(db)           // IF NOT EXISTS
            try strict.execute(db)
            #expect(throws: DatabaseError.self) { try strict.execute(db) }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'")!
            try touch.drop().execute(db)
            try touch.drop().execute(db)    // IF EXISTS
            return (count, try String.fetchAll(db, sql: "SELECT name FROM sqlite_temp_master WHERE type = 'trigger' ORDER BY name"))
        }
        #expect(count == 4)
        #expect(afterDrop == [other.name, named.name, strict.name].sorted())
    }

    @Test func literalsAreInlinedSafely() throws {
        let uuid = UUID(uuidString: "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11")!
        let trigger = Reminder.createTempTrigger(after: .insert { new in
            Note.insert { $0.text = "it's \"quoted\""; $0.count = .value(Int.max) }
            Note.insert { $0.text = .value("tab\tnewline\nend") ; $0.count = TypedSQL<Int>(unchecked: "length(\(Data([0, 255]).sqlLiteral))") }
            Reminder.update { $0.isFlagged = true; $0.remindersListID = .value(uuid) }.where { $0.id == new.id && $0.priority.isNull }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_41f6505c9110a5af"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              INSERT INTO "notes" ("text", "count")
              VALUES ('it''s "quoted"', 9223372036854775807);
              INSERT INTO "notes" ("text", "count")
              VALUES ('tab	newline
            end', length(X'00FF'));
              UPDATE "reminders"
              SET "isFlagged" = 1, "remindersListID" = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
              WHERE ("reminders"."id" = "new"."id") AND ("reminders"."priority" IS NULL);
            END
            """
        }
        let (texts, counts, flagged) = try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO remindersLists(id, title) VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'Other')")
            try trigger.execute(db)
            try insertReminder(db, title: "Milk")
            return (try notes(db), try Int.fetchAll(db, sql: "SELECT count FROM notes ORDER BY rowid"),
                    try Row.fetchOne(db, sql: "SELECT isFlagged, remindersListID FROM reminders")!)
        }
        #expect(texts == ["it's \"quoted\"", "tab\tnewline\nend"])
        #expect(counts == [Int.max, 2])
        #expect(flagged["isFlagged"] as Bool == true)
        #expect(flagged["remindersListID"] as String == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
    }

    @Test func escapeHatches() throws {
        let trigger = Reminder.createTempTrigger(after: .insert(when: { new in
            TypedSQL<Int>(unchecked: "length(\"new\".\"title\")") > 3
        }) { _ in
            TriggerStatement(unchecked: "INSERT INTO notes(text) VALUES ('long title')")
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_76ef0c3994e21a0e"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            WHEN (length("new"."title")) > 3
            BEGIN
              INSERT INTO notes(text) VALUES ('long title');
            END
            """
        }
        let seen = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "Tea")
            try insertReminder(db, title: "Coffee")
            return try notes(db)
        }
        #expect(seen == ["long title"])
    }
}

/// A table whose names need quoting.
enum Weird: TableDescription {
    static let tableName = "order"
    enum TriggerColumns {
        static let quoted = ColumnDescription<String>("we\"ird")
        static let keyword = ColumnDescription<Int>("select")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.quoted, TriggerColumns.keyword]
}

@Suite struct TriggerEdgeCaseTests {
    @Test func columnsNamedWithQuotesAndKeywords() throws {
        let trigger = Weird.createTempTrigger(after: .insert(when: { new in new.keyword == 1 }) { new in
            Weird.insert { $0.quoted = new.quoted + " again"; $0.keyword = new.keyword + 1 }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "order_after_insert_54332934608db894"
            AFTER INSERT ON "main"."order"
            FOR EACH ROW
            WHEN "new"."select" = 1
            BEGIN
              INSERT INTO "order" ("we""ird", "select")
              VALUES ("new"."we""ird" || ' again', "new"."select" + 1);
            END
            """
        }
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let rows = try dbQueue.write { db in
            try db.execute(sql: #"CREATE TABLE "order"("we""ird" TEXT, "select" INTEGER)"#)
            try trigger.execute(db)
            try db.execute(sql: #"INSERT INTO "order" VALUES ('hi', 1)"#)
            return try Row.fetchAll(db, sql: #"SELECT * FROM "order" ORDER BY "select""#).map { "\($0[0] as String) \($0[1] as Int)" }
        }
        #expect(rows == ["hi 1", "hi again 2"])
    }

    @TriggerTable("imports") struct Imported { var rowid: String; var title: String; var updatedAt: Date? }
    @TriggerTable("hidden") struct AllHidden { let id: String; var rowid: Int; var _rowid_: Int; var oid: Int; var at: Date? }

    /// A column named rowid hides the rowid: touch rules find their row by
    /// `_rowid_` then, or by the primary key when every name is taken.
    @Test func touchRulesOnTablesWhoseColumnsHideTheRowid() throws {
        let touch = Imported.afterUpdateTouch(\.updatedAt)
        #expect(touch.sql.contains(#"WHERE "_rowid_" = "new"."_rowid_""#))
        let hidden = AllHidden.afterUpdateTouch(\.at)
        #expect(hidden.sql.contains(#"WHERE "id" = "new"."id""#))
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let rows = try dbQueue.write { db in
            try db.execute(sql: """
                CREATE TABLE imports(rowid TEXT, title TEXT, updatedAt TEXT);
                CREATE TABLE hidden(id TEXT PRIMARY KEY NOT NULL, rowid, _rowid_, oid, at TEXT);
                """)
            try touch.execute(db)
            try hidden.execute(db)
            try db.pinClock(to: Date(timeIntervalSince1970: 0))
            // Two rows share the column "rowid": only the updated one is stamped.
            try db.execute(sql: "INSERT INTO imports VALUES ('a', 'first', NULL), ('a', 'second', NULL)")
            try db.execute(sql: "UPDATE imports SET title = 'first!' WHERE title = 'first'")
            try db.execute(sql: "INSERT INTO hidden VALUES ('k', 1, 1, 1, NULL), ('l', 1, 1, 1, NULL)")
            try db.execute(sql: "UPDATE hidden SET oid = 2 WHERE id = 'k'")
            return try String.fetchAll(db, sql: """
                SELECT title || ' ' || ifnull(updatedAt, '-') FROM imports
                UNION ALL SELECT id || ' ' || ifnull(at, '-') FROM hidden
                """)
        }
        #expect(rows == ["first! 1970-01-01 00:00:00.000", "second -", "k 1970-01-01 00:00:00.000", "l -"])
    }

    @Test func aClosureTouchWithACounterTerminatesUnderRecursiveTriggers() throws {
        var config = Configuration()
        config.prepareDatabase { db in
            try db.installSQLiteTriggers()
            try db.execute(sql: "PRAGMA recursive_triggers = ON")
        }
        let dbQueue = try DatabaseQueue(configuration: config)
        let touch = Note.afterUpdateTouch { $0.count = $0.count + 1; $0.at = .now }
        assertInlineSnapshot(of: touch.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "notes_after_update_touch_1657e88edd53e88b"
            AFTER UPDATE ON "main"."notes"
            FOR EACH ROW
            WHEN "new"."count" IS "old"."count" AND "new"."at" IS "old"."at"
            BEGIN
              UPDATE "notes"
              SET "count" = "count" + 1, "at" = datetime_subsec()
              WHERE "rowid" = "new"."rowid" AND ("count" IS NOT ("count" + 1) OR "at" IS NOT datetime_subsec());
            END
            """
        }
        let row = try dbQueue.write { db in
            try db.execute(sql: "CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL DEFAULT (uuid()), text TEXT NOT NULL DEFAULT '', at TEXT, count INTEGER NOT NULL DEFAULT 0)")
            try touch.execute(db)
            try db.pinClock(to: Date(timeIntervalSince1970: 0))
            try db.execute(sql: "INSERT INTO notes(text) VALUES ('a')")
            try db.execute(sql: "UPDATE notes SET text = 'b'")
            try db.execute(sql: "UPDATE notes SET text = 'c'")
            try db.execute(sql: "UPDATE notes SET text = 'd', count = 100")   // explicit: kept, no touch
            return try Row.fetchOne(db, sql: "SELECT count, at FROM notes")!
        }
        #expect(row["count"] as Int == 100)
        #expect(row["at"] as String == "1970-01-01 00:00:00.000")
    }
}
