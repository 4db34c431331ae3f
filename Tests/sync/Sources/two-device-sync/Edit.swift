import Foundation
import GRDB

/// A user editing on a device: random inserts, edits and deletions, a few
/// per transaction (a deletion never of a note the transaction wrote), each written to the journal as the version it left
/// (its row, read back after the rules stamped it; a deletion's time from
/// the log's tombstone). The run's check replays the journals to know
/// which version of each note must win.
func edit(pool: DatabasePool, device: String, writer: String, transactions: Int, seed: UInt64, journal: String) throws {
    var random = SeededRandom(seed: seed)
    _ = FileManager.default.createFile(atPath: journal, contents: nil)
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: journal))
    defer { try? output.close() }
    for transaction in 0..<transactions {
        let lines = try pool.write { db -> [String] in
            var lines: [String] = []
            var written: Set<String> = []
            for change in 0..<Int.random(in: 1...3, using: &random) {
                let ids = try String.fetchAll(db, sql: "SELECT id FROM notes ORDER BY id").filter { !written.contains($0) }
                let roll = Int.random(in: 0..<10, using: &random)
                let text = "\(writer) #\(transaction).\(change)"
                if ids.isEmpty || roll < 3 {
                    let id = String(format: "%016llx", random.next())
                    try db.execute(sql: "INSERT INTO notes(id, title, body, editedBy) VALUES (?, ?, ?, ?)",
                                   arguments: [id, "title by \(text)", "body by \(text)", writer])
                    written.insert(id)
                    lines.append(try journalLine(db, id: id))
                } else if roll < 8 {
                    let id = ids.randomElement(using: &random)!
                    let column = roll < 6 ? "title" : "body"
                    try db.execute(sql: "UPDATE notes SET \(column) = ?, editedBy = ? WHERE id = ?",
                                   arguments: ["\(column) by \(text)", writer, id])
                    written.insert(id)
                    lines.append(try journalLine(db, id: id))
                } else {
                    let id = ids.randomElement(using: &random)!
                    try db.execute(sql: "DELETE FROM notes WHERE id = ?", arguments: [id])
                    lines.append(try deletionLine(db, id: id, author: deletionAuthor(device: device)))
                }
            }
            return lines
        }
        output.write(Data(lines.map { $0 + "\n" }.joined().utf8))
        // Two transactions of one writer never share a millisecond, so
        // each version has a time of its own.
        Thread.sleep(forTimeInterval: 0.002)
    }
}

/// The row as a journal line, as the shell and Python writers write it.
private func journalLine(_ db: Database, id: String) throws -> String {
    try String.fetchOne(db, sql: """
        SELECT json_object('id', id, 'title', title, 'body', body, 'editedBy', editedBy, 'updatedAt', updatedAt, 'deleted', 0)
        FROM notes WHERE id = ?
        """, arguments: [id])!
}

/// A deletion as a journal line: the version the deletion is, its time
/// the tombstone's.
private func deletionLine(_ db: Database, id: String, author: String) throws -> String {
    try String.fetchOne(db, sql: """
        SELECT json_object('id', ?, 'editedBy', ?, 'deleted', 1,
          'updatedAt', (SELECT time FROM sqlitetriggers_changes WHERE kind = 'delete' ORDER BY id DESC LIMIT 1))
        """, arguments: [id, author])!
}

/// SplitMix64: the same edits for the same seed, on every run.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
