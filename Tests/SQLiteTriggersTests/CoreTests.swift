import Foundation
import SQLiteTriggers
import SQLiteTriggersCSQLite
import Testing

/// The core on its own: a raw `sqlite3*` handle, no GRDB, as a C host or
/// another Swift database library would use it.
@Suite struct CoreTests {
    /// A fresh in-memory connection with the extension registered.
    final class Connection {
        var handle: OpaquePointer?
        init() throws {
            #expect(sqlite3_open(":memory:", &handle) == SQLITE_OK)
            try RawConnection.install(on: handle!)
        }
        deinit { sqlite3_close(handle) }

        func execute(_ sql: String) {
            var error: UnsafeMutablePointer<CChar>?
            let rc = sqlite3_exec(handle, sql, nil, nil, &error)
            #expect(rc == SQLITE_OK, "\(sql): \(error.map { String(cString: $0) } ?? "")")
            sqlite3_free(error)
        }
    }

    @Test func afterCommitObserversOnARawConnection() throws {
        let connection = try Connection()
        connection.execute("""
            CREATE TABLE reminders(id INTEGER PRIMARY KEY, title TEXT);
            CREATE TEMP TRIGGER added AFTER INSERT ON main.reminders BEGIN SELECT swift_callback('added', new.title); END;
            """)
        var titles: [String] = []
        let observation = try RawConnection.observeCallbacks(named: "added", delivery: .afterCommit, on: connection.handle!) { arguments in
            titles.append(try arguments.decode(String.self, at: 0))
            return nil
        }
        connection.execute("BEGIN; INSERT INTO reminders(title) VALUES ('rolled back'); ROLLBACK;")
        connection.execute("INSERT INTO reminders(title) VALUES ('Milk')")
        try RawConnection.deliverCallbacks(on: connection.handle!)
        #expect(titles == ["Milk"])
        observation.cancel()
        connection.execute("INSERT INTO reminders(title) VALUES ('after cancel')")
        try RawConnection.deliverCallbacks(on: connection.handle!)
        #expect(titles == ["Milk"])
    }

    /// The one renderer of CREATE TEMP TRIGGER: one clause a line, the body
    /// indented, IF NOT EXISTS when asked.
    @Test func theTriggerRenderer() {
        let definition = TriggerDefinition(timing: .before, event: "INSERT", target: "\"main\".\"tags\"",
                                           condition: "\"new\".\"title\" = ''", body: [["SELECT RAISE(ABORT, 'a tag needs a title')"]])
        #expect(definition.createStatement(named: "tags_titled", ifNotExists: true) == """
            CREATE TEMP TRIGGER IF NOT EXISTS "tags_titled"
            BEFORE INSERT ON "main"."tags"
            FOR EACH ROW
            WHEN "new"."title" = ''
            BEGIN
              SELECT RAISE(ABORT, 'a tag needs a title');
            END
            """)
    }

    /// A trigger written as SQL is read for its name, table and event, and
    /// runs as written; a persistent one is marked invalid, with the reason.
    @Test func triggersWrittenAsSQL() throws {
        let rule = TempTrigger(sql: """
            CREATE TEMPORARY TRIGGER IF NOT EXISTS "touch" AFTER UPDATE OF title ON "main"."reminders"
            BEGIN UPDATE reminders SET title = upper(new.title) WHERE rowid = new.rowid AND title IS NOT upper(new.title); END;
            """)
        #expect(rule.name == "touch" && rule.tableName == "reminders" && rule.firedBy == ["UPDATE"] && rule.invalidReason == nil)
        let connection = try Connection()
        connection.execute("CREATE TABLE reminders(id INTEGER PRIMARY KEY, title TEXT); INSERT INTO reminders(title) VALUES ('a')")
        connection.execute(rule.sql)
        connection.execute("UPDATE reminders SET title = 'milk'")
        var statement: OpaquePointer?
        sqlite3_prepare_v2(connection.handle, "SELECT title FROM reminders", -1, &statement, nil)
        #expect(sqlite3_step(statement) == SQLITE_ROW)
        #expect(String(cString: sqlite3_column_text(statement, 0)) == "MILK")
        sqlite3_finalize(statement)

        let persistent = TempTrigger(sql: "CREATE TRIGGER t AFTER INSERT ON reminders BEGIN SELECT 1; END")
        #expect(persistent.invalidReason?.contains("it is not CREATE TEMP TRIGGER") == true)
    }
}
