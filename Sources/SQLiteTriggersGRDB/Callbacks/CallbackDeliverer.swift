import GRDB

/// Delivers a connection's committed swift_callback events to its
/// after-commit and batch observers, by calling the C layer's
/// `sqlitetriggers_deliver()` (ext/callback_delivery.c) once GRDB reports
/// each commit.
///
/// Lifetime: `installSQLiteTriggers()` adds one per connection for the
/// connection's lifetime (`.databaseLifetime`). It observes no table, so
/// GRDB never asks it about changes; it runs after the statement that
/// committed has finished, where observers may use the connection (never
/// inside SQLite's own commit). An error from delivery goes to
/// `CallbackObservation.defaultErrorHandler`.
final class CallbackDeliverer: TransactionObserver {
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidRollback(_ db: Database) {}

    func databaseDidCommit(_ db: Database) {
        guard let handle = db.sqliteConnection else { return }
        do {
            try RawConnection.deliverCallbacks(on: handle)
        } catch {
            CallbackObservation.defaultErrorHandler(error)
        }
    }
}
