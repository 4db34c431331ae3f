import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

// The server's shape: a JSON service's request handlers, 16 or 64 at once,
// on one DatabasePool (WAL), one row per request and per transaction, in
// the mix a task service sees: 30% creates, 30% updates, 15% deletes, 25%
// reads by key. Each configuration of the library against the same
// service without it, side by side in one run: throughput (as time per
// request: smaller is better), p50 and p99 latency, with GRDB's statement
// cache and without it (`execute(sql:)` compiles each statement, and the
// triggers' programs with it, per request).
//
// Every side runs the same statements, keys made by the handler; the
// service without rules stamps createdAt/updatedAt itself, and where the
// configuration has them, persistent touch rules stamp the rows instead.
// synchronous = NORMAL on every side, as a server on WAL runs.

@TriggerTable("tasks") struct ServerTask {
    var id: String
    var title: String
    var done: Int
    var createdAt: Date?
    var updatedAt: Date?
}

/// What a server installs: touch stamps for every writer, and a title no
/// writer may leave empty.
let serverRules = RuleSet {
    ServerTask.afterInsertTouch(\.createdAt)
    ServerTask.afterUpdateTouch(\.updatedAt)
    ServerTask.createTempTrigger(before: .insert { new in
        .raise(.abort, "A task needs a title.", when: new.title == "")
    })
}

/// One configuration: what the service runs besides its requests.
struct ServerConfiguration: Sendable {
    let name: String
    var usesLibrary = true
    var rules = false
    var log = false
    var consumer = false
    var feed: CallbackScheduling?
    /// The floor of rules + log, SQLite's own cost: the same touch, RAISE
    /// and log triggers written by hand (`handWrittenFloor`), a log table
    /// with an INTEGER PRIMARY KEY and nothing else, on connections
    /// without SQLiteTriggers.
    var handWritten = false

    static let all: [ServerConfiguration] = [
        ServerConfiguration(name: "plain GRDB (no SQLiteTriggers)", usesLibrary: false),
        ServerConfiguration(name: "persistent rules", rules: true),
        ServerConfiguration(name: "durable log", log: true),
        ServerConfiguration(name: "rules + log", rules: true, log: true),
        ServerConfiguration(name: "log + exactly-once audit consumer", log: true, consumer: true),
        ServerConfiguration(name: "change feed (.onWriterQueue)", feed: .onWriterQueue),
        ServerConfiguration(name: "change feed (.async)", feed: .async(onQueue: DispatchQueue(label: "bench.feed"))),
        ServerConfiguration(name: "everything (rules, log, consumer, feed)", rules: true, log: true, consumer: true,
                            feed: .onWriterQueue),
        // Loading us changes nothing until we are used: the floor of the rest.
        ServerConfiguration(name: "SQLiteTriggers installed, nothing used"),
        // The file of rules + log, written by a service without
        // SQLiteTriggers: the triggers' own cost, without the stamp, the
        // transaction's join and the wake-ups.
        ServerConfiguration(name: "rules + log, writers without SQLiteTriggers", usesLibrary: false, rules: true, log: true),
        ServerConfiguration(name: "the same triggers by hand (the floor of rules + log)", usesLibrary: false, handWritten: true),
    ]

    /// Indexes in ``all`` that `make bench`'s targets and rows name.
    static let plainIndex = 0, rulesAndLogIndex = 3, everythingIndex = 7, floorIndex = 10
}

/// What a service that wanted rules + log without SQLiteTriggers would
/// write: a touch per stamp (the insert's sets both, as the rule set's fold
/// does), the RAISE, and a trigger per kind inserting the change into a
/// table of its own. The least any log in the file costs: a row in a
/// second table per change, a second page per commit.
let handWrittenFloor = """
    CREATE TRIGGER tasks_touch_insert AFTER INSERT ON tasks BEGIN
      UPDATE tasks SET createdAt = strftime('%Y-%m-%d %H:%M:%f', 'now'), updatedAt = strftime('%Y-%m-%d %H:%M:%f', 'now')
      WHERE rowid = new.rowid;
    END;
    CREATE TRIGGER tasks_touch_update AFTER UPDATE ON tasks WHEN new.updatedAt IS old.updatedAt BEGIN
      UPDATE tasks SET updatedAt = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE rowid = new.rowid;
    END;
    CREATE TRIGGER tasks_title BEFORE INSERT ON tasks WHEN new.title = '' BEGIN
      SELECT RAISE(ABORT, 'A task needs a title.');
    END;
    CREATE TABLE changes(id INTEGER PRIMARY KEY, tableId INTEGER NOT NULL, kind INTEGER NOT NULL, rowKey, tx);
    CREATE TRIGGER tasks_log_insert AFTER INSERT ON tasks BEGIN
      INSERT INTO changes(tableId, kind, rowKey) VALUES (1, 1, new.id);
    END;
    CREATE TRIGGER tasks_log_update AFTER UPDATE ON tasks BEGIN
      INSERT INTO changes(tableId, kind, rowKey) VALUES (1, 2, new.id);
    END;
    CREATE TRIGGER tasks_log_delete AFTER DELETE ON tasks BEGIN
      INSERT INTO changes(tableId, kind, rowKey) VALUES (1, 3, old.id);
    END;
    """

/// One run's figures.
struct ServerRun {
    var requests = 0
    var seconds = 0.0
    var latencies: [Double] = []       // seconds, sorted
    var auditLatencies: [Double] = []  // seconds, sorted: see ServerUnderTest.committedAt
    var microsecondsPerRequest: Double { seconds * 1e6 / Double(requests) }
    func auditLatency(_ p: Double) -> Double {
        auditLatencies.isEmpty ? .nan : auditLatencies[min(auditLatencies.count - 1, Int(Double(auditLatencies.count) * p))] * 1e6
    }
    func percentile(_ p: Double) -> Double {
        latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] * 1e6
    }
}

/// The keys a handler may update, delete or read: those created and not
/// yet deleted.
final class LiveKeys: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [String] = []
    func add(_ key: String) { lock.lock(); keys.append(key); lock.unlock() }
    func any() -> String? {
        lock.lock(); defer { lock.unlock() }
        return keys.randomElement()
    }
    func take() -> String? {
        lock.lock(); defer { lock.unlock() }
        guard !keys.isEmpty else { return nil }
        let index = Int.random(in: 0..<keys.count)
        keys.swapAt(index, keys.count - 1)
        return keys.removeLast()
    }
}

/// A service on a fresh file: its pool, its observations, and what they saw.
final class ServerUnderTest: @unchecked Sendable {
    let configuration: ServerConfiguration
    let pool: DatabasePool
    let keys = LiveKeys()
    let fed = Counter()
    let audited = Counter()
    let batches = Counter()
    let lock = NSLock()
    /// When each created row's transaction committed, and how long after it
    /// the audit consumer's batch held the row (seconds).
    var committedAt: [String: UInt64] = [:]
    var auditLatencies: [Double] = []
    var observations: [Any] = []

    /// `otherProcessTable`: a logged table `reminders(id, title)` that the
    /// service never writes, for another process's commits
    /// (ServerWakeupSuite.swift).
    init(_ configuration: ServerConfiguration, path: String, otherProcessTable: Bool = false) throws {
        self.configuration = configuration
        var config = Configuration()
        let usesLibrary = configuration.usesLibrary
        config.prepareDatabase { db in
            if usesLibrary { try db.installSQLiteTriggers() }
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        // The schema, the rules and the log are installed by a connection
        // with SQLiteTriggers (the log's installer is a function of ours),
        // whatever the service's own connections load.
        var setup = Configuration()
        setup.prepareDatabase { db in try db.installSQLiteTriggers() }
        try DatabaseQueue(path: path, configuration: setup).write { db in
            try db.execute(sql: """
                CREATE TABLE tasks(id TEXT PRIMARY KEY NOT NULL,
                  title TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0, createdAt TEXT, updatedAt TEXT);
                CREATE TABLE audit(id INTEGER PRIMARY KEY, taskId TEXT NOT NULL, kind TEXT NOT NULL);
                """)
            if configuration.rules { try serverRules.installPersistently(db) }
            if configuration.handWritten { try db.execute(sql: handWrittenFloor) }
            if otherProcessTable { try db.execute(sql: "CREATE TABLE reminders(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL)") }
            if configuration.log {
                try db.installDurableLog(for: otherProcessTable ? ["tasks", "reminders"] : ["tasks"])
                try db.startDurableConsumer("audit")
            }
        }
        // Another process may hold the write lock (ServerWakeupSuite.swift):
        // wait for it, as a server sharing its file would.
        config.busyMode = .timeout(10)
        pool = try DatabasePool(path: path, configuration: config)
        try pool.write { db in
            for number in 0..<2_000 {
                let id = UUID().uuidString.lowercased()
                try db.cachedStatement(sql: "INSERT INTO tasks(id, title, createdAt, updatedAt) VALUES (?, ?, ?, ?)")
                    .execute(arguments: [id, "Task \(number)", Date(), Date()])
                keys.add(id)
            }
        }
        if configuration.consumer {
            let taskIds = FeedTable("tasks") { _ in () }
            observations.append(try pool.observeDurableChanges(to: [taskIds], consumer: "audit", net: true,
                                                               onError: { error in fatalError("audit: \(error)") }) { [unowned self] db, batch in
                let now = DispatchTime.now().uptimeNanoseconds
                lock.lock()
                batches.count += 1
                audited.count += batch.changes.count
                for change in batch.changes where change.kind == .inserted {
                    if let key = String.fromDatabaseValue(change.key[0]), let committed = committedAt.removeValue(forKey: key) {
                        auditLatencies.append(Double(now - committed) / 1e9)
                    }
                }
                lock.unlock()
                let insert = try db.cachedStatement(sql: "INSERT INTO audit(taskId, kind) VALUES (?, ?)")
                for change in batch.changes { try insert.execute(arguments: [change.key[0], "\(change.kind)"]) }
            })
        }
        if let scheduling = configuration.feed {
            let fed = self.fed, lock = self.lock
            observations.append(try pool.observeTransactions(of: FeedTable("tasks") { row in row["id"] as String? },
                                                             scheduling: scheduling) { transaction in
                lock.lock(); fed.count += transaction.changes.count; lock.unlock()
            })
        }
    }

    /// One request of the mix; `cached` says whether it uses GRDB's
    /// statement cache.
    func request(_ dice: Int, cached: Bool) throws {
        func run(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws {
            if cached { try db.cachedStatement(sql: sql).execute(arguments: arguments) }
            else { try db.execute(sql: sql, arguments: arguments) }
        }
        let stampsByHand = !configuration.rules && !configuration.handWritten
        switch dice {
        case 0..<30:
            // Keys from the handler, the same on every side, so that each
            // configuration runs the very same statements.
            let id = UUID().uuidString.lowercased()
            try pool.write { db in
                if stampsByHand {
                    try run(db, "INSERT INTO tasks(id, title, createdAt, updatedAt) VALUES (?, ?, ?, ?)",
                            [id, "Task \(dice)", Date(), Date()])
                } else {
                    try run(db, "INSERT INTO tasks(id, title) VALUES (?, ?)", [id, "Task \(dice)"])
                }
            }
            if configuration.consumer {
                let committed = DispatchTime.now().uptimeNanoseconds
                lock.lock(); committedAt[id] = committed; lock.unlock()
            }
            keys.add(id)
        case 30..<60:
            guard let id = keys.any() else { return try request(0, cached: cached) }
            try pool.write { db in
                if stampsByHand {
                    try run(db, "UPDATE tasks SET title = ?, done = ?, updatedAt = ? WHERE id = ?",
                            ["Renamed \(dice)", dice & 1, Date(), id])
                } else {
                    try run(db, "UPDATE tasks SET title = ?, done = ? WHERE id = ?", ["Renamed \(dice)", dice & 1, id])
                }
            }
        case 60..<75:
            guard let id = keys.take() else { return try request(0, cached: cached) }
            try pool.write { db in try run(db, "DELETE FROM tasks WHERE id = ?", [id]) }
        default:
            guard let id = keys.any() else { return try request(0, cached: cached) }
            _ = try pool.read { db in
                cached ? try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM tasks WHERE id = ?"), arguments: [id])
                       : try Row.fetchOne(db, sql: "SELECT * FROM tasks WHERE id = ?", arguments: [id])
            }
        }
    }

    /// `writers` handlers, each on a thread of its own, for `duration`
    /// seconds.
    func load(writers: Int, duration: Double, cached: Bool) throws -> ServerRun {
        let start = DispatchTime.now().uptimeNanoseconds
        let deadline = start + UInt64(duration * 1e9)
        final class Results: @unchecked Sendable { var perThread: [[Double]] = [] }
        let results = Results()
        results.perThread = [[Double]](repeating: [], count: writers)
        let resultsLock = NSLock()
        let group = DispatchGroup()
        for index in 0..<writers {
            group.enter()
            let thread = Thread { [self] in
                var latencies: [Double] = []
                latencies.reserveCapacity(4096)
                while true {
                    let began = DispatchTime.now().uptimeNanoseconds
                    if began >= deadline { break }
                    do { try request(Int.random(in: 0..<100), cached: cached) }
                    catch { fatalError("a request failed: \(error)") }
                    latencies.append(Double(DispatchTime.now().uptimeNanoseconds - began) / 1e9)
                }
                resultsLock.lock(); results.perThread[index] = latencies; resultsLock.unlock()
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.wait()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let latencies = results.perThread.flatMap { $0 }.sorted()
        return ServerRun(requests: latencies.count, seconds: elapsed, latencies: latencies)
    }

    /// Waits until the audit consumer has caught up, and checks that the
    /// audit has one row per net change: the run counts only if it did.
    func drain() throws {
        guard configuration.consumer else { return }
        for _ in 0..<500 {
            let (position, end) = try pool.read { db in
                (try Int64.fetchOne(db, sql: "SELECT position FROM sqlitetriggers_log_consumers WHERE name = 'audit'") ?? 0,
                 try Int64.fetchOne(db, sql: "SELECT coalesce(max(id), 0) FROM sqlitetriggers_log") ?? 0)
            }
            if position >= end { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        fatalError("the audit consumer did not catch up")
    }
}

func serverSuite() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sqlitetriggers-server-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let environment = ProcessInfo.processInfo.environment
    let duration = environment["BENCH_SERVER_SECONDS"].flatMap(Double.init) ?? 1.5
    let rounds = environment["BENCH_SERVER_ROUNDS"].flatMap(Int.init) ?? 3
    // To profile one configuration: BENCH_SERVER_ONLY=7 (without 0, the
    // plain service, nothing is reported).
    let only = environment["BENCH_SERVER_ONLY"].map { Set($0.split(separator: ",").compactMap { Int($0) }) }
    let configurations = ServerConfiguration.all.enumerated().filter { only?.contains($0.offset) ?? true }
    struct Shape: Hashable { let writers: Int; let cached: Bool }
    // BENCH_SERVER_WRITERS=1 measures each request's own cost, without
    // contention (for profiling).
    let writerCounts = environment["BENCH_SERVER_WRITERS"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? [16, 64]
    let cachedModes = environment["BENCH_SERVER_CACHED_ONLY"] == nil ? [true, false] : [true]
    let shapes = cachedModes.flatMap { cached in writerCounts.map { Shape(writers: $0, cached: cached) } }
    var runs = [Shape: [Int: [ServerRun]]]()
    // The median round of each: time on this shared machine drifts by
    // several percent, and a p99 by more.
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    var file = 0
    for _ in 1...rounds {
        for (index, configuration) in configurations {
            file += 1
            let server = try ServerUnderTest(configuration, path: directory.appendingPathComponent("\(file).sqlite").path)
            for shape in shapes {
                var run = try server.load(writers: shape.writers, duration: duration, cached: shape.cached)
                try server.drain()
                server.lock.lock()
                run.auditLatencies = server.auditLatencies.sorted()
                server.auditLatencies = []
                server.committedAt = [:]
                server.lock.unlock()
                if environment["BENCH_SERVER_VERBOSE"] != nil {
                    FileHandle.standardError.write(Data("\(configuration.name), \(shape): \(run.requests) requests, \(server.batches.count) batches, \(server.audited.count) audited, \(server.fed.count) fed\n".utf8))
                }
                runs[shape, default: [:]][index, default: []].append(run)
            }
            server.observations.removeAll()
            try server.pool.close()
        }
    }
    // An exactly-once consumer under the load: from a create's commit to
    // the batch that holds it (not counted: a row deleted before its
    // batch, or delivered before its handler noted the commit, the
    // quickest). The target is issue 52's: 10 ms at the 99th percentile.
    for shape in shapes where shape.cached {
        for (index, configuration) in configurations where configuration.consumer {
            let p99 = runs[shape]![index]!.map { run in run.auditLatency(0.99) }
            let p50 = runs[shape]![index]!.map { run in run.auditLatency(0.5) }
            // The batch runs in the writer's transaction, so it waits its
            // turn behind the requests queued on the writer: at 64 writers
            // the queue alone is tens of milliseconds, whatever the wake-up.
            let what = "an exactly-once consumer under \(shape.writers) writers: from a commit to the batch holding it (in the writer's queue)"
            report(what + ", p50", ours: configuration.name, median(p50), peer: "", nil, unit: "µs")
            report(what + ", p99", ours: configuration.name, median(p99), peer: "issue 52's wake-up target", 10_000, unit: "µs", target: 1.0)
        }
    }
    guard configurations.contains(where: { $0.offset == ServerConfiguration.plainIndex }) else { return }
    for shape in shapes {
        let plain = runs[shape]![ServerConfiguration.plainIndex]!
        let what = "a request of the server's mix, \(shape.writers) writers, \(shape.cached ? "cached statements" : "execute(sql:)")"
        for (index, configuration) in configurations where index != ServerConfiguration.plainIndex {
            let ours = runs[shape]![index]!
            let target: Double? = !shape.cached ? nil
                : index == ServerConfiguration.rulesAndLogIndex ? 1 / 0.9
                : index == ServerConfiguration.everythingIndex ? 1 / 0.7
                : nil
            report(what + ": time per request", ours: configuration.name, median(ours.map(\.microsecondsPerRequest)),
                   peer: ServerConfiguration.all[0].name, median(plain.map(\.microsecondsPerRequest)), unit: "µs", target: target)
            report(what + ": p50", ours: configuration.name, median(ours.map { $0.percentile(0.5) }),
                   peer: ServerConfiguration.all[0].name, median(plain.map { $0.percentile(0.5) }), unit: "µs")
            report(what + ": p99", ours: configuration.name, median(ours.map { $0.percentile(0.99) }),
                   peer: ServerConfiguration.all[0].name, median(plain.map { $0.percentile(0.99) }), unit: "µs",
                   target: index == ServerConfiguration.everythingIndex ? 1.5 : nil)
        }
        // Rules + log against their floor: what SQLiteTriggers adds to
        // the cost of the same triggers written by hand.
        if let floor = runs[shape]![ServerConfiguration.floorIndex], let ours = runs[shape]![ServerConfiguration.rulesAndLogIndex] {
            report(what + ": time per request, against the floor", ours: ServerConfiguration.all[ServerConfiguration.rulesAndLogIndex].name,
                   median(ours.map(\.microsecondsPerRequest)), peer: ServerConfiguration.all[ServerConfiguration.floorIndex].name,
                   median(floor.map(\.microsecondsPerRequest)), unit: "µs")
        }
    }
}

/// One configuration's writes, one row per transaction, alone on this
/// thread (`--server-write CONFIGURATION TRANSACTIONS`), for
/// Tests/bench/server_instructions.py: what callgrind counts inside
/// `measuredServerWrites` is the writes' own cost, commit and delivery on
/// the writer's queue included (a consumer's batches run elsewhere).
func serverWrite(configuration index: Int, transactions: Int) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sqlitetriggers-server-write-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let server = try ServerUnderTest(ServerConfiguration.all[index], path: directory.appendingPathComponent("w.sqlite").path)
    try measuredServerWrites(server, transactions: transactions)
    server.observations.removeAll()
    try server.pool.close()
}

/// Creates and updates in turn, one per transaction, cached statements.
@inline(never) func measuredServerWrites(_ server: ServerUnderTest, transactions: Int) throws {
    for number in 0..<transactions {
        try server.request(number % 2 == 0 ? 0 : 30, cached: true)
    }
}
