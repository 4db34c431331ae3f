internal import SQLiteTriggersCSQLite
internal import CSQLiteTriggers
import Foundation

/// The name and arguments of one `swift_callback(name, ...)` event, read in
/// place from SQLite. Valid only while the observer runs: decode what you
/// keep, or take ``record``.
///
/// ```swift
/// let id = try arguments.decode(UUID.self, at: 0)
/// ```
public struct CallbackArguments {
    let event: OpaquePointer

    init(event: OpaquePointer) { self.event = event }

    /// The callback's name, the first argument of `swift_callback`.
    public var name: String { String(cString: sqlitetriggers_event_name(event)) }

    /// 0 for an immediate event; 1, 2, ... per connection once committed.
    public var sequence: Int64 { sqlitetriggers_event_seq(event) }

    /// How many arguments follow the name.
    public var count: Int { Int(sqlitetriggers_event_argc(event)) }

    /// The argument at `index` (0 is the first after the name); `.null` past the end.
    public func value(at index: Int) -> CallbackValue {
        let i = Int32(index)
        switch sqlitetriggers_event_type(event, i) {
        case SQLITE_INTEGER: return .integer(sqlitetriggers_event_int64(event, i))
        case SQLITE_FLOAT: return .real(sqlitetriggers_event_double(event, i))
        case SQLITE_TEXT: return .text(text(at: i))
        case SQLITE_BLOB:
            let count = Int(sqlitetriggers_event_bytes(event, i))
            guard count > 0, let bytes = sqlitetriggers_event_blob(event, i) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default: return .null
        }
    }

    /// A copy that outlives the observer call.
    public var record: CallbackRecord {
        CallbackRecord(name: name, sequence: sequence, values: (0..<count).map { value(at: $0) })
    }

    /// Decodes the argument at `index` as `type`.
    ///
    /// ```swift
    /// let title = try arguments.decode(String.self, at: 1)
    /// ```
    public func decode<T: CallbackArgument>(_ type: T.Type, at index: Int) throws(CallbackDecodingError) -> T {
        guard index < count else {
            throw CallbackDecodingError(name: name, index: index, expected: "\(T.self)", found: "nothing")
        }
        return try T.decode(from: self, at: index)
    }

    /// Decodes every argument, in order, checking their number.
    ///
    /// ```swift
    /// let (id, title) = try arguments.decode(UUID.self, String.self)
    /// ```
    /// Inlinable, so that an app's observer decodes its own types without
    /// generic dispatch.
    @inlinable
    public func decode<each A: CallbackArgument>(_ types: repeat (each A).Type) throws(CallbackDecodingError) -> (repeat each A) {
        var expectedCount = 0
        for _ in repeat each types { expectedCount += 1 }
        guard expectedCount == count else {
            // Type names only on this path: building them costs more than decoding.
            var names: [String] = []
            for type in repeat each types { names.append("\(type)") }
            throw CallbackDecodingError(
                name: name, index: nil,
                expected: "\(names.count) argument\(names.count == 1 ? "" : "s") (\(names.joined(separator: ", ")))",
                found: "\(count)")
        }
        // The position goes inout: captured by a local function, it would
        // be boxed and checked for exclusivity at run time (about 90
        // instructions an argument).
        var index = 0
        return (repeat try decodeNext(each types, at: &index))
    }

    @inlinable
    func decodeNext<T: CallbackArgument>(_ type: T.Type, at index: inout Int) throws(CallbackDecodingError) -> T {
        defer { index += 1 }
        return try T.decode(from: self, at: index)
    }

    /// The UTF-8 bytes of a TEXT argument, in place; empty for other types.
    func utf8(at index: Int) -> UnsafeBufferPointer<UInt8> {
        guard let text = sqlitetriggers_event_text(event, Int32(index)) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: text, count: Int(sqlitetriggers_event_bytes(event, Int32(index))))
    }

    func text(at index: Int32) -> String {
        guard let text = sqlitetriggers_event_text(event, index) else { return "" }
        return String(cString: text)
    }
}

/// A callback event copied out of SQLite: what ``CallbackArguments/record``
/// returns and what the untyped async sequence yields.
///
/// ```swift
/// for await record in stream { print(record.sequence, record.name, record.values) }
/// ```
public struct CallbackRecord: Sendable, Hashable {
    public var name: String
    public var sequence: Int64
    public var values: [CallbackValue]

    public init(name: String, sequence: Int64, values: [CallbackValue]) {
        self.name = name
        self.sequence = sequence
        self.values = values
    }
}

/// Why an event's arguments do not fit the Swift types an observer asked for.
public struct CallbackDecodingError: Error, Equatable, CustomStringConvertible {
    /// The callback's name.
    public var name: String
    /// The argument's position after the name, or nil when their number is wrong.
    public var index: Int?
    public var expected: String
    public var found: String

    public init(name: String, index: Int?, expected: String, found: String) {
        self.name = name
        self.index = index
        self.expected = expected
        self.found = found
    }

    public var description: String {
        if let index {
            return "swift_callback '\(name)': argument \(index + 1) should be \(expected), found \(found)"
        }
        return "swift_callback '\(name)': expected \(expected), found \(found)"
    }
}
