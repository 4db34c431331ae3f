// sqlitetriggers-migrate: the primary-key migration for shell users.
//
// Converts the tables' integer keys to UUID text keys exactly as
// migratePrimaryKeys(_:tables:...) does, in one transaction. Exits 1,
// changing nothing, on any refusal or error, with the reason on standard
// error; on a usage error, swift-argument-parser's status and message.
import ArgumentParser
import Foundation
import GRDB
import SQLiteTriggersGRDB

@main
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sqlitetriggers-migrate",
        abstract: "Makes the tables' integer primary keys UUID text keys.",
        discussion: """
            Rewrites the foreign keys between the tables too, in one transaction that changes \
            nothing if anything fails. Every row keeps its rowid: afterwards \
            SELECT rowid, id FROM TABLE maps each old id to its new UUID. While rows are \
            copied, progress goes to standard error when it is a terminal (--progress: always).
            """)

    @Argument(help: "The database file.")
    var database: String

    @Argument(help: "The tables to migrate, with every table that references them.")
    var tables: [String]

    @Flag(help: "New rows get uuidv7() keys (default: uuid()).")
    var uuidv7 = false

    @Option(help: ArgumentHelp("Derive the migrated ids reproducibly from N.", valueName: "N"))
    var seed: Int64?

    @Option(name: .customLong("reference"), help: ArgumentHelp(
        "Column C of table T holds ids of table P without a foreign key (an FTS UNINDEXED column, "
            + "an audit table): rewrite it too. Repeatable.", valueName: "T.C=P"))
    var references: [ReferenceArgument] = []

    @Option(name: .customLong("drop-unique"), help: ArgumentHelp(
        "Drop TABLE's UNIQUE constraints and indexes. Repeatable.", valueName: "TABLE"))
    var dropUnique: [String] = []

    @Option(name: .customLong("key-name"), help: "The key that tables without one gain.")
    var keyName = "id"

    @Flag(name: .customLong("dry-run"), help: "Print the plan and the warnings; change nothing.")
    var dryRun = false

    @Flag(help: "Show the copy's progress on standard error even when it is not a terminal.")
    var progress = false

    func run() throws {
        do {
            try migrate()
        } catch {
            FileHandle.standardError.write(Data("sqlitetriggers-migrate: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    private func migrate() throws {
        guard FileManager.default.fileExists(atPath: database) else {
            throw PrimaryKeyMigrationError(table: tables[0], reason: "no database file at \(database)")
        }
        var config = Configuration()
        config.prepareDatabase { db in try db.installSQLiteTriggers() }
        let dbQueue = try DatabaseQueue(path: database, configuration: config)
        let meter = (progress || isatty(STDERR_FILENO) != 0) && !dryRun ? ProgressMeter() : nil
        try dbQueue.writeWithoutTransaction { db in
            if let seed { try db.seedRandom(seed) }
            let report = try migratePrimaryKeys(
                db, tables: tables, uuidFunction: uuidv7 ? .uuidv7 : .uuid,
                extraReferences: references.map(\.reference), dropUniqueConstraints: dropUnique,
                addedKeyName: keyName, dryRun: dryRun,
                progress: { line in if !dryRun { print(line) } },
                rowsCopied: { meter?.show($0) })
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
    }
}

// MARK: - Arguments

/// `--reference T.C=P`.
struct ReferenceArgument: ExpressibleByArgument {
    let reference: ExtraReference

    init?(argument: String) {
        let parts = argument.split(separator: "=", maxSplits: 1)
        let source = parts.first.map { $0.split(separator: ".", maxSplits: 1) } ?? []
        guard parts.count == 2, source.count == 2 else { return nil }
        reference = ExtraReference(table: String(source[0]), column: String(source[1]), referencing: String(parts[1]))
    }
}

// MARK: - Progress

/// One line on standard error, rewritten in place as rows are copied:
/// rows done of rows, the share, and an estimate of the time left from the
/// rate so far.
final class ProgressMeter {
    private var started = Date()
    private var table = ""

    func show(_ step: MigrationProgress) {
        if step.table != table {
            table = step.table
            started = Date()
        }
        let share = step.rowCount == 0 ? 1 : Double(step.rowsCopied) / Double(step.rowCount)
        var line = "\(step.table): \(step.rowsCopied) of \(step.rowCount) rows (\(Int(share * 100))%)"
        let elapsed = Date().timeIntervalSince(started)
        if step.rowsCopied > 0 && step.rowsCopied < step.rowCount {
            let left = elapsed / Double(step.rowsCopied) * Double(step.rowCount - step.rowsCopied)
            line += ", about \(Int(left.rounded(.up))) s left"
        }
        let ending = step.rowsCopied >= step.rowCount ? "\n" : ""
        FileHandle.standardError.write(Data("\r\u{1B}[K\(line)\(ending)".utf8))
    }
}
