import Foundation

/// How values and names are written into SQL. Trigger bodies cannot bind
/// variables, so every value is inlined, and quoted so that no content can
/// change the statement's meaning.
///
/// ```swift
/// SQLQuoting.identifier("we\"ird")   // "we""ird"
/// SQLQuoting.string("it's")          // 'it''s'
/// ```
public enum SQLQuoting {
    /// A name in double quotes, inner quotes doubled. A NUL cannot appear
    /// in an SQLite name and stops the program with a clear message.
    public static func identifier(_ name: String) -> String {
        precondition(!name.utf8.contains(0), "SQLiteTriggers: an SQL name cannot contain NUL: \(name.debugDescription)")
        return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A text literal in single quotes, inner quotes doubled. Text with NUL
    /// characters, which SQL text literals cannot hold, is written as a
    /// blob cast to text.
    public static func string(_ text: String) -> String {
        if text.utf8.contains(0) { return "CAST(\(blob(Data(text.utf8))) AS TEXT)" }
        return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// `X'...'` with uppercase hex digits.
    public static func blob(_ data: Data) -> String {
        "X'" + data.map { String(format: "%02X", $0) }.joined() + "'"
    }

    /// A real number SQLite reads back as the same Double.
    public static func real(_ value: Double) -> String {
        if value.isNaN { return "NULL" }
        if value.isInfinite { return value > 0 ? "9e999" : "-9e999" }
        let text = "\(value)"
        return text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) ? text : text + ".0"
    }
}
