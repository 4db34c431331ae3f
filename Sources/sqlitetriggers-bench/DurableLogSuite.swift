import Foundation
import GRDB
import SQLiteTriggersGRDB

// The durable log's cost: writes with it on, against the same writes with
// no capture, against triggers written by hand that record the same
// information (table, key, kind; a key change as a delete and an insert),
// and against PowerSync-style CRUD capture by hand (each change with its
// row as JSON). The writer is a plain GRDB connection without the
// extension, as another process is; a second run stamps transactions
// through SQLiteTriggers. Then a consumer's read-and-apply cost per change,
// and the log's bytes per change.

private let durableSchema = """
    CREATE TABLE reminders(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, notes TEXT NOT NULL DEFAULT '',
      status INTEGER NOT NULL DEFAULT 0, updatedAt TEXT);
    """

/// Hand-written triggers that record what the durable log records, the
/// probe of a REPLACE through the rowid (of a table keyed by text) included.
private let sameInformationByHand = """
    CREATE TABLE crud(id INTEGER PRIMARY KEY AUTOINCREMENT, tableName TEXT NOT NULL, kind INTEGER NOT NULL, rowKey);
    CREATE TRIGGER crud_insert AFTER INSERT ON reminders BEGIN
      INSERT INTO crud(tableName, kind, rowKey) VALUES ('reminders', 1, new.id); END;
    CREATE TRIGGER crud_update AFTER UPDATE ON reminders BEGIN
      INSERT INTO crud(tableName, kind, rowKey) SELECT 'reminders', 3, old.id WHERE old.id IS NOT new.id;
      INSERT INTO crud(tableName, kind, rowKey) VALUES ('reminders', CASE WHEN old.id IS NOT new.id THEN 1 ELSE 2 END, new.id); END;
    CREATE TRIGGER crud_delete AFTER DELETE ON reminders BEGIN
      INSERT INTO crud(tableName, kind, rowKey) VALUES ('reminders', 3, old.id); END;
    CREATE TRIGGER crud_replace_insert BEFORE INSERT ON reminders BEGIN
      INSERT INTO crud(tableName, kind, rowKey) SELECT 'reminders', coalesce(sqlite_compileoption_get(-7317), 4), r.id
        FROM reminders AS r WHERE new.rowid <> -1 AND r.rowid = new.rowid; END;
    CREATE TRIGGER crud_replace_update BEFORE UPDATE ON reminders BEGIN
      INSERT INTO crud(tableName, kind, rowKey) SELECT 'reminders', coalesce(sqlite_compileoption_get(-7317), 4), r.id
        FROM reminders AS r WHERE r.rowid = new.rowid AND new.rowid IS NOT old.rowid AND r.id IS NOT old.id; END;
    """

/// PowerSync's shape: a queue of operations, each with its row as JSON.
private let powerSyncStyleByHand = """
    CREATE TABLE ps_crud(id INTEGER PRIMARY KEY AUTOINCREMENT, data TEXT);
    CREATE TRIGGER ps_insert AFTER INSERT ON reminders BEGIN
      INSERT INTO ps_crud(data) VALUES (json_object('op', 'PUT', 'type', 'reminders', 'id', new.id,
        'data', json_object('title', new.title, 'notes', new.notes, 'status', new.status, 'updatedAt', new.updatedAt))); END;
    CREATE TRIGGER ps_update AFTER UPDATE ON reminders BEGIN
      INSERT INTO ps_crud(data) VALUES (json_object('op', 'PATCH', 'type', 'reminders', 'id', new.id,
        'data', json_object('title', new.title, 'notes', new.notes, 'status', new.status, 'updatedAt', new.updatedAt))); END;
    CREATE TRIGGER ps_delete AFTER DELETE ON reminders BEGIN
      INSERT INTO ps_crud(data) VALUES (json_object('op', 'DELETE', 'type', 'reminders', 'id', old.id)); END;
    """

/// A file of its own, in WAL mode with synchronous OFF (the cost measured
/// is the capture's, not the disk's), set up by `setUp` on a connection
/// with the extension, and written through `writer`.
private struct DurableVariant {
    let name: String
    let writer: DatabaseQueue
    let path: String
}

private func makeDurableVariant(_ name: String, directory: URL, stamps: Bool,
                                setUp: (Database) throws -> Void) throws -> DurableVariant {
    let path = directory.appendingPathComponent("\(name.hashValue).sqlite").path
    var extended = Configuration()
    extended.prepareDatabase { db in try db.installSQLiteTriggers() }
    let installer = try DatabaseQueue(path: path, configuration: extended)
    try installer.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA journal_mode = WAL")
        try db.execute(sql: durableSchema)
        try setUp(db)
    }
    try installer.close()
    var config = Configuration()
    config.prepareDatabase { db in
        if stamps { try db.installSQLiteTriggers() }
        try db.execute(sql: "PRAGMA synchronous = OFF")
    }
    return DurableVariant(name: name, writer: try DatabaseQueue(path: path, configuration: config), path: path)
}

/// The backlog row alone (`--durable-backlog`), for profiling it.
func durableBacklogOnly() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sqlitetriggers-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try durableBacklogSuite(makeDurableVariant("durable log, a writer without the extension", directory: directory, stamps: false) { db in
        try db.installDurableLog(for: ["reminders"])
        try db.startDurableConsumer("sync")
    })
}

func durableLogSuite() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sqlitetriggers-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let installLog: (Database) throws -> Void = { db in
        try db.installDurableLog(for: ["reminders"])
        try db.startDurableConsumer("sync")
    }
    let variants = [
        try makeDurableVariant("no capture", directory: directory, stamps: false) { _ in },
        try makeDurableVariant("durable log, a writer without the extension", directory: directory, stamps: false, setUp: installLog),
        try makeDurableVariant("hand-written triggers recording table, key, kind", directory: directory, stamps: false) { db in
            try db.execute(sql: sameInformationByHand)
        },
        try makeDurableVariant("PowerSync-style CRUD triggers by hand (row as JSON)", directory: directory, stamps: false) { db in
            try db.execute(sql: powerSyncStyleByHand)
        },
        try makeDurableVariant("durable log, a writer with SQLiteTriggers (stamps transactions)", directory: directory,
                               stamps: true, setUp: installLog),
        try makeDurableVariant("hand-written triggers (no stamps), a writer with SQLiteTriggers", directory: directory,
                               stamps: true) { db in try db.execute(sql: sameInformationByHand) },
    ]
    let rowsPerRun = 20_000, rowsPerTransaction = 100, runs = 5
    let writes: [(String, String)] = [
        ("insert", "INSERT INTO reminders(id, title) VALUES ('r' || ?, 'Buy milk')"),
        ("update", "UPDATE reminders SET title = 'Buy oat milk', status = 1 WHERE id = 'r' || ?"),
        ("delete", "DELETE FROM reminders WHERE id = 'r' || ?"),
    ]
    var best = [[Double]](repeating: [Double](repeating: .infinity, count: writes.count), count: variants.count)
    for _ in 1...runs {
        for (index, variant) in variants.enumerated() {
            try variant.writer.write { db in
                for table in ["sqlitetriggers_log", "crud", "ps_crud"] where try db.tableExists(table) {
                    try db.execute(sql: "DELETE FROM \(table)")
                }
            }
            for (kind, (_, sql)) in writes.enumerated() {
                let elapsed = try seconds {
                    for start in stride(from: 0, to: rowsPerRun, by: rowsPerTransaction) {
                        try variant.writer.write { db in
                            let statement = try db.cachedStatement(sql: sql)
                            for row in start..<(start + rowsPerTransaction) { try statement.execute(arguments: [row]) }
                        }
                    }
                }
                best[index][kind] = min(best[index][kind], elapsed * 1e9 / Double(rowsPerRun))
            }
        }
    }
    // In time, for information: times on this shared machine drift by
    // several percent between runs, so the targets (1.0 against the same
    // triggers by hand, 1.05 for stamping) are on the instruction counts of
    // Tests/bench/stamp_instructions.py.
    for (kind, (write, _)) in writes.enumerated() {
        let what = "durable log, per \(write == "insert" ? "inserted" : write + "d") row (a statement per row, \(rowsPerTransaction) per transaction)"
        report(what, ours: variants[1].name, best[1][kind], peer: variants[2].name, best[2][kind], unit: "ns")
        report(what, ours: variants[1].name, best[1][kind], peer: variants[3].name, best[3][kind], unit: "ns")
        report(what, ours: variants[1].name, best[1][kind], peer: variants[0].name, best[0][kind], unit: "ns")
        // Stamping's own cost: the same connection (with SQLiteTriggers)
        // against the same triggers by hand, which do not stamp.
        report(what, ours: variants[4].name, best[4][kind], peer: variants[5].name, best[5][kind], unit: "ns")
        report(what, ours: variants[4].name, best[4][kind], peer: variants[1].name, best[1][kind], unit: "ns")
    }
    try durableReadSuite(variants[1])
    try durableBacklogSuite(variants[1])
    try durableWakeupLatencySuite(variants[1], directory: directory)
    try durableSizeSuite(variants[1], byHand: variants[2], powerSync: variants[3])
}

/// A consumer reading the log and applying each change to a replica in
/// the same file, exactly once: per change.
private func durableReadSuite(_ variant: DurableVariant) throws {
    let changes = 20_000, runs = 3
    var config = Configuration()
    config.prepareDatabase { db in
        try db.installSQLiteTriggers()
        try db.execute(sql: "PRAGMA synchronous = OFF")   // as the writers: the CPU's cost, not the disk's
    }
    let consumer = try DatabaseQueue(path: variant.path, configuration: config)
    try consumer.write { db in
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS replica(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL)")
    }
    var best = Double.infinity
    for _ in 1...runs {
        try consumer.write { db in
            try db.execute(sql: "DELETE FROM reminders; DELETE FROM replica")
            try db.acknowledge(db.durableBatch(for: "sync", of: FeedTable("reminders") { _ in () }, limit: Int.max))
        }
        try variant.writer.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO reminders(id, title) VALUES ('r' || ?, 'Buy milk')")
            for row in 0..<changes { try statement.execute(arguments: [row]) }
        }
        let titles = FeedTable("reminders") { row in (row["id"] as String, row["title"] as String) }
        var applied = 0
        let elapsed = try seconds {
            while true {
                let count = try consumer.write { db -> Int in
                    let batch = try db.durableBatch(for: "sync", of: titles)
                    let upsert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO replica(id, title) VALUES (?, ?)")
                    for change in batch.changes {
                        if let (id, title) = change.record { try upsert.execute(arguments: [id, title]) }
                    }
                    try db.acknowledge(batch)
                    return batch.changes.count
                }
                if count == 0 { break }
                applied += count
            }
        }
        precondition(applied == changes, "the consumer applied \(applied) of \(changes) changes")
        best = min(best, elapsed * 1e9 / Double(changes))
    }
    report("durable log, a consumer reading and applying each change (batches of 256, exactly once)",
           ours: "durableBatch + replica upsert + acknowledge", best, peer: "", nil, unit: "ns")
}

/// A consumer catching up with a backlog of 10,000 changes (an app back
/// online): `durableBatch` in batches of 256 with its row each, and
/// `acknowledge`, against the same done by hand in SQL, the log's rows
/// joined to the table and the position moved per batch, decoding the same
/// values. Changes per second printed; the target is on the ratio.
private func durableBacklogSuite(_ variant: DurableVariant) throws {
    let changes = 10_000, runs = 5, limit = 256
    var config = Configuration()
    config.prepareDatabase { db in
        try db.installSQLiteTriggers()
        try db.execute(sql: "PRAGMA synchronous = OFF")
    }
    let consumer = try DatabaseQueue(path: variant.path, configuration: config)
    let titles = FeedTable("reminders") { row in (row["id"] as String, row["title"] as String) }
    var best = (ours: Double.infinity, byHand: Double.infinity)
    for run in 1...runs {
        let (ours, byHand) = ("backlog-ours-\(run)", "backlog-hand-\(run)")
        try consumer.write { db in
            try db.execute(sql: "DELETE FROM reminders")
            try db.startDurableConsumer(ours)
            try db.startDurableConsumer(byHand)
        }
        try variant.writer.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO reminders(id, title) VALUES ('r' || ?, 'Buy milk')")
            for row in 0..<changes { try statement.execute(arguments: [row]) }
        }
        var read = 0
        let oursTime = try seconds {
            while true {
                let count = try consumer.write { db -> Int in
                    let batch = try db.durableBatch(for: ours, of: titles, limit: limit)
                    for change in batch.changes where change.record != nil { read += 1 }
                    try db.acknowledge(batch)
                    return batch.changes.count
                }
                if count == 0 { break }
            }
        }
        precondition(read == changes, "durableBatch read \(read) of \(changes) changes")
        read = 0
        let handTime = try seconds {
            while true {
                let count = try consumer.write { db -> Int in
                    let position = try Int64.fetchOne(db, sql: "SELECT position FROM sqlitetriggers_log_consumers WHERE name = ?",
                                                      arguments: [byHand]) ?? 0
                    let rows = try Row.fetchAll(db.cachedStatement(sql: """
                        SELECT l.id, l.kind, l.rowKey, l.tx, r.id AS rowID, r.title FROM sqlitetriggers_log AS l
                        LEFT JOIN reminders AS r ON r.id = l.rowKey WHERE l.id > ? ORDER BY l.id LIMIT ?
                        """), arguments: [position, limit])
                    for row in rows {
                        if let id: String = row["rowID"] { let record = (id, row["title"] as String); _ = record; read += 1 }
                    }
                    if let last: Int64 = rows.last?["id"] {
                        try db.execute(sql: "UPDATE sqlitetriggers_log_consumers SET position = ? WHERE name = ?",
                                       arguments: [last, byHand])
                    }
                    return rows.count
                }
                if count == 0 { break }
            }
        }
        precondition(read == changes, "the hand-written read took \(read) of \(changes) changes")
        try consumer.write { db in
            try db.removeDurableConsumer(ours)
            try db.removeDurableConsumer(byHand)
        }
        best = (min(best.ours, oursTime), min(best.byHand, handTime))
    }
    let what = "durable log, catching up with a 10,000-change backlog (batches of 256, each with its row, acknowledged)"
    report(what, ours: "durableBatch + acknowledge", best.ours * 1e9 / Double(changes),
           peer: "the same in SQL by hand (log joined to the table, position moved)", best.byHand * 1e9 / Double(changes),
           unit: "ns", target: 1.5)
    report(what + ", changes per second", ours: "durableBatch + acknowledge", Double(changes) / best.ours,
           peer: "the same in SQL by hand", Double(changes) / best.byHand, unit: "changes/s")
}

/// From another process's commit to the consumer's batch, with the
/// defaults a user gets (`observeDurableChanges` with its 1 s poll): the
/// writer (Tests/bench/commit_writer.py) prints the time each commit
/// returned, the batch handler the time it runs.  Writers with and
/// without the extension; the median and the 95th percentile, against the
/// target of 10 ms.
private func durableWakeupLatencySuite(_ variant: DurableVariant, directory: URL) throws {
    let environment = ProcessInfo.processInfo.environment
    guard let python = environment["BENCH_PYTHON"], let extensionPath = environment["BENCH_EXTENSION"] else {
        print("durable wake-up latency: skipped (make bench sets BENCH_PYTHON and BENCH_EXTENSION)")
        return
    }
    let commits = 200
    var config = Configuration()
    config.prepareDatabase { db in try db.installSQLiteTriggers() }
    let consumer = try DatabaseQueue(path: variant.path, configuration: config)
    for (writerName, extraArguments) in [("a writer without the extension", [String]()),
                                         ("a writer with SQLiteTriggers", [extensionPath])] {
        try variant.writer.write { db in try db.execute(sql: "DELETE FROM reminders WHERE id LIKE 'latency-%'") }
        let received = LatencyClock()
        let observation = try consumer.observeDurableChanges(
            to: [FeedTable("reminders") { row in row["id"] as String }], consumer: "latency") { _, batch in
                let now = DispatchTime.now().uptimeNanoseconds
                received.record(batch.changes.compactMap(\.record), at: now)
            }
        var writer = try CommitWriter.start(python: python, path: variant.path, commits: commits, extraArguments: extraArguments)
        writer.wait()
        Thread.sleep(forTimeInterval: 1.5)          // past one poll, for the last batch
        observation.cancel()
        let latencies = writer.latencies(seenBy: received)
        let what = "durable log, another process's commit to the consumer's batch (\(writerName), defaults)"
        report(what + ", median", ours: "observeDurableChanges", latencies[latencies.count / 2],
               peer: "the target", 10, unit: "ms", target: 1.0)
        report(what + ", 95th percentile", ours: "observeDurableChanges", latencies[latencies.count * 95 / 100],
               peer: "the target", 10, unit: "ms", target: 1.0)
    }
}

/// Tests/bench/commit_writer.py, another process committing reminders
/// 'latency-<i>' one transaction each and printing when each commit
/// returned (wall clock); also ServerWakeupSuite.swift.
struct CommitWriter {
    let process: Process
    let output: Pipe
    let commits: Int
    /// Wall clock in the writer, monotonic here: one offset, read at start.
    let wallMinusUptime: Int64
    private(set) var text = ""

    static func start(python: String, path: String, commits: Int, extraArguments: [String]) throws -> CommitWriter {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Tests/bench/commit_writer.py").standardizedFileURL.path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, path, "\(commits)"] + extraArguments
        let output = Pipe()
        process.standardOutput = output
        let offset = Int64(Date().timeIntervalSince1970 * 1e9) - Int64(DispatchTime.now().uptimeNanoseconds)
        try process.run()
        return CommitWriter(process: process, output: output, commits: commits, wallMinusUptime: offset)
    }

    /// Until the writer has committed all and exited.
    mutating func wait() {
        text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
    }

    /// Milliseconds from each commit to when `clock` saw its key, sorted;
    /// stops naming the count when a commit was never seen.
    func latencies(seenBy clock: LatencyClock, what: String = "the consumer") -> [Double] {
        let seen = text.split(separator: "\n").compactMap { line -> Double? in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let committedWall = Int64(parts[1]),
                  let seen = clock.time(of: "latency-\(parts[0])") else { return nil }
            return Double(Int64(seen) + wallMinusUptime - committedWall) / 1e6
        }.sorted()
        precondition(seen.count == commits, "\(what) saw \(seen.count) of \(commits) commits")
        return seen
    }
}

/// When the consumer saw each key.
final class LatencyClock: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String: UInt64] = [:]
    func record(_ keys: [String], at time: UInt64) {
        lock.withLock { for key in keys where seen[key] == nil { seen[key] = time } }
    }
    func time(of key: String) -> UInt64? { lock.withLock { seen[key] } }
}

/// Bytes the log takes per change, with dbstat, after 20,000 inserts.
private func durableSizeSuite(_ variant: DurableVariant, byHand: DurableVariant, powerSync: DurableVariant) throws {
    func bytesPerChange(_ variant: DurableVariant, table: String) throws -> Double {
        try variant.writer.write { db in
            try db.execute(sql: "DELETE FROM reminders; DELETE FROM \(table)")
            let statement = try db.cachedStatement(sql: "INSERT INTO reminders(id, title) VALUES ('reminder-' || ?, 'Buy milk')")
            for row in 0..<20_000 { try statement.execute(arguments: [row]) }
        }
        return try variant.writer.read { db in
            Double(try Int.fetchOne(db, sql: "SELECT sum(pgsize) FROM dbstat WHERE name = ?", arguments: [table]) ?? 0) / 20_000
        }
    }
    let ours = try bytesPerChange(variant, table: "sqlitetriggers_log")
    report("durable log, bytes per change in the file (20,000 inserts)", ours: variant.name, ours,
           peer: byHand.name, try bytesPerChange(byHand, table: "crud"), unit: "bytes")
    report("durable log, bytes per change in the file (20,000 inserts)", ours: variant.name, ours,
           peer: powerSync.name, try bytesPerChange(powerSync, table: "ps_crud"), unit: "bytes")
}
