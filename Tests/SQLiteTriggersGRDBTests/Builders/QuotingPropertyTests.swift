import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// A table whose name and column names change on every iteration: the
/// description reads them from here.
enum Fuzzed: TableDescription {
    nonisolated(unsafe) static var names = (table: "t", key: "id", text: "text", data: "data")
    static var tableName: String { names.table }
    enum TriggerColumns {
        static var key: ColumnDescription<Int64> { ColumnDescription(Fuzzed.names.key, primaryKey: true) }
        static var text: ColumnDescription<String> { ColumnDescription(Fuzzed.names.text) }
        static var data: ColumnDescription<Data> { ColumnDescription(Fuzzed.names.data) }
    }
    static var allColumns: [any AnyColumnDescription] { [TriggerColumns.key, TriggerColumns.text, TriggerColumns.data] }
}

@Suite(.serialized) struct QuotingPropertyTests {
    static let pieces = ["\"", "'", "''", "\"\"", "`", "[", "]", ";", "--", "/*", "*/", " ", "\n", "\t",
                         "select", "SELECT", "drop", "table", "end", "BEGIN", "where", "rowid", "é", "日本",
                         "🙂", "\u{7}", "x", "y", "0", "\\", "%", "_", "?", ":a", "$a", "@a"]

    static func randomText(_ generator: inout some RandomNumberGenerator, allowEmpty: Bool = true) -> String {
        let count = Int.random(in: (allowEmpty ? 0 : 1)...6, using: &generator)
        return (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
    }

    /// Distinct, non-empty names that SQLite does not reserve for itself.
    static func randomNames(_ generator: inout some RandomNumberGenerator) -> (String, String, String, String) {
        var names: Set<String> = []
        while names.count < 4 {
            let name = randomText(&generator, allowEmpty: false)
            if !name.lowercased().hasPrefix("sqlite_"), name.lowercased() != "rowid" { names.insert(name.lowercased()) }
        }
        let list = Array(names)
        return (list[0], list[1], list[2], list[3])
    }

    /// Fresh random names for `Fuzzed`, and a random text (sometimes with a
    /// NUL) and blob to write through a trigger.
    static func randomCase(_ generator: inout some RandomNumberGenerator) -> (value: String, bytes: Data) {
        Fuzzed.names = randomNames(&generator)
        let value = randomText(&generator) + (Bool.random(using: &generator) ? "\u{0}tail" : "")
        let bytes = Data((0..<Int.random(in: 0...8, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return (value, bytes)
    }

    /// Creates `Fuzzed`'s table under its current names, installs
    /// `trigger`, and inserts the row with key 1 that fires it.
    static func fire(_ trigger: TempTrigger, in db: Database) throws {
        let (table, key, text, data) = Fuzzed.names
        try db.execute(sql: """
            CREATE TABLE \(SQLQuoting.identifier(table)) (
              \(SQLQuoting.identifier(key)) INTEGER PRIMARY KEY,
              \(SQLQuoting.identifier(text)) TEXT,
              \(SQLQuoting.identifier(data)) BLOB)
            """)
        try trigger.execute(db)
        try db.execute(sql: "INSERT INTO \(SQLQuoting.identifier(table)) (\(SQLQuoting.identifier(key))) VALUES (1)")
    }

    @Test func anyNamesAndValuesRoundTripThroughATrigger() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let (value, bytes) = Self.randomCase(&generator)
            let (table, _, text, data) = Fuzzed.names
            let trigger = Fuzzed.createTempTrigger(after: .insert(when: { new in new.key == 1 }) { new in
                Fuzzed.insert { $0.key = new.key + 1; $0.text = .value(value); $0.data = .value(bytes) }
                Fuzzed.update { $0.text = $0.text + "!" }.where { $0.key == 2 && $0.text == .value(value) }
            })
            let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
            let row = try dbQueue.write { db in
                try Self.fire(trigger, in: db)
                // Bytes, not String: GRDB reads TEXT up to its first NUL.
                return try Row.fetchOne(db, sql: """
                    SELECT CAST(\(SQLQuoting.identifier(text)) AS BLOB) AS text, \(SQLQuoting.identifier(data)) AS data
                    FROM \(SQLQuoting.identifier(table)) WHERE rowid = 2
                    """)
            }
            let context = "table \(table.debugDescription), value \(value.debugDescription), trigger:\n\(trigger.sql)"
            let stored = try #require(row, Comment(rawValue: context))
            #expect(stored["text"] as Data? == Data((value + "!").utf8), Comment(rawValue: context))
            #expect((stored["data"] as Data?) ?? Data() == bytes, Comment(rawValue: context))
        }
    }

    /// The newer constructs quote too: CASE and upsert values, typed raw
    /// SQL's names and literals, JSON keys.
    @Test func newerConstructsQuoteAnyNamesAndValues() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let (value, bytes) = Self.randomCase(&generator)
            let (table, _, text, data) = Fuzzed.names
            let trigger = Fuzzed.createTempTrigger(after: .insert(when: { new in new.key == 1 }) { new in
                Fuzzed.insert { $0.key = 2; $0.text = SQLCase(new.key).when(1, then: value).else("") }
                    .onConflict(\.key) { row, excluded in row.text = excluded.text }
                TriggerStatement(sql: "UPDATE \(Fuzzed.self) SET \(Fuzzed.TriggerColumns.data) = \(bytes) WHERE \(Fuzzed.TriggerColumns.key) = \(2)")
                Fuzzed.insert { $0.key = 3; $0.text = jsonObject([value: value]) }
            })
            let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
            let (row, pair) = try dbQueue.write { db in
                try Self.fire(trigger, in: db)
                let row = try Row.fetchOne(db, sql: """
                    SELECT CAST(\(SQLQuoting.identifier(text)) AS BLOB) AS text, \(SQLQuoting.identifier(data)) AS data
                    FROM \(SQLQuoting.identifier(table)) WHERE rowid = 2
                    """)
                let pair = try Row.fetchOne(db, sql: """
                    SELECT CAST(json_each.key AS BLOB) AS key, CAST(json_each.value AS BLOB) AS value
                    FROM \(SQLQuoting.identifier(table)), json_each(\(SQLQuoting.identifier(text))) WHERE \(SQLQuoting.identifier(table)).rowid = 3
                    """)
                return (row, pair)
            }
            let context = "table \(table.debugDescription), value \(value.debugDescription), trigger:\n\(trigger.sql)"
            let stored = try #require(row, Comment(rawValue: context))
            #expect((stored["text"] as Data?) ?? Data() == Data(value.utf8), Comment(rawValue: context))
            #expect((stored["data"] as Data?) ?? Data() == bytes, Comment(rawValue: context))
            // SQLite's JSON functions read text as C strings: up to a NUL.
            let jsonText = Data(value.utf8.prefix { $0 != 0 })
            let json = try #require(pair, Comment(rawValue: context))
            #expect((json["key"] as Data?) ?? Data() == jsonText, Comment(rawValue: context))
            #expect((json["value"] as Data?) ?? Data() == jsonText, Comment(rawValue: context))
        }
    }
}
