import Foundation
import GRDB
import SQLiteTriggers
import SQLiteTriggersGRDB

// Another process's commit, seen while the server's load runs (issue 52's
// target: p99 at most 10 ms). The service runs "everything" with 16
// handlers; meanwhile Tests/bench/commit_writer.py, a process of its own,
// commits reminders one per transaction, 5 to 20 ms apart, with and
// without the extension, and prints the wall-clock time each commit
// returned. Two figures per writer:
//   - the wake-up: a reader woken by DatabaseFileWakeups (what wakes a
//     consumer) reads the file on a reader of the pool and finds the commit;
//     no writer's queue is in this path, so it is the wake-up alone;
//   - the consumer: an exactly-once observation's batch holding the commit,
//     which runs in the writer's transaction, behind the queued requests.

func serverWakeupSuite() throws {
    let environment = ProcessInfo.processInfo.environment
    guard let python = environment["BENCH_PYTHON"], let extensionPath = environment["BENCH_EXTENSION"] else {
        print("server wake-ups: skipped (make bench sets BENCH_PYTHON and BENCH_EXTENSION)")
        return
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sqlitetriggers-server-wakeups-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let commits = 150
    let writers = 16
    for (index, (writerName, extraArguments)) in [("a writer without the extension", [String]()),
                                                  ("a writer with SQLiteTriggers", [extensionPath])].enumerated() {
        let everything = ServerConfiguration.all[ServerConfiguration.everythingIndex]
        let server = try ServerUnderTest(everything, path: directory.appendingPathComponent("\(index).sqlite").path,
                                         otherProcessTable: true)
        let woken = LatencyClock(), batched = LatencyClock()
        let pool = server.pool
        let reader = try require(DatabaseFileWakeups(path: pool.path) {
            let now = DispatchTime.now().uptimeNanoseconds
            let keys = (try? pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM reminders") }) ?? []
            woken.record(keys, at: now)
        }, "no file wake-ups on this platform")
        let consumer = try pool.observeDurableChanges(
            to: [FeedTable("reminders") { row in row["id"] as String }], consumer: "latency") { _, batch in
                batched.record(batch.changes.compactMap(\.record), at: DispatchTime.now().uptimeNanoseconds)
            }
        // The load lasts as long as the writer (150 commits, about 2 s).
        let loadDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? server.load(writers: writers, duration: 2.5, cached: true)
            loadDone.signal()
        }
        var writer = try CommitWriter.start(python: python, path: pool.path, commits: commits, extraArguments: extraArguments)
        writer.wait()
        loadDone.wait()
        Thread.sleep(forTimeInterval: 1.5)          // past one poll, for the last batch
        consumer.cancel()
        reader.cancel()
        server.observations.removeAll()
        try server.pool.close()
        for (what, clock) in [("the wake-up (a reader woken, no writer's queue)", woken),
                              ("the consumer's batch (in the writer's queue)", batched)] {
            let seen = writer.latencies(seenBy: clock, what: what)
            let row = "server under \(writers) writers, another process's commit to \(what), \(writerName)"
            report(row + ", median", ours: "everything", seen[seen.count / 2], peer: "issue 52's target", 10, unit: "ms")
            report(row + ", 99th percentile", ours: "everything", seen[min(seen.count - 1, seen.count * 99 / 100)],
                   peer: "issue 52's target", 10, unit: "ms", target: clock === woken ? 1.0 : nil)
        }
    }
}

/// The value, or an error naming why there is none.
private func require<T>(_ value: T?, _ why: String) throws -> T {
    guard let value else { throw DatabaseError(message: why) }
    return value
}
