import GRDB
import Foundation

/// Folds a transaction's changes into one per row (see
/// ``ChangeFeed/netPerTransaction()``).
struct NetChanges<Record> {
    private var order: [[DatabaseValue]] = []
    /// Per key, the net change so far: nil when the changes cancelled out.
    private var pending: [[DatabaseValue]: RecordChange<Record>?] = [:]

    mutating func add(_ change: RecordChange<Record>, oldKey: [DatabaseValue]?, newKey: [DatabaseValue]?) {
        if case .updated(let old, let new) = change, let oldKey, let newKey, oldKey != newKey {
            add(.deleted(old), oldKey: oldKey, newKey: nil)
            add(.inserted(new), oldKey: nil, newKey: newKey)
            return
        }
        guard let key = newKey ?? oldKey else { return }
        let earlier: RecordChange<Record>?
        if let seen = pending[key] { earlier = seen } else { order.append(key); earlier = nil }
        pending.updateValue(Self.fold(earlier, change), forKey: key)
    }

    var isEmpty: Bool { order.isEmpty }

    /// The net changes, in the order each row first changed; empties the fold.
    mutating func drain() -> [RecordChange<Record>] {
        defer { order = []; pending = [:] }
        return order.compactMap { pending[$0] ?? nil }
    }

    static func fold(_ earlier: RecordChange<Record>?, _ later: RecordChange<Record>) -> RecordChange<Record>? {
        switch (earlier, later) {
        case (nil, _): later
        case (.inserted, .updated(_, let new)): .inserted(new)
        case (.inserted, .deleted): nil
        case (.updated(let old, _), .updated(_, let new)): .updated(old: old, new: new)
        case (.updated(let old, _), .deleted): .deleted(old)
        case (.deleted(let old), .inserted(let new)): .updated(old: old, new: new)
        // Not produced by SQLite for one key (an insert of a present key
        // fails, an update or delete of an absent row does nothing): keep
        // the later change.
        default: later
        }
    }
}

/// Gathers a round's changes by transaction, folding them when net.
struct TransactionGroup<Element> {
    let isNet: Bool
    private var transaction: Int64?
    private var exact: [RecordChange<Element>] = []
    private var net = NetChanges<Element>()

    init(isNet: Bool) { self.isNet = isNet }

    mutating func add(_ change: RecordChange<Element>, oldKey: [DatabaseValue]?, newKey: [DatabaseValue]?, transaction: Int64,
                      flush: (Int64, [RecordChange<Element>]) -> Void) {
        if transaction != self.transaction { self.flush(flush); self.transaction = transaction }
        if isNet { net.add(change, oldKey: oldKey, newKey: newKey) } else { exact.append(change) }
    }

    /// Hands out the transaction gathered so far, if it kept any change.
    mutating func flush(_ flush: (Int64, [RecordChange<Element>]) -> Void) {
        guard let transaction else { return }
        let changes = isNet ? net.drain() : exact
        exact = []
        self.transaction = nil
        if !changes.isEmpty { flush(transaction, changes) }
    }
}
