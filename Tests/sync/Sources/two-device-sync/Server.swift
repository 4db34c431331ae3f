import Foundation
import Logging
import PostgresNIO

/// The server: one PostgreSQL table of notes, the last writer's version of
/// each (deletions kept as tombstones), each write numbered from one
/// sequence so that a device downloads what changed since its last look.
/// `uploads` records every version a device sent, whether it won, and the
/// origin of the device's transaction it came from: the run's checks read
/// it (no echo, nothing applied twice).
struct Server {
    let connection: PostgresConnection
    static let logger = Logger(label: "two-device-sync")

    /// Connects through the cluster's Unix socket (`socket` is its folder).
    static func connect(socket: String) async throws -> Server {
        let configuration = PostgresConnection.Configuration(
            unixSocketPath: socket + "/.s.PGSQL.5432", username: "sync", password: nil, database: "notes")
        return Server(connection: try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger))
    }

    func close() async throws { try await connection.close() }

    static let schema = [
        "CREATE SEQUENCE versions",
        """
        CREATE TABLE notes(
          id text PRIMARY KEY, title text NOT NULL, body text NOT NULL, edited_by text NOT NULL,
          updated_at text NOT NULL, deleted boolean NOT NULL, version bigint NOT NULL)
        """,
        """
        CREATE TABLE uploads(
          device text NOT NULL, id text NOT NULL, edited_by text NOT NULL, updated_at text NOT NULL,
          deleted boolean NOT NULL, applied boolean NOT NULL, origin text)
        """,
    ]

    func createSchema() async throws {
        for statement in Self.schema { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.logger) }
    }

    func begin() async throws { try await connection.query("BEGIN", logger: Self.logger) }
    func commit() async throws { try await connection.query("COMMIT", logger: Self.logger) }

    /// Writes a version if it is newer than the server's (last writer wins,
    /// the writer's name breaking a tie), and records the upload. Sending
    /// the same version again changes nothing: an upload is idempotent.
    func upload(_ note: Note, deleted: Bool, from device: String, origin: String?) async throws {
        let rows = try await connection.query("""
            INSERT INTO notes AS n(id, title, body, edited_by, updated_at, deleted, version)
            VALUES (\(note.id), \(note.title), \(note.body), \(note.editedBy), \(note.updatedAt), \(deleted), nextval('versions'))
            ON CONFLICT (id) DO UPDATE SET title = excluded.title, body = excluded.body, edited_by = excluded.edited_by,
              updated_at = excluded.updated_at, deleted = excluded.deleted, version = excluded.version
            WHERE (excluded.updated_at, excluded.edited_by) > (n.updated_at, n.edited_by)
            RETURNING id
            """, logger: Self.logger)
        var applied = false
        for try await _ in rows { applied = true }
        try await connection.query("""
            INSERT INTO uploads(device, id, edited_by, updated_at, deleted, applied, origin)
            VALUES (\(device), \(note.id), \(note.editedBy), \(note.updatedAt), \(deleted), \(applied), \(origin))
            """, logger: Self.logger)
    }

    /// The versions written after `version`, oldest first.
    func changes(after version: Int64, limit: Int) async throws -> [(note: Note, deleted: Bool, version: Int64)] {
        let rows = try await connection.query("""
            SELECT id, title, body, edited_by, updated_at, deleted, version FROM notes
            WHERE version > \(version) ORDER BY version LIMIT \(limit)
            """, logger: Self.logger)
        var changes: [(note: Note, deleted: Bool, version: Int64)] = []
        for try await (id, title, body, editedBy, updatedAt, deleted, version)
            in rows.decode((String, String, String, String, String, Bool, Int64).self) {
            changes.append((Note(id: id, title: title, body: body, editedBy: editedBy, updatedAt: updatedAt), deleted, version))
        }
        return changes
    }
}
