import Foundation
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

/// The README's Swift quick start, verbatim between the BEGIN and END
/// markers: ReadmeQuickStartTests checks that the README still shows
/// exactly this code, then runs it.
enum QuickStart {
    // BEGIN README declarations
    @TriggerTable struct Reminder: Codable, FetchableRecord, PersistableRecord, ConventionalRecord {
        var id: UUID
        var title: String
        var status: Int
        var createdAt: Date?
        var updatedAt: Date?
    }

    @CallbackEvent struct ReminderCompleted: Sendable {
        var id: UUID
        var title: String
    }

    // The app's rules, declared once.
    static let rules = RuleSet {
        Reminder.afterInsertTouch(\.createdAt)                      // stamps; a record update keeps it
        Reminder.afterUpdateTouch(\.updatedAt)
        Reminder.createTempTrigger(before: .update(of: \.title) { _, new in
            .raise(.abort, "A title cannot be empty.", when: new.title == "")   // RAISE rule
        })
        Reminder.createTempTrigger(after: .update(of: \.status, when: { old, new in
            new.status == 1 && old.status != 1
        }) { _, new in
            ReminderCompleted.callback(id: new.id, title: new.title)   // typed: a String id won't compile
        })
    }
    // END README declarations

    /// Opens "app.db" where the program runs. `spy` observes beside the
    /// README's own observer, registered between the two parts the README
    /// shows as one block.
    @MainActor static func run(spy: @escaping @MainActor (String) -> Void) throws -> (DatabaseQueue, [CallbackObservation]) {
        // BEGIN README statements
        var migrator = DatabaseMigrator()
        migrator.registerMigration("reminders") { db in
            try db.execute(sql: """
                CREATE TABLE reminders(
                  id TEXT PRIMARY KEY NOT NULL DEFAULT (uuid()),
                  title TEXT NOT NULL, status INTEGER NOT NULL DEFAULT 0, createdAt TEXT, updatedAt TEXT)
                """)
        }

        var config = Configuration()
        config.prepareDatabase { db in try db.installSQLiteTriggers() }   // every connection
        let dbQueue = try DatabaseQueue(path: "app.db", configuration: config)
        try migrator.migrate(dbQueue)
        try rules.install(in: dbQueue)          // on the writer; back after any later migration

        let observation = try dbQueue.observe(ReminderCompleted.self) { event in
            print("Completed: \(event.title)")       // on the main actor, once per commit, never for a rollback
        }                                            // keep the token: releasing it stops observing
        // END README statements
        let spyObservation = try dbQueue.observe(ReminderCompleted.self) { event in spy(event.title) }
        // BEGIN README statements, continued

        try dbQueue.write { db in
            var milk = Reminder(id: UUID(), title: "Buy milk", status: 0)
            try milk.insert(db)                      // createdAt: the transaction's date (db.transactionDate)
            milk.status = 1
            try milk.update(db)                      // createdAt kept, updatedAt stamped, event after commit
        }
        // END README statements, continued
        return (dbQueue, [observation, spyObservation])
    }
}
