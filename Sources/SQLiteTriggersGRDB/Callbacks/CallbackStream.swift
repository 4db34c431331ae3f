import GRDB
import Foundation

/// Committed callback events as an `AsyncSequence`, for `for await` loops.
///
/// The writer never waits for the consumer: events go into a buffer of the
/// newest `bufferingNewest` events. When the consumer falls behind and the
/// buffer is full, the oldest buffered event is dropped and ``droppedCount``
/// grows. Events whose arguments do not decode are dropped too, and counted
/// in ``undecodableCount``. The sequence ends when it is cancelled or
/// deallocated, which stops observing.
///
/// ```swift
/// let completions = try await dbQueue.write { db in
///     try db.committedCallbacks(ReminderCompleted.self)
/// }
/// for await event in completions { print(event.title) }
/// ```
public final class CallbackStream<Element: Sendable>: AsyncSequence, Sendable {
    private let stream: AsyncStream<Element>
    private let continuation: AsyncStream<Element>.Continuation
    private let counters: Counters
    private let observation: CallbackObservation

    init(stream: AsyncStream<Element>, continuation: AsyncStream<Element>.Continuation,
         counters: Counters, observation: CallbackObservation) {
        self.stream = stream
        self.continuation = continuation
        self.counters = counters
        self.observation = observation
    }

    /// Iterates the buffered events; it keeps the observation alive.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.Iterator
        let owner: CallbackStream<Element>

        public mutating func next() async -> Element? { await base.next() }
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), owner: self)
    }

    /// Events dropped because the consumer fell behind a full buffer.
    public var droppedCount: Int { counters.value.dropped }

    /// Events dropped because their arguments did not decode.
    public var undecodableCount: Int { counters.value.undecodable }

    /// Stops observing and ends the sequence after the buffered events.
    public func cancel() {
        observation.cancel()
        continuation.finish()
    }

    /// A stream fed by the observation `start` returns: `start` is handed
    /// where each element goes (`yield`) and where an undecodable event is
    /// counted (`onError`). The one way our streams are made.
    static func started(
        bufferingNewest limit: Int,
        _ start: (_ yield: @escaping @Sendable (Element) -> Void,
                  _ onError: @escaping @Sendable (any Error) -> Void) throws -> CallbackObservation
    ) throws -> CallbackStream {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(limit))
        let counters = Counters()
        let observation = try start({ element in
            if case .dropped = continuation.yield(element) { counters.countDropped() }
        }, { _ in counters.countUndecodable() })
        continuation.onTermination = { [weak observation] _ in observation?.cancel() }
        return CallbackStream(stream: stream, continuation: continuation, counters: counters, observation: observation)
    }

    final class Counters: @unchecked Sendable {
        private let lock = NSLock()
        private var counts = (dropped: 0, undecodable: 0)
        var value: (dropped: Int, undecodable: Int) { lock.withLock { counts } }
        func countDropped() { lock.withLock { counts.dropped += 1 } }
        func countUndecodable() { lock.withLock { counts.undecodable += 1 } }
    }
}

extension Database {
    /// The committed events of one callback name, copied out as records.
    ///
    /// ```swift
    /// for await record in try db.committedCallbacks("changed") { print(record.values) }
    /// ```
    public func committedCallbacks(_ name: String, bufferingNewest limit: Int = 1000) throws -> CallbackStream<CallbackRecord> {
        try committedCallbacks(name, bufferingNewest: limit) { $0.record }
    }

    /// The committed events of one callback name, decoded positionally into
    /// a `Decodable` payload.
    ///
    /// ```swift
    /// struct Completed: Decodable, Sendable { var id: UUID; var title: String }
    /// let stream = try db.committedCallbacks("reminderCompleted", as: Completed.self)
    /// ```
    public func committedCallbacks<Payload: Decodable & Sendable>(
        _ name: String, as payload: Payload.Type, bufferingNewest limit: Int = 1000
    ) throws -> CallbackStream<Payload> {
        try committedCallbacks(name, bufferingNewest: limit) { try $0.decode(as: Payload.self) }
    }

    /// The committed events of a typed event (see `@CallbackEvent`).
    ///
    /// ```swift
    /// for await event in try db.committedCallbacks(ReminderCompleted.self) { print(event.title) }
    /// ```
    public func committedCallbacks<Event: CallbackEvent & Sendable>(
        _ event: Event.Type, bufferingNewest limit: Int = 1000
    ) throws -> CallbackStream<Event> {
        try committedCallbacks(Event.callbackName, bufferingNewest: limit) { try Event.decode(from: $0) }
    }

    private func committedCallbacks<Element: Sendable>(
        _ name: String, bufferingNewest limit: Int,
        _ transform: @escaping (CallbackArguments) throws -> Element
    ) throws -> CallbackStream<Element> {
        try CallbackStream.started(bufferingNewest: limit) { yield, onError in
            try observeCallbacks(named: name, delivery: .afterCommit, onError: onError) { arguments in
                yield(try transform(arguments))
                return nil
            }
        }
    }
}
