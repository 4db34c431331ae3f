import Foundation

extension DatabaseWriter {
    /// Observes every committed change of a record's table, whatever wrote
    /// it (records, raw SQL, other triggers, cascades, upserts), on the main
    /// actor: each change once, in commit order, never for rolled-back work.
    ///
    /// The feed's TEMP triggers go on the writer's connection and come back
    /// after migrations, like a ``SQLiteTriggers/RuleSet``. Records are
    /// decoded from GRDB rows of the table's live columns, as a fetch would
    /// decode them. The observation lasts as long as the returned token;
    /// events still queued when it is cancelled are dropped.
    ///
    /// ```swift
    /// let observation = try dbQueue.observeChanges(to: Reminder.self) { change in
    ///     if case .updated(let old, let new) = change { print(old.title, "->", new.title) }
    /// }
    /// ```
    @MainActor
    public func observeChanges<Record: FetchableRecord & TableRecord & Sendable>(
        to record: Record.Type,
        feed: ChangeFeed<Record> = .all,
        onError: (@MainActor (any Error) -> Void)? = nil,
        onChange: @escaping @MainActor (RecordChange<Record>) -> Void
    ) throws -> CallbackObservation {
        try startChangeFeed(feed, scheduling: .mainActor, onError: onError.map(onMainActor), decodeSide: { _, row in try Record(row: row) },
                            onChange: onMainActor(onChange))
    }

    /// Observes every committed change of a record's table where
    /// `scheduling` says; see ``observeChanges(to:feed:onError:onChange:)``.
    ///
    /// ```swift
    /// let sync = try dbPool.observeChanges(to: Reminder.self, feed: ChangeFeed.all.netPerTransaction(),
    ///                                      scheduling: .async(onQueue: syncQueue)) { change in print(change) }
    /// ```
    public func observeChanges<Record: FetchableRecord & TableRecord & Sendable>(
        to record: Record.Type,
        feed: ChangeFeed<Record> = .all,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onChange: @escaping @Sendable (RecordChange<Record>) -> Void
    ) throws -> CallbackObservation {
        try startChangeFeed(feed, scheduling: scheduling, onError: onError, decodeSide: { _, row in try Record(row: row) }, onChange: onChange)
    }

    /// Observes every committed change of a table by key only: each change
    /// carries the row's ``ChangedKey`` (rowid and primary key), not its
    /// values, where `scheduling` says. For tables whose transactions touch
    /// millions of rows: what waits for the commit is a few values per row,
    /// not whole rows. Filters, net changes and the rest work as in
    /// ``observeChanges(to:feed:scheduling:onError:onChange:)``.
    ///
    /// ```swift
    /// let reindex = try dbQueue.observeChangedKeys(of: Reminder.self, scheduling: .immediate) { change in
    ///     if let key = change.new { print("reindex", key) }
    /// }
    /// ```
    public func observeChangedKeys<Record: FetchableRecord & TableRecord>(
        of record: Record.Type,
        feed: ChangeFeed<Record> = .all,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onChange: @escaping @Sendable (RecordChange<ChangedKey>) -> Void
    ) throws -> CallbackObservation {
        var keysOnly = feed
        keysOnly.isKeysOnly = true
        return try startChangeFeed(keysOnly, scheduling: scheduling, onError: onError, decodeSide: { decoder, row in decoder.changedKey(row) },
                                   onChange: onChange)
    }

    /// Runs `body` inside each statement that changes the table, on the
    /// writer's queue, before the statement completes: the `willInsert` of
    /// every write path. Throwing refuses the write: the statement fails
    /// with `SQLITE_CONSTRAINT_FUNCTION` and the error's description, as
    /// after `RAISE(ABORT)`. Net changes do not apply (nothing is committed yet).
    ///
    /// ```swift
    /// let guardTitles = try dbQueue.checkChanges(to: Reminder.self) { change in
    ///     if let new = change.new, new.title.isEmpty { throw DatabaseError(message: "a reminder needs a title") }
    /// }
    /// ```
    public func checkChanges<Record: FetchableRecord & TableRecord>(
        to record: Record.Type,
        feed: ChangeFeed<Record> = .all,
        _ body: @escaping (RecordChange<Record>) throws -> Void
    ) throws -> CallbackObservation {
        try writeWithoutTransaction { db in
            let decoder = try ChangeDecoder<Record>.checking(feed, on: db)
            decoder.writer = self
            return try db.observeCallbacks(named: decoder.eventName, delivery: .immediate) { arguments in
                try body(decoder.decode(arguments).change)
                return nil
            }
        }
    }

    /// The committed changes of a record's table as an async sequence, with
    /// the bounded buffer of ``CallbackStream``.
    ///
    /// ```swift
    /// for await change in try dbQueue.recordChanges(to: Reminder.self) { print(change) }
    /// ```
    public func recordChanges<Record: FetchableRecord & TableRecord & Sendable>(
        to record: Record.Type, feed: ChangeFeed<Record> = .all, bufferingNewest limit: Int = 1000
    ) throws -> CallbackStream<RecordChange<Record>> {
        let (stream, continuation) = AsyncStream.makeStream(of: RecordChange<Record>.self, bufferingPolicy: .bufferingNewest(limit))
        let counters = CallbackStream<RecordChange<Record>>.Counters()
        let observation = try startChangeFeed(feed, scheduling: .immediate, onError: { _ in counters.countUndecodable() },
                                              decodeSide: { _, row in try Record(row: row) }) { change in
            if case .dropped = continuation.yield(change) { counters.countDropped() }
        }
        continuation.onTermination = { [weak observation] _ in observation?.cancel() }
        return CallbackStream(stream: stream, continuation: continuation, counters: counters, observation: observation)
    }

    /// `decodeSide` builds an element from a side of a change: a record, or
    /// the ``ChangedKey`` of a keys-only feed.
    private func startChangeFeed<Record: FetchableRecord & TableRecord, Element: Sendable>(
        _ feed: ChangeFeed<Record>,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)?,
        decodeSide: @escaping (ChangeDecoder<Record>, Row) throws -> Element,
        onChange: @escaping @Sendable (RecordChange<Element>) -> Void
    ) throws -> CallbackObservation {
        let delivery = ScheduledDelivery(scheduling: scheduling, onError: onError, onEvent: onChange)
        let observation = try writeWithoutTransaction { db in
            let decoder = try ChangeDecoder<Record>.keeping(feed, on: db)
            decoder.writer = self
            let flusher = feed.isNet ? NetChangeFlusher<Element>(deliver: delivery.deliver) : nil
            if let flusher { db.add(transactionObserver: flusher, extent: .observerLifetime) }
            // A round of events at a time, decoded by one GRDB fetch.
            return try db.observeCallbackBatches(named: decoder.eventName, onError: delivery.report) { db, count in
                try decoder.decodeBatch(db, eventCount: count, withKeys: flusher != nil, hasUpdates: feed.hasUpdates, decodeSide: decodeSide,
                                        onError: delivery.report) { change, oldKey, newKey in
                    if let flusher {
                        flusher.net.add(change, oldKey: oldKey, newKey: newKey)
                    } else {
                        delivery.deliver(change)
                    }
                }
            }
        }
        delivery.cancellation = observation.cancellation
        return observation
    }
}

extension ChangeDecoder {
    /// A decoder for `feed`'s committed changes, with the table's change
    /// capture installed on `db` and kept there (and its columns and filter
    /// kept current) for as long as the decoder lives.
    static func keeping(_ feed: ChangeFeed<Record>, on db: Database) throws -> ChangeDecoder {
        let decoder = ChangeDecoder(columns: [], keyColumns: [])
        decoder.sidesReadRowID = feed.isKeysOnly
        decoder.keeper = try RuleKeeper.start(on: db, extent: .observerLifetime, onError: nil) { [weak decoder] db in
            let table = try feed.capturedTable(db)
            let mode = try feed.captureMode(db, table: table)
            let rule = try ChangeFeed<Record>.captureRule(db, table: table, mode: mode)
            let columns = try feed.payloadColumns(db, mode: mode)
            let filter = try feed.batchFilter(columns: columns)
            decoder?.eventName = "sqlitetriggers.changes.\(table)"
            decoder?.columns = columns
            decoder?.keyColumns = try feed.keyColumns(db)
            decoder?.filter = filter
            return [rule]
        }
        return decoder
    }

    /// A decoder for `feed`'s checks, inside each statement, with their
    /// triggers installed on `db` and kept there while the decoder lives.
    static func checking(_ feed: ChangeFeed<Record>, on db: Database) throws -> ChangeDecoder {
        let decoder = ChangeDecoder(columns: try feed.liveColumns(db), keyColumns: try feed.keyColumns(db))
        decoder.eventName = feed.checkCallbackName
        decoder.keeper = try RuleKeeper.start(on: db, extent: .observerLifetime, onError: nil) { [weak decoder] db in
            let triggers = try feed.checkTriggers(db)
            decoder?.columns = try feed.liveColumns(db)
            decoder?.keyColumns = try feed.keyColumns(db)
            return triggers
        }
        return decoder
    }
}

/// Hands out a transaction's net changes once GRDB reports its commit,
/// after the feed's events of that commit were folded in.
private final class NetChangeFlusher<Record>: TransactionObserver {
    var net = NetChanges<Record>()
    let deliver: (RecordChange<Record>) -> Void

    init(deliver: @escaping (RecordChange<Record>) -> Void) { self.deliver = deliver }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) { net.drain().forEach(deliver) }
    func databaseDidRollback(_ db: Database) { _ = net.drain() }
}
