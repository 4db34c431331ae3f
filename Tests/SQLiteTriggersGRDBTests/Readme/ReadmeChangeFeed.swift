import Foundation
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

/// The README's change-feed example, verbatim between the markers:
/// ReadmeQuickStartTests checks the README shows exactly this, and
/// ReadmeChangeFeedTests runs it.
enum ReadmeChangeFeed {
    // BEGIN README change feed declarations
    @TriggerTable struct Reminder: Codable, FetchableRecord, PersistableRecord, ConventionalRecord, Sendable {
        var id: UUID
        var title: String
        var status: Int
    }

    /// A copy of the reminders table kept from the feed alone.
    @MainActor final class RemindersReplica {
        var rows: [UUID: Reminder] = [:]
        var observation: CallbackObservation?

        func start(_ dbQueue: DatabaseQueue) throws {
            observation = try dbQueue.observeChanges(to: Reminder.self) { [weak self] change in
                switch change {                          // on the main actor, after commit
                case .inserted(let new): self?.rows[new.id] = new
                case .updated(let old, let new): self?.rows[old.id] = nil; self?.rows[new.id] = new
                case .deleted(let old): self?.rows[old.id] = nil
                }
            }
        }
    }
    // END README change feed declarations

    @MainActor static func run(_ dbQueue: DatabaseQueue, upload: @escaping @Sendable (RecordChange<Reminder>) -> Void)
        throws -> (RemindersReplica, [CallbackObservation]) {
        // BEGIN README change feed statements
        let replica = RemindersReplica()
        try replica.start(dbQueue)

        // One change per row per transaction, for a sync engine.
        let sync = try dbQueue.observeChanges(to: Reminder.self, feed: ChangeFeed.all.netPerTransaction(),
                                              scheduling: .async(onQueue: .global())) { change in upload(change) }
        // Or each committed transaction as one value, with its number.
        let batches = try dbQueue.observeTransactions(of: Reminder.self, feed: ChangeFeed.all.netPerTransaction(),
                                                      scheduling: .async(onQueue: .global())) { transaction in
            print("transaction", transaction.number, transaction.changes.count)
        }

        // Filters run in SQL; a check runs inside the statement and can refuse it.
        let completions = try dbQueue.observeChanges(
            to: Reminder.self, feed: .updates(of: \.status, when: { old, new in new.status == 1 && old.status != 1 })
        ) { change in print("completed:", change.new?.title ?? "") }
        let check = try dbQueue.checkChanges(to: Reminder.self) { change in
            if change.new?.title.isEmpty == true { throw DatabaseError(message: "a reminder needs a title") }
        }
        
        // Keys only (rowid and primary key): little memory for huge transactions.
        let reindex = try dbQueue.observeChangedKeys(of: Reminder.self, scheduling: .async(onQueue: .global())) { change in
            print("reindex", change.new ?? change.old!)
        }
        // END README change feed statements
        return (replica, [sync, batches, completions, check, reindex])
    }
}
