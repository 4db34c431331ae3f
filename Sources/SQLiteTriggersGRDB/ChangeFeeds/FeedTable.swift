import GRDB

/// A table as change feeds and checks see it: its name in SQL, and how a
/// row of it becomes a `Record`.
///
/// GRDB records describe themselves (`observeChanges(to: Reminder.self)`
/// builds `FeedTable(Reminder.self)`). Any other type gives both in a line:
/// a StructuredQueries table, a plain struct, a dictionary.
///
/// ```swift
/// struct Title: Sendable { var id: Int64; var title: String }
/// let titles = FeedTable("reminders") { row in Title(id: row["id"], title: row["title"]) }
/// ```
///
/// `decode` receives a GRDB `Row` of the table's live columns, under their
/// names, in the table's order (`SELECT *`), with the values the change
/// carries; it runs on the writer's queue, or inside the statement for
/// `checkChanges(to:feed:_:)`.
/// A row that does not decode goes to the observation's `onError`.
public struct FeedTable<Record>: Sendable {
    /// The table's name in SQL, matched as SQLite matches names (any case).
    public let name: String
    let decode: @Sendable (Row) throws -> Record
    /// Where `name` came from, when the caller did not write it: said when
    /// no such table exists.
    var nameOrigin: String?

    /// A table named `name` whose rows `decode` turns into records.
    public init(_ name: String, decode: @escaping @Sendable (Row) throws -> Record) {
        self.name = name
        self.decode = decode
    }
}

extension FeedTable where Record: FetchableRecord & TableRecord {
    /// A GRDB record's table: `databaseTableName`, and `Record(row:)` as a
    /// fetch decodes it.
    ///
    /// ```swift
    /// let reminders = FeedTable(Reminder.self)
    /// ```
    public init(_ record: Record.Type) {
        self.init(Record.databaseTableName) { row in try Record(row: row) }
        nameOrigin = "the databaseTableName of \(Record.self), which GRDB derives from the type's name "
            + "unless the record declares one; a model that is also a StructuredQueries @Table names its "
            + "table otherwise: declare `static let databaseTableName` on it, or observe "
            + "FeedTable(\"<table>\") { row in ... } with the table's name"
    }
}

extension ChangeFeed {
    /// This feed, for `table`.
    func bound(to table: FeedTable<Record>) -> ChangeFeed {
        var bound = self
        bound.tableName = table.name
        bound.tableNameOrigin = table.nameOrigin
        return bound
    }
}
