import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

// The sync-ready Reminders schema of shared/SCENARIOS.md, described by hand
// (the @TriggerTable macro generates the same descriptions).

/// A GRDB record described by `@TriggerTable`, for the record, rule set and clock
/// tests; `choresSchema` creates its table.
@TriggerTable struct Chore: Codable, FetchableRecord, PersistableRecord, Equatable {
    var id: Int64
    var title: String
    var createdAt: Date?
    var updatedAt: Date?
}

let choresSchema = "CREATE TABLE chores(id INTEGER PRIMARY KEY, title TEXT NOT NULL, createdAt TEXT, updatedAt TEXT)"

enum RemindersList: TableDescription {
    static let tableName = "remindersLists"
    enum TriggerColumns {
        static let id = ColumnDescription<UUID>("id", primaryKey: true)
        static let color = ColumnDescription<Int>("color")
        static let title = ColumnDescription<String>("title")
        static let position = ColumnDescription<Int>("position")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.color, TriggerColumns.title, TriggerColumns.position]
}

enum Reminder: TableDescription {
    static let tableName = "reminders"
    enum TriggerColumns {
        static let id = ColumnDescription<UUID>("id", primaryKey: true)
        static let dueDate = ColumnDescription<Date?>("dueDate")
        static let isFlagged = ColumnDescription<Bool>("isFlagged")
        static let notes = ColumnDescription<String>("notes")
        static let priority = ColumnDescription<Int?>("priority")
        static let remindersListID = ColumnDescription<UUID>("remindersListID")
        static let title = ColumnDescription<String>("title")
        static let createdAt = ColumnDescription<Date?>("createdAt")
        static let updatedAt = ColumnDescription<Date?>("updatedAt")
        static let status = ColumnDescription<Int>("status")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.dueDate, TriggerColumns.isFlagged, TriggerColumns.notes, TriggerColumns.priority, TriggerColumns.remindersListID, TriggerColumns.title, TriggerColumns.createdAt, TriggerColumns.updatedAt, TriggerColumns.status]
}

enum Tag: TableDescription {
    static let tableName = "tags"
    enum TriggerColumns {
        static let id = ColumnDescription<UUID>("id", primaryKey: true)
        static let title = ColumnDescription<String>("title")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title]
}

enum ReminderTag: TableDescription {
    static let tableName = "reminderTags"
    enum TriggerColumns {
        static let id = ColumnDescription<UUID>("id", primaryKey: true)
        static let reminderID = ColumnDescription<UUID>("reminderID")
        static let tagID = ColumnDescription<UUID>("tagID")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.reminderID, TriggerColumns.tagID]
}

/// A queue with the Reminders schema, a `notes` table for watching what
/// trigger bodies do, and `extraSQL` (lists, views) run after them.
func makeRemindersQueue(_ extraSQL: String) throws -> DatabaseQueue {
    let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
    try dbQueue.write { db in
        try db.execute(sql: syncReadyRemindersSchema)
        try db.execute(sql: "CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL DEFAULT (uuid()), text TEXT NOT NULL DEFAULT '', at TEXT, count INTEGER NOT NULL DEFAULT 0)")
        try db.execute(sql: extraSQL)
    }
    return dbQueue
}

let syncReadyRemindersSchema = """
    CREATE TABLE "remindersLists" (
      "id" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()),
      "color" INTEGER NOT NULL DEFAULT 1251602431,
      "title" TEXT NOT NULL DEFAULT '',
      "position" INTEGER NOT NULL DEFAULT 0
    ) STRICT;
    CREATE TABLE "tags" (
      "id" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()),
      "title" TEXT NOT NULL DEFAULT '' CHECK(instr("title", ' ') = 0)
    ) STRICT;
    CREATE TABLE "reminders" (
      "id" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()),
      "dueDate" TEXT,
      "isFlagged" INTEGER NOT NULL DEFAULT 0,
      "notes" TEXT NOT NULL DEFAULT '',
      "priority" INTEGER,
      "remindersListID" TEXT NOT NULL REFERENCES "remindersLists"("id") ON DELETE CASCADE,
      "title" TEXT NOT NULL DEFAULT '',
      "createdAt" TEXT,
      "updatedAt" TEXT,
      "status" INTEGER NOT NULL DEFAULT 0
    ) STRICT;
    CREATE TABLE "reminderTags" (
      "id" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()),
      "reminderID" TEXT NOT NULL REFERENCES "reminders"("id") ON DELETE CASCADE,
      "tagID" TEXT NOT NULL REFERENCES "tags"("id") ON DELETE CASCADE
    ) STRICT;
    """

/// The six rules of shared/SCENARIOS.md, built with the typed API.
enum ReminderRules {
    static let stampCreatedAt = Reminder.afterInsertTouch(\.createdAt)
    static let stampUpdatedAt = Reminder.afterUpdateTouch(\.updatedAt)

    static let neverEmpty = RemindersList.createTempTrigger(after: .delete(when: { _ in !RemindersList.exists() }) { _ in
        RemindersList.insert { $0.title = "Reminders" }
    })

    static let newListsGoLast = RemindersList.createTempTrigger(after: .insert { new in
        RemindersList.update { $0.position = RemindersList.count() - 1 }.find(new.id)
    })

    static let atMostFiveTags = ReminderTag.createTempTrigger(before: .insert { new in
        .raise(.abort, "Reminders can have a maximum of 5 tags.",
               when: ReminderTag.count { $0.reminderID == new.reminderID } >= 5)
    })

    static let completionCallback = Reminder.createTempTrigger(after: .update(of: \.status, when: { old, new in
        new.status == 1 && old.status != 1
    }) { _, new in
        .callback("reminderCompleted", new.id, new.title)
    })

    static let all = [stampCreatedAt, stampUpdatedAt, neverEmpty, newListsGoLast, atMostFiveTags, completionCallback]
}
