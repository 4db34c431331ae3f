internal import SQLiteTriggersCSQLite
internal import CSQLiteTriggers
import Foundation

/// A Swift type that an argument of `swift_callback(...)` decodes to.
///
/// Built in: `Int`, `Int64`, `Double`, `Bool`, `String`, `Data`, `UUID`
/// (lowercase or any-case text, or a 16-byte blob), `Date` (text as
/// `datetime_subsec()` writes it, or Unix seconds as a number), and
/// optionals of these, which decode NULL as nil.
///
/// ```swift
/// extension Priority: CallbackArgument {
///     static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> Priority {
///         Priority(rawValue: try Int.decode(from: arguments, at: index)) ?? .normal
///     }
/// }
/// ```
public protocol CallbackArgument {
    static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> Self
}

extension CallbackArguments {
    /// The mismatch error for argument `index`, which should be `expected`.
    public func mismatch(at index: Int, expected: String) -> CallbackDecodingError {
        CallbackDecodingError(name: name, index: index, expected: expected, found: value(at: index).description)
    }

    func type(at index: Int) -> Int32 { sqlitetriggers_event_type(event, Int32(index)) }
    func int64(at index: Int) -> Int64 { sqlitetriggers_event_int64(event, Int32(index)) }
    func double(at index: Int) -> Double { sqlitetriggers_event_double(event, Int32(index)) }
}

extension Int64: CallbackArgument {
    public static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> Int64 {
        switch arguments.type(at: index) {
        case SQLITE_INTEGER:
            return arguments.int64(at: index)
        case SQLITE_FLOAT:
            let real = arguments.double(at: index)
            if let exact = Int64(exactly: real) { return exact }
        default:
            break
        }
        throw arguments.mismatch(at: index, expected: "an integer")
    }
}

extension Int: CallbackArgument {
    public static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> Int {
        let value = try Int64.decode(from: arguments, at: index)
        guard let int = Int(exactly: value) else { throw arguments.mismatch(at: index, expected: "an Int") }
        return int
    }
}

extension Double: CallbackArgument {
    public static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> Double {
        switch arguments.type(at: index) {
        case SQLITE_INTEGER, SQLITE_FLOAT: return arguments.double(at: index)
        default: throw arguments.mismatch(at: index, expected: "a number")
        }
    }
}

extension Bool: CallbackArgument {
    public static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> Bool {
        guard arguments.type(at: index) == SQLITE_INTEGER else {
            throw arguments.mismatch(at: index, expected: "a boolean integer")
        }
        return arguments.int64(at: index) != 0
    }
}

extension String: CallbackArgument {
    public static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> String {
        guard arguments.type(at: index) == SQLITE_TEXT else { throw arguments.mismatch(at: index, expected: "text") }
        return arguments.text(at: Int32(index))
    }
}

extension Data: CallbackArgument {
    public static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> Data {
        switch arguments.value(at: index) {
        case .blob(let data): return data
        case .text(let text): return Data(text.utf8)
        default: throw arguments.mismatch(at: index, expected: "a blob")
        }
    }
}

extension UUID: CallbackArgument {
    public static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> UUID {
        switch arguments.value(at: index) {
        case .text(let text):
            if text.utf8.count == 36, let uuid = UUID(uuidString: text) { return uuid }
        case .blob(let data) where data.count == 16:
            return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        default:
            break
        }
        throw arguments.mismatch(at: index, expected: "a UUID")
    }
}

extension Date: CallbackArgument {
    public static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> Date {
        switch arguments.type(at: index) {
        case SQLITE_INTEGER, SQLITE_FLOAT:
            return Date(timeIntervalSince1970: arguments.double(at: index))
        case SQLITE_TEXT:
            if let date = StorageConventions.date(fromUTF8: arguments.utf8(at: index)) { return date }
        default:
            break
        }
        throw arguments.mismatch(at: index, expected: "a date")
    }
}

extension Optional: CallbackArgument where Wrapped: CallbackArgument {
    public static func decode(from arguments: CallbackArguments, at index: Int) throws(CallbackDecodingError) -> Wrapped? {
        if arguments.type(at: index) == SQLITE_NULL { return nil }
        return try Wrapped.decode(from: arguments, at: index)
    }
}
