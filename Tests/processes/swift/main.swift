// The Swift side of Tests/processes/durable_log.py: a writer and an
// exactly-once consumer of the durable log, through SQLiteTriggersGRDB, in
// processes of their own.
//
//   durable-log-process writer PATH        runs the transactions read from
//       standard input (one JSON array of SQL statements per line) on a
//       DatabasePool with SQLiteTriggers installed, so its changes carry
//       their transaction; prints the log id range of each committed one
//   durable-log-process consumer PATH NAME STOPFILE
//       keeps the tables swift_lists, swift_reminders and swift_tags equal
//       to lists, reminders and tags with observeDurableChanges, until
//       STOPFILE exists and the log holds nothing for it
import Foundation
import GRDB
import SQLiteTriggersGRDB

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: durable-log-process writer|consumer PATH ...\n".utf8))
    exit(2)
}
var configuration = Configuration()
configuration.busyMode = .timeout(60)
configuration.prepareDatabase { db in
    try db.installSQLiteTriggers()
    try db.execute(sql: "PRAGMA foreign_keys = ON")
}
/// A pool in WAL mode; in a rollback-journal file, a queue, since a pool
/// would switch the file to WAL under the other processes.
var probe = Configuration()
probe.busyMode = .timeout(60)
let journalMode = try DatabaseQueue(path: arguments[2], configuration: probe).read { db in
    try String.fetchOne(db, sql: "PRAGMA journal_mode")
}
let pool: any DatabaseWriter = journalMode == "wal"
    ? try DatabasePool(path: arguments[2], configuration: configuration)
    : try DatabaseQueue(path: arguments[2], configuration: configuration)

/// The tables, their key columns and all their columns.
let tables: [(name: String, key: [String], columns: [String])] = [
    ("lists", ["id"], ["id", "title", "position"]),
    ("reminders", ["id"], ["id", "listId", "title", "done"]),
    ("tags", ["name", "owner"], ["name", "owner", "note"]),
]

switch arguments[1] {
case "writer":
    var ranges: [[Int64]] = []
    while let line = readLine() {
        guard let statements = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String] else { continue }
        try pool.writeWithoutTransaction { db in
            var first: Int64 = 0
            for sql in statements {
                if sql == "COMMIT" {
                    let last = try db.durableLogEnd()
                    try db.execute(sql: sql)
                    if last >= first { ranges.append([first, last]) }
                    continue
                }
                do {
                    try db.execute(sql: sql)
                } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                    continue    // a failing statement; the transaction goes on
                }
                if sql == "BEGIN IMMEDIATE" { first = try db.durableLogEnd() + 1 }
            }
        }
    }
    print(String(decoding: try JSONSerialization.data(withJSONObject: ranges), as: UTF8.self))

case "consumer":
    let name = arguments[3], stopFile = arguments[4]
    let feedTables = tables.map { table in
        FeedTable(table.name) { row in table.columns.map { row[$0] as DatabaseValue } }
    }
    let failure = LockedError()
    let observation = try pool.observeDurableChanges(to: feedTables, consumer: name, pollInterval: 0.02,
                                                     onError: { failure.set($0) }) { db, batch in
        for change in batch.changes {
            guard let table = tables.first(where: { $0.name == change.tableName }) else { continue }
            let condition = table.key.map { "\($0) = ?" }.joined(separator: " AND ")
            try db.execute(sql: "DELETE FROM swift_\(table.name) WHERE \(condition)", arguments: StatementArguments(change.key))
            if let values = change.record {
                try db.execute(sql: "INSERT INTO swift_\(table.name) VALUES (\(table.columns.map { _ in "?" }.joined(separator: ", ")))",
                               arguments: StatementArguments(values))
            }
        }
    }
    while true {
        if let error = failure.error {
            FileHandle.standardError.write(Data("consumer \(name): \(error)\n".utf8))
            exit(1)
        }
        if FileManager.default.fileExists(atPath: stopFile) {
            let drained = try pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT position FROM sqlitetriggers_log_consumers WHERE name = ?",
                                   arguments: [name]) == db.durableLogEnd()
            }
            if drained { break }
        }
        Thread.sleep(forTimeInterval: 0.02)
    }
    observation.cancel()

default:
    FileHandle.standardError.write(Data("unknown mode \(arguments[1])\n".utf8))
    exit(2)
}

/// The first error an observation reported.
final class LockedError: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: (any Error)?
    var error: (any Error)? { lock.lock(); defer { lock.unlock() }; return stored }
    func set(_ error: any Error) { lock.lock(); if stored == nil { stored = error }; lock.unlock() }
}
