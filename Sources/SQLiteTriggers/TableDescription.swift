/// What the trigger builders know of a table (or a view): its SQL name and
/// its typed columns. `@Table` generates it; by hand it is a few lines:
///
/// ```swift
/// extension Reminder: TableDescription {
///     static let tableName = "reminders"
///     struct Columns {
///         let id = TableColumn<UUID>("id", primaryKey: true)
///         let title = TableColumn<String>("title")
///         let updatedAt = TableColumn<Date?>("updatedAt")
///     }
///     static let columns = Columns()
/// }
/// ```
public protocol TableDescription {
    associatedtype Columns
    static var tableName: String { get }
    static var columns: Columns { get }
}

/// A column's SQL name, Swift value type, and whether it is the primary key.
///
/// ```swift
/// let title = TableColumn<String>("title")
/// ```
public struct TableColumn<Value>: AnyTableColumn, Sendable {
    public let name: String
    public let isPrimaryKey: Bool

    public init(_ name: String, primaryKey: Bool = false) {
        self.name = name
        self.isPrimaryKey = primaryKey
    }
}

/// A column seen without its value type.
public protocol AnyTableColumn {
    var name: String { get }
    var isPrimaryKey: Bool { get }
}

/// The rows a trigger sees (`new`, `old`) or a table's own rows inside a
/// subquery or a WHERE clause: `row.title` is the typed column reference
/// `"new"."title"`.
///
/// ```swift
/// Reminder.createTemporaryTrigger(after: .update { old, new in … }, when: { old, new in new.title != old.title })
/// ```
@dynamicMemberLookup
public struct TriggerRow<Table: TableDescription>: Sendable {
    /// The qualifier: "new", "old", or the table's own name.
    public let qualifier: String

    public init(_ qualifier: String) { self.qualifier = qualifier }

    public subscript<Value>(dynamicMember keyPath: KeyPath<Table.Columns, TableColumn<Value>>) -> TypedSQL<Value> {
        let column = Table.columns[keyPath: keyPath]
        return TypedSQL(raw: "\(SQLQuoting.identifier(qualifier)).\(SQLQuoting.identifier(column.name))")
    }

    /// The row's rowid: the key touch triggers use, whatever the primary key.
    public var rowid: TypedSQL<Int64> { TypedSQL(raw: "\(SQLQuoting.identifier(qualifier)).\"rowid\"") }
}

extension TableDescription {
    /// The primary key column, from the description.
    static var primaryKeyColumn: (any AnyTableColumn)? {
        Mirror(reflecting: columns).children
            .compactMap { $0.value as? any AnyTableColumn }
            .first { $0.isPrimaryKey }
    }

    /// The table's rows, for WHERE clauses and subqueries.
    static var row: TriggerRow<Self> { TriggerRow(tableName) }
}
