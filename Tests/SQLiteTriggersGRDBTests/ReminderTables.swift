import Foundation
import SQLiteTriggersGRDB

// The sync-ready Reminders schema of shared/SCENARIOS.md, described by hand
// (the @Table macro generates the same descriptions).

enum RemindersList: TableDescription {
    static let tableName = "remindersLists"
    struct Columns {
        let id = TableColumn<UUID>("id", primaryKey: true)
        let color = TableColumn<Int>("color")
        let title = TableColumn<String>("title")
        let position = TableColumn<Int>("position")
    }
    static let columns = Columns()
}

enum Reminder: TableDescription {
    static let tableName = "reminders"
    struct Columns {
        let id = TableColumn<UUID>("id", primaryKey: true)
        let dueDate = TableColumn<Date?>("dueDate")
        let isFlagged = TableColumn<Bool>("isFlagged")
        let notes = TableColumn<String>("notes")
        let priority = TableColumn<Int?>("priority")
        let remindersListID = TableColumn<UUID>("remindersListID")
        let title = TableColumn<String>("title")
        let createdAt = TableColumn<Date?>("createdAt")
        let updatedAt = TableColumn<Date?>("updatedAt")
        let status = TableColumn<Int>("status")
    }
    static let columns = Columns()
}

enum Tag: TableDescription {
    static let tableName = "tags"
    struct Columns {
        let id = TableColumn<UUID>("id", primaryKey: true)
        let title = TableColumn<String>("title")
    }
    static let columns = Columns()
}

enum ReminderTag: TableDescription {
    static let tableName = "reminderTags"
    struct Columns {
        let id = TableColumn<UUID>("id", primaryKey: true)
        let reminderID = TableColumn<UUID>("reminderID")
        let tagID = TableColumn<UUID>("tagID")
    }
    static let columns = Columns()
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

    static let neverEmpty = RemindersList.createTemporaryTrigger(after: .delete(when: { _ in !RemindersList.exists() }) { _ in
        RemindersList.insert { $0.title = "Reminders" }
    })

    static let newListsGoLast = RemindersList.createTemporaryTrigger(after: .insert { new in
        RemindersList.update { $0.position = RemindersList.count() - 1 }.find(new.id)
    })

    static let atMostFiveTags = ReminderTag.createTemporaryTrigger(before: .insert { new in
        .raise(.abort, "Reminders can have a maximum of 5 tags.",
               when: ReminderTag.count { $0.reminderID == new.reminderID } >= 5)
    })

    static let completionCallback = Reminder.createTemporaryTrigger(after: .update(of: \.status, when: { old, new in
        new.status == 1 && old.status != 1
    }) { _, new in
        .callback("reminderCompleted", new.id, new.title)
    })

    static let all = [stampCreatedAt, stampUpdatedAt, neverEmpty, newListsGoLast, atMostFiveTags, completionCallback]
}
