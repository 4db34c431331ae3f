import GRDB
import Foundation

/// Where a writer-level observer runs, as GRDB's `ValueObservation`
/// schedulers say it.
///
/// ```swift
/// let observation = try dbQueue.observe(ReminderCompleted.self, scheduling: .async(onQueue: syncQueue)) { event in
///     upload(event)
/// }
/// ```
public struct CallbackScheduling: Sendable {
    let schedule: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// `.onWriterQueue`: events are handed over in place, with no closure to build.
    var runsInPlace = false

    /// Asynchronously on `queue`, one event after another, in commit order.
    ///
    /// ```swift
    /// let observation = try dbQueue.observe(ReminderCompleted.self, scheduling: .async(onQueue: .global())) { event in
    ///     print(event.title)
    /// }
    /// ```
    public static func async(onQueue queue: DispatchQueue) -> CallbackScheduling {
        CallbackScheduling { action in queue.async(execute: action) }
    }

    /// Synchronously on the writer's queue, right after the commit, before
    /// the writer runs anything else. Keep it short: the writer waits.
    ///
    /// ```swift
    /// let observation = try dbQueue.observe(ReminderCompleted.self, scheduling: .onWriterQueue) { event in
    ///     print(event.title)                         // the writer waits for this
    /// }
    /// ```
    public static let onWriterQueue = CallbackScheduling(schedule: { action in action() }, runsInPlace: true)

    /// Renamed: GRDB's `.immediate` scheduler means the main actor with a
    /// first value delivered synchronously, the opposite of this one.
    @available(*, unavailable, renamed: "onWriterQueue")
    public static var immediate: CallbackScheduling { onWriterQueue }
}

extension DatabaseWriter {
    /// Observes a typed event (see `@CallbackEvent`) on the writer, once per
    /// committed event and never for a rollback, on the main actor.
    ///
    /// The observation lasts as long as the returned token: keep it (in a
    /// property of the object that observes), and cancel or release it to
    /// stop. Events still queued for the main actor when it stops are not
    /// delivered. Arguments that do not decode go to `onError` (default:
    /// `CallbackObservation.defaultErrorHandler`).
    ///
    /// ```swift
    /// @MainActor final class RemindersModel {
    ///     var completed: [String] = []
    ///     var observation: CallbackObservation?
    ///     func start(_ dbQueue: DatabaseQueue) throws {
    ///         observation = try dbQueue.observe(ReminderCompleted.self) { [weak self] event in
    ///             self?.completed.append(event.title)
    ///         }
    ///     }
    /// }
    /// ```
    @MainActor
    public func observe<Event: CallbackEvent & Sendable>(
        _ event: Event.Type,
        onError: (@MainActor (any Error) -> Void)? = nil,
        onEvent: @escaping @MainActor (Event) -> Void
    ) throws -> CallbackObservation {
        try startObservation(Event.callbackName, decode: Event.decode(from:), scheduling: .mainActor,
                             onError: onError.map(onMainActor), onEvent: onMainActor(onEvent))
    }

    /// Observes a typed event (see `@CallbackEvent`) on the writer, once per
    /// committed event and never for a rollback, where `scheduling` says.
    ///
    /// The observation lasts as long as the returned token; cancel or
    /// release it to stop. Arguments that do not decode go to `onError`
    /// (default: `CallbackObservation.defaultErrorHandler`), scheduled
    /// like the events.
    ///
    /// ```swift
    /// let observation = try dbPool.observe(ReminderCompleted.self, scheduling: .onWriterQueue) { event in
    ///     print("Completed \(event.title)")            // on the writer's queue, right after commit
    /// }
    /// ```
    public func observe<Event: CallbackEvent & Sendable>(
        _ event: Event.Type,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onEvent: @escaping @Sendable (Event) -> Void
    ) throws -> CallbackObservation {
        try startObservation(Event.callbackName, decode: Event.decode(from:), scheduling: scheduling,
                             onError: onError, onEvent: onEvent)
    }

    /// Observes `swift_callback(name, ...)` on the writer, decoded
    /// positionally into a `Decodable` payload, on the main actor. Prefer
    /// typed events (`@CallbackEvent`), whose name cannot be mistyped.
    ///
    /// The token's lifetime and errors work as for ``observe(_:onError:onEvent:)``.
    ///
    /// ```swift
    /// struct Completed: Decodable, Sendable { var id: UUID; var title: String }
    /// let observation = try dbQueue.observeCallback("reminderCompleted", as: Completed.self) { event in
    ///     print(event.title)
    /// }
    /// ```
    @MainActor
    public func observeCallback<Payload: Decodable & Sendable>(
        _ name: String,
        as payload: Payload.Type,
        onError: (@MainActor (any Error) -> Void)? = nil,
        onEvent: @escaping @MainActor (Payload) -> Void
    ) throws -> CallbackObservation {
        try startObservation(name, decode: { try $0.decode(as: Payload.self) }, scheduling: .mainActor,
                             onError: onError.map(onMainActor), onEvent: onMainActor(onEvent))
    }

    /// Observes `swift_callback(name, ...)` on the writer, decoded
    /// positionally into a `Decodable` payload, where `scheduling` says.
    ///
    /// ```swift
    /// let observation = try dbQueue.observeCallback("reminderCompleted", as: Completed.self,
    ///                                               scheduling: .async(onQueue: .global())) { event in print(event.title) }
    /// ```
    public func observeCallback<Payload: Decodable & Sendable>(
        _ name: String,
        as payload: Payload.Type,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onEvent: @escaping @Sendable (Payload) -> Void
    ) throws -> CallbackObservation {
        try startObservation(name, decode: { try $0.decode(as: Payload.self) }, scheduling: scheduling,
                             onError: onError, onEvent: onEvent)
    }

    /// The committed events of a typed event, as an async sequence that
    /// starts from the writer; see `Database.committedCallbacks(_:bufferingNewest:)`.
    /// Observing lasts while the sequence lives.
    ///
    /// ```swift
    /// for await event in try dbQueue.committedCallbacks(ReminderCompleted.self) { print(event.title) }
    /// ```
    public func committedCallbacks<Event: CallbackEvent & Sendable>(
        _ event: Event.Type, bufferingNewest limit: Int = 1000
    ) throws -> CallbackStream<Event> {
        try writeWithoutTransaction { db in try db.committedCallbacks(event, bufferingNewest: limit) }
    }

    /// The committed events of one callback name, decoded positionally into
    /// a `Decodable` payload, as an async sequence that starts from the writer.
    ///
    /// ```swift
    /// for await event in try dbQueue.committedCallbacks("reminderCompleted", as: Completed.self) { print(event.title) }
    /// ```
    public func committedCallbacks<Payload: Decodable & Sendable>(
        _ name: String, as payload: Payload.Type, bufferingNewest limit: Int = 1000
    ) throws -> CallbackStream<Payload> {
        try writeWithoutTransaction { db in try db.committedCallbacks(name, as: payload, bufferingNewest: limit) }
    }

    // MARK: - Starting an observation

    /// Registers on the writer's connection; decodes there (arguments live
    /// only during the call) and hands the value to `scheduling`.
    private func startObservation<Element: Sendable>(
        _ name: String,
        decode: @escaping (CallbackArguments) throws -> Element,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)?,
        onEvent: @escaping @Sendable (Element) -> Void
    ) throws -> CallbackObservation {
        let delivery = ScheduledDelivery(scheduling: scheduling, onError: onError, onEvent: onEvent)
        return try start(delivery) { db in
            try db.observeCallbacks(named: name, delivery: .afterCommit, onError: delivery.report) { arguments in
                delivery.deliver(try decode(arguments))
                return nil
            }
        }
    }

    /// Registers an observer on the writer's queue with `register`, and
    /// gives `delivery` its token there, where no event can arrive before
    /// it: the one way writer-level observations start.
    func start<Element>(_ delivery: ScheduledDelivery<Element>,
                        _ register: (Database) throws -> CallbackObservation) throws -> CallbackObservation {
        try writeWithoutTransaction { db in
            let observation = try register(db)
            delivery.cancellation = observation.cancellation
            return observation
        }
    }
}

// MARK: - Delivery where the scheduling says

extension CallbackScheduling {
    /// The main queue, which is the main actor's.
    static let mainActor = CallbackScheduling.async(onQueue: .main)
}

/// A main-actor closure, for work scheduled on the main queue.
func onMainActor<Value: Sendable>(_ body: @escaping @MainActor (Value) -> Void) -> @Sendable (Value) -> Void {
    { value in MainActor.assumeIsolated { body(value) } }
}

/// Hands a writer-level observer's events and errors to its scheduling.
/// Scheduled work that runs after the token was cancelled or released does
/// nothing.
///
/// Lifetime: held by the observer's handler (so by the C layer's box) and
/// by the work it schedules; `cancellation`, set on the writer's queue when
/// the observation starts, is the token's flag, read before each delivery.
final class ScheduledDelivery<Element: Sendable>: @unchecked Sendable {
    /// The token's cancellation, set once on the writer's queue right after
    /// registering, before any event can arrive (events come on that queue).
    var cancellation: CancellationFlag?
    let scheduling: CallbackScheduling
    let onError: @Sendable (any Error) -> Void
    let onEvent: @Sendable (Element) -> Void

    init(scheduling: CallbackScheduling, onError: (@Sendable (any Error) -> Void)?, onEvent: @escaping @Sendable (Element) -> Void) {
        self.scheduling = scheduling
        self.onError = onError ?? CallbackObservation.defaultErrorHandler
        self.onEvent = onEvent
    }

    private var isLive: Bool { cancellation.map { !$0.isSet } ?? false }

    func deliver(_ element: Element) {
        if scheduling.runsInPlace {
            if isLive { onEvent(element) }
        } else {
            scheduling.schedule { if self.isLive { self.onEvent(element) } }
        }
    }

    @Sendable func report(_ error: any Error) { scheduling.schedule { if self.isLive { self.onError(error) } } }
}
