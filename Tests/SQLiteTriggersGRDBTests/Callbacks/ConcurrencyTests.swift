import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

@Suite struct ConcurrencyTests {
    /// Writes from several tasks to a pool while readers run: every event is
    /// delivered once, numbered without gaps, and the uuidv7 ids it carries
    /// are unique. Run under `swift test --sanitize=thread` for data races.
    @Test func poolWritersAndReadersTogether() async throws {
        let (writer, cleanup) = try makeWriter(.pool)
        defer { cleanup() }
        let pool = try #require(writer as? DatabasePool)
        let sequences = Locked<[Int64]>([])
        let ids = Locked<Set<UUID>>([])
        let observation = try await pool.write { db in
            try db.execute(sql: """
                CREATE TABLE item(id TEXT PRIMARY KEY DEFAULT (uuidv7()), n INTEGER);
                CREATE TEMP TRIGGER item_ai AFTER INSERT ON item
                  BEGIN SELECT swift_callback('added', new.id); END;
                """)
            return try db.observeCallbacks(named: "added", delivery: .afterCommit) { arguments in
                let id = try arguments.decode(UUID.self, at: 0)
                sequences.mutate { $0.append(arguments.sequence) }
                ids.mutate { _ = $0.insert(id) }
                return nil
            }
        }
        defer { observation.cancel() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for n in 0..<25 {
                        try await pool.write { db in
                            try db.execute(sql: "INSERT INTO item(n) VALUES (?)", arguments: [task * 100 + n])
                        }
                    }
                }
                group.addTask {
                    for _ in 0..<25 {
                        _ = try await pool.read { db in
                            try String.fetchAll(db, sql: "SELECT uuid() FROM item")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(sequences.value == Array(1...100))
        #expect(ids.value.count == 100)
    }
}
