import GRDB
import Foundation
import SQLiteTriggers

/// One change the durable log recorded: which row of the table changed and
/// how, with the row as it is when the batch is read.
///
/// The log keeps keys, not values (its triggers are plain SQL that every
/// process runs, and naming columns would break `ALTER TABLE … DROP
/// COLUMN`), so ``record`` is the row now: nil when it no longer exists.
/// Apply changes by key, making your copy of each row what ``record`` says.
///
/// ```swift
/// func apply(_ change: DurableChange<Reminder>) {
///     if let reminder = change.record { print("upsert", reminder.title) } else { print("delete", change.key) }
/// }
/// ```
public struct DurableChange<Record> {
    /// How the row changed. In a batch read with `net: false`, as the log
    /// recorded each change (a hint: the log's triggers run in an order
    /// SQLite leaves unspecified, so a rule that rewrites a row just
    /// inserted is logged before the insert, and a row a write conflicted
    /// with on a UNIQUE column is `deleted` even when the write did not
    /// replace it); with `net: true`, the net change of the row over its
    /// transaction (see ``GRDB/Database/durableBatch(for:of:limit:net:excluding:)-(_,FeedTable<Record>,_,_,_)``).
    /// An update that changed the key is a deletion of the old key and an
    /// insertion of the new one.
    public enum Kind: Int, Sendable, Hashable {
        case inserted = 1
        case updated = 2
        case deleted = 3
    }

    /// The change's id in the log: positions count these.
    public var id: Int64
    /// The table, as installed (as GRDB's `DatabaseEvent.tableName`).
    public var tableName: String
    /// How the row changed.
    public var kind: Kind
    /// The row's primary key: one value per key column, in key order, as
    /// the table stores it (a UUID as GRDB's 16 bytes, or as text). Bind it
    /// as it is (`StatementArguments(change.key)`) to find the row, or read
    /// it typed with ``key(as:)``.
    public var key: [DatabaseValue]
    /// The row as it is when the batch was read; nil when it no longer
    /// exists.
    public var record: Record?
    /// For a table logged with tombstones (``GRDB/Database/installDurableLog(for:tombstones:)``),
    /// the row's last values when this change deleted it, decoded as
    /// ``record`` is; nil for any other change or table.
    public var deletedRecord: Record?
    /// For a deletion in a table logged with tombstones, when it was
    /// written: the clock touch rules stamp with (`datetime_subsec()`:
    /// GRDB's `transactionDate`, or a pinned clock) on connections with
    /// SQLiteTriggers, SQLite's clock for other writers; in both, the time
    /// the write ran, not the instant of its commit. Nil for any other
    /// change.
    ///
    /// The log stores the time as text, `YYYY-MM-DD HH:MM:SS.SSS` in UTC
    /// (`datetime_subsec()`'s format, that of an `updatedAt` a touch rule
    /// stamps); this is that text decoded. To compare it with another
    /// stored time (last writer wins: the deletion against a row's
    /// `updatedAt`) without losing the millisecond, compare like with
    /// like: ``timeText`` with the stored text, in Swift or bound in SQL
    /// (the format sorts as time does, and two texts are equal exactly when
    /// the times are), or this `Date` with a `Date` GRDB decoded from such
    /// text. Never compare after a conversion that drops the millisecond:
    /// `ISO8601DateFormatter` with its default options, `Date.description`
    /// and any format without `.SSS` do, and an edit and a deletion of the
    /// same second then look simultaneous. To send the time to a server,
    /// send ``timeText``.
    ///
    /// ```swift
    /// func deletionWins(_ change: DurableChange<Reminder>, over updatedAt: String) -> Bool {
    ///     guard let deletedAt = change.timeText else { return false }
    ///     return deletedAt >= updatedAt        // the same text format: text order is time order
    /// }
    /// ```
    public var time: Date?
    /// ``time`` as the log stores it, bit for bit: `YYYY-MM-DD HH:MM:SS.SSS`
    /// in UTC, `datetime_subsec()`'s format, the format of every time the
    /// log and the touch rules write; nil where ``time`` is. Compare
    /// it as text with other stored times (an `updatedAt`), or send it as
    /// it is, and the millisecond is never lost (see ``time``).
    public var timeText: String?

    public init(id: Int64, tableName: String, kind: Kind, key: [DatabaseValue], record: Record?,
                deletedRecord: Record? = nil, time: Date? = nil, timeText: String? = nil) {
        self.id = id
        self.tableName = tableName
        self.kind = kind
        self.key = key
        self.record = record
        self.deletedRecord = deletedRecord
        self.time = time
        self.timeText = timeText
    }

    @available(*, deprecated, renamed: "tableName")
    public var table: String {
        get { tableName }
        set { tableName = newValue }
    }

    @available(*, deprecated, renamed: "init(id:tableName:kind:key:record:)")
    public init(id: Int64, table: String, kind: Kind, key: [DatabaseValue], record: Record?) {
        self.init(id: id, tableName: table, kind: kind, key: key, record: record)
    }
}

extension DurableChange: Sendable where Record: Sendable {}
extension DurableChange: Equatable where Record: Equatable {}

extension DurableChange {
    /// A one-column key as `Key`, decoded as GRDB decodes a column: a
    /// `UUID` from 16 bytes or from text, an `Int64`, a `String`. Nil for a
    /// composite key, or a value `Key` cannot decode.
    ///
    /// ```swift
    /// func deletedID(_ change: DurableChange<Reminder>) -> UUID? {
    ///     change.kind == .deleted ? change.key(as: UUID.self) : nil
    /// }
    /// ```
    public func key<Key: DatabaseValueConvertible>(as type: Key.Type) -> Key? {
        guard key.count == 1 else { return nil }
        return Key.fromDatabaseValue(key[0])
    }
}

/// Where a new durable consumer starts; see
/// ``GRDB/Database/startDurableConsumer(_:from:)``.
public enum DurableConsumerStart: Sendable {
    /// After the last change recorded: the changes committed from now on.
    case end
    /// Before the oldest change the log still holds.
    case oldestHeld
}

/// A durable consumer as the log keeps it.
public struct DurableConsumerState: Sendable, Hashable {
    public var name: String
    /// The id of the last change it has processed.
    public var position: Int64
    /// How many changes were recorded after its position.
    public var backlog: Int64
    /// Changes it had not read were compacted away: read the tables afresh,
    /// then ``GRDB/Database/resetDurableConsumer(_:)``.
    public var hasFallenBehind: Bool
    /// The log's backlog cap; see ``GRDB/Database/setDurableLogMaxBacklog(_:)``.
    public var maxBacklog: Int64

    public init(name: String, position: Int64, backlog: Int64, hasFallenBehind: Bool, maxBacklog: Int64) {
        self.name = name
        self.position = position
        self.backlog = backlog
        self.hasFallenBehind = hasFallenBehind
        self.maxBacklog = maxBacklog
    }
}

/// The changes one committed transaction made to the tables read.
///
/// A transaction of a connection with SQLiteTriggers installed has its
/// ``id``; a writer without the extension (the sqlite3 shell, Python's
/// `sqlite3`, a widget without it) cannot mark its transactions in plain
/// SQL, so each of its changes comes as a transaction of its own, with a
/// nil ``id``.
public struct DurableTransaction<Record> {
    /// The transaction's stamp: a random 63-bit number that its changes
    /// share and no other transaction's carry; nil when unknown. Inside
    /// the transaction, ``GRDB/Database/durableLogTransactionID()`` reads it.
    public var id: Int64?
    /// Where its writes came from, as ``GRDB/Database/setDurableLogOrigin(_:)``
    /// said inside it ("server" for a download); nil for local writes,
    /// and for every writer without SQLiteTriggers.
    public var origin: String?
    public var changes: [DurableChange<Record>]
    /// The id of its last row in the log, changes of tables not read
    /// included: where acknowledging through it moves the position.
    var lastLogID: Int64

    public init(id: Int64?, origin: String? = nil, changes: [DurableChange<Record>]) {
        self.id = id
        self.origin = origin
        self.changes = changes
        self.lastLogID = changes.last?.id ?? 0
    }
}

extension DurableTransaction: Sendable where Record: Sendable {}
extension DurableTransaction: Equatable where Record: Equatable {}

/// The next committed changes after a consumer's position, whole
/// transactions at a time, in commit order.
///
/// ```swift
/// let batch = try db.durableBatch(for: "sync", of: FeedTable(Reminder.self))
/// for change in batch.changes { print(change.kind, change.key) }
/// try db.acknowledge(batch)
/// ```
public struct DurableBatch<Record> {
    /// The consumer that read it.
    public var consumer: String
    public var transactions: [DurableTransaction<Record>]
    /// Where the consumer's position moves when the batch is acknowledged:
    /// past every change read, those of tables it does not read included.
    public var position: Int64
    /// Whether the position moves at all: false when nothing was read.
    public var advances: Bool
    /// Whether it was read with `net: true`: then acknowledged a whole
    /// transaction at a time.
    var isNet = false

    /// Every change, in commit order.
    public var changes: [DurableChange<Record>] {
        // A loop rather than flatMap: in code generic over Record, each
        // closure call looks up the types' metadata again.
        var changes: [DurableChange<Record>] = []
        changes.reserveCapacity(transactions.reduce(0) { $0 + $1.changes.count })
        for transaction in transactions {
            for change in transaction.changes { changes.append(change) }
        }
        return changes
    }
}

extension DurableBatch: Sendable where Record: Sendable {}

/// Why a durable consumer cannot read.
public enum DurableLogError: Error, CustomStringConvertible, Sendable {
    /// The consumer did not read for longer than the log keeps changes
    /// (`sqlitetriggers_log_meta.maxBacklog`): changes after its position
    /// are gone. Read the tables afresh, then call
    /// `Database.resetDurableConsumer(_:)`.
    case fellBehind(consumer: String, position: Int64, compactedThrough: Int64)
    /// No consumer of that name: `Database.startDurableConsumer(_:)` makes one.
    case unknownConsumer(String)
    /// The file has no durable log, or none for that table:
    /// `Database.installDurableLog(for:)` installs it.
    case notInstalled(String)

    public var description: String {
        switch self {
        case let .fellBehind(consumer, position, compactedThrough):
            "durable consumer \"\(consumer)\" fell behind: its position is \(position), and the log "
                + "keeps changes after \(compactedThrough) only; read the tables afresh, then "
                + "resetDurableConsumer(\"\(consumer)\")"
        case .unknownConsumer(let name):
            "no durable consumer \"\(name)\": startDurableConsumer(\"\(name)\") makes one"
        case .notInstalled(let table):
            "no durable log for \"\(table)\": installDurableLog(for: [\"\(table)\"]) installs it"
        }
    }
}

extension Database {
    /// Installs (or installs again, after a migration changed the table)
    /// the durable change log of each table: plain SQL triggers in the
    /// file, which every process writing it runs, with or without
    /// SQLiteTriggers. Every connection with SQLiteTriggers, in any
    /// process, stamps its changes with their transaction; writers without
    /// it leave them ungrouped. All or nothing, in this transaction.
    ///
    /// ```swift
    /// try dbQueue.write { db in try db.installDurableLog(for: ["reminders"]) }
    /// ```
    ///
    /// A table installed before keeps its mode (with tombstones or not); a
    /// new one logs keys. Installing upgrades a log an earlier
    /// SQLiteTriggers wrote to this version's format.
    public func installDurableLog(for tables: [String]) throws {
        for table in tables {
            try execute(sql: "SELECT sqlitetriggers_log_install(?)", arguments: [table])
        }
    }

    /// Installs the durable log of each table, with tombstones or without:
    /// with them, a deletion keeps the row's last values
    /// (``DurableChange/deletedRecord``) and its time
    /// (``DurableChange/time``), from every writer, so that a sync can
    /// send a deletion with its time. A table with tombstones names its
    /// columns in its triggers: to drop one of them, install the table
    /// without tombstones first, then with them again after the
    /// `ALTER TABLE`.
    ///
    /// ```swift
    /// try dbQueue.write { db in try db.installDurableLog(for: ["reminders"], tombstones: true) }
    /// ```
    public func installDurableLog(for tables: [String], tombstones: Bool) throws {
        for table in tables {
            try execute(sql: "SELECT sqlitetriggers_log_install(?, ?)", arguments: [table, tombstones ? "tombstones" : "keys"])
        }
    }

    /// Marks the current transaction's writes as coming from `origin`
    /// ("server" for what a sync downloads), so that a consumer can leave
    /// them out (`durableBatch(for:of:limit:net:excluding:)`) instead of
    /// sending them back; nil marks them local, as every transaction
    /// starts. It marks the whole transaction, whenever it is called in
    /// it; a savepoint rolled back undoes the mark it set. Outside a
    /// transaction, or in a file without a durable log, it throws. No
    /// view, trigger or default in a database file can set an origin.
    ///
    /// ```swift
    /// try dbQueue.write { db in
    ///     try db.setDurableLogOrigin("server")
    ///     try db.execute(sql: "INSERT INTO reminders(id, title) VALUES (?, ?)", arguments: [7, "from the server"])
    /// }
    /// ```
    public func setDurableLogOrigin(_ origin: String?) throws {
        try execute(sql: "SELECT sqlitetriggers_log_origin(?)", arguments: [origin])
    }

    /// The current transaction's origin, or nil when its writes are local.
    ///
    /// ```swift
    /// let origin = try dbQueue.write { db in try db.durableLogOrigin() }
    /// ```
    public func durableLogOrigin() throws -> String? {
        try String.fetchOne(self, sql: "SELECT sqlitetriggers_log_origin()")
    }

    /// The current transaction's id in the log: the ``DurableTransaction/id``
    /// its changes will carry. Throws outside a transaction.
    ///
    /// ```swift
    /// let id = try dbQueue.write { db in try db.durableLogTransactionID() }
    /// ```
    public func durableLogTransactionID() throws -> Int64 {
        guard let id = try Int64.fetchOne(self, sql: "SELECT sqlitetriggers_log_transaction()") else {
            throw DatabaseError(message: "durableLogTransactionID: this connection is read-only, and its transactions log nothing")
        }
        return id
    }

    /// Does nothing: every connection with SQLiteTriggers stamps its
    /// changes with their transaction.
    @available(*, deprecated, message: "every connection with SQLiteTriggers stamps its transactions; remove the call")
    public func stampDurableLogTransactions() throws {}

    /// Makes the consumer `name` when it does not exist yet: at the end of
    /// the log (`.end`, the default), it sees the changes committed from
    /// now on; at `.oldestHeld`, it first sees every change the log still
    /// holds (all of them until a consumer reads and compaction begins).
    /// Returns true when it made it; read the tables in the same
    /// transaction to start from a copy that the changes then keep
    /// current. Either way the log is compacted (as each move of a
    /// position does), so an app compacts it at least each time its
    /// consumers start.
    ///
    /// ```swift
    /// try dbQueue.write { db in
    ///     try db.startDurableConsumer("sync")
    ///     try db.startDurableConsumer("audit", from: .oldestHeld)
    /// }
    /// ```
    @discardableResult
    public func startDurableConsumer(_ name: String, from start: DurableConsumerStart = .end) throws -> Bool {
        guard try hasDurableLog() else { throw DurableLogError.notInstalled("any table") }
        switch start {
        case .end:
            try execute(sql: "INSERT OR IGNORE INTO sqlitetriggers_log_consumers(name) VALUES (?)", arguments: [name])
        case .oldestHeld:
            try execute(sql: """
                INSERT OR IGNORE INTO sqlitetriggers_log_consumers(name, position)
                SELECT ?, compactedThrough FROM sqlitetriggers_log_meta
                """, arguments: [name])
        }
        if changesCount > 0 { return true }
        // Setting the position to itself runs the compaction trigger.
        try execute(sql: "UPDATE sqlitetriggers_log_consumers SET position = position WHERE name = ?", arguments: [name])
        return false
    }

    /// The consumer `name`: its position, how many changes wait for it,
    /// and whether it fell behind; nil when there is no such consumer.
    ///
    /// ```swift
    /// let state = try dbQueue.read { db in try db.durableConsumer("sync") }
    /// print(state?.backlog ?? 0)
    /// ```
    public func durableConsumer(_ name: String) throws -> DurableConsumerState? {
        guard try hasDurableLog(),
              let row = try Row.fetchOne(self, sql: """
                SELECT c.position, m.compactedThrough, m.maxBacklog,
                  \(Self.durableLogEndSQL)
                FROM sqlitetriggers_log_consumers AS c, sqlitetriggers_log_meta AS m WHERE c.name = ?
                """, arguments: [name]) else { return nil }
        let position: Int64 = row[0], compactedThrough: Int64 = row[1], end: Int64 = row[3]
        return DurableConsumerState(name: name, position: position, backlog: end - position,
                                    hasFallenBehind: position < compactedThrough, maxBacklog: row[2])
    }

    /// How many changes the log keeps for a consumer that does not read
    /// while others do (default 1,000,000); past it, that consumer falls
    /// behind (``DurableLogError/fellBehind(consumer:position:compactedThrough:)``).
    ///
    /// ```swift
    /// try dbQueue.write { db in try db.setDurableLogMaxBacklog(10_000) }
    /// ```
    public func setDurableLogMaxBacklog(_ count: Int) throws {
        guard try hasDurableLog() else { throw DurableLogError.notInstalled("any table") }
        guard count > 0 else {
            throw DatabaseError(message: "setDurableLogMaxBacklog: the backlog cap must be positive, not \(count)")
        }
        try execute(sql: "UPDATE sqlitetriggers_log_meta SET maxBacklog = ?", arguments: [count])
    }

    /// Moves a consumer that fell behind to the end of the log, after the
    /// app has read the tables afresh; a consumer that has not fallen
    /// behind keeps its position.
    ///
    /// ```swift
    /// try dbQueue.write { db in try db.resetDurableConsumer("sync") }
    /// ```
    public func resetDurableConsumer(_ name: String) throws {
        try execute(sql: """
            UPDATE sqlitetriggers_log_consumers
            SET position = \(Self.durableLogEndSQL)
            WHERE name = ? AND position < (SELECT compactedThrough FROM sqlitetriggers_log_meta)
            """, arguments: [name])
    }

    /// Removes the consumer: the log no longer keeps changes for it.
    ///
    /// ```swift
    /// try dbQueue.write { db in try db.removeDurableConsumer("sync") }
    /// ```
    public func removeDurableConsumer(_ name: String) throws {
        try execute(sql: "DELETE FROM sqlitetriggers_log_consumers WHERE name = ?", arguments: [name])
    }

    /// Reads the next changes of `table` after the consumer's position:
    /// whole transactions, at least `limit` changes of any table when the
    /// log has them, each with its row as it is now. Reading moves
    /// nothing: `acknowledge(_:)` does.
    ///
    /// `net: true` gives each transaction's net change per row, whatever
    /// order the triggers ran in: `inserted` when the row did not exist
    /// before the transaction and does after it, `deleted` the reverse,
    /// `updated` when it existed before and after (an insert then updates
    /// is one insertion, an insert then a delete is nothing, a delete then
    /// an insert of the same key is an update; a row written and left as
    /// it was may come as `updated`: the log keeps keys, not values). Exact
    /// with `recursive_triggers` ON; with it OFF two writes reach no
    /// trigger of the log and can be misread for their row: an `INSERT OR
    /// REPLACE` (or `UPDATE OR REPLACE` of the key) over an existing key,
    /// as an insertion, and a write ignored (`OR IGNORE`, `OR FAIL`) for a
    /// UNIQUE conflict, as a deletion of the row it conflicted with. When a
    /// row's last transaction in the batch both inserted and deleted it (or
    /// only conflicted with it), the batch reads the rest of the log once
    /// to learn whether it existed after that transaction.
    ///
    /// `excluding` leaves out the transactions of those origins (see
    /// ``setDurableLogOrigin(_:)``): an uploader reads past what its own
    /// downloads wrote, which acknowledging passes too.
    ///
    /// ```swift
    /// try dbQueue.write { db in
    ///     let batch = try db.durableBatch(for: "sync", of: FeedTable(Reminder.self))
    ///     for change in batch.changes { print(change.kind, change.record?.title ?? "deleted") }
    ///     try db.acknowledge(batch)   // in the same transaction as what the changes did: exactly once
    /// }
    /// ```
    public func durableBatch<Record>(for consumer: String, of table: FeedTable<Record>, limit: Int = 256,
                                     net: Bool = false, excluding origins: Set<String> = []) throws -> DurableBatch<Record> {
        try durableBatch(for: consumer, of: [table], limit: limit, net: net, excluding: origins)
    }

    /// Reads the next changes of a record's table, as the observers take
    /// it; see ``durableBatch(for:of:limit:net:excluding:)-(_,FeedTable<Record>,_,_,_)``.
    ///
    /// ```swift
    /// let batch = try dbQueue.read { db in try db.durableBatch(for: "sync", of: Reminder.self) }
    /// ```
    public func durableBatch<Record: FetchableRecord & TableRecord>(
        for consumer: String, of record: Record.Type, limit: Int = 256, net: Bool = false,
        excluding origins: Set<String> = []
    ) throws -> DurableBatch<Record> {
        try durableBatch(for: consumer, of: [FeedTable(record)], limit: limit, net: net, excluding: origins)
    }

    /// Reads the next changes of several tables whose rows decode to one
    /// type (an enum of your records, say); see
    /// ``durableBatch(for:of:limit:net:excluding:)-(_,FeedTable<Record>,_,_,_)``.
    ///
    /// ```swift
    /// enum Item: Sendable { case list(String), reminder(String) }
    /// let tables = [FeedTable("lists") { row in Item.list(row["title"]) },
    ///               FeedTable("reminders") { row in Item.reminder(row["title"]) }]
    /// let batch = try dbQueue.read { db in try db.durableBatch(for: "sync", of: tables) }
    /// ```
    public func durableBatch<Record>(for consumer: String, of tables: [FeedTable<Record>], limit: Int = 256,
                                     net: Bool = false, excluding origins: Set<String> = []) throws -> DurableBatch<Record> {
        guard try hasDurableLog() else { throw DurableLogError.notInstalled(tables.first?.name ?? "any table") }
        let position = try durablePosition(of: consumer)
        // Every batch, not only the first: a trigger planted since (by
        // another process) must stop the consumer before it reads marks or
        // positions the trigger could have written. Cheap while the schema
        // is unchanged (the check remembers it, ext/log_check.c).
        try cachedStatement(sql: "SELECT sqlitetriggers_log_check()").execute()
        let reader = try DurableRowReader(tables: tables, in: self)
        // The log's columns (DurableRowReader.logColumnCount), then the
        // rows of the tables read, joined.
        let changes = """
            SELECT l.id, l.tableId, l.kind, l.rowKey, l.tx, o.origin, d.time, d.deletedRow\(reader.selection)
            FROM sqlitetriggers_log AS l
            LEFT JOIN sqlitetriggers_log_origins AS o ON o.tx = l.tx
            LEFT JOIN sqlitetriggers_log_tombstones AS d ON d.id = l.id\(reader.joins)
            WHERE l.id > ?
            """
        // Every transaction read, the rows of tables not read included
        // (they end it), then its changes of the tables read. Rows from a
        // cursor (not copied), columns by index, in the order of
        // `changes`: this runs per change.
        // Net folding needs each change's logged kind and row; an exact
        // batch keeps the changes alone.
        var read: [(tx: Int64?, origin: String?, lastLogID: Int64)] = []
        var exact: [[DurableChange<Record>]] = []
        var transactions: [[DurableNetFolding.Logged<Record>]] = []
        // Cached: the same tables give the same text, and compiling it
        // (GRDB's authorizer reads every column) costs more than a batch.
        // One loop over both queries, its body inline: in this generic
        // code, a body called per row looks up the generic types' metadata
        // per row, which costed more than the rest of the body.
        var cursor: RowCursor? = try Row.fetchCursor(cachedStatement(sql: changes + " ORDER BY l.id LIMIT ?"),
                                                     arguments: [position, max(limit, 1)], adapter: reader.adapter)
        var readsRest = false
        var lastTable: (id: Int64, table: DurableRowReader<Record>.ReadTable)?
        while let rows = cursor {
            while let row = try rows.next() {
                // Optionals decoded by hand: GRDB decodes an Optional through
                // generic code that instantiates its metadata per value.
                let log = row.unadapted
                let id: Int64 = log[0], tx: Int64? = log.hasNull(atIndex: 4) ? nil : log[4] as Int64
                if tx == nil || read.last?.tx != tx {
                    read.append((tx, log.hasNull(atIndex: 5) ? nil : log[5] as String, id))
                    if net { transactions.append([]) } else { exact.append([]) }
                }
                read[read.count - 1].lastLogID = id
                let tableId: Int64 = log[1]
                // Runs of one table's changes skip the dictionary.
                if lastTable?.id != tableId { lastTable = reader.byID[tableId].map { (tableId, $0) } }
                guard let table = lastTable?.table else { continue }
                let rowKey: DatabaseValue = log[3]
                let key = table.keyColumns.count == 1 ? [rowKey]
                    : try DurableRowReader<Record>.key(rowKey, columns: table.keyColumns, in: self)
                let loggedKind: Int = log[2]
                let deletedRow: String? = log.hasNull(atIndex: 7) ? nil : log[7] as String
                // The time's text as stored, for comparing with other
                // stored times as text (DurableChange.timeText).
                var timeText: String?
                if deletedRow != nil, case .string(let text) = (log[6] as DatabaseValue).storage { timeText = text }
                let change = DurableChange<Record>(
                    // A conflict probe (4, 5) as a deletion: the row read says whether it happened.
                    id: id, tableName: table.feed.name, kind: loggedKind == 1 ? .inserted : loggedKind == 2 ? .updated : .deleted,
                    key: key, record: try table.current(key, in: row),
                    deletedRecord: try deletedRow.map { try table.decode(deletedRow: $0, in: self) },
                    time: deletedRow == nil ? nil : log[6], timeText: timeText)
                if net {
                    transactions[transactions.count - 1].append(DurableNetFolding.Logged(
                        change: change, loggedKind: loggedKind, row: DurableNetFolding.RowIdentity(tableId: tableId, rowKey: rowKey)))
                } else {
                    exact[exact.count - 1].append(change)
                }
            }
            cursor = nil
            // Whole transactions: the rest of the last one, whose rows follow.
            if !readsRest, let last = read.last, let tx = last.tx {
                readsRest = true
                cursor = try Row.fetchCursor(cachedStatement(sql: changes + " AND l.tx = ? ORDER BY l.id"),
                                             arguments: [last.lastLogID, tx], adapter: reader.adapter)
            }
        }
        let end: Int64 = read.last?.lastLogID ?? position
        if net {
            let later = try DurableNetFolding.laterTransactions(
                of: DurableNetFolding.rowsNeedingLaterTransactions(transactions), after: end, in: self)
            exact = DurableNetFolding.folded(transactions, later: later).map { logged in logged.map { $0.change } }
        }
        // Left out after folding, which needs every transaction.
        var result: [DurableTransaction<Record>] = []
        result.reserveCapacity(exact.count)
        for (index, transaction) in read.enumerated() {
            let changes = exact[index]
            if changes.isEmpty { continue }
            if let origin = transaction.origin, origins.contains(origin) { continue }
            var kept = DurableTransaction(id: transaction.tx, origin: transaction.origin, changes: changes)
            kept.lastLogID = transaction.lastLogID
            result.append(kept)
        }
        var batch = DurableBatch(consumer: consumer, transactions: result, position: end, advances: end > position)
        batch.isNet = net
        return batch
    }

    /// Moves the batch's consumer past it. In the transaction that applied
    /// the batch to this database, each change is processed exactly once;
    /// after work elsewhere (a server, another file), a crash before this
    /// call delivers the batch again: at least once.
    ///
    /// ```swift
    /// try dbQueue.write { db in
    ///     let batch = try db.durableBatch(for: "sync", of: FeedTable(Reminder.self))
    ///     try db.acknowledge(batch)
    /// }
    /// ```
    public func acknowledge<Record>(_ batch: DurableBatch<Record>) throws {
        guard batch.advances else { return }
        try moveDurablePosition(of: batch.consumer, to: batch.position)
    }

    /// Moves the batch's consumer through one of its changes, so that a
    /// crash later delivers only the changes after it: an uploader
    /// acknowledges what the server confirmed as it goes. For a batch
    /// read with `net: false`; a net batch folds each transaction's
    /// changes into one per row, so it is acknowledged a transaction at a
    /// time (``acknowledge(_:through:)-(_,DurableTransaction<Record>)``).
    /// The position never moves back.
    ///
    /// ```swift
    /// try dbQueue.write { db in
    ///     let batch = try db.durableBatch(for: "upload", of: FeedTable(Reminder.self))
    ///     if let first = batch.changes.first { try db.acknowledge(batch, through: first) }
    /// }
    /// ```
    public func acknowledge<Record>(_ batch: DurableBatch<Record>, through change: DurableChange<Record>) throws {
        guard !batch.isNet else {
            throw DatabaseError(message: "acknowledge(_:through:): a net batch folds each transaction's changes "
                + "into one per row, so a change does not mark a point in the log: acknowledge through the "
                + "change's DurableTransaction, or read with net: false")
        }
        guard batch.transactions.contains(where: { $0.changes.contains { $0.id == change.id } }) else {
            throw DatabaseError(message: "acknowledge(_:through:): change \(change.id) is not in this batch of "
                + "consumer \"\(batch.consumer)\"")
        }
        try moveDurablePosition(of: batch.consumer, to: change.id)
    }

    /// Moves the batch's consumer through one of its transactions (the
    /// changes of tables it does not read and of origins it left out,
    /// before that transaction's end, included), so that a crash later
    /// delivers only the transactions after it. Works for net batches too.
    ///
    /// ```swift
    /// try dbQueue.write { db in
    ///     let batch = try db.durableBatch(for: "upload", of: FeedTable(Reminder.self), net: true)
    ///     if let first = batch.transactions.first { try db.acknowledge(batch, through: first) }
    /// }
    /// ```
    public func acknowledge<Record>(_ batch: DurableBatch<Record>, through transaction: DurableTransaction<Record>) throws {
        guard batch.transactions.contains(where: { $0.lastLogID == transaction.lastLogID && $0.id == transaction.id }) else {
            throw DatabaseError(message: "acknowledge(_:through:): the transaction is not in this batch of consumer "
                + "\"\(batch.consumer)\"")
        }
        try moveDurablePosition(of: batch.consumer, to: transaction.lastLogID)
    }

    /// The id of the last change the log has recorded (0 when none): it
    /// only grows, so a changed value means new changes.
    ///
    /// ```swift
    /// let end = try dbQueue.read { db in try db.durableLogEnd() }
    /// ```
    public func durableLogEnd() throws -> Int64 {
        try Int64.fetchOne(cachedStatement(sql: "SELECT \(Self.durableLogEndSQL)")) ?? 0
    }

    /// The log's end: its last row's id, which the log keeps (THE FORMAT in
    /// ext/durable_log.c), 0 when it has none. A seek, never a scan.
    static let durableLogEndSQL = #"coalesce((SELECT "id" FROM "sqlitetriggers_log" ORDER BY "id" DESC LIMIT 1), 0)"#

    // MARK: - Reading

    /// Before a consumer's first read: the log still matches its tables
    /// (else the error names the table and the remedy), and the consumer
    /// exists.
    func startDurableReading(_ consumer: String) throws {
        try execute(sql: "SELECT sqlitetriggers_log_check()")
        try startDurableConsumer(consumer)
    }

    /// The log's format this version writes and reads (ext/durable_log.c).
    static let durableLogFormat = 3

    func hasDurableLog() throws -> Bool {
        // Cached statements here and below: a consumer runs them every batch.
        try Bool.fetchOne(cachedStatement(sql: "SELECT 1 FROM sqlite_schema WHERE name = 'sqlitetriggers_log_consumers'")) ?? false
    }

    /// Moves the consumer's position forward to `position`.
    func moveDurablePosition(of consumer: String, to position: Int64) throws {
        try cachedStatement(sql: "UPDATE sqlitetriggers_log_consumers SET position = max(position, ?) WHERE name = ?")
            .execute(arguments: [position, consumer])
    }

    /// The consumer's position; throws when it is unknown or fell behind,
    /// or the log is of an earlier format.
    func durablePosition(of consumer: String) throws -> Int64 {
        guard let row = try Row.fetchOne(cachedStatement(sql: """
            SELECT c.position, m.compactedThrough, m.formatVersion
            FROM sqlitetriggers_log_consumers AS c, sqlitetriggers_log_meta AS m WHERE c.name = ?
            """), arguments: [consumer]) else { throw DurableLogError.unknownConsumer(consumer) }
        let position: Int64 = row[0], compactedThrough: Int64 = row[1], format: Int = row[2]
        guard format == Self.durableLogFormat else {
            throw DatabaseError(message: "the durable log in this file is of format \(format), and this "
                + "SQLiteTriggers reads format \(Self.durableLogFormat): installDurableLog(for:) again, in a "
                + "migration, upgrades it")
        }
        if position < compactedThrough {
            throw DurableLogError.fellBehind(consumer: consumer, position: position, compactedThrough: compactedThrough)
        }
        return position
    }
}

/// Reads the rows the changes name: for a table keyed by one column, joined
/// to the log's rows in the batch's own query (as a hand-written consumer
/// would, with the key column's affinity and collation); for a composite
/// key, stored as JSON, by a statement per change.
struct DurableRowReader<Record> {
    /// A table the batch reads: its key, and its row by key.
    struct ReadTable {
        let feed: FeedTable<Record>
        let keyColumns: [String]
        /// Where its row comes from.
        enum Source {
            /// Joined, the only table joined: the batch's rows, adapted,
            /// are its rows (the log's columns are read unadapted).
            case wholeRow
            /// Joined beside others: the scope of its columns.
            case scope(String)
            /// Not joined: its row by key.
            case statement(Statement)
        }
        var source: Source
        /// Joined: the index of its key among its columns (NULL: no such row).
        let keyIndex: Int

        /// The row under `key` as the batch read it, decoded; nil when it
        /// no longer exists.
        func current(_ key: [DatabaseValue], in row: Row) throws -> Record? {
            switch source {
            case .wholeRow:
                return row.hasNull(atIndex: keyIndex) ? nil : try feed.decode(row)
            case .scope(let scope):
                guard let scoped = row.scopes[scope], !scoped.hasNull(atIndex: keyIndex) else { return nil }
                return try feed.decode(scoped)
            case .statement(let statement):
                return try Row.fetchOne(statement, arguments: StatementArguments(key)).map(feed.decode)
            }
        }

        /// A tombstone's values (the log's deletedRow: a JSON object whose
        /// values keep their types as keys do), decoded as a row.
        func decode(deletedRow json: String, in db: Database) throws -> Record {
            var values: [String: DatabaseValue] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: DurableRowReader.exactValuesSQL), arguments: [json]) {
                values[row["key"]] = DurableRowReader.exactValue(row)
            }
            return try feed.decode(Row(values as [String: (any DatabaseValueConvertible)?]))
        }
    }

    /// The tables read, by the log's table id.
    private(set) var byID: [Int64: ReadTable] = [:]
    /// What the batch's query selects and joins for the joined tables,
    /// after the log's own columns (`logColumnCount` of them).
    private(set) var selection = ""
    private(set) var joins = ""
    private(set) var adapter: (any RowAdapter)?

    static var logColumnCount: Int { 8 }

    /// The registered tables among `tables` (matched as SQLite matches
    /// names).
    init(tables: [FeedTable<Record>], in db: Database) throws {
        var scopes: [String: any RowAdapter] = [:]
        var nextColumn = Self.logColumnCount
        for registered in try Row.fetchAll(db.cachedStatement(sql: "SELECT id, tableName, keyColumns FROM sqlitetriggers_log_tables ORDER BY id")) {
            let id: Int64 = registered[0], name: String = registered[1], json: String? = registered[2]
            guard let feed = tables.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else { continue }
            guard let json, let keyColumns = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String],
                  !keyColumns.isEmpty else {
                throw DatabaseError(message: "sqlitetriggers_log_tables: the keyColumns of \(name) are not a JSON array of names")
            }
            // SQLQuoting doubles inner quotes (GRDB's quotedDatabaseIdentifier does not).
            let quotedTable = SQLQuoting.identifier(feed.name)
            if keyColumns.count == 1 {
                let columns = try db.cachedStatement(sql: "SELECT * FROM \(quotedTable)").columnNames
                let scope = "t\(id)", alias = SQLQuoting.identifier(scope)
                let keyIndex = columns.firstIndex { $0.caseInsensitiveCompare(keyColumns[0]) == .orderedSame } ?? 0
                selection += ", \(alias).*"
                joins += " LEFT JOIN \(quotedTable) AS \(alias) ON l.tableId = \(id)"
                    + " AND \(alias).\(SQLQuoting.identifier(keyColumns[0])) = l.rowKey"
                scopes[scope] = RangeRowAdapter(nextColumn..<(nextColumn + columns.count))
                nextColumn += columns.count
                byID[id] = ReadTable(feed: feed, keyColumns: keyColumns, source: .scope(scope), keyIndex: keyIndex)
            } else {
                let condition = keyColumns.map { "\(SQLQuoting.identifier($0)) = ?" }.joined(separator: " AND ")
                let statement = try db.cachedStatement(sql: "SELECT * FROM \(quotedTable) WHERE \(condition)")
                byID[id] = ReadTable(feed: feed, keyColumns: keyColumns, source: .statement(statement), keyIndex: 0)
            }
        }
        // One table joined (the usual case): its range is the row, with no
        // scope to look up per change.
        if scopes.count == 1, let (scope, range) = scopes.first, let id = byID.first(where: {
            if case .scope(scope) = $0.value.source { return true } else { return false }
        })?.key {
            byID[id]?.source = .wholeRow
            adapter = range
        } else {
            adapter = scopes.isEmpty ? nil : ScopeAdapter(scopes)
        }
    }

    /// M * 2^E, exactly (M is below 2^53 in magnitude); E = 1024 is an
    /// infinity of M's sign.
    static func exactReal(mantissa: Int64, exponent: Int) -> Double {
        let sign: FloatingPointSign = mantissa < 0 ? .minus : .plus
        if exponent == 1024 { return sign == .minus ? -.infinity : .infinity }
        return Double(sign: sign, exponent: exponent, significand: Double(mantissa.magnitude))
    }

    /// The members of a JSON array or object whose values keep their
    /// types: a blob is {"blob":"<hex>"}; a REAL is {"real":[M,E]}, exactly
    /// M * 2^E (ext/log_triggers.c), E = 1024 being an infinity.
    static var exactValuesSQL: String { """
        SELECT key, value, type,
          CASE type WHEN 'object' THEN json_extract(value, '$.blob') END AS blob,
          CASE type WHEN 'object' THEN json_extract(value, '$.real[0]') END AS mantissa,
          CASE type WHEN 'object' THEN json_extract(value, '$.real[1]') END AS exponent
        FROM json_each(?) ORDER BY id
        """ }

    /// One member read by ``exactValuesSQL``, as the value it stands for.
    static func exactValue(_ row: Row) -> DatabaseValue {
        guard (row["type"] as String?) == "object" else { return row["value"] }
        if let mantissa: Int64 = row["mantissa"], let exponent: Int = row["exponent"] {
            return Self.exactReal(mantissa: mantissa, exponent: exponent).databaseValue
        }
        guard let hex: String = row["blob"], let data = Data(lowercaseHex: hex) else { return .null }
        return data.databaseValue
    }

    /// One value per key column: a composite key is stored as a JSON
    /// array of exact values.
    static func key(_ stored: DatabaseValue, columns: [String], in db: Database) throws -> [DatabaseValue] {
        guard columns.count > 1 else { return [stored] }
        let values = try Row.fetchAll(db.cachedStatement(sql: exactValuesSQL), arguments: [stored]).map(exactValue)
        guard values.count == columns.count else {
            throw DatabaseError(message: "sqlitetriggers_log: a composite key is not a JSON array of \(columns.count) values")
        }
        return values
    }

}

// MARK: - Net folding

/// The net change of each row over its transaction, from the log's rows.
///
/// The log's AFTER triggers run in an order SQLite leaves unspecified: a
/// rule that rewrites a row in its own AFTER INSERT trigger is logged
/// before the insert, so the order of a transaction's rows for one key
/// says little. What they say regardless of order:
/// - without an insert, the row existed before the transaction (an update,
///   a delete or a conflict needs a row);
/// - without a delete or a silent conflict (kind 4), it exists after it
///   (REPLACE over the key removes a row only to insert that key);
/// - without an insert but with a delete, it does not exist after it;
/// - inserts minus deletes minus silent conflicts is whether it exists
///   after minus whether it did before, in any order. A conflict of kind 5
///   (the writer's REPLACE fires DELETE triggers, so a deletion is logged
///   as a delete too) counts for nothing.
/// What these leave open (a transaction that inserted and deleted the
/// row, or that only conflicted with it) the next transaction that wrote
/// the row answers, with its "before", read backwards from the row as it
/// is now. Two writes reach no trigger of the log, and are the documented
/// limits, both with `recursive_triggers` OFF (SQLite's default, and what
/// the log must assume of a writer without SQLiteTriggers): REPLACE over
/// an existing key (its transaction seems to insert a row that existed),
/// and a write ignored after its probe (its transaction seems to delete a
/// row that stayed).
enum DurableNetFolding {
    /// A row of a table, as the log names it.
    struct RowIdentity: Hashable {
        let tableId: Int64
        let rowKey: DatabaseValue
    }

    /// A change read from the log, with what folding needs.
    struct Logged<Record> {
        var change: DurableChange<Record>
        let loggedKind: Int
        let row: RowIdentity
    }

    /// Whether a row existed before and after one transaction (0 or 1),
    /// from its logged kinds, read backwards: `laterBefore` is what the
    /// next transaction that wrote the row found, or the row now.
    static func existence(of kinds: [Int], after laterBefore: Int) -> (before: Int, after: Int) {
        // Counted in one pass: this runs per row of every net batch.
        var inserts = 0, deletes = 0, silentDeletes = 0
        for kind in kinds {
            switch kind {
            case 1: inserts += 1
            case 3: deletes += 1
            case 4: silentDeletes += 1
            default: break
            }
        }
        let after = isAfterOpen(kinds) ? laterBefore : deletes + silentDeletes == 0 ? 1 : 0
        let before = inserts == 0 ? 1 : min(max(after - (inserts - deletes - silentDeletes), 0), 1)
        return (before, after)
    }

    /// The rows whose last transaction in the batch leaves open whether
    /// they exist after it (it inserted and deleted them, or only
    /// conflicted with them): only these need the transactions after the
    /// batch. Usually none, and the rest of the log is not read.
    static func rowsNeedingLaterTransactions<Record>(_ transactions: [[Logged<Record>]]) -> Set<RowIdentity> {
        // Only a deletion (3, or a probe's 4) leaves it open: a batch
        // without one needs nothing more (most batches of a server that
        // creates and updates).
        guard transactions.contains(where: { $0.contains { $0.loggedKind == 3 || $0.loggedKind == 4 } }) else { return [] }
        var lastKinds: [RowIdentity: [Int]] = [:]
        for transaction in transactions.reversed() {
            for row in rows(of: transaction) where lastKinds[row.identity] == nil {
                lastKinds[row.identity] = row.kinds
            }
        }
        return Set(lastKinds.filter { isAfterOpen($0.value) }.keys)
    }

    /// One row of one transaction: its logged kinds, and where in the
    /// transaction its last change and its last tombstone (the values a
    /// deletion of it kept, with tombstones) are. Not generic, so that the
    /// folding's dictionaries and arrays need no generic metadata per use:
    /// a server's consumer spent more time folding than reading (perf).
    struct RowInTransaction {
        let identity: RowIdentity
        var kinds: [Int]
        /// Indexes into the transaction's changes.
        var last: Int
        var tombstone: Int?
    }

    /// One transaction's rows in the order they were first logged.
    static func rows<Record>(of transaction: [Logged<Record>]) -> [RowInTransaction] {
        // One change, as a server's transactions mostly are: no dictionary.
        if transaction.count == 1 {
            let logged = transaction[0]
            return [RowInTransaction(identity: logged.row, kinds: [logged.loggedKind], last: 0,
                                     tombstone: logged.change.deletedRecord == nil ? nil : 0)]
        }
        var order: [RowInTransaction] = []
        var byRow: [RowIdentity: Int] = [:]
        for (index, logged) in transaction.enumerated() {
            let hasTombstone = logged.change.deletedRecord != nil
            if let at = byRow[logged.row] {
                order[at].kinds.append(logged.loggedKind)
                order[at].last = index
                if hasTombstone { order[at].tombstone = index }
            } else {
                byRow[logged.row] = order.count
                order.append(RowInTransaction(identity: logged.row, kinds: [logged.loggedKind], last: index,
                                              tombstone: hasTombstone ? index : nil))
            }
        }
        return order
    }

    /// Whether a transaction's kinds of a row leave open if it exists
    /// after the transaction: it inserted and deleted it, or only
    /// conflicted with it (see ``existence(of:after:)``).
    static func isAfterOpen(_ kinds: [Int]) -> Bool {
        let inserts = kinds.contains(1), deletes = kinds.contains(3), silentDeletes = kinds.contains(4)
        return (deletes || silentDeletes) && (inserts || !deletes)
    }

    /// The transactions after `end` that wrote any of `rows`: each one's
    /// logged kinds per row, in commit order. One read of the rest of the
    /// log; none when the batch reached its end.
    static func laterTransactions(of rows: Set<RowIdentity>, after end: Int64,
                                  in db: Database) throws -> [[RowIdentity: [Int]]] {
        guard !rows.isEmpty else { return [] }
        let cursor = try Row.fetchCursor(db, sql: """
            SELECT tableId, rowKey, kind, tx FROM sqlitetriggers_log WHERE id > ? ORDER BY id
            """, arguments: [end])
        var transactions: [[RowIdentity: [Int]]] = []
        var open: [RowIdentity: [Int]] = [:]
        var openTransaction: Int64?
        while let row = try cursor.next() {
            let tx: Int64? = row["tx"]
            if tx == nil || tx != openTransaction {
                if !open.isEmpty { transactions.append(open) }
                open = [:]
            }
            openTransaction = tx
            let identity = RowIdentity(tableId: row["tableId"], rowKey: row["rowKey"])
            if rows.contains(identity) { open[identity, default: []].append(row["kind"]) }
        }
        if !open.isEmpty { transactions.append(open) }
        return transactions
    }

    /// The transactions with one change per row that changed, its kind
    /// from whether the row existed before and after the transaction.
    static func folded<Record>(_ transactions: [[Logged<Record>]],
                               later: [[RowIdentity: [Int]]]) -> [[Logged<Record>]] {
        // Whether each row exists now, then before each later transaction.
        var existsAfter: [RowIdentity: Int] = [:]
        for logged in transactions.joined() where existsAfter[logged.row] == nil {
            existsAfter[logged.row] = logged.change.record == nil ? 0 : 1
        }
        for transaction in later.reversed() {
            for (row, kinds) in transaction {
                existsAfter[row] = existence(of: kinds, after: existsAfter[row] ?? 0).before
            }
        }
        var result = Array(repeating: [Logged<Record>](), count: transactions.count)
        for index in transactions.indices.reversed() {
            let transaction = transactions[index]
            for row in rows(of: transaction) {
                let (before, after) = existence(of: row.kinds, after: existsAfter[row.identity] ?? 0)
                existsAfter[row.identity] = before
                var folded = transaction[row.last]
                folded.change.deletedRecord = nil
                switch (before, after) {
                case (0, 0): continue
                case (0, _): folded.change.kind = .inserted
                case (_, 0):
                    folded.change.kind = .deleted
                    folded.change.deletedRecord = row.tombstone.flatMap { transaction[$0].change.deletedRecord }
                default: folded.change.kind = .updated
                }
                result[index].append(folded)
            }
        }
        return result
    }
}

extension Data {
    /// The bytes of lowercase (or uppercase) hex text; nil when it is not hex.
    init?(lowercaseHex hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Data.hexValue(digits[index]), let low = Data.hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.init(bytes)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
