/// A `CREATE TEMP VIEW` statement, built from a typed query, so that
/// INSTEAD OF triggers have a typed view to stand on. Like TEMP triggers,
/// it lives with the connection; install it before the triggers on it.
///
/// ```swift
/// @TriggerTable("reminderTitles") struct ReminderTitle { var id: UUID; var title: String }
/// let view = ReminderTitle.createTempView(from: Reminder.self, where: { $0.status == 0 }) { view, reminder in
///     view.id = reminder.id
///     view.title = reminder.title
/// }
/// ```
public struct TempView: Sendable, CustomStringConvertible {
    /// The view's name.
    public let name: String
    /// The `CREATE TEMP VIEW IF NOT EXISTS` statement.
    public let sql: String
    public var description: String { sql }

    /// The statement that removes it.
    ///
    /// ```swift
    /// let drop = view.drop()
    /// ```
    public func drop() -> DropTrigger {
        DropTrigger(sql: "DROP VIEW IF EXISTS \"temp\".\(SQLQuoting.identifier(name))")
    }
}

extension TableDescription {
    /// `CREATE TEMP VIEW table (columns) AS SELECT … FROM source WHERE …`:
    /// each of this description's columns assigned from the source row.
    /// INSTEAD OF triggers name a view without its schema, so they find
    /// this TEMP view.
    ///
    /// ```swift
    /// let openTitles = ReminderTitle.createTempView(from: Reminder.self) { view, reminder in
    ///     view.id = reminder.id
    ///     view.title = reminder.title.upper()
    /// }
    /// ```
    public static func createTempView<Source: TableDescription>(
        from source: Source.Type,
        where condition: ((TriggerRow<Source>) -> TypedSQL<Bool>)? = nil,
        _ assign: (inout ColumnAssignments<Self>, TriggerRow<Source>) -> Void
    ) -> TempView {
        var assignments = ColumnAssignments<Self>()
        assign(&assignments, Source.row)
        let lines = ["CREATE TEMP VIEW IF NOT EXISTS \(SQLQuoting.identifier(tableName)) (\(assignments.columnList)) AS",
                     "SELECT \(assignments.valueList)", "FROM \(SQLQuoting.identifier(Source.tableName))"]
            + Source.whereClauses(condition)
        return TempView(name: tableName, sql: lines.joined(separator: "\n"))
    }
}
