import Foundation
import GRDB
import SQLiteTriggersBenchSession
import SQLiteTriggersCSQLite
import SQLiteTriggersGRDB

// Change feeds: every committed row change delivered as a typed record,
// against the peer that delivers the same (SQLite's session extension, its
// changeset decoded into the same records) and against GRDB's nearest
// equivalent, a TransactionObserver that collects the changed rowids and
// fetches those rows after the commit. The rows are written two ways, in
// one transaction: one statement for all rows, and one statement per row,
// as record writes run (a table with triggers makes SQLite open a
// statement journal for each). Cost per row over the same writes with
// nothing attached, best of 10: more runs of fewer rows than the observer
// suite's, because the statement-per-row writes vary more here.

struct FeedItem: Codable, FetchableRecord, TableRecord, Sendable {
    static let databaseTableName = "items"
    var id: Int64
    var title: String
    var updatedAt: Date
}

/// GRDB's nearest equivalent of a feed: rowids, then a fetch after commit.
final class FetchingObserver: TransactionObserver {
    var rowIDs: [Int64] = []
    let counter = Counter()
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
    let counter = Counter()

    /// `write` in one transaction, recorded; its changes read after the commit.
    func write(on queue: DatabaseQueue, _ write: (Database) throws -> Void) throws {
        try queue.writeWithoutTransaction { db in
            session = sqlitetriggers_bench_session_start(db.sqliteConnection, "items")
            try db.inTransaction { try write(db); return .commit }
            readChangeset()
        }
    }

    private func readChangeset() {
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

/// One of the suite's writes, over `rows` rows.
struct FeedWrite {
    let kind: String, form: String
    let write: (Database) throws -> Void

    /// Inserts, updates and deletes, as one statement then a statement per
    /// row (Tests/bench/feed_instructions.py numbers them in this order).
    static func all(rows: Int) -> [FeedWrite] {
        /// One cached statement run once per row, as record writes run.
        func perRow(_ sql: String, _ arguments: @escaping (Int) -> StatementArguments) -> (Database) throws -> Void {
            { db in
                let statement = try db.cachedStatement(sql: sql)
                for row in 1...rows { try statement.execute(arguments: arguments(row)) }
            }
        }
        return [
            FeedWrite(kind: "inserted", form: "one statement") { db in try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
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
    }
}

/// The suite's four queues: 0 bare, 1 a change feed, 2 GRDB's fetching
/// observer, 3 the session peer. Each writes with `write(_:variant:)`.
final class FeedVariants {
    let queues: [DatabaseQueue]
    let feedCounter = Counter()
    let fetchingObserver = FetchingObserver()
    let sessionPeer = SessionPeer()
    let feed: CallbackObservation

    init() throws {
        precondition(sqlitetriggers_bench_session_available() != 0, "this SQLite has no session extension, the change feeds' peer")
        queues = try (0..<4).map { _ in try makeQueue(trigger: nil, rows: 0) }
        let counter = feedCounter
        feed = try queues[1].observeChanges(to: FeedItem.self, scheduling: .onWriterQueue) { _ in counter.count += 1 }
        queues[2].add(transactionObserver: fetchingObserver)
    }

    func write(_ write: FeedWrite, variant: Int) throws {
        if variant == 3 { try sessionPeer.write(on: queues[3], write.write) } else { try queues[variant].write(write.write) }
    }
}

/// The one write callgrind counts (Tests/bench/feed_instructions.py
/// toggles collection on this function's name).
@inline(never) func measuredFeedWrite(_ variants: FeedVariants, _ write: FeedWrite, variant: Int) throws {
    try variants.write(write, variant: variant)
}

/// `--change-feed-write VARIANT WRITE ROWS`: one write of `FeedWrite.all`
/// (WRITE) over ROWS rows on one queue (VARIANT as in `FeedVariants`), the
/// writes before it of the same form giving it rows to update or delete.
/// Variants 4 and 5 measure instead, over ROWS inserted rows, a cursor
/// decoding each row's record and the same cursor stepping rows alone: the
/// decoding floor.
func changeFeedWrite(variant: Int, write: Int, rows: Int) throws {
    let variants = try FeedVariants()
    let writes = FeedWrite.all(rows: rows)
    if variant >= 4 {
        try variants.write(writes[0], variant: 0)
        let decodes = variant == 4
        try measuredFeedWrite(variants, FeedWrite(kind: "decoded", form: decodes ? "records" : "rows") { db in
            if decodes { try FeedItem.fetchCursor(db, sql: "SELECT * FROM items").forEach { _ in } }
            else { try Row.fetchCursor(db, sql: "SELECT * FROM items").forEach { _ in } }
        }, variant: 0)
        return
    }
    for earlier in writes.indices where earlier < write && earlier / 3 == write / 3 {
        try variants.write(writes[earlier], variant: variant)
    }
    try measuredFeedWrite(variants, writes[write], variant: variant)
}

func changeFeedSuite() throws {
    let rows = 50_000, runs = 10
    let variants = try FeedVariants()
    let writes = FeedWrite.all(rows: rows)
    var best = Array(repeating: [Double](repeating: .infinity, count: 4), count: writes.count)
    for _ in 1...runs {
        for (index, write) in writes.enumerated() {
            for variant in 0..<4 {
                best[index][variant] = min(best[index][variant], try seconds { try variants.write(write, variant: variant) })
            }
        }
    }
    precondition(variants.feedCounter.count == writes.count * rows * runs, "the feed delivered \(variants.feedCounter.count) changes")
    precondition(variants.fetchingObserver.counter.count == 4 * rows * runs, "the peer fetched \(variants.fetchingObserver.counter.count) rows")
    precondition(variants.sessionPeer.counter.count == writes.count * rows * runs,
                 "the session delivered \(variants.sessionPeer.counter.count) changes")
    variants.feed.cancel()
    var perRowNs: [(feed: Double, peer: Double)] = []
    for (write, best) in zip(writes, best) {
        let perRow = { (variant: Int) in (best[variant] - best[0]) / Double(rows) * 1e9 }
        perRowNs.append((perRow(1), perRow(2)))
        let what = "change feed, per \(write.kind) row (\(write.form)), typed record after commit"
        let records = write.kind == "updated" ? "old and new records" : write.kind == "deleted" ? "old record" : "new record"
        report(what + ", against a peer that delivers the same", ours: "observeChanges", perRow(1),
               peer: "SQLite session + changeset + FeedItem(row:) (\(records))", perRow(3), unit: "ns", target: 1.0)
        if write.kind != "deleted" {
            report(what, ours: "observeChanges", perRow(1),
                   peer: "GRDB TransactionObserver rowids + fetch after commit (new record only)", perRow(2), unit: "ns")
        }
    }

    // The floor of any typed delivery: GRDB's own decoding of one record
    // from a statement row, which the feed and the peer both pay (the feed
    // twice for an update: old and new). A cursor over the table decoding
    // records, less the same cursor stepping rows alone.
    try variants.write(writes[0], variant: 0)
    var floor = (rows: Double.infinity, records: Double.infinity)
    for _ in 1...runs {
        try variants.queues[0].read { db in
            floor.rows = min(floor.rows, try seconds { try Row.fetchCursor(db, sql: "SELECT * FROM items").forEach { _ in } })
            floor.records = min(floor.records, try seconds { try FeedItem.fetchCursor(db, sql: "SELECT * FROM items").forEach { _ in } })
        }
    }
    let decodeNs = (floor.records - floor.rows) / Double(rows) * 1e9
    report("decoding one typed record (Codable FeedItem(row:), 3 columns, a Date), the floor of typed delivery",
           ours: "GRDB FeedItem(row:)", decodeNs,
           peer: "paid by the feed and the peer alike; twice by the feed for an update (old and new)", nil, unit: "ns")
    // Transport: each side's cost less the records it decodes (the feed two
    // for an update, GRDB's observer one). In time, for information: the
    // targets are on the instruction counts (Tests/bench/feed_instructions.py).
    for (write, perRow) in zip(writes, perRowNs) where write.kind != "deleted" {
        let feedRecords = write.kind == "updated" ? 2.0 : 1.0
        report("change feed transport per \(write.kind) row (\(write.form)), net of decoding its records",
               ours: "observeChanges", perRow.feed - feedRecords * decodeNs,
               peer: "GRDB TransactionObserver rowids + fetch, net of decoding", perRow.peer - decodeNs, unit: "ns")
    }
}
