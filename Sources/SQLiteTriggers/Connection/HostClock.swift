internal import SQLiteTriggersCSQLite
internal import CSQLiteTriggers
import Foundation

extension RawConnection {
    /// Makes `now` the source of "now" on one connection for
    /// `datetime_subsec()`, `unixepoch_subsec()` and the timestamps of
    /// `uuidv7()`, read on each call (to the nearest millisecond); `nil`
    /// returns to
    /// the VFS clock, the source of SQLite's own 'now'. A pinned clock
    /// (``pinClock(to:on:)``) still wins. When `now` throws or answers a
    /// date outside SQLite's range, the SQL function fails, naming itself:
    /// "datetime_subsec: the connection's clock failed (...)".
    ///
    /// `now` runs on the connection's thread, inside the SQL call.
    ///
    /// ```swift
    /// try RawConnection.setClock(on: handle) { appClock.now }
    /// ```
    public static func setClock(on connection: OpaquePointer, _ now: (() throws -> Date)?) throws(SQLiteTriggersError) {
        guard let now else {
            return try SQLiteTriggersError.check(sqlitetriggers_set_clock(connection, nil, nil, nil), connection)
        }
        let argument = Unmanaged.passRetained(ClockBox(now: now)).toOpaque()
        // The C side releases the box on every path, failure included.
        try SQLiteTriggersError.check(sqlitetriggers_set_clock(connection, clockTrampoline, argument, releaseClockBox), connection)
    }
}

private final class ClockBox {
    let now: () throws -> Date
    init(now: @escaping () throws -> Date) { self.now = now }
}

private let clockTrampoline: sqlitetriggers_clock = { argument, unixMillis in
    let box = Unmanaged<ClockBox>.fromOpaque(argument!).takeUnretainedValue()
    guard let date = try? box.now() else { return SQLITE_ERROR }
    let millis = (date.timeIntervalSince1970 * 1000).rounded()
    guard millis.isFinite, abs(millis) < 1e15 else { return SQLITE_RANGE }
    unixMillis?.pointee = Int64(millis)
    return SQLITE_OK
}

private let releaseClockBox: @convention(c) (UnsafeMutableRawPointer?) -> Void = { argument in
    guard let argument else { return }
    Unmanaged<ClockBox>.fromOpaque(argument).release()
}
