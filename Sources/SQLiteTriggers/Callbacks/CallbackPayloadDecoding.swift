import Foundation

extension CallbackArguments {
    /// Decodes the arguments into a `Decodable` type, positionally: the
    /// first argument feeds the first property the type decodes (for a
    /// synthesized `Decodable`, the first stored property), and so on. The
    /// number of arguments must match.
    ///
    /// ```swift
    /// struct ReminderCompleted: Decodable { var id: UUID; var title: String }
    /// let event = try arguments.decode(as: ReminderCompleted.self)
    /// ```
    public func decode<T: Decodable>(as type: T.Type) throws -> T {
        let decoder = PositionalDecoder(arguments: self)
        let value = try T(from: decoder)
        guard decoder.cursor.next == count else {
            throw CallbackDecodingError(name: name, index: nil,
                                        expected: "\(decoder.cursor.next) arguments for \(T.self)",
                                        found: "\(count)")
        }
        return value
    }
}

/// Hands out the arguments in order to whichever container asks next.
private final class ArgumentCursor {
    var next = 0
}

private struct PositionalDecoder: Decoder {
    let arguments: CallbackArguments
    let cursor = ArgumentCursor()
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(PositionalKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw unsupported("an array payload")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw unsupported("a single-value payload")
    }

    func unsupported(_ what: String) -> CallbackDecodingError {
        CallbackDecodingError(name: arguments.name, index: cursor.next,
                              expected: "a flat struct of argument types", found: what)
    }

    /// The next argument as T: our argument types, or a nested single value.
    func decodeNext<T: Decodable>(_ type: T.Type) throws -> T {
        let index = cursor.next
        guard index < arguments.count else {
            throw CallbackDecodingError(name: arguments.name, index: index, expected: "\(T.self)", found: "nothing")
        }
        guard let argumentType = T.self as? any CallbackArgument.Type else {
            throw unsupported("a property of type \(T.self)")
        }
        let value = try argumentType.decode(from: arguments, at: index)
        cursor.next += 1
        return value as! T
    }
}

private struct PositionalKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: PositionalDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { decoder.cursor.next < decoder.arguments.count }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard case .null = decoder.arguments.value(at: decoder.cursor.next) else { return false }
        decoder.cursor.next += 1
        return true
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.decodeNext(type)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else {
            throw CallbackDecodingError(name: decoder.arguments.name, index: decoder.cursor.next,
                                        expected: "\(T.self)?", found: "nothing")
        }
        if try decodeNil(forKey: key) { return nil }
        return try decoder.decodeNext(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw decoder.unsupported("a nested struct")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw decoder.unsupported("a nested array")
    }

    func superDecoder() throws -> any Decoder { throw decoder.unsupported("a superclass") }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw decoder.unsupported("a superclass") }
}
