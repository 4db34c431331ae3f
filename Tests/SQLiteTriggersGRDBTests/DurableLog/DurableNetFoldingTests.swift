import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

@TriggerTable("folded") struct FoldedNote: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    var id: String
    var title: String
    var stamp: Int
    var createdAt: Date?
}

/// The durable log's net folding (`durableBatch(..., net: true)`) against
/// the truth: whether each row existed before and after each transaction,
/// whatever order SQLite ran the triggers in.
@Suite struct DurableNetFoldingTests {
    static let schema = """
        CREATE TABLE folded(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL UNIQUE,
                            stamp INTEGER NOT NULL DEFAULT 0, createdAt TEXT);
        CREATE TABLE foldedTags(id TEXT PRIMARY KEY NOT NULL, label TEXT NOT NULL,
                                noteId TEXT NOT NULL REFERENCES folded(id) ON DELETE CASCADE ON UPDATE CASCADE);
        """

    /// A file with the log on both tables; the README's touch rule (its
    /// AFTER INSERT trigger rewrites the row just inserted) on every
    /// connection, beside the log's own triggers.
    static func makeQueue(recursiveTriggers: Bool, extraRules: String = "") throws -> (DatabaseQueue, () -> Void) {
        let path = temporaryDatabasePath()
        try DatabaseQueue(path: path, configuration: installingConfiguration()).write { db in
            try db.execute(sql: schema)
            try db.installDurableLog(for: ["folded", "foldedTags"])
            try db.startDurableConsumer("sync")
        }
        var config = installingConfiguration()
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA recursive_triggers = \(recursiveTriggers ? "ON" : "OFF")")
            try FoldedNote.afterInsertTouch(\.createdAt).execute(db)
            if !extraRules.isEmpty { try db.execute(sql: extraRules) }
        }
        return (try DatabaseQueue(path: path, configuration: config), { removeDatabaseFiles(path) })
    }

    static func kinds(_ transaction: DurableTransaction<FoldedNote>) -> [String] {
        transaction.changes.map { "\($0.kind) \(String.fromDatabaseValue($0.key[0]) ?? "?")" }
    }

    /// make test runs this suite again on Debian's SQLite 3.46.1 and 3.53.4
    /// (run_all.sh's swift-versions stage), naming the version it expects.
    @Test func runsOnTheSQLiteItWasAskedFor() throws {
        guard let expected = ProcessInfo.processInfo.environment["SQLITETRIGGERS_EXPECTED_SQLITE"] else { return }
        let version = try DatabaseQueue().read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()") }
        #expect(version == expected)
    }

    /// Issue 34's newcomer case: with the README's touch rule the log holds
    /// the rule's update before the row's insert; net, it is an insert.
    @Test(arguments: [false, true])
    func anInsertRewrittenByARuleIsAnInsert(recursiveTriggers: Bool) throws {
        let (dbQueue, cleanup) = try Self.makeQueue(recursiveTriggers: recursiveTriggers)
        defer { cleanup() }
        try dbQueue.write { db in try FoldedNote(id: "a", title: "A", stamp: 0).insert(db) }
        let (exact, net) = try dbQueue.read { db in
            (try db.durableBatch(for: "sync", of: FoldedNote.self), try db.durableBatch(for: "sync", of: FoldedNote.self, net: true))
        }
        #expect(exact.changes.count == 2, "the insert and the rule's update, in trigger order")
        #expect(net.transactions.map(Self.kinds) == [["inserted a"]])
        #expect(net.changes.first?.record?.createdAt != nil, "the row as it is, stamped")
    }

    /// Every case issue 34 names, in one transaction each, in both modes.
    @Test(arguments: [false, true])
    func eachTransactionFoldsToItsNetChange(recursiveTriggers: Bool) throws {
        let (dbQueue, cleanup) = try Self.makeQueue(recursiveTriggers: recursiveTriggers)
        defer { cleanup() }
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO folded(id, title) VALUES ('kept', 'K'), ('gone', 'G'), ('moved', 'M'), ('back', 'B')")
        }
        let steps = [
            "INSERT INTO folded(id, title) VALUES ('x', 'X'); UPDATE folded SET title = 'XX' WHERE id = 'x'",   // insert, update
            "INSERT INTO folded(id, title) VALUES ('y', 'Y'); DELETE FROM folded WHERE id = 'y'",               // insert, delete
            "DELETE FROM folded WHERE id = 'back'; INSERT INTO folded(id, title) VALUES ('back', 'B2')",         // delete, insert
            "UPDATE folded SET id = 'moved2' WHERE id = 'moved'",                                                // key change
            "UPDATE folded SET title = 'K2' WHERE id = 'kept'; DELETE FROM folded WHERE id = 'gone'",           // update; delete
            "INSERT OR REPLACE INTO folded(id, title) VALUES ('z', 'K2')",                                       // replaces 'kept' by title
        ]
        for step in steps { try dbQueue.write { db in try db.execute(sql: step) } }
        let batch = try dbQueue.read { db in try db.durableBatch(for: "sync", of: FoldedNote.self, net: true) }
        // Changes come in the order rows were first logged: compared sorted.
        #expect(batch.transactions.dropFirst().map { Self.kinds($0).sorted() } == [
            ["inserted x"], ["updated back"], ["deleted moved", "inserted moved2"],
            ["deleted gone", "updated kept"], ["deleted kept", "inserted z"],
        ])
        #expect(batch.transactions.count == 6, "the insert-then-delete transaction is nothing")
    }

    /// A later transaction beyond the batch does not change what an earlier
    /// one did: a row deleted, then inserted again after the batch's end.
    @Test func aTransactionIsFoldedAgainstTheNextOneNotTheRowNow() throws {
        let (dbQueue, cleanup) = try Self.makeQueue(recursiveTriggers: false)
        defer { cleanup() }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO folded(id, title) VALUES ('r', 'R')") }
        try dbQueue.write { db in try db.execute(sql: "DELETE FROM folded WHERE id = 'r'") }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO folded(id, title) VALUES ('r', 'R again')") }
        let kinds = try dbQueue.read { db in
            try [2, 3, 4].map { limit in
                try db.durableBatch(for: "sync", of: FoldedNote.self, limit: limit, net: true).transactions.map(Self.kinds)
            }
        }
        #expect(kinds[0] == [["inserted r"]], "the first transaction alone (two rows: the insert and the touch)")
        #expect(kinds[1] == [["inserted r"], ["deleted r"]], "deleted, though the row exists now")
        #expect(kinds[2] == [["inserted r"], ["deleted r"], ["inserted r"]])
    }

    /// A transaction that inserted and deleted a row leaves open whether it
    /// exists after: the batch reads the later transactions for it, since
    /// the row now (inserted again later) says nothing of that moment.
    @Test func anInsertThenDeleteIsNothingEvenWhenTheRowIsBackLater() throws {
        let (dbQueue, cleanup) = try Self.makeQueue(recursiveTriggers: false)
        defer { cleanup() }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO folded(id, title) VALUES ('q', 'Q'); DELETE FROM folded WHERE id = 'q'") }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO folded(id, title) VALUES ('q', 'Q again')") }
        let (first, both) = try dbQueue.read { db in
            (try db.durableBatch(for: "sync", of: FoldedNote.self, limit: 3, net: true),
             try db.durableBatch(for: "sync", of: FoldedNote.self, limit: 5, net: true))
        }
        #expect(first.position == 3 && first.transactions.isEmpty, "the first transaction alone: nothing")
        #expect(both.transactions.map(Self.kinds) == [["inserted q"]])
    }
}

// MARK: - The randomized oracle

extension DurableNetFoldingTests {
    /// One committed transaction as the oracle saw it.
    struct Committed {
        var stamp: Int64?
        var lastLogId: Int64
        /// Each row's values before and after ("table key" to values).
        var before: [String: String]
        var after: [String: String]
        /// Rows the two documented limits may misread (DurableChange.Kind).
        var limitRows: Set<String>
        /// What the log holds of it, to explain a mismatch.
        var logged: String
    }

    static let keys = (0..<8).map { "n\($0)" }
    static let tagKeys = (0..<5).map { "t\($0)" }
    static let titles = ["a", "b", "c", "d", "doomed1", "doomed2", "phoenix1", "phoenix2"]

    /// Every row of both tables, as "table key" to its values.
    static func snapshot(_ db: Database) throws -> [String: String] {
        var rows: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, title, stamp, createdAt FROM folded") {
            rows["folded \(row["id"] as String)"] = "\(row["title"] as String)|\(row["stamp"] as Int)|\(row["createdAt"] as String? ?? "-")"
        }
        for row in try Row.fetchAll(db, sql: "SELECT id, label, noteId FROM foldedTags") {
            rows["foldedTags \(row["id"] as String)"] = "\(row["label"] as String)|\(row["noteId"] as String)"
        }
        return rows
    }

    /// Rows of the documented limits (recursive_triggers OFF), noted
    /// before the statement runs: REPLACE over an existing key, and a
    /// write's probe of a row when the write may not replace it.
    struct LimitCandidates {
        var replaced = Set<String>()
        var probed = Set<String>()
    }

    /// One random statement, noting its limit candidates.
    static func randomStatement(_ db: Database, recursiveTriggers: Bool, limitRows: inout LimitCandidates,
                                using rng: inout SplitMix64) throws -> String {
        let k = keys.randomElement(using: &rng)!, k2 = keys.randomElement(using: &rng)!
        let t = titles.randomElement(using: &rng)!, tag = tagKeys.randomElement(using: &rng)!
        let exists = { (id: String) in try Bool.fetchOne(db, sql: "SELECT 1 FROM folded WHERE id = ?", arguments: [id]) ?? false }
        let holder = { (title: String) in try String.fetchOne(db, sql: "SELECT id FROM folded WHERE title = ?", arguments: [title]) }
        // A write ignored (or upserted) after its probe found the title's
        // holder; with recursive_triggers ON the probe says it is no deletion.
        func probedWithoutReplacing() throws {
            if !recursiveTriggers, let j = try holder(t) { limitRows.probed.insert("folded \(j)") }
        }
        switch Int.random(in: 0..<16, using: &rng) {
        case 0, 1: return "INSERT INTO folded(id, title) VALUES ('\(k)', '\(t)')"
        case 2:
            try probedWithoutReplacing()
            return "INSERT OR IGNORE INTO folded(id, title) VALUES ('\(k)', '\(t)')"
        case 3:
            if !recursiveTriggers, try exists(k) { limitRows.replaced.insert("folded \(k)") }
            return "INSERT OR REPLACE INTO folded(id, title) VALUES ('\(k)', '\(t)')"
        case 4:
            try probedWithoutReplacing()
            return "INSERT INTO folded(id, title) VALUES ('\(k)', '\(t)') ON CONFLICT(id) DO UPDATE SET title = excluded.title"
        case 5: return "UPDATE folded SET title = '\(t)' WHERE id = '\(k)'"
        case 6: return "UPDATE OR REPLACE folded SET title = '\(t)' WHERE id = '\(k)'"
        case 7:
            if !recursiveTriggers, try exists(k), let j = try holder(t), j != k { limitRows.probed.insert("folded \(j)") }
            return "UPDATE OR IGNORE folded SET title = '\(t)' WHERE id = '\(k)'"
        case 8: return "UPDATE folded SET id = '\(k2)' WHERE id = '\(k)'"
        case 9:
            if !recursiveTriggers, k != k2, try exists(k), try exists(k2) { limitRows.replaced.insert("folded \(k2)") }
            return "UPDATE OR REPLACE folded SET id = '\(k2)' WHERE id = '\(k)'"
        case 10, 11: return "DELETE FROM folded WHERE id = '\(k)'"
        case 12: return "INSERT INTO foldedTags(id, label, noteId) VALUES ('\(tag)', '\(t)', '\(k)')"
        case 13: return "UPDATE foldedTags SET noteId = '\(k)' WHERE id = '\(tag)'"
        case 14: return "DELETE FROM foldedTags WHERE id = '\(tag)'"
        default: return "UPDATE folded SET stamp = stamp + 1 WHERE title = '\(t)'"
        }
    }

    /// Random transactions through every write path of issue 34 (the touch
    /// rule and a persistent rule that deletes the row it was inserted
    /// with, a TEMP rule that inserts a deleted row again, REPLACE over the
    /// key and over a UNIQUE column, upserts, ignored writes, key changes,
    /// cascades, failing statements, savepoints rolled back, rollbacks),
    /// read by a consumer in net batches of random sizes, some transactions
    /// behind: each transaction's changes must be the difference of the
    /// tables before and after it, kind for kind. The rows of the two
    /// documented limits (REPLACE over an existing key with
    /// `recursive_triggers` OFF; a write ignored after its probe) may be
    /// misread in their batch; they are counted, and must stay rare.
    /// SQLITETRIGGERS_LOG_TRANSACTIONS runs it longer.
    @Test(arguments: [false, true])
    func netBatchesAreTheDifferenceOfTheTables(recursiveTriggers: Bool) throws {
        let count = Int(ProcessInfo.processInfo.environment["SQLITETRIGGERS_LOG_TRANSACTIONS"] ?? "") ?? 500
        let (dbQueue, cleanup) = try Self.makeQueue(recursiveTriggers: recursiveTriggers, extraRules: """
            CREATE TEMP TRIGGER foldedPhoenix AFTER DELETE ON main.folded WHEN old.title LIKE 'phoenix%' BEGIN
              INSERT INTO folded(id, title) VALUES (old.id, 'risen ' || old.title); END;
            """)
        defer { cleanup() }
        try dbQueue.write { db in
            try db.execute(sql: """
                CREATE TRIGGER foldedDoom AFTER INSERT ON folded WHEN new.title LIKE 'doomed%' BEGIN
                  DELETE FROM folded WHERE id = new.id; END;
                """)
        }
        var rng = SplitMix64(seed: recursiveTriggers ? 34 : 43)
        var committed: [Committed] = []
        var unread = 0          // the first transaction the consumer has not read
        var checkedChanges = 0, limitRowsSeen = 0, mismatches: [String] = []
        let tables = [FeedTable("folded") { row in "\(row["title"] as String)" },
                      FeedTable("foldedTags") { row in "\(row["label"] as String)" }]

        for step in 0..<count {
            var limitRows = LimitCandidates()
            let outcome: Committed? = try dbQueue.writeWithoutTransaction { db in
                let before = try Self.snapshot(db)
                try db.execute(sql: "BEGIN")
                for _ in 0..<Int.random(in: 1...5, using: &rng) {
                    let savepoint = Int.random(in: 0..<8, using: &rng) == 0
                    if savepoint { try db.execute(sql: "SAVEPOINT s") }
                    for _ in 0..<(savepoint ? 2 : 1) {
                        let sql = try Self.randomStatement(db, recursiveTriggers: recursiveTriggers,
                                                           limitRows: &limitRows, using: &rng)
                        do { try db.execute(sql: sql) } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                            // A failing statement: SQLite undoes it, and the log's rows with it.
                        }
                    }
                    if savepoint { try db.execute(sql: "ROLLBACK TO s; RELEASE s") }
                }
                if Int.random(in: 0..<10, using: &rng) == 0 {
                    try db.execute(sql: "ROLLBACK")
                    return nil
                }
                try db.execute(sql: "COMMIT")
                let last = committed.last?.lastLogId ?? 0
                let stamps = try Int64?.fetchAll(db, sql: "SELECT DISTINCT tx FROM sqlitetriggers_log WHERE id > ?", arguments: [last])
                let lastLogId = try db.durableLogEnd()
                #expect(stamps.count <= 1 && stamps.allSatisfy { $0 != nil }, "one stamp per transaction")
                let logged = try String.fetchOne(db, sql: """
                    SELECT group_concat(tableId || ':' || rowKey || ':' || kind, ' ') FROM sqlitetriggers_log WHERE id > ?
                    """, arguments: [last]) ?? ""
                return Committed(stamp: stamps.first ?? nil, lastLogId: lastLogId, before: before,
                                 after: try Self.snapshot(db), limitRows: limitRows.replaced.filter { before[$0] != nil }
                                    .union(limitRows.probed.filter { before[$0] == nil }),
                                 logged: logged)
            }
            if let outcome { committed.append(outcome) }
            // Sometimes read, with a random limit, leaving later transactions unread.
            let last = step == count - 1
            guard last || Int.random(in: 0..<3, using: &rng) == 0 || committed.count - unread > 12 else { continue }
            let limit = last ? 1_000_000 : Int.random(in: 1...12, using: &rng)
            let batch = try dbQueue.write { db in
                let batch = try db.durableBatch(for: "sync", of: tables, limit: limit, net: true)
                try db.acknowledge(batch)
                return batch
            }
            let read = committed[unread...].prefix { $0.lastLogId <= batch.position }
            for (index, transaction) in zip(read.indices, read) {
                // Rows a documented limit may misread: in this transaction,
                // and in earlier ones through the fold's backward reading.
                let exempt = committed[index...].reduce(into: Set<String>()) { $0.formUnion($1.limitRows) }
                let delivered = batch.transactions.first { $0.id != nil && $0.id == transaction.stamp }
                var actual: [String: DurableChange<String>.Kind] = [:]
                for change in delivered?.changes ?? [] {
                    actual["\(change.tableName) \(String.fromDatabaseValue(change.key[0]) ?? "?")"] = change.kind
                }
                for row in Set(transaction.before.keys).union(transaction.after.keys).union(actual.keys) {
                    let was = transaction.before[row], now = transaction.after[row]
                    let expected: DurableChange<String>.Kind? = switch (was, now) {
                    case (nil, nil): nil
                    case (nil, _): .inserted
                    case (_, nil): .deleted
                    default: was == now ? nil : .updated
                    }
                    let unchanged = was != nil && was == now
                    if expected == nil && actual[row] == nil { continue }
                    if exempt.contains(row) { limitRowsSeen += 1; continue }
                    checkedChanges += 1
                    if actual[row] != expected && !(unchanged && actual[row] == .updated) {
                        mismatches.append("\(row): \(was ?? "absent") -> \(now ?? "absent") delivered as "
                                          + "\(actual[row].map { "\($0)" } ?? "nothing"); logged \(transaction.logged)")
                    }
                }
            }
            unread += read.count
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(unread == committed.count, "every transaction was read")
        #expect(checkedChanges > count / 2, "the oracle compared \(checkedChanges) rows")
        if recursiveTriggers { #expect(limitRowsSeen == 0, "with recursive_triggers ON the fold has no limit") }
        #expect(limitRowsSeen * 5 < checkedChanges, "documented limits stay rare: \(limitRowsSeen) of \(checkedChanges)")
    }
}
