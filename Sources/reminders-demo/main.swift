// make demo: the main job, end to end, on a real database file.
//
//   swift run reminders-demo [PATH]     (default build/demo/reminders.sqlite)
//
// Creates the Reminders schema with integer keys and sample data, migrates
// it to UUID keys, installs the six rules from @TriggerTable types, then plays a
// scripted series of user actions and says what happened, while a replica
// of the reminders table is kept from the change feed alone; then the
// sqlite3 shell, in a process of its own, adds a reminder that the durable
// log's consumer picks up. Exits 1 if a step does not behave as expected.
import GRDB
import Foundation
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

@TriggerTable("remindersLists") struct RemindersList { let id: UUID; var title: String; var position: Int }
@TriggerTable struct Reminder: Codable, FetchableRecord, TableRecord, Hashable, Sendable {
    let id: UUID
    var title: String
    var status: Int
    var remindersListID: UUID
    var createdAt: Date?
    var updatedAt: Date?
}
@TriggerTable struct ReminderTag { let id: UUID; var reminderID: UUID; var tagID: UUID }
@CallbackEvent struct ReminderCompleted: Sendable { var id: UUID; var title: String }

let rules = RuleSet([
    Reminder.afterInsertTouch(\.createdAt),
    Reminder.afterUpdateTouch(\.updatedAt),
    RemindersList.createTempTrigger(after: .delete(when: { _ in !RemindersList.exists() }) { _ in
        RemindersList.insert { $0.title = "Reminders" }
    }),
    RemindersList.createTempTrigger(after: .insert { new in
        RemindersList.update { $0.position = RemindersList.count() - 1 }.find(new.id)
    }),
    ReminderTag.createTempTrigger(before: .insert { new in
        .raise(.abort, "Reminders can have a maximum of 5 tags.",
               when: ReminderTag.count { $0.reminderID == new.reminderID } >= 5)
    }),
    Reminder.createTempTrigger(after: .update(of: \.status, when: { old, new in new.status == 1 && old.status != 1 }) { _, new in
        ReminderCompleted.callback(id: new.id, title: new.title)
    }),
])

let integerSchema = """
    CREATE TABLE "remindersLists" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "color" INTEGER NOT NULL DEFAULT 1251602431,
      "title" TEXT NOT NULL DEFAULT '', "position" INTEGER NOT NULL DEFAULT 0) STRICT;
    CREATE TABLE "tags" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "title" TEXT NOT NULL DEFAULT '' CHECK(instr("title", ' ') = 0)) STRICT;
    CREATE TABLE "reminders" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "dueDate" TEXT, "isFlagged" INTEGER NOT NULL DEFAULT 0,
      "notes" TEXT NOT NULL DEFAULT '', "priority" INTEGER,
      "remindersListID" INTEGER NOT NULL REFERENCES "remindersLists"("id") ON DELETE CASCADE,
      "title" TEXT NOT NULL DEFAULT '', "createdAt" TEXT, "updatedAt" TEXT, "status" INTEGER NOT NULL DEFAULT 0) STRICT;
    CREATE TABLE "reminderTags" ("reminderID" INTEGER NOT NULL REFERENCES "reminders"("id") ON DELETE CASCADE,
      "tagID" INTEGER NOT NULL REFERENCES "tags"("id") ON DELETE CASCADE) STRICT;
    INSERT INTO remindersLists(title, position) VALUES ('Personal', 0), ('Work', 1);
    INSERT INTO tags(title) VALUES ('home'), ('urgent'), ('later'), ('car'), ('kids'), ('money');
    INSERT INTO reminders(remindersListID, title) VALUES (1, 'Buy milk'), (1, 'Call mom'), (2, 'Send the report');
    INSERT INTO reminderTags VALUES (1, 1), (1, 2), (2, 5);
    """

var failures = 0
func step(_ title: String) { print("\n▸ \(title)") }
@MainActor func expect(_ condition: Bool, _ what: String) {
    print(condition ? "  ✓ \(what)" : "  ✗ \(what)")
    if !condition { failures += 1 }
}

let path = CommandLine.arguments.dropFirst().first ?? "build/demo/reminders.sqlite"
try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }

step("An app's database, integer keys: \(path)")
do {
    let legacy = try DatabaseQueue(path: path)
    try legacy.write { db in try db.execute(sql: integerSchema) }
    let ids = try legacy.read { db in try Int.fetchAll(db, sql: "SELECT id FROM reminders") }
    expect(ids == [1, 2, 3], "3 reminders in 2 lists, 6 tags, 3 tag links, keyed 1, 2, 3…")
}

// Migrations first, on a connection of their own: dropping a table drops
// its TEMP triggers too, so the rules go on connections opened afterwards.
step("Migrate to sync-ready UUID keys, in one transaction")
do {
    var migrationConfig = Configuration()
    migrationConfig.prepareDatabase { db in try db.installSQLiteTriggers() }
    var migrator = DatabaseMigrator()
    migrator.registerMigration("sync-ready keys") { db in
        try migratePrimaryKeys(db, tables: ["remindersLists", "reminders", "tags", "reminderTags"], uuidFunction: .uuidv7)
    }
    try migrator.migrate(DatabaseQueue(path: path, configuration: migrationConfig))
}

var config = Configuration()
config.prepareDatabase { db in
    try db.installSQLiteTriggers()
    try db.execute(sql: "PRAGMA recursive_triggers = ON")
}
let dbPool = try DatabasePool(path: path, configuration: config)
try rules.install(in: dbPool)                       // the writer only; back after any later migration
try dbPool.read { db in
    let reminder = try Row.fetchOne(db, sql: """
        SELECT r.id, r.title, l.title AS list, (SELECT count(*) FROM reminderTags WHERE reminderID = r.id) AS tags
        FROM reminders r JOIN remindersLists l ON l.id = r.remindersListID WHERE r.title = 'Buy milk'
        """)!
    print("  'Buy milk' is now \(reminder["id"] as String), still in \(reminder["list"] as String), still with \(reminder["tags"] as Int) tags")
    expect(try Int.fetchSet(db, sql: "SELECT uuid_version(id) FROM reminders") == [8], "every reminder has a version 8 UUID")
    expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reminderTags JOIN tags ON tags.id = tagID") == 3, "every tag link still joins")
}

let completions = Locked<String>()
let observation = try dbPool.observe(ReminderCompleted.self, scheduling: .onWriterQueue) { event in
    print("  📣 after commit: “\(event.title)” was completed")
    completions.append(event.title)
}

// A replica of the reminders table, kept only from the change feed: what a
// sync engine or a search index would keep.
let replica = Replica()
let feed = try dbPool.observeChanges(to: Reminder.self, scheduling: .onWriterQueue) { change in replica.apply(change) }
try dbPool.read { db in replica.seed(try Reminder.fetchAll(db)) }

step("Edit a reminder with raw SQL: the database stamps it")
try dbPool.write { db in try db.execute(sql: "UPDATE reminders SET title = 'Buy oat milk' WHERE title = 'Buy milk'") }
let updatedAt = try dbPool.read { db in try String.fetchOne(db, sql: "SELECT updatedAt FROM reminders WHERE title = 'Buy oat milk'") }
print("  updatedAt = \(updatedAt ?? "NULL")")
expect(updatedAt.map { StorageConventions.date(fromText: $0) != nil } == true, "updatedAt is set to the millisecond")

step("Add a list: it goes last")
try dbPool.write { db in try db.execute(sql: "INSERT INTO remindersLists(title) VALUES ('Groceries')") }
let lists = try dbPool.read { db in try String.fetchAll(db, sql: "SELECT title || ' #' || position FROM remindersLists ORDER BY position") }
print("  " + lists.joined(separator: ", "))
expect(lists.last == "Groceries #2", "the new list has position (number of lists) - 1")

step("Save a reminder with a sixth tag, in one transaction")
let reminderID = try dbPool.read { db in try String.fetchOne(db, sql: "SELECT id FROM reminders WHERE title = 'Buy oat milk'")! }
do {
    try dbPool.write { db in
        try db.execute(sql: "UPDATE reminders SET title = 'Buy oat milk and bread' WHERE id = ?", arguments: [reminderID])
        try db.execute(sql: "INSERT INTO reminderTags(reminderID, tagID) SELECT ?, id FROM tags WHERE title IN ('later', 'car', 'kids', 'money')",
                       arguments: [reminderID])
    }
    expect(false, "the save is refused")
} catch let error as DatabaseError {
    print("  refused: \(error.message ?? "") (extended code \(error.extendedResultCode.rawValue))")
    expect(error.extendedResultCode == .SQLITE_CONSTRAINT_TRIGGER, "the app sees SQLITE_CONSTRAINT_TRIGGER with the message")
}
let title = try dbPool.read { db in try String.fetchOne(db, sql: "SELECT title FROM reminders WHERE id = ?", arguments: [reminderID]) }
expect(title == "Buy oat milk", "the whole save rolled back, the title edit included")

step("Complete a reminder")
let toldBeforeCommit = try dbPool.write { db in
    try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Call mom'")
    print("  (inside the transaction, nobody has been told yet)")
    return !completions.value.isEmpty
}
expect(!toldBeforeCommit, "no notification before the commit")
expect(completions.value == ["Call mom"], "the after-commit observer reacted once")

step("Complete a reminder, then change your mind: ROLLBACK")
try dbPool.writeWithoutTransaction { db in
    try db.inTransaction {
        try db.execute(sql: "UPDATE reminders SET status = 1 WHERE title = 'Send the report'")
        return .rollback
    }
}
expect(completions.value == ["Call mom"], "a rolled-back transaction's callbacks never arrive")

/// Compares the replica kept from the change feed with the table.
@MainActor func checkReplica(_ when: String) throws {
    let table = try dbPool.read { db in try Set(Reminder.fetchAll(db)) }
    print("  \(replica.changes.value.count) changes received so far; the replica holds \(replica.rows.count) reminders, the table \(table.count)")
    expect(Set(replica.rows.values) == table, "the replica kept from the change feed equals the table, row for row, \(when)")
}
step("The replica kept from the change feed")
try checkReplica("after edits, a refused save and a rollback")

step("Another process edits the file: the sqlite3 shell, without SQLiteTriggers")
// The durable log: plain SQL triggers in the file, so every process that
// writes it records its changes; a consumer here picks them up.
try dbPool.write { db in try db.installDurableLog(for: ["reminders"]) }
let durable = Locked<String>()
let search = try dbPool.observeDurableChanges(to: Reminder.self, consumer: "search", pollInterval: 0.1) { _, batch in
    for transaction in batch.transactions {
        for change in transaction.changes {
            let how = transaction.id == nil ? "a writer without SQLiteTriggers" : "transaction \(transaction.id!)"
            print("  📥 durable log: \(change.kind) “\(change.record?.title ?? "?")” (\(how))")
            durable.append(change.record?.title ?? "")
        }
    }
}
// An UPDATE: an INSERT there needs uuidv7(), which the keys' DEFAULT calls.
let shellUpdate = "UPDATE reminders SET title = 'Call mom tonight' WHERE title = 'Call mom'"
print("  $ sqlite3 \(path) \"\(shellUpdate)\"")
let shell = Process()
shell.executableURL = URL(fileURLWithPath: "/usr/bin/env")
shell.arguments = ["sqlite3", "-cmd", ".timeout 5000", path, shellUpdate]
try shell.run()
shell.waitUntilExit()
expect(shell.terminationStatus == 0, "the shell changed the reminder")
for _ in 0..<100 where durable.value.isEmpty { Thread.sleep(forTimeInterval: 0.05) }
expect(durable.value == ["Call mom tonight"], "the app's durable consumer picked up the shell's change")
let heardByFeed = replica.rows.values.contains { $0.title == "Call mom tonight" }
expect(!heardByFeed, "the change feed, which hears this connection only, did not")
search.cancel()

step("Delete every list")
try dbPool.write { db in try db.execute(sql: "DELETE FROM remindersLists") }
let remaining = try dbPool.read { db in try String.fetchAll(db, sql: "SELECT title FROM remindersLists") }
print("  lists now: \(remaining.joined(separator: ", "))")
expect(remaining == ["Reminders"], "a list titled “Reminders” appeared")
try checkReplica("after the cascade")

observation.cancel()
feed.cancel()

print(failures == 0 ? "\nEvery step behaved as expected." : "\n\(failures) step(s) did not behave as expected.")
exit(failures == 0 ? 0 : 1)

/// The reminders, by id, from the feed's changes.
final class Replica: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [UUID: Reminder] = [:]
    let changes = Locked<String>()
    var rows: [UUID: Reminder] { lock.withLock { stored } }

    func seed(_ reminders: [Reminder]) { lock.withLock { for reminder in reminders { stored[reminder.id] = reminder } } }

    func apply(_ change: RecordChange<Reminder>) {
        changes.append("\(change)")
        lock.withLock {
            if let old = change.old { stored[old.id] = nil }
            if let new = change.new { stored[new.id] = new }
        }
    }
}

/// A list several threads append to.
final class Locked<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    var value: [Element] { lock.withLock { elements } }
    func append(_ element: Element) { lock.withLock { elements.append(element) } }
}
