import Foundation
import GRDB
import SQLiteTriggersGRDB

// The Swift observers against GRDB's own tools. 100,000 rows are updated
// by one UPDATE. Each variant's time, less the same UPDATE with nothing
// attached, divided by the rows, is its cost per event:
//   1. our after-commit typed observer (delivery included);
//   2. our immediate typed observer;
//   3. GRDB's DatabaseFunction called from the same trigger, decoding the
//      same three values;
//   4. GRDB's TransactionObserver, told of each row by databaseDidChange.
// Best of 5 runs each, alternating.

/// GRDB's observer of each changed row (peer 4).
final class RowObserver: TransactionObserver {
    let counter = Counter()
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == "items" }
    func databaseDidChange(with event: DatabaseEvent) { counter.count += 1 }
    func databaseDidCommit(_ db: Database) {}
    func databaseDidRollback(_ db: Database) {}
}

func observerSuite() throws {
    let rows = 100_000, runs = 5
    let callbackBody = "SELECT swift_callback('changed', new.id, new.title, new.updatedAt)"
    struct Variant {
        let queue: DatabaseQueue
        let counter: Counter
        var best = Double.infinity
    }
    var observations: [CallbackObservation] = []
    // GRDB holds transaction observers weakly: this one lives as long as the suite.
    let rowObserver = RowObserver()
    var variants = [Variant(queue: try makeQueue(trigger: nil, rows: rows), counter: Counter())]   // the baseline

    let afterCommit = Counter(), immediate = Counter(), function = Counter()
    let afterCommitQueue = try makeQueue(trigger: callbackBody, rows: rows)
    observations.append(try afterCommitQueue.write { db in
        try db.observeCallback("changed") { (id: Int, title: String, updatedAt: Date) in afterCommit.count += 1 }
    })
    variants.append(Variant(queue: afterCommitQueue, counter: afterCommit))
    let immediateQueue = try makeQueue(trigger: callbackBody, rows: rows)
    observations.append(try immediateQueue.write { db in
        try db.observeCallback("changed", delivery: .immediate) { (id: Int, title: String, updatedAt: Date) in immediate.count += 1 }
    })
    variants.append(Variant(queue: immediateQueue, counter: immediate))
    let functionQueue = try makeQueue(trigger: "SELECT grdb_changed(new.id, new.title, new.updatedAt)", rows: rows)
    let grdbFunction = DatabaseFunction("grdb_changed", argumentCount: 3) { values in
        _ = Int.fromDatabaseValue(values[0])
        _ = String.fromDatabaseValue(values[1])
        _ = Date.fromDatabaseValue(values[2])
        function.count += 1
        return nil
    }
    functionQueue.inDatabase { db in db.add(function: grdbFunction) }
    variants.append(Variant(queue: functionQueue, counter: function))
    let observerQueue = try makeQueue(trigger: nil, rows: rows)
    observerQueue.add(transactionObserver: rowObserver)
    variants.append(Variant(queue: observerQueue, counter: rowObserver.counter))

    for run in 1...runs {
        for index in variants.indices {
            variants[index].best = min(variants[index].best, try seconds {
                try variants[index].queue.write { db in
                    try db.execute(sql: "UPDATE items SET updatedAt = ?", arguments: [String(format: "2024-01-01 00:00:%02d.000", run)])
                }
            })
        }
    }
    for (index, variant) in variants.enumerated().dropFirst() where variant.counter.count != rows * runs {
        fatalError("variant \(index): \(variant.counter.count) events, expected \(rows * runs)")
    }
    withExtendedLifetime(observations) {}
    func perEvent(_ index: Int) -> Double { (variants[index].best - variants[0].best) / Double(rows) * 1e9 }
    let what = "Swift observer, per event over the bare UPDATE of \(rows) rows"
    report(what, ours: "observeCallback, after commit, typed", perEvent(1),
           peer: "GRDB DatabaseFunction, same decoding", perEvent(3), unit: "ns", target: 0.7)
    report(what, ours: "observeCallback, immediate, typed", perEvent(2),
           peer: "GRDB DatabaseFunction, same decoding", perEvent(3), unit: "ns", target: 0.7)
    report(what, ours: "observeCallback, after commit, typed", perEvent(1),
           peer: "GRDB TransactionObserver (row ids only, no values)", perEvent(4), unit: "ns")
}
