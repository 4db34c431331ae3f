import Foundation

/// One token of SQLite SQL. Trivia (spaces and comments) are tokens too, so
/// the tokens always spell the original text exactly.
package struct SQLToken {
    package enum Kind { case word, quotedName, string, number, punctuation, trivia }
    package let kind: Kind
    package let text: String

    /// A name's value: quotes removed and doubled quotes undone. SQLite
    /// accepts a 'string' where it expects a name, so strings unquote too.
    package var name: String {
        guard kind == .quotedName || kind == .string, let first = text.first else { return text }
        let close: Character = first == "[" ? "]" : first
        var inner = String(text.dropFirst().dropLast())
        if first != "[" { inner = inner.replacingOccurrences(of: "\(close)\(close)", with: "\(close)") }
        return inner
    }

    package func isWord(_ keyword: String) -> Bool { kind == .word && text.uppercased() == keyword }
    package var isName: Bool { kind == .word || kind == .quotedName || kind == .string }
}

/// Splits SQL into tokens, keeping every byte.
package func tokenizeSQL(_ sql: String) -> [SQLToken] {
    let scalars = Array(sql.unicodeScalars)
    var tokens: [SQLToken] = []
    var index = 0
    func emit(_ kind: SQLToken.Kind, from start: Int) {
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars[start..<index])
        tokens.append(SQLToken(kind: kind, text: String(text)))
    }
    func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar == "$" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar.value > 127
    }
    while index < scalars.count {
        let start = index
        let scalar = scalars[index]
        let next = index + 1 < scalars.count ? scalars[index + 1] : nil
        if scalar.properties.isWhitespace {
            while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
            emit(.trivia, from: start)
        } else if scalar == "-", next == "-" {
            while index < scalars.count, scalars[index] != "\n" { index += 1 }
            emit(.trivia, from: start)
        } else if scalar == "/", next == "*" {
            index += 2
            while index < scalars.count, !(scalars[index] == "*" && index + 1 < scalars.count && scalars[index + 1] == "/") { index += 1 }
            index = min(index + 2, scalars.count)
            emit(.trivia, from: start)
        } else if scalar == "'" || scalar == "\"" || scalar == "`" || scalar == "[" {
            let close: Unicode.Scalar = scalar == "[" ? "]" : scalar
            index += 1
            while index < scalars.count {
                if scalars[index] == close {
                    if close != "]", index + 1 < scalars.count, scalars[index + 1] == close { index += 2; continue }
                    index += 1
                    break
                }
                index += 1
            }
            emit(scalar == "'" ? .string : .quotedName, from: start)
        } else if ("0"..."9").contains(scalar) || (scalar == "." && next.map { ("0"..."9").contains($0) } == true) {
            while index < scalars.count, isWordScalar(scalars[index]) || scalars[index] == "." { index += 1 }
            emit(.number, from: start)
        } else if isWordScalar(scalar) {
            while index < scalars.count, isWordScalar(scalars[index]) { index += 1 }
            emit(.word, from: start)
        } else {
            index += 1
            emit(.punctuation, from: start)
        }
    }
    return tokens
}

/// Whether SQLite takes two names for the same: it folds ASCII letters
/// only, so "Ä" and "ä" name two tables where `lowercased()` sees one.
package func sqliteNamesEqual(_ a: String, _ b: String) -> Bool {
    sqliteFolded(a) == sqliteFolded(b)
}

extension Sequence<String> {
    /// Whether one of these names is `name` to SQLite.
    package func containsName(_ name: String) -> Bool { contains { sqliteNamesEqual($0, name) } }
    /// The first of these names that is `name` to SQLite.
    package func firstName(matching name: String) -> String? { first { sqliteNamesEqual($0, name) } }
}

/// A name with its ASCII letters lowercased, as SQLite compares names.
package func sqliteFolded(_ name: String) -> String {
    String(decoding: name.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
}
