import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

@TriggerTable("everyWriterNotes") struct EveryWriterNote { var id: Int64; var title: String; var createdAt: Date?; var updatedAt: Date? }
@TriggerTable("everyWriterLists") struct EveryWriterList { var id: Int64; var title: String }
@TriggerTable("everyWriterTags") struct EveryWriterTag { var id: Int64; var noteID: Int64 }

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
        } throws: { error in "\(error)".contains("was changed in the file since it was installed: drop it (or restore it)") }
        try pool.write { db in try EveryWriter.rules.installPersistently(db) }
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
