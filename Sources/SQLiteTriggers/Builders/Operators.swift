import Foundation

// Comparisons: typed SQL with typed SQL of the same value type (optional or
// not on either side), or with a Swift value inlined as a literal. Literals
// written in place (`new.status == 1`) become typed SQL by themselves.

public func == <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary("=", rhs) }
public func == <V>(lhs: TypedSQL<V?>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary("=", rhs) }
public func == <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V?>) -> TypedSQL<Bool> { lhs.binary("=", rhs) }
public func == <V: SQLLiteral>(lhs: TypedSQL<V>, rhs: V) -> TypedSQL<Bool> { lhs.binary("=", TypedSQL<V>.value(rhs)) }
public func != <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary("<>", rhs) }
public func != <V>(lhs: TypedSQL<V?>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary("<>", rhs) }
public func != <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V?>) -> TypedSQL<Bool> { lhs.binary("<>", rhs) }
public func != <V: SQLLiteral>(lhs: TypedSQL<V>, rhs: V) -> TypedSQL<Bool> { lhs.binary("<>", TypedSQL<V>.value(rhs)) }
public func < <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary("<", rhs) }
public func < <V>(lhs: TypedSQL<V?>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary("<", rhs) }
public func < <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V?>) -> TypedSQL<Bool> { lhs.binary("<", rhs) }
public func < <V: SQLLiteral>(lhs: TypedSQL<V>, rhs: V) -> TypedSQL<Bool> { lhs.binary("<", TypedSQL<V>.value(rhs)) }
public func <= <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary("<=", rhs) }
public func <= <V>(lhs: TypedSQL<V?>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary("<=", rhs) }
public func <= <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V?>) -> TypedSQL<Bool> { lhs.binary("<=", rhs) }
public func <= <V: SQLLiteral>(lhs: TypedSQL<V>, rhs: V) -> TypedSQL<Bool> { lhs.binary("<=", TypedSQL<V>.value(rhs)) }
public func > <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary(">", rhs) }
public func > <V>(lhs: TypedSQL<V?>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary(">", rhs) }
public func > <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V?>) -> TypedSQL<Bool> { lhs.binary(">", rhs) }
public func > <V: SQLLiteral>(lhs: TypedSQL<V>, rhs: V) -> TypedSQL<Bool> { lhs.binary(">", TypedSQL<V>.value(rhs)) }
public func >= <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary(">=", rhs) }
public func >= <V>(lhs: TypedSQL<V?>, rhs: TypedSQL<V>) -> TypedSQL<Bool> { lhs.binary(">=", rhs) }
public func >= <V>(lhs: TypedSQL<V>, rhs: TypedSQL<V?>) -> TypedSQL<Bool> { lhs.binary(">=", rhs) }
public func >= <V: SQLLiteral>(lhs: TypedSQL<V>, rhs: V) -> TypedSQL<Bool> { lhs.binary(">=", TypedSQL<V>.value(rhs)) }

// Logic.
public func && (lhs: TypedSQL<Bool>, rhs: TypedSQL<Bool>) -> TypedSQL<Bool> { lhs.binary("AND", rhs) }
public func || (lhs: TypedSQL<Bool>, rhs: TypedSQL<Bool>) -> TypedSQL<Bool> { lhs.binary("OR", rhs) }
public prefix func ! (operand: TypedSQL<Bool>) -> TypedSQL<Bool> { TypedSQL(raw: "NOT \(operand.operand)", isCompound: true) }

/// Numbers SQL can do arithmetic on.
public protocol SQLNumericValue {}
extension Int: SQLNumericValue {}
extension Int64: SQLNumericValue {}
extension Double: SQLNumericValue {}
extension Optional: SQLNumericValue where Wrapped: SQLNumericValue {}

// Arithmetic.
public func + <V: SQLNumericValue>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<V> { lhs.binary("+", rhs) }
public func - <V: SQLNumericValue>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<V> { lhs.binary("-", rhs) }
public func * <V: SQLNumericValue>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<V> { lhs.binary("*", rhs) }
public func / <V: SQLNumericValue>(lhs: TypedSQL<V>, rhs: TypedSQL<V>) -> TypedSQL<V> { lhs.binary("/", rhs) }
public prefix func - <V: SQLNumericValue>(operand: TypedSQL<V>) -> TypedSQL<V> { TypedSQL(raw: "-\(operand.operand)", isCompound: true) }

/// Text concatenation, SQL's `||`.
public func + (lhs: TypedSQL<String>, rhs: TypedSQL<String>) -> TypedSQL<String> { lhs.binary("||", rhs) }

extension TypedSQL {
    /// `IS NULL`.
    public var isNull: TypedSQL<Bool> { TypedSQL<Bool>(raw: "\(operand) IS NULL", isCompound: true) }
    /// `IS NOT NULL`.
    public var isNotNull: TypedSQL<Bool> { TypedSQL<Bool>(raw: "\(operand) IS NOT NULL", isCompound: true) }
    /// `IS`: equality where NULL equals NULL.
    public func `is`(_ other: TypedSQL<Value>) -> TypedSQL<Bool> { binary("IS", other) }
    /// `IS NOT`: inequality where NULL equals NULL.
    public func isNot(_ other: TypedSQL<Value>) -> TypedSQL<Bool> { binary("IS NOT", other) }
}

extension TypedSQL where Value: SQLLiteral {
    /// `IN (v1, v2, ...)`.
    ///
    /// ```swift
    /// let urgent: TypedSQL<Bool> = new.priority.in([1, 2])
    /// ```
    public func `in`(_ values: [Value]) -> TypedSQL<Bool> {
        TypedSQL<Bool>(raw: "\(operand) IN (\(values.map(\.sqlLiteral).joined(separator: ", ")))", isCompound: true)
    }
}

extension TypedSQL where Value: SQLStringLiteralValue {
    /// `LIKE pattern`.
    ///
    /// ```swift
    /// let aboutMilk: TypedSQL<Bool> = new.title.like("%milk%")
    /// ```
    public func like(_ pattern: TypedSQL<String>) -> TypedSQL<Bool> { binary("LIKE", pattern) }
}

/// `coalesce(value, fallback)`: the first that is not NULL.
///
/// ```swift
/// let priority: TypedSQL<Int> = coalesce(new.priority, 0)
/// ```
public func coalesce<V>(_ value: TypedSQL<V?>, _ fallback: TypedSQL<V>) -> TypedSQL<V> {
    TypedSQL(raw: "coalesce(\(value.sql), \(fallback.sql))")
}
