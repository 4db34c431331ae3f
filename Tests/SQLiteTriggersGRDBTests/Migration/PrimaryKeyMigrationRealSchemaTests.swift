import Foundation
import GRDB
@testable import SQLiteTriggersGRDB
import Testing

/// Schemas as real apps and tools write them, each on a real file: migrated
/// (then every row and relation checked) or refused (then the file is
/// unchanged).
@Suite struct PrimaryKeyMigrationRealSchemaTests {
    /// A file with the schema, a queue on it, and its cleanup.
    func makeFile(_ schema: String) throws -> (DatabaseQueue, cleanup: () -> Void) {
        let path = temporaryDatabasePath()
        let dbQueue = try DatabaseQueue(path: path, configuration: installingConfiguration())
        try dbQueue.write { db in try db.execute(sql: schema) }
        return (dbQueue, { removeDatabaseFiles(path) })
    }

    func migrate(_ dbQueue: DatabaseQueue, _ tables: [String]) throws {
        _ = try dbQueue.writeWithoutTransaction { db in try migratePrimaryKeys(db, tables: tables) }
    }

    @Test func singleQuotedNamesAreNamesToo() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE notes('id' INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE 'links'('id' INTEGER PRIMARY KEY, 'noteID' INTEGER REFERENCES 'notes'('id'));
            INSERT INTO notes VALUES (1, 'a'), (2, 'b');
            INSERT INTO links VALUES (10, 2);
            """)
        defer { cleanup() }
        try migrate(dbQueue, ["notes", "links"])
        try dbQueue.read { db throws in
            #expect(try Int.fetchSet(db, sql: "SELECT uuid_version(id) FROM notes") == [8])
            #expect(try String.fetchAll(db, sql: "SELECT n.body FROM links l JOIN notes n ON n.id = l.noteID") == ["b"])
        }
    }

    @Test func rowidsAreKeptSoTheOldIdsStayReachable() throws {
        let (dbQueue, cleanup) = try makeFile(integerRemindersSchema + """
            ;
            DELETE FROM reminders WHERE id IN (2, 5);          -- gaps: a renumbering would show
            INSERT INTO reminders(id, remindersListID, title) VALUES (1000, 1, 'Far away');
            """)
        defer { cleanup() }
        let tables = ["remindersLists", "reminders", "tags", "reminderTags"]
        let before = try dbQueue.read { db throws in
            try tables.map { try String.fetchAll(db, sql: "SELECT rowid || ' ' || quote(\($0 == "reminderTags" ? "tagID" : "title")) FROM \($0) ORDER BY rowid") }
        }
        try migrate(dbQueue, tables)
        try dbQueue.read { db throws in
            let after = try tables.map { table -> [String] in
                let column = table == "reminderTags" ? "(SELECT title FROM tags WHERE id = tagID)" : "title"
                return try String.fetchAll(db, sql: "SELECT rowid || ' ' || quote(\(column)) FROM \(table) ORDER BY rowid")
            }
            // Tags are compared by title after the migration: the ids changed.
            #expect(after[0] == before[0] && after[1] == before[1] && after[2] == before[2])
            #expect(after[3].count == before[3].count)
            // The mapping from an old id to its new UUID.
            let far = try String.fetchOne(db, sql: "SELECT id FROM reminders WHERE rowid = 1000")
            #expect(try String.fetchOne(db, sql: "SELECT title FROM reminders WHERE id = ?", arguments: [far]) == "Far away")
        }
    }

    @Test func anExternalContentFullTextIndexStillMatchesItsRows() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            CREATE VIRTUAL TABLE notesText USING fts5(body, content='notes', content_rowid='rowid');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
            INSERT INTO notes SELECT i * 3, 'note ' || i || CASE WHEN i % 50 = 0 THEN ' needle' ELSE '' END FROM n;
            DELETE FROM notes WHERE id % 7 = 0;
            INSERT INTO notesText(notesText) VALUES ('rebuild');
            """)
        defer { cleanup() }
        let query = "SELECT notes.body FROM notesText JOIN notes ON notes.rowid = notesText.rowid WHERE notesText MATCH 'needle' ORDER BY 1"
        let before = try dbQueue.read { db in try String.fetchAll(db, sql: query) }
        #expect(before.count == 6)
        try migrate(dbQueue, ["notes"])
        try dbQueue.write { db throws in
            #expect(try String.fetchAll(db, sql: query) == before)
            try db.execute(sql: "INSERT INTO notesText(notesText, rank) VALUES ('integrity-check', 1)")
        }
    }

    @Test func aKeylessTableWithARowidColumnKeepsItsRowidThroughAnotherName() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE events("rowid" TEXT, what TEXT);
            INSERT INTO events(oid, "rowid", what) VALUES (5, 'r5', 'five'), (9, 'r9', 'nine');
            """)
        defer { cleanup() }
        try migrate(dbQueue, ["events"])
        try dbQueue.read { db throws in
            #expect(try String.fetchAll(db, sql: "SELECT oid || ' ' || \"rowid\" || ' ' || what || ' ' || uuid_version(id) FROM events ORDER BY oid")
                    == ["5 r5 five 8", "9 r9 nine 8"])
        }
    }

    @Test(arguments: [
        ("CREATE TRIGGER logLinks AFTER INSERT ON notes BEGIN INSERT INTO links VALUES (new.id, 'created'); END",
         "trigger \"logLinks\" inserts into it without a column list, and it gains an \"id\" column: name the columns in that INSERT first"),
        ("CREATE TRIGGER copyLinks AFTER INSERT ON notes BEGIN REPLACE INTO \"links\" SELECT new.id, 'x'; END",
         "trigger \"copyLinks\" inserts into it without a column list, and it gains an \"id\" column: name the columns in that INSERT first"),
        ("CREATE VIEW allLinks AS SELECT * FROM links",
         "view \"allLinks\" selects * where it is used, and it gains an \"id\" column: name the columns in that view first"),
        ("CREATE VIEW linkedNotes AS SELECT n.body, l.* FROM notes n JOIN links l ON l.noteID = n.id",
         "view \"linkedNotes\" selects * where it is used, and it gains an \"id\" column: name the columns in that view first"),
    ])
    func aTableThatGainsAColumnRefusesWhatCountsItsColumns(_ dependent: String, _ reason: String) throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE links(noteID INTEGER REFERENCES notes(id), kind TEXT);
            \(dependent);
            INSERT INTO notes VALUES (1, 'a');
            """)
        defer { cleanup() }
        let before = try dbQueue.read(dump)
        let error = try #require(throws: PrimaryKeyMigrationError.self) { try migrate(dbQueue, ["notes", "links"]) }
        #expect(error.table == "links")
        #expect(error.reason == reason)
        #expect(try dbQueue.read(dump) == before)
    }

    @Test func namedColumnsAndCountStarAreFine() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE links(noteID INTEGER REFERENCES notes(id), kind TEXT);
            CREATE TRIGGER logLinks AFTER INSERT ON notes BEGIN INSERT INTO links(noteID, kind) VALUES (new.id, 'created'); END;
            CREATE VIEW linkCount AS SELECT count(*) AS n, 2 * 3 AS six FROM links;
            INSERT INTO notes VALUES (1, 'a');
            """)
        defer { cleanup() }
        try migrate(dbQueue, ["notes", "links"])
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO notes(body) VALUES ('b')")
            #expect(try Int.fetchOne(db, sql: "SELECT n FROM linkCount") == 2)
        }
    }

    @Test func aTableNamedLikeSQLitesOwnIsStillSeen() throws {
        // DB Browser for SQLite leaves tables named like this one.
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            CREATE TABLE sqlitebrowser_rename_column_new_table(noteID INTEGER REFERENCES notes(id));
            """)
        defer { cleanup() }
        let before = try dbQueue.read(dump)
        let error = try #require(throws: PrimaryKeyMigrationError.self) { try migrate(dbQueue, ["notes"]) }
        #expect(error.reason == "\"sqlitebrowser_rename_column_new_table\" references it but is not part of the migration")
        #expect(try dbQueue.read(dump) == before)
    }

    @Test func namesThatDifferInNonASCIICaseAreTwoTables() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE "Ä"(id INTEGER PRIMARY KEY, x TEXT);
            CREATE TABLE "ä"(id INTEGER PRIMARY KEY, y TEXT);
            CREATE TABLE "ö"(id INTEGER PRIMARY KEY, aID INTEGER REFERENCES "ä"(id));
            INSERT INTO "Ä" VALUES (1, 'upper'); INSERT INTO "ä" VALUES (1, 'lower'); INSERT INTO "ö" VALUES (1, 1);
            """)
        defer { cleanup() }
        try migrate(dbQueue, ["Ä", "ä", "ö"])
        try dbQueue.read { db throws in
            #expect(try Int.fetchOne(db, sql: "SELECT uuid_version(id) FROM \"Ä\"") == 8)
            #expect(try Int.fetchOne(db, sql: "SELECT uuid_version(id) FROM \"ä\"") == 8)
            #expect(try String.fetchOne(db, sql: "SELECT y FROM \"ö\" JOIN \"ä\" ON \"ä\".id = \"ö\".aID") == "lower")
        }
        // Left out, "Ä" does not count as "ä".
        let (other, cleanupOther) = try makeFile("""
            CREATE TABLE "ä"(id INTEGER PRIMARY KEY);
            CREATE TABLE "Ä"(aID INTEGER REFERENCES "ä"(id));
            """)
        defer { cleanupOther() }
        let error = try #require(throws: PrimaryKeyMigrationError.self) { try migrate(other, ["ä"]) }
        #expect(error.reason == "\"Ä\" references it but is not part of the migration")
    }

    /// The Reminders schema with its full-text index, whose reminderID is
    /// an UNINDEXED column outside any foreign key.
    static let searchableReminders = integerRemindersSchema + """
        ;
        CREATE VIRTUAL TABLE "reminderTexts" USING fts5("reminderID" UNINDEXED, "title", "notes", "tags", tokenize='trigram');
        INSERT INTO reminderTexts(reminderID, title, notes, tags)
          SELECT id, title, notes, '' FROM reminders;
        CREATE TABLE audit(reminder_id INTEGER, note TEXT);
        INSERT INTO audit SELECT id, 'created' FROM reminders;
        """
    static let search = """
        SELECT r.title FROM reminderTexts t JOIN reminders r ON r.id = t.reminderID
        WHERE reminderTexts MATCH '"nder 1"' ORDER BY r.title
        """

    @Test func searchStillJoinsWhenItsIdsAreNamedAsExtraReferences() throws {
        let (dbQueue, cleanup) = try makeFile(Self.searchableReminders)
        defer { cleanup() }
        let before = try dbQueue.read { db in try String.fetchAll(db, sql: Self.search) }
        #expect(before == ["Reminder 1", "Reminder 10"])
        let report = try dbQueue.writeWithoutTransaction { db in
            try migratePrimaryKeys(db, tables: reminderTables, extraReferences: [
                ExtraReference(table: "reminderTexts", column: "reminderID", referencing: "reminders"),
                ExtraReference(table: "audit", column: "reminder_id", referencing: "reminders"),
            ])
        }
        #expect(report.warnings == [])
        try dbQueue.read { db throws in
            #expect(try String.fetchAll(db, sql: Self.search) == before)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM audit JOIN reminders r ON r.id = audit.reminder_id") == 10)
        }
    }

    @Test func idsOutsideForeignKeysThatAreNotNamedAreReported() throws {
        let (dbQueue, cleanup) = try makeFile(Self.searchableReminders + """
            ;
            CREATE TABLE settings(key TEXT, lastListId INTEGER);
            INSERT INTO settings VALUES ('current', 2);
            """)
        defer { cleanup() }
        let report = try dbQueue.writeWithoutTransaction { db in
            try migratePrimaryKeys(db, tables: reminderTables)
        }
        #expect(report.warnings == [
            #""audit"."reminder_id" looks like it holds ids of "reminders" (by its name, and all 10 of its values are ids of "reminders") but is not a foreign key: its values will not match the new UUIDs; name it in extraReferences"#,
            #""reminderTexts"."reminderID" looks like it holds ids of "reminders" (by its name, and all 10 of its values are ids of "reminders") but is not a foreign key: its values will not match the new UUIDs; name it in extraReferences"#,
            #""settings"."lastListId" looks like it holds ids of "remindersLists" (all 1 of its values are ids of "remindersLists") but is not a foreign key: its values will not match the new UUIDs; name it in extraReferences"#,
        ])
    }

    @Test(arguments: [
        (ExtraReference(table: "audit", column: "missing", referencing: "reminders"),
         "audit", #"it has no column "missing" (named as an extra reference)"#),
        (ExtraReference(table: "audit", column: "reminder_id", referencing: "history"),
         "audit", #"its column "reminder_id" is named as referencing "history", which is not part of the migration"#),
        (ExtraReference(table: "strictAudit", column: "reminderID", referencing: "reminders"),
         "strictAudit", #"its column "reminderID" is an integer column of a STRICT table, which cannot hold the new UUIDs"#),
        (ExtraReference(table: "textAudit", column: "reminderID", referencing: "reminders"),
         "textAudit", #"its column "reminderID" holds 'A-17', which is not an integer id of "reminders""#),
    ])
    func extraReferencesAreCheckedBeforeAnythingChanges(_ reference: ExtraReference, _ table: String, _ reason: String) throws {
        let (dbQueue, cleanup) = try makeFile(Self.searchableReminders + """
            ;
            CREATE TABLE strictAudit(reminderID INTEGER) STRICT;
            CREATE TABLE textAudit(reminderID);
            INSERT INTO textAudit VALUES (1), ('A-17');
            """)
        defer { cleanup() }
        let before = try dbQueue.read(dump)
        let error = try #require(throws: PrimaryKeyMigrationError.self) {
            try dbQueue.writeWithoutTransaction { db in
                try migratePrimaryKeys(db, tables: reminderTables, extraReferences: [reference])
            }
        }
        #expect(error.table == table)
        #expect(error.reason == reason)
        #expect(try dbQueue.read(dump) == before)
    }

    /// The new CREATE TABLE of each table, after migrating them all.
    func migratedSchema(_ schema: String, _ tables: [String], dropUniqueConstraints: [String] = [],
                        addedKeyName: String = "id") throws -> (sql: [String], report: PrimaryKeyMigrationReport) {
        let (dbQueue, cleanup) = try makeFile(schema)
        defer { cleanup() }
        let report = try dbQueue.writeWithoutTransaction { db in
            try migratePrimaryKeys(db, tables: tables, dropUniqueConstraints: dropUniqueConstraints, addedKeyName: addedKeyName)
        }
        let sql = try dbQueue.read { db in
            try tables.map { try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = ?", arguments: [$0])! }
        }
        return (sql, report)
    }

    @Test func keysAsToolsWriteThemAreAccepted() throws {
        let (sql, report) = try migratedSchema("""
            CREATE TABLE "browser" ("id" INTEGER NOT NULL, "name" TEXT, PRIMARY KEY("id" AUTOINCREMENT));
            CREATE TABLE ascending (id INTEGER NOT NULL, name TEXT, PRIMARY KEY (id ASC));
            CREATE TABLE mysql (id int(11) NOT NULL, name varchar(255), PRIMARY KEY (id));
            CREATE TABLE fussy (
              id INTEGER PRIMARY KEY UNIQUE COLLATE NOCASE /* the key */ CHECK (id > 0),
              name TEXT
            );
            INSERT INTO browser(name) VALUES ('a'); INSERT INTO ascending VALUES (5, 'b');
            INSERT INTO mysql VALUES (7, 'c'); INSERT INTO fussy VALUES (9, 'd');
            """, ["browser", "ascending", "mysql", "fussy"])
        #expect(sql == [
            #"CREATE TABLE "browser" ("id" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()), "name" TEXT)"#,
            #"CREATE TABLE "ascending" (id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()), name TEXT)"#,
            #"CREATE TABLE "mysql" (id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()), name varchar(255))"#,
            """
            CREATE TABLE "fussy" (
              id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()) COLLATE NOCASE /* the key */,
              name TEXT
            )
            """,
        ])
        #expect(report.notes == [#""fussy": its primary key's CHECK (id > 0) was written for integers and is dropped"#])
    }

    @Test func uniqueConstraintsCanBeDroppedAndTheAddedKeyNamed() throws {
        let (sql, report) = try migratedSchema("""
            CREATE TABLE tags(id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE ON CONFLICT IGNORE, slug TEXT CONSTRAINT s UNIQUE, UNIQUE(title, slug));
            CREATE UNIQUE INDEX tagsBySlug ON tags(slug);
            CREATE INDEX tagsByTitle ON tags(title);
            CREATE TABLE taggings(tagID INTEGER REFERENCES tags(id), note TEXT);
            INSERT INTO tags VALUES (1, 'a', 'x'); INSERT INTO taggings VALUES (1, 'n');
            """, ["tags", "taggings"], dropUniqueConstraints: ["tags"], addedKeyName: "taggingID")
        #expect(sql == [
            #"CREATE TABLE "tags"(id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()), title TEXT NOT NULL, slug TEXT)"#,
            #"CREATE TABLE "taggings"("taggingID" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()), tagID TEXT REFERENCES tags(id), note TEXT)"#,
        ])
        #expect(report.notes == [#""tags": its unique index "tagsBySlug" is dropped"#])
    }

    /// An index that merely lists the key, partial or not, is rebuilt.
    /// GRDB's own synchronized full-text tables, made by GRDB: FTS5 keys
    /// them with content_rowid and its triggers, FTS4 with its triggers.
    /// Refused before anything changes; the remedy the message gives works.
    @Test(arguments: ["FTS5", "FTS4"])
    func aSynchronizedFullTextTableIsRefusedAndTheRemedyWorks(_ module: String) throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            INSERT INTO notes(title) VALUES ('alpha one'), ('beta two');
            """)
        defer { cleanup() }
        func createFullText(_ db: Database) throws {
            if module == "FTS5" {
                try db.create(virtualTable: "notesFTS", using: FTS5()) { t in t.synchronize(withTable: "notes"); t.column("title") }
            } else {
                try db.create(virtualTable: "notesFTS", using: FTS4()) { t in t.synchronize(withTable: "notes"); t.column("title") }
            }
        }
        try dbQueue.write(createFullText)
        let before = try dbQueue.read(dump)
        let error = try #require(throws: PrimaryKeyMigrationError.self) {
            try dbQueue.writeWithoutTransaction { db in try migratePrimaryKeys(db, tables: ["notes"]) }
        }
        #expect(error.reason.hasPrefix(#"its full-text table "notesFTS" uses "id" as its rowid"#), "\(error.reason)")
        #expect(try dbQueue.read(dump) == before, "nothing changed")
        // The remedy: drop it (GRDB drops its triggers too), migrate, create it again.
        try dbQueue.write { db in
            try db.drop(table: "notesFTS")
            for trigger in try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE '%notesFTS%'") {
                try db.execute(sql: "DROP TRIGGER \(SQLQuoting.identifier(trigger))")
            }
        }
        _ = try dbQueue.writeWithoutTransaction { db in try migratePrimaryKeys(db, tables: ["notes"]) }
        try dbQueue.write(createFullText)
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO notes(title) VALUES ('alpha three')")
            try db.execute(sql: "UPDATE notes SET title = 'gamma' WHERE title = 'beta two'")
        }
        let found = try dbQueue.read { db in
            try String.fetchAll(db, sql: "SELECT notes.title FROM notes JOIN notesFTS ON notesFTS.rowid = notes.rowid WHERE notesFTS MATCH 'alpha' ORDER BY notes.title")
        }
        #expect(found == ["alpha one", "alpha three"])
    }

    /// `id INT PRIMARY KEY` is no rowid alias, and SQLite lets it hold NULL.
    @Test func aNullKeyGetsAFreshKeyAndIsReported() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE t(id INT PRIMARY KEY, v TEXT);
            INSERT INTO t VALUES (NULL, 'a'), (NULL, 'b'), (1, 'c');
            """)
        defer { cleanup() }
        let report = try dbQueue.writeWithoutTransaction { db in try migratePrimaryKeys(db, tables: ["t"]) }
        #expect(report.notes == [#""t": 2 rows whose key held NULL got a fresh key (nothing can reference them)"#])
        let rows = try dbQueue.read { db in try Row.fetchAll(db, sql: "SELECT id, v FROM t ORDER BY v") }
        #expect(rows.map { $0["v"] as String } == ["a", "b", "c"])
        #expect(Set(rows.map { $0["id"] as String? }).count == 3 && rows.allSatisfy { ($0["id"] as String?)?.count == 36 },
                "three distinct UUID keys, none NULL")
    }

    @Test func anIndexThatListsTheKeyIsRebuilt() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE docs(id INTEGER PRIMARY KEY, title TEXT, archived INT NOT NULL DEFAULT 0);
            CREATE INDEX docs_active ON docs(title, id) WHERE archived = 0;
            CREATE INDEX docs_key ON docs("id" COLLATE NOCASE DESC, title);
            INSERT INTO docs VALUES (1, 'a', 0), (2, 'b', 1);
            """)
        defer { cleanup() }
        _ = try dbQueue.writeWithoutTransaction { db in try migratePrimaryKeys(db, tables: ["docs"]) }
        let indexes = try dbQueue.read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
        }
        #expect(indexes == [
            "CREATE INDEX docs_active ON docs(title, id) WHERE archived = 0",
            #"CREATE INDEX docs_key ON docs("id" COLLATE NOCASE DESC, title)"#,
        ])
        #expect(try dbQueue.read { db in try String.fetchAll(db, sql: "SELECT title FROM docs INDEXED BY docs_active WHERE archived = 0") } == ["a"])
    }

    @Test(arguments: [
        ("CREATE TABLE t(id INTEGER PRIMARY KEY); CREATE UNIQUE INDEX byNumber ON t(CAST(id AS INTEGER))", "t",
         #"its index "byNumber" computes with "id" in an expression or WHERE clause, which changes meaning when it becomes text: drop or rewrite that index first"#),
        ("CREATE TABLE t(id INTEGER PRIMARY KEY, x); CREATE INDEX small ON t(x) WHERE id < 100", "t",
         #"its index "small" computes with "id" in an expression or WHERE clause, which changes meaning when it becomes text: drop or rewrite that index first"#),
        ("CREATE TABLE t(id INTEGER PRIMARY KEY, half AS (id / 2))", "t",
         #"its generated column "half" computes with "id", which becomes text: drop or rewrite that column first"#),
        ("CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE t(id INTEGER PRIMARY KEY, pID TEXT REFERENCES p(id)); INSERT INTO p VALUES (5); INSERT INTO t VALUES (1, '5')", "t",
         #"its column "pID" holds '5', which is not an integer id of "p""#),
        ("CREATE TABLE t(id INT PRIMARY KEY); INSERT INTO t VALUES ('A-17')", "t",
         #"its primary key "id" holds 'A-17', which is not an integer"#),
        // DESC makes INTEGER PRIMARY KEY an ordinary column, which holds text.
        ("CREATE TABLE t(id INTEGER PRIMARY KEY DESC); INSERT INTO t VALUES ('A-17')", "t",
         #"its primary key "id" holds 'A-17', which is not an integer"#),
        ("CREATE TABLE t(id INTEGER PRIMARY KEY, CHECK (id BETWEEN 1 AND 1000000)); INSERT INTO t VALUES (1)", "t",
         #"copying its rows failed: CHECK constraint failed: id BETWEEN 1 AND 1000000"#),
        ("CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE t(id INTEGER PRIMARY KEY, pID INTEGER DEFAULT 'none' REFERENCES p(id))", "t",
         #"its column "pID" defaults to 'none', which is not an integer id of "p""#),
    ])
    func refusalsSpeakTheUsersTerms(_ schema: String, _ table: String, _ reason: String) throws {
        let (dbQueue, cleanup) = try makeFile(schema)
        defer { cleanup() }
        let before = try dbQueue.read(dump)
        let tables = try dbQueue.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'table'") }
        let error = try #require(throws: PrimaryKeyMigrationError.self) { try migrate(dbQueue, tables) }
        #expect(error.table == table)
        #expect(error.reason == reason)
        #expect(try dbQueue.read(dump) == before)
    }

    /// Text that is no integer references no row, as foreign_key_check
    /// says before the copy ('5' is matched to id 5, and refused above).
    @Test func aForeignKeyHoldingTextIsAnOrphan() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE t(id INTEGER PRIMARY KEY, pID TEXT REFERENCES p(id));
            INSERT INTO p VALUES (5);
            """)
        defer { cleanup() }
        try dbQueue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF; INSERT INTO t VALUES (1, 'A-17'); PRAGMA foreign_keys = ON")
        }
        let before = try dbQueue.read(dump)
        let error = try #require(throws: PrimaryKeyMigrationError.self) { try migrate(dbQueue, ["p", "t"]) }
        #expect(error.table == "t")
        #expect(error.reason == #"row 1 holds "pID" = 'A-17', which is no row of "p", before the migration: fix it first"#)
        #expect(try dbQueue.read(dump) == before)
    }

    @Test func aForeignKeyDefaultBecomesTheNewIdOfItsParent() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT);
            CREATE TABLE items(id INTEGER PRIMARY KEY, listID INTEGER NOT NULL DEFAULT 1 REFERENCES lists(id), title TEXT);
            INSERT INTO lists VALUES (1, 'Inbox'), (2, 'Work');
            """)
        defer { cleanup() }
        try migrate(dbQueue, ["lists", "items"])
        try dbQueue.write { db throws in
            try db.execute(sql: "INSERT INTO items(title) VALUES ('defaulted')")
            #expect(try String.fetchOne(db, sql: "SELECT l.title FROM items i JOIN lists l ON l.id = i.listID") == "Inbox")
        }
    }

    @Test func orphansElsewhereAreReportedNotBlamed() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE lists(id INTEGER PRIMARY KEY);
            CREATE TABLE other(id INTEGER PRIMARY KEY);
            CREATE TABLE stray(otherID INTEGER REFERENCES other(id));
            INSERT INTO lists VALUES (1);
            """)
        defer { cleanup() }
        try dbQueue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF; INSERT INTO stray VALUES (42); PRAGMA foreign_keys = ON")
        }
        let report = try dbQueue.writeWithoutTransaction { db in try migratePrimaryKeys(db, tables: ["lists"]) }
        #expect(report.warnings == [#""stray": row 1 holds "otherID" = 42, which is no row of "other", before the migration (left as it was)"#])
    }

    @Test func statisticsAreKept() throws {
        let (dbQueue, cleanup) = try makeFile("""
            CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT);
            CREATE INDEX byTitle ON lists(title);
            INSERT INTO lists(title) VALUES ('a'), ('b'), ('b');
            ANALYZE;
            """)
        defer { cleanup() }
        try migrate(dbQueue, ["lists"])
        try dbQueue.read { db throws in
            #expect(try String.fetchAll(db, sql: "SELECT idx || ' ' || stat FROM sqlite_stat1 WHERE tbl = 'lists' ORDER BY idx")
                    == ["byTitle 3 2", "sqlite_autoindex_lists_1 3 1"])
        }
    }

    @Test func theCommandRewritesExtraReferencesAndPrintsWarnings() throws {
        let (dbQueue, cleanup) = try makeFile(Self.searchableReminders)
        defer { cleanup() }
        let path = dbQueue.path
        try dbQueue.close()
        let (status, output) = try runMigrateCommand(["--reference", "reminderTexts.reminderID=reminders", path] + reminderTables)
        #expect(status == 0, "\(output)")
        #expect(output.contains(#"warning: "audit"."reminder_id" looks like it holds ids of "reminders""#))
        #expect(!output.contains(#"warning: "reminderTexts""#))
        let titles = try DatabaseQueue(path: path, configuration: installingConfiguration()).read { db in
            try String.fetchAll(db, sql: Self.search)
        }
        #expect(titles == ["Reminder 1", "Reminder 10"])
    }
}
