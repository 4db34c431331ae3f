import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

@TriggerTable("everyWriterNotes") struct EveryWriterNote { var id: Int64; var title: String; var createdAt: Date?; var updatedAt: Date? }
@TriggerTable("everyWriterLists") struct EveryWriterList { var id: Int64; var title: String }
@TriggerTable("everyWriterTags") struct EveryWriterTag { var id: Int64; var noteID: Int64 }
@TriggerTable("versionedNotes") struct VersionedNote { var id: Int64; var version: Int; var createdAt: Date?; var updatedAt: Date? }
@TriggerTable("auxNotes") struct AuxNote { var id: Int64; var createdAt: Date?; var updatedAt: Date?; static let schemaName = "aux" }
@TriggerTable("auxNotes") struct MainNote { var id: Int64; var createdAt: Date?; var updatedAt: Date? }

private enum EveryWriter {
    static let atMostTwoTags = EveryWriterTag.createTempTrigger("everyWriterTags_at_most_two", before: .insert { new in
        .raise(.abort, "A note can have at most 2 tags.", when: EveryWriterTag.count { $0.noteID == new.noteID } >= 2)
    })
    static let neverEmpty = EveryWriterList.createTempTrigger(after: .delete(when: { _ in !EveryWriterList.exists() }) { _ in
        EveryWriterList.insert { $0.title = "Notes" }
    })
    static let rules = RuleSet {
        EveryWriterNote.afterInsertTouch(\.createdAt)
        EveryWriterNote.afterUpdateTouch(\.updatedAt)
        atMostTwoTags
        neverEmpty
    }
    static let schema = """
        CREATE TABLE everyWriterNotes(id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', createdAt TEXT, updatedAt TEXT);
        CREATE TABLE everyWriterLists(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
        CREATE TABLE everyWriterTags(id INTEGER PRIMARY KEY, noteID INTEGER NOT NULL);
        INSERT INTO everyWriterLists(title) VALUES ('Home');
        """

    /// A file migrated as an app does: the tables, then the rules.
    static func migratedFile() throws -> (pool: DatabasePool, cleanup: () -> Void) {
        let path = temporaryDatabasePath()
        let pool = try DatabasePool(path: path, configuration: installingConfiguration())
        var migrator = DatabaseMigrator()
        migrator.registerMigration("tables") { db in try db.execute(sql: schema) }
        migrator.registerMigration("rules every writer obeys") { db in try rules.installPersistently(db) }
        try migrator.migrate(pool)
        return (pool, { removeDatabaseFiles(path) })
    }
}

/// The sqlite3 shell on `path`, with the extension loaded or not: its
/// output, and whether it succeeded.
private func shell(_ path: String, loading: Bool, _ sql: String) throws -> (status: Int32, output: String) {
    let shell = ProcessInfo.processInfo.environment["SQLITE3"] ?? "sqlite3"
    let library = packageRoot.appendingPathComponent("build/libsqlitetriggers").path
    return try runProcess(URL(fileURLWithPath: "/usr/bin/env"),
                          [shell, "-batch", "-bail", "-cmd", ".timeout 10000"] + (loading ? ["-cmd", ".load \(library)"] : []) + [path, sql])
}

/// datetime_subsec()'s format, which GRDB decodes as a Date.
private func isSubsecondTime(_ text: String?) -> Bool {
    text?.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$"#, options: .regularExpression) != nil
}

@Suite(.serialized) struct PersistentRuleTests {
    // MARK: - Rendering

    @Test func aPersistentRuleIsItsTempTriggerInTheFileWithTheTimeOfEveryWriter() throws {
        let touch = EveryWriterNote.afterUpdateTouch(\.updatedAt)
        let sql = try #require(try DatabaseQueue(configuration: installingConfiguration()).write { db in
            try db.execute(sql: EveryWriter.schema)
            try RuleSet([touch]).installPersistently(db)
            return try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'trigger'")
        })
        #expect(sql == """
            CREATE TRIGGER "\(touch.name)"
            AFTER UPDATE ON "everyWriterNotes"
            FOR EACH ROW
            WHEN "new"."updatedAt" IS "old"."updatedAt"
            BEGIN
              UPDATE "everyWriterNotes"
              SET "updatedAt" = coalesce(sqlite_compileoption_get(-7319), strftime('%Y-%m-%d %H:%M:%f', 'now'))
              WHERE "rowid" = "new"."rowid" AND ("updatedAt" IS NOT coalesce(sqlite_compileoption_get(-7319), strftime('%Y-%m-%d %H:%M:%f', 'now')));
            END
            """)
        #expect(touch.sql.hasPrefix("CREATE TEMP TRIGGER IF NOT EXISTS \"\(touch.name)\"\nAFTER UPDATE ON \"main\".\"everyWriterNotes\""))
    }

    /// A rule written as SQL (by hand, or by StructuredQueries) persists
    /// the same way: TEMP and the schema go, `datetime_subsec()` becomes
    /// the time of every writer, and a name in a comment or a string stays.
    @Test func aRuleWrittenAsSQLPersistsToo() throws {
        let rule = TempTrigger(sql: """
            CREATE TEMP TRIGGER IF NOT EXISTS temp.notes_touch AFTER UPDATE OF title ON main.everyWriterNotes
            BEGIN UPDATE everyWriterNotes SET updatedAt = datetime_subsec ( ), title = 'datetime_subsec()' -- datetime_subsec()
            WHERE rowid = new.rowid; END
            """)
        let sql = try DatabaseQueue(configuration: installingConfiguration()).write { db in
            try db.execute(sql: EveryWriter.schema)
            try RuleSet([rule]).installPersistently(db)
            return try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'trigger'")
        }
        #expect(sql == """
            CREATE TRIGGER "notes_touch" AFTER UPDATE OF title ON everyWriterNotes
            BEGIN UPDATE everyWriterNotes SET updatedAt = coalesce(sqlite_compileoption_get(-7319), strftime('%Y-%m-%d %H:%M:%f', 'now')), title = 'datetime_subsec()' -- datetime_subsec()
            WHERE rowid = new.rowid; END
            """)
    }

    // MARK: - Every writer

    @Test func theShellAndPythonWithoutTheExtensionObeyEveryRule() throws {
        let (pool, cleanup) = try EveryWriter.migratedFile()
        defer { cleanup() }
        var result = try shell(pool.path, loading: false, """
            INSERT INTO everyWriterNotes(id, title) VALUES (1, 'from the shell');
            UPDATE everyWriterNotes SET updatedAt = '2000-01-01 00:00:00.000' WHERE id = 1;
            SELECT updatedAt FROM everyWriterNotes WHERE id = 1;
            UPDATE everyWriterNotes SET title = 'edited' WHERE id = 1;
            SELECT createdAt, updatedAt FROM everyWriterNotes WHERE id = 1;
            DELETE FROM everyWriterLists;
            SELECT title FROM everyWriterLists;
            """)
        #expect(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n").map(String.init)
        // A value the statement set wins; then an edit that leaves it alone is stamped.
        #expect(lines.first == "2000-01-01 00:00:00.000")
        let stamps = lines.dropFirst().first?.split(separator: "|").map(String.init) ?? []
        #expect(stamps.count == 2 && stamps.allSatisfy(isSubsecondTime) && stamps[1] != "2000-01-01 00:00:00.000", "\(lines)")
        #expect(lines.last == "Notes")      // the invariant: at least one list
        result = try shell(pool.path, loading: false, """
            INSERT INTO everyWriterTags(noteID) VALUES (1), (1);
            INSERT INTO everyWriterTags(noteID) VALUES (1);
            """)
        #expect(result.status != 0 && result.output.contains("A note can have at most 2 tags."), "\(result.output)")
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM everyWriterTags") } == 2)

        let python = try runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
            db.execute("INSERT INTO everyWriterNotes(id, title) VALUES (2, 'from Python')")
            print(db.execute("SELECT createdAt, updatedAt FROM everyWriterNotes WHERE id = 2").fetchone())
            """, pool.path])
        #expect(python.status == 0, "\(python.output)")
        let fromPython = try pool.read { db in try Row.fetchOne(db, sql: "SELECT createdAt, updatedAt FROM everyWriterNotes WHERE id = 2") }
        #expect(isSubsecondTime(fromPython?["createdAt"]) && isSubsecondTime(fromPython?["updatedAt"]))
    }

    /// A rule set's insert touch and update touch of a table stamp a new
    /// row in one write (three writes before: the update touch fired on the
    /// insert touch's UPDATE), and a new row's updatedAt is still its
    /// creation time. The durable log sees one insert from every writer: the
    /// stamp takes back the change its own UPDATE logged (ext/log_rules.c).
    @Test func aNewRowsStampsAreOneWriteForEveryWriter() throws {
        let (pool, cleanup) = try EveryWriter.migratedFile()
        defer { cleanup() }
        let insertTouch = try #require(EveryWriter.rules.rules.first { $0.name == EveryWriterNote.afterInsertTouch(\.createdAt).name })
        #expect(insertTouch.sql.contains(#"SET "createdAt" = coalesce("createdAt", datetime_subsec()), "updatedAt" = datetime_subsec()"#))
        try pool.write { db in
            try db.installDurableLog(for: ["everyWriterNotes"])
            _ = try db.startDurableConsumer("audit")
        }
        #expect(try shell(pool.path, loading: false, "INSERT INTO everyWriterNotes(id, title) VALUES (1, 'shell')").status == 0)
        #expect(try shell(pool.path, loading: true, "INSERT INTO everyWriterNotes(id, title) VALUES (2, 'shell with .load')").status == 0)
        try pool.write { db in try db.execute(sql: "INSERT INTO everyWriterNotes(id, title) VALUES (3, 'app')") }
        let changes = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT rowKey, kind FROM sqlitetriggers_changes ORDER BY id").map { "\($0[0] as Int64) \($0[1] as String)" }
        }
        #expect(changes == ["1 insert", "2 insert", "3 insert"])
        for row in try pool.read({ db in try Row.fetchAll(db, sql: "SELECT createdAt, updatedAt FROM everyWriterNotes") }) {
            #expect(isSubsecondTime(row["createdAt"]) && row["createdAt"] as String? == row["updatedAt"] as String?)
        }
        let batch = try pool.read { db in try db.durableBatch(for: "audit", of: FeedTable("everyWriterNotes") { _ in () }, net: false) }
        #expect(batch.changes.map(\.kind) == [.inserted, .inserted, .inserted])
        // An insert that gives createdAt is not touched: its updatedAt is
        // the statement's, as before.
        try pool.write { db in
            try db.execute(sql: "INSERT INTO everyWriterNotes(id, title, createdAt) VALUES (4, 'given', '2000-01-01 00:00:00.000')")
        }
        #expect(try pool.read { db in try String.fetchOne(db, sql: "SELECT coalesce(updatedAt, 'NULL') FROM everyWriterNotes WHERE id = 4") } == "NULL")
        // REPLACE with recursive_triggers ON, from a writer without the
        // extension: one stamp write, text, and the stamp's change taken back
        // (the REPLACE logs the old row's deletion and the new one's insert).
        let replaced = try shell(pool.path, loading: false, """
            PRAGMA recursive_triggers = ON;
            INSERT OR REPLACE INTO everyWriterNotes(id, title) VALUES (1, 'replaced');
            SELECT typeof(createdAt), typeof(updatedAt), createdAt = updatedAt FROM everyWriterNotes WHERE id = 1;
            SELECT count(*) FROM sqlitetriggers_changes WHERE rowKey = 1 AND kind = 'update' AND id > (SELECT max(id) FROM sqlitetriggers_changes WHERE rowKey = 1 AND kind = 'insert') - 1;
            """)
        #expect(replaced.status == 0 && replaced.output == "text|text|1\n0\n", "\(replaced.output)")
    }

    /// One write is one change in the durable log from every writer (the
    /// shell with and without the extension, Python, the app), an INSERT
    /// and an UPDATE alike, whether the log came before the rules or after
    /// them; uninstalling the log gives the rules their own text back.
    @Test(arguments: [false, true])
    func aWriteIsOneChangeFromEveryWriterWhicheverCameFirst(logFirst: Bool) throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let pool = try DatabasePool(path: path, configuration: installingConfiguration())
        try pool.write { db in
            try db.execute(sql: EveryWriter.schema)
            if logFirst { try db.installDurableLog(for: ["everyWriterNotes"]) }
            try EveryWriter.rules.installPersistently(db)
            if !logFirst { try db.installDurableLog(for: ["everyWriterNotes"]) }
        }
        let stamps = try pool.read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'everyWriterNotes' AND sql LIKE '%UPDATE \"sqlitetriggers_log\" SET \"tableId\" = 0, \"kind\" = 0, \"rowKey\" = NULL WHERE changes() = 1%'")
        }
        #expect(stamps.count == 3, "the insert touch, its kept stamp and the update touch")
        #expect(try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }.isEmpty)
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT sqlitetriggers_log_check()") } == 1)
        func write(_ id: Int, _ writer: String) throws {
            let insert = "INSERT INTO everyWriterNotes(id, title) VALUES (\(id), '\(writer)')"
            let update = "UPDATE everyWriterNotes SET title = 'edited by \(writer)' WHERE id = \(id)"
            let blank = "UPDATE everyWriterNotes SET createdAt = NULL, title = 'saved by \(writer)' WHERE id = \(id)"
            switch writer {
            case "shell", "shell with .load":
                let result = try shell(path, loading: writer != "shell", "\(insert); \(update); \(blank);")
                #expect(result.status == 0, "\(result.output)")
            case "Python":
                let python = try runProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
                    import sqlite3, sys
                    db = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
                    for sql in sys.argv[2:]: db.execute(sql)
                    """, path, insert, update, blank])
                #expect(python.status == 0, "\(python.output)")
            default:
                for sql in [insert, update, blank] { try pool.write { db in try db.execute(sql: sql) } }
            }
        }
        for (id, writer) in ["shell", "shell with .load", "Python", "app"].enumerated() { try write(id + 1, writer) }
        let changes = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT rowKey, kind FROM sqlitetriggers_changes ORDER BY id").map { "\($0[0] as Int64) \($0[1] as String)" }
        }
        #expect(changes == (1...4).flatMap { ["\($0) insert", "\($0) update", "\($0) update"] }, "\(changes)")
        for row in try pool.read({ db in try Row.fetchAll(db, sql: "SELECT createdAt, updatedAt FROM everyWriterNotes") }) {
            #expect(isSubsecondTime(row["createdAt"]) && isSubsecondTime(row["updatedAt"]), "every stamp was written")
        }
        try pool.write { db in try db.execute(sql: "SELECT sqlitetriggers_log_uninstall('everyWriterNotes')") }
        #expect(try pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'everyWriterNotes' AND sql LIKE '%sqlitetriggers_log%'")
        } == 0)
        #expect(try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }.isEmpty)
    }

    /// Folding happens only where it gives the same rows: not when the update
    /// touch stamps something other than the clock (it could read a column
    /// the insert touch just set), not when both set a column, and not
    /// across schemas (an attacker found each changing the rows).
    @Test func touchesAreFoldedOnlyWhereTheRowsComeOutTheSame() throws {
        /// Whether the set's insert touch is not the one written alone.
        func folds(_ insertTouch: TempTrigger, _ others: [TempTrigger]) -> Bool {
            RuleSet([insertTouch] + others).rules[0].sql != insertTouch.sql
        }
        let created = VersionedNote.afterInsertTouch(\.createdAt)
        #expect(folds(created, [VersionedNote.afterUpdateTouch(\.updatedAt)]))
        #expect(!folds(created, [VersionedNote.afterUpdateTouch { $0.updatedAt = .now; $0.version = $0.version + 1 }]))
        #expect(!folds(VersionedNote.afterInsertTouch { $0.createdAt = .now; $0.updatedAt = .now },
                       [VersionedNote.afterUpdateTouch(\.updatedAt)]))
        #expect(!folds(MainNote.afterInsertTouch(\.createdAt), [AuxNote.afterUpdateTouch(\.updatedAt)]))
        #expect(!folds(created, [VersionedNote.afterUpdateTouch(\.updatedAt),
                                 VersionedNote.createTempTrigger("versionedNotes_touched_again", after: .touch { $0.updatedAt = .now })]))
    }

    @Test func connectionsWithTheExtensionStampWithTheAppsClock() throws {
        let (pool, cleanup) = try EveryWriter.migratedFile()
        defer { cleanup() }
        // GRDB's transactionDate, to the millisecond.
        let written = try pool.write { db -> Date in
            try db.execute(sql: "INSERT INTO everyWriterNotes(id, title) VALUES (1, 'a')")
            return try db.transactionDate
        }
        let createdAt = try pool.read { db in try Date.fetchOne(db, sql: "SELECT createdAt FROM everyWriterNotes WHERE id = 1") }
        #expect(abs((createdAt ?? .distantPast).timeIntervalSince(written)) < 0.001)
        // A pinned clock, in the shell with the extension, with trusted_schema OFF.
        let result = try shell(pool.path, loading: true, """
            PRAGMA trusted_schema = OFF;
            SELECT sqlitetriggers_pin_clock('2031-02-03 04:05:06.789');
            UPDATE everyWriterNotes SET title = 'b' WHERE id = 1;
            SELECT updatedAt FROM everyWriterNotes WHERE id = 1;
            """)
        #expect(result.status == 0 && result.output.hasSuffix("2031-02-03 04:05:06.789\n"), "\(result.output)")
        // And without the extension, trusted_schema OFF: SQLite's time.
        let plain = try shell(pool.path, loading: false, """
            PRAGMA trusted_schema = OFF;
            UPDATE everyWriterNotes SET title = 'c' WHERE id = 1;
            SELECT updatedAt FROM everyWriterNotes WHERE id = 1;
            """)
        #expect(plain.status == 0 && isSubsecondTime(plain.output.trimmingCharacters(in: .newlines))
                && !plain.output.hasPrefix("2031"), "\(plain.output)")
        // A GRDB connection without the extension, in this process.
        var config = Configuration()
        config.busyMode = .timeout(10)
        let other = try DatabaseQueue(path: pool.path, configuration: config)
        let stampedWithoutUs = try other.write { db -> String? in
            try db.execute(sql: "UPDATE everyWriterNotes SET updatedAt = '2000-01-01 00:00:00.000' WHERE id = 1")
            try db.execute(sql: "UPDATE everyWriterNotes SET title = 'd' WHERE id = 1")
            return try String.fetchOne(db, sql: "SELECT updatedAt FROM everyWriterNotes WHERE id = 1")
        }
        #expect(isSubsecondTime(stampedWithoutUs) && stampedWithoutUs != "2000-01-01 00:00:00.000")
        // The schema guard finds nothing of ours in the file: guarded calls work.
        try pool.write { db in
            try db.execute(sql: "PRAGMA trusted_schema = OFF")
            #expect(try String.fetchOne(db, sql: "SELECT sqlitetriggers_change_feed('everyWriterNotes')") != nil)
        }
    }

    // MARK: - Refusals

    @Test func rulesThatCallOurFunctionsOrTheAppsStayTemp() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in
            try db.execute(sql: EveryWriter.schema)
            db.add(function: DatabaseFunction("appSlug", argumentCount: 1, pure: true) { $0[0].storage.value.map { "\($0)" } })
        }
        let notify = EveryWriterNote.createTempTrigger(after: .insert { new in .callback("noteAdded", new.id) })
        let uuidTitle = EveryWriterNote.afterUpdateTouch { $0.title = TypedSQL(unchecked: "uuidv7()") }
        let slug = EveryWriterNote.afterUpdateTouch { $0.title = TypedSQL(unchecked: "appSlug(\"new\".\"title\")") }
        let tomorrow = EveryWriterNote.afterUpdateTouch { $0.updatedAt = .now.modified("+1 day") }
        let cases: [(TempTrigger, String)] = [
            (notify, "it calls swift_callback(), a function of SQLiteTriggers"),
            (uuidTitle, "it calls uuidv7(), a function of SQLiteTriggers"),
            (slug, "it calls appSlug(), which this connection defines and SQLite does not"),
            (tomorrow, "only .now, datetime_subsec() without arguments, persists"),
        ]
        for (rule, reason) in cases {
            #expect {
                try dbQueue.write { db in try RuleSet { EveryWriter.atMostTwoTags; rule }.installPersistently(db) }
            } throws: { error in
                "\(error)".contains("rule \"\(rule.name)\" cannot be installed persistently") && "\(error)".contains(reason)
                    && "\(error)".contains("Keep this rule TEMP")
            }
        }
        // All or nothing: the valid rule before each refused one was not written either.
        #expect(try dbQueue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' OR name = 'sqlitetriggers_rules'") } == 0)
        // A table that is not in the file (a TEMP one), and a trigger of the file's own.
        try dbQueue.write { db in
            try db.execute(sql: "CREATE TEMP TABLE scratch(id INTEGER PRIMARY KEY, at TEXT)")
            try db.execute(sql: "CREATE TRIGGER \"everyWriterTags_at_most_two\" BEFORE INSERT ON everyWriterTags BEGIN SELECT 1; END")
        }
        #expect {
            try dbQueue.write { db in try EveryWriter.rules.installPersistently(db) }
        } throws: { error in
            "\(error)".contains("the file already has a trigger \"everyWriterTags_at_most_two\" that no rule set installed")
        }
    }

    @Test func aRuleIsPersistentOrTempNeverBoth() throws {
        let (pool, cleanup) = try EveryWriter.migratedFile()
        defer { cleanup() }
        #expect {
            try EveryWriter.rules.install(in: pool)
        } throws: { error in "\(error)".contains("is a persistent rule of the file") && "\(error)".contains("it would run twice") }
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in try db.execute(sql: EveryWriter.schema) }
        try EveryWriter.rules.install(in: dbQueue)
        #expect {
            try dbQueue.write { db in try EveryWriter.rules.installPersistently(db) }
        } throws: { error in "\(error)".contains("this connection has it as a TEMP rule") }
    }

    // MARK: - Migrations and drift

    @Test func installingAgainIsIdempotentAndAChangedRuleReplacesTheOld() throws {
        let (pool, cleanup) = try EveryWriter.migratedFile()
        defer { cleanup() }
        func schemaVersion() throws -> Int { try pool.read { db in try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0 } }
        let before = try schemaVersion()
        try pool.write { db in try EveryWriter.rules.installPersistently(db) }
        #expect(try schemaVersion() == before)
        #expect(try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }.isEmpty)

        // The named rule changes in code: drift says so, a migration replaces it.
        let atMostThree = EveryWriterTag.createTempTrigger("everyWriterTags_at_most_two", before: .insert { new in
            .raise(.abort, "A note can have at most 3 tags.", when: EveryWriterTag.count { $0.noteID == new.noteID } >= 3)
        })
        let changed = RuleSet { EveryWriterNote.afterUpdateTouch(\.updatedAt); atMostThree }
        let drift = try pool.read { db in try changed.persistentRuleDrift(db) }
        #expect(Set(drift.map(\.kind)) == [.changed, .notInRuleSet])
        #expect(drift.first { $0.kind == .changed }?.rule == "everyWriterTags_at_most_two")
        #expect(Set(drift.filter { $0.kind == .notInRuleSet }.map(\.rule)) == [EveryWriterNote.afterInsertTouch(\.createdAt).name, EveryWriter.neverEmpty.name])
        #expect(drift[0].description.contains("install the rule set again in a new migration"))
        try pool.write { db in try changed.installPersistently(db) }
        #expect(try pool.read { db in try changed.persistentRuleDrift(db) }.isEmpty)
        let triggers = try pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'trigger' ORDER BY name") }
        #expect(triggers == [EveryWriterNote.afterUpdateTouch(\.updatedAt).name, "everyWriterTags_at_most_two"].sorted())
        let refused = try shell(pool.path, loading: false, "INSERT INTO everyWriterTags(noteID) VALUES (7), (7), (7), (7);")
        #expect(refused.output.contains("A note can have at most 3 tags."), "\(refused.output)")
    }

    @Test func theDriftCheckSeesRulesMissingDroppedByATableRecreationAndChangedInTheFile() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let pool = try DatabasePool(path: path, configuration: installingConfiguration())
        try pool.write { db in try db.execute(sql: EveryWriter.schema) }
        let missing = try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }
        #expect(missing.map(\.kind) == Array(repeating: .missing, count: 4))
        try pool.write { db in try EveryWriter.rules.installPersistently(db) }

        // A migration recreates the notes table, as SQLite's ALTER TABLE procedure does.
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE new_everyWriterNotes(id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', createdAt TEXT, updatedAt TEXT, pinned INTEGER NOT NULL DEFAULT 0);
                INSERT INTO new_everyWriterNotes(id, title, createdAt, updatedAt) SELECT id, title, createdAt, updatedAt FROM everyWriterNotes;
                DROP TABLE everyWriterNotes;
                ALTER TABLE new_everyWriterNotes RENAME TO everyWriterNotes;
                """)
        }
        let dropped = try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }
        #expect(dropped.map(\.rule) == [EveryWriterNote.afterInsertTouch(\.createdAt).name, EveryWriterNote.afterUpdateTouch(\.updatedAt).name])
        #expect(dropped.allSatisfy { $0.kind == .dropped && $0.tableName == "everyWriterNotes" })
        try pool.write { db in try EveryWriter.rules.installPersistently(db) }
        #expect(try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }.isEmpty)

        // Someone edits a rule's trigger in the shell.
        let edited = try shell(path, loading: false, """
            DROP TRIGGER "everyWriterTags_at_most_two";
            CREATE TRIGGER "everyWriterTags_at_most_two" BEFORE INSERT ON everyWriterTags BEGIN SELECT 1; END;
            """)
        #expect(edited.status == 0, "\(edited.output)")
        let changed = try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }
        #expect(changed == [PersistentRuleDrift(rule: "everyWriterTags_at_most_two", tableName: "everyWriterTags", kind: .changed)])
        // A set without that rule would drop it: not a trigger changed by hand.
        #expect {
            try pool.write { db in try RuleSet { EveryWriterNote.afterUpdateTouch(\.updatedAt) }.installPersistently(db) }
        } throws: { error in
            "\(error)".contains("it was changed in the file since it was installed") && "\(error)".contains("Drop it (or restore it) in a migration first")
        }
        // Nor does the set that has it replace it: an install replaces only
        // what the registry records it wrote (a registry row alone must not
        // hand over a trigger). A migration drops the edited one first.
        #expect {
            try pool.write { db in try EveryWriter.rules.installPersistently(db) }
        } throws: { error in
            "\(error)".contains("the file's trigger \"everyWriterTags_at_most_two\" is not what sqlitetriggers_rules records as installed")
        }
        #expect(changed[0].description.contains("drop it in that migration first"))
        try pool.write { db in
            try db.execute(sql: "DROP TRIGGER everyWriterTags_at_most_two")
            try EveryWriter.rules.installPersistently(db)
        }
        #expect(try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }.isEmpty)
    }

    // MARK: - A registry the file planted

    /// `sqlitetriggers_rules` is read from the file, which others write:
    /// each shape here, planted before the install, is refused with an
    /// error naming the table and the remedy, by the install, the drift
    /// check and a TEMP install, and the file is left as it was. (Before,
    /// duplicate names and a NULL trapped the process, and the others
    /// failed with SQLite's "no such column" or wrote through a view.)
    @Test(arguments: [
        ("no primary key, a name twice", """
            CREATE TABLE sqlitetriggers_rules(triggerName TEXT, rule TEXT, tableName TEXT, sql TEXT);
            INSERT INTO sqlitetriggers_rules VALUES ('t', 't', 'everyWriterNotes', 'CREATE TRIGGER "t" AFTER INSERT ON everyWriterNotes BEGIN SELECT 1; END');
            INSERT INTO sqlitetriggers_rules SELECT * FROM sqlitetriggers_rules;
            """),
        ("a name twice, in two cases", """
            CREATE TABLE sqlitetriggers_rules(triggerName TEXT PRIMARY KEY NOT NULL, rule TEXT NOT NULL, tableName TEXT NOT NULL, sql TEXT NOT NULL) WITHOUT ROWID;
            INSERT INTO sqlitetriggers_rules VALUES ('t', 't', 'everyWriterNotes', 'CREATE TRIGGER "t" AFTER INSERT ON everyWriterNotes BEGIN SELECT 1; END');
            INSERT INTO sqlitetriggers_rules VALUES ('T', 't', 'everyWriterNotes', 'CREATE TRIGGER "T" AFTER INSERT ON everyWriterNotes BEGIN SELECT 1; END');
            """),
        ("a NULL sql", """
            CREATE TABLE sqlitetriggers_rules(triggerName TEXT PRIMARY KEY, rule TEXT, tableName TEXT, sql TEXT);
            INSERT INTO sqlitetriggers_rules VALUES ('t', 't', 'everyWriterNotes', NULL);
            """),
        ("a number for a name", """
            CREATE TABLE sqlitetriggers_rules(triggerName PRIMARY KEY, rule, tableName, sql);
            INSERT INTO sqlitetriggers_rules VALUES (7, 't', 'everyWriterNotes', 'CREATE TRIGGER "7" AFTER INSERT ON everyWriterNotes BEGIN SELECT 1; END');
            """),
        ("missing columns", "CREATE TABLE sqlitetriggers_rules(triggerName TEXT PRIMARY KEY NOT NULL);"),
        ("a view", """
            CREATE VIEW sqlitetriggers_rules AS SELECT 'everyWriterTags_at_most_two' AS triggerName, 'x' AS rule,
              'everyWriterTags' AS tableName, 'CREATE TRIGGER "everyWriterTags_at_most_two" BEFORE INSERT ON everyWriterTags BEGIN SELECT 1; END' AS sql;
            """),
        ("the right shape, with a trigger that rewrites it", """
            CREATE TABLE sqlitetriggers_rules(triggerName TEXT PRIMARY KEY NOT NULL, rule TEXT NOT NULL, tableName TEXT NOT NULL, sql TEXT NOT NULL) WITHOUT ROWID;
            CREATE TRIGGER keep AFTER DELETE ON sqlitetriggers_rules BEGIN INSERT INTO sqlitetriggers_rules SELECT old.triggerName, old.rule, old.tableName, old.sql; END;
            """),
    ])
    func aRegistryOfAnotherShapeIsRefusedNamingTheTable(shape: String, planted: String) throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in try db.execute(sql: EveryWriter.schema + planted) }
        func schema() throws -> [String] {
            try dbQueue.read { db in try String.fetchAll(db, sql: "SELECT type || ' ' || name FROM sqlite_schema ORDER BY 1") }
        }
        let before = try schema()
        func namesTheTableAndTheRemedy(_ error: any Error) -> Bool {
            let message = "\(error)"
            return error is DatabaseError && message.contains("the file's table \"sqlitetriggers_rules\" is not the registry")
                && message.contains("rename or drop that table") && message.contains("then install the rule set again")
        }
        #expect { try dbQueue.write { db in try EveryWriter.rules.installPersistently(db) } } throws: { namesTheTableAndTheRemedy($0) }
        #expect { try dbQueue.read { db in try EveryWriter.rules.persistentRuleDrift(db) } } throws: { namesTheTableAndTheRemedy($0) }
        #expect { try EveryWriter.rules.install(in: dbQueue) } throws: { namesTheTableAndTheRemedy($0) }
        #expect(try schema() == before, "\(shape): a refusal leaves the file as it was")
    }

    /// A row of the registry is trusted with a DROP only when the file's
    /// trigger is exactly what it records, in the shape an install writes:
    /// a row forged for a trigger the user wrote by hand (naming it with
    /// any SQL, or copying its SQL) makes the install refuse, naming the
    /// trigger, and the trigger stays. Deleting the row, as the error
    /// says, lets the install go on, the trigger still kept.
    @Test func aRegistryRowForgedForAUsersTriggerNeverMakesAnInstallDropIt() throws {
        let (pool, cleanup) = try EveryWriter.migratedFile()
        defer { cleanup() }
        let audit = "CREATE TRIGGER audit AFTER INSERT ON everyWriterNotes BEGIN INSERT INTO everyWriterLists(title) VALUES ('audited'); END"
        func auditTrigger() throws -> String? {
            try pool.read { db in try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'audit'") }
        }
        try pool.write { db in try db.execute(sql: audit) }

        // 1. A row naming the user's trigger, with SQL of its own, and a
        // rule of that name in the set: the install must not replace it.
        let auditRule = EveryWriterNote.createTempTrigger("audit", after: .insert { _ in
            EveryWriterList.insert { $0.title = "ours" }
        })
        try pool.write { db in
            try db.execute(sql: """
                INSERT INTO sqlitetriggers_rules VALUES ('audit', 'audit', 'everyWriterNotes',
                  'CREATE TRIGGER "audit" AFTER INSERT ON "everyWriterNotes" BEGIN SELECT 1; END')
                """)
        }
        #expect {
            try pool.write { db in try RuleSet(EveryWriter.rules.rules + [auditRule]).installPersistently(db) }
        } throws: { error in
            "\(error)".contains("rule \"audit\" cannot be installed persistently: the file's trigger \"audit\" is not what "
                + "sqlitetriggers_rules records as installed")
        }
        #expect(try auditTrigger() == audit)

        // 2. A row copying the trigger's SQL exactly, and a set without it:
        // the install must not drop it as a rule it no longer has.
        try pool.write { db in
            try db.execute(sql: """
                UPDATE sqlitetriggers_rules SET sql = (SELECT sql FROM sqlite_schema WHERE name = 'audit') WHERE triggerName = 'audit'
                """)
        }
        #expect {
            try pool.write { db in try EveryWriter.rules.installPersistently(db) }
        } throws: { error in
            "\(error)".contains("the file's trigger \"audit\" is not what sqlitetriggers_rules records as installed "
                + "(its SQL is not in the shape an install writes)")
        }
        #expect(try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }.map(\.kind) == [.notInRuleSet])
        #expect(try auditTrigger() == audit)

        // 3. A row copying it, recorded on another table.
        try pool.write { db in
            try db.execute(sql: "UPDATE sqlitetriggers_rules SET tableName = 'everyWriterTags' WHERE triggerName = 'audit'")
        }
        #expect {
            try pool.write { db in try EveryWriter.rules.installPersistently(db) }
        } throws: { error in "\(error)".contains("(it is recorded under another name or table)") }
        #expect(try auditTrigger() == audit)

        // The remedy the error names: the row goes, the trigger stays.
        try pool.write { db in
            try db.execute(sql: "DELETE FROM sqlitetriggers_rules WHERE triggerName = 'audit'")
            try EveryWriter.rules.installPersistently(db)
        }
        #expect(try auditTrigger() == audit)
        #expect(try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }.isEmpty)
    }

    /// migratePrimaryKeys recreates tables, keeping their triggers as written:
    /// the persistent rules survive it, and still stamp integer-to-UUID rows.
    @Test func thePrimaryKeyMigrationKeepsThePersistentRules() throws {
        let (pool, cleanup) = try EveryWriter.migratedFile()
        defer { cleanup() }
        try pool.write { db in try db.execute(sql: "INSERT INTO everyWriterNotes(id, title) VALUES (1, 'a')") }
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            try migratePrimaryKeys(db, tables: ["everyWriterNotes"])
        }
        #expect(try pool.read { db in try EveryWriter.rules.persistentRuleDrift(db) }.isEmpty)
        let result = try shell(pool.path, loading: false, """
            UPDATE everyWriterNotes SET updatedAt = NULL;
            UPDATE everyWriterNotes SET title = 'b';
            SELECT typeof(id), updatedAt FROM everyWriterNotes;
            """)
        let columns = result.output.trimmingCharacters(in: .newlines).split(separator: "|").map(String.init)
        #expect(columns.first == "text" && isSubsecondTime(columns.last), "\(result.output)")
    }
}
