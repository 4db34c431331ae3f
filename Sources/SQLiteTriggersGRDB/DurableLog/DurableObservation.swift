import GRDB
import Foundation
import SQLiteTriggers

extension DatabaseWriter {
    /// Delivers the durable log's committed changes of a record's table to
    /// the consumer `consumer`, exactly once: `onBatch` runs inside the
    /// writer's transaction that moves the consumer's position, so what it
    /// writes to this database and the position commit together; when it
    /// throws, both roll back, and the batch comes again.
    ///
    /// Every writer's changes arrive: this app's, its other processes',
    /// the sqlite3 shell's, a Python script's. The consumer is made at the
    /// end of the log when it does not exist (start it first with
    /// ``GRDB/Database/startDurableConsumer(_:from:)`` to choose);
    /// ``DurableChange/record`` is the row when the batch is read. A batch
    /// holds whole transactions, at least `limit` changes (256 by default)
    /// when the log has them. The observation wakes when this
    /// writer commits, when another process commits (see
    /// ``DurableObservation``), when ``DurableObservation/wakeUp()`` is
    /// called (as the app becomes active), and every `pollInterval`
    /// seconds, which finds what nothing announced. It lasts
    /// as long as the returned token. A database locked by another process
    /// is tried again at the next wake-up. What a server meets and passes (a
    /// full disk, an I/O error, a file read-only for a while, low memory)
    /// goes to `onError`, and the batch is tried again after a wait that
    /// doubles from `pollInterval` up to a minute: the batch and its
    /// acknowledgement are one transaction, so a failed one changed nothing,
    /// and each change is still delivered once. Any other error (the
    /// consumer fell behind, the log no longer matches its table, `onBatch`
    /// threw) goes to `onError` and ends it. Without `onError`, errors go to
    /// `CallbackObservation.defaultErrorHandler`. `excluding` leaves out the
    /// transactions of those origins (``GRDB/Database/setDurableLogOrigin(_:)``).
    ///
    /// ```swift
    /// let sync = try dbPool.observeDurableChanges(to: Reminder.self, consumer: "search") { db, batch in
    ///     for change in batch.changes { print(change.kind, change.record?.title ?? "deleted") }
    /// }
    /// ```
    public func observeDurableChanges<Record: FetchableRecord & TableRecord & Sendable>(
        to record: Record.Type,
        consumer: String,
        net: Bool = false,
        excluding origins: Set<String> = [],
        limit: Int = 256,
        pollInterval: TimeInterval = 1,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onBatch: @escaping @Sendable (Database, DurableBatch<Record>) throws -> Void
    ) throws -> DurableObservation {
        try observeDurableChanges(to: [FeedTable(record)], consumer: consumer, net: net, excluding: origins, limit: limit,
                                  pollInterval: pollInterval, onError: onError, onBatch: onBatch)
    }

    /// Delivers the durable log's committed changes of `tables` to
    /// `consumer`, exactly once; see
    /// ``observeDurableChanges(to:consumer:net:excluding:limit:pollInterval:onError:onBatch:)-(Record.Type,_,_,_,_,_,_,_)``.
    ///
    /// ```swift
    /// let titles = FeedTable("reminders") { row in String(row["title"] ?? "") }
    /// let observation = try dbQueue.observeDurableChanges(to: [titles], consumer: "index") { db, batch in
    ///     print(batch.changes.count)
    /// }
    /// ```
    public func observeDurableChanges<Record: Sendable>(
        to tables: [FeedTable<Record>],
        consumer: String,
        net: Bool = false,
        excluding origins: Set<String> = [],
        limit: Int = 256,
        pollInterval: TimeInterval = 1,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onBatch: @escaping @Sendable (Database, DurableBatch<Record>) throws -> Void
    ) throws -> DurableObservation {
        try write { db in try db.startDurableReading(consumer) }
        let wakeups = DurableWakeups(writer: self, pollInterval: pollInterval)
        let task = Task.detached { [self] in
            var lastEnd: Int64 = -1
            var backoff = DurableBackoff(first: pollInterval)
            var pacing = DurablePacing()
            for await _ in wakeups.stream {
                do {
                    try await pacing.waitForTurn()
                    let started = DispatchTime.now().uptimeNanoseconds
                    // A cheap read first: most wake-ups find nothing new.
                    let end = try await read { db in try db.durableLogEnd() }
                    guard end != lastEnd else { pacing.worked(since: started); continue }
                    // Batches until one reaches the end read above; what
                    // was committed since woke the stream again.
                    while true {
                        let reached = try await write { db -> Int64? in
                            let batch = try db.durableBatch(for: consumer, of: tables, limit: limit, net: net,
                                                            excluding: origins)
                            guard batch.advances else { return nil }
                            if !batch.transactions.isEmpty { try onBatch(db, batch) }
                            try db.acknowledge(batch)
                            return batch.position
                        }
                        guard let reached, reached < end else { break }
                    }
                    pacing.worked(since: started)
                    lastEnd = end
                    backoff.reset()
                } catch is CancellationError {
                    break
                } catch where DurableWakeups.isTransient(error) {
                    continue        // another process holds the lock: the next wake-up tries again
                } catch where DurableWakeups.passes(error) {
                    // The disk, the file or memory: reported, then tried
                    // again, the batch whole (its transaction rolled back).
                    (onError ?? CallbackObservation.defaultErrorHandler)(error)
                    lastEnd = -1
                    do { try await backoff.wait() } catch { break }
                    wakeups.wake()
                } catch {
                    // After cancel(), the file may close under a batch in
                    // flight: that is the end asked for, not an error.
                    if !Task.isCancelled { (onError ?? CallbackObservation.defaultErrorHandler)(error) }
                    break
                }
            }
            wakeups.stop()
        }
        return DurableObservation(wakeups: wakeups, task: task)
    }

    /// The durable log's committed changes of a record's table for
    /// `consumer`, as an `AsyncSequence` of batches (whole transactions, at
    /// least `limit` changes, 256 by default, when the log has them), at
    /// least once: a batch is acknowledged when the loop asks for the next
    /// one, so work done outside the database (an upload) that a crash
    /// interrupts is delivered again. Apply by key, idempotently. A `break`
    /// out of the loop, a cancelled task or an error thrown by the loop's
    /// body leaves the batch in hand unacknowledged: the next iteration (in
    /// this process or the next) delivers it again. The sequence throws
    /// when the consumer falls behind or the log no longer matches its
    /// table; it ends when its task is cancelled. What a server meets and
    /// passes (a full disk, an I/O error, a file read-only for a while, low
    /// memory) does not end it: the error goes to `onError` (without it, to
    /// `CallbackObservation.defaultErrorHandler`), and the read or the
    /// acknowledgement is tried again after a wait that doubles from
    /// `pollInterval` up to a minute. Inside the loop,
    /// ``GRDB/Database/acknowledge(_:through:)-(_,DurableChange<Record>)``
    /// moves past what was done so far, so a crash delivers only the rest;
    /// `excluding` leaves out the transactions of those origins.
    ///
    /// ```swift
    /// for try await batch in dbPool.durableChanges(to: Reminder.self, consumer: "upload") {
    ///     for change in batch.changes { print("upload", change.key) }
    /// }
    /// ```
    public func durableChanges<Record: FetchableRecord & TableRecord & Sendable>(
        to record: Record.Type,
        consumer: String,
        net: Bool = false,
        excluding origins: Set<String> = [],
        limit: Int = 256,
        pollInterval: TimeInterval = 1,
        onError: (@Sendable (any Error) -> Void)? = nil
    ) -> DurableChanges<Record> {
        durableChanges(to: [FeedTable(record)], consumer: consumer, net: net, excluding: origins, limit: limit,
                       pollInterval: pollInterval, onError: onError)
    }

    /// The durable log's committed changes of `tables` for `consumer`, at
    /// least once; see ``durableChanges(to:consumer:net:excluding:limit:pollInterval:onError:)-(Record.Type,_,_,_,_,_,_)``.
    ///
    /// ```swift
    /// let titles = FeedTable("reminders") { row in String(row["title"] ?? "") }
    /// for try await batch in dbQueue.durableChanges(to: [titles], consumer: "upload") { print(batch.changes.count) }
    /// ```
    public func durableChanges<Record: Sendable>(
        to tables: [FeedTable<Record>],
        consumer: String,
        net: Bool = false,
        excluding origins: Set<String> = [],
        limit: Int = 256,
        pollInterval: TimeInterval = 1,
        onError: (@Sendable (any Error) -> Void)? = nil
    ) -> DurableChanges<Record> {
        DurableChanges(writer: self, tables: tables, consumer: consumer, net: net, origins: origins, limit: limit,
                       pollInterval: pollInterval, onError: onError ?? CallbackObservation.defaultErrorHandler)
    }
}

/// A running durable observation: cancel it, or drop it, to stop.
///
/// It wakes at once when another process commits to the file: on Linux
/// any writer's commit (inotify on the file), on Apple platforms a commit
/// to the log by any connection with SQLiteTriggers, which posts the
/// notification named ``notificationName(forDatabaseAt:)`` through
/// libnotify, in every process. Writers without SQLiteTriggers on Apple
/// platforms post nothing: the poll finds their changes.
public final class DurableObservation: DatabaseCancellable, Sendable {
    private let wakeups: DurableWakeups
    private let task: Task<Void, Never>

    init(wakeups: DurableWakeups, task: Task<Void, Never>) {
        self.wakeups = wakeups
        self.task = task
    }

    deinit { cancel() }

    /// Looks for new changes now: call it when the app becomes active.
    public func wakeUp() { wakeups.wake() }

    public func cancel() {
        task.cancel()
        wakeups.stop()
    }

    /// The Darwin (libnotify) notification name for a database file: one
    /// per file, the same in every process whatever path reaches it (the
    /// path is resolved, symlinks included); nil when the file does not
    /// exist.
    ///
    /// ```swift
    /// let name = DurableObservation.notificationName(forDatabaseAt: "/tmp")
    /// ```
    public static func notificationName(forDatabaseAt path: String) -> String? {
        DatabaseFileWakeups.notificationName(forDatabaseAt: path)
    }
}

/// A durable log's batches as an `AsyncSequence`; see
/// `DatabaseWriter.durableChanges(to:consumer:net:excluding:limit:pollInterval:onError:)`.
public struct DurableChanges<Record: Sendable>: AsyncSequence, Sendable {
    public typealias Element = DurableBatch<Record>
    let writer: any DatabaseWriter
    let tables: [FeedTable<Record>]
    let consumer: String
    let net: Bool
    let origins: Set<String>
    let limit: Int
    let pollInterval: TimeInterval
    let onError: @Sendable (any Error) -> Void

    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: self)
    }

    /// Reads a batch when one is there, acknowledging the one before.
    public struct Iterator: AsyncIteratorProtocol {
        let sequence: DurableChanges
        var pending: DurableBatch<Record>?
        var wakeups: DurableWakeups?
        var wakeIterator: AsyncStream<Void>.Iterator?
        /// The log's end when a read last found nothing: until it moves, a
        /// wake-up reads only the end (as observeDurableChanges does).
        var drainedAt: Int64?
        var backoff: DurableBackoff

        init(sequence: DurableChanges) {
            self.sequence = sequence
            backoff = DurableBackoff(first: sequence.pollInterval)
        }

        public mutating func next() async throws -> DurableBatch<Record>? {
            let sequence = self.sequence
            if wakeups == nil {
                let started = DurableWakeups(writer: sequence.writer, pollInterval: sequence.pollInterval)
                wakeups = started
                wakeIterator = started.stream.makeAsyncIterator()
                guard try await writeWhenUnlocked({ db in try db.startDurableReading(sequence.consumer) }) else {
                    return nil
                }
            }
            if let pending {
                guard try await writeWhenUnlocked({ db in try db.acknowledge(pending) }) else { return nil }
                self.pending = nil
            }
            while !Task.isCancelled {
                let batch: DurableBatch<Record>
                do {
                    let drainedAt = self.drainedAt
                    let (read, end) = try await sequence.writer.read { db -> (DurableBatch<Record>?, Int64) in
                        let end = try db.durableLogEnd()
                        if end == drainedAt { return (nil, end) }
                        return (try db.durableBatch(for: sequence.consumer, of: sequence.tables, limit: sequence.limit,
                                                     net: sequence.net, excluding: sequence.origins), end)
                    }
                    guard let read else {
                        if await wakeIterator?.next() == nil { break }
                        continue
                    }
                    batch = read
                    self.drainedAt = batch.advances ? nil : end
                    backoff.reset()
                } catch where DurableWakeups.isTransient(error) {
                    if await wakeIterator?.next() == nil { break }
                    continue
                } catch where DurableWakeups.passes(error) {
                    guard await reportAndWait(error) else { break }
                    continue
                }
                if !batch.transactions.isEmpty {
                    pending = batch
                    return batch
                }
                // Changes of other tables only: past them, silently.
                if batch.advances {
                    guard try await writeWhenUnlocked({ db in try db.acknowledge(batch) }) else { break }
                    continue
                }
                if await wakeIterator?.next() == nil { break }
            }
            wakeups?.stop()
            return nil
        }

        /// Runs `body` in a write, again at each wake-up while another
        /// process holds the lock (as reading does): a writer without a
        /// busy timeout gets SQLITE_BUSY at once, and the sequence must not
        /// end for it. False when the sequence ends first.
        private mutating func writeWhenUnlocked(_ body: @escaping @Sendable (Database) throws -> Void) async throws -> Bool {
            while !Task.isCancelled {
                do {
                    try await sequence.writer.write(body)
                    backoff.reset()
                    return true
                } catch where DurableWakeups.isTransient(error) {
                    if await wakeIterator?.next() == nil { break }
                } catch where DurableWakeups.passes(error) {
                    guard await reportAndWait(error) else { break }
                }
            }
            wakeups?.stop()
            return false
        }

        /// An error that passes: reported, then a wait before trying again.
        /// False when the task was cancelled while it waited.
        private mutating func reportAndWait(_ error: any Error) async -> Bool {
            sequence.onError(error)
            do { try await backoff.wait() } catch { return false }
            return true
        }
    }
}

// MARK: - Wake-ups

/// How often an exactly-once consumer may take the writer: a server that
/// commits a row per request wakes it at every commit, and a batch per
/// commit would double the write transactions that requests wait behind.
/// After a round of batches that took `t`, the next round waits until
/// `3 t` has passed (at most 5 ms): the consumer then holds the writer a
/// quarter of the time at most, and each round takes the commits that came
/// meanwhile. An idle consumer's next round starts at once: the wait only
/// follows work, and a commit after a quiet moment finds it over.
struct DurablePacing {
    private var notBefore: UInt64 = 0

    mutating func worked(since start: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        notBefore = now + min((now - start) * 3, 5_000_000)
    }

    func waitForTurn() async throws {
        let now = DispatchTime.now().uptimeNanoseconds
        if notBefore > now { try await Task.sleep(nanoseconds: notBefore - now) }
    }
}

/// The wait before trying again after an error that passes: `first`, then
/// doubling, at most a minute; back to `first` after a success.
struct DurableBackoff {
    let first: TimeInterval
    private var next: TimeInterval

    init(first: TimeInterval) {
        self.first = min(max(first, 0.01), 60)
        next = self.first
    }

    mutating func reset() { next = first }

    mutating func wait() async throws {
        let seconds = next
        next = min(next * 2, 60)
        try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
    }
}

/// What wakes a durable reader: this writer's commits to the log, other
/// processes' commits to the file (``DatabaseFileWakeups``: inotify on
/// Linux, libnotify on Apple platforms), `wake()`, and a timer, which
/// finds what nothing announced (on Apple platforms, the commits of
/// writers without SQLiteTriggers, which post nothing).
final class DurableWakeups: Sendable {
    let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let timer: Task<Void, Never>
    private let commits: DatabaseCancellable
    private let otherProcesses: DatabaseFileWakeups?

    init(writer: any DatabaseWriter, pollInterval: TimeInterval) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.stream = stream
        self.continuation = continuation
        continuation.yield()       // look once at the start
        let nanoseconds = UInt64(max(pollInterval, 0.001) * 1_000_000_000)
        timer = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: nanoseconds)
                continuation.yield()
            }
        }
        otherProcesses = DatabaseFileWakeups(path: writer.path) { continuation.yield() }
        // Its one failure, at start (the log's table missing, or the schema
        // unreadable), fails the reader's next read too, which reports it.
        commits = DatabaseRegionObservation(tracking: Table("sqlitetriggers_log")).start(
            in: writer, onError: { _ in }, onChange: { _ in continuation.yield() })
    }

    deinit { stop() }

    func wake() { continuation.yield() }

    /// A lock another connection holds: worth trying again later.
    static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED
    }

    /// What the machine does to a database and undoes (a full disk, an I/O
    /// error, a file read-only for a while, low memory): worth reporting
    /// and trying again later, with a wait, where a lock is tried again at
    /// the next wake-up.
    static func passes(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        switch error.resultCode {
        case .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_NOMEM, .SQLITE_CANTOPEN, .SQLITE_PROTOCOL:
            return true
        default:
            return false
        }
    }

    func stop() {
        timer.cancel()
        commits.cancel()
        otherProcesses?.cancel()
        continuation.finish()
    }
}
