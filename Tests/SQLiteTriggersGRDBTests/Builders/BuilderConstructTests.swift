import Foundation
import InlineSnapshotTesting
import GRDB
import SQLiteTriggersGRDB
import Testing

/// The builders' expressions and statements beyond the basics: for each,
/// the SQL it generates, then what it does on a real database.
@Suite struct BuilderConstructTests {
    let dbQueue: DatabaseQueue

    init() throws {
        dbQueue = try makeRemindersQueue("""
            INSERT INTO remindersLists(id, title, position) VALUES ('00000000-0000-4000-8000-000000000001', 'Personal', 0)
            """)
    }

    func insertReminder(_ db: Database, id: String? = nil, title: String, priority: Int? = nil, notes: String = "",
                        status: Int = 0, dueDate: String? = nil) throws {
        try db.execute(sql: """
            INSERT INTO reminders(id, remindersListID, title, priority, notes, status, dueDate)
            VALUES (coalesce(?, uuid()), '00000000-0000-4000-8000-000000000001', ?, ?, ?, ?, ?)
            """, arguments: [id, title, priority, notes, status, dueDate])
    }

    func notes(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT text FROM notes ORDER BY rowid")
    }

    func counts(_ db: Database) throws -> [Int] {
        try Int.fetchAll(db, sql: "SELECT count FROM notes ORDER BY rowid")
    }

    @Test func caseExpressions() throws {
        let trigger = Reminder.createTempTrigger(after: .insert { new in
            Note.insert {
                $0.text = SQLCase(new.status).when(0, then: "open").when(1, then: "done").else("other")
                $0.count = SQLCase().when(coalesce(new.priority, 0) > 2, then: 1).else(0)
            }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_2b8b3aa3892b980f"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              INSERT INTO "notes" ("text", "count")
              VALUES (CASE "new"."status" WHEN 0 THEN 'open' WHEN 1 THEN 'done' ELSE 'other' END, CASE WHEN coalesce("new"."priority", 0) > 2 THEN 1 ELSE 0 END);
            END
            """
        }
        let (texts, flags) = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "a", priority: 3, status: 0)
            try insertReminder(db, title: "b", status: 1)
            try insertReminder(db, title: "c", priority: 1, status: 5)
            return (try notes(db), try counts(db))
        }
        #expect(texts == ["open", "done", "other"])
        #expect(flags == [1, 0, 0])
    }

    @Test func textFunctionsRangesAndPatterns() throws {
        let trigger = Reminder.createTempTrigger(after: .insert(when: { new in
            new.title.glob("*!") || coalesce(new.priority, 0).between(1, and: 3)
        }) { new in
            Note.insert { $0.text = new.title.trim().lower() + "|" + new.title.upper().substr(1, 3) + "|" + new.title.replace("!", "?") }
            Note.insert { $0.text = new.title.typeof() + "|" + iif(new.isFlagged, "flagged", "plain"); $0.count = new.title.length() }
            Note.insert { $0.text = coalesce(new.notes.nullif(""), "no notes"); $0.count = new.title.instr("l") }
            Note.insert { $0.count = max(coalesce(new.priority, 0), 2, 1) * 100 + min(coalesce(new.priority, 0), 2) * 10 + (ifnull(new.priority, 0) - 5).abs() }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_1b15c266764ecfb2"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            WHEN ("new"."title" GLOB '*!') OR (coalesce("new"."priority", 0) BETWEEN 1 AND 3)
            BEGIN
              INSERT INTO "notes" ("text")
              VALUES ((((lower(trim("new"."title")) || '|') || substr(upper("new"."title"), 1, 3)) || '|') || replace("new"."title", '!', '?'));
              INSERT INTO "notes" ("text", "count")
              VALUES ((typeof("new"."title") || '|') || iif("new"."isFlagged", 'flagged', 'plain'), length("new"."title"));
              INSERT INTO "notes" ("text", "count")
              VALUES (coalesce(nullif("new"."notes", ''), 'no notes'), instr("new"."title", 'l'));
              INSERT INTO "notes" ("count")
              VALUES (((max(coalesce("new"."priority", 0), 2, 1) * 100) + (min(coalesce("new"."priority", 0), 2) * 10)) + abs(ifnull("new"."priority", 0) - 5));
            END
            """
        }
        let (texts, numbers) = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "  Hello!", notes: "")
            try insertReminder(db, title: "quiet", priority: 7)         // neither GLOB nor BETWEEN: no notes
            return (try notes(db), try counts(db))
        }
        #expect(texts == ["hello!|  H|  Hello?", "text|plain", "no notes", ""])
        #expect(numbers == [0, 8, 5, 205])
    }

    @Test func numbersRound() throws {
        let trigger = Reminder.createTempTrigger(after: .insert { new in
            Note.insert { $0.text = TypedSQL<Double>(sql: "\(coalesce(new.priority, 0)) / 3.0").round(2).typeof() }
            Note.insert { $0.count = TypedSQL<Int>(sql: "CAST(\(TypedSQL<Double>(sql: "\(coalesce(new.priority, 0)) / 3.0").round(2)) * 100 AS INTEGER)") }
        })
        let results = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "x", priority: 2)
            return (try notes(db), try counts(db))
        }
        #expect(results.0 == ["real", ""])
        #expect(results.1 == [0, 67])
    }

    @Test func json() throws {
        let trigger = Reminder.createTempTrigger(after: .insert { new in
            Note.insert { $0.text = jsonObject(["title": new.title, "priority": new.priority, "flagged": new.isFlagged]) }
            Note.insert { $0.text = jsonArray(new.title, 1, "two") }
            Note.insert { $0.text = coalesce(new.notes.jsonExtract("$.city", as: String.self), "nowhere") }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_9867e71c0dfd9953"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              INSERT INTO "notes" ("text")
              VALUES (json_object('title', "new"."title", 'priority', "new"."priority", 'flagged', "new"."isFlagged"));
              INSERT INTO "notes" ("text")
              VALUES (json_array("new"."title", 1, 'two'));
              INSERT INTO "notes" ("text")
              VALUES (coalesce(json_extract("new"."notes", '$.city'), 'nowhere'));
            END
            """
        }
        let texts = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "Trip", priority: nil, notes: #"{"city": "Lyon"}"#)
            return try notes(db)
        }
        #expect(texts == [#"{"title":"Trip","priority":null,"flagged":0}"#, #"["Trip",1,"two"]"#, "Lyon"])
    }

    @Test func datesAndOurUUIDFunctions() throws {
        let trigger = Reminder.createTempTrigger(after: .insert { new in
            Note.insert { $0.text = coalesce(new.dueDate.modified("+1 day", "start of day"), .now).asText; $0.at = new.dueDate.modified("+90 minutes") }
            Note.insert { $0.text = coalesce(new.dueDate.strftime("%Y-%m"), ""); $0.count = TypedSQL<Int>(sql: "CAST(\(new.dueDate.unixepoch()) AS INTEGER)") }
            Note.insert { $0.text = coalesce(new.id.uuidText(), ""); $0.count = coalesce(new.id.uuidVersion(), 0) }
            Note.insert { $0.id = .uuidv7; $0.text = coalesce(TypedSQL<UUID>(sql: "uuidv7()").uuidv7Date(), .now).asText }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_5923acf8812a1ac5"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              INSERT INTO "notes" ("text", "at")
              VALUES (coalesce(datetime_subsec("new"."dueDate", '+1 day', 'start of day'), datetime_subsec()), datetime_subsec("new"."dueDate", '+90 minutes'));
              INSERT INTO "notes" ("text", "count")
              VALUES (coalesce(strftime('%Y-%m', "new"."dueDate"), ''), CAST(unixepoch_subsec("new"."dueDate") AS INTEGER));
              INSERT INTO "notes" ("text", "count")
              VALUES (coalesce(uuid_str("new"."id"), ''), coalesce(uuid_version("new"."id"), 0));
              INSERT INTO "notes" ("id", "text")
              VALUES (uuidv7(), coalesce(uuidv7_datetime(uuidv7()), datetime_subsec()));
            END
            """
        }
        let (texts, numbers, at) = try dbQueue.write { db in
            try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000))
            try trigger.execute(db)
            try insertReminder(db, id: "0189f7a0-0000-7000-8000-000000000000", title: "x", dueDate: "2024-02-28 10:30:00.000")
            return (try notes(db), try counts(db), try String.fetchOne(db, sql: "SELECT at FROM notes ORDER BY rowid"))
        }
        #expect(texts == ["2024-02-29 00:00:00.000", "2024-02", "0189f7a0-0000-7000-8000-000000000000", "2023-11-14 22:13:20.000"])
        #expect(numbers == [0, 1_709_116_200, 7, 0])
        #expect(at == "2024-02-28 12:00:00.000")
    }

    @Test func subqueriesAggregatesAndMembership() throws {
        let trigger = RemindersList.createTempTrigger(after: .insert { new in
            RemindersList.update { $0.position = RemindersList.aggregate { coalesce($0.position.max(), -1) + 1 } }.find(new.id)
            Note.insert {
                $0.text = coalesce(RemindersList.select { $0.title }.where { $0.id != new.id }.order(by: { $0.position }, descending: true).limit(1).value, "none")
                $0.count = Reminder.aggregate({ $0.title.count() }, where: { $0.remindersListID.in(RemindersList.select { $0.id }.where { $0.title == "Personal" }) })
            }
            Note.insert(from: Reminder.self, where: { $0.id.notIn(ReminderTag.select { $0.reminderID }) }) { note, reminder in note.text = reminder.title }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "remindersLists_after_insert_afbe860cadf78def"
            AFTER INSERT ON "main"."remindersLists"
            FOR EACH ROW
            BEGIN
              UPDATE "remindersLists"
              SET "position" = (SELECT coalesce(max("remindersLists"."position"), -1) + 1 FROM "remindersLists")
              WHERE "remindersLists"."id" = "new"."id";
              INSERT INTO "notes" ("text", "count")
              VALUES (coalesce((SELECT "remindersLists"."title" FROM "remindersLists" WHERE "remindersLists"."id" <> "new"."id" ORDER BY "remindersLists"."position" DESC LIMIT 1), 'none'), (SELECT count("reminders"."title") FROM "reminders" WHERE "reminders"."remindersListID" IN (SELECT "remindersLists"."id" FROM "remindersLists" WHERE "remindersLists"."title" = 'Personal')));
              INSERT INTO "notes" ("text")
              SELECT "reminders"."title"
              FROM "reminders"
              WHERE "reminders"."id" NOT IN (SELECT "reminderTags"."reminderID" FROM "reminderTags");
            END
            """
        }
        let (positions, texts, numbers) = try dbQueue.write { db in
            try insertReminder(db, id: "00000000-0000-4000-8000-0000000000a1", title: "tagged")
            try insertReminder(db, title: "untagged")
            try db.execute(sql: """
                INSERT INTO tags(id, title) VALUES ('00000000-0000-4000-8000-0000000000f1', 'red');
                INSERT INTO reminderTags(reminderID, tagID) VALUES ('00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-0000000000f1');
                """)
            try trigger.execute(db)
            try db.execute(sql: "INSERT INTO remindersLists(title) VALUES ('Work')")
            return (try Int.fetchAll(db, sql: "SELECT position FROM remindersLists ORDER BY position"), try notes(db), try counts(db))
        }
        #expect(positions == [0, 1], "the new list goes last")
        #expect(texts == ["Personal", "untagged"])
        #expect(numbers == [2, 0])
    }

    @Test func insertOrAndUpserts() throws {
        let trigger = Reminder.createTempTrigger(after: .insert { new in
            Tag.insert(or: .ignore) { $0.id = new.id; $0.title = "first" }
            Tag.insert(or: .ignore) { $0.id = new.id; $0.title = "ignored" }
            Note.insert { $0.id = new.id; $0.text = new.title; $0.count = 1 }
                .onConflict(\.id) { row, excluded in row.count = row.count + excluded.count; row.text = excluded.text }
            Note.insert(from: Reminder.self, where: { $0.id == new.id }) { note, reminder in note.id = reminder.id; note.text = "never" }
                .onConflictDoNothing()
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_881d6369c6ed4f01"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              INSERT OR IGNORE INTO "tags" ("id", "title")
              VALUES ("new"."id", 'first');
              INSERT OR IGNORE INTO "tags" ("id", "title")
              VALUES ("new"."id", 'ignored');
              INSERT INTO "notes" ("id", "text", "count")
              VALUES ("new"."id", "new"."title", 1)
              ON CONFLICT ("id") DO UPDATE
              SET "count" = "count" + "excluded"."count", "text" = "excluded"."text";
              INSERT INTO "notes" ("id", "text")
              SELECT "reminders"."id", 'never'
              FROM "reminders"
              WHERE "reminders"."id" = "new"."id"
              ON CONFLICT DO NOTHING;
            END
            """
        }
        let (tags, rows) = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, id: "00000000-0000-4000-8000-0000000000a1", title: "one")
            try db.execute(sql: "DELETE FROM tags")
            try db.execute(sql: "DELETE FROM reminders")
            try insertReminder(db, id: "00000000-0000-4000-8000-0000000000a1", title: "again")
            return (try String.fetchAll(db, sql: "SELECT title FROM tags"), try Row.fetchAll(db, sql: "SELECT text, count FROM notes"))
        }
        #expect(tags == ["first"])
        #expect(rows.map { [$0["text"] as String, "\($0["count"] as Int)"] } == [["again", "2"]], "upserted, and the SELECT upsert did nothing")
    }

    @Test func updateFromDeleteAndSelectStatements() throws {
        let trigger = RemindersList.createTempTrigger(after: .update(of: \.title) { _, new in
            Reminder.update(from: RemindersList.self, where: { reminder, list in
                reminder.remindersListID == list.id && list.id == new.id
            }) { reminder, list in reminder.notes = "in " + list.title }
            Note.delete { $0.text == new.title }
            Reminder.select { TypedSQL<Int?>(sql: "swift_callback('renamedListReminder', \($0.title))") }.where { $0.remindersListID == new.id }
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "remindersLists_after_update_of_a91ea3cc68f149c7"
            AFTER UPDATE OF "title" ON "main"."remindersLists"
            FOR EACH ROW
            BEGIN
              UPDATE "reminders"
              SET "notes" = 'in ' || "remindersLists"."title"
              FROM "remindersLists"
              WHERE ("reminders"."remindersListID" = "remindersLists"."id") AND ("remindersLists"."id" = "new"."id");
              DELETE FROM "notes"
              WHERE "notes"."text" = "new"."title";
              SELECT swift_callback('renamedListReminder', "reminders"."title")
              FROM "reminders"
              WHERE "reminders"."remindersListID" = "new"."id";
            END
            """
        }
        let heard = Locked<[String]>([])
        let observation = try dbQueue.write { db in
            try db.observeCallback("renamedListReminder") { (title: String) in heard.mutate { $0.append(title) } }
        }
        defer { observation.cancel() }
        let (reminderNotes, texts) = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "a")
            try insertReminder(db, title: "b")
            try db.execute(sql: "INSERT INTO notes(text) VALUES ('Home'), ('Kept')")
            try db.execute(sql: "UPDATE remindersLists SET title = 'Home'")
            return (try String.fetchAll(db, sql: "SELECT notes FROM reminders ORDER BY title"), try notes(db))
        }
        #expect(reminderNotes == ["in Home", "in Home"])
        #expect(texts == ["Kept"])
        #expect(heard.value.sorted() == ["a", "b"], "the SELECT called the function for each row")
    }

    @Test func touchesCompose() throws {
        let retitled = Reminder.createTempTrigger(after: .touch(of: \.title, when: { old, _ in old.status == 0 }) { $0.updatedAt = .now })
        let created = Reminder.createTempTrigger(after: .insertTouch(when: { new in new.status == 0 }) { $0.createdAt = .now })
        let parent = Reminder.createTempTrigger(after: .update(of: \.status) { _, new in
            RemindersList.touch { $0.title = "Changed" }.where { $0.id == new.remindersListID }
        })
        assertInlineSnapshot(of: retitled.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_update_of_touch_bc588da1305f0dcb"
            AFTER UPDATE OF "title" ON "main"."reminders"
            FOR EACH ROW
            WHEN ("new"."updatedAt" IS "old"."updatedAt") AND ("old"."status" = 0)
            BEGIN
              UPDATE "reminders"
              SET "updatedAt" = datetime_subsec()
              WHERE "rowid" = "new"."rowid" AND ("updatedAt" IS NOT datetime_subsec());
            END
            """
        }
        assertInlineSnapshot(of: parent.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_update_of_ba4e0bbaa1408671"
            AFTER UPDATE OF "status" ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              UPDATE "remindersLists"
              SET "title" = 'Changed'
              WHERE (("title" IS NOT 'Changed')) AND ("remindersLists"."id" = "new"."remindersListID");
            END
            """
        }
        let rows = try dbQueue.write { db in
            try db.execute(sql: "PRAGMA recursive_triggers = ON")
            try db.pinClock(to: Date(timeIntervalSince1970: 0))
            for trigger in [retitled, created, parent] { try trigger.execute(db) }
            try insertReminder(db, id: "00000000-0000-4000-8000-0000000000a1", title: "open")
            try insertReminder(db, id: "00000000-0000-4000-8000-0000000000a2", title: "closed", status: 1)
            try db.execute(sql: "UPDATE reminders SET notes = 'n'")                     // not the title: no touch
            try db.execute(sql: "UPDATE reminders SET title = title || '!'")           // a title: touches the open one
            try db.execute(sql: "UPDATE reminders SET status = 2")
            return try Row.fetchAll(db, sql: "SELECT createdAt, updatedAt FROM reminders ORDER BY title DESC")
        }
        #expect(rows.map { $0["createdAt"] as String? } == ["1970-01-01 00:00:00.000", nil])
        #expect(rows.map { $0["updatedAt"] as String? } == ["1970-01-01 00:00:00.000", nil])
        #expect(try dbQueue.read { db in try String.fetchOne(db, sql: "SELECT title FROM remindersLists") } == "Changed")
    }

    @Test func typedRawSQL() throws {
        let trigger = Reminder.createTempTrigger(after: .insert { new in
            Note.insert { $0.text = TypedSQL<String>(sql: "printf('%s (%d) %s', \(new.title), \(coalesce(new.priority, 0)), \("it's"))") }
            TriggerStatement(sql: "INSERT INTO \(Note.self) (\(Note.TriggerColumns.text)) VALUES (\(new.title + "!"))")
        })
        assertInlineSnapshot(of: trigger.sql, as: .lines) {
            """
            CREATE TEMP TRIGGER IF NOT EXISTS "reminders_after_insert_d55eb6c0c0969827"
            AFTER INSERT ON "main"."reminders"
            FOR EACH ROW
            BEGIN
              INSERT INTO "notes" ("text")
              VALUES (printf('%s (%d) %s', "new"."title", coalesce("new"."priority", 0), 'it''s'));
              INSERT INTO "notes" ("text") VALUES (("new"."title" || '!'));
            END
            """
        }
        let texts = try dbQueue.write { db in
            try trigger.execute(db)
            try insertReminder(db, title: "Milk", priority: 2)
            return try notes(db)
        }
        #expect(texts == ["Milk (2) it's", "Milk!"])
    }

    @Test func aTemporaryViewWithInsteadOfTriggers() throws {
        let view = OpenReminder.createTempView(from: Reminder.self, where: { $0.status == 0 }) { view, reminder in
            view.id = reminder.id
            view.title = reminder.title.upper()
        }
        let close = OpenReminder.createTempTrigger(insteadOf: .delete { old in
            Reminder.update { $0.status = 1 }.find(old.id)
        })
        assertInlineSnapshot(of: view.sql, as: .lines) {
            """
            CREATE TEMP VIEW IF NOT EXISTS "openReminders" ("id", "title") AS
            SELECT "reminders"."id", upper("reminders"."title")
            FROM "reminders"
            WHERE "reminders"."status" = 0
            """
        }
        let (titles, statuses) = try dbQueue.write { db in
            try view.execute(db)
            try close.execute(db)
            try insertReminder(db, title: "milk")
            try insertReminder(db, title: "bread")
            try db.execute(sql: "DELETE FROM openReminders WHERE title = 'MILK'")
            return (try String.fetchAll(db, sql: "SELECT title FROM openReminders"),
                    try Int.fetchAll(db, sql: "SELECT status FROM reminders ORDER BY title"))
        }
        #expect(titles == ["BREAD"])
        #expect(statuses == [0, 1])
    }

    @Test func aTempTableOfTheSameNameCannotCaptureATrigger() throws {
        let trigger = Reminder.createTempTrigger(after: .insert { new in Note.insert { $0.text = new.title } })
        let texts = try dbQueue.write { db in
            try db.execute(sql: "CREATE TEMP TABLE reminders(title TEXT)")
            try trigger.execute(db)
            try db.execute(sql: "INSERT INTO temp.reminders(title) VALUES ('shadow')")
            try db.execute(sql: """
                INSERT INTO main.reminders(remindersListID, title) VALUES ('00000000-0000-4000-8000-000000000001', 'real')
                """)
            return try notes(db)
        }
        #expect(texts == ["real"], "the trigger is on main.reminders")
    }
}

/// A TEMP view over open reminders.
enum OpenReminder: TableDescription {
    static let tableName = "openReminders"
    enum TriggerColumns {
        static let id = ColumnDescription<UUID>("id", primaryKey: true)
        static let title = ColumnDescription<String>("title")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title]
}

private extension TypedSQL where Value == Date {
    /// The date's stored text, to put it in a text column.
    var asText: TypedSQL<String> { TypedSQL<String>(sql: "\(self)") }
}
