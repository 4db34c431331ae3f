import Foundation
import GRDB
import PostgresNIO

/// One version a writer left, as its journal line says.
private struct JournalVersion: Decodable {
    var id: String
    var title: String?
    var body: String?
    var editedBy: String
    var updatedAt: String
    var deleted: Int
}

/// The run's verdict: both devices and the server hold, in every column,
/// the last writer's version of every note any writer ever wrote (the
/// journals say which), no device uploaded a version that came from the
/// other (an echo), and no version changed the server twice. Returns the
/// failures, and prints the counts.
func check(devices: [(name: String, pool: DatabasePool)], server: Server, journals: String) async throws -> [String] {
    var failures: [String] = []
    // The winners, replaying every journal.
    var winners: [String: JournalVersion] = [:]
    var versions = 0
    let files = try FileManager.default.contentsOfDirectory(atPath: journals).filter { $0.hasSuffix(".jsonl") }.sorted()
    for file in files {
        let text = try String(contentsOfFile: journals + "/" + file, encoding: .utf8)
        for line in text.split(separator: "\n") where !line.isEmpty {
            let version = try JSONDecoder().decode(JournalVersion.self, from: Data(line.utf8))
            versions += 1
            // A later line of one writer wins a tie: two edits of one transaction.
            if let current = winners[version.id], (current.updatedAt, current.editedBy) > (version.updatedAt, version.editedBy) { continue }
            winners[version.id] = version
        }
    }
    let expected = winners.values.filter { $0.deleted == 0 }
        .map { [$0.id, $0.title ?? "", $0.body ?? "", $0.editedBy, $0.updatedAt] }
        .sorted { $0[0] < $1[0] }

    // Each device: exactly the winners, text in every column.
    for (name, pool) in devices {
        let rows = try pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT id, title, body, editedBy, updatedAt, typeof(title) || typeof(body) || typeof(editedBy) || typeof(updatedAt) AS types
                FROM notes ORDER BY id
                """)
        }
        if let row = rows.first(where: { $0["types"] != "texttexttexttext" }) {
            failures.append("device \(name): note \(row["id"] as String) has columns of types \(row["types"] as String)")
        }
        let held = rows.map { row in (0..<5).map { row[$0] as String } }
        let lost = Set(expected.map { $0.joined(separator: "|") }).subtracting(held.map { $0.joined(separator: "|") })
        let extra = Set(held.map { $0.joined(separator: "|") }).subtracting(expected.map { $0.joined(separator: "|") })
        if !lost.isEmpty || !extra.isEmpty {
            failures.append("device \(name): \(lost.count) winning versions missing (lost edits), \(extra.count) rows that should not be: "
                + "missing \(lost.sorted().prefix(3)), extra \(extra.sorted().prefix(3))")
        }
    }

    // The server: the same rows, and each deletion's tombstone.
    var serverRows: [[String]] = [], serverTombstones: [String: [String]] = [:]
    for try await (id, title, body, editedBy, updatedAt, deleted) in try await server.connection.query(
        "SELECT id, title, body, edited_by, updated_at, deleted FROM notes ORDER BY id", logger: Server.logger)
        .decode((String, String, String, String, String, Bool).self) {
        if deleted { serverTombstones[id] = [editedBy, updatedAt] } else { serverRows.append([id, title, body, editedBy, updatedAt]) }
    }
    if serverRows != expected {
        failures.append("server: its notes are not the winning versions (\(serverRows.count) rows, \(expected.count) expected)")
    }
    let deletedWinners = winners.values.filter { $0.deleted == 1 }
    let wrongTombstones = deletedWinners.filter { serverTombstones[$0.id] != [$0.editedBy, $0.updatedAt] }
    if !wrongTombstones.isEmpty || serverTombstones.count != deletedWinners.count {
        failures.append("server: \(wrongTombstones.count) deletions missing or of another time, "
            + "\(serverTombstones.count) tombstones for \(deletedWinners.count) deleted notes")
    }

    // Echoes, and versions applied twice.
    var uploads = 0, applied = 0, echoes = 0
    var appliedVersions: [String: Int] = [:]
    for try await (uploader, id, editedBy, updatedAt, wasApplied, origin) in try await server.connection.query(
        "SELECT device, id, edited_by, updated_at, applied, origin FROM uploads", logger: Server.logger)
        .decode((String, String, String, String, Bool, String?).self) {
        uploads += 1
        // Sent back: a download's transaction, or another device's version.
        if origin == "server" || device(ofAuthor: editedBy) != uploader { echoes += 1 }
        if wasApplied {
            applied += 1
            appliedVersions["\(id)|\(editedBy)|\(updatedAt)", default: 0] += 1
        }
    }
    let appliedTwice = appliedVersions.values.filter { $0 > 1 }.count
    if echoes > 0 { failures.append("\(echoes) uploads sent back a version another device wrote (echoes)") }
    if appliedTwice > 0 { failures.append("\(appliedTwice) versions changed the server more than once") }

    // Writers without the extension: stamped, and synced like the rest.
    let unextended = expected.filter { $0[3] == "A-shell" || $0[3] == "B-python" }
    if unextended.isEmpty { failures.append("no winning version was written by a writer without the extension") }
    print("""
        sync check: \(versions) versions in the journals, \(winners.count) notes (\(expected.count) kept, \
        \(deletedWinners.count) deleted); \(uploads) uploads, \(applied) applied; \
        \(unextended.count) kept notes last written by the shell or Python without the extension; \
        \(echoes) echoes, \(appliedTwice) applied twice
        """)
    return failures
}
