internal import SQLiteTriggersCSQLite
internal import CSQLiteTriggers
import Foundation

/// When an observer hears of an event.
public enum CallbackDelivery: Sendable {
    /// Inside the statement, synchronously. The observer may answer (the
    /// result of `swift_callback`) or throw to refuse the change: the
    /// statement then fails with `SQLITE_CONSTRAINT_FUNCTION` and the error's
    /// description, like `RAISE(ABORT)`.
    case immediate
    /// Once, after the transaction that fired the event has committed, in
    /// firing order; never for work that was rolled back.
    case afterCommit
}

/// Keeps an observer alive: `cancel()` it, or let it go, to stop observing.
///
/// ```swift
/// let observation = try db.observeCallback("reminderCompleted") { (id: UUID) in print(id) }
/// observation.cancel()
/// ```
public final class CallbackObservation: Sendable {
    let box: any CancellableObserver

    init(box: any CancellableObserver) { self.box = box }

    /// Stops the observer now, from any thread. What its handler captured is
    /// released at once.
    public func cancel() { box.cancel() }

    /// Whether `cancel()` ran or the token was released.
    ///
    /// ```swift
    /// if observation.isCancelled { print("no longer observing") }
    /// ```
    public var isCancelled: Bool { cancellation.isSet }

    /// Set when the observation is cancelled or released.
    package var cancellation: CancellationFlag { box.cancellation }

    deinit { box.cancel() }

    /// What happens to an error thrown by an after-commit observer, or to
    /// arguments it cannot decode, when its registration gave no `onError`.
    /// The default prints to standard error.
    ///
    /// ```swift
    /// CallbackObservation.defaultErrorHandler = { error in logger.error("\(error)") }
    /// ```
    public static var defaultErrorHandler: @Sendable (any Error) -> Void {
        get { errorHandlerLock.withLock { storedErrorHandler } }
        set { errorHandlerLock.withLock { storedErrorHandler = newValue } }
    }
}

/// What a ``CallbackObservation`` stops.
protocol CancellableObserver: Sendable {
    func cancel()
    var cancellation: CancellationFlag { get }
}

/// Whether an observation was cancelled, set once from any thread and read
/// without a lock: delivery checks it before each event it hands out.
package final class CancellationFlag: @unchecked Sendable {
    private let storage = UnsafeMutablePointer<CInt>.allocate(capacity: 1)

    init() { storage.initialize(to: 0) }
    deinit { storage.deallocate() }

    func set() { sqlitetriggers_swift_flag_set(storage) }
    package var isSet: Bool { sqlitetriggers_swift_flag_is_set(storage) != 0 }
}

private let errorHandlerLock = NSLock()
nonisolated(unsafe) private var storedErrorHandler: @Sendable (any Error) -> Void = { error in
    FileHandle.standardError.write(Data("SQLiteTriggers: \(error)\n".utf8))
}
