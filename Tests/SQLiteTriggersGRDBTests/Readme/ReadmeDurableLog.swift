import Foundation
import GRDB
import SQLiteTriggersGRDB

// The README's durable-log example, verbatim between the BEGIN and END
// markers: ReadmeDurableLogTests checks the README shows exactly this code,
// and runs it.

enum ReadmeDurableLog {
    struct Reminder: Codable, FetchableRecord, PersistableRecord, Sendable {
        static let databaseTableName = "reminders"
        var id: UUID
        var title: String
    }

    /// Runs until its task is cancelled; `upload` stands for the server.
    static func run(_ dbPool: DatabasePool,
                    upload: @Sendable ([DurableChange<Reminder>]) async throws -> Void) async throws {
        // BEGIN README durable log
        var migrator = DatabaseMigrator()
        migrator.registerMigration("durable log") { db in
            try db.installDurableLog(for: ["reminders"])      // plain SQL triggers, in the file
        }
        try migrator.migrate(dbPool)

        // Exactly once: what the closure writes and the consumer's position commit together.
        let search = try dbPool.observeDurableChanges(to: Reminder.self, consumer: "search", onError: { error in
            print("search index stopped:", error)     // fell behind, or the log no longer matches its table
        }) { db, batch in
            for change in batch.changes {
                // change.key is the key as the table stores it (a UUID as GRDB's 16 bytes, or text): use it on both sides.
                try db.execute(sql: "DELETE FROM searchIndex WHERE id = ?", arguments: StatementArguments(change.key))
                if let reminder = change.record {
                    try db.execute(sql: "INSERT INTO searchIndex(id, title) VALUES (?, ?)",
                                   arguments: StatementArguments(change.key + [reminder.title.databaseValue]))
                }
            }
        }

        // At least once: a batch is acknowledged when the loop asks for the next one.
        for try await batch in dbPool.durableChanges(to: Reminder.self, consumer: "upload") {
            try await upload(batch.changes)
        }
        // END README durable log
        search.cancel()
    }
}
