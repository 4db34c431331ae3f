import GRDB
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
    ///
    /// Any other table type observes through a ``FeedTable``, its name and
    /// row decoding: `observeChanges(to: FeedTable("reminders") { row in … })`.
    @MainActor
    public func observeChanges<Record: FetchableRecord & TableRecord & Sendable>(
        to record: Record.Type,
        feed: ChangeFeed<Record> = .all,
        onError: (@MainActor (any Error) -> Void)? = nil,
        onChange: @escaping @MainActor (RecordChange<Record>) -> Void
    ) throws -> CallbackObservation {
        try observeChanges(to: FeedTable(record), feed: feed, onError: onError, onChange: onChange)
    }

    /// Observes every committed change of `table` on the main actor; see
    /// ``observeChanges(to:feed:onError:onChange:)-(Record.Type,_,_,_)``.
    ///
    /// ```swift
    /// let titles = FeedTable("reminders") { row in String(row["title"] ?? "") }
    /// let observation = try dbQueue.observeChanges(to: titles) { change in print(change) }
    /// ```
    @MainActor
    public func observeChanges<Record: Sendable>(
        to table: FeedTable<Record>,
        feed: ChangeFeed<Record> = .all,
        onError: (@MainActor (any Error) -> Void)? = nil,
        onChange: @escaping @MainActor (RecordChange<Record>) -> Void
    ) throws -> CallbackObservation {
        try startChangeFeed(feed, of: table, scheduling: .mainActor, onError: onError.map(onMainActor),
                            decodeSide: ChangeDecoder<Record>.record, onChange: onMainActor(onChange))
    }

    /// Observes every committed change of a record's table where
    /// `scheduling` says; see ``observeChanges(to:feed:onError:onChange:)-(Record.Type,_,_,_)``.
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
        try observeChanges(to: FeedTable(record), feed: feed, scheduling: scheduling, onError: onError, onChange: onChange)
    }

    /// Observes every committed change of `table` where `scheduling` says.
    ///
    /// ```swift
    /// let titles = FeedTable("reminders") { row in String(row["title"] ?? "") }
    /// let observation = try dbQueue.observeChanges(to: titles, scheduling: .onWriterQueue) { change in print(change) }
    /// ```
    public func observeChanges<Record: Sendable>(
        to table: FeedTable<Record>,
        feed: ChangeFeed<Record> = .all,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onChange: @escaping @Sendable (RecordChange<Record>) -> Void
    ) throws -> CallbackObservation {
        try startChangeFeed(feed, of: table, scheduling: scheduling, onError: onError, decodeSide: ChangeDecoder<Record>.record,
                            onChange: onChange)
    }

    /// Observes every committed change of a table by key only: each change
    /// carries the row's ``ChangedKey`` (rowid and primary key), not its
    /// values, where `scheduling` says. For tables whose transactions touch
    /// millions of rows: what waits for the commit is a few values per row,
    /// not whole rows. Filters, net changes and the rest work as in
    /// ``observeChanges(to:feed:scheduling:onError:onChange:)-(Record.Type,_,_,_,_)``.
    ///
    /// ```swift
    /// let reindex = try dbQueue.observeChangedKeys(of: Reminder.self, scheduling: .onWriterQueue) { change in
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
        try observeChangedKeys(of: FeedTable(record), feed: feed, scheduling: scheduling, onError: onError, onChange: onChange)
    }

    /// Observes every committed change of `table` by key only (its decoding
    /// is never used).
    ///
    /// ```swift
    /// let reindex = try dbQueue.observeChangedKeys(of: FeedTable("reminders") { _ in () }, scheduling: .onWriterQueue) { change in
    ///     if let key = change.new { print("reindex", key) }
    /// }
    /// ```
    public func observeChangedKeys<Record>(
        of table: FeedTable<Record>,
        feed: ChangeFeed<Record> = .all,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onChange: @escaping @Sendable (RecordChange<ChangedKey>) -> Void
    ) throws -> CallbackObservation {
        var keysOnly = feed
        keysOnly.isKeysOnly = true
        return try startChangeFeed(keysOnly, of: table, scheduling: scheduling, onError: onError,
                                   decodeSide: { decoder, row in decoder.changedKey(row) }, onChange: onChange)
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
        try checkChanges(to: FeedTable(record), feed: feed, body)
    }

    /// Runs `body` inside each statement that changes `table`; see
    /// ``checkChanges(to:feed:_:)-(Record.Type,_,_)``.
    ///
    /// ```swift
    /// let titles = FeedTable("reminders") { row in String(row["title"] ?? "") }
    /// let guardTitles = try dbQueue.checkChanges(to: titles) { change in
    ///     if change.new == "" { throw DatabaseError(message: "a reminder needs a title") }
    /// }
    /// ```
    public func checkChanges<Record>(
        to table: FeedTable<Record>,
        feed: ChangeFeed<Record> = .all,
        _ body: @escaping (RecordChange<Record>) throws -> Void
    ) throws -> CallbackObservation {
        try writeWithoutTransaction { db in
            let decoder = try ChangeDecoder<Record>.checking(feed.bound(to: table), of: table, on: db)
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
        try recordChanges(to: FeedTable(record), feed: feed, bufferingNewest: limit)
    }

    /// The committed changes of `table` as an async sequence.
    ///
    /// ```swift
    /// let titles = FeedTable("reminders") { row in String(row["title"] ?? "") }
    /// for await change in try dbQueue.recordChanges(to: titles) { print(change) }
    /// ```
    public func recordChanges<Record: Sendable>(
        to table: FeedTable<Record>, feed: ChangeFeed<Record> = .all, bufferingNewest limit: Int = 1000
    ) throws -> CallbackStream<RecordChange<Record>> {
        try CallbackStream.started(bufferingNewest: limit) { yield, onError in
            try startChangeFeed(feed, of: table, scheduling: .onWriterQueue, onError: onError,
                                decodeSide: ChangeDecoder<Record>.record, onChange: yield)
        }
    }

    /// Observes each committed transaction that changed a record's table,
    /// as one value: its changes, in commit order (or net, with
    /// ``ChangeFeed/netPerTransaction()``), where `scheduling` says. For sync
    /// engines that upload a transaction at a time. Filters apply as in
    /// ``observeChanges(to:feed:scheduling:onError:onChange:)-(Record.Type,_,_,_,_)``; a
    /// transaction none of whose changes pass them is not delivered.
    ///
    /// ```swift
    /// let uploads = try dbQueue.observeTransactions(of: Reminder.self, scheduling: .async(onQueue: .global())) { transaction in
    ///     print("transaction", transaction.number, "changed", transaction.changes.count, "reminders")
    /// }
    /// ```
    public func observeTransactions<Record: FetchableRecord & TableRecord & Sendable>(
        of record: Record.Type,
        feed: ChangeFeed<Record> = .all,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onTransaction: @escaping @Sendable (CommittedTransaction<Record>) -> Void
    ) throws -> CallbackObservation {
        try observeTransactions(of: FeedTable(record), feed: feed, scheduling: scheduling, onError: onError, onTransaction: onTransaction)
    }

    /// Observes each committed transaction that changed `table`, as one value.
    ///
    /// ```swift
    /// let titles = FeedTable("reminders") { row in String(row["title"] ?? "") }
    /// let uploads = try dbQueue.observeTransactions(of: titles, scheduling: .onWriterQueue) { transaction in
    ///     print(transaction.number, transaction.changes)
    /// }
    /// ```
    public func observeTransactions<Record: Sendable>(
        of table: FeedTable<Record>,
        feed: ChangeFeed<Record> = .all,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)? = nil,
        onTransaction: @escaping @Sendable (CommittedTransaction<Record>) -> Void
    ) throws -> CallbackObservation {
        let delivery = ScheduledDelivery(scheduling: scheduling, onError: onError, onEvent: onTransaction)
        let group: (Int64, [RecordChange<Record>]) -> Void = { number, changes in
            delivery.deliver(CommittedTransaction(number: number, changes: changes))
        }
        return try startChangeFeed(feed, of: table, delivery: delivery, decodeSide: ChangeDecoder<Record>.record, onTransaction: group)
    }

    // MARK: - Starting a feed

    /// `decodeSide` builds an element from a side of a change: a record, or
    /// the ``ChangedKey`` of a keys-only feed.
    private func startChangeFeed<Record, Element: Sendable>(
        _ feed: ChangeFeed<Record>,
        of table: FeedTable<Record>,
        scheduling: CallbackScheduling,
        onError: (@Sendable (any Error) -> Void)?,
        decodeSide: @escaping (ChangeDecoder<Record>, Row) throws -> Element,
        onChange: @escaping @Sendable (RecordChange<Element>) -> Void
    ) throws -> CallbackObservation {
        let delivery = ScheduledDelivery(scheduling: scheduling, onError: onError, onEvent: onChange)
        // Exact changes go one by one as they are read; net ones once their
        // transaction is folded.
        let each: ((RecordChange<Element>) -> Void)? = feed.isNet ? nil : { change in delivery.deliver(change) }
        let onTransaction: (Int64, [RecordChange<Element>]) -> Void = { _, changes in
            for change in changes { delivery.deliver(change) }
        }
        return try startChangeFeed(feed, of: table, delivery: delivery, decodeSide: decodeSide, each: each, onTransaction: onTransaction)
    }

    /// Installs the feed and reads each round of its committed changes,
    /// handing them out a transaction at a time (`onTransaction`: its number
    /// and changes, net when the feed is), or one at a time (`each`, for an
    /// exact feed that needs no grouping). A round holds whole transactions:
    /// callback_transaction.c commits a transaction's events together.
    private func startChangeFeed<Record, Element: Sendable, Delivered: Sendable>(
        _ feed: ChangeFeed<Record>,
        of table: FeedTable<Record>,
        delivery: ScheduledDelivery<Delivered>,
        decodeSide: @escaping (ChangeDecoder<Record>, Row) throws -> Element,
        each: ((RecordChange<Element>) -> Void)? = nil,
        onTransaction: @escaping (Int64, [RecordChange<Element>]) -> Void
    ) throws -> CallbackObservation {
        let feed = feed.bound(to: table)
        return try start(delivery) { db in
            let decoder = try ChangeDecoder<Record>.keeping(feed, of: table, on: db)
            decoder.writer = self
            // A round of events at a time, decoded by one GRDB fetch.
            return try db.observeCallbackBatches(named: decoder.eventName, onError: delivery.report) { db, count in
                var group = TransactionGroup<Element>(isNet: feed.isNet)
                try decoder.decodeBatch(db, eventCount: count, withKeys: feed.isNet, hasUpdates: feed.hasUpdates, decodeSide: decodeSide,
                                        onError: delivery.report) { change, oldKey, newKey, transaction in
                    if let each { each(change); return }
                    group.add(change, oldKey: oldKey, newKey: newKey, transaction: transaction, flush: onTransaction)
                }
                group.flush(onTransaction)
            }
        }
    }
}
