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
                CREATE TABLE reminders(id BLOB PRIMARY KEY NOT NULL, title TEXT NOT NULL);
                CREATE TABLE searchIndex(id PRIMARY KEY NOT NULL, title TEXT NOT NULL);
                """)
        }
        let uploaded = Locked([String]())
        // How the example ended before the test stopped it, if it did: it
        // runs until cancelled, and ending early ends both consumers.
        let endedEarly = Locked<String?>(nil)
        let example = Task {
            do {
                try await ReadmeDurableLog.run(dbPool) { changes in
                    uploaded.mutate { $0 += changes.map { "\($0.kind) \($0.record?.title ?? "-")" } }
                }
                if !Task.isCancelled { endedEarly.mutate { $0 = "it returned" } }
            } catch where !Task.isCancelled {
                endedEarly.mutate { $0 = "it threw \(error)" }
            }
        }
        // Both consumers exist once the migration ran and they started
        // (up to 30 s, on two cores shared with the other tests).
        var consumersStarted = false
        for _ in 0..<3000 {
            let consumers = try? await dbPool.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlitetriggers_log_consumers")
            }
            if consumers == 2 { consumersStarted = true; break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(consumersStarted, "the example's two consumers did not start")
        // UUID keys as GRDB stores them (16-byte blobs), a title changed by
        // the app, and a row from the shell: the index follows every one.
        let milk = ReadmeDurableLog.Reminder(id: UUID(), title: "Buy milk")
        try await dbPool.write { db in try milk.insert(db) }
        let oatMilk = ReadmeDurableLog.Reminder(id: milk.id, title: "Buy oat milk")
        try await dbPool.write { db in try oatMilk.update(db) }
        let shell = try runProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                   ["sqlite3", "-cmd", ".timeout 10000", path,   // the app's consumers write too
                                    "INSERT INTO reminders VALUES (x'00112233445566778899aabbccddeeff', 'Call Sam')"])
        #expect(shell.status == 0, "\(shell.output)")
        var index: [String] = []
        for _ in 0..<6000 {       // up to 60 s, on two cores shared with the compilers of other tests
            index = try await dbPool.read { db in try String.fetchAll(db, sql: "SELECT title FROM searchIndex ORDER BY title") }
            if index == ["Buy oat milk", "Call Sam"] && uploaded.value.contains("inserted Call Sam") { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(endedEarly.value == nil, "the example ended before the test: \(endedEarly.value ?? "")")
        example.cancel()
        _ = await example.result
        #expect(index == ["Buy oat milk", "Call Sam"])
        #expect(try await dbPool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM searchIndex WHERE typeof(id) = 'blob'") } == 2)
        #expect(uploaded.value.contains("inserted Call Sam") && uploaded.value.contains { $0.hasSuffix("Buy oat milk") })
    }

    /// A change's key, typed: a UUID stored as GRDB's 16 bytes or as text.
    @Test func keysReadAsTheRecordsOwnType() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let dbQueue = try DatabaseQueue(path: path, configuration: installingConfiguration())
        let id = UUID()
        let batch = try dbQueue.write { db in
            try db.execute(sql: """
                CREATE TABLE reminders(id BLOB PRIMARY KEY NOT NULL, title TEXT NOT NULL);
                CREATE TABLE tagged(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL);
                CREATE TABLE pairs(a INT NOT NULL, b INT NOT NULL, PRIMARY KEY(a, b));
                """)
            try db.installDurableLog(for: ["reminders", "tagged", "pairs"])
            try db.startDurableConsumer("keys")
            try ReadmeDurableLog.Reminder(id: id, title: "blob key").insert(db)
            try db.execute(sql: "INSERT INTO tagged VALUES (?, 'text key')", arguments: [id.uuidString.lowercased()])
            try db.execute(sql: "INSERT INTO pairs VALUES (1, 2)")
            return try db.durableBatch(for: "keys", of: [FeedTable("reminders") { _ in () }, FeedTable("tagged") { _ in () },
                                                         FeedTable("pairs") { _ in () }])
        }
        #expect(batch.changes.map { $0.key(as: UUID.self) } == [id, id, nil])
        #expect(batch.changes.map { $0.key(as: String.self) } == [nil, id.uuidString.lowercased(), nil])
    }
}
