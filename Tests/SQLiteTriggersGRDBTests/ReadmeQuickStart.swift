import Foundation
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

/// The README's Swift quick start, verbatim between the BEGIN and END
/// markers: ReadmeQuickStartTests checks that the README still shows
/// exactly this code, then runs it.
enum QuickStart {
    // BEGIN README declarations
    @Table struct Reminder {
        let id: UUID
        var title: String
        var status: Int
        var updatedAt: Date?
    }

    @CallbackEvent struct ReminderCompleted: Sendable {
        var id: UUID
        var title: String
    }
    // END README declarations

    static func run() throws -> (DatabaseQueue, CallbackObservation) {
        // BEGIN README statements
        var config = Configuration()
        config.prepareDatabase { db in                                   // run migrations before opening
            try db.installSQLiteTriggers()                               // every connection
            guard !db.configuration.readonly else { return }             // triggers: writer only
            try Reminder.afterUpdateTouch(\.updatedAt).execute(db)       // touch trigger
            try Reminder.createTemporaryTrigger(before: .update(of: \.title) { _, new in
                .raise(.abort, "A title cannot be empty.", when: new.title == "")   // RAISE rule
            }).execute(db)
            try Reminder.createTemporaryTrigger(after: .update(of: \.status, when: { old, new in
                new.status == 1 && old.status != 1
            }) { _, new in
                ReminderCompleted.callback(id: new.id, title: new.title)   // typed: a String id won't compile
            }).execute(db)
        }
        let dbQueue = try DatabaseQueue(path: "app.db", configuration: config)

        let observation = try dbQueue.write { db in
            try db.observe(ReminderCompleted.self) { event in
                print("Completed: \(event.title)")       // once, after commit; never for a rollback
            }
        }
        // END README statements
        return (dbQueue, observation)
    }
}
