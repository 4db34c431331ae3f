import Foundation

/// The one renderer of `CREATE TEMP TRIGGER`: the builders, the change
/// feeds' checks and the rule keeper's blockers all write their triggers
/// through it, one clause a line and the body indented.
package struct TriggerDefinition: Sendable {
    /// Everything after the trigger's name, rendered once: the builders
    /// hash it for the derived name, then write it.
    package let sql: String

    /// `event` is "INSERT", "DELETE", "UPDATE" or "UPDATE OF ..."; `target`
    /// the table or view, quoted (and qualified, for a table); `body` each
    /// statement as its clauses.
    package init(timing: TriggerTiming, event: String, target: String, condition: String?, body: [[String]]) {
        var lines = ["\(timing.rawValue) \(event) ON \(target)", "FOR EACH ROW"]
        if let condition { lines.append("WHEN \(condition)") }
        lines.append("BEGIN")
        for clauses in body { lines.append(clauses.map { "  " + $0 }.joined(separator: "\n") + ";") }
        lines.append("END")
        sql = lines.joined(separator: "\n")
    }

    package func createStatement(named name: String, ifNotExists: Bool) -> String {
        "CREATE TEMP TRIGGER \(ifNotExists ? "IF NOT EXISTS " : "")\(SQLQuoting.identifier(name))\n\(sql)"
    }
}

/// The SQL's tokens without whitespace or comments, one space apart.
package func canonicalTokens(_ sql: String) -> String {
    tokenizeSQL(sql).filter { $0.kind != .trivia }.map(\.text).joined(separator: " ")
}

/// FNV-1a over the UTF-8 text: stable across runs and platforms, unlike
/// Swift's seeded `Hasher`.
package func stableHash(_ text: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash &*= 0x100_0000_01b3
    }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
}
