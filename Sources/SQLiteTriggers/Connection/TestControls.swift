internal import CSQLiteTriggers
import Foundation

extension RawConnection {
    /// Pins "now" on one connection for `datetime_subsec()`,
    /// `unixepoch_subsec()` and the timestamps of `uuidv7()`, to the
    /// millisecond; `nil` returns to the real clock.
    ///
    /// ```swift
    /// try RawConnection.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000), on: handle)
    /// ```
    public static func pinClock(to date: Date?, on connection: OpaquePointer) throws(SQLiteTriggersError) {
        guard let date else {
            return try SQLiteTriggersError.check(sqlitetriggers_unpin_clock(connection), connection)
        }
        let millis = (date.timeIntervalSince1970 * 1000).rounded()
        let outOfRange = SQLiteTriggersError(resultCode: SQLITE_RANGE, message: "pinClock: \(date) is outside SQLite's date range")
        guard millis.isFinite, abs(millis) < 1e15 else { throw outOfRange }
        let resultCode = sqlitetriggers_pin_clock(connection, Int64(millis))
        if resultCode == SQLITE_RANGE { throw outOfRange }
        try SQLiteTriggersError.check(resultCode, connection)
    }

    /// Makes `uuid()` and `uuidv7()` on one connection reproducible from a
    /// seed; `nil` returns to kernel randomness. Pin the clock too for
    /// reproducible `uuidv7()` values.
    ///
    /// ```swift
    /// try RawConnection.seedRandom(42, on: handle)
    /// ```
    public static func seedRandom(_ seed: Int64?, on connection: OpaquePointer) throws(SQLiteTriggersError) {
        let resultCode = seed.map { sqlitetriggers_seed_random(connection, $0) }
            ?? sqlitetriggers_unseed_random(connection)
        try SQLiteTriggersError.check(resultCode, connection)
    }
}
