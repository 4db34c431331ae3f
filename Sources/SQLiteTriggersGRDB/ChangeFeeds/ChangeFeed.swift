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

/// Which changes of a table a feed reports, decided in SQL so that others
/// are never decoded: kinds, the columns an UPDATE must change, and
/// conditions over `old` and `new`. Feeds filter the table's captured
/// changes after commit (a subquery in a condition sees the committed
/// database); ``DatabaseWriter/checkChanges(to:feed:_:)`` filters inside
/// the statement, with the triggers' own `UPDATE OF` and `WHEN`.
///
/// ```swift
/// let completions = ChangeFeed<Reminder>.updates(of: ["status"], where: "new.status = 1")
/// ```
public struct ChangeFeed<Record>: Sendable {
    /// The table's name, as the ``FeedTable`` observed says it: set when
    /// the feed starts (`bound(to:)`).
    var tableName = ""
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

extension ChangeFeed {
    /// Whether the feed reports updates (its events may carry two rows).
    var hasUpdates: Bool { if case .some = updates { true } else { false } }

    // MARK: - The change capture (after commit)

    /// The table as `sqlite_schema` spells it: the capture's events are
    /// named after it (ext/change_capture.c).
    func capturedTable(_ db: Database) throws -> String {
        let table = tableName
        guard let name = try String.fetchOne(db, sql: """
            SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name = ? COLLATE NOCASE
            """, arguments: [table]) else {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                "change feed of \"\(table)\": the table does not exist: run the migrations first, then observe")
        }
        return name
    }

    /// The capture's mode for this feed: a keys-only feed shares a row
    /// capture another feed of the table installed (it reads the key
    /// columns by name), and a row feed replaces a keys-only capture.
    /// Drops the installed capture when it must change.
    func captureMode(_ db: Database, table: String) throws -> String {
        let installed = try String.fetchOne(db, sql: "SELECT sqlitetriggers_change_feed_mode(?)", arguments: [table])
        let mode = isKeysOnly && installed != "rows" ? "keys" : "rows"
        if let installed, installed != mode { try Self.captureRule(db, table: table, mode: installed).drop().execute(db) }
        return mode
    }

    /// The capture's three BEFORE triggers, as the C installer writes them.
    static func captureRule(_ db: Database, table: String, mode: String) throws -> TempTrigger {
        let sql = try String.fetchOne(db, sql: "SELECT sqlitetriggers_change_feed_sql(?, ?)", arguments: [table, mode]) ?? ""
        let name = { (kind: String) in "sqlitetriggers_changes_\(table)_\(kind)" }
        return TempTrigger(name: name("insert"), sql: sql, tableName: table, firedBy: ["INSERT", "UPDATE", "DELETE"],
                                companions: [name("update"), name("delete")])
    }

    /// The SQL condition on `swift_callback_batch` rows that keeps this
    /// feed's changes, or nil for every change: its kinds, the columns an
    /// update must change (`IS NOT`), and its conditions, where `old.x` and
    /// `new.x` read the event's arguments for `columns` (the capture's
    /// layout, ext/change_capture.c). Conditions run after commit: a
    /// subquery in one sees the database as committed.
    func batchFilter(columns: [String]) throws -> String? {
        let layout = ChangeEventLayout(columnCount: columns.count)
        // Which side `old` and `new` read: the first, or an update's second.
        func isSecondSide(_ row: String, kind: String) -> Bool? {
            switch (kind, row) {
            case ("insert", "new"), ("delete", "old"), ("update", "old"): false
            case ("update", "new"): true
            default: nil
            }
        }
        func argument(_ row: String, _ column: String, kind: String) throws -> String {
            guard let secondSide = isSecondSide(row, kind: kind) else {
                throw filterError("\(kind) conditions cannot read \"\(row).\(column)\"")
            }
            if let index = columns.firstIndex(where: { sqliteNamesEqual($0, column) }) {
                return "arg\(layout.valueArgument(index, secondSide: secondSide))"
            }
            if ["rowid", "oid", "_rowid_"].contains(column.lowercased()) { return "arg\(layout.rowidArgument(secondSide: secondSide))" }
            throw filterError("no column \"\(column)\" in the change of \"\(tableName)\" (a keys-only feed has the key's alone)")
        }
        func rewrite(_ condition: String, kind: String) throws -> String {
            let tokens = tokenizeSQL(condition)
            var output = "", index = 0
            func next(after start: Int) -> Int? {
                var i = start + 1
                while i < tokens.count, tokens[i].kind == .trivia { i += 1 }
                return i < tokens.count ? i : nil
            }
            while index < tokens.count {
                let token = tokens[index]
                if token.isName, ["old", "new"].contains(token.name.lowercased()), let dot = next(after: index), tokens[dot].text == ".",
                   let column = next(after: dot), tokens[column].isName {
                    output += try argument(token.name.lowercased(), tokens[column].name, kind: kind)
                    index = column + 1
                } else {
                    output += token.text
                    index += 1
                }
            }
            return output
        }
        var clauses: [String] = []
        var keepsEverything = true
        for (kind, filter) in [("insert", inserts), ("update", updates), ("delete", deletes)] {
            guard case .some(let condition) = filter else { keepsEverything = false; continue }
            var parts = ["arg\(ChangeEventLayout.kindArgument) = '\(kind)'"]
            if kind == "update", !updateColumns.isEmpty {
                parts.append("(" + (try updateColumns.map { column in
                    "\(try argument("old", column, kind: kind)) IS NOT \(try argument("new", column, kind: kind))"
                }).joined(separator: " OR ") + ")")
            }
            if let condition { parts.append("(\(try rewrite(condition, kind: kind)))") }
            keepsEverything = keepsEverything && parts.count == 1
            clauses.append("(" + parts.joined(separator: " AND ") + ")")
        }
        return keepsEverything ? nil : clauses.isEmpty ? "0" : clauses.joined(separator: " OR ")
    }

    private func filterError(_ reason: String) -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_ERROR, message: "change feed of \"\(tableName)\": \(reason)")
    }

    // MARK: - Checks (inside the statement)

    /// The callback name of a check's triggers: one per table and filter,
    /// so that two checks with different filters never hear each other.
    var checkCallbackName: String {
        let filter = [inserts, updates, deletes].map { kind in kind.map { $0 ?? "all" } ?? "none" }
            + [updateColumns.joined(separator: ",")]
        return "sqlitetriggers.checks.\(tableName).\(stableHash(filter.joined(separator: "|")).prefix(8))"
    }

    /// A check's TEMP triggers for the table's live columns: each calls
    /// `swift_callback(name, kind, rowids…, values…)` inside the statement,
    /// where an immediate observer can refuse it, in the capture's layout.
    /// (AFTER triggers see `NEW` as the row was written; later triggers
    /// may still change it, which is why feeds use the capture instead.)
    func checkTriggers(_ db: Database) throws -> [TempTrigger] {
        let table = tableName
        let columns = try liveColumns(db)
        let quotedTable = SQLQuoting.identifier(table)
        let hasRowID = try Bool.fetchOne(db, sql: "SELECT wr = 0 FROM pragma_table_list WHERE schema = 'main' AND name = ?", arguments: [table]) ?? true
        func rowid(_ row: String) -> String { hasRowID ? "\"\(row)\".\"rowid\"" : "NULL" }
        func values(_ row: String) -> String { ([rowid(row)] + columns.map { "\"\(row)\".\(SQLQuoting.identifier($0))" }).joined(separator: ", ") }
        var triggers: [TempTrigger] = []
        func add(_ kind: String, _ clause: String, _ condition: String?, _ arguments: String) {
            let body = "SELECT swift_callback(\(SQLQuoting.string(checkCallbackName)), '\(kind)', \(arguments))"
            let definition = TriggerDefinition(timing: .after, event: clause, target: "\"main\".\(quotedTable)",
                                               condition: condition, body: [[body]])
            let name = "\(table)_checks_\(kind)_\(stableHash(canonicalTokens(definition.sql)).prefix(8))"
            triggers.append(TempTrigger(name: name, sql: definition.createStatement(named: name, ifNotExists: true),
                                        tableName: table, firedBy: [kind.uppercased()]))
        }
        if case .some(let condition) = inserts { add("insert", "INSERT", condition, values("new")) }
        if case .some(let condition) = updates {
            let clause = updateColumns.isEmpty ? "UPDATE" : "UPDATE OF " + updateColumns.map(SQLQuoting.identifier).joined(separator: ", ")
            add("update", clause, condition, values("old") + ", " + values("new"))
        }
        if case .some(let condition) = deletes { add("delete", "DELETE", condition, values("old")) }
        return triggers
    }

    // MARK: - Columns

    /// The columns whose values the events pass after the rowid: every
    /// column, or the primary key's alone for a keys-only capture.
    func payloadColumns(_ db: Database, mode: String) throws -> [String] {
        mode == "keys" ? try keyColumns(db) : try liveColumns(db)
    }

    /// The table's columns as `SELECT *` reads them, from the live schema.
    func liveColumns(_ db: Database) throws -> [String] {
        let table = tableName
        guard try db.tableExists(table) else {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                "change feed of \"\(table)\": the table does not exist: run the migrations first, then observe")
        }
        return try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?) WHERE hidden <> 1", arguments: [table])
    }

    /// What identifies a row across a transaction: its primary key columns,
    /// or the rowid (an empty list) for a table without one.
    func keyColumns(_ db: Database) throws -> [String] {
        let primaryKey = try db.primaryKey(tableName)
        return primaryKey.isRowID && primaryKey.rowIDColumn == nil ? [] : primaryKey.columns
    }
}

/// Decodes feed events into record changes, exactly as a GRDB fetch of the
/// same row would: a `Row` of the live columns, then `Record(row:)`.
final class ChangeDecoder<Record>: @unchecked Sendable {
    /// The table's name and row decoding.
    let table: FeedTable<Record>
    // Used on the writer's queue only: by the observer, and by the keeper
    // when a migration changed the table.
    var columns: [String]
    var keyColumns: [String]
    /// The capture's event name (after commit), or the check's.
    var eventName = ""
    /// Which of the table's changes the feed keeps, in SQL over the batch
    /// (see ``ChangeFeed/batchFilter(columns:)``); nil keeps all.
    var filter: String?
    /// Keeps the feed's triggers installed while the decoder lives.
    var keeper: RuleKeeper?
    /// Whether a side is decoded with its rowid (a keys-only feed's
    /// ``ChangedKey``), so that the batch reads it even without net changes.
    var sidesReadRowID = false
    /// Where to remove the triggers once the observation ends.
    weak var writer: (any DatabaseWriter)?

    deinit {
        // The observation ended (cancelled or released): the feed's triggers
        // go too. The keeper is read on the writer's queue, where it lives;
        // another feed with the same filter shares the triggers, and its
        // keeper puts them back after that very commit.
        guard let writer, let keeper else { return }
        let owned = UncheckedSendable(keeper)
        writer.asyncWriteWithoutTransaction { db in try? owned.value.removeRules(db) }
    }

    init(table: FeedTable<Record>, columns: [String], keyColumns: [String]) {
        self.table = table
        self.columns = columns
        self.keyColumns = keyColumns
    }

    /// How a round of the feed's events is fetched from
    /// `swift_callback_batch`: two statements, one per side of a change.
    /// The first reads every event's first side (the only side of an insert
    /// or delete, the old side of an update), the second the new side of
    /// the updates alone, so that it advances with the first only on an
    /// update. Each reads the side's columns under the table's names, then
    /// its rowid when a key or ``ChangedKey`` needs it; the first then the kind (0 insert,
    /// 1 delete, 2 update), plus 3 when the event does not have the table's
    /// width, and the number of its transaction. A record decodes from the statement's own row, as in a fetch,
    /// and the extra columns, last, never shadow a column of the table.
    /// Every column read is a virtual-table call, so none is read in vain.
    /// Rebuilt when the columns change.
    private var batchLayout: (columns: [String], withRowID: Bool, filter: String?, first: String, second: String)?

    private func currentBatchLayout(withRowID: Bool) -> (first: String, second: String) {
        if let batchLayout, batchLayout.columns == columns, batchLayout.withRowID == withRowID, batchLayout.filter == filter {
            return (batchLayout.first, batchLayout.second)
        }
        let event = ChangeEventLayout(columnCount: columns.count)
        func side(secondSide: Bool, extra: [String], where condition: String = "") -> String {
            let values = columns.indices.map {
                "arg\(event.valueArgument($0, secondSide: secondSide)) AS \(SQLQuoting.identifier(columns[$0]))"
            }
            let rowid = withRowID ? ["arg\(event.rowidArgument(secondSide: secondSide))"] : []
            return "SELECT " + (values + rowid + extra).joined(separator: ", ") + " FROM swift_callback_batch" + condition
        }
        // One CASE reads the kind once.
        let kind = "arg\(ChangeEventLayout.kindArgument)"
        let kindAndWidth = "CASE \(kind) WHEN 'insert' THEN 3 * (argc <> \(event.argumentCount(kind: "insert"))) "
            + "WHEN 'delete' THEN 1 + 3 * (argc <> \(event.argumentCount(kind: "delete"))) "
            + "WHEN 'update' THEN 2 + 3 * (argc <> \(event.argumentCount(kind: "update"))) ELSE 3 END"
        let kept = filter.map { " WHERE (\($0))" } ?? ""
        let layout = (first: side(secondSide: false, extra: [kindAndWidth, "tx"], where: kept),
                      second: side(secondSide: true, extra: [], where: (kept.isEmpty ? " WHERE" : kept + " AND") + " \(kind) = 'update'"))
        batchLayout = (columns, withRowID, filter, layout.first, layout.second)
        return layout
    }

    /// Decodes the round of events the batch observer is called for, in
    /// commit order; a row that does not decode goes to `onError`, and the
    /// others still come. Keys are read only when `withKeys` (net changes
    /// fold by key), and updates only when `hasUpdates`. Each side becomes
    /// an `Element` through `decodeSide`: `Record(row:)`, or a
    /// ``ChangedKey`` for a keys-only feed. A failed fetch (out of memory)
    /// throws, saying how many of the round's `eventCount` changes were not
    /// delivered.
    func decodeBatch<Element>(_ db: Database, eventCount: Int, withKeys: Bool, hasUpdates: Bool,
                              decodeSide: (ChangeDecoder, Row) throws -> Element, onError: (any Error) -> Void,
                              _ body: (RecordChange<Element>, _ oldKey: [DatabaseValue]?, _ newKey: [DatabaseValue]?,
                                       _ transaction: Int64) -> Void) throws {
        let count = columns.count
        func key(_ row: Row) -> [DatabaseValue]? {
            guard withKeys else { return nil }
            return keyColumns.isEmpty ? [row[count] as DatabaseValue] : keyColumns.map { row[$0] as DatabaseValue }
        }
        var read = 0
        do {
            let readsRowID = withKeys || sidesReadRowID
            let (firstSQL, secondSQL) = currentBatchLayout(withRowID: readsRowID)
            let firstSides = try Row.fetchCursor(db.cachedStatement(sql: firstSQL))
            let updatedSides = hasUpdates ? try Row.fetchCursor(db.cachedStatement(sql: secondSQL)) : nil
            while let first = try firstSides.next() {
                let kindAndWidth: Int64 = first[readsRowID ? count + 1 : count]
                let transaction: Int64 = first[readsRowID ? count + 2 : count + 1]
                let kind = kindAndWidth % 3
                let second = kind == 2 ? try updatedSides?.next() : nil
                read += 1
                do {
                    guard kindAndWidth < 3 else { throw layoutMismatch() }
                    switch (kind, second) {
                    case (0, _): body(.inserted(try decodeSide(self, first)), nil, key(first), transaction)
                    case (1, _): body(.deleted(try decodeSide(self, first)), key(first), nil, transaction)
                    case (_, let second?):
                        body(.updated(old: try decodeSide(self, first), new: try decodeSide(self, second)), key(first), key(second), transaction)
                    default: preconditionFailure("an update event in a feed without updates")
                    }
                } catch {
                    onError(error)
                }
            }
        } catch let error as DatabaseError {
            throw DatabaseError(resultCode: error.extendedResultCode, message:
                "change feed of \"\(table.name)\": \(eventCount - read) of \(eventCount) committed changes "
                + "could not be read, and are lost: \(error.message ?? "\(error.resultCode)")")
        }
    }

    /// An event whose arguments do not fit the table's live columns.
    func layoutMismatch() -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_MISMATCH, message:
            "change feed of \"\(table.name)\": the event does not match the table's \(columns.count) columns")
    }

    /// A side's ``ChangedKey``: the rowid follows the columns, and the key
    /// columns are read by name (from a keys-only capture, or a row capture
    /// another feed of the table installed).
    func changedKey(_ row: Row) -> ChangedKey {
        ChangedKey(rowID: row[columns.count], primaryKey: Dictionary(uniqueKeysWithValues: keyColumns.map { ($0, row[$0] as DatabaseValue) }))
    }

    /// The change, and the keys of the row before and after.
    func decode(_ arguments: CallbackArguments) throws -> (change: RecordChange<Record>, oldKey: [DatabaseValue]?, newKey: [DatabaseValue]?) {
        let values = (0..<arguments.count).map { arguments.value(at: $0).databaseValue }
        let layout = ChangeEventLayout(columnCount: columns.count)
        guard let kind = values.first.flatMap(String.fromDatabaseValue),
              values.count == layout.argumentCount(kind: kind) else { throw layoutMismatch() }
        // Argument numbers count from 1; `values` from 0.
        func side(secondSide: Bool) throws -> (Record, [DatabaseValue]) {
            let rowid = layout.rowidArgument(secondSide: secondSide) - 1
            let rowValues = Array(values[(rowid + 1)..<(rowid + layout.sideWidth)])
            let row = Row(Dictionary(uniqueKeysWithValues: zip(columns, rowValues.map { $0 as (any DatabaseValueConvertible)? })))
            let key = keyColumns.isEmpty ? [values[rowid]] : keyColumns.map { row[$0] as DatabaseValue }
            return (try table.decode(row), key)
        }
        let (first, firstKey) = try side(secondSide: false)
        switch kind {
        case "insert": return (.inserted(first), nil, firstKey)
        case "delete": return (.deleted(first), firstKey, nil)
        default:
            let (second, secondKey) = try side(secondSide: true)
            return (.updated(old: first, new: second), firstKey, secondKey)
        }
    }
}

extension CallbackValue {
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let value): value.databaseValue
        }
    }
}

/// Folds a transaction's changes into one per row (see
/// ``ChangeFeed/netPerTransaction()``).
struct NetChanges<Record> {
    private var order: [[DatabaseValue]] = []
    /// Per key, the net change so far: nil when the changes cancelled out.
    private var pending: [[DatabaseValue]: RecordChange<Record>?] = [:]

    mutating func add(_ change: RecordChange<Record>, oldKey: [DatabaseValue]?, newKey: [DatabaseValue]?) {
        if case .updated(let old, let new) = change, let oldKey, let newKey, oldKey != newKey {
            add(.deleted(old), oldKey: oldKey, newKey: nil)
            add(.inserted(new), oldKey: nil, newKey: newKey)
            return
        }
        guard let key = newKey ?? oldKey else { return }
        let earlier: RecordChange<Record>?
        if let seen = pending[key] { earlier = seen } else { order.append(key); earlier = nil }
        pending.updateValue(Self.fold(earlier, change), forKey: key)
    }

    var isEmpty: Bool { order.isEmpty }

    /// The net changes, in the order each row first changed; empties the fold.
    mutating func drain() -> [RecordChange<Record>] {
        defer { order = []; pending = [:] }
        return order.compactMap { pending[$0] ?? nil }
    }

    static func fold(_ earlier: RecordChange<Record>?, _ later: RecordChange<Record>) -> RecordChange<Record>? {
        switch (earlier, later) {
        case (nil, _): later
        case (.inserted, .updated(_, let new)): .inserted(new)
        case (.inserted, .deleted): nil
        case (.updated(let old, _), .updated(_, let new)): .updated(old: old, new: new)
        case (.updated(let old, _), .deleted): .deleted(old)
        case (.deleted(let old), .inserted(let new)): .updated(old: old, new: new)
        // Not produced by SQLite for one key (an insert of a present key
        // fails, an update or delete of an absent row does nothing): keep
        // the later change.
        default: later
        }
    }
}

/// A value handed to the writer's queue, where it is used alone.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
