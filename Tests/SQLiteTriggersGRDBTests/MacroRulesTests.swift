import Foundation
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

/// The Reminders structs as an app declares them: @Table generates the
/// descriptions that ReminderTables.swift writes by hand.
enum Model {
    @Table("remindersLists")
    struct RemindersList: Codable {
        let id: UUID
        var color: Int
        var title: String
        var position: Int
    }

    @Table
    struct Reminder: Codable {
        let id: UUID
        var dueDate: Date?
        var isFlagged: Bool
        var notes: String
        var priority: Int?
        var remindersListID: UUID
        var title: String
        var createdAt: Date?
        var updatedAt: Date?
        var status: Int
        @Ephemeral var isSelected = false
        var isCompleted: Bool { status == 1 }
    }

    @Table
    struct Tag {
        let id: UUID
        var title: String
    }

    @Table
    struct ReminderTag {
        let id: UUID
        var reminderID: UUID
        var tagID: UUID
    }

    @CallbackEvent
    struct ReminderCompleted: Sendable, Equatable {
        var id: UUID
        var title: String
    }

    static let rules = [
        Reminder.afterInsertTouch(\.createdAt),
        Reminder.afterUpdateTouch(\.updatedAt),
        RemindersList.createTemporaryTrigger(after: .delete(when: { _ in !RemindersList.exists() }) { _ in
            RemindersList.insert { $0.title = "Reminders" }
        }),
        RemindersList.createTemporaryTrigger(after: .insert { new in
            RemindersList.update { $0.position = RemindersList.count() - 1 }.find(new.id)
        }),
        ReminderTag.createTemporaryTrigger(before: .insert { new in
            .raise(.abort, "Reminders can have a maximum of 5 tags.",
                   when: ReminderTag.count { $0.reminderID == new.reminderID } >= 5)
        }),
        Reminder.createTemporaryTrigger(after: .update(of: \.status, when: { old, new in new.status == 1 && old.status != 1 }) { _, new in
            ReminderCompleted.callback(id: new.id, title: new.title)
        }),
    ]
}

@Suite(.timeLimit(.minutes(1))) struct MacroRulesTests {
    @Test func theMacroGeneratesWhatWasWrittenByHand() {
        #expect(Model.Reminder.tableName == Reminder.tableName)
        #expect(Model.RemindersList.tableName == "remindersLists")
        #expect(Model.ReminderTag.tableName == "reminderTags")
        #expect(Model.Tag.tableName == "tags")
        #expect(Model.ReminderCompleted.callbackName == "reminderCompleted")
        // Same descriptions, same SQL, same derived names.
        #expect(Model.rules.map(\.sql) == ReminderRules.all.map(\.sql))
    }

    @Test func theSixRulesWithTableStructsAndATypedEvent() throws {
        var config = Configuration()
        config.prepareDatabase { db in
            try db.installSQLiteTriggers()
            try db.execute(sql: "PRAGMA recursive_triggers = ON")
        }
        let dbQueue = try DatabaseQueue(configuration: config)
        let completed = Locked<[Model.ReminderCompleted]>([])
        let observation = try dbQueue.write { db in
            try db.execute(sql: syncReadyRemindersSchema)
            for rule in Model.rules { try rule.execute(db) }
            return try db.observe(Model.ReminderCompleted.self) { event in completed.mutate { $0.append(event) } }
        }
        defer { observation.cancel() }
        let (reminderID, lists) = try dbQueue.write { db in
            try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000))
            try db.execute(sql: "INSERT INTO remindersLists(title) VALUES ('Personal'), ('Work')")
            let listID = try String.fetchOne(db, sql: "SELECT id FROM remindersLists WHERE title = 'Personal'")!
            try db.execute(sql: "INSERT INTO reminders(remindersListID, title) VALUES (?, 'Milk')", arguments: [listID])
            try db.execute(sql: "UPDATE reminders SET status = 1")
            return (try String.fetchOne(db, sql: "SELECT id FROM reminders")!,
                    try String.fetchAll(db, sql: "SELECT title || position FROM remindersLists ORDER BY position"))
        }
        #expect(lists == ["Personal0", "Work1"])
        #expect(completed.value == [Model.ReminderCompleted(id: UUID(uuidString: reminderID)!, title: "Milk")])
        let stamps = try dbQueue.read { db in try Row.fetchOne(db, sql: "SELECT createdAt, updatedAt FROM reminders")! }
        #expect(stamps["createdAt"] as String == "2023-11-14 22:13:20.000")
        #expect(stamps["updatedAt"] as String == "2023-11-14 22:13:20.000")
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in
                try db.execute(sql: "INSERT INTO tags(title) VALUES ('a'), ('b'), ('c'), ('d'), ('e'), ('f')")
                try db.execute(sql: "INSERT INTO reminderTags(reminderID, tagID) SELECT ?, id FROM tags", arguments: [reminderID])
            }
        }
        #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_TRIGGER)
        let emptied = try dbQueue.write { db in
            try db.execute(sql: "DELETE FROM remindersLists")
            return try String.fetchAll(db, sql: "SELECT title FROM remindersLists")
        }
        #expect(emptied == ["Reminders"])
    }

    @Test func typedEventsStreamAfterCommit() async throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let stream = try await dbQueue.write { db in try db.committedCallbacks(Model.ReminderCompleted.self) }
        try await dbQueue.write { db in
            try db.execute(sql: "SELECT swift_callback('reminderCompleted', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'Milk')")
        }
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == Model.ReminderCompleted(id: UUID(uuidString: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")!, title: "Milk"))
    }
}
