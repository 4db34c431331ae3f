import Foundation
import GRDB
import SQLiteTriggersGRDB

// The "Syncing with a server" article's code (its section "The outbox", in
// Sources/SQLiteTriggersGRDB/Documentation.docc/SyncingWithAServer.md),
// verbatim between the BEGIN and END markers: ArticleSyncTests checks the
// article shows exactly this code, and runs it against a server in memory.
// The struct gives the code the `dbPool` the article takes for granted.

struct ArticleSync {
    let dbPool: DatabasePool

    // BEGIN article outbox
    // Times are text in datetime_subsec()'s format: compared as text, exactly.
    struct Note: Sendable { var id: String; var title: String; var updatedAt: String }
    struct Tombstone: Sendable { var id: String; var deletedAt: String }
    enum Outgoing: Sendable { case upsert(Note), delete(Tombstone) }
    protocol NotesServer: Sendable {
        func send(_ changes: [Outgoing]) async throws
        func changes(after cursor: Int64) async throws -> (notes: [Note], deleted: [Tombstone], cursor: Int64)
    }

    // A change's row now, or the values its deletion kept.
    let notes = FeedTable("notes") { row in
        Note(id: row["id"], title: row["title"], updatedAt: row["updatedAt"])
    }

    func upload(to server: some NotesServer) async throws {
        for try await batch in dbPool.durableChanges(to: [notes], consumer: "upload", excluding: ["server"]) {
            for transaction in batch.transactions {
                try await server.send(transaction.changes.compactMap { change in
                    if let note = change.record { return .upsert(note) }
                    guard let gone = change.deletedRecord, let deletedAt = change.timeText else { return nil }
                    return .delete(Tombstone(id: gone.id, deletedAt: deletedAt))
                })
                // Confirmed: a crash from here on sends only what follows.
                try await dbPool.write { db in try db.acknowledge(batch, through: transaction) }
            }
        }
    }

    func download(from server: some NotesServer, after cursor: Int64) async throws -> Int64 {
        let (incoming, deleted, next) = try await server.changes(after: cursor)
        try await dbPool.write { db in
            try db.setDurableLogOrigin("server")          // not sent back
            for note in incoming {
                try db.execute(sql: """
                    INSERT INTO notes(id, title, updatedAt) VALUES (?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET title = excluded.title, updatedAt = excluded.updatedAt
                    WHERE excluded.updatedAt > notes.updatedAt
                    """, arguments: [note.id, note.title, note.updatedAt])
            }
            for tombstone in deleted {
                // As the upsert compares: a local edit newer than the deletion
                // (not yet uploaded) stays. A tie goes to the deletion, made
                // after the edit it deleted.
                try db.execute(sql: "DELETE FROM notes WHERE id = ? AND updatedAt <= ?",
                               arguments: [tombstone.id, tombstone.deletedAt])
            }
        }
        return next
    }
    // END article outbox
}
