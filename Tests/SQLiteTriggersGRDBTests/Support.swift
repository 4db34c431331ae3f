import Foundation
import SQLiteTriggersGRDB

/// The two GRDB writers every delivery test runs on.
enum WriterKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case queue, pool
    var description: String { rawValue }
}

/// A writer with the extension installed on every connection; a pool
/// lives in a temporary file, removed when the returned cleanup runs.
func makeWriter(_ kind: WriterKind) throws -> (any DatabaseWriter, cleanup: () -> Void) {
    switch kind {
    case .queue:
        return (try DatabaseQueue(configuration: installingConfiguration()), {})
    case .pool:
        let path = temporaryDatabasePath()
        let pool = try DatabasePool(path: path, configuration: installingConfiguration())
        return (pool, { removeDatabaseFiles(path) })
    }
}

/// Removes a database file and the WAL files a pool leaves beside it.
func removeDatabaseFiles(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// A value several threads may read and change.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

/// A table whose inserts call swift_callback('inserted', new.v).
let insertedSchema = """
    CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE);
    CREATE TEMP TRIGGER t_ai AFTER INSERT ON t BEGIN SELECT swift_callback('inserted', new.v); END;
    """

/// Runs a program to its end, with its standard output and error together.
func runProcess(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, output)
}

/// Runs the sqlitetriggers-migrate command built beside the tests.
func runMigrateCommand(_ arguments: [String]) throws -> (status: Int32, output: String) {
    try runProcess(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("sqlitetriggers-migrate"), arguments)
}
