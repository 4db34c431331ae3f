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
    /// A column named `rowid` hides it; then it is `_rowid_` or `oid`, as
    /// SQLite also names it (``TableDescription/rowidName``).
    public var rowid: TypedSQL<Int64> {
        TypedSQL(raw: "\(SQLQuoting.identifier(qualifier)).\(SQLQuoting.identifier(Table.rowidName ?? "rowid"))")
    }
}

/// SQLite's names of the rowid, in the order they are tried.
package enum RowidName {
    /// The first of `rowid`, `_rowid_`, `oid` that no column takes (a
    /// column of that name hides the rowid, in SQL and in a trigger's NEW
    /// and OLD), or nil when the columns take all three.
    package static func unhidden(by columns: [String]) -> String? {
        let taken = Set(columns.map { $0.lowercased() })
        return ["rowid", "_rowid_", "oid"].first { !taken.contains($0) }
    }
}

extension TableDescription {
    /// The name this table's rowid goes by in SQL, or nil when its columns
    /// hide every name of it (then rows are found by the primary key).
    public static var rowidName: String? { RowidName.unhidden(by: allColumns.map(\.name)) }

    /// `WHERE` condition that finds the row a trigger's NEW names: by the
    /// rowid, or by the primary key where columns hide the rowid.
    static var newRowCondition: String {
        if let rowid = rowidName.map(SQLQuoting.identifier) { return "\(rowid) = \"new\".\(rowid)" }
        let key = allColumns.filter(\.isPrimaryKey).map { SQLQuoting.identifier($0.name) }
        precondition(!key.isEmpty, "SQLiteTriggers: the columns of \(tableName) hide rowid, _rowid_ and oid, "
                     + "and it declares no primary key: a touch trigger cannot find its row; rename a column")
        return key.map { "\($0) = \"new\".\($0)" }.joined(separator: " AND ")
    }

    /// The primary key column, from the description.
    static var primaryKeyColumn: (any AnyColumnDescription)? {
        allColumns.first { $0.isPrimaryKey }
    }

    /// The table's rows, for WHERE clauses and subqueries.
    static var row: TriggerRow<Self> { TriggerRow(tableName) }
}
