// make bench: the Swift observers against GRDB's own tools, in one process.
//
// 100,000 rows are updated by one UPDATE. Each variant's time, less the
// same UPDATE with nothing attached, divided by the rows, is its cost per
// event:
//   1. our after-commit typed observer (delivery included);
//   2. our immediate typed observer;
//   3. GRDB's DatabaseFunction called from the same trigger, decoding the
//      same three values;
//   4. GRDB's TransactionObserver, told of each row by databaseDidChange.
// Best of 5 runs each, alternating. Prints a Markdown table.
import Foundation
import SQLiteTriggersGRDB

let rows = 100_000
let runs = 5

func makeQueue(trigger body: String?) throws -> DatabaseQueue {
    let queue = try DatabaseQueue(configuration: {
        var config = Configuration()
        config.prepareDatabase { db in try db.installSQLiteTriggers() }
        return config
    }())
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE items(id INTEGER PRIMARY KEY, title TEXT, updatedAt TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO items(title, updatedAt) SELECT 'Reminder number ' || i, '2024-01-01 00:00:00.000' FROM n;
            """)
        if let body {
            try db.execute(sql: "CREATE TEMP TRIGGER items_au AFTER UPDATE ON items BEGIN \(body); END")
        }
    }
    return queue
}

final class Counter: @unchecked Sendable { var count = 0 }

final class RowObserver: TransactionObserver {
    let counter: Counter
    init(counter: Counter) { self.counter = counter }
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == "items" }
    func databaseDidChange(with event: DatabaseEvent) { counter.count += 1 }
    func databaseDidCommit(_ db: Database) {}
    func databaseDidRollback(_ db: Database) {}
}

struct Variant {
    let name: String
    let queue: DatabaseQueue
    let counter: Counter
    var best = Double.infinity
}

let callbackBody = "SELECT swift_callback('changed', new.id, new.title, new.updatedAt)"
var observations: [CallbackObservation] = []
var variants: [Variant] = []

let baseline = try makeQueue(trigger: nil)
variants.append(Variant(name: "nothing attached (baseline)", queue: baseline, counter: Counter()))

do {
    let counter = Counter()
    let queue = try makeQueue(trigger: callbackBody)
    observations.append(try queue.write { db in
        try db.observeCallback("changed") { (id: Int, title: String, updatedAt: Date) in counter.count += 1 }
    })
    variants.append(Variant(name: "1. `observeCallback`, after commit, typed", queue: queue, counter: counter))
}
do {
    let counter = Counter()
    let queue = try makeQueue(trigger: callbackBody)
    observations.append(try queue.write { db in
        try db.observeCallback("changed", delivery: .immediate) { (id: Int, title: String, updatedAt: Date) in
            counter.count += 1
        }
    })
    variants.append(Variant(name: "2. `observeCallback`, immediate, typed", queue: queue, counter: counter))
}
do {
    let counter = Counter()
    let queue = try makeQueue(trigger: "SELECT grdb_changed(new.id, new.title, new.updatedAt)")
    let function = DatabaseFunction("grdb_changed", argumentCount: 3) { values in
        _ = Int.fromDatabaseValue(values[0])
        _ = String.fromDatabaseValue(values[1])
        _ = Date.fromDatabaseValue(values[2])
        counter.count += 1
        return nil
    }
    queue.inDatabase { db in db.add(function: function) }
    variants.append(Variant(name: "3. GRDB `DatabaseFunction` (peer)", queue: queue, counter: counter))
}
let rowObserver = RowObserver(counter: Counter())
do {
    let queue = try makeQueue(trigger: nil)
    queue.add(transactionObserver: rowObserver)
    variants.append(Variant(name: "4. GRDB `TransactionObserver.databaseDidChange` (peer)", queue: queue,
                            counter: rowObserver.counter))
}

for run in 1...runs {
    for index in variants.indices {
        let start = DispatchTime.now().uptimeNanoseconds
        try variants[index].queue.write { db in
            try db.execute(sql: "UPDATE items SET updatedAt = ?", arguments: [String(format: "2024-01-01 00:00:%02d.000", run)])
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        variants[index].best = min(variants[index].best, seconds)
    }
}

for variant in variants.dropFirst() where variant.counter.count != rows * runs {
    fatalError("\(variant.name): \(variant.counter.count) events, expected \(rows * runs)")
}

let baselineNs = variants[0].best / Double(rows) * 1e9
func perEvent(_ variant: Variant) -> Double { variant.best / Double(rows) * 1e9 - baselineNs }
let peer = perEvent(variants[3])
let version = try baseline.read { db in try String.fetchOne(db, sql: "SELECT sqlite_version()")! }
print("Swift observers (release build), \(rows) rows updated by one UPDATE, best of \(runs), SQLite \(version)\n")
print("| variant | ns/row | ns per event | vs `DatabaseFunction` | target |")
print("|---|---:|---:|---:|---:|")
for (index, variant) in variants.enumerated() {
    let total = variant.best / Double(rows) * 1e9
    if index == 0 {
        print("| \(variant.name) | \(Int(total)) | | | |")
    } else {
        let ratio = String(format: "%.2f", perEvent(variant) / peer)
        let target = index <= 2 ? "≤ 1.5" : ""
        print("| \(variant.name) | \(Int(total)) | \(Int(perEvent(variant))) | \(ratio) | \(target) |")
    }
}
_ = observations
