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
        let wakeup = UnsafeSendableHandle(handle)
        let queue = DispatchQueue(label: "SQLiteTriggers.DatabaseFileWakeups")
        source = DispatchSource.makeReadSource(fileDescriptor: sqlitetriggers_wakeup_fd(handle), queue: queue)
        // A writer without SQLiteTriggers is seen by its writes (Linux), and
        // the last write of a commit comes a little before the commit is
        // visible (the WAL index, in shared memory, changes last): a wake-up
        // is repeated once a few milliseconds later, so a reader that looked
        // too early looks again. Writers with SQLiteTriggers post after the
        // commit is visible, and need not this.
        source.setEventHandler {
            guard sqlitetriggers_wakeup_drain(wakeup.handle) != 0 else { return }
            onWake()
            queue.asyncAfter(deadline: .now() + .milliseconds(3), execute: onWake)
        }
        source.setCancelHandler { sqlitetriggers_wakeup_close(wakeup.handle) }
        source.resume()
    }

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

/// The C source's handle, used only on the dispatch source's queue (its
/// event and cancel handlers, which never run at once).
private struct UnsafeSendableHandle: @unchecked Sendable {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
}
