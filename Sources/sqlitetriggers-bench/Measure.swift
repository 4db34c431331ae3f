import GRDB
import SQLiteTriggersGRDB
import Foundation

/// The one timer of the suites: how long `body` took, in seconds. Suites
/// keep the best of several runs, alternating their variants run by run.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// The one row printer: a line Tests/bench/report.py gathers into the
/// table (`ROW`, what, ours, its figure, the peer, its figure, the unit,
/// the target ratio or nothing).
func report(_ what: String, ours: String, _ oursValue: Double, peer: String, _ peerValue: Double?,
            unit: String, target: Double? = nil) {
    let fields = ["ROW", what, ours, "\(oursValue)", peer, peerValue.map { "\($0)" } ?? "", unit, target.map { "\($0)" } ?? ""]
    print(fields.joined(separator: "\t"))
}

/// Events or rows a variant received, checked against what it should have.
final class Counter: @unchecked Sendable { var count = 0 }

/// A queue with the extension, and `items` holding `rows` rows; `body`,
/// when given, is the body of an AFTER UPDATE trigger on it.
func makeQueue(trigger body: String?, rows: Int) throws -> DatabaseQueue {
    var config = Configuration()
    config.prepareDatabase { db in try db.installSQLiteTriggers() }
    let queue = try DatabaseQueue(configuration: config)
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE items(id INTEGER PRIMARY KEY, title TEXT, updatedAt TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO items(title, updatedAt) SELECT 'Reminder number ' || i, '2024-01-01 00:00:00.000' FROM n WHERE i <= \(rows);
            """)
        if let body {
            try db.execute(sql: "CREATE TEMP TRIGGER items_au AFTER UPDATE ON items BEGIN \(body); END")
        }
    }
    return queue
}
