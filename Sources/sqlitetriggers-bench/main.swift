// make bench: the Swift observers against GRDB's own tools, in one process.
//
// 100,000 rows are updated by one UPDATE. Each variant's time, less the
// same UPDATE with nothing attached, divided by the rows, is its cost per
// event:
//   1. our after-commit typed observer (delivery included);
//   2. our immediate typed observer;
//   3. GRDB's DatabaseFunction called from the same trigger, decoding the
//      same three values;
//   4. GRDB's TransactionObserver, told of each row by databaseDidChange.
// Best of 5 runs each, alternating. Prints ROW lines for Tests/bench/report.py.
// `--change-feeds` runs the change feeds alone.
import GRDB
import Foundation
import SQLiteTriggersBenchSession
import SQLiteTriggersCSQLite
import SQLiteTriggersGRDB

// `sqlitetriggers-bench --migration-memory N`: migrate a file of N rows in
// this process alone and print its peak RSS in KiB and the seconds taken.
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--migration-memory", let count = Int(CommandLine.arguments[2]) {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("sqlitetriggers-bench-\(count).sqlite").path
    for suffix in ["", "-journal", "-wal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    defer { for suffix in ["", "-journal", "-wal"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    var config = Configuration()
    config.prepareDatabase { db in try db.installSQLiteTriggers() }
    let queue = try DatabaseQueue(path: path, configuration: config)
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE events(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
            INSERT INTO events(title) SELECT 'Event number ' || i FROM n;
            """)
    }
    let start = DispatchTime.now().uptimeNanoseconds
    try queue.writeWithoutTransaction { db in _ = try migratePrimaryKeys(db, tables: ["events"]) }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    // VmHWM: this process image's own peak (ru_maxrss would include the
    // parent's, which Linux carries across fork and exec).
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }?
        .split(whereSeparator: \.isWhitespace).dropFirst().first.map(String.init) ?? "0"
    print("\(peak)\t\(seconds)")
    exit(0)
}

/// Runs this program with --migration-memory count: (peak KiB, seconds).
func migrationMemory(_ count: Int) throws -> (kib: Double, seconds: Double) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["--migration-memory", String(count)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let fields = output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
    precondition(process.terminationStatus == 0 && fields.count == 2, "the migration memory run failed: \(output)")
    return (fields[0], fields[1])
}

let rows = 100_000
let runs = 5
/// `sqlitetriggers-bench --change-feed-write VARIANT WRITE ROWS`: one write
/// of `feedWrites[WRITE]` over ROWS rows on one queue (0 bare, 1 change
/// feed, 2 GRDB's observer, 3 the session peer), inside `measuredFeedWrite`,
/// for Tests/bench/feed_instructions.py to count under callgrind. Variants 4
/// and 5 measure instead, over ROWS inserted rows, a cursor decoding each
/// row's record and the same cursor stepping rows alone: the decoding floor.
let singleFeedWrite: (variant: Int, write: Int, rows: Int)? = {
    let arguments = CommandLine.arguments.dropFirst().map { Int($0) }
    guard CommandLine.arguments.count == 5, CommandLine.arguments[1] == "--change-feed-write",
          let variant = arguments[1], let write = arguments[2], let rows = arguments[3] else { return nil }
    return (variant, write, rows)
}()
/// `sqlitetriggers-bench --change-feeds`: the change feeds alone, for quick
/// measurements while working on them.
let changeFeedsOnly = CommandLine.arguments.dropFirst().first == "--change-feeds" || singleFeedWrite != nil

func makeQueue(trigger body: String?, rows: Int = rows) throws -> DatabaseQueue {
    let queue = try DatabaseQueue(configuration: {
        var config = Configuration()
        config.prepareDatabase { db in try db.installSQLiteTriggers() }
        return config
    }())
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE items(id INTEGER PRIMARY KEY, title TEXT, updatedAt TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO items(title, updatedAt) SELECT 'Reminder number ' || i, '2024-01-01 00:00:00.000' FROM n WHERE i <= \(rows);
            """)
        if let body {
            try db.execute(sql: "CREATE TEMP TRIGGER items_au AFTER UPDATE ON items BEGIN \(body); END")
        }
    }
    return queue
}

final class Counter: @unchecked Sendable { var count = 0 }

final class RowObserver: TransactionObserver {
    let counter: Counter
    init(counter: Counter) { self.counter = counter }
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == "items" }
    func databaseDidChange(with event: DatabaseEvent) { counter.count += 1 }
    func databaseDidCommit(_ db: Database) {}
    func databaseDidRollback(_ db: Database) {}
}

struct Variant {
    let name: String
    let queue: DatabaseQueue
    let counter: Counter
    var best = Double.infinity
}

let callbackBody = "SELECT swift_callback('changed', new.id, new.title, new.updatedAt)"
var observations: [CallbackObservation] = []
var variants: [Variant] = []

// GRDB holds transaction observers weakly: this one lives as long as the program.
let rowObserver = RowObserver(counter: Counter())
if !changeFeedsOnly {
    let baseline = try makeQueue(trigger: nil)
    variants.append(Variant(name: "nothing attached (baseline)", queue: baseline, counter: Counter()))

    do {
        let counter = Counter()
        let queue = try makeQueue(trigger: callbackBody)
        observations.append(try queue.write { db in
            try db.observeCallback("changed") { (id: Int, title: String, updatedAt: Date) in counter.count += 1 }
        })
        variants.append(Variant(name: "1. `observeCallback`, after commit, typed", queue: queue, counter: counter))
    }
    do {
        let counter = Counter()
        let queue = try makeQueue(trigger: callbackBody)
        observations.append(try queue.write { db in
            try db.observeCallback("changed", delivery: .immediate) { (id: Int, title: String, updatedAt: Date) in
                counter.count += 1
            }
        })
        variants.append(Variant(name: "2. `observeCallback`, immediate, typed", queue: queue, counter: counter))
    }
    do {
        let counter = Counter()
        let queue = try makeQueue(trigger: "SELECT grdb_changed(new.id, new.title, new.updatedAt)")
        let function = DatabaseFunction("grdb_changed", argumentCount: 3) { values in
            _ = Int.fromDatabaseValue(values[0])
            _ = String.fromDatabaseValue(values[1])
            _ = Date.fromDatabaseValue(values[2])
            counter.count += 1
            return nil
        }
        queue.inDatabase { db in db.add(function: function) }
        variants.append(Variant(name: "3. GRDB `DatabaseFunction` (peer)", queue: queue, counter: counter))
    }
    do {
        let queue = try makeQueue(trigger: nil)
        queue.add(transactionObserver: rowObserver)
        variants.append(Variant(name: "4. GRDB `TransactionObserver.databaseDidChange` (peer)", queue: queue,
                                counter: rowObserver.counter))
    }

    for run in 1...runs {
        for index in variants.indices {
            let start = DispatchTime.now().uptimeNanoseconds
            try variants[index].queue.write { db in
                try db.execute(sql: "UPDATE items SET updatedAt = ?", arguments: [String(format: "2024-01-01 00:00:%02d.000", run)])
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            variants[index].best = min(variants[index].best, seconds)
        }
    }
    for variant in variants.dropFirst() where variant.counter.count != rows * runs {
        fatalError("\(variant.name): \(variant.counter.count) events, expected \(rows * runs)")
    }
    let baselineNs = variants[0].best / Double(rows) * 1e9
    func perEvent(_ variant: Variant) -> Double { variant.best / Double(rows) * 1e9 - baselineNs }
    let peer = perEvent(variants[3])
    let what = "Swift observer, per event over the bare UPDATE of \(rows) rows"
    print("ROW\t\(what)\tobserveCallback, after commit, typed\t\(perEvent(variants[1]))\tGRDB DatabaseFunction, same decoding\t\(peer)\tns\t0.7")
    print("ROW\t\(what)\tobserveCallback, immediate, typed\t\(perEvent(variants[2]))\tGRDB DatabaseFunction, same decoding\t\(peer)\tns\t0.7")
    print("ROW\t\(what)\tobserveCallback, after commit, typed\t\(perEvent(variants[1]))\tGRDB TransactionObserver (row ids only, no values)\t\(perEvent(variants[4]))\tns\t")
}
_ = observations

// Change feeds: every committed row change delivered as a typed record,
// against GRDB's nearest equivalent, a TransactionObserver that collects
// the changed rowids and fetches those rows after the commit. The rows are
// written two ways, in one transaction: one statement for all \(feedRows) rows,
// and one statement per row, as record writes run (a table with triggers
// makes SQLite open a statement journal for each). Cost per row over the
// same writes with nothing attached, best of \(feedRuns): more runs of fewer
// rows than above, because the statement-per-row writes vary more here.
struct FeedItem: Codable, FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "items"
    var id: Int64
    var title: String
    var updatedAt: Date
}

final class FetchingObserver: TransactionObserver {
    var rowIDs: [Int64] = []
    let counter: Counter
    init(counter: Counter) { self.counter = counter }
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
        if case .delete = eventKind { return false }        // a deleted row cannot be fetched
        return eventKind.tableName == "items"
    }
    func databaseDidChange(with event: DatabaseEvent) { rowIDs.append(event.rowID) }
    func databaseDidCommit(_ db: Database) {
        guard !rowIDs.isEmpty else { return }
        let ids = "[" + rowIDs.map(String.init).joined(separator: ",") + "]"
        rowIDs = []
        let items = try! FeedItem.fetchAll(db, sql: "SELECT * FROM items WHERE rowid IN (SELECT value FROM json_each(?))", arguments: [ids])
        counter.count += items.count
    }
    func databaseDidRollback(_ db: Database) { rowIDs = [] }
}

/// The peer that delivers what a feed delivers: SQLite's session extension
/// records the transaction; after the commit its changeset is iterated and
/// each change's old and new records decoded with the same `FeedItem(row:)`.
/// (A changeset's update carries the key and the changed columns: every
/// column of `items` in these writes.)
final class SessionPeer: @unchecked Sendable {
    var session: OpaquePointer?
    let counter: Counter
    init(counter: Counter) { self.counter = counter }

    func begin(_ db: Database) {
        session = sqlitetriggers_bench_session_start(db.sqliteConnection, "items")
    }

    func end() {
        guard let session else { return }
        let rc = sqlitetriggers_bench_session_read(session, { context, op, count, old, new in
            let peer = Unmanaged<SessionPeer>.fromOpaque(context!).takeUnretainedValue()
            peer.decode(op: op, count: Int(count), old: old!, new: new!)
        }, Unmanaged.passUnretained(self).toOpaque())
        precondition(rc == SQLITE_OK, "the session's changeset could not be read: \(rc)")
        sqlitetriggers_bench_session_end(session)
        self.session = nil
    }

    func decode(op: Int32, count: Int, old: UnsafeMutablePointer<OpaquePointer?>, new: UnsafeMutablePointer<OpaquePointer?>) {
        func value(_ pointer: OpaquePointer?) -> DatabaseValue {
            guard let pointer else { return .null }
            switch sqlite3_value_type(pointer) {
            case SQLITE_INTEGER: return sqlite3_value_int64(pointer).databaseValue
            case SQLITE_FLOAT: return sqlite3_value_double(pointer).databaseValue
            case SQLITE_TEXT: return String(cString: sqlite3_value_text(pointer)).databaseValue
            default: return .null
            }
        }
        func record(_ side: UnsafeMutablePointer<OpaquePointer?>, filledFrom other: UnsafeMutablePointer<OpaquePointer?>? = nil) -> FeedItem {
            let columns = ["id", "title", "updatedAt"]
            let values = (0..<count).map { value(side[$0] ?? other?[$0] ?? nil) }
            return try! FeedItem(row: Row(Dictionary(uniqueKeysWithValues: zip(columns, values.map { $0 as (any DatabaseValueConvertible)? }))))
        }
        switch op {
        case SQLITE_INSERT: _ = record(new)
        case SQLITE_DELETE: _ = record(old)
        default: _ = (record(old), record(new, filledFrom: old))
        }
        counter.count += 1
    }
}

let feedRows = singleFeedWrite?.rows ?? 50_000
let feedRuns = 10

func makeFeedQueue() throws -> DatabaseQueue {
    try makeQueue(trigger: nil, rows: 0)
}
struct FeedWrite {
    let kind: String, form: String
    let write: (Database) throws -> Void
}
/// One cached statement run once per row, as record writes run.
func perRow(_ sql: String, _ arguments: @escaping (Int) -> StatementArguments) -> (Database) throws -> Void {
    { db in
        let statement = try db.cachedStatement(sql: sql)
        for row in 1...feedRows { try statement.execute(arguments: arguments(row)) }
    }
}
let feedWrites = [
    FeedWrite(kind: "inserted", form: "one statement") { db in try db.execute(sql: """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(feedRows))
        INSERT INTO items(title, updatedAt) SELECT 'Reminder number ' || i, '2024-01-01 00:00:00.000' FROM n
        """) },
    FeedWrite(kind: "updated", form: "one statement") { db in
        try db.execute(sql: "UPDATE items SET updatedAt = '2024-01-02 00:00:00.000', title = title || '!'")
    },
    FeedWrite(kind: "deleted", form: "one statement") { db in try db.execute(sql: "DELETE FROM items") },
    FeedWrite(kind: "inserted", form: "a statement per row", write: perRow("INSERT INTO items(id, title, updatedAt) VALUES (?, ?, ?)") {
        [$0, "Reminder number \($0)", "2024-01-01 00:00:00.000"]
    }),
    FeedWrite(kind: "updated", form: "a statement per row", write: perRow("UPDATE items SET title = ?, updatedAt = ? WHERE id = ?") {
        ["Reminder number \($0)!", "2024-01-02 00:00:00.000", $0]
    }),
    FeedWrite(kind: "deleted", form: "a statement per row", write: perRow("DELETE FROM items WHERE id = ?") { [$0] }),
]
let feedCounter = Counter(), fetchCounter = Counter(), sessionCounter = Counter()
let feedQueues = (bare: try makeFeedQueue(), feed: try makeFeedQueue(), peer: try makeFeedQueue(), session: try makeFeedQueue())
let sessionPeer = SessionPeer(counter: sessionCounter)
precondition(sqlitetriggers_bench_session_available() != 0, "this SQLite has no session extension, the change feeds' peer")
/// A write with the session peer recording it, and its changes read after the commit.
func sessionWrite(_ write: (Database) throws -> Void) throws {
    let peer = sessionPeer
    try feedQueues.session.writeWithoutTransaction { db in
        peer.begin(db)
        try db.inTransaction { try write(db); return .commit }
        peer.end()
    }
}
let feedObservation = try feedQueues.feed.observeChanges(to: FeedItem.self, scheduling: .onWriterQueue) { _ in feedCounter.count += 1 }
let fetchingObserver = FetchingObserver(counter: fetchCounter)
feedQueues.peer.add(transactionObserver: fetchingObserver)
if let single = singleFeedWrite {
    /// The one write callgrind counts; the writes before it (of the same
    /// form) give it rows to update or delete.
    @inline(never) func measuredFeedWrite(_ queue: DatabaseQueue, _ write: FeedWrite) throws {
        if queue === feedQueues.session { try sessionWrite(write.write) } else { try queue.write(write.write) }
    }
    if single.variant >= 4 {
        try feedQueues.bare.write(feedWrites[0].write)
        let decodes = single.variant == 4
        try measuredFeedWrite(feedQueues.bare, FeedWrite(kind: "decoded", form: decodes ? "records" : "rows") { db in
            if decodes { try FeedItem.fetchCursor(db, sql: "SELECT * FROM items").forEach { _ in } }
            else { try Row.fetchCursor(db, sql: "SELECT * FROM items").forEach { _ in } }
        })
        exit(0)
    }
    let queue = [feedQueues.bare, feedQueues.feed, feedQueues.peer, feedQueues.session][single.variant]
    for earlier in feedWrites.indices where earlier < single.write && earlier / 3 == single.write / 3 {
        try queue.write(feedWrites[earlier].write)
    }
    try measuredFeedWrite(queue, feedWrites[single.write])
    exit(0)
}
var feedBest = Array(repeating: [Double](repeating: .infinity, count: 4), count: feedWrites.count)
for _ in 1...feedRuns {
    for (index, feedWrite) in feedWrites.enumerated() {
        for (variant, queue) in [feedQueues.bare, feedQueues.feed, feedQueues.peer, feedQueues.session].enumerated() {
            let start = DispatchTime.now().uptimeNanoseconds
            if variant == 3 { try sessionWrite(feedWrite.write) } else { try queue.write(feedWrite.write) }
            feedBest[index][variant] = min(feedBest[index][variant], Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
    }
}
precondition(feedCounter.count == feedWrites.count * feedRows * feedRuns, "the feed delivered \(feedCounter.count) changes")
precondition(fetchCounter.count == 4 * feedRows * feedRuns, "the peer fetched \(fetchCounter.count) rows")
precondition(sessionCounter.count == feedWrites.count * feedRows * feedRuns, "the session delivered \(sessionCounter.count) changes")
feedObservation.cancel()
var feedPerRowNs: [(feed: Double, peer: Double, session: Double)] = []
for (feedWrite, best) in zip(feedWrites, feedBest) {
    let perRow = { (variant: Int) in (best[variant] - best[0]) / Double(feedRows) * 1e9 }
    feedPerRowNs.append((perRow(1), perRow(2), perRow(3)))
    let what = "change feed, per \(feedWrite.kind) row (\(feedWrite.form)), typed record after commit"
    let records = feedWrite.kind == "updated" ? "old and new records" : feedWrite.kind == "deleted" ? "old record" : "new record"
    print("ROW\t\(what), against a peer that delivers the same\tobserveChanges\t\(perRow(1))\t"
          + "SQLite session + changeset + FeedItem(row:) (\(records))\t\(perRow(3))\tns\t1.0")
    if feedWrite.kind != "deleted" {
        print("ROW\t\(what)\tobserveChanges\t\(perRow(1))\tGRDB TransactionObserver rowids + fetch after commit (new record only)\t\(perRow(2))\tns\t")
    }
}

// The floor of any typed delivery: GRDB's own decoding of one record from a
// statement row, which the feed and the peer both pay (the feed twice for an
// update: old and new). Cursor over the table decoding records, less the
// same cursor stepping rows alone.
do {
    try feedQueues.bare.write(feedWrites[0].write)
    var best = (rows: Double.infinity, records: Double.infinity)
    for _ in 1...feedRuns {
        try feedQueues.bare.read { db in
            var start = DispatchTime.now().uptimeNanoseconds
            try Row.fetchCursor(db, sql: "SELECT * FROM items").forEach { _ in }
            best.rows = min(best.rows, Double(DispatchTime.now().uptimeNanoseconds - start))
            start = DispatchTime.now().uptimeNanoseconds
            try FeedItem.fetchCursor(db, sql: "SELECT * FROM items").forEach { _ in }
            best.records = min(best.records, Double(DispatchTime.now().uptimeNanoseconds - start))
        }
    }
    let decodeNs = (best.records - best.rows) / Double(feedRows)
    print("ROW\tdecoding one typed record (Codable FeedItem(row:), 3 columns, a Date), the floor of typed delivery\tGRDB FeedItem(row:)\t\(decodeNs)\tpaid by the feed and the peer alike; twice by the feed for an update (old and new)\t\tns\t")
    // Transport: each side's cost less the records it decodes (the feed two
    // for an update, GRDB's observer one).
    for (feedWrite, perRow) in zip(feedWrites, feedPerRowNs) where feedWrite.kind != "deleted" {
        let feedRecords = feedWrite.kind == "updated" ? 2.0 : 1.0
        print("ROW\tchange feed transport per \(feedWrite.kind) row (\(feedWrite.form)), net of decoding its records\tobserveChanges\t"
              + "\(perRow.feed - feedRecords * decodeNs)\tGRDB TransactionObserver rowids + fetch, net of decoding\t\(perRow.peer - decodeNs)\tns\t1.0")
    }
}

if changeFeedsOnly { exit(0) }

// The rules' cost: one reminder write (insert a reminder, rename it, tag
// it, complete it) with the six Reminders rules installed from the
// builders, against the same writes with no triggers, and against the same
// rules written by hand as SQL. The builders' triggers must cost nothing
// over the hand-written ones.
struct BenchReminder: TableDescription {
    static let tableName = "reminders"
    enum TriggerColumns {
        static let id = ColumnDescription<Int64>("id", primaryKey: true)
        static let title = ColumnDescription<String>("title")
        static let status = ColumnDescription<Int>("status")
        static let createdAt = ColumnDescription<Date?>("createdAt")
        static let updatedAt = ColumnDescription<Date?>("updatedAt")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title, TriggerColumns.status,
                                                   TriggerColumns.createdAt, TriggerColumns.updatedAt]
}
struct BenchList: TableDescription {
    static let tableName = "remindersLists"
    enum TriggerColumns {
        static let id = ColumnDescription<Int64>("id", primaryKey: true)
        static let title = ColumnDescription<String>("title")
        static let position = ColumnDescription<Int>("position")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title, TriggerColumns.position]
}
struct BenchTag: TableDescription {
    static let tableName = "reminderTags"
    enum TriggerColumns {
        static let reminderID = ColumnDescription<Int64>("reminderID")
        static let tagID = ColumnDescription<Int64>("tagID")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.reminderID, TriggerColumns.tagID]
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
    let queue = try makeQueue(trigger: nil)
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
let writesPerRun = 20_000
let ruleQueues = [
    ("no triggers", try makeRulesQueue { _ in }),
    ("the six rules, from the builders", try makeRulesQueue { db in try builtRules.install(db) }),
    ("the six rules, hand-written SQL", try makeRulesQueue { db in try db.execute(sql: handWrittenRules) }),
    ("the builders' triggers, installed alone", try makeRulesQueue { db in for rule in builtRules.rules { try rule.execute(db) } }),
]
var ruleBest = [Double](repeating: .infinity, count: ruleQueues.count)
for _ in 1...runs {
    for (index, (_, queue)) in ruleQueues.enumerated() {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<writesPerRun {
            // Cached statements, as GRDB's records use: the triggers are
            // compiled into each statement once, and what is left is what
            // they cost at run time.
            try queue.write { db in
                try db.cachedStatement(sql: "INSERT INTO reminders(title, listID) VALUES ('Buy milk', 1)").execute()
                let id = db.lastInsertedRowID
                try db.cachedStatement(sql: "UPDATE reminders SET title = 'Buy oat milk' WHERE id = ?").execute(arguments: [id])
                try db.cachedStatement(sql: "INSERT INTO reminderTags(reminderID, tagID) VALUES (?, 1)").execute(arguments: [id])
                try db.cachedStatement(sql: "UPDATE reminders SET status = 1 WHERE id = ?").execute(arguments: [id])
            }
        }
        ruleBest[index] = min(ruleBest[index], Double(DispatchTime.now().uptimeNanoseconds - start) / Double(writesPerRun))
        try queue.write { db in try db.execute(sql: "DELETE FROM reminders") }
    }
}
let rulesWhat = "one reminder write (insert, rename, tag, complete: one transaction)"
print("ROW\t\(rulesWhat)\t\(ruleQueues[1].0)\t\(ruleBest[1])\t\(ruleQueues[0].0)\t\(ruleBest[0])\tns\t")
// The triggers themselves: the builders' SQL against the hand-written.
print("ROW\t\(rulesWhat)\t\(ruleQueues[3].0)\t\(ruleBest[3])\t\(ruleQueues[2].0)\t\(ruleBest[2])\tns\t1.05")
// What a RuleSet adds: after each commit, whether a schema change dropped
// a rule (two cached PRAGMA schema_version reads).
print("ROW\t\(rulesWhat)\t\(ruleQueues[1].0)\t\(ruleBest[1])\t\(ruleQueues[3].0)\t\(ruleBest[3])\tns\t")
if CommandLine.arguments.dropFirst().first == "--rules" { exit(0) }

// The primary-key migration against the equivalent hand-written SQL: 1,000
// parents and 1,000,000 children with a foreign key, on fresh in-memory
// copies; both derive ids with the same function, so the difference is
// what migratePrimaryKeys adds (parsing, checks, foreign_key_check).
let children = 1_000_000
func makeMigrationQueue() throws -> DatabaseQueue {
    let queue = try makeQueue(trigger: nil)
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE parents(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            CREATE TABLE children(id INTEGER PRIMARY KEY, parentID INTEGER NOT NULL REFERENCES parents(id), title TEXT NOT NULL);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
            INSERT INTO parents(title) SELECT 'Parent ' || i FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(children))
            INSERT INTO children(parentID, title) SELECT 1 + i % 1000, 'Child ' || i FROM n;
            """)
    }
    return queue
}
let handWritten = """
    CREATE TABLE new_parents(id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()), title TEXT NOT NULL);
    INSERT INTO new_parents(rowid, id, title) SELECT rowid, sqlitetriggers_derived_uuid(:salt, 'parents', id), title FROM parents;
    CREATE TABLE new_children(id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()),
      parentID TEXT NOT NULL REFERENCES parents(id), title TEXT NOT NULL);
    INSERT INTO new_children(rowid, id, parentID, title) SELECT rowid, sqlitetriggers_derived_uuid(:salt, 'children', id),
      sqlitetriggers_derived_uuid(:salt, 'parents', parentID), title FROM children;
    DROP TABLE children;
    DROP TABLE parents;
    ALTER TABLE new_parents RENAME TO parents;
    ALTER TABLE new_children RENAME TO children;
    """
var bestHandWritten = Double.infinity, bestMigration = Double.infinity
for _ in 1...3 {
    let manual = try makeMigrationQueue()
    var start = DispatchTime.now().uptimeNanoseconds
    try manual.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        try db.inTransaction {
            try db.execute(sql: handWritten, arguments: ["salt": Data(repeating: 7, count: 32)])
            return .commit
        }
    }
    bestHandWritten = min(bestHandWritten, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    let automatic = try makeMigrationQueue()
    start = DispatchTime.now().uptimeNanoseconds
    try automatic.writeWithoutTransaction { db in _ = try migratePrimaryKeys(db, tables: ["parents", "children"]) }
    bestMigration = min(bestMigration, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    let versions = try automatic.read { db in try Int.fetchSet(db, sql: "SELECT uuid_version(parentID) FROM children") }
    precondition(versions == [8], "the migration did not convert the foreign keys")
}
print("ROW\tprimary-key migration, 1,000 parents and \(children) children\tmigratePrimaryKeys\t\(bestMigration)\thand-written four-step SQL, same ids, rowids kept\t\(bestHandWritten)\ts\t1.1")

// Peak memory of the migration must not grow with the table: 1,000,000
// and 10,000,000 rows, each migrated in a process of its own, on a file.
let small = try migrationMemory(1_000_000), large = try migrationMemory(10_000_000)
print("ROW\tmigration peak RSS, 10,000,000 rows (\(Int(large.seconds)) s)\tmigratePrimaryKeys\t\(large.kib / 1024)\tthe same, 1,000,000 rows (\(Int(small.seconds)) s)\t\(small.kib / 1024)\tMiB\t1.1")
