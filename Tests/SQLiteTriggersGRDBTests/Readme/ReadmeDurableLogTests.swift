import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// Runs the README's durable-log example, with a change from another
/// process: the sqlite3 shell, without the extension.
@Suite struct ReadmeDurableLogTests {
    @Test func theReadmeShowsExactlyThisExample() throws {
        let source = try String(contentsOf: ReadmeQuickStartTests.root.appendingPathComponent(
            "Tests/SQLiteTriggersGRDBTests/Readme/ReadmeDurableLog.swift"), encoding: .utf8)
        let example = try ReadmeQuickStartTests.between("// BEGIN README durable log", "// END README durable log", in: source)
        let block = try ReadmeQuickStartTests().readmeBlock("## Durable change log")
        #expect(ReadmeQuickStartTests.codeLines(block) == ReadmeQuickStartTests.codeLines(example))
    }

    @Test func theExampleSeesTheAppsAndTheShellsChanges() async throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let dbPool = try DatabasePool(path: path, configuration: installingConfiguration())
        try await dbPool.write { db in
            try db.execute(sql: """
                CREATE TABLE reminders(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL);
                CREATE TABLE searchIndex(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL);
                """)
        }
        let uploaded = Locked([String]())
        let example = Task {
            try await ReadmeDurableLog.run(dbPool) { changes in
                uploaded.mutate { $0 += changes.map { "\($0.kind) \($0.record?.title ?? "-")" } }
            }
        }
        // Both consumers exist once the migration ran and they started.
        for _ in 0..<500 {
            let consumers = try? await dbPool.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlitetriggers_log_consumers")
            }
            if consumers == 2 { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        try await dbPool.write { db in try ReadmeDurableLog.Reminder(id: "r1", title: "Buy milk").insert(db) }
        let shell = try runProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                   ["sqlite3", "-cmd", ".timeout 10000", path,   // the app's consumers write too
                                    "INSERT INTO reminders VALUES ('r2', 'Call Sam')"])
        #expect(shell.status == 0, "\(shell.output)")
        var index: [String] = []
        for _ in 0..<3000 {       // up to 30 s: the consumers poll each second, on two shared cores
            index = try await dbPool.read { db in try String.fetchAll(db, sql: "SELECT title FROM searchIndex ORDER BY id") }
            if index.count == 2 && uploaded.value.count == 2 { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        example.cancel()
        _ = await example.result
        #expect(index == ["Buy milk", "Call Sam"])
        #expect(uploaded.value == ["inserted Buy milk", "inserted Call Sam"])
    }
}
