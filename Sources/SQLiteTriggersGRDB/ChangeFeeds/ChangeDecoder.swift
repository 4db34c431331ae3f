import GRDB
import Foundation

/// Decodes feed events into record changes, exactly as a GRDB fetch of the
/// same row would: a `Row` of the live columns, then the table's decoding.
///
/// Lifetime: held by the observation's handler, so it lives exactly as long
/// as the observation; it holds the `RuleKeeper` of the feed's triggers,
/// and its `deinit` removes them on the writer's queue. Its state changes
/// only on the writer's queue (the handler, and the keeper after a
/// migration), which is why it may be `@unchecked Sendable`.
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

extension ChangeDecoder {
    /// A side of a change as a record, decoded as a GRDB fetch decodes it.
    static func record(_ decoder: ChangeDecoder, _ row: Row) throws -> Record { try decoder.table.decode(row) }

    /// A decoder for `feed`'s committed changes, with the table's change
    /// capture installed on `db` and kept there (and its columns and filter
    /// kept current) for as long as the decoder lives.
    static func keeping(_ feed: ChangeFeed<Record>, of table: FeedTable<Record>, on db: Database) throws -> ChangeDecoder {
        let decoder = ChangeDecoder(table: table, columns: [], keyColumns: [])
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
    static func checking(_ feed: ChangeFeed<Record>, of table: FeedTable<Record>, on db: Database) throws -> ChangeDecoder {
        let decoder = ChangeDecoder(table: table, columns: try feed.liveColumns(db), keyColumns: try feed.keyColumns(db))
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
