import Foundation
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

/// The README's list of builder constructs, verbatim between the markers:
/// ReadmeQuickStartTests checks the README shows exactly this, and
/// ReadmeConstructsTests runs it.
enum ReadmeConstructs {
    @TriggerTable struct Reminder {
        let id: UUID; var remindersListID: UUID; var title: String; var notes: String; var status: Int
        var priority: Int?; var isFlagged: Bool; var dueDate: Date?; var createdAt: Date?; var updatedAt: Date?
    }
    @TriggerTable("remindersLists") struct RemindersList { let id: UUID; var title: String; var position: Int }
    @TriggerTable struct ReminderTag { let id: UUID; var reminderID: UUID; var tagID: UUID }
    // BEGIN README constructs declarations
    @TriggerTable struct Log { let id: UUID; var text: String; var count: Int }
    @TriggerTable("openReminders") struct OpenReminder { let id: UUID; var title: String }
    // END README constructs declarations

    // BEGIN README constructs
    static let triggers: [TempTrigger] = [
        Reminder.createTempTrigger(after: .insert(when: { new in
            new.title.glob("*[a-z]*") && coalesce(new.priority, 0).between(0, and: 9) && new.id.notIn(ReminderTag.select { $0.reminderID })
        }) { new in
            // Expressions: CASE, functions, JSON, dates, subqueries, typed raw SQL
            Log.insert { $0.text = SQLCase(new.status).when(0, then: "open").when(1, then: "done").else("other") }
            Log.insert { $0.text = SQLCase().when(coalesce(new.priority, 0) > 2, then: "high").else("normal") }
            Log.insert { $0.text = new.title.trim().lower() + iif(new.isFlagged, "!", ""); $0.count = new.title.length() }
            Log.insert { $0.count = max(coalesce(new.priority, 0), 1) + ifnull(new.priority, 0).abs() }
            Log.insert { $0.text = jsonObject(["title": new.title, "tags": jsonArray(1, 2)]) }
            Log.insert { $0.text = coalesce(new.notes.jsonExtract("$.place", as: String.self), "nowhere") }
            Log.insert { $0.text = coalesce(new.dueDate.modified("+1 day").strftime("%Y-%m-%d"), "someday") }
            Log.insert { $0.count = coalesce(new.id.uuidVersion(), 0) }
            Log.insert { $0.count = Reminder.aggregate { $0.title.count() } }
            Log.insert { $0.text = coalesce(RemindersList.select { $0.title }.where { $0.id == new.remindersListID }.value, "?") }
            Log.insert { $0.text = TypedSQL<String>(sql: "printf('%s #%d', \(new.title), \(coalesce(new.priority, 0)))") }
            // Statements: INSERT OR, upsert, INSERT … SELECT, UPDATE … FROM, DELETE, SELECT
            Log.insert(or: .ignore) { $0.id = new.id; $0.text = "first" }
            Log.insert { $0.id = new.id; $0.text = "upserted" }.onConflict(\.id) { row, excluded in row.text = excluded.text }
            Log.insert(from: RemindersList.self, where: { $0.id == new.remindersListID }) { log, list in log.text = list.title }
            Reminder.update(from: RemindersList.self, where: { reminder, list in
                reminder.id == new.id && list.id == reminder.remindersListID
            }) { reminder, list in reminder.notes = "in " + list.title }
            Log.delete { $0.text == "nothing" }
            Reminder.select { $0.title.length() }.where { $0.id == new.id }
            TriggerStatement(sql: "UPDATE \(Log.self) SET \(Log.TriggerColumns.count) = \(7) WHERE \(Log.TriggerColumns.text) = 'open'")
        }),
        // Touches: on the row, after an UPDATE of some columns or after an INSERT; on any table, as a statement
        Reminder.createTempTrigger(after: .touch(of: \.title, when: { old, _ in old.status == 0 }) { $0.updatedAt = .now }),
        Reminder.createTempTrigger(after: .insertTouch { $0.createdAt = .now }),
        Reminder.createTempTrigger(after: .update(of: \.status) { _, new in
            RemindersList.touch { $0.position = 0 }.find(new.remindersListID)
        }),
        // A typed TEMP view, and an INSTEAD OF trigger on it
        OpenReminder.createTempTrigger(insteadOf: .delete { old in
            Reminder.update { $0.status = 1 }.find(old.id)
        }),
    ]
    // END README constructs

    // BEGIN README constructs view
    static let openReminders = OpenReminder.createTempView(from: Reminder.self, where: { $0.status == 0 }) { view, reminder in
        view.id = reminder.id
        view.title = reminder.title
    }
    // END README constructs view
}
