import Foundation
import GRDB
import SQLiteTriggersGRDB

// The primary-key migration against the equivalent hand-written SQL: 1,000
// parents and 1,000,000 children with a foreign key, on fresh in-memory
// copies; both derive ids with the same function, so the difference is
// what migratePrimaryKeys adds (parsing, its checks of the values, and
// foreign_key_check on the integer keys before the copy). Then
// its peak memory, which must not grow with the table: 1,000,000 and
// 10,000,000 rows, each migrated in a process of its own, on a file.

func migrationSuite() throws {
    let children = 1_000_000
    var best = (handWritten: Double.infinity, migration: Double.infinity)
    // Each side on a queue of its own, made after the other's is freed, and
    // taking turns to go first: neither runs beside the other's million rows.
    for run in 0..<4 {
        for byHand in run % 2 == 0 ? [true, false] : [false, true] {
            let queue = try makeMigrationQueue(children: children)
            let elapsed = try seconds { try byHand ? migrateByHand(queue) : migrateAutomatically(queue) }
            let versions = try queue.read { db in try Int.fetchSet(db, sql: "SELECT uuid_version(parentID) FROM children") }
            precondition(versions == [8], "the migration did not convert the foreign keys")
            if byHand { best.handWritten = min(best.handWritten, elapsed) } else { best.migration = min(best.migration, elapsed) }
        }
    }
    report("primary-key migration, 1,000 parents and \(children) children", ours: "migratePrimaryKeys", best.migration,
           peer: "hand-written four-step SQL, same ids, rowids kept", best.handWritten, unit: "s", target: 1.1)

    let small = try migrationMemory(rows: 1_000_000), large = try migrationMemory(rows: 10_000_000)
    report("migration peak RSS, 10,000,000 rows (\(Int(large.seconds)) s)", ours: "migratePrimaryKeys", large.kib / 1024,
           peer: "the same, 1,000,000 rows (\(Int(small.seconds)) s)", small.kib / 1024, unit: "MiB", target: 1.1)
}

/// 1,000 parents and `children` children referencing them, in memory.
private func makeMigrationQueue(children: Int) throws -> DatabaseQueue {
    let queue = try makeQueue(trigger: nil, rows: 0)
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE parents(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            CREATE TABLE children(id INTEGER PRIMARY KEY, parentID INTEGER NOT NULL REFERENCES parents(id), title TEXT NOT NULL);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
            INSERT INTO parents(title) SELECT 'Parent ' || i FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(children))
            INSERT INTO children(parentID, title) SELECT 1 + i % 1000, 'Child ' || i FROM n;
            """)
    }
    return queue
}

/// The peer: the four steps written by hand, with the same derived ids.
private func migrateByHand(_ queue: DatabaseQueue) throws {
    try queue.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        try db.inTransaction {
            try db.execute(sql: """
                CREATE TABLE new_parents(id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()), title TEXT NOT NULL);
                INSERT INTO new_parents(rowid, id, title) SELECT rowid, sqlitetriggers_derived_uuid(:salt, 'parents', id), title FROM parents;
                CREATE TABLE new_children(id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()),
                  parentID TEXT NOT NULL REFERENCES parents(id), title TEXT NOT NULL);
                INSERT INTO new_children(rowid, id, parentID, title) SELECT rowid, sqlitetriggers_derived_uuid(:salt, 'children', id),
                  sqlitetriggers_derived_uuid(:salt, 'parents', parentID), title FROM children;
                DROP TABLE children;
                DROP TABLE parents;
                ALTER TABLE new_parents RENAME TO parents;
                ALTER TABLE new_children RENAME TO children;
                """, arguments: ["salt": Data(repeating: 7, count: 32)])
            return .commit
        }
    }
}

private func migrateAutomatically(_ queue: DatabaseQueue) throws {
    try queue.writeWithoutTransaction { db in _ = try migratePrimaryKeys(db, tables: ["parents", "children"]) }
}

/// The one migration callgrind counts (Tests/bench/migration_instructions.py
/// toggles collection on this function's name).
@inline(never) func measuredMigration(_ queue: DatabaseQueue, byHand: Bool) throws {
    try byHand ? migrateByHand(queue) : migrateAutomatically(queue)
}

/// `--migration-write VARIANT CHILDREN`: one migration of 1,000 parents
/// and CHILDREN children, by hand (VARIANT 0) or by migratePrimaryKeys (1).
func migrationWrite(variant: Int, children: Int) throws {
    let queue = try makeMigrationQueue(children: children)
    try measuredMigration(queue, byHand: variant == 0)
}

/// Runs this program with `--migration-memory rows`: (peak KiB, seconds).
func migrationMemory(rows: Int) throws -> (kib: Double, seconds: Double) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["--migration-memory", String(rows)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let fields = output.split(whereSeparator: \.isWhitespace).compactMap { Double($0) }
    precondition(process.terminationStatus == 0 && fields.count == 2, "the migration memory run failed: \(output)")
    return (fields[0], fields[1])
}

/// `--migration-memory N`: migrates a file of N rows in this process alone
/// and prints its peak RSS in KiB and the seconds taken.
func migrationMemoryChild(rows: Int) throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("sqlitetriggers-bench-\(rows).sqlite").path
    for suffix in ["", "-journal", "-wal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    defer { for suffix in ["", "-journal", "-wal"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
    var config = Configuration()
    config.prepareDatabase { db in try db.installSQLiteTriggers() }
    let queue = try DatabaseQueue(path: path, configuration: config)
    try queue.write { db in
        try db.execute(sql: """
            CREATE TABLE events(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
            INSERT INTO events(title) SELECT 'Event number ' || i FROM n;
            """)
    }
    let elapsed = try seconds {
        try queue.writeWithoutTransaction { db in _ = try migratePrimaryKeys(db, tables: ["events"]) }
    }
    // VmHWM: this process image's own peak (ru_maxrss would include the
    // parent's, which Linux carries across fork and exec).
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }?
        .split(whereSeparator: \.isWhitespace).dropFirst().first.map(String.init) ?? "0"
    print("\(peak)\t\(elapsed)")
}
