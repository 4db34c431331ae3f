import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

/// The Reminders structs as an app declares them: @TriggerTable generates the
/// descriptions that ReminderTables.swift writes by hand.
/// GRDB's usual form for a key the database assigns, and a typed event
/// that wants it non-optional.
@TriggerTable("autoNotes") struct AutoNote: Codable, FetchableRecord, PersistableRecord { var id: UUID?; var title: String }
@CallbackEvent struct AutoNoteAdded: Sendable, Equatable { var id: UUID; var title: String }

@Suite struct UnwrappedOptionalTests {
    @Test func anOptionalKeyFeedsATypedEventThroughUnwrapped() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let trigger = AutoNote.createTempTrigger(after: .insert { new in
            AutoNoteAdded.callback(id: new.id.unwrapped(), title: new.title)
        })
        #expect(trigger.sql.contains("swift_callback('autoNoteAdded', \"new\".\"id\", \"new\".\"title\")"))
        let received = Locked<[AutoNoteAdded]>([])
        let observation = try dbQueue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE autoNotes(id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()), title TEXT NOT NULL)")
            try trigger.execute(db)
            return try db.observe(AutoNoteAdded.self) { event in received.mutate { $0.append(event) } }
        }
        defer { observation.cancel() }
        try dbQueue.write { db in try AutoNote(id: nil, title: "a").insert(db) }
        let id = try dbQueue.read { db in try String.fetchOne(db, sql: "SELECT id FROM autoNotes") }
        #expect(received.value.map(\.title) == ["a"] && received.value.first?.id.uuidString.lowercased() == id)
    }
}

enum Model {
    @TriggerTable("remindersLists")
    struct RemindersList: Codable {
        let id: UUID
        var color: Int
        var title: String
        var position: Int
    }

    @TriggerTable
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
        @TriggerIgnored var isSelected = false
        var isCompleted: Bool { status == 1 }
    }

    @TriggerTable
    struct Tag {
        let id: UUID
        var title: String
    }

    @TriggerTable
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

}

@Suite(.timeLimit(.minutes(1))) struct MacroRulesTests {
    @Test func theMacroGeneratesWhatWasWrittenByHand() {
        #expect(Model.Reminder.tableName == Reminder.tableName)
        #expect(Model.RemindersList.tableName == "remindersLists")
        #expect(Model.ReminderTag.tableName == "reminderTags")
        #expect(Model.Tag.tableName == "tags")
        #expect(Model.ReminderCompleted.callbackName == "reminderCompleted")
        // The README's @TriggerTable rules: same descriptions, same SQL, same derived names.
        #expect(ReadmeRules.rules.map(\.sql) == RuleSet(ReminderRules.all).rules.map(\.sql))
    }

    @Test func theSixRulesWithTableStructsAndATypedEvent() throws {
        var config = Configuration()
        config.prepareDatabase { db in
            try db.installSQLiteTriggers()
            try db.execute(sql: "PRAGMA recursive_triggers = ON")
        }
        let dbQueue = try DatabaseQueue(configuration: config)
        let completed = Locked<[String]>([])
        let observation = try dbQueue.write { db in
            try db.execute(sql: syncReadyRemindersSchema)
            for rule in ReadmeRules.rules { try rule.execute(db) }
            return try db.observe(ReadmeRules.ReminderCompleted.self) { event in
                completed.mutate { $0.append("\(event.id) \(event.title)") }
            }
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
        #expect(completed.value == ["\(UUID(uuidString: reminderID)!) Milk"])
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
