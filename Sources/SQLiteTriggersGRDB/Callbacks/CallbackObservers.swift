import GRDB
import Foundation

extension Database {
    /// Observes `swift_callback(name, ...)` with typed arguments.
    ///
    /// After commit (the default), `body` runs once per committed event, in
    /// order, on this connection's queue right after GRDB reports the
    /// commit: it may read and write `db`. To run elsewhere (the main actor,
    /// another queue), start from the writer: `dbQueue.observe(_:scheduling:…)`.
    /// The observation lasts as long as the returned token.
    /// Arguments that do not decode, and errors `body` throws, go to
    /// `onError` (default: `CallbackObservation.defaultErrorHandler`).
    ///
    /// Immediately, `body` runs inside the statement; a decoding failure or
    /// an error it throws fails the statement with a `DatabaseError` of
    /// extended code `SQLITE_CONSTRAINT_FUNCTION` and the error's description.
    ///
    /// ```swift
    /// let observation = try db.observeCallback("reminderCompleted") { (id: UUID, title: String) in
    ///     print("Completed \(title)")
    /// }
    /// ```
    @inlinable
    public func observeCallback<each A: CallbackArgument>(
        _ name: String,
        delivery: CallbackDelivery = .afterCommit,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ body: @escaping (repeat each A) throws -> Void
    ) throws -> CallbackObservation {
        try observeCallbacks(named: name, delivery: delivery, onError: onError) { arguments in
            let values = try arguments.decode(repeat (each A).self)
            try body(repeat each values)
            return nil
        }
    }

    /// Observes `swift_callback(name, ...)` immediately, answering with the
    /// value `body` returns, which becomes the result of `swift_callback`.
    /// `body` runs inside the statement, on this connection's queue; the
    /// observation lasts as long as the returned token.
    ///
    /// ```swift
    /// let allowing = try db.observeCallback("isAllowed", delivery: .immediate) { (title: String) in !title.isEmpty }
    /// ```
    @inlinable
    public func observeCallback<each A: CallbackArgument, Result: CallbackValueConvertible>(
        _ name: String,
        delivery: CallbackDelivery,
        _ body: @escaping (repeat each A) throws -> Result
    ) throws -> CallbackObservation {
        try observeCallbacks(named: name, delivery: delivery, onError: nil) { arguments in
            let values = try arguments.decode(repeat (each A).self)
            return try body(repeat each values).callbackValue
        }
    }

    /// Observes `swift_callback(name, ...)` with typed arguments and the
    /// connection, to read or write the database from the observer, on this
    /// connection's queue. The observation lasts as long as the returned token.
    ///
    /// ```swift
    /// let observation = try db.observeCallback("reminderCompleted") { (db: Database, id: UUID) in
    ///     try db.execute(sql: "INSERT INTO history(reminderID) VALUES (?)", arguments: [id.uuidString.lowercased()])
    /// }
    /// ```
    @inlinable
    public func observeCallback<each A: CallbackArgument>(
        _ name: String,
        delivery: CallbackDelivery = .afterCommit,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ body: @escaping (Database, repeat each A) throws -> Void
    ) throws -> CallbackObservation {
        try observeCallbacks(named: name, delivery: delivery, onError: onError) { [unowned self] arguments in
            let values = try arguments.decode(repeat (each A).self)
            try body(self, repeat each values)
            return nil
        }
    }

    /// Observes `swift_callback(name, ...)` decoded positionally into a
    /// `Decodable` payload: the first argument feeds the first property.
    /// `body` runs on this connection's queue; the observation lasts as long
    /// as the returned token.
    ///
    /// ```swift
    /// struct ReminderCompleted: Decodable { var id: UUID; var title: String }
    /// let observation = try db.observeCallback("reminderCompleted", as: ReminderCompleted.self) { event in print(event.title) }
    /// ```
    public func observeCallback<Payload: Decodable>(
        _ name: String,
        as payload: Payload.Type,
        delivery: CallbackDelivery = .afterCommit,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ body: @escaping (Payload) throws -> Void
    ) throws -> CallbackObservation {
        try observeCallbacks(named: name, delivery: delivery, onError: onError) { arguments in
            try body(arguments.decode(as: Payload.self))
            return nil
        }
    }

    /// Observes every callback (`name` nil) or one name, untyped: the
    /// handler reads the arguments in place and may answer an immediate call.
    /// It runs on this connection's queue; the observation lasts as long as
    /// the returned token.
    ///
    /// ```swift
    /// let everything = try db.observeCallbacks(named: nil, delivery: .afterCommit) { arguments in
    ///     print(arguments.record)
    ///     return nil
    /// }
    /// ```
    public func observeCallbacks(
        named name: String?,
        delivery: CallbackDelivery,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ handler: @escaping (CallbackArguments) throws -> CallbackValue?
    ) throws -> CallbackObservation {
        var observation: CallbackObservation?
        try withSQLiteConnection { handle in
            observation = try RawConnection.observeCallbacks(
                named: name, delivery: delivery, on: handle, onError: onError, handler)
        }
        return observation!
    }

    /// Observes `swift_callback(name, ...)` after commit a round at a time:
    /// `body` runs on this connection's queue once per delivery round with
    /// events of `name` (nil: every name), and fetches them, in commit
    /// order, from `swift_callback_batch` (`seq`, `name`, `argc`, `arg1`,
    /// `arg2`, …), with GRDB as rows of a table. Its argument is their number.
    ///
    /// ```swift
    /// let observation = try db.observeCallbackBatches(named: "reminderCompleted") { db, count in
    ///     let titles = try String.fetchAll(db, sql: "SELECT arg2 FROM swift_callback_batch")
    ///     print(count, titles)
    /// }
    /// ```
    public func observeCallbackBatches(
        named name: String?,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ body: @escaping (Database, Int) throws -> Void
    ) throws -> CallbackObservation {
        var observation: CallbackObservation?
        try withSQLiteConnection { handle in
            observation = try RawConnection.observeCallbackBatches(named: name, on: handle, onError: onError) { [unowned self] count in
                try body(self, count)
            }
        }
        return observation!
    }
}

extension Database {
    /// Observes a typed event (see `@CallbackEvent`): the observer receives
    /// the decoded struct, on this connection's queue. The observation lasts
    /// as long as the returned token; to observe on the main actor, start
    /// from the writer: `dbQueue.observe(ReminderCompleted.self) { … }`.
    ///
    /// ```swift
    /// let observation = try db.observe(ReminderCompleted.self) { event in print(event.title) }
    /// ```
    public func observe<Event: CallbackEvent>(
        _ event: Event.Type,
        delivery: CallbackDelivery = .afterCommit,
        onError: (@Sendable (any Error) -> Void)? = nil,
        _ body: @escaping (Event) throws -> Void
    ) throws -> CallbackObservation {
        try observeCallbacks(named: Event.callbackName, delivery: delivery, onError: onError) { arguments in
            try body(Event.decode(from: arguments))
            return nil
        }
    }
}
