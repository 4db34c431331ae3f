import Foundation

/// One argument of a `swift_callback(...)` call, as SQLite typed it.
///
/// ```swift
/// let value: CallbackValue = .text("Buy milk")
/// ```
public enum CallbackValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): "integer \(value)"
        case .real(let value): "real \(value)"
        case .text(let value): "text '\(value)'"
        case .blob(let value): "blob of \(value.count) bytes"
        }
    }
}

/// A Swift value that an immediate observer can return to SQL as the result
/// of `swift_callback(...)`. UUIDs and dates follow ``StorageConventions``.
///
/// ```swift
/// let naming = try db.observeCallback("nextTitle", delivery: .immediate) { (id: Int) in "Reminder \(id)" }
/// ```
public protocol CallbackValueConvertible {
    var callbackValue: CallbackValue { get }
}

extension CallbackValue: CallbackValueConvertible {
    public var callbackValue: CallbackValue { self }
}
extension Int: CallbackValueConvertible {
    public var callbackValue: CallbackValue { .integer(Int64(self)) }
}
extension Int64: CallbackValueConvertible {
    public var callbackValue: CallbackValue { .integer(self) }
}
extension Bool: CallbackValueConvertible {
    public var callbackValue: CallbackValue { .integer(self ? 1 : 0) }
}
extension Double: CallbackValueConvertible {
    public var callbackValue: CallbackValue { .real(self) }
}
extension String: CallbackValueConvertible {
    public var callbackValue: CallbackValue { .text(self) }
}
extension Data: CallbackValueConvertible {
    public var callbackValue: CallbackValue { .blob(self) }
}
extension UUID: CallbackValueConvertible {
    public var callbackValue: CallbackValue { .text(StorageConventions.text(for: self)) }
}
extension Date: CallbackValueConvertible {
    public var callbackValue: CallbackValue { .text(StorageConventions.text(for: self)) }
}
extension Optional: CallbackValueConvertible where Wrapped: CallbackValueConvertible {
    public var callbackValue: CallbackValue { self?.callbackValue ?? .null }
}
