import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

@Suite struct ReadmeQuickStartTests {
    static let root = packageRoot

    /// Code lines only: no imports, comment-only lines, blank lines or
    /// indentation, and no `static` (the test nests declarations in an enum).
    static func codeLines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .map { $0.hasPrefix("static let ") ? String($0.dropFirst("static ".count)) : $0 }
            .filter { !$0.isEmpty && !$0.hasPrefix("//") && !$0.hasPrefix("import ") }
    }

    static func between(_ begin: String, _ end: String, in text: String) throws -> Substring {
        let start = try #require(text.range(of: begin)).upperBound
        let stop = try #require(text.range(of: end, range: start..<text.endIndex)).lowerBound
        return text[start..<stop]
    }

    /// The README, then every DocC article: the sections a test runs may
    /// live in either (the README is the front page; the depth is in DocC).
    static func documentation() throws -> [(path: String, text: String)] {
        let sources = root.appendingPathComponent("Sources")
        let articles = FileManager.default.enumerator(atPath: sources.path)!.compactMap { $0 as? String }
            .filter { $0.contains(".docc/") && $0.hasSuffix(".md") }.sorted()
        return try (["README.md"] + articles.map { "Sources/" + $0 }).map { path in
            (path, try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8))
        }
    }

    @Test func theReadmeShowsExactlyTheCodeThisTestRuns() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try Self.between("## Swift quick start", "\n## ", in: readme)
        let block = try Self.between("```swift\n", "```", in: String(section))
        let source = try String(contentsOf: Self.root.appendingPathComponent("Tests/SQLiteTriggersGRDBTests/Readme/ReadmeQuickStart.swift"), encoding: .utf8)
        let code = try Self.between("// BEGIN README declarations", "// END README declarations", in: source)
            + "\n" + Self.between("// BEGIN README statements\n", "// END README statements\n", in: source)
            + "\n" + Self.between("// BEGIN README statements, continued", "// END README statements, continued", in: source)
        #expect(Self.codeLines(block) == Self.codeLines(code))
        // Its imports are those this test's file compiles with: the block
        // compiles as written, Foundation (UUID, Date) included on Linux.
        func imports(_ text: some StringProtocol) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.hasPrefix("import ") }
        }
        #expect(imports(block) == imports(source))
    }

    /// A connection setting such as `PRAGMA recursive_triggers` set in one
    /// `write` reaches that one connection only (a pool's other connections,
    /// a reopened queue never see it): the README shows them in
    /// `prepareDatabase`, never in a write.
    @Test func theReadmeSetsNoPragmaInAWrite() throws {
        let offending = try Self.documentation().flatMap { $0.text.split(separator: "\n") }.filter { line in
            line.contains("write {") && line.contains("PRAGMA ")
        }
        #expect(offending.isEmpty, "\(offending)")
    }

    @MainActor @Test func theQuickStartRuns() async throws {
        let path = FileManager.default.currentDirectoryPath + "/app.db"
        removeDatabaseFiles(path)
        defer { removeDatabaseFiles(path) }
        var completed: [String] = []
        let (dbQueue, observations) = try QuickStart.run { completed.append($0) }
        defer { observations.forEach { $0.cancel() } }
        for _ in 0..<500 where completed.isEmpty { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(completed == ["Buy milk"], "the typed event reaches main-actor observers after commit")
        let milk = try #require(try await dbQueue.read { db in try QuickStart.Reminder.fetchOne(db) })
        #expect(milk.status == 1)
        #expect(milk.createdAt != nil, "stamped at insert, and kept by the record's update")
        #expect(milk.updatedAt == milk.createdAt, "one clock: both in the same transaction")
        #expect(try await dbQueue.read { db in try String.fetchOne(db, sql: "SELECT typeof(id) FROM reminders") } == "text")
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in try db.execute(sql: "UPDATE reminders SET title = ''") }
        }
        #expect(error.message == "A title cannot be empty.", "the RAISE rule refuses")
        // A later migration that recreates the table keeps the rules.
        var migrator = DatabaseMigrator()
        migrator.registerMigration("notes") { db in
            try db.execute(sql: """
                CREATE TABLE new_reminders(id TEXT PRIMARY KEY NOT NULL DEFAULT (uuid()), title TEXT NOT NULL,
                  status INTEGER NOT NULL DEFAULT 0, createdAt TEXT, updatedAt TEXT, notes TEXT NOT NULL DEFAULT '');
                INSERT INTO new_reminders(id, title, status, createdAt, updatedAt) SELECT id, title, status, createdAt, updatedAt FROM reminders;
                DROP TABLE reminders;
                ALTER TABLE new_reminders RENAME TO reminders;
                """)
        }
        try migrator.migrate(dbQueue)
        #expect(throws: DatabaseError.self) { try dbQueue.write { db in try db.execute(sql: "UPDATE reminders SET title = ''") } }
    }

    /// The first Swift block of the section under `heading`, in the README
    /// or the DocC article that holds it (exactly one may).
    func readmeBlock(_ heading: String) throws -> Substring {
        let holders = try Self.documentation().filter { $0.text.contains("\n" + heading) }
        try #require(holders.count == 1, "\(heading) is in \(holders.map(\.path))")
        let text = holders[0].text + "\n## "
        let start = try #require(text.range(of: "\n" + heading)).upperBound
        let end = try #require(text.range(of: "\n## ", range: start..<text.endIndex)).lowerBound
        return try Self.between("```swift\n", "```", in: String(text[start..<end]))
    }

    @Test func theReadmeShowsExactlyTheRulesAndMigrationThisTestRuns() throws {
        let source = try String(contentsOf: Self.root.appendingPathComponent("Tests/SQLiteTriggersGRDBTests/Readme/ReadmeExamples.swift"), encoding: .utf8)
        let rules = try Self.between("// BEGIN README rules declarations", "// END README rules declarations", in: source)
            + "\n" + Self.between("// BEGIN README rules statements", "// END README rules statements", in: source)
            + "\n" + Self.between("// BEGIN README rules install", "// END README rules install", in: source)
        #expect(Self.codeLines(try readmeBlock("## Typed triggers")) == Self.codeLines(rules))
        let constructsSource = try String(contentsOf: Self.root.appendingPathComponent("Tests/SQLiteTriggersGRDBTests/Readme/ReadmeConstructs.swift"), encoding: .utf8)
        let constructs = try ["declarations", "view", ""].map { part in
            try Self.between("// BEGIN README constructs\(part.isEmpty ? "\n" : " " + part)", "// END README constructs\(part.isEmpty ? "\n" : " " + part)", in: constructsSource)
        }.joined(separator: "\n")
        #expect(Self.codeLines(try readmeBlock("## Every builder construct")) == Self.codeLines(constructs))
        let feedSource = try String(contentsOf: Self.root.appendingPathComponent("Tests/SQLiteTriggersGRDBTests/Readme/ReadmeChangeFeed.swift"), encoding: .utf8)
        let feed = try Self.between("// BEGIN README change feed declarations", "// END README change feed declarations", in: feedSource)
            + "\n" + Self.between("// BEGIN README change feed statements", "// END README change feed statements", in: feedSource)
        #expect(Self.codeLines(try readmeBlock("## Change feeds")) == Self.codeLines(feed))
        let migration = try Self.between("// BEGIN README migration statements", "// END README migration statements", in: source)
        #expect(Self.codeLines(try readmeBlock("## Sync-ready primary keys")) == Self.codeLines(migration))
    }

    @Test func theReadmeMigrationAndRulesRun() throws {
        let path = temporaryDatabasePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try DatabaseQueue(path: path).write { db in try db.execute(sql: PrimaryKeyMigrationRealSchemaTests.searchableReminders) }
        var migrationConfig = Configuration()
        migrationConfig.prepareDatabase { db in try db.installSQLiteTriggers() }
        try ReadmeMigration.migrate(DatabaseQueue(path: path, configuration: migrationConfig))
        let found = try DatabaseQueue(path: path).read { db in try String.fetchAll(db, sql: PrimaryKeyMigrationRealSchemaTests.search) }
        #expect(found == ["Reminder 1", "Reminder 10"], "search still joins its reminders")
        let dbQueue = try DatabaseQueue(path: path, configuration: installingConfiguration())
        try ReadmeRules.install(dbQueue)
        let (versions, lists) = try dbQueue.write { db in
            let versions = try Int.fetchSet(db, sql: "SELECT uuid_version(id) FROM reminderTags")
            try db.execute(sql: "DELETE FROM remindersLists")
            return (versions, try String.fetchAll(db, sql: "SELECT title FROM remindersLists"))
        }
        #expect(versions == [8], "the README's migration ran")
        #expect(lists == ["Reminders"], "the README's rules are installed and work")
        let triggers = try dbQueue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'") }
        #expect(triggers == 7, "six rules; the insert touch has a companion that keeps its stamp")
    }
}
