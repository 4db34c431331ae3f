import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// A configuration that installs the extension on every connection.
func installingConfiguration() -> Configuration {
    var config = Configuration()
    config.prepareDatabase { db in try db.installSQLiteTriggers() }
    return config
}

/// `SELECT expression` once per row of 1...count (libsqlite3, unlike the
/// sqlite3 CLI, has no generate_series).
func selectRepeated(_ expression: String, _ count: Int) -> String {
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count)) SELECT \(expression) FROM n"
}

func temporaryDatabasePath() -> String {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("sqlitetriggers-\(UUID().uuidString).sqlite").path
}

@Suite struct InstallationTests {
    @Test func uuidIsLowercaseVersion4TextThatFoundationParses() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let values = try dbQueue.read { db in
            try String.fetchAll(db, sql: selectRepeated("uuid()", 1000))
        }
        #expect(Set(values).count == 1000)
        for value in values {
            let parsed = try #require(UUID(uuidString: value))
            #expect(parsed.uuidString.lowercased() == value)
            #expect(value.dropFirst(14).first == "4")
            #expect("89ab".contains(value.dropFirst(19).first!))
        }
    }

    @Test func uuidv7IsSortedInGenerationOrder() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let values = try dbQueue.read { db in
            try String.fetchAll(db, sql: selectRepeated("uuidv7()", 10000))
        }
        #expect(values == values.sorted())
        #expect(Set(values).count == values.count)
        let versions = try dbQueue.read { db in
            try Int.fetchSet(db, sql: "SELECT uuid_version(?)", arguments: [values[0]])
        }
        #expect(versions == [7])
    }

    @Test func pinnedClockReachesDatetimeSubsecAndGRDBDecodesItAsDate() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let pinned = Date(timeIntervalSince1970: 1_704_164_645.678)
        let (text, date, epoch, v7) = try dbQueue.write { db in
            try db.pinClock(to: pinned)
            let row = try Row.fetchOne(db, sql: """
                SELECT datetime_subsec() AS t, unixepoch_subsec() AS e, uuidv7_datetime(uuidv7()) AS v
                """)!
            return (row["t"] as String, row["t"] as Date, row["e"] as Double, row["v"] as String)
        }
        #expect(text == "2024-01-02 03:04:05.678")
        #expect(abs(date.timeIntervalSince(pinned)) < 0.0005)
        #expect(epoch == 1_704_164_645.678)
        #expect(v7 == text)
    }

    @Test func unpinningReturnsToTheRealClock() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let date = try dbQueue.write { db in
            try db.pinClock(to: Date(timeIntervalSince1970: 0))
            try db.pinClock(to: nil)
            return try Date.fetchOne(db, sql: "SELECT datetime_subsec()")!
        }
        #expect(abs(date.timeIntervalSinceNow) < 5)
    }

    @Test func seedMakesUUIDsReproducible() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        func seededRun() throws -> [String] {
            try dbQueue.write { db in
                try db.seedRandom(42)
                try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000))
                return try String.fetchAll(db, sql: "SELECT uuid() UNION ALL SELECT uuidv7()")
            }
        }
        let first = try seededRun()
        let otherQueue = try DatabaseQueue(configuration: installingConfiguration())
        let second = try otherQueue.write { db in
            try db.seedRandom(42)
            try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000))
            return try String.fetchAll(db, sql: "SELECT uuid() UNION ALL SELECT uuidv7()")
        }
        #expect(first == second)
        let unseeded = try dbQueue.write { db in
            try db.seedRandom(nil)
            return try String.fetchOne(db, sql: "SELECT uuid()")!
        }
        #expect(unseeded != first[0])
    }

    @Test func everyConnectionOfAPoolHasTheFunctions() throws {
        let path = temporaryDatabasePath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let dbPool = try DatabasePool(path: path, configuration: installingConfiguration())
        try dbPool.write { db in
            try db.execute(sql: """
                CREATE TABLE item(
                  id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuidv7()),
                  createdAt TEXT NOT NULL DEFAULT (datetime_subsec()));
                INSERT INTO item DEFAULT VALUES;
                INSERT INTO item(id) VALUES (NULL);
                """)
        }
        let (count, versions, fromReader) = try dbPool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM item")!,
             try Int.fetchSet(db, sql: "SELECT uuid_version(id) FROM item"),
             try String.fetchOne(db, sql: "SELECT uuid_version(uuid())")!)
        }
        #expect(count == 2)
        #expect(versions == [7])
        #expect(fromReader == "4")
    }

    @Test func errorsFromTheCLayerAreDatabaseErrorsNamingTheFunction() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in try db.execute(sql: "SELECT sqlitetriggers_seed_random('x')") }
        }
        #expect(error.resultCode == .SQLITE_ERROR)
        #expect(error.message == "sqlitetriggers_seed_random: the seed must be an integer, or NULL to unseed")
    }

    @Test func controlsOnAConnectionWithoutTheExtensionAreMisuse() throws {
        let dbQueue = try DatabaseQueue()
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in try db.pinClock(to: Date()) }
        }
        #expect(error.resultCode == .SQLITE_MISUSE)
        #expect(error.message == "SQLiteTriggers is not installed on this connection")
    }

    @Test func storedSchemasCannotCallTheControls() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in
                try db.execute(sql: "CREATE VIEW v AS SELECT sqlitetriggers_pin_clock('2000-01-01')")
                _ = try Row.fetchAll(db, sql: "SELECT * FROM v")
            }
        }
        #expect(error.message == "unsafe use of sqlitetriggers_pin_clock()")
    }

    /// Registration reads no schema; the file's index is refused when the
    /// schema is read: by SQLite itself (the function exists by then, and
    /// is direct-only), or by the guard at the first guarded call.
    @Test func aFileWhoseIndexCallsSwiftCallbackIsRefused() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                CREATE TABLE t(a);
                CREATE INDEX ix ON t(abs(a));
                PRAGMA writable_schema = ON;
                UPDATE sqlite_schema SET sql = replace(sql, 'abs(a)', 'swift_callback(''evil'', a)')
                  WHERE name = 'ix';
                """)
        }
        let error = try #require(throws: DatabaseError.self) {
            let dbQueue = try DatabaseQueue(path: path, configuration: installingConfiguration())
            try dbQueue.write { db in try db.execute(sql: "INSERT INTO t VALUES (1); SELECT swift_callback('mine')") }
        }
        let message = error.message ?? ""
        #expect(message.contains(#"refused: index "ix" in database "main" calls swift_callback()"#)
                || message.contains("unsafe use of swift_callback()")
                || message.contains("non-deterministic functions prohibited in index expressions"), "\(message)")
    }

    @Test func swiftCallbackOnAPoolReaderFailsInsteadOfLosingTheEvent() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let pool = try DatabasePool(path: path, configuration: installingConfiguration())
        let error = try #require(throws: DatabaseError.self) {
            try pool.read { db in try db.execute(sql: "SELECT swift_callback('lost')") }
        }
        #expect(error.resultCode == .SQLITE_READONLY)
        #expect(error.message?.contains("read-only connection") == true)
    }

    @Test(arguments: [
        Date(timeIntervalSince1970: 253_402_300_800), // 10000-01-01
        Date(timeIntervalSince1970: -210_866_760_001), // before -4713-11-24 12:00
        Date.distantFuture.addingTimeInterval(1e30),
    ])
    func pinningOutsideSQLitesDateRangeSaysSo(date: Date) throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in try db.pinClock(to: date) }
        }
        #expect(error.resultCode == .SQLITE_RANGE)
        #expect(error.message?.hasSuffix("is outside SQLite's date range") == true)
    }

    @Test func observingOnAPoolReaderIsRefusedClearly() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let pool = try DatabasePool(path: path, configuration: installingConfiguration())
        for delivery in [CallbackDelivery.afterCommit, .immediate] {
            let error = try #require(throws: DatabaseError.self) {
                try pool.read { db in
                    try db.observeCallback("reminderCompleted", delivery: delivery) { (title: String) in print(title) }
                }
            }
            #expect(error.resultCode == .SQLITE_READONLY)
            #expect(error.message == "observing 'reminderCompleted': this connection is read-only (a DatabasePool reader, "
                    + "or a file opened read-only) and never commits, so the observer would never run: observe on the writer")
        }
        let stream = try #require(throws: DatabaseError.self) {
            try pool.read { db in try db.committedCallbacks("reminderCompleted") }
        }
        #expect(stream.resultCode == .SQLITE_READONLY)
        let onWriter = try pool.write { db in try db.observeCallback("reminderCompleted") { (title: String) in print(title) } }
        onWriter.cancel()
    }
}
