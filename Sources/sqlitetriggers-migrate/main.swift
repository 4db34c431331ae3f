// sqlitetriggers-migrate: the primary-key migration for shell users.
//
// Converts the tables' integer keys to UUID text keys exactly as
// migratePrimaryKeys(_:tables:...) does, in one transaction; see usage
// below. Exits 1, changing nothing, on any refusal or error, with the
// reason on standard error; 2 on a usage error.
import GRDB
import Foundation
import SQLiteTriggersGRDB

let usage = """
    usage: sqlitetriggers-migrate [options] DATABASE TABLE...

    Makes the tables' integer primary keys UUID text keys, rewriting the
    foreign keys between them, in one transaction that changes nothing if
    anything fails. Every row keeps its rowid: afterwards
    SELECT rowid, id FROM TABLE maps each old id to its new UUID.

    options:
      --uuidv7                  new rows get uuidv7() keys (default: uuid())
      --seed N                  derive the migrated ids reproducibly from N
      --reference T.C=P         column C of table T holds ids of table P
                                without a foreign key (an FTS UNINDEXED
                                column, an audit table): rewrite it too
      --drop-unique TABLE       drop TABLE's UNIQUE constraints and indexes
      --key-name NAME           the key that tables without one gain (id)
      --dry-run                 print the plan and the warnings; change nothing
      --help                    print this

    """

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("sqlitetriggers-migrate: \(message)\n".utf8))
    exit(status)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var uuidFunction = UUIDFunction.uuid
var seed: Int64?
var references: [ExtraReference] = []
var dropUnique: [String] = []
var keyName = "id"
var dryRun = false
@MainActor func value(of option: String) -> String {
    guard let value = arguments.first else { fail("\(option) needs a value\n\(usage)", status: 2) }
    arguments.removeFirst()
    return value
}
while let option = arguments.first, option.hasPrefix("--") {
    arguments.removeFirst()
    switch option {
    case "--help":
        print(usage, terminator: "")
        exit(0)
    case "--uuidv7": uuidFunction = .uuidv7
    case "--dry-run": dryRun = true
    case "--seed":
        guard let number = Int64(value(of: option)) else { fail("--seed needs an integer", status: 2) }
        seed = number
    case "--reference":
        let text = value(of: option)
        let parts = text.split(separator: "=", maxSplits: 1)
        let source = parts.first.map { $0.split(separator: ".", maxSplits: 1) } ?? []
        guard parts.count == 2, source.count == 2 else { fail("--reference needs TABLE.COLUMN=PARENT, not \(text)", status: 2) }
        references.append(ExtraReference(table: String(source[0]), column: String(source[1]), referencing: String(parts[1])))
    case "--drop-unique": dropUnique.append(value(of: option))
    case "--key-name": keyName = value(of: option)
    default: fail("unknown option \(option)\n\(usage)", status: 2)
    }
}
guard arguments.count >= 2 else { fail("a database and at least one table are needed\n\(usage)", status: 2) }
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
        let report = try migratePrimaryKeys(
            db, tables: tables, uuidFunction: uuidFunction, extraReferences: references,
            dropUniqueConstraints: dropUnique, addedKeyName: keyName, dryRun: dryRun,
            progress: { line in if !dryRun { print(line) } })
        if dryRun {
            print("-- dry run: nothing was changed. The migration would run:")
            for statement in report.statements { print("\(statement);") }
        } else {
            for table in tables {
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQLQuoting.identifier(table))") ?? 0
                print("\(table): \(count) rows now keyed by UUID")
            }
            print("old id -> new id: SELECT rowid, id FROM <table>")
        }
        for note in report.notes { print("note: \(note)") }
        for warning in report.warnings { print("warning: \(warning)") }
    }
} catch {
    fail("\(error)", status: 1)
}
