import Foundation
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

// The README's other Swift examples, verbatim between the BEGIN and END
// markers: ReadmeExampleTests checks the README still shows exactly this
// code, and runs it.

enum ReadmeRules {
    // BEGIN README rules declarations
    @TriggerTable struct Reminder { let id: UUID; var title: String; var status: Int; var createdAt: Date?; var updatedAt: Date? }
    @TriggerTable("remindersLists") struct RemindersList { let id: UUID; var title: String; var position: Int }
    @TriggerTable struct ReminderTag { let id: UUID; var reminderID: UUID; var tagID: UUID }
    @CallbackEvent struct ReminderCompleted { var id: UUID; var title: String }
    // Without macros, a TableDescription is a few lines by hand: static tableName,
    // an enum TriggerColumns of static ColumnDescription<Value>("name"), and allColumns.

    // END README rules declarations

    // BEGIN README rules statements
    static let ruleSet = RuleSet {
        // 1. Timestamps, safe with recursive_triggers and a pinned clock.
        Reminder.afterInsertTouch(\.createdAt)
        Reminder.afterUpdateTouch(\.updatedAt)
        // 2. Never an empty list table.
        RemindersList.createTempTrigger(after: .delete(when: { _ in !RemindersList.exists() }) { _ in
            RemindersList.insert { $0.title = "Reminders" }
        })
        // 3. New lists go last.
        RemindersList.createTempTrigger(after: .insert { new in
            RemindersList.update { $0.position = RemindersList.count() - 1 }.find(new.id)
        })
        // 4. At most 5 tags per reminder.
        ReminderTag.createTempTrigger(before: .insert { new in
            .raise(.abort, "Reminders can have a maximum of 5 tags.",
                   when: ReminderTag.count { $0.reminderID == new.reminderID } >= 5)
        })
        // 5. Tell the app when a reminder is completed.
        Reminder.createTempTrigger(after: .update(of: \.status, when: { old, new in new.status == 1 && old.status != 1 }) { _, new in
            ReminderCompleted.callback(id: new.id, title: new.title)
        })
    }
    // END README rules statements

    static func install(_ dbQueue: DatabaseQueue) throws {
        // BEGIN README rules install
        try ruleSet.install(in: dbQueue)              // after the migrations; the writer only
        // END README rules install
    }

    static var rules: [TempTrigger] { ruleSet.rules }
}

enum ReadmeMigration {
    static func migrate(_ writer: some DatabaseWriter) throws {
        // BEGIN README migration statements
        var migrator = DatabaseMigrator()
        migrator.registerMigration("sync-ready keys") { db in
            let report = try migratePrimaryKeys(
                db, tables: ["remindersLists", "reminders", "tags", "reminderTags"], uuidFunction: .uuidv7,
                // or: tables: [RemindersList.self, Reminder.self, Tag.self, ReminderTag.self]
                // Ids held outside foreign keys, such as a full-text index's, are rewritten too:
                extraReferences: [ExtraReference(table: "reminderTexts", column: "reminderID", referencing: "reminders")])
            for warning in report.warnings { print("migration:", warning) }
        }
        // END README migration statements
        try migrator.migrate(writer)
    }
}
