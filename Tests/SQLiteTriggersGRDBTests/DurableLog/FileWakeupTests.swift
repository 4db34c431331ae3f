import Foundation
import GRDB
import SQLiteTriggers
import Testing
#if os(Linux)
import Glibc
#endif

/// Another process's write wakes a reader, and the wake-up is repeated
/// until a quarter of a second after it: a writer without SQLiteTriggers
/// makes its commit visible only after syncing the file, and no file event
/// says when (DatabaseFileWakeups).
@Suite struct FileWakeupTests {
    @Test func oneWriteWakesAReaderRepeatedlyForAQuarterOfASecond() async throws {
        #if os(Linux)
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let plain = try DatabaseQueue(path: path)
        try await plain.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        let wakes = Locked([Date]())
        let wakeups = try #require(DatabaseFileWakeups(path: path) { wakes.mutate { $0.append(Date()) } })
        defer { wakeups.cancel() }
        try await Task.sleep(nanoseconds: 100_000_000)
        let before = wakes.value.count
        try await plain.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        // The span is read from the wake-ups themselves, not from when the
        // write returned: under a loaded run (ThreadSanitizer, every suite
        // at once) the awaiting task can resume after every repeat has come
        // (CI saw no wake-up later than 150 ms after the write returned). The last repeat comes at
        // least 250 ms after the event that woke the reader first; timers
        // that come late only widen the span. Dispatch timers have been
        // starved for over 5 s, hence the long wait.
        func span() -> TimeInterval {
            let after = wakes.value.dropFirst(before)
            guard let first = after.first, let last = after.last else { return 0 }
            return last.timeIntervalSince(first)
        }
        for _ in 0..<300 where span() < 0.2 {
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        let after = wakes.value.dropFirst(before)
        // The wake-up itself and at least one repeat (one per delay, fewer
        // when a late timer passed several delays), the last well after the
        // first: a single repeat 3 ms later would have ended within
        // milliseconds.
        #expect(after.count >= 2, "\(after.count) wake-ups")
        #expect(span() >= 0.2, "\(after.map { $0.timeIntervalSince(after.first!) }) s after the first")
        #endif
    }

    /// A server's stream of commits, each several file events, wakes the
    /// reader at most once per resting time (and the repeats), not once per
    /// event: handled one by one, they kept a core busy. The events here
    /// are the file's times touched every 0.2 ms, as a writer with
    /// SQLiteTriggers touches them after each commit: many more events than
    /// rests, however loaded the machine.
    @Test func aStreamOfCommitsWakesAReaderAtMostOncePerRest() async throws {
        #if os(Linux)
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let plain = try DatabaseQueue(path: path)
        try await plain.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        let wakes = Locked(0)
        let wakeups = try #require(DatabaseFileWakeups(path: path) { wakes.mutate { $0 += 1 } })
        defer { wakeups.cancel() }
        try await Task.sleep(nanoseconds: 100_000_000)
        let before = wakes.value
        // Events until they outnumber twice the bound for the time they
        // took: a loaded machine makes each one slower, and the bound grows
        // with the time.
        func bound(_ elapsed: TimeInterval) -> Int {
            Int(elapsed * 1000) / DatabaseFileWakeups.restingMilliseconds + 1 + RepeatedWakeups.delays.count + 2
        }
        let start = Date()
        var events = 0
        while events < 300 || (events <= 2 * bound(Date().timeIntervalSince(start)) && Date().timeIntervalSince(start) < 10) {
            #expect(utimensat(AT_FDCWD, path, nil, 0) == 0)
            usleep(200)
            events += 1
        }
        let elapsed = Date().timeIntervalSince(start)
        try await Task.sleep(nanoseconds: 400_000_000)
        let woken = wakes.value - before
        // At most one wake-up per rest while the events come (the repeats
        // wait for the stream to end), then the repeats after the last.
        #expect(events > bound(elapsed), "the events should outnumber the bound (\(bound(elapsed))): \(elapsed) s for \(events)")
        #expect(woken <= bound(elapsed), "\(woken) wake-ups for \(events) events in \(elapsed) s")
        #expect(woken >= 1)
        #endif
    }

    /// An event just after a late step of the series (120 ms) is looked at
    /// again 3 ms after it, not at the next step (250 ms): found by an
    /// attacker, a commit visible a few ms after its last write waited up
    /// to 130 ms.
    @Test func anEventDuringTheSeriesStartsItAgain() async throws {
        #if os(Linux)
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let plain = try DatabaseQueue(path: path)
        try await plain.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        let wakes = Locked([UInt64]())
        let wakeups = try #require(DatabaseFileWakeups(path: path) { wakes.mutate { $0.append(DispatchTime.now().uptimeNanoseconds) } })
        defer { wakeups.cancel() }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(utimensat(AT_FDCWD, path, nil, 0) == 0)
        try await Task.sleep(nanoseconds: 130_000_000)
        let second = DispatchTime.now().uptimeNanoseconds
        #expect(utimensat(AT_FDCWD, path, nil, 0) == 0)
        try await Task.sleep(nanoseconds: 400_000_000)
        // The event's own wake-up, then its first repeat, 3 ms later: two
        // wake-ups within 100 ms of it (room for a loaded machine's late
        // timers), where the old series gave one, then nothing until its
        // 250 ms step, 120 ms after the second event.
        let soon = wakes.value.filter { $0 >= second && $0 < second + 100_000_000 }
        #expect(soon.count >= 2, "\(wakes.value.map { (Int64($0) - Int64(second)) / 1_000_000 }) ms")
        #endif
    }
}
