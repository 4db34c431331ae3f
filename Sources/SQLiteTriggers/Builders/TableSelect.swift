/// A typed `SELECT expression FROM table WHERE … ORDER BY … LIMIT …`: a
/// scalar subquery (``value``), the right side of `in`/`notIn`, or a
/// statement of its own in a trigger body (a SELECT that calls a function
/// for each matching row).
///
/// ```swift
/// let highest: TypedSQL<Int?> = RemindersList.select { $0.position }.order(by: { $0.position }, descending: true).limit(1).value
/// ```
public struct TableSelect<Table: TableDescription, Value>: TriggerStatementConvertible, Sendable {
    let expression: String
    let condition: String?
    let ordering: String?
    let count: Int?

    /// Only the rows matching `condition` (several `where`s all apply).
    public func `where`(_ condition: (TriggerRow<Table>) -> TypedSQL<Bool>) -> TableSelect {
        let added = condition(Table.row).sql
        return TableSelect(expression: expression, condition: self.condition.map { "(\($0)) AND (\(added))" } ?? added,
                      ordering: ordering, count: count)
    }

    /// `ORDER BY key [DESC]`.
    public func order<Key>(by key: (TriggerRow<Table>) -> TypedSQL<Key>, descending: Bool = false) -> TableSelect {
        TableSelect(expression: expression, condition: condition,
               ordering: key(Table.row).sql + (descending ? " DESC" : ""), count: count)
    }

    /// `LIMIT count`.
    public func limit(_ count: Int) -> TableSelect {
        TableSelect(expression: expression, condition: condition, ordering: ordering, count: count)
    }

    /// `(SELECT …)`: the first row's value, NULL when there is none.
    public var value: TypedSQL<Value?> { TypedSQL(raw: "(\(inlineSQL))") }

    /// The query as a statement of a trigger body.
    public var statement: TriggerStatement { TriggerStatement(clauses: clauses) }

    var clauses: [String] {
        ["SELECT \(expression)", "FROM \(SQLQuoting.identifier(Table.tableName))"]
            + (condition.map { ["WHERE \($0)"] } ?? [])
            + (ordering.map { ["ORDER BY \($0)"] } ?? [])
            + (count.map { ["LIMIT \($0)"] } ?? [])
    }

    /// On one line, for subqueries.
    var inlineSQL: String { clauses.joined(separator: " ") }
}

extension TableDescription {
    /// `SELECT expression FROM table`, narrowed with `where`, `order` and
    /// `limit`.
    ///
    /// ```swift
    /// let tagIDs = ReminderTag.select { $0.tagID }.where { $0.reminderID == new.id }
    /// ```
    public static func select<Value>(_ expression: (TriggerRow<Self>) -> TypedSQL<Value>) -> TableSelect<Self, Value> {
        TableSelect(expression: expression(row).sql, condition: nil, ordering: nil, count: nil)
    }

    /// `(SELECT aggregate FROM table WHERE …)`: an aggregate without GROUP
    /// BY gives exactly one row, so the value is the expression's own type.
    ///
    /// ```swift
    /// let nextPosition: TypedSQL<Int> = RemindersList.aggregate { coalesce($0.position.max(), -1) + 1 }
    /// ```
    public static func aggregate<Value>(
        _ expression: (TriggerRow<Self>) -> TypedSQL<Value>,
        where condition: ((TriggerRow<Self>) -> TypedSQL<Bool>)? = nil
    ) -> TypedSQL<Value> {
        TypedSQL(raw: "(SELECT \(expression(row).sql) FROM \(SQLQuoting.identifier(tableName))\(whereClause(condition)))")
    }
}
