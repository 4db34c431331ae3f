import Foundation

// Expressions beyond comparisons and arithmetic: CASE, ranges and patterns,
// SQLite's core scalar and aggregate functions, JSON, dates, and our own
// functions. Each keeps the Swift type of its value; a function that gives
// NULL for a NULL argument keeps the argument's optionality.

/// Any typed SQL expression, whatever its value type: what `jsonObject` and
/// `jsonArray` take.
public protocol TypedSQLExpression: Sendable {
    /// The SQL text: the expression's, or the value's literal.
    var typedSQLText: String { get }
}

extension TypedSQL: TypedSQLExpression {
    public var typedSQLText: String { sql }
}

// Swift values stand in JSON arguments as literals: `jsonArray(new.title, 1, "two")`.
extension Int: TypedSQLExpression { public var typedSQLText: String { sqlLiteral } }
extension Int64: TypedSQLExpression { public var typedSQLText: String { sqlLiteral } }
extension Double: TypedSQLExpression { public var typedSQLText: String { sqlLiteral } }
extension Bool: TypedSQLExpression { public var typedSQLText: String { sqlLiteral } }
extension String: TypedSQLExpression { public var typedSQLText: String { sqlLiteral } }
extension UUID: TypedSQLExpression { public var typedSQLText: String { sqlLiteral } }

// MARK: - CASE

/// `CASE … WHEN … THEN … ELSE … END`: with a base (`SQLCase(new.status)`), each
/// `when` compares it with a value; without one (`SQLCase()`), each `when` is a
/// condition.
///
/// ```swift
/// let label: TypedSQL<String> = SQLCase(new.status).when(0, then: "open").when(1, then: "done").else("other")
/// let urgency: TypedSQL<String> = SQLCase().when(new.priority > 2, then: "high").else("normal")
/// ```
public struct SQLCase<Base>: Sendable {
    let base: String?

    /// A simple CASE: each `when` compares `base` with a value.
    public init(_ base: TypedSQL<Base>) { self.base = base.operand }

    /// `WHEN value THEN result`, for a Swift value and a Swift result.
    public func when<Result: SQLLiteral>(_ value: TypedSQL<Base>, then result: Result) -> SQLCaseWhen<Base, Result> {
        SQLCaseWhen(base: base, branches: ["WHEN \(value.sql) THEN \(result.sqlLiteral)"])
    }

    /// `WHEN value THEN result`, for a result expression.
    public func when<Result>(_ value: TypedSQL<Base>, then result: TypedSQL<Result>) -> SQLCaseWhen<Base, Result> {
        SQLCaseWhen(base: base, branches: ["WHEN \(value.sql) THEN \(result.sql)"])
    }
}

extension SQLCase where Base == Bool {
    /// A searched CASE: each `when` is a condition.
    public init() { self.base = nil }
}

/// A CASE with at least one branch; `else` or `end` finishes it.
public struct SQLCaseWhen<Base, Result>: Sendable {
    let base: String?
    let branches: [String]

    /// Another `WHEN value THEN result`.
    public func when(_ value: TypedSQL<Base>, then result: TypedSQL<Result>) -> SQLCaseWhen {
        SQLCaseWhen(base: base, branches: branches + ["WHEN \(value.sql) THEN \(result.sql)"])
    }

    /// `ELSE fallback END`: a value in every case.
    public func `else`(_ fallback: TypedSQL<Result>) -> TypedSQL<Result> {
        finish(branches + ["ELSE \(fallback.sql)"])
    }

    /// `END`: NULL when no branch matches.
    public var end: TypedSQL<Result?> { finish(branches) }

    private func finish<Value>(_ parts: [String]) -> TypedSQL<Value> {
        TypedSQL(raw: "CASE " + (base.map { "\($0) " } ?? "") + parts.joined(separator: " ") + " END")
    }
}

extension SQLCaseWhen where Result: SQLLiteral {
    /// Another `WHEN value THEN result`, for a Swift result.
    public func when(_ value: TypedSQL<Base>, then result: Result) -> SQLCaseWhen {
        when(value, then: TypedSQL<Result>.value(result))
    }

    /// `ELSE fallback END`, for a Swift value.
    public func `else`(_ fallback: Result) -> TypedSQL<Result> {
        self.else(TypedSQL<Result>.value(fallback))
    }
}

// MARK: - Ranges, patterns, membership

extension TypedSQL {
    /// `BETWEEN low AND high`, bounds included.
    ///
    /// ```swift
    /// let midweek: TypedSQL<Bool> = new.priority.between(1, and: 3)
    /// ```
    public func between(_ low: TypedSQL<Value>, and high: TypedSQL<Value>) -> TypedSQL<Bool> {
        TypedSQL<Bool>(raw: "\(operand) BETWEEN \(low.operand) AND \(high.operand)", isCompound: true)
    }

    /// `IN (SELECT …)`: the value is among the query's.
    ///
    /// ```swift
    /// let tagged: TypedSQL<Bool> = new.id.in(ReminderTag.select { $0.reminderID })
    /// ```
    public func `in`<Table>(_ query: TableSelect<Table, Value>) -> TypedSQL<Bool> {
        TypedSQL<Bool>(raw: "\(operand) IN (\(query.inlineSQL))", isCompound: true)
    }

    /// `NOT IN (SELECT …)`.
    ///
    /// ```swift
    /// let untagged: TypedSQL<Bool> = new.id.notIn(ReminderTag.select { $0.reminderID })
    /// ```
    public func notIn<Table>(_ query: TableSelect<Table, Value>) -> TypedSQL<Bool> {
        TypedSQL<Bool>(raw: "\(operand) NOT IN (\(query.inlineSQL))", isCompound: true)
    }

    /// `typeof(x)`: 'null', 'integer', 'real', 'text' or 'blob'.
    ///
    /// ```swift
    /// let isText: TypedSQL<Bool> = new.title.typeof() == "text"
    /// ```
    public func typeof() -> TypedSQL<String> { call("typeof", self) }

    /// `nullif(x, y)`: NULL when both are equal, else x.
    ///
    /// ```swift
    /// let blankIsNull: TypedSQL<String?> = new.notes.nullif("")
    /// ```
    public func nullif(_ other: TypedSQL<Value>) -> TypedSQL<Value?> { call("nullif", self, other) }
}

extension TypedSQL where Value: SQLLiteral {
    /// `NOT IN (v1, v2, ...)`.
    ///
    /// ```swift
    /// let ordinary: TypedSQL<Bool> = new.status.notIn([2, 3])
    /// ```
    public func notIn(_ values: [Value]) -> TypedSQL<Bool> {
        TypedSQL<Bool>(raw: "\(operand) NOT IN (\(values.map(\.sqlLiteral).joined(separator: ", ")))", isCompound: true)
    }
}

extension TypedSQL where Value: SQLStringLiteralValue {
    /// `GLOB pattern`: case-sensitive, with `*`, `?` and `[…]`.
    ///
    /// ```swift
    /// let shouting: TypedSQL<Bool> = new.title.glob("*!")
    /// ```
    public func glob(_ pattern: TypedSQL<String>) -> TypedSQL<Bool> { binary("GLOB", pattern) }

    /// `lower(x)`, ASCII letters only, as SQLite's.
    ///
    /// ```swift
    /// let lowered: TypedSQL<String> = new.title.lower()
    /// ```
    public func lower() -> TypedSQL { call("lower", self) }
    /// `upper(x)`, ASCII letters only.
    public func upper() -> TypedSQL { call("upper", self) }
    /// `trim(x)`: spaces removed at both ends; `characters` others instead.
    ///
    /// ```swift
    /// let tidy: TypedSQL<String> = new.title.trim()
    /// ```
    public func trim(_ characters: TypedSQL<String>? = nil) -> TypedSQL { callTrim("trim", characters) }
    /// `ltrim(x)`.
    public func ltrim(_ characters: TypedSQL<String>? = nil) -> TypedSQL { callTrim("ltrim", characters) }
    /// `rtrim(x)`.
    public func rtrim(_ characters: TypedSQL<String>? = nil) -> TypedSQL { callTrim("rtrim", characters) }
    /// `substr(x, start, length)`, 1-based, in characters.
    ///
    /// ```swift
    /// let initial: TypedSQL<String> = new.title.substr(1, 1)
    /// ```
    public func substr(_ start: TypedSQL<Int>, _ length: TypedSQL<Int>? = nil) -> TypedSQL {
        length.map { call("substr", self, start, $0) } ?? call("substr", self, start)
    }
    /// `replace(x, pattern, replacement)`: every occurrence.
    ///
    /// ```swift
    /// let spaced: TypedSQL<String> = new.title.replace("_", " ")
    /// ```
    public func replace(_ pattern: TypedSQL<String>, _ replacement: TypedSQL<String>) -> TypedSQL {
        call("replace", self, pattern, replacement)
    }

    private func callTrim(_ function: String, _ characters: TypedSQL<String>?) -> TypedSQL {
        characters.map { call(function, self, $0) } ?? call(function, self)
    }
}

extension TypedSQL where Value == String {
    /// `length(x)`: characters.
    ///
    /// ```swift
    /// let tooLong: TypedSQL<Bool> = new.title.length() > 100
    /// ```
    public func length() -> TypedSQL<Int> { call("length", self) }
    /// `instr(x, needle)`: the 1-based position of the first match, 0 if none.
    public func instr(_ needle: TypedSQL<String>) -> TypedSQL<Int> { call("instr", self, needle) }
    /// `json_extract(x, path)`: the value at `path` in this JSON text, as `type`
    /// (NULL when absent).
    ///
    /// ```swift
    /// let city: TypedSQL<String?> = new.notes.jsonExtract("$.city", as: String.self)
    /// ```
    public func jsonExtract<Result>(_ path: String, as type: Result.Type) -> TypedSQL<Result?> {
        call("json_extract", self, TypedSQL<String>.value(path))
    }
}

extension TypedSQL where Value == String? {
    /// `length(x)`: characters, NULL for NULL.
    public func length() -> TypedSQL<Int?> { call("length", self) }
    /// `instr(x, needle)`, NULL for NULL.
    public func instr(_ needle: TypedSQL<String>) -> TypedSQL<Int?> { call("instr", self, needle) }
    /// `json_extract(x, path)`, NULL for NULL.
    public func jsonExtract<Result>(_ path: String, as type: Result.Type) -> TypedSQL<Result?> {
        call("json_extract", self, TypedSQL<String>.value(path))
    }
}

// MARK: - Numbers

extension TypedSQL where Value: SQLNumericValue {
    /// `abs(x)`.
    ///
    /// ```swift
    /// let distance: TypedSQL<Int> = (new.position - old.position).abs()
    /// ```
    public func abs() -> TypedSQL { call("abs", self) }
}

extension TypedSQL where Value == Double {
    /// `round(x, digits)`.
    ///
    /// ```swift
    /// let rounded: TypedSQL<Double> = new.score.round(2)
    /// ```
    public func round(_ digits: TypedSQL<Int> = 0) -> TypedSQL { call("round", self, digits) }
}

extension TypedSQL where Value == Double? {
    /// `round(x, digits)`, NULL for NULL.
    public func round(_ digits: TypedSQL<Int> = 0) -> TypedSQL { call("round", self, digits) }
}

/// `max(a, b, ...)`: the largest of its arguments (NULL if any is NULL).
///
/// ```swift
/// let atLeastOne: TypedSQL<Int> = max(new.position, 1)
/// ```
public func max<V>(_ first: TypedSQL<V>, _ second: TypedSQL<V>, _ rest: TypedSQL<V>...) -> TypedSQL<V> {
    TypedSQL(raw: "max(\(([first, second] + rest).map(\.sql).joined(separator: ", ")))")
}

/// `min(a, b, ...)`: the smallest of its arguments (NULL if any is NULL).
///
/// ```swift
/// let capped: TypedSQL<Int> = min(new.position, 100)
/// ```
public func min<V>(_ first: TypedSQL<V>, _ second: TypedSQL<V>, _ rest: TypedSQL<V>...) -> TypedSQL<V> {
    TypedSQL(raw: "min(\(([first, second] + rest).map(\.sql).joined(separator: ", ")))")
}

/// `ifnull(value, fallback)`: `coalesce` with two arguments.
///
/// ```swift
/// let priority: TypedSQL<Int> = ifnull(new.priority, 0)
/// ```
public func ifnull<V>(_ value: TypedSQL<V?>, _ fallback: TypedSQL<V>) -> TypedSQL<V> { call("ifnull", value, fallback) }

/// `iif(condition, then, else)`.
///
/// ```swift
/// let label: TypedSQL<String> = iif(new.isFlagged, "flagged", "plain")
/// ```
public func iif<V>(_ condition: TypedSQL<Bool>, _ then: TypedSQL<V>, _ otherwise: TypedSQL<V>) -> TypedSQL<V> {
    call("iif", condition, then, otherwise)
}

// MARK: - Aggregates, for `aggregate` and `select`

extension TypedSQL {
    /// `max(x)` over the rows of a query: NULL when there are none.
    ///
    /// ```swift
    /// let last: TypedSQL<Int> = RemindersList.aggregate { coalesce($0.position.max(), -1) + 1 }
    /// ```
    public func max() -> TypedSQL<Value?> { call("max", self) }
    /// `min(x)` over the rows of a query: NULL when there are none.
    public func min() -> TypedSQL<Value?> { call("min", self) }
    /// `count(x)`: the rows where x is not NULL.
    public func count() -> TypedSQL<Int> { call("count", self) }
}

extension TypedSQL where Value: SQLNumericValue {
    /// `total(x)`: the sum as a Double, 0.0 for no rows.
    public func total() -> TypedSQL<Double> { call("total", self) }
    /// `avg(x)`: NULL for no rows.
    public func avg() -> TypedSQL<Double?> { call("avg", self) }
}

extension TypedSQL where Value: SQLStringLiteralValue {
    /// `group_concat(x, separator)`: NULL for no rows.
    ///
    /// ```swift
    /// let titles: TypedSQL<String?> = Reminder.aggregate { $0.title.groupConcat(", ") }
    /// ```
    public func groupConcat(_ separator: TypedSQL<String> = ",") -> TypedSQL<String?> { call("group_concat", self, separator) }
}

// MARK: - JSON (built into SQLite 3.38+)

/// `json_object('key', value, ...)`: JSON text.
///
/// ```swift
/// let payload: TypedSQL<String> = jsonObject(["id": new.id, "title": new.title, "priority": new.priority])
/// ```
public func jsonObject(_ pairs: KeyValuePairs<String, any TypedSQLExpression>) -> TypedSQL<String> {
    TypedSQL(raw: "json_object(\(pairs.map { "\(SQLQuoting.string($0.key)), \($0.value.typedSQLText)" }.joined(separator: ", ")))")
}

/// `json_array(value, ...)`: JSON text.
///
/// ```swift
/// let pair: TypedSQL<String> = jsonArray(new.id, new.title)
/// ```
public func jsonArray(_ values: any TypedSQLExpression...) -> TypedSQL<String> {
    TypedSQL(raw: "json_array(\(values.map(\.typedSQLText).joined(separator: ", ")))")
}

// MARK: - Dates, stored as 'YYYY-MM-DD HH:MM:SS.SSS' text

extension TypedSQL where Value: SQLDateValue {
    /// `datetime_subsec(x, modifiers...)`: the date moved by SQLite
    /// modifiers ('+1 day', 'start of month', ...), to the millisecond.
    ///
    /// ```swift
    /// let nextDay: TypedSQL<Date?> = new.dueDate.modified("+1 day")
    /// ```
    public func modified(_ modifiers: String...) -> TypedSQL {
        TypedSQL(raw: "datetime_subsec(\(([sql] + modifiers.map(SQLQuoting.string)).joined(separator: ", ")))")
    }

    /// `unixepoch_subsec(x)`: seconds since 1970, with milliseconds.
    ///
    /// ```swift
    /// let seconds: TypedSQL<Double?> = new.dueDate.unixepoch()
    /// ```
    public func unixepoch() -> TypedSQL<Double?> { call("unixepoch_subsec", self) }

    /// `julianday(x)`: days, with fraction, since noon in Greenwich on
    /// November 24, 4714 B.C.; differences give durations.
    public func julianday() -> TypedSQL<Double?> { call("julianday", self) }

    /// `strftime(format, x)`.
    ///
    /// ```swift
    /// let month: TypedSQL<String?> = new.dueDate.strftime("%Y-%m")
    /// ```
    public func strftime(_ format: String) -> TypedSQL<String?> { call("strftime", TypedSQL<String>.value(format), self) }
}

// MARK: - Our UUID functions

/// UUID values, optional or not.
extension TypedSQL where Value: SQLUUIDValue {
    /// `uuid_version(x)`: 4 for `uuid()`, 7 for `uuidv7()`, 8 for migrated
    /// keys; NULL for something that is no UUID.
    ///
    /// ```swift
    /// let isTimeOrdered: TypedSQL<Bool> = new.id.uuidVersion() == 7
    /// ```
    public func uuidVersion() -> TypedSQL<Int?> { call("uuid_version", self) }
    /// `uuidv7_datetime(x)`: when a v7 UUID was minted; NULL for other versions.
    public func uuidv7Date() -> TypedSQL<Date?> { call("uuidv7_datetime", self) }
    /// `uuid_blob(x)`: the 16 bytes.
    public func uuidBlob() -> TypedSQL<Data?> { call("uuid_blob", self) }
    /// `uuid_str(x)`: canonical lowercase text.
    public func uuidText() -> TypedSQL<String?> { call("uuid_str", self) }
}

/// `function(arguments...)`.
func call<Result>(_ function: String, _ arguments: any TypedSQLExpression...) -> TypedSQL<Result> {
    TypedSQL(raw: "\(function)(\(arguments.map(\.typedSQLText).joined(separator: ", ")))")
}
