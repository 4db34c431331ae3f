import Foundation
import GRDB

/// make bench's information row: the server round trip. A fresh device
/// writes `count` notes, ten per transaction; then one uploader sends them
/// all (a PostgreSQL transaction and an acknowledgement per device
/// transaction, as `upload` does), timed. Prints a ROW line for
/// Tests/bench/report.py: microseconds per change, and changes per second.
func bench(path: String, server: Server, count: Int) async throws {
    let pool = try Device.open(path)
    for transaction in 0..<(count / 10) {
        try await pool.write { db in
            for note in 0..<10 {
                try db.execute(sql: "INSERT INTO notes(id, title, body, editedBy) VALUES (?, 'a title', 'a body', 'A-app')",
                               arguments: [String(format: "%08d%02d", transaction, note)])
            }
        }
    }
    let start = ContinuousClock.now
    _ = try await upload(device: "A", pool: pool, server: server, pause: .zero) { _ in }
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let perSecond = Double(count) / seconds
    say("ROW\tthe server round trip: \(count) changes uploaded to PostgreSQL, \(Int(perSecond)) changes/s (information)"
        + "\tupload (a server transaction per device transaction)\t\(seconds * 1e6 / Double(count))\t\t\tµs per change\t")
}
