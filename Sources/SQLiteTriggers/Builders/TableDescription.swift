/// What the trigger builders know of a table (or a view): its SQL name and
/// its typed columns, as static members of `TriggerColumns`. `@TriggerTable`
/// generates it; by hand it is a few lines:
///
/// ```swift
/// struct Reminder { var id: UUID; var title: String; var updatedAt: Date? }
///
/// extension Reminder: TableDescription {
///     static let tableName = "reminders"
///     enum TriggerColumns {
///         static let id = ColumnDescription<UUID>("id", primaryKey: true)
///         static let title = ColumnDescription<String>("title")
///         static let updatedAt = ColumnDescription<Date?>("updatedAt")
///     }
///     static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title, TriggerColumns.updatedAt]
/// }
/// ```
///
/// The columns are static, as GRDB's `Columns` are, so that with
/// `SQLiteTriggersGRDB` imported the same `TriggerColumns` serve GRDB's query
/// interface (`Reminder.filter { $0.title == "Milk" }`): `@TriggerTable` names
/// them `Columns` too unless the type declares its own.
public protocol TableDescription {
    associatedtype TriggerColumns
    /// The table's name in SQL.
    static var tableName: String { get }
    /// Every column of the description, in order; the one marked
    /// `primaryKey` is the key of ``TableUpdate/find(_:)``.
    static var allColumns: [any AnyColumnDescription] { get }
    /// The schema the table lives in: "main" unless said otherwise ("temp"
    /// for a TEMP view). Triggers name it (`ON "main"."reminders"`), so a
    /// TEMP table of the same name cannot capture them.
    static var schemaName: String { get }
}

extension TableDescription {
    public static var schemaName: String { "main" }

    /// `"schema"."table"`.
    static var qualifiedTableName: String {
        "\(SQLQuoting.identifier(schemaName)).\(SQLQuoting.identifier(tableName))"
    }
}

/// A column's SQL name, Swift value type, and whether it is the primary key.
///
/// ```swift
/// let title = ColumnDescription<String>("title")       // in a TriggerColumns enum, `static let`
/// ```
public struct ColumnDescription<Value>: AnyColumnDescription, Sendable {
    public let name: String
    public let isPrimaryKey: Bool

    /// A column named `name` in SQL; `primaryKey` marks the key that
    /// ``TableUpdate/find(_:)`` uses.
    ///
    /// ```swift
    /// let id = ColumnDescription<UUID>("id", primaryKey: true)
    /// ```
    public init(_ name: String, primaryKey: Bool = false) {
        self.name = name
        self.isPrimaryKey = primaryKey
    }
}

/// A column seen without its value type.
public protocol AnyColumnDescription: Sendable {
    var name: String { get }
    var isPrimaryKey: Bool { get }
}

/// The rows a trigger sees (`new`, `old`) or a table's own rows inside a
/// subquery or a WHERE clause: `row.title` is the typed column reference
/// `"new"."title"`.
///
/// ```swift
/// Reminder.createTempTrigger(after: .update(when: { old, new in new.title != old.title }) { old, new in
///     .callback("reminderRenamed", new.id, old.title, new.title)
/// })
/// ```
@dynamicMemberLookup
public struct TriggerRow<Table: TableDescription>: Sendable {
    /// The qualifier: "new", "old", or the table's own name.
    public let qualifier: String

    public init(_ qualifier: String) { self.qualifier = qualifier }

    public subscript<Value>(dynamicMember keyPath: KeyPath<Table.TriggerColumns.Type, ColumnDescription<Value>>) -> TypedSQL<Value> {
        let column = Table.TriggerColumns.self[keyPath: keyPath]
        return TypedSQL(raw: "\(SQLQuoting.identifier(qualifier)).\(SQLQuoting.identifier(column.name))")
    }

    /// The row's rowid: the key touch triggers use, whatever the primary key.
    public var rowid: TypedSQL<Int64> { TypedSQL(raw: "\(SQLQuoting.identifier(qualifier)).\"rowid\"") }
}

extension TableDescription {
    /// The primary key column, from the description.
    static var primaryKeyColumn: (any AnyColumnDescription)? {
        allColumns.first { $0.isPrimaryKey }
    }

    /// The table's rows, for WHERE clauses and subqueries.
    static var row: TriggerRow<Self> { TriggerRow(tableName) }
}
