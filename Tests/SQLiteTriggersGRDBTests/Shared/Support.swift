import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

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

/// The package's root folder.
/// The package's root: this file is Tests/SQLiteTriggersGRDBTests/Shared/Support.swift.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// Type-checks a Swift source against the modules this test run was built
/// with (SQLiteTriggers, SQLiteTriggersGRDB, GRDB, the macros); returns the
/// diagnostics, or nil when it compiles.
func typecheckSource(_ source: String, warningsAsErrors: Bool = false, extraArguments: [String] = []) throws -> String? {
    let buildDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let modules = buildDirectory.appendingPathComponent("Modules")
    let cModuleMap = buildDirectory.appendingPathComponent("CSQLiteTriggers.build/module.modulemap")
    guard FileManager.default.fileExists(atPath: modules.path) else {
        Issue.record("no Modules folder next to the test binary at \(buildDirectory.path)")
        return nil
    }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("typecheck-\(UUID().uuidString).swift")
    try source.write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    // GRDB's C module, for sources that import SQLiteTriggersGRDB.
    let grdbModuleMap = packageRoot.appendingPathComponent(".build/checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap")
    let grdbFlags = FileManager.default.fileExists(atPath: grdbModuleMap.path)
        ? ["-Xcc", "-fmodule-map-file=\(grdbModuleMap.path)"] : []
    let (status, diagnostics) = try runProcess(URL(fileURLWithPath: "/usr/bin/env"), [
        "swiftc", "-typecheck", file.path, "-I", modules.path] + grdbFlags + [
        "-Xcc", "-fmodule-map-file=\(packageRoot.path)/Sources/SQLiteTriggersCSQLite/module.modulemap",
        "-Xcc", "-fmodule-map-file=\(cModuleMap.path)",
        "-load-plugin-executable",
        "\(buildDirectory.path)/SQLiteTriggersMacroPlugin-tool#SQLiteTriggersMacroPlugin"]
        + (warningsAsErrors ? ["-warnings-as-errors"] : []) + extraArguments)
    return status == 0 ? nil : diagnostics
}
