/// Raw SQL with typed holes, for what the builders do not say: typed
/// expressions go in as they print elsewhere, Swift values as literals
/// (`Date` still refused: use `.now` or `.frozen(date)`), tables and
/// columns as quoted names. The text between the holes is yours, unchecked.
///
/// ```swift
/// let label = TypedSQL<String>(sql: "printf('%s (%d)', \(new.title), \(coalesce(new.priority, 0)))")
/// let ping = TriggerStatement(sql: "SELECT swift_callback('touched', \(new.id)) FROM \(RemindersList.self) LIMIT \(1)")
/// ```
public struct SQLFragment: ExpressibleByStringInterpolation, Sendable {
    let text: String

    public init(stringLiteral value: String) { text = value }
    public init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }

    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        /// SQL as written.
        public mutating func appendLiteral(_ literal: String) { text += literal }

        /// A typed expression, parenthesized where it is compound.
        public mutating func appendInterpolation<Value>(_ expression: TypedSQL<Value>) { text += expression.operand }

        /// A Swift value, as a literal.
        public mutating func appendInterpolation<Value: SQLLiteral>(_ value: Value) { text += value.sqlLiteral }

        /// A table's quoted name.
        public mutating func appendInterpolation<Table: TableDescription>(_ table: Table.Type) {
            text += SQLQuoting.identifier(Table.tableName)
        }

        /// A column's quoted name, unqualified.
        public mutating func appendInterpolation<Value>(_ column: ColumnDescription<Value>) {
            text += SQLQuoting.identifier(column.name)
        }
    }
}

extension TypedSQL {
    /// Raw SQL with typed holes, declared to have type `Value`; see ``SQLFragment``.
    ///
    /// ```swift
    /// let initials = TypedSQL<String>(sql: "upper(substr(\(new.title), 1, 2))")
    /// ```
    public init(sql fragment: SQLFragment) {
        self.init(raw: fragment.text, isCompound: true)
    }
}

extension TriggerStatement {
    /// One raw statement with typed holes; see ``SQLFragment``.
    ///
    /// ```swift
    /// let ping = TriggerStatement(sql: "SELECT swift_callback('renamed', \(new.id), \(old.title))")
    /// ```
    public init(sql fragment: SQLFragment) {
        self.init(clauses: [fragment.text])
    }
}
