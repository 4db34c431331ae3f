import GRDB
import Foundation

/// One committed change of a row, with its records: what a change feed
/// delivers.
///
/// ```swift
/// switch change {
/// case .inserted(let new): print("added", new.title)
/// case .updated(let old, let new): print(old.title, "->", new.title)
/// case .deleted(let old): print("removed", old.title)
/// }
/// ```
public enum RecordChange<Record> {
    case inserted(Record)
    case updated(old: Record, new: Record)
    case deleted(Record)

    /// The row as it is after the change; nil for a deletion.
    public var new: Record? {
        switch self {
        case .inserted(let record), .updated(_, let record): record
        case .deleted: nil
        }
    }

    /// The row as it was before the change; nil for an insertion.
    public var old: Record? {
        switch self {
        case .inserted: nil
        case .updated(let record, _), .deleted(let record): record
        }
    }
}

extension RecordChange: Sendable where Record: Sendable {}
extension RecordChange: Equatable where Record: Equatable {}

/// What a keys-only change feed says of a changed row: its rowid (nil in a
/// WITHOUT ROWID table) and its primary key columns (none for a table keyed
/// by the rowid alone).
///
/// ```swift
/// let key = ChangedKey(rowID: 1, primaryKey: ["id": "a".databaseValue])
/// ```
public struct ChangedKey: Hashable, Sendable, CustomStringConvertible {
    public var rowID: Int64?
    public var primaryKey: [String: DatabaseValue]

    public init(rowID: Int64?, primaryKey: [String: DatabaseValue]) {
        self.rowID = rowID
        self.primaryKey = primaryKey
    }

    public var description: String {
        let columns = primaryKey.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return "rowid \(rowID.map(String.init) ?? "NULL")" + (columns.isEmpty ? "" : ", " + columns.joined(separator: ", "))
    }
}

/// One committed transaction's changes of a table, in commit order (net,
/// when the feed folds them): what `observeTransactions(of:feed:scheduling:onError:onTransaction:)`
/// delivers.
///
/// ```swift
/// let transaction = CommittedTransaction(number: 1, changes: [RecordChange.inserted("a")])
/// ```
public struct CommittedTransaction<Record> {
    /// The connection's number for the commit: 1, 2, ... counting the
    /// commits that recorded events (swift_callback_log's `tx`).
    public var number: Int64
    public var changes: [RecordChange<Record>]

    public init(number: Int64, changes: [RecordChange<Record>]) {
        self.number = number
        self.changes = changes
    }
}

extension CommittedTransaction: Sendable where Record: Sendable {}
extension CommittedTransaction: Equatable where Record: Equatable {}

/// Which changes of a table a feed reports, decided in SQL so that others
/// are never decoded: kinds, the columns an UPDATE must change, and
/// conditions over `old` and `new`. Feeds filter the table's captured
/// changes after commit (a subquery in a condition sees the committed
/// database); `checkChanges(to:feed:_:)` filters inside
/// the statement, with the triggers' own `UPDATE OF` and `WHEN`.
///
/// ```swift
/// let completions = ChangeFeed<Reminder>.updates(of: ["status"], where: "new.status = 1")
/// ```
public struct ChangeFeed<Record>: Sendable {
    /// The table's name, as the ``FeedTable`` observed says it: set when
    /// the feed starts (`bound(to:)`).
    var tableName = ""
    /// ``FeedTable/nameOrigin``, for the error when the table is missing.
    var tableNameOrigin: String?
    var inserts: String?? = .some(nil)
    var updates: String?? = .some(nil)
    var deletes: String?? = .some(nil)
    var updateColumns: [String] = []
    /// One change per row per transaction; see ``netPerTransaction()``.
    var isNet = false
    /// The triggers pass keys, not rows: see `observeChangedKeys(of:feed:scheduling:onError:onChange:)`.
    var isKeysOnly = false

    /// Every insert, update and delete.
    public static var all: ChangeFeed { ChangeFeed() }

    /// Inserts only, where the SQL `condition` over `new` holds.
    public static func inserts(where condition: String? = nil) -> ChangeFeed {
        ChangeFeed(inserts: .some(condition), updates: nil, deletes: nil)
    }

    /// Updates only (that change one of `columns`, when given), where the
    /// SQL `condition` over `old` and `new` holds.
    public static func updates(of columns: [String] = [], where condition: String? = nil) -> ChangeFeed {
        ChangeFeed(inserts: nil, updates: .some(condition), deletes: nil, updateColumns: columns)
    }

    /// Deletes only, where the SQL `condition` over `old` holds.
    public static func deletes(where condition: String? = nil) -> ChangeFeed {
        ChangeFeed(inserts: nil, updates: nil, deletes: .some(condition))
    }

    /// This feed and `other`: the kinds of both.
    ///
    /// ```swift
    /// let feed = ChangeFeed<Reminder>.inserts().and(.deletes())
    /// ```
    public func and(_ other: ChangeFeed) -> ChangeFeed {
        var merged = self
        if case .some = other.inserts { merged.inserts = other.inserts }
        if case .some = other.updates { merged.updates = other.updates; merged.updateColumns = other.updateColumns }
        if case .some = other.deletes { merged.deletes = other.deletes }
        return merged
    }

    /// One change per row per transaction, for sync engines: an insert
    /// then updates is one insert of the last values; an insert then a
    /// delete is nothing; updates are one update from the first old values
    /// to the last new ones; an update then a delete is a delete of the
    /// first old values; a delete then an insert of the same primary key is
    /// an update from the deleted values to the inserted ones. An update
    /// that changes the primary key counts as a delete of the old key and an
    /// insert of the new. Changes come in the order each row first changed.
    /// After commit only, in either `recursive_triggers` mode: the capture
    /// sees the rows REPLACE deletes either way.
    public func netPerTransaction() -> ChangeFeed {
        var net = self
        net.isNet = true
        return net
    }
}

extension ChangeFeed where Record: TableDescription {
    /// Inserts where the typed `condition` holds.
    ///
    /// ```swift
    /// let open = ChangeFeed<Reminder>.inserts { new in new.status == 0 }
    /// ```
    public static func inserts(when condition: (TriggerRow<Record>) -> TypedSQL<Bool>) -> ChangeFeed {
        inserts(where: condition(TriggerRow("new")).sql)
    }

    /// Updates of the given columns (any, when none) where the typed
    /// `condition` holds.
    ///
    /// ```swift
    /// let completions = ChangeFeed<Reminder>.updates(of: \.status, when: { old, new in new.status == 1 && old.status != 1 })
    /// ```
    public static func updates<each Column>(
        of columns: repeat KeyPath<Record.TriggerColumns.Type, ColumnDescription<each Column>>,
        when condition: ((TriggerRow<Record>, TriggerRow<Record>) -> TypedSQL<Bool>)? = nil
    ) -> ChangeFeed {
        updates(of: Record.columnNames(repeat each columns), where: condition?(TriggerRow("old"), TriggerRow("new")).sql)
    }

    /// Deletes where the typed `condition` holds.
    ///
    /// ```swift
    /// let removals = ChangeFeed<Reminder>.deletes { old in old.isFlagged }
    /// ```
    public static func deletes(when condition: (TriggerRow<Record>) -> TypedSQL<Bool>) -> ChangeFeed {
        deletes(where: condition(TriggerRow("old")).sql)
    }
}

// MARK: - What every part of a feed reads

extension ChangeFeed {
    /// Whether the feed reports updates (its events may carry two rows).
    var hasUpdates: Bool { if case .some = updates { true } else { false } }

    // MARK: - Columns

    /// The columns whose values the events pass after the rowid: every
    /// column, or the primary key's alone for a keys-only capture.
    func payloadColumns(_ db: Database, mode: String) throws -> [String] {
        mode == "keys" ? try keyColumns(db) : try liveColumns(db)
    }

    /// The table does not exist: run the migrations first, or (for a name
    /// that GRDB derived) name the table.
    func missingTableError() -> DatabaseError {
        let remedy = tableNameOrigin.map { "\"\(tableName)\" is \($0); or run the migrations first, then observe" }
            ?? "run the migrations first, then observe"
        return DatabaseError(resultCode: .SQLITE_ERROR,
                             message: "change feed of \"\(tableName)\": the table does not exist: \(remedy)")
    }

    /// The table's columns as `SELECT *` reads them, from the live schema.
    func liveColumns(_ db: Database) throws -> [String] {
        let table = tableName
        guard try db.tableExists(table) else { throw missingTableError() }
        return try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?) WHERE hidden <> 1", arguments: [table])
    }

    /// What identifies a row across a transaction: its primary key columns,
    /// or the rowid (an empty list) for a table without one.
    func keyColumns(_ db: Database) throws -> [String] {
        let primaryKey = try db.primaryKey(tableName)
        return primaryKey.isRowID && primaryKey.rowIDColumn == nil ? [] : primaryKey.columns
    }
}

/// A value handed to the writer's queue, where it is used alone.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
