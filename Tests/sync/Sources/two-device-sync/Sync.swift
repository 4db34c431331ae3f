import Foundation
import GRDB
import SQLiteTriggersGRDB

/// The uploader: the device's outbox (its durable log, every writer's
/// changes but the downloads) sent to the server a transaction at a time,
/// each acknowledged once the server committed it. A crash re-sends only
/// the transaction that was being sent, which the server takes again as a
/// no-op. Returns the number of transactions sent.
func upload(device: String, pool: DatabasePool, server: Server, pause: Duration, progress: @Sendable (String) -> Void) async throws -> Int {
    var sent = 0
    while true {
        let batch = try await pool.read { db in try db.durableBatch(for: "upload", of: Note.self, excluding: ["server"]) }
        for transaction in batch.transactions {
            try await server.begin()
            for change in transaction.changes {
                switch change.kind {
                case .inserted, .updated:
                    // Read now: nil when a later change deleted the row,
                    // whose deletion comes after this change.
                    guard let note = change.record else { continue }
                    // A download replaced the row since: that version is
                    // the server's own, never sent back.
                    let received = try pool.read { db in
                        try Row.fetchOne(db, sql: "SELECT updatedAt, editedBy FROM received WHERE id = ?", arguments: [note.id])
                    }
                    if let received, received["updatedAt"] == note.updatedAt, received["editedBy"] == note.editedBy { continue }
                    try await server.upload(note, deleted: false, from: device, origin: transaction.origin)
                case .deleted:
                    guard var note = change.deletedRecord, let time = change.time else {
                        throw SyncError("deletion \(change.id) came without its values: is the log installed with tombstones?")
                    }
                    // A deletion is a version of its own: the deletion's
                    // time, by this device.
                    note.updatedAt = millisecondText(time)
                    note.editedBy = deletionAuthor(device: device)
                    try await server.upload(note, deleted: true, from: device, origin: transaction.origin)
                }
            }
            try await server.commit()
            try await pool.write { db in try db.acknowledge(batch, through: transaction) }
            sent += 1
            progress("acknowledged transaction \(transaction.id.map(String.init) ?? "unknown") (\(transaction.changes.count) changes)")
            try await Task.sleep(for: pause)
        }
        // Past the downloads the batch left out, too.
        try await pool.write { db in try db.acknowledge(batch) }
        if !batch.advances { return sent }
    }
}

/// The downloader: the server's versions since the last download, applied
/// in one transaction marked with the origin "server", so that the
/// uploader never sends them back. A version applies where it is newer
/// than the device's (a local edit not yet uploaded wins until it is);
/// INSERT OR REPLACE writes it whole, so no touch rule restamps it.
/// Returns the number of versions read.
func download(pool: DatabasePool, server: Server) async throws -> Int {
    var read = 0
    while true {
        let since = try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT value FROM syncState WHERE name = 'downloaded'") ?? 0 }
        let changes = try await server.changes(after: since, limit: 500)
        guard let last = changes.last else { return read }
        try await pool.write { db in
            try db.setDurableLogOrigin("server")
            for (note, deleted, _) in changes {
                try db.execute(sql: "INSERT OR REPLACE INTO received(id, updatedAt, editedBy) VALUES (?, ?, ?)",
                               arguments: [note.id, note.updatedAt, note.editedBy])
                if deleted {
                    try db.execute(sql: "DELETE FROM notes WHERE id = ? AND (updatedAt, editedBy) < (?, ?)",
                                   arguments: [note.id, note.updatedAt, note.editedBy])
                } else {
                    try db.execute(sql: """
                        INSERT OR REPLACE INTO notes(id, title, body, editedBy, updatedAt)
                        SELECT :id, :title, :body, :editedBy, :updatedAt
                        WHERE NOT EXISTS (SELECT 1 FROM notes WHERE id = :id AND (updatedAt, editedBy) >= (:updatedAt, :editedBy))
                        """, arguments: ["id": note.id, "title": note.title, "body": note.body,
                                         "editedBy": note.editedBy, "updatedAt": note.updatedAt])
                }
            }
            try db.execute(sql: "INSERT OR REPLACE INTO syncState(name, value) VALUES ('downloaded', ?)", arguments: [last.version])
        }
        read += changes.count
    }
}
