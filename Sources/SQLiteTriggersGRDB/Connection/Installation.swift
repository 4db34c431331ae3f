// Only the GRDB names our API and examples need, as SQLiteData re-exports
// nine: the whole of GRDB would make `Table`, `Column`, `Statement`,
// `DatabaseFunction`, `FTS5` and `TableAlias` ambiguous in apps that also
// import StructuredQueries, which declares none of these (a test checks).
@_exported import struct GRDB.Configuration
@_exported import class GRDB.Database
@_exported import protocol GRDB.DatabaseCancellable
@_exported import struct GRDB.DatabaseError
@_exported import struct GRDB.DatabaseMigrator
@_exported import class GRDB.DatabasePool
@_exported import class GRDB.DatabaseQueue
@_exported import protocol GRDB.DatabaseReader
@_exported import protocol GRDB.DatabaseWriter
@_exported import protocol GRDB.FetchableRecord
@_exported import protocol GRDB.PersistableRecord
@_exported import class GRDB.Row
@_exported import protocol GRDB.TableRecord
import GRDB
@_exported import SQLiteTriggers
import Foundation

/// Where "now" comes from for `datetime_subsec()`, `unixepoch_subsec()`
/// and `uuidv7()` (so for `.now` in trigger builders and the touch rules).
public enum TriggerClock: Sendable {
    /// GRDB's `db.transactionDate`: one instant for a whole transaction,
    /// the same one GRDB records stamp themselves with, and controlled in
    /// tests by `Configuration.transactionClock`. Outside a transaction,
    /// each call reads GRDB's clock anew.
    case transactionDate
    /// The VFS clock, SQLite's own 'now': each call reads it anew.
    case system
}

extension Database {
    /// Registers the SQLiteTriggers SQL functions on this connection.
    ///
    /// Call it from `prepareDatabase`, so that every connection of a
    /// `DatabaseQueue` or `DatabasePool`, writer and readers alike, has them:
    ///
    /// ```swift
    /// var config = Configuration()
    /// config.prepareDatabase { db in try db.installSQLiteTriggers() }
    /// let dbQueue = try DatabaseQueue(path: path, configuration: config)
    /// ```
    ///
    /// "Now" in triggers is GRDB's `transactionDate` unless `clock` says
    /// `.system`; `pinClock(to:)` overrides either.
    public func installSQLiteTriggers(clock: TriggerClock = .transactionDate) throws {
        try withSQLiteConnection { handle in
            try RawConnection.install(on: handle)
            if case .transactionDate = clock {
                let stored = StoredTransactionDate()
                try RawConnection.setClock(on: handle) { [weak self] in
                    guard let self else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the database connection is closed") }
                    return try stored.asStored(self.transactionDate)
                }
            }
        }
        // After-commit observers run when GRDB reports the commit, once the
        // statement has finished and the connection is usable again.
        // Read-only connections have no commits, and GRDB ignores this there.
        add(transactionObserver: CallbackDeliverer(), extent: .databaseLifetime)
    }

    /// Pins "now" on this connection for `datetime_subsec()`,
    /// `unixepoch_subsec()` and `uuidv7()`; `nil` unpins.
    ///
    /// ```swift
    /// try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000))
    /// ```
    public func pinClock(to date: Date?) throws {
        try withSQLiteConnection { try RawConnection.pinClock(to: date, on: $0) }
    }

    /// Makes `uuid()` and `uuidv7()` on this connection reproducible; `nil`
    /// returns to kernel randomness.
    ///
    /// ```swift
    /// try db.seedRandom(42)
    /// ```
    public func seedRandom(_ seed: Int64?) throws {
        try withSQLiteConnection { try RawConnection.seedRandom(seed, on: $0) }
    }

    /// Runs body on the raw handle, turning our errors into `DatabaseError`s
    /// with their real result code.
    func withSQLiteConnection(_ body: (OpaquePointer) throws -> Void) throws {
        guard let handle = sqliteConnection else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the database connection is closed")
        }
        do {
            try body(handle)
        } catch let error as SQLiteTriggersError {
            throw DatabaseError(resultCode: ResultCode(rawValue: error.resultCode), message: error.message)
        }
    }
}

/// GRDB's transaction date as GRDB stores it: the instant of the text its
/// date formatter writes (the formatter's own rounding to the millisecond),
/// so that a trigger's stamp and a record's `db.transactionDate` are the
/// same text. Remembered, since the date is the same for a whole transaction.
private final class StoredTransactionDate {
    private var last: (date: Date, stored: Date)?

    func asStored(_ date: Date) -> Date {
        if let last, last.date == date { return last.stored }
        let text = String.fromDatabaseValue(date.databaseValue) ?? ""
        let stored = StorageConventions.date(fromText: text) ?? date
        last = (date, stored)
        return stored
    }
}

/// Our tokens are GRDB cancellables: an app can keep them beside its
/// `ValueObservation` cancellables, in one `[any DatabaseCancellable]`.
extension CallbackObservation: DatabaseCancellable {}
