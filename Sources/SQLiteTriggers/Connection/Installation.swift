internal import CSQLiteTriggers
internal import SQLiteTriggersCSQLite

/// An error reported by the C layer of SQLiteTriggers, with SQLite's result
/// code and message.
///
/// ```swift
/// do {
///     try RawConnection.install(on: handle)
/// } catch {
///     print(error.resultCode, error.message)       // a typed throw: error is SQLiteTriggersError
/// }
/// ```
public struct SQLiteTriggersError: Error, Equatable, CustomStringConvertible {
    /// The SQLite result code, such as `SQLITE_MISUSE` (21).
    public var resultCode: Int32
    /// What went wrong, in SQLite's words or ours.
    public var message: String

    public init(resultCode: Int32, message: String) {
        self.resultCode = resultCode
        self.message = message
    }

    public var description: String { "SQLite error \(resultCode): \(message)" }

    static func check(_ resultCode: Int32, _ connection: OpaquePointer) throws(SQLiteTriggersError) {
        guard resultCode != SQLITE_OK else { return }
        let message = resultCode == SQLITE_MISUSE
            ? "SQLiteTriggers is not installed on this connection"
            : String(cString: sqlite3_errstr(resultCode))
        throw SQLiteTriggersError(resultCode: resultCode, message: message)
    }
}

/// Entry points that work on any raw `sqlite3*` connection handle.
public enum RawConnection {
    /// Registers every SQL function of the extension (`uuid()`, `uuidv7()`,
    /// `datetime_subsec()`, ...) on one connection. Call it once per
    /// connection, right after opening it.
    ///
    /// ```swift
    /// var handle: OpaquePointer?
    /// sqlite3_open(":memory:", &handle)
    /// try RawConnection.install(on: handle!)
    /// ```
    ///
    /// Installing reads no schema, so a database file cannot make it fail.
    /// While a file whose schema names `swift_callback()`, a test control or
    /// another guarded function (from an index, a view, a trigger, ...) is
    /// open, every call of those functions is refused instead, naming the
    /// object: see <doc:SecurityModel#A-file-that-names-a-guarded-function>.
    public static func install(on connection: OpaquePointer) throws(SQLiteTriggersError) {
        var message: UnsafeMutablePointer<CChar>?
        let resultCode = sqlitetriggers_register_v2(connection, &message)
        defer { sqlite3_free(message) }
        guard resultCode == SQLITE_OK else {
            throw SQLiteTriggersError(
                resultCode: resultCode,
                message: message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(resultCode)))
        }
    }
}

/// The one wording for work refused on a read-only connection (a GRDB pool's
/// reader, or a file opened read-only), which never commits: `subject`
/// names the work, `consequence` what would silently never happen, and
/// `remedy` what to do instead.
package func readOnlyRefusal(_ subject: String, consequence: String, remedy: String) -> String {
    "\(subject): this connection is read-only (a DatabasePool reader, or a file opened read-only) and never commits, "
        + "so \(consequence): \(remedy)"
}
