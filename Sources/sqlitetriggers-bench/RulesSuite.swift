import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

// The rules' cost: one reminder write (insert a reminder, rename it, tag
// it, complete it) with the six Reminders rules installed from the
// builders, against the same writes with no triggers, and against the same
// rules written by hand as SQL. The builders' triggers must cost nothing
// over the hand-written ones. The tables are described as an app does,
// with @TriggerTable.

@TriggerTable("reminders") struct BenchReminder {
    let id: Int64
    var title: String
    var status: Int
    var createdAt: Date?
    var updatedAt: Date?
}

@TriggerTable("remindersLists") struct BenchList {
    let id: Int64
    var title: String
    var position: Int
}

@TriggerTable("reminderTags") struct BenchTag {
    var reminderID: Int64
    var tagID: Int64
}

let builtRules = RuleSet {
    BenchReminder.afterInsertTouch(\.createdAt)
    BenchReminder.afterUpdateTouch(\.updatedAt)
    BenchList.createTempTrigger(after: .delete(when: { _ in !BenchList.exists() }) { _ in
        BenchList.insert { $0.title = "Reminders" }
    })
    BenchList.createTempTrigger(after: .insert { new in
        BenchList.update { $0.position = BenchList.count() - 1 }.find(new.id)
    })
    BenchTag.createTempTrigger(before: .insert { new in
        .raise(.abort, "Reminders can have a maximum of 5 tags.",
               when: BenchTag.count { $0.reminderID == new.reminderID } >= 5)
    })
    BenchReminder.createTempTrigger(after: .update(of: \.status, when: { old, new in new.status == 1 && old.status != 1 }) { _, new in
        .callback("reminderCompleted", new.id, new.title)
    })
}

/// The same rules as a developer writes them by hand.
let handWrittenRules = """
    CREATE TEMP TRIGGER reminders_created AFTER INSERT ON main.reminders WHEN new.createdAt IS NULL
    BEGIN UPDATE reminders SET createdAt = datetime_subsec() WHERE rowid = new.rowid; END;
    CREATE TEMP TRIGGER reminders_recreated AFTER UPDATE OF createdAt ON main.reminders WHEN new.createdAt IS NULL
    BEGIN UPDATE reminders SET createdAt = old.createdAt WHERE rowid = new.rowid; END;
    CREATE TEMP TRIGGER reminders_updated AFTER UPDATE ON main.reminders WHEN new.updatedAt IS old.updatedAt
    BEGIN UPDATE reminders SET updatedAt = datetime_subsec() WHERE rowid = new.rowid AND updatedAt IS NOT datetime_subsec(); END;
    CREATE TEMP TRIGGER lists_never_empty AFTER DELETE ON main.remindersLists WHEN NOT EXISTS (SELECT 1 FROM remindersLists)
    BEGIN INSERT INTO remindersLists(title) VALUES ('Reminders'); END;
    CREATE TEMP TRIGGER lists_go_last AFTER INSERT ON main.remindersLists
    BEGIN UPDATE remindersLists SET position = (SELECT count(*) FROM remindersLists) - 1 WHERE id = new.id; END;
    CREATE TEMP TRIGGER tags_at_most_5 BEFORE INSERT ON main.reminderTags
    WHEN (SELECT count(*) FROM reminderTags WHERE reminderID = new.reminderID) >= 5
    BEGIN SELECT RAISE(ABORT, 'Reminders can have a maximum of 5 tags.'); END;
    CREATE TEMP TRIGGER reminder_completed AFTER UPDATE OF status ON main.reminders WHEN new.status = 1 AND old.status <> 1
    BEGIN SELECT swift_callback('reminderCompleted', new.id, new.title); END;
    """

func makeRulesQueue(_ install: (Database) throws -> Void) throws -> DatabaseQueue {
    let queue = try makeQueue(trigger: nil, rows: 0)
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE remindersLists(id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', position INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE reminders(id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', status INTEGER NOT NULL DEFAULT 0,
              createdAt TEXT, updatedAt TEXT, listID INTEGER REFERENCES remindersLists(id) ON DELETE CASCADE);
            CREATE TABLE tags(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            CREATE TABLE reminderTags(reminderID INTEGER NOT NULL REFERENCES reminders(id) ON DELETE CASCADE,
              tagID INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE);
            CREATE INDEX reminderTags_reminderID ON reminderTags(reminderID);
            INSERT INTO remindersLists(title) VALUES ('Home');
            INSERT INTO tags(title) VALUES ('errand');
            """)
    }
    try queue.writeWithoutTransaction(install)
    return queue
}

/// The touch rules in the file (RuleSet.installPersistently), and the same
/// triggers as a developer writes them for every writer: SQLite's time.
let persistentTouches = RuleSet {
    BenchReminder.afterInsertTouch(\.createdAt)
    BenchReminder.afterUpdateTouch(\.updatedAt)
}
let handWrittenPersistentTouches = """
    CREATE TRIGGER reminders_created AFTER INSERT ON reminders WHEN new.createdAt IS NULL
    BEGIN UPDATE reminders SET createdAt = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE rowid = new.rowid; END;
    CREATE TRIGGER reminders_recreated AFTER UPDATE OF createdAt ON reminders WHEN new.createdAt IS NULL
    BEGIN UPDATE reminders SET createdAt = old.createdAt WHERE rowid = new.rowid; END;
    CREATE TRIGGER reminders_updated AFTER UPDATE ON reminders WHEN new.updatedAt IS old.updatedAt
    BEGIN UPDATE reminders SET updatedAt = strftime('%Y-%m-%d %H:%M:%f', 'now')
          WHERE rowid = new.rowid AND updatedAt IS NOT strftime('%Y-%m-%d %H:%M:%f', 'now'); END;
    """

func rulesSuite() throws {
    let writesPerRun = 20_000, runs = 5
    let queues = [
        ("no triggers", try makeRulesQueue { _ in }),
        ("the six rules, from the builders", try makeRulesQueue { db in try builtRules.install(db) }),
        ("the six rules, hand-written SQL", try makeRulesQueue { db in try db.execute(sql: handWrittenRules) }),
        ("the builders' triggers, installed alone", try makeRulesQueue { db in for rule in builtRules.rules { try rule.execute(db) } }),
        ("persistent touch rules (installPersistently)", try makeRulesQueue { db in try persistentTouches.installPersistently(db) }),
        ("the same touches in the file by hand (strftime)", try makeRulesQueue { db in try db.execute(sql: handWrittenPersistentTouches) }),
    ]
    var best = [Double](repeating: .infinity, count: queues.count)
    for _ in 1...runs {
        for (index, (_, queue)) in queues.enumerated() {
            let elapsed = try seconds {
                for _ in 0..<writesPerRun {
                    // Cached statements, as GRDB's records use: the triggers
                    // are compiled into each statement once, and what is left
                    // is what they cost at run time.
                    try queue.write { db in
                        try db.cachedStatement(sql: "INSERT INTO reminders(title, listID) VALUES ('Buy milk', 1)").execute()
                        let id = db.lastInsertedRowID
                        try db.cachedStatement(sql: "UPDATE reminders SET title = 'Buy oat milk' WHERE id = ?").execute(arguments: [id])
                        try db.cachedStatement(sql: "INSERT INTO reminderTags(reminderID, tagID) VALUES (?, 1)").execute(arguments: [id])
                        try db.cachedStatement(sql: "UPDATE reminders SET status = 1 WHERE id = ?").execute(arguments: [id])
                    }
                }
            }
            best[index] = min(best[index], elapsed * 1e9 / Double(writesPerRun))
            try queue.write { db in try db.execute(sql: "DELETE FROM reminders") }
        }
    }
    let what = "one reminder write (insert, rename, tag, complete: one transaction)"
    report(what, ours: queues[1].0, best[1], peer: queues[0].0, best[0], unit: "ns")
    // The triggers themselves: the builders' SQL against the hand-written.
    report(what, ours: queues[3].0, best[3], peer: queues[2].0, best[2], unit: "ns", target: 1.05)
    // What a RuleSet adds: after each commit, whether a schema change
    // dropped a rule (two cached PRAGMA schema_version reads).
    report(what, ours: queues[1].0, best[1], peer: queues[3].0, best[3], unit: "ns")
    // Rules every writer obeys: the same triggers, in the file.
    report(what, ours: queues[4].0, best[4], peer: queues[5].0, best[5], unit: "ns", target: 1.05)
}
