import Foundation

/// A fragment of SQL with the Swift type of its value. Columns of `new`,
/// `old` and tables, literals, our functions and operators all build these.
///
/// ```swift
/// let condition: TypedSQL<Bool> = new.status == 1 && old.status != 1
/// print(condition.sql)   // "new"."status" = 1 AND "old"."status" <> 1
/// ```
public struct TypedSQL<Value>: Sendable, CustomStringConvertible {
    /// The SQL text.
    public let sql: String
    /// Whether the text needs parentheses to stand inside a larger expression.
    let isCompound: Bool

    init(raw sql: String, isCompound: Bool = false) {
        self.sql = sql
        self.isCompound = isCompound
    }

    /// The escape hatch: raw SQL that you declare to have type `Value`.
    /// Nothing checks it; prefer typed columns and operators.
    ///
    /// ```swift
    /// let lowered = TypedSQL<String>(unchecked: "lower(\"new\".\"title\")")
    /// ```
    public init(unchecked sql: String) {
        self.init(raw: sql, isCompound: true)
    }

    public var description: String { sql }

    /// The text, parenthesized when it is an operand of a larger expression.
    var operand: String { isCompound ? "(\(sql))" : sql }
}

/// A Swift value that becomes an SQL literal. `Date` is deliberately not
/// one: a date fixed when the trigger was written is the classic bug where
/// "now at fire time" was meant. Use `.now`, or `.frozen(date)` if you do
/// mean a fixed instant.
public protocol SQLLiteral {
    var sqlLiteral: String { get }
}

extension Int: SQLLiteral { public var sqlLiteral: String { String(self) } }
extension Int64: SQLLiteral { public var sqlLiteral: String { String(self) } }
extension Double: SQLLiteral { public var sqlLiteral: String { SQLQuoting.real(self) } }
extension Bool: SQLLiteral { public var sqlLiteral: String { self ? "1" : "0" } }
extension String: SQLLiteral { public var sqlLiteral: String { SQLQuoting.string(self) } }
extension Data: SQLLiteral { public var sqlLiteral: String { SQLQuoting.blob(self) } }
extension UUID: SQLLiteral { public var sqlLiteral: String { SQLQuoting.string(StorageConventions.text(for: self)) } }
extension Optional: SQLLiteral where Wrapped: SQLLiteral {
    public var sqlLiteral: String { self?.sqlLiteral ?? "NULL" }
}

extension TypedSQL {
    /// The same expression typed as its non-optional value, where one is
    /// expected (a typed event's argument, a comparison with a
    /// non-optional column): for a column the schema makes `NOT NULL` while
    /// its Swift type is optional, as GRDB's `id: UUID?` for keys the
    /// database assigns. The SQL does not change: a NULL it holds after all
    /// arrives as NULL, and decoding it as the non-optional type fails,
    /// loudly, in the observer.
    ///
    /// ```swift
    /// @TriggerTable("notes") struct Note { var id: UUID?; var title: String }
    /// @CallbackEvent struct NoteAdded: Sendable { var id: UUID; var title: String }
    /// let added = Note.createTempTrigger(after: .insert { new in
    ///     NoteAdded.callback(id: new.id.unwrapped(), title: new.title)
    /// })
    /// ```
    public func unwrapped<Wrapped>() -> TypedSQL<Wrapped> where Value == Wrapped? {
        TypedSQL<Wrapped>(raw: sql, isCompound: isCompound)
    }
}

extension TypedSQL where Value: SQLLiteral {
    /// A Swift value inlined as a literal.
    ///
    /// ```swift
    /// row.title = .value(defaultTitle)
    /// ```
    public static func value(_ value: Value) -> TypedSQL { TypedSQL(raw: value.sqlLiteral) }
}

// Literals in place of typed SQL: `new.status == 1`, `row.title = "Reminders"`.

/// Value types written with a string literal: String and String?.
public protocol SQLStringLiteralValue {}
extension String: SQLStringLiteralValue {}
extension Optional: SQLStringLiteralValue where Wrapped == String {}

/// Value types written with an integer literal.
public protocol SQLIntegerLiteralValue {}
extension Int: SQLIntegerLiteralValue {}
extension Int64: SQLIntegerLiteralValue {}
extension Double: SQLIntegerLiteralValue {}
extension Optional: SQLIntegerLiteralValue where Wrapped: SQLIntegerLiteralValue {}

/// Value types written with a float literal.
public protocol SQLFloatLiteralValue {}
extension Double: SQLFloatLiteralValue {}
extension Optional: SQLFloatLiteralValue where Wrapped == Double {}

/// Value types written with `true` or `false`.
public protocol SQLBooleanLiteralValue {}
extension Bool: SQLBooleanLiteralValue {}
extension Optional: SQLBooleanLiteralValue where Wrapped == Bool {}

extension TypedSQL: ExpressibleByUnicodeScalarLiteral, ExpressibleByExtendedGraphemeClusterLiteral, ExpressibleByStringLiteral where Value: SQLStringLiteralValue {
    public init(stringLiteral value: String) { self.init(raw: SQLQuoting.string(value)) }
}
extension TypedSQL: ExpressibleByIntegerLiteral where Value: SQLIntegerLiteralValue {
    public init(integerLiteral value: Int64) { self.init(raw: String(value)) }
}
extension TypedSQL: ExpressibleByFloatLiteral where Value: SQLFloatLiteralValue {
    public init(floatLiteral value: Double) { self.init(raw: SQLQuoting.real(value)) }
}
extension TypedSQL: ExpressibleByBooleanLiteral where Value: SQLBooleanLiteralValue {
    public init(booleanLiteral value: Bool) { self.init(raw: value ? "1" : "0") }
}
extension TypedSQL: ExpressibleByNilLiteral where Value: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self.init(raw: "NULL") }
}

extension TypedSQL {
    /// This expression seen as optional, to compare or coalesce it with an
    /// optional one.
    public var optional: TypedSQL<Value?> { TypedSQL<Value?>(raw: sql, isCompound: isCompound) }

    func binary<Result>(_ op: String, _ rhs: TypedSQL<some Any>) -> TypedSQL<Result> {
        TypedSQL<Result>(raw: "\(operand) \(op) \(rhs.operand)", isCompound: true)
    }
}
