// sqlitetriggers-migrate: the primary-key migration for shell users.
//
//   swift run sqlitetriggers-migrate [--uuidv7] [--seed N] DATABASE TABLE...
//
// Converts the tables' integer keys to UUID text keys exactly as
// migratePrimaryKeys(_:tables:uuidFunction:) does, in one transaction, and
// prints each table's row count. Exits 1, changing nothing, on any refusal
// or error, with the reason on standard error.
import Foundation
import SQLiteTriggersGRDB

var arguments = Array(CommandLine.arguments.dropFirst())
var uuidFunction = UUIDFunction.uuid
var seed: Int64?
while let option = arguments.first, option.hasPrefix("--") {
    arguments.removeFirst()
    switch option {
    case "--uuidv7": uuidFunction = .uuidv7
    case "--seed":
        guard let value = arguments.first.flatMap(Int64.init) else {
            FileHandle.standardError.write(Data("sqlitetriggers-migrate: --seed needs an integer\n".utf8))
            exit(2)
        }
        seed = value
        arguments.removeFirst()
    default:
        FileHandle.standardError.write(Data("sqlitetriggers-migrate: unknown option \(option)\n".utf8))
        exit(2)
    }
}
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: sqlitetriggers-migrate [--uuidv7] [--seed N] DATABASE TABLE...\n".utf8))
    exit(2)
}
let (path, tables) = (arguments[0], Array(arguments.dropFirst()))
do {
    guard FileManager.default.fileExists(atPath: path) else {
        throw PrimaryKeyMigrationError(table: tables[0], reason: "no database file at \(path)")
    }
    var config = Configuration()
    config.prepareDatabase { db in try db.installSQLiteTriggers() }
    let dbQueue = try DatabaseQueue(path: path, configuration: config)
    try dbQueue.writeWithoutTransaction { db in
        if let seed { try db.seedRandom(seed) }
        try migratePrimaryKeys(db, tables: tables, uuidFunction: uuidFunction)
        for table in tables {
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQLQuoting.identifier(table))") ?? 0
            print("\(table): \(count) rows now keyed by UUID")
        }
    }
} catch {
    FileHandle.standardError.write(Data("sqlitetriggers-migrate: \(error)\n".utf8))
    exit(1)
}
