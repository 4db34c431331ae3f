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
    let counter: Counter
    init(counter: Counter) { self.counter = counter }
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == "items" }
    func databaseDidChange(with event: DatabaseEvent) { counter.count += 1 }
    func databaseDidCommit(_ db: Database) {}
    func databaseDidRollback(_ db: Database) {}
}

/// One variant of the suite: a queue of `rows` rows, its counter of events,
/// and what must live as long as it observes.
struct ObserverVariant {
    let queue: DatabaseQueue
    let counter: Counter
    let observation: Any?
    var best = Double.infinity

    /// 0: the bare UPDATE; 1, 2, 3, 4: as numbered above.
    init(_ variant: Int, rows: Int) throws {
        let callbackBody = "SELECT swift_callback('changed', new.id, new.title, new.updatedAt)"
        let counter = Counter()
        self.counter = counter
        switch variant {
        case 1, 2:
            queue = try makeQueue(trigger: callbackBody, rows: rows)
            let delivery: CallbackDelivery = variant == 1 ? .afterCommit : .immediate
            observation = try queue.write { db in
                try db.observeCallback("changed", delivery: delivery) { (id: Int, title: String, updatedAt: Date) in counter.count += 1 }
            }
        case 3:
            queue = try makeQueue(trigger: "SELECT grdb_changed(new.id, new.title, new.updatedAt)", rows: rows)
            let grdbFunction = DatabaseFunction("grdb_changed", argumentCount: 3) { values in
                _ = Int.fromDatabaseValue(values[0])
                _ = String.fromDatabaseValue(values[1])
                _ = Date.fromDatabaseValue(values[2])
                counter.count += 1
                return nil
            }
            queue.inDatabase { db in db.add(function: grdbFunction) }
            observation = nil
        case 4:
            queue = try makeQueue(trigger: nil, rows: rows)
            // GRDB holds transaction observers weakly: this one lives as long as the variant.
            let rowObserver = RowObserver(counter: counter)
            queue.add(transactionObserver: rowObserver)
            observation = rowObserver
        default:
            queue = try makeQueue(trigger: nil, rows: rows)
            observation = nil
        }
    }

    /// The measured UPDATE of every row (the `run`th: each sets new values).
    func update(run: Int) throws {
        try queue.write { db in
            try db.execute(sql: "UPDATE items SET updatedAt = ?", arguments: [String(format: "2024-01-01 00:00:%02d.000", run)])
        }
    }
}

func observerSuite() throws {
    let rows = 100_000, runs = 5
    var variants = try (0...4).map { try ObserverVariant($0, rows: rows) }
    for run in 1...runs {
        for index in variants.indices {
            variants[index].best = min(variants[index].best, try seconds { try variants[index].update(run: run) })
        }
    }
    for (index, variant) in variants.enumerated().dropFirst() where variant.counter.count != rows * runs {
        fatalError("variant \(index): \(variant.counter.count) events, expected \(rows * runs)")
    }
    func perEvent(_ index: Int) -> Double { (variants[index].best - variants[0].best) / Double(rows) * 1e9 }
    let what = "Swift observer, per event over the bare UPDATE of \(rows) rows"
    report(what, ours: "observeCallback, after commit, typed", perEvent(1),
           peer: "GRDB DatabaseFunction, same decoding", perEvent(3), unit: "ns", target: 0.7)
    report(what, ours: "observeCallback, immediate, typed", perEvent(2),
           peer: "GRDB DatabaseFunction, same decoding", perEvent(3), unit: "ns", target: 0.7)
    report(what, ours: "observeCallback, after commit, typed", perEvent(1),
           peer: "GRDB TransactionObserver (row ids only, no values)", perEvent(4), unit: "ns")
}

/// The one UPDATE callgrind counts (Tests/bench/observer_instructions.py
/// toggles collection on this function's name).
@inline(never) func measuredObserverWrite(_ variant: ObserverVariant) throws {
    try variant.update(run: 1)
}

/// `--observer-write VARIANT ROWS`: one UPDATE of ROWS rows with VARIANT
/// (0 to 4, as numbered above) attached; it checks its events.
func observerWrite(variant: Int, rows: Int) throws {
    let observed = try ObserverVariant(variant, rows: rows)
    try measuredObserverWrite(observed)
    precondition(variant == 0 || observed.counter.count == rows, "variant \(variant): \(observed.counter.count) events, expected \(rows)")
}
