internal import SQLiteTriggersCSQLite
internal import CSQLiteTriggers
import Foundation

// The C bridge of callback observers: the box the C layer holds for each
// Swift observer (ext/callback_delivery.c calls it back through the
// trampolines below, and releases it with xDestroy), and registration on
// a raw connection. CallbackObservation.swift has the public token.

/// What the C layer holds for a Swift observer (as `pArg`, retained until
/// SQLite calls xDestroy): a handler of events, or of batches.
final class ObserverBox<Handler>: CancellableObserver, @unchecked Sendable {
    private let lock = NSLock()
    // Read for every event: every access holds `lock`, so none overlaps, and
    // the dynamic exclusivity check (180 instructions an event) is left out.
    @exclusivity(unchecked) private var storedHandler: Handler?
    let onError: (@Sendable (any Error) -> Void)?
    var connection: OpaquePointer?
    var id: Int64 = 0

    init(handler: Handler, onError: (@Sendable (any Error) -> Void)?) {
        self.storedHandler = handler
        self.onError = onError
    }

    let cancellation = CancellationFlag()

    var handler: Handler? {
        lock.lock()
        defer { lock.unlock() }
        return storedHandler
    }

    func cancel() {
        lock.lock()
        let handler = storedHandler
        storedHandler = nil
        cancellation.set()
        lock.unlock()
        _ = handler                  // released here, outside the lock
    }

    /// The handler, or nil after removing this cancelled observer (we are
    /// on the connection's thread, inside SQLite's own call).
    func handlerOrRemove() -> Handler? {
        if let handler { return handler }
        if let connection { sqlitetriggers_unobserve(connection, id) }
        return nil
    }
}

extension RawConnection {
    /// Observes `swift_callback(name, ...)` on a raw connection; `name` nil
    /// observes every name. The handler reads the arguments in place; an
    /// immediate one may return the call's result.
    ///
    /// A read-only connection (a `DatabasePool` reader, a file opened
    /// read-only) is refused with `SQLITE_READONLY`: it never commits, and
    /// `swift_callback()` fails on it, so the observer could never run.
    ///
    /// ```swift
    /// let observation = try RawConnection.observeCallbacks(named: "changed", delivery: .afterCommit, on: handle) { arguments in
    ///     print(arguments.record)
    ///     return nil
    /// }
    /// ```
    public static func observeCallbacks(
        named name: String?,
        delivery: CallbackDelivery,
        on connection: OpaquePointer,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ handler: @escaping (CallbackArguments) throws -> CallbackValue?
    ) throws(SQLiteTriggersError) -> CallbackObservation {
        try refuseReadOnly(connection, observing: name)
        return try register(handler as EventHandler, onError: onError, on: connection) { argument, id in
            switch delivery {
            case .immediate:
                sqlitetriggers_observe_immediate(connection, name, immediateTrampoline, argument, releaseEventBox, id)
            case .afterCommit:
                sqlitetriggers_observe_after_commit(connection, name, afterCommitTrampoline, argument, releaseEventBox, id)
            }
        }
    }

    /// Observes `swift_callback(name, ...)` after commit a round at a time:
    /// `handler` runs once per delivery round that has events of `name`
    /// (nil: every name), after that round's other after-commit observers,
    /// and reads them, in commit order, from the `swift_callback_batch`
    /// table (`seq`, `name`, `argc`, `arg1`, `arg2`, …) with one statement,
    /// as it would read rows of a table. Its argument is their number.
    ///
    /// ```swift
    /// let observation = try RawConnection.observeCallbackBatches(named: "changed", on: handle) { count in
    ///     print("\(count) events; SELECT arg1 FROM swift_callback_batch reads them")
    /// }
    /// ```
    public static func observeCallbackBatches(
        named name: String?,
        on connection: OpaquePointer,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ handler: @escaping (Int) throws -> Void
    ) throws(SQLiteTriggersError) -> CallbackObservation {
        try refuseReadOnly(connection, observing: name)
        return try register(handler as BatchHandler, onError: onError, on: connection) { argument, id in
            sqlitetriggers_observe_after_commit_batch(connection, name, batchTrampoline, argument, releaseBatchBox, id)
        }
    }

    private static func refuseReadOnly(_ connection: OpaquePointer, observing name: String?) throws(SQLiteTriggersError) {
        if sqlite3_db_readonly(connection, "main") == 1 {
            throw SQLiteTriggersError(resultCode: SQLITE_READONLY, message: readOnlyRefusal(
                "observing \(name.map { "'\($0)'" } ?? "callbacks")", consequence: "the observer would never run",
                remedy: "observe on the writer"))
        }
    }

    /// Hands a retained box to `add`, the C registration, which releases it
    /// through xDestroy, on failure too.
    private static func register<Handler>(
        _ handler: Handler, onError: (@Sendable (any Error) -> Void)?, on connection: OpaquePointer,
        add: (UnsafeMutableRawPointer, UnsafeMutablePointer<Int64>) -> Int32
    ) throws(SQLiteTriggersError) -> CallbackObservation {
        let box = ObserverBox(handler: handler, onError: onError)
        var id: Int64 = 0
        try SQLiteTriggersError.check(add(Unmanaged.passRetained(box).toOpaque(), &id), connection)
        box.connection = connection
        box.id = id
        return CallbackObservation(box: box)
    }

    /// Delivers committed events to the after-commit observers. Call it when
    /// a statement or transaction has finished; observers may use the
    /// connection. SQLiteTriggersGRDB calls it for you after each commit.
    ///
    /// ```swift
    /// sqlite3_exec(handle, "UPDATE reminders SET isCompleted = 1", nil, nil, nil)   // import your SQLite module
    /// try RawConnection.deliverCallbacks(on: handle)
    /// ```
    public static func deliverCallbacks(on connection: OpaquePointer) throws(SQLiteTriggersError) {
        try SQLiteTriggersError.check(sqlitetriggers_deliver(connection), connection)
    }
}

typealias EventHandler = (CallbackArguments) throws -> CallbackValue?
typealias BatchHandler = (Int) throws -> Void

private let releaseEventBox: @convention(c) (UnsafeMutableRawPointer?) -> Void = { argument in
    guard let argument else { return }
    Unmanaged<ObserverBox<EventHandler>>.fromOpaque(argument).release()
}

private let releaseBatchBox: @convention(c) (UnsafeMutableRawPointer?) -> Void = { argument in
    guard let argument else { return }
    Unmanaged<ObserverBox<BatchHandler>>.fromOpaque(argument).release()
}

private let immediateTrampoline: sqlitetriggers_immediate_callback = { argument, event, context, errorOut in
    let box = Unmanaged<ObserverBox<EventHandler>>.fromOpaque(argument!).takeUnretainedValue()
    guard let handler = box.handlerOrRemove(), let event, let context else { return SQLITE_OK }
    do {
        if let result = try handler(CallbackArguments(event: event)) {
            setResult(result, on: context)
        }
        return SQLITE_OK
    } catch {
        errorOut?.pointee = sqliteCopy("\(error)")
        return SQLITE_CONSTRAINT
    }
}

private let afterCommitTrampoline: sqlitetriggers_after_commit_callback = { argument, event in
    let box = Unmanaged<ObserverBox<EventHandler>>.fromOpaque(argument!).takeUnretainedValue()
    guard let handler = box.handlerOrRemove(), let event else { return }
    do {
        _ = try handler(CallbackArguments(event: event))
    } catch {
        (box.onError ?? CallbackObservation.defaultErrorHandler)(error)
    }
}

private let batchTrampoline: sqlitetriggers_batch_callback = { argument, count in
    let box = Unmanaged<ObserverBox<BatchHandler>>.fromOpaque(argument!).takeUnretainedValue()
    guard let handler = box.handlerOrRemove() else { return }
    do {
        try handler(Int(count))
    } catch {
        (box.onError ?? CallbackObservation.defaultErrorHandler)(error)
    }
}

/// A copy of `text` that SQLite frees with sqlite3_free().
private func sqliteCopy(_ text: String) -> UnsafeMutablePointer<CChar>? {
    let utf8 = Array(text.utf8CString)
    guard let copy = sqlite3_malloc64(UInt64(utf8.count))?.assumingMemoryBound(to: CChar.self) else { return nil }
    utf8.withUnsafeBufferPointer { copy.update(from: $0.baseAddress!, count: utf8.count) }
    return copy
}

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

private func setResult(_ value: CallbackValue, on context: OpaquePointer) {
    switch value {
    case .null: sqlite3_result_null(context)
    case .integer(let int): sqlite3_result_int64(context, int)
    case .real(let real): sqlite3_result_double(context, real)
    case .text(let text): sqlite3_result_text(context, text, -1, transient)
    case .blob(let data) where data.isEmpty:
        sqlite3_result_zeroblob(context, 0)
    case .blob(let data):
        data.withUnsafeBytes { sqlite3_result_blob64(context, $0.baseAddress, UInt64($0.count), transient) }
    }
}
