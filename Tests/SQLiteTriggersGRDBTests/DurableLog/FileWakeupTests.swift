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
        let written = Date()
        // Every repeat has come by then (the last 250 ms after the write),
        // unless the machine is so loaded that timers come seconds late (a
        // full parallel test run has starved dispatch queues for over 5 s).
        for _ in 0..<300 where !wakes.value.dropFirst(before).contains(where: { $0.timeIntervalSince(written) > 0.15 }) {
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        let after = wakes.value.dropFirst(before)
        // The wake-up itself, and the repeats (one per delay, fewer when a
        // timer came late and passed a delay), the last well after the
        // write: a single repeat 3 ms later would have ended within
        // milliseconds.
        #expect(after.count >= 3, "\(after.count) wake-ups")
        #expect(after.contains { $0.timeIntervalSince(written) > 0.15 })
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
        let start = Date()
        let events = 300
        for _ in 0..<events {
            #expect(utimensat(AT_FDCWD, path, nil, 0) == 0)
            usleep(200)
        }
        let elapsed = Date().timeIntervalSince(start)
        try await Task.sleep(nanoseconds: 400_000_000)
        let woken = wakes.value - before
        // At most one wake-up per rest while the events come (the repeats
        // wait for the stream to end), then the repeats after the last.
        let bound = Int(elapsed * 1000) / DatabaseFileWakeups.restingMilliseconds + 1 + RepeatedWakeups.delays.count + 2
        #expect(events > bound, "the events should outnumber the bound (\(bound)): \(elapsed) s for \(events)")
        #expect(woken <= bound, "\(woken) wake-ups for \(events) events in \(elapsed) s")
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
        // wake-ups within 60 ms of it, where the old series gave one, then
        // nothing until its 250 ms step, 120 ms after the first event.
        let soon = wakes.value.filter { $0 >= second && $0 < second + 60_000_000 }
        #expect(soon.count >= 2, "\(wakes.value.map { (Int64($0) - Int64(second)) / 1_000_000 }) ms")
        #endif
    }
}
