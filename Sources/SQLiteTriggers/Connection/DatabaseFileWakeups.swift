internal import CSQLiteTriggers
internal import SQLiteTriggersCSQLite
import Dispatch

/// Wakes when another process may have committed to a database file: the
/// C source of `ext/log_wakeup.c` (inotify on Linux, libnotify on Apple
/// platforms, where every connection with SQLiteTriggers posts after a
/// commit to the durable log), read by a dispatch source, so that no
/// thread blocks and no run loop is needed.
///
/// The handler runs on a private serial queue; ``cancel()`` (or the
/// last reference going away) stops it and closes the source.
///
/// What could not be run here: the Apple branch of the C source is
/// compiled and linked against the SDKs' stubs (`make test-apple`), and
/// this type is the same code on both platforms, but no Apple binary was
/// executed.
package final class DatabaseFileWakeups: @unchecked Sendable {
    // @unchecked: a dispatch source is thread-safe; `source` never changes.
    private let source: any DispatchSourceRead

    /// Starts watching the database at `path`; nil where there is no file
    /// (an in-memory database) or no mechanism (neither Linux nor Apple).
    package init?(path: String, onWake: @escaping @Sendable () -> Void) {
        var handle: OpaquePointer?
        guard sqlitetriggers_wakeup_open(path, &handle) == SQLITE_OK, let handle else { return nil }
        let wakeup = WakeupHandle(handle)
        let queue = DispatchQueue(label: "SQLiteTriggers.DatabaseFileWakeups")
        let source = DispatchSource.makeReadSource(fileDescriptor: sqlitetriggers_wakeup_fd(handle), queue: queue)
        self.source = source
        // A writer without SQLiteTriggers is seen by its writes (Linux), and
        // the last write of a commit comes before the commit is visible: the
        // writer syncs the file (with synchronous = FULL, a disk's flush,
        // tens of milliseconds under load), then changes the WAL index, in
        // shared memory, which no file event reports. So a wake-up is
        // repeated a few times, further and further apart, until a quarter
        // of a second after the last write: a reader that looked too early
        // looks again before the next commit, or the poll, would wake it
        // (once only 3 ms later, a commit that synced longer waited for the
        // next one, 100 ms in a loaded server's p95). Writers with
        // SQLiteTriggers post after the commit is visible, and need not this.
        let again = RepeatedWakeups(queue: queue, onWake: onWake)
        // A commit is several file events (each write of the WAL, the
        // stamp's touch), and a server commits thousands of times a
        // second: handled one by one, they kept a core busy waking threads
        // (a third of a loaded server's throughput). So after an event the
        // source rests for `resting`, its watch paused: every write to a
        // watched folder costs its writer the kernel's event (a twentieth
        // of a loaded server's time with a consumer), and while paused the
        // writers pay nothing. A commit made while paused raised no event,
        // so the repeats start again once the watch is back: the first, 3 ms
        // on, looks for it (counted from the watch's return, not the event,
        // since a timer may come a millisecond late).
        let resting = DispatchTimeInterval.milliseconds(Self.restingMilliseconds)
        let resumable = ResumableSource(source: source)
        @Sendable func watchAgain() {
            guard !wakeup.isClosed else { return }
            guard sqlitetriggers_wakeup_resume(wakeup.handle) == SQLITE_OK else {
                // The folder cannot be watched now (the kernel's limit of
                // watches, low memory): wake as the last repeat would, and
                // try again as late.
                onWake()
                queue.asyncAfter(deadline: .now() + .milliseconds(RepeatedWakeups.delays.last ?? 250)) { watchAgain() }
                return
            }
            // What came before the pause is read here (and the pause's own
            // notice, which would make the source run for nothing).
            if sqlitetriggers_wakeup_drain(wakeup.handle) != 0 { onWake() }
            again.restart()
        }
        source.setEventHandler {
            guard sqlitetriggers_wakeup_drain(wakeup.handle) != 0 else { return }
            onWake()
            again.restart()
            resumable.source.suspend()
            _ = sqlitetriggers_wakeup_pause(wakeup.handle)
            queue.asyncAfter(deadline: .now() + resting) {
                watchAgain()
                resumable.source.resume()
            }
        }
        // A suspended source runs its cancel handler once resumed, after
        // the rest: the handle is open for every block above but the
        // retries, which the flag stops.
        source.setCancelHandler {
            wakeup.isClosed = true
            sqlitetriggers_wakeup_close(wakeup.handle)
        }
        source.resume()
    }

    /// How long the source rests after an event, its watch paused (see
    /// `init`): a wake-up comes at most this much later than the event.
    package static let restingMilliseconds = 2

    deinit { source.cancel() }

    package func cancel() { source.cancel() }

    /// The libnotify name of the database at `path`, the same in every
    /// process whatever path reaches the file; nil when it does not exist.
    package static func notificationName(forDatabaseAt path: String) -> String? {
        var name = [CChar](repeating: 0, count: 64)
        guard sqlitetriggers_wakeup_name(path, &name, Int32(name.count)) == SQLITE_OK else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The wake-ups repeated after a file event (see ``DatabaseFileWakeups``):
/// at each delay of ``delays`` after the last event. While events keep
/// coming (a server's commits), each wakes the reader itself, and the
/// series waits: a timer that fires sooner after the last event than its
/// delay sets itself again instead of waking. A new event starts the
/// series again at its first delay, even when a timer is set for a later
/// one (which then does nothing): otherwise an event just after the 120 ms
/// step waited for the 250 ms one. Used only on its queue.
package final class RepeatedWakeups: @unchecked Sendable {
    /// Milliseconds after the event: 3, then further apart, to 250.
    package static let delays = [3, 10, 25, 60, 120, 250]
    private let queue: DispatchQueue
    private let onWake: @Sendable () -> Void
    private var next = 0            // the index of the next delay
    private var lastEvent: UInt64 = 0
    /// The timer that counts, and when it fires (uptime nanoseconds).
    private var generation = 0
    private var pendingDue: UInt64?

    init(queue: DispatchQueue, onWake: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.onWake = onWake
    }

    /// A new event: the series starts again from its first delay (a timer
    /// due by then serves as its first).
    func restart() {
        let now = DispatchTime.now().uptimeNanoseconds
        lastEvent = now
        next = 0
        let due = now + UInt64(Self.delays[0]) * 1_000_000
        if let pendingDue, pendingDue <= due { return }
        schedule(inMilliseconds: Self.delays[0])
    }

    private func schedule(inMilliseconds milliseconds: Int) {
        generation += 1
        let mine = generation
        pendingDue = DispatchTime.now().uptimeNanoseconds + UInt64(max(milliseconds, 0)) * 1_000_000
        queue.asyncAfter(deadline: .now() + .milliseconds(max(milliseconds, 0))) { [self] in
            guard mine == generation else { return }     // replaced by a sooner one
            fire()
        }
    }

    private func fire() {
        pendingDue = nil
        let sinceEvent = Int((DispatchTime.now().uptimeNanoseconds - lastEvent) / 1_000_000)
        if sinceEvent < Self.delays[next] {
            schedule(inMilliseconds: Self.delays[next] - sinceEvent)
            return
        }
        onWake()
        // One wake for every delay already past (a late timer).
        while next < Self.delays.count, Self.delays[next] <= sinceEvent { next += 1 }
        if next < Self.delays.count { schedule(inMilliseconds: Self.delays[next] - sinceEvent) }
    }
}

/// The dispatch source, for the resume its event handler schedules (a
/// dispatch source is thread-safe).
private struct ResumableSource: @unchecked Sendable {
    let source: any DispatchSourceRead
}

/// The C source's handle, used only on the dispatch source's queue (its
/// event and cancel handlers and the blocks they schedule, which never run
/// at once); closed by the cancel handler.
private final class WakeupHandle: @unchecked Sendable {
    let handle: OpaquePointer
    var isClosed = false
    init(_ handle: OpaquePointer) { self.handle = handle }
}
