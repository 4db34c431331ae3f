import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// A server in memory for the article's code: what the uploader sent, and
/// the versions and deletions the next download returns.
private final class ArticleServer: ArticleSync.NotesServer, @unchecked Sendable {
    let sent = Locked([ArticleSync.Outgoing]())
    let pending = Locked((notes: [ArticleSync.Note](), deleted: [ArticleSync.Tombstone]()))

    func send(_ changes: [ArticleSync.Outgoing]) async throws { sent.mutate { $0 += changes } }

    func changes(after cursor: Int64) async throws -> (notes: [ArticleSync.Note], deleted: [ArticleSync.Tombstone], cursor: Int64) {
        var next = (notes: [ArticleSync.Note](), deleted: [ArticleSync.Tombstone]())
        pending.mutate { swap(&$0, &next) }
        return (next.notes, next.deleted, cursor + 1)
    }

    /// What was sent, as text: "upsert id title updatedAt", "delete id deletedAt".
    var sentText: [String] {
        sent.value.map { change in
            switch change {
            case .upsert(let note): "upsert \(note.id) \(note.title) \(note.updatedAt)"
            case .delete(let gone): "delete \(gone.id) \(gone.deletedAt)"
            }
        }
    }
}

/// Runs the "Syncing with a server" article's code (ArticleSync.swift, the
/// article's first Swift block verbatim) and its schema (the article's SQL
/// block), as a new user's app built from the article would.
@Suite(.serialized) struct ArticleSyncTests {
    static let article = "Sources/SQLiteTriggersGRDB/Documentation.docc/SyncingWithAServer.md"

    /// The first ```sql block of the article's section `heading`.
    static func sqlBlock(_ heading: String) throws -> String {
        let text = try String(contentsOf: packageRoot.appendingPathComponent(article), encoding: .utf8) + "\n## "
        let section = try ReadmeQuickStartTests.between("\n" + heading + "\n", "\n## ", in: text)
        return String(try ReadmeQuickStartTests.between("```sql\n", "```", in: String(section)))
    }

    /// The article's schema (its CREATE TABLE, without the demonstration
    /// INSERT and SELECT that follow it in the block).
    static func schema() throws -> String {
        let block = try sqlBlock("## Last writer wins")
        return String(try #require(block.components(separatedBy: "\nINSERT").first)) + "\n"
    }

    @Test func theArticleShowsExactlyThisCode() throws {
        let source = try String(contentsOf: packageRoot.appendingPathComponent(
            "Tests/SQLiteTriggersGRDBTests/Readme/ArticleSync.swift"), encoding: .utf8)
        let code = try ReadmeQuickStartTests.between("// BEGIN article outbox", "// END article outbox", in: source)
        let block = try ReadmeQuickStartTests().readmeBlock("## The outbox")
        #expect(ReadmeQuickStartTests.codeLines(block) == ReadmeQuickStartTests.codeLines(code))
    }

    /// The article's schema is for every writer: the sqlite3 shell WITHOUT
    /// the extension runs it, and an INSERT that leaves `updatedAt` out
    /// gets datetime_subsec()'s format from the default. (With `DEFAULT
    /// (datetime_subsec())`, as the article said before, the shell fails:
    /// "unknown function: datetime_subsec()".)
    @Test func theArticlesSchemaWorksInTheShellWithoutTheExtension() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let block = try Self.sqlBlock("## Last writer wins")
        #expect(!block.contains(".load"))
        let shell = ProcessInfo.processInfo.environment["SQLITE3"] ?? "sqlite3"
        let result = try runProcess(URL(fileURLWithPath: "/usr/bin/env"), [shell, "-batch", "-bail", path, block])
        #expect(result.status == 0, "\(result.output)")
        let printed = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(printed.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$"#, options: .regularExpression) != nil, "\(printed)")
        // The block's comment shows that shape too.
        #expect(block.contains(#/-- \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}/#))
    }

    /// A device built from the article: the article's schema, the log with
    /// tombstones. The server deletes two rows this device has; one was
    /// edited here after that deletion and not yet uploaded. The article's
    /// downloader must keep that edit (before, it deleted every id the
    /// server deleted), delete the other, and its uploader then sends the
    /// edit, and never the server's own changes back.
    @Test func theDownloaderNeverDeletesANewerLocalEditAndTheUploaderSendsIt() async throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let dbPool = try DatabasePool(path: path, configuration: installingConfiguration())
        let schema = try Self.schema()
        var migrator = DatabaseMigrator()
        // The article's step 1: the log, and the uploader's consumer, in
        // the migration (a consumer the uploader made on its first run
        // would start at the end of the log, after the edit below).
        let step1 = try ReadmeQuickStartTests.between("1. In a migration", "\n2. ", in: String(contentsOf: packageRoot.appendingPathComponent(Self.article), encoding: .utf8))
        #expect(step1.contains("try db.installDurableLog(for: [\"notes\"], tombstones: true)")
                && step1.contains("try db.startDurableConsumer(\"upload\")"), "\(step1)")
        migrator.registerMigration("notes") { db in
            try db.execute(sql: schema)
            try db.installDurableLog(for: ["notes"], tombstones: true)
            try db.startDurableConsumer("upload")
        }
        try migrator.migrate(dbPool)
        let sync = ArticleSync(dbPool: dbPool)
        let server = ArticleServer()
        func rows() async throws -> [String] {
            try await dbPool.read { db in
                try Row.fetchAll(db, sql: "SELECT id, title, updatedAt FROM notes ORDER BY id").map { "\($0[0]!) \($0[1]!) \($0[2]!)" }
            }
        }

        // The server's versions arrive.
        server.pending.mutate {
            $0.notes = [.init(id: "a", title: "a1", updatedAt: "2026-01-01 00:00:00.000"),
                        .init(id: "b", title: "b1", updatedAt: "2026-01-01 00:00:00.000"),
                        .init(id: "c", title: "c1", updatedAt: "2026-01-01 00:00:02.000")]
        }
        var cursor = try await sync.download(from: server, after: 0)
        // An edit here, at 00:00:03, not yet uploaded.
        try await dbPool.write { db in
            try db.execute(sql: "UPDATE notes SET title = 'a2 typed here', updatedAt = '2026-01-01 00:00:03.000' WHERE id = 'a'")
        }
        // Another device deleted all three at 00:00:02: before the local
        // edit of a, after b's version, at the very time of c's (a tie).
        server.pending.mutate {
            $0.deleted = ["a", "b", "c"].map { .init(id: $0, deletedAt: "2026-01-01 00:00:02.000") }
        }
        cursor = try await sync.download(from: server, after: cursor)
        #expect(try await rows() == ["a a2 typed here 2026-01-01 00:00:03.000"],
                "the newer local edit stays; the older version and the tie are deleted")
        // An older version of a, sent again, does not overwrite the edit either.
        server.pending.mutate { $0.notes = [.init(id: "a", title: "a0", updatedAt: "2026-01-01 00:00:01.000")] }
        cursor = try await sync.download(from: server, after: cursor)
        #expect(try await rows() == ["a a2 typed here 2026-01-01 00:00:03.000"])

        // The uploader sends the local edit, and none of the downloads.
        let uploader = Task { try await sync.upload(to: server) }
        defer { uploader.cancel() }
        func waitUntilSent(_ count: Int) async throws {
            for _ in 0..<3000 where server.sentText.count < count {      // up to 30 s on a loaded machine
                try await Task.sleep(nanoseconds: 10_000_000)
            }
        }
        try await waitUntilSent(1)
        #expect(server.sentText == ["upsert a a2 typed here 2026-01-01 00:00:03.000"])
        // A local deletion, at a pinned time: sent with its time as the
        // log stores it, bit for bit (timeText).
        // (Read in its transaction: the acknowledgement compacts it away.)
        let stored = try await dbPool.write { db -> String? in
            try db.pinClock(to: Date(timeIntervalSince1970: 1_767_225_604.007))     // 2026-01-01 00:00:04.007
            defer { try? db.pinClock(to: nil) }
            try db.execute(sql: "DELETE FROM notes WHERE id = 'a'")
            return try String.fetchOne(db, sql: "SELECT time FROM sqlitetriggers_log_tombstones ORDER BY id DESC LIMIT 1")
        }
        #expect(stored == "2026-01-01 00:00:04.007")
        try await waitUntilSent(2)
        uploader.cancel()
        _ = await uploader.result
        #expect(server.sentText == ["upsert a a2 typed here 2026-01-01 00:00:03.000", "delete a 2026-01-01 00:00:04.007"])
    }
}
