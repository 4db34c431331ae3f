import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// A list and its items: a cascade, a SET NULL, a UNIQUE besides the key.
struct FeedList: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    static let databaseTableName = "feedLists"
    var id: Int64
    var title: String
}

struct FeedItem: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    static let databaseTableName = "feedItems"
    var id: String
    var listID: Int64?
    var ownerID: Int64?
    var title: String
    var rank: Int
    var dueDate: Date?
}

let feedSchema = """
    CREATE TABLE feedLists(id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE);
    CREATE TABLE feedItems(
      id TEXT PRIMARY KEY NOT NULL,
      listID INTEGER REFERENCES feedLists(id) ON DELETE CASCADE,
      ownerID INTEGER REFERENCES feedLists(id) ON DELETE SET NULL,
      title TEXT NOT NULL,
      rank INTEGER NOT NULL DEFAULT 0,
      dueDate TEXT);
    """

/// Thrown to roll a test's transaction back.
struct RollbackForTest: Error {}

/// A copy of a table kept only from delivered changes.
struct Replica<Record: Hashable> {
    var rows: [[DatabaseValue]: Record] = [:]
    let key: (Record) -> [DatabaseValue]

    mutating func apply(_ change: RecordChange<Record>) {
        switch change {
        case .inserted(let new): rows[key(new)] = new
        case .updated(let old, let new): rows[key(old)] = nil; rows[key(new)] = new
        case .deleted(let old): rows[key(old)] = nil
        }
    }
}

@Suite(.serialized) struct ChangeFeedTests {
    func makeQueue(recursiveTriggers: Bool = false) throws -> DatabaseQueue {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in
            try db.execute(sql: feedSchema)
            if recursiveTriggers { try db.execute(sql: "PRAGMA recursive_triggers = ON") }
        }
        return dbQueue
    }

    func collect<Record: FetchableRecord & TableRecord & Sendable>(
        _ record: Record.Type, feed: ChangeFeed<Record> = .all, on writer: some DatabaseWriter
    ) throws -> (Locked<[RecordChange<Record>]>, CallbackObservation) {
        let changes = Locked<[RecordChange<Record>]>([])
        let observation = try writer.observeChanges(to: record, feed: feed, scheduling: .onWriterQueue) { change in
            changes.mutate { $0.append(change) }
        }
        return (changes, observation)
    }

    @Test func everyWritePathIsSeenWithItsValues() throws {
        let dbQueue = try makeQueue()
        let (changes, observation) = try collect(FeedItem.self, on: dbQueue)
        defer { observation.cancel() }
        let due = Date(timeIntervalSince1970: 1_700_000_000)
        try dbQueue.write { db in
            try FeedList(id: 1, title: "Home").insert(db)
            try FeedList(id: 2, title: "Work").insert(db)
            try FeedItem(id: "a", listID: 1, ownerID: 2, title: "Milk", rank: 0, dueDate: due).insert(db)   // record
            try db.execute(sql: "UPDATE feedItems SET rank = 5 WHERE id = 'a'")                                // raw SQL
            try db.execute(sql: "INSERT INTO feedItems(id, listID, title) VALUES ('a', 1, 'Oat milk') ON CONFLICT(id) DO UPDATE SET title = excluded.title")
            try db.execute(sql: "DELETE FROM feedLists WHERE id = 2")                                        // SET NULL
            try db.execute(sql: "DELETE FROM feedLists WHERE id = 1")                                        // CASCADE
        }
        let milk = FeedItem(id: "a", listID: 1, ownerID: 2, title: "Milk", rank: 0, dueDate: due)
        var ranked = milk; ranked.rank = 5
        var renamed = ranked; renamed.title = "Oat milk"
        var orphaned = renamed; orphaned.ownerID = nil
        #expect(changes.value == [
            .inserted(milk), .updated(old: milk, new: ranked), .updated(old: ranked, new: renamed),
            .updated(old: renamed, new: orphaned), .deleted(orphaned),
        ])
    }

    @Test func rolledBackAndFailedWorkIsNeverSeen() throws {
        let dbQueue = try makeQueue()
        let (changes, observation) = try collect(FeedList.self, on: dbQueue)
        defer { observation.cancel() }
        try dbQueue.writeWithoutTransaction { db in
            try db.inTransaction {
                try FeedList(id: 1, title: "kept").insert(db)
                try db.inSavepoint {
                    try FeedList(id: 2, title: "rolled back to").insert(db)
                    return .rollback
                }
                #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (3, 'x'), (4, 'kept')") }
                return .commit
            }
            try db.inTransaction {
                try FeedList(id: 5, title: "rolled back").insert(db)
                return .rollback
            }
        }
        #expect(changes.value == [.inserted(FeedList(id: 1, title: "kept"))], "the failed statement's first row too is gone")
    }

    @Test func cancellingInsideTheHandlerStopsTheRestOfTheRound() throws {
        let dbQueue = try makeQueue()
        let changes = Locked<[RecordChange<FeedList>]>([])
        let token = Locked<CallbackObservation?>(nil)
        let observation = try dbQueue.observeChanges(to: FeedList.self, scheduling: .onWriterQueue) { change in
            changes.mutate { $0.append(change) }
            token.value?.cancel()
        }
        token.mutate { $0 = observation }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO feedLists(title) VALUES ('a'), ('b'), ('c')") }
        #expect(changes.value == [.inserted(FeedList(id: 1, title: "a"))], "the round's later changes are dropped")
        #expect(observation.isCancelled)
    }

    @Test func insertOrReplaceInBothRecursiveTriggerModes() throws {
        for recursive in [false, true] {
            let dbQueue = try makeQueue(recursiveTriggers: recursive)
            let (changes, observation) = try collect(FeedList.self, on: dbQueue)
            try dbQueue.write { db in
                try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'a')")
                try db.execute(sql: "INSERT OR REPLACE INTO feedLists(id, title) VALUES (1, 'b')")
            }
            // The capture sees the row REPLACE deletes, whatever recursive_triggers says.
            let expected: [RecordChange<FeedList>] =
                [.inserted(FeedList(id: 1, title: "a")), .deleted(FeedList(id: 1, title: "a")), .inserted(FeedList(id: 1, title: "b"))]
            #expect(changes.value == expected, "recursive_triggers \(recursive)")
            observation.cancel()
        }
    }

    @Test func filtersRunInSQL() throws {
        let dbQueue = try makeQueue()
        let (renames, renameObservation) = try collect(FeedList.self, feed: .updates(of: ["title"], where: "new.title <> ''"), on: dbQueue)
        let (removals, removalObservation) = try collect(FeedList.self, feed: .deletes(where: "old.id > 1").and(.inserts()), on: dbQueue)
        defer { renameObservation.cancel(); removalObservation.cancel() }
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'a'), (2, 'b')")
            try db.execute(sql: "UPDATE feedLists SET title = 'c' WHERE id = 1")
            try db.execute(sql: "UPDATE feedLists SET title = '' WHERE id = 2")
            try db.execute(sql: "DELETE FROM feedLists")
        }
        #expect(renames.value == [.updated(old: FeedList(id: 1, title: "a"), new: FeedList(id: 1, title: "c"))])
        #expect(removals.value == [.inserted(FeedList(id: 1, title: "a")), .inserted(FeedList(id: 2, title: "b")),
                                   .deleted(FeedList(id: 2, title: ""))])
    }

    /// `byTriggers`: the capture installed from SQL in mode 'net' (net
    /// changes read by triggers, as on hosts without the preupdate hook),
    /// whose events the same Swift feed decodes.
    @Test(arguments: [false, true], [false, true])
    func netChangesFoldEachTransaction(recursiveTriggers: Bool, byTriggers: Bool) throws {
        let dbQueue = try makeQueue(recursiveTriggers: recursiveTriggers)
        if byTriggers {
            let installed = try dbQueue.write { db in
                try String.fetchOne(db, sql: "SELECT sqlitetriggers_change_feed('feedLists', 'net')")
            }
            #expect(installed == "net")
        }
        let (changes, observation) = try collect(FeedList.self, feed: ChangeFeed.all.netPerTransaction(), on: dbQueue)
        let mode = try dbQueue.read { db in try String.fetchOne(db, sql: "SELECT sqlitetriggers_change_feed_mode('feedLists')") }
        #expect(mode == (byTriggers ? "net" : "rows"))
        defer { observation.cancel() }
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        }
        changes.mutate { $0.removeAll() }
        try dbQueue.write { db in
            try db.execute(sql: """
                INSERT INTO feedLists(id, title) VALUES (10, 'new');  UPDATE feedLists SET title = 'newer' WHERE id = 10;
                INSERT INTO feedLists(id, title) VALUES (11, 'gone'); DELETE FROM feedLists WHERE id = 11;
                UPDATE feedLists SET title = 'a2' WHERE id = 1;       UPDATE feedLists SET title = 'a3' WHERE id = 1;
                UPDATE feedLists SET title = 'b2' WHERE id = 2;       DELETE FROM feedLists WHERE id = 2;
                DELETE FROM feedLists WHERE id = 3;                   INSERT INTO feedLists(id, title) VALUES (3, 'c again');
                INSERT OR REPLACE INTO feedLists(id, title) VALUES (12, 'a3');
                """)
        }
        // The REPLACE over the UNIQUE title deletes row 1, whatever recursive_triggers says.
        #expect(changes.value == [
            .inserted(FeedList(id: 10, title: "newer")),
            .deleted(FeedList(id: 1, title: "a")),
            .deleted(FeedList(id: 2, title: "b")),
            .updated(old: FeedList(id: 3, title: "c"), new: FeedList(id: 3, title: "c again")),
            .inserted(FeedList(id: 12, title: "a3")),
        ])
    }

    @Test(arguments: [false, true]) func netChangesSeeTheRowsReplaceDeletes(recursiveTriggers: Bool) throws {
        let dbQueue = try makeQueue(recursiveTriggers: recursiveTriggers)
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'a'), (2, 'b')") }
        let (changes, observation) = try collect(FeedList.self, feed: ChangeFeed.all.netPerTransaction(), on: dbQueue)
        defer { observation.cancel() }
        try dbQueue.write { db in
            try db.execute(sql: "UPDATE OR REPLACE feedLists SET title = 'b' WHERE id = 1")   // deletes row 2
            try db.execute(sql: "INSERT OR REPLACE INTO feedLists(id, title) VALUES (3, 'b')")  // deletes row 1
        }
        #expect(changes.value == [
            .deleted(FeedList(id: 2, title: "b")), .deleted(FeedList(id: 1, title: "a")), .inserted(FeedList(id: 3, title: "b")),
        ])
    }

    @Test func aSwiftObserverHearsAFeedInstalledFromSQL() throws {
        let dbQueue = try makeQueue()
        let installed = try dbQueue.write { db in try String.fetchOne(db, sql: "SELECT sqlitetriggers_change_feed('FEEDLISTS')") }
        #expect(installed == "rows")
        let heard = Locked<[String]>([])
        let observation = try dbQueue.writeWithoutTransaction { db in
            try db.observeCallbackBatches(named: "sqlitetriggers.changes.feedLists") { db, _ in
                heard.mutate { $0 += (try? String.fetchAll(db, sql: "SELECT arg1 FROM swift_callback_batch")) ?? [] }
            }
        }
        defer { observation.cancel() }
        let (changes, feed) = try collect(FeedList.self, on: dbQueue)
        defer { feed.cancel() }
        #expect(try dbQueue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.sqlite_master WHERE type = 'trigger'") } == 3,
                "the Swift feed shares the capture the SQL installed")
        try dbQueue.write { db in try FeedList(id: 1, title: "a").insert(db) }
        #expect(heard.value == ["insert"])
        #expect(changes.value == [.inserted(FeedList(id: 1, title: "a"))])
    }

    @Test func whatCannotBeCapturedExactlyThrowsBeforeAnythingIsDelivered() throws {
        struct Generated: FetchableRecord, TableRecord { static let databaseTableName = "generated"; init(row: Row) {} }
        let dbQueue = try makeQueue()
        try dbQueue.write { db in try db.execute(sql: "CREATE TABLE generated(id INTEGER PRIMARY KEY, v INT, twice INT AS (v * 2))") }
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.observeChanges(to: Generated.self, scheduling: .onWriterQueue) { _ in }
        }
        #expect(error.message?.contains("generated columns") == true && error.message?.contains("'keys' or 'net' mode") == true)
        #expect(try dbQueue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.sqlite_master WHERE type = 'trigger'") } == 0)
        let keys = Locked<[RecordChange<ChangedKey>]>([])
        let observation = try dbQueue.observeChangedKeys(of: Generated.self, scheduling: .onWriterQueue) { change in keys.mutate { $0.append(change) } }
        defer { observation.cancel() }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO generated(id, v) VALUES (1, 21)") }
        #expect(keys.value == [.inserted(ChangedKey(rowID: 1, primaryKey: ["id": 1.databaseValue]))])
    }

    @Test func rowsStoredBeforeAnAddedColumnDecodeWithItsDefault() throws {
        struct Flagged: Codable, FetchableRecord, TableRecord, Equatable, Sendable {
            static let databaseTableName = "feedLists"
            var id: Int64
            var title: String
            var isFlagged: Int          // not optional: NULL would not decode
        }
        let dbQueue = try makeQueue()
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'a')")
            try db.execute(sql: "ALTER TABLE feedLists ADD COLUMN isFlagged INTEGER NOT NULL DEFAULT 0")
        }
        let (changes, observation) = try collect(Flagged.self, on: dbQueue)
        defer { observation.cancel() }
        try dbQueue.write { db in try db.execute(sql: "UPDATE feedLists SET isFlagged = 1") }
        #expect(changes.value == [.updated(old: Flagged(id: 1, title: "a", isFlagged: 0), new: Flagged(id: 1, title: "a", isFlagged: 1))])
    }

    @Test func eachTransactionArrivesAsOneValue() throws {
        let dbQueue = try makeQueue()
        let exact = Locked<[CommittedTransaction<FeedList>]>([]), net = Locked<[CommittedTransaction<FeedList>]>([])
        let inserts = Locked<[CommittedTransaction<FeedList>]>([])
        let observations = [
            try dbQueue.observeTransactions(of: FeedList.self, scheduling: .onWriterQueue) { t in exact.mutate { $0.append(t) } },
            try dbQueue.observeTransactions(of: FeedList.self, feed: ChangeFeed.all.netPerTransaction(), scheduling: .onWriterQueue) { t in
                net.mutate { $0.append(t) } },
            try dbQueue.observeTransactions(of: FeedList.self, feed: .inserts(), scheduling: .onWriterQueue) { t in inserts.mutate { $0.append(t) } },
        ]
        defer { observations.forEach { $0.cancel() } }
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'a'), (2, 'b')")
            try db.execute(sql: "UPDATE feedLists SET title = 'a2' WHERE id = 1")
        }
        #expect(throws: RollbackForTest.self) {
            try dbQueue.write { db in try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (3, 'rolled back')"); throw RollbackForTest() }
        }
        try dbQueue.write { db in
            try db.execute(sql: "UPDATE feedLists SET title = 'a3' WHERE id = 1")
            try db.execute(sql: "DELETE FROM feedLists WHERE id = 2")
        }
        let a = FeedList(id: 1, title: "a"), b = FeedList(id: 2, title: "b")
        let a2 = FeedList(id: 1, title: "a2"), a3 = FeedList(id: 1, title: "a3")
        #expect(exact.value.map(\.changes) == [
            [.inserted(a), .inserted(b), .updated(old: a, new: a2)],
            [.updated(old: a2, new: a3), .deleted(b)],
        ])
        #expect(net.value.map(\.changes) == [[.inserted(a2), .inserted(b)], [.updated(old: a2, new: a3), .deleted(b)]])
        #expect(exact.value.map(\.number) == net.value.map(\.number))
        #expect(exact.value.count == 2 && exact.value[1].number > exact.value[0].number)
        #expect(inserts.value.map(\.changes) == [[.inserted(a), .inserted(b)]], "a transaction none of whose changes pass the filter is not delivered")
    }

    @Test func aKeysOnlyFeedCarriesRowidsAndPrimaryKeysOnly() throws {
        struct Plain: FetchableRecord, TableRecord { static let databaseTableName = "plain"; init(row: Row) {} }
        struct Keyed: FetchableRecord, TableRecord { static let databaseTableName = "keyed"; init(row: Row) {} }
        let dbQueue = try makeQueue()
        try dbQueue.write { db in
            try db.execute(sql: """
                CREATE TABLE plain(title TEXT);
                CREATE TABLE keyed(a TEXT, b INTEGER, note TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;
                """)
        }
        let keys = Locked<[String]>([])
        func record(_ table: String) -> @Sendable (RecordChange<ChangedKey>) -> Void {
            { change in
                switch change {
                case .inserted(let key): keys.mutate { $0.append("\(table) +\(key)") }
                case .updated(let old, let new): keys.mutate { $0.append("\(table) \(old) -> \(new)") }
                case .deleted(let key): keys.mutate { $0.append("\(table) -\(key)") }
                }
            }
        }
        let observations = [
            try dbQueue.observeChangedKeys(of: FeedItem.self, scheduling: .onWriterQueue, onChange: record("items")),
            try dbQueue.observeChangedKeys(of: Plain.self, scheduling: .onWriterQueue, onChange: record("plain")),
            try dbQueue.observeChangedKeys(of: Keyed.self, scheduling: .onWriterQueue, onChange: record("keyed")),
        ]
        let (rows, rowObservation) = try collect(FeedItem.self, on: dbQueue)
        defer { (observations + [rowObservation]).forEach { $0.cancel() } }
        try dbQueue.write { db in
            try db.execute(sql: """
                INSERT INTO feedItems(id, title) VALUES ('a', 'A long title that the key feed never copies');
                UPDATE feedItems SET id = 'b' WHERE id = 'a';
                INSERT INTO plain(title) VALUES ('x'); DELETE FROM plain;
                INSERT INTO keyed VALUES ('k', 1, 'n'); UPDATE keyed SET note = 'm';
                """)
            // What waits for the commit: a keys-only capture's events hold
            // the kind, the rowid and the key columns (none for a table keyed
            // by its rowid alone); feedItems has a row feed too, so its one
            // capture holds every column, and its key feed reads the key.
            let argumentCounts = try Int.fetchAll(db, sql: """
                SELECT json_array_length(args) FROM swift_callback_pending WHERE args LIKE '["insert"%' ORDER BY rowid
                """)
            #expect(argumentCounts.sorted() == [2, 4, 8])
        }
        #expect(keys.value == [
            "items +rowid 1, id: \"a\"", "items rowid 1, id: \"a\" -> rowid 1, id: \"b\"",
            "plain +rowid 1", "plain -rowid 1",
            "keyed +rowid NULL, a: \"k\", b: 1", "keyed rowid NULL, a: \"k\", b: 1 -> rowid NULL, a: \"k\", b: 1",
        ])
        #expect(rows.value.count == 2, "a row feed of the same table still gets whole rows")
    }

    @Test func aRoundThatCannotBeReadSaysHowManyChangesItLost() throws {
        let dbQueue = try makeQueue()
        let errors = Locked<[String]>([])
        let observation = try dbQueue.observeChanges(to: FeedList.self, scheduling: .onWriterQueue,
                                                     onError: { error in errors.mutate { $0.append("\(error)") } }) { _ in }
        defer { observation.cancel() }
        // A view created after the events, in their transaction, hides the
        // table the feed reads them from (the guard refuses it from then on).
        try dbQueue.write { db in
            try db.execute(sql: """
                INSERT INTO feedLists(id, title) VALUES (1, 'a'), (2, 'b');
                CREATE TEMP VIEW swift_callback_batch AS SELECT 1 AS seq;
                """)
        }
        #expect(errors.value.count == 1)
        #expect(errors.value.first?.contains("change feed of \"feedLists\": 2 of 2 committed changes could not be read, and are lost") == true)
    }

    @Test func aKeysOnlyFeedFoldsNetChanges() throws {
        let dbQueue = try makeQueue(recursiveTriggers: true)
        let keys = Locked<[RecordChange<ChangedKey>]>([])
        let observation = try dbQueue.observeChangedKeys(of: FeedList.self, feed: ChangeFeed.all.netPerTransaction(),
                                                         scheduling: .onWriterQueue) { change in keys.mutate { $0.append(change) } }
        defer { observation.cancel() }
        try dbQueue.write { db in
            try db.execute(sql: """
                INSERT INTO feedLists(id, title) VALUES (1, 'a'); UPDATE feedLists SET title = 'b';
                INSERT INTO feedLists(id, title) VALUES (2, 'c'); DELETE FROM feedLists WHERE id = 2;
                """)
        }
        #expect(keys.value == [.inserted(ChangedKey(rowID: 1, primaryKey: ["id": 1.databaseValue]))])
    }

    @Test func anImmediateCheckVetoesAnyWritePath() throws {
        struct EmptyTitle: Error, CustomStringConvertible { var description: String { "a list needs a title" } }
        let dbQueue = try makeQueue()
        let check = try dbQueue.checkChanges(to: FeedList.self) { change in
            if change.new?.title.isEmpty == true { throw EmptyTitle() }
        }
        defer { check.cancel() }
        try dbQueue.write { db in try FeedList(id: 1, title: "ok").insert(db) }
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in try db.execute(sql: "UPDATE feedLists SET title = ''") }
        }
        #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_FUNCTION)
        #expect(error.message?.contains("a list needs a title") == true)
        #expect(try dbQueue.read { db in try String.fetchOne(db, sql: "SELECT title FROM feedLists") } == "ok")
    }

    @Test func anAsyncSequenceOfChanges() async throws {
        let dbQueue = try makeQueue()
        let stream = try dbQueue.recordChanges(to: FeedList.self)
        try await dbQueue.write { db in try FeedList(id: 1, title: "a").insert(db) }
        try await dbQueue.write { db in try db.execute(sql: "DELETE FROM feedLists") }
        var received: [RecordChange<FeedList>] = []
        for await change in stream {
            received.append(change)
            if received.count == 2 { break }
        }
        #expect(received == [.inserted(FeedList(id: 1, title: "a")), .deleted(FeedList(id: 1, title: "a"))])
    }

    @Test func aFeedFollowsAMigrationThatChangesItsTable() throws {
        struct Renamed: Codable, FetchableRecord, TableRecord, Hashable, Sendable {
            static let databaseTableName = "feedLists"
            var id: Int64
            var title: String
            var color: Int?
        }
        let dbQueue = try makeQueue()
        let (changes, observation) = try collect(Renamed.self, on: dbQueue)
        defer { observation.cancel() }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("color") { db in
            try db.execute(sql: """
                CREATE TABLE new_feedLists(id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, color INTEGER);
                INSERT INTO new_feedLists(id, title) SELECT id, title FROM feedLists;
                DROP TABLE feedItems; DROP TABLE feedLists;
                ALTER TABLE new_feedLists RENAME TO feedLists;
                """)
        }
        try migrator.migrate(dbQueue)
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO feedLists(id, title, color) VALUES (1, 'a', 7)") }
        #expect(changes.value == [.inserted(Renamed(id: 1, title: "a", color: 7))], "the feed came back, with the new column")
    }

    @Test func cancellingRemovesTheFeedsTriggersButNotASharedFeedsOnes() throws {
        let dbQueue = try makeQueue()
        func triggerCount() throws -> Int {
            try dbQueue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.sqlite_master WHERE type = 'trigger'") ?? 0 }
        }
        let (first, firstObservation) = try collect(FeedList.self, on: dbQueue)
        let (second, secondObservation) = try collect(FeedList.self, on: dbQueue)
        #expect(try triggerCount() == 3, "two identical feeds share their triggers")
        firstObservation.cancel()
        try dbQueue.write { db in try FeedList(id: 1, title: "a").insert(db) }
        #expect(first.value.isEmpty)
        #expect(second.value == [.inserted(FeedList(id: 1, title: "a"))], "the other feed still hears")
        secondObservation.cancel()
        try dbQueue.write { _ in }                      // after the removal the cancel scheduled
        #expect(try triggerCount() == 0, "no trigger is left firing for nobody")
    }

    /// The app's own rules that rewrite the rows a feed reports: a touch on
    /// update, a stamp on insert, a rule on another table writing this one.
    /// They terminate with recursive triggers too.
    static let rewritingRules = """
        CREATE TEMP TRIGGER itemTouch AFTER UPDATE ON main.feedItems WHEN new.title IS old.title AND new.rank < 50
        BEGIN UPDATE feedItems SET title = title || '*' WHERE id = new.id; END;
        CREATE TEMP TRIGGER itemStamp AFTER INSERT ON main.feedItems
        BEGIN UPDATE feedItems SET rank = rank + 100 WHERE id = new.id; END;
        CREATE TEMP TRIGGER listRenamesItems AFTER UPDATE OF title ON main.feedLists
        BEGIN UPDATE feedItems SET title = new.title WHERE listID = new.id; END;
        """

    /// The heart of it: random writes through every path, in transactions
    /// with savepoints, failures and rollbacks, with the app's rules that
    /// rewrite the same rows installed before or after the feeds; replicas
    /// kept only from delivered changes, exact and net, must equal the
    /// tables after every transaction. SQLITETRIGGERS_FEED_TRANSACTIONS runs
    /// it longer.
    @Test(arguments: [false, true], [false, true])
    func replicasKeptFromChangesEqualTheTables(recursiveTriggers: Bool, rulesFirst: Bool) throws {
        let transactions = Int(ProcessInfo.processInfo.environment["SQLITETRIGGERS_FEED_TRANSACTIONS"] ?? "") ?? 300
        let dbQueue = try makeQueue(recursiveTriggers: recursiveTriggers)
        if rulesFirst { try dbQueue.write { db in try db.execute(sql: Self.rewritingRules) } }
        // Two more ways to lose a transaction: a trigger's RAISE(ROLLBACK),
        // and a COMMIT that fails on a deferred foreign key.
        try dbQueue.write { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER refuseRollbackTitles BEFORE INSERT ON feedLists WHEN new.title = 'rollback'
                BEGIN SELECT RAISE(ROLLBACK, 'a trigger rolled the transaction back'); END;
                CREATE TABLE feedNotes(id INTEGER PRIMARY KEY,
                  itemID TEXT REFERENCES feedItems(id) DEFERRABLE INITIALLY DEFERRED);
                """)
        }
        var exactLists = Replica<FeedList>(key: { [$0.id.databaseValue] })
        var exactItems = Replica<FeedItem>(key: { [$0.id.databaseValue] })
        var netLists = exactLists, netItems = exactItems
        let delivered = Locked<[(net: Bool, list: RecordChange<FeedList>?, item: RecordChange<FeedItem>?)]>([])
        let observations = [
            try dbQueue.observeChanges(to: FeedList.self, scheduling: .onWriterQueue) { c in delivered.mutate { $0.append((false, c, nil)) } },
            try dbQueue.observeChanges(to: FeedItem.self, scheduling: .onWriterQueue) { c in delivered.mutate { $0.append((false, nil, c)) } },
            try dbQueue.observeChanges(to: FeedList.self, feed: ChangeFeed.all.netPerTransaction(), scheduling: .onWriterQueue) { c in
                delivered.mutate { $0.append((true, c, nil)) } },
            try dbQueue.observeChanges(to: FeedItem.self, feed: ChangeFeed.all.netPerTransaction(), scheduling: .onWriterQueue) { c in
                delivered.mutate { $0.append((true, nil, c)) } },
        ]
        defer { observations.forEach { $0.cancel() } }
        if !rulesFirst { try dbQueue.write { db in try db.execute(sql: Self.rewritingRules) } }
        var generator = SplitMix64(seed: recursiveTriggers ? 2 : 1)
        var committed = 0, raisedRollbacks = 0, failedCommits = 0
        for _ in 0..<transactions {
            var willCommit = false
            do {
                try dbQueue.writeWithoutTransaction { db in
                    try db.inTransaction {
                        for _ in 0..<Int.random(in: 1...8, using: &generator) {
                            if Int.random(in: 0..<6, using: &generator) == 0 {
                                try db.inSavepoint {
                                    try randomWrite(db, &generator, recursiveTriggers: recursiveTriggers)
                                    return Bool.random(using: &generator) ? .commit : .rollback
                                }
                            } else {
                                try randomWrite(db, &generator, recursiveTriggers: recursiveTriggers)
                            }
                        }
                        willCommit = Int.random(in: 0..<5, using: &generator) > 0
                        return willCommit ? .commit : .rollback
                    }
                }
                if willCommit { committed += 1 }
            } catch let error as DatabaseError where error.message == "a trigger rolled the transaction back" {
                raisedRollbacks += 1
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_FOREIGNKEY {
                failedCommits += 1
            }
            for event in delivered.value {
                if let change = event.list { event.net ? netLists.apply(change) : exactLists.apply(change) }
                if let change = event.item { event.net ? netItems.apply(change) : exactItems.apply(change) }
            }
            delivered.mutate { $0.removeAll() }
            let (lists, items) = try dbQueue.read { db in (try FeedList.fetchSet(db), try FeedItem.fetchSet(db)) }
            #expect(Set(exactLists.rows.values) == lists)
            #expect(Set(exactItems.rows.values) == items)
            #expect(Set(netLists.rows.values) == lists)
            #expect(Set(netItems.rows.values) == items)
            if Set(exactItems.rows.values) != items || Set(netItems.rows.values) != items || Set(netLists.rows.values) != lists { break }
        }
        #expect(committed > transactions / 2 && raisedRollbacks > 0 && failedCommits > 0)
        print("change feed model test: \(transactions) transactions, \(committed) committed, \(raisedRollbacks) RAISE(ROLLBACK), "
              + "\(failedCommits) failed COMMITs, recursive_triggers \(recursiveTriggers), rules installed \(rulesFirst ? "before" : "after") the feeds")
    }
}

/// One random write, through a record, raw SQL, an upsert, INSERT OR
/// REPLACE or a delete that cascades; constraint failures are expected
/// and leave the transaction going.
func randomWrite(_ db: Database, _ generator: inout SplitMix64, recursiveTriggers: Bool) throws {
    let list = Int64.random(in: 1...4, using: &generator)
    let item = "i\(Int.random(in: 1...12, using: &generator))"
    let title = ["a", "b", "c", "d", ""].randomElement(using: &generator)!
    let rank = Int.random(in: 0...3, using: &generator)
    let owner = Int64.random(in: 1...4, using: &generator)
    let otherItem = "i\(Int.random(in: 1...12, using: &generator))"
    let statements: [() throws -> Void] = [
        { try FeedList(id: list, title: "list \(list) \(title)").insert(db) },
        { try FeedItem(id: item, listID: list, ownerID: owner, title: title, rank: rank,
                       dueDate: Date(timeIntervalSince1970: Double(rank) * 86_400)).insert(db) },
        { try db.execute(sql: "UPDATE feedItems SET rank = rank + 1, title = title || '!' WHERE listID = ?", arguments: [list]) },
        { try db.execute(sql: "UPDATE feedItems SET id = ? WHERE id = ?", arguments: [item, otherItem]) },
        { try db.execute(sql: "DELETE FROM feedLists WHERE id = ?", arguments: [list]) },
        { try db.execute(sql: "DELETE FROM feedItems WHERE rank = ?", arguments: [rank]) },
        { try db.execute(sql: """
            INSERT INTO feedItems(id, listID, title, rank) VALUES (?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET title = excluded.title, rank = excluded.rank
            """, arguments: [item, list, title, rank]) },
        { try db.execute(sql: "INSERT OR REPLACE INTO feedItems(id, listID, title, rank) VALUES (?, ?, ?, ?)", arguments: [item, list, title, rank]) },
        { try db.execute(sql: "UPDATE OR REPLACE feedLists SET title = ? WHERE id = ?", arguments: ["list \(owner) \(title)", list]) },
        { try db.execute(sql: "INSERT OR REPLACE INTO feedLists(id, title) VALUES (?, ?)", arguments: [owner, "list \(list) \(title)"]) },
        { try db.execute(sql: "INSERT OR IGNORE INTO feedLists(id, title) VALUES (?, ?)", arguments: [list, "list \(list)"]) },
        // A REPLACE that removes another row over the UNIQUE title.
        { try db.execute(sql: "INSERT OR REPLACE INTO feedLists(id, title) VALUES (?, ?)", arguments: [list, "list 1 a"]) },
    ]
    // Rarely, a statement that ends the whole transaction: a trigger's
    // RAISE(ROLLBACK), or a dangling deferred foreign key that fails COMMIT.
    let ending: [() throws -> Void] = [
        { try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (?, 'rollback')", arguments: [list + 100]) },
        { try db.execute(sql: "INSERT INTO feedNotes(itemID) VALUES ('missing')") },
    ]
    do {
        if Int.random(in: 0..<40, using: &generator) == 0 {
            try ending.randomElement(using: &generator)!()
        } else {
            try statements.randomElement(using: &generator)!()
        }
    } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT && db.isInsideTransaction {
        // A failing statement: SQLite undid its changes, the transaction goes on.
    }
}

/// A small seeded generator, the same on every platform.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Records from the feed decode exactly as GRDB fetches them: custom
/// DatabaseValueConvertible types, JSON columns, dates, UUIDs as text and blob.
@Suite struct ChangeFeedDecodingTests {
    struct Temperature: DatabaseValueConvertible, Codable, Hashable, Sendable {
        var celsius: Double
        var databaseValue: DatabaseValue { celsius.databaseValue }
        static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Temperature? { Double.fromDatabaseValue(dbValue).map(Temperature.init) }
    }
    struct Place: Codable, Hashable, Sendable { var city: String; var floors: [Int] }
    struct Reading: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
        static let databaseTableName = "readings"
        var id: UUID              // GRDB's default: a 16-byte blob
        var textID: UUID          // stored as text by the encoding strategy below
        var temperature: Temperature
        var place: Place          // a JSON column
        var at: Date
        var note: String?
        static func databaseUUIDEncodingStrategy(for column: String) -> DatabaseUUIDEncodingStrategy {
            column == "textID" ? .lowercaseString : .deferredToUUID
        }
    }

    @Test func feedRecordsEqualFetchedRecords() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in
            try db.execute(sql: "CREATE TABLE readings(id BLOB PRIMARY KEY, textID TEXT, temperature REAL, place TEXT, at TEXT, note TEXT)")
        }
        let changes = Locked<[RecordChange<Reading>]>([])
        let observation = try dbQueue.observeChanges(to: Reading.self, scheduling: .onWriterQueue) { change in changes.mutate { $0.append(change) } }
        defer { observation.cancel() }
        let reading = Reading(id: UUID(), textID: UUID(), temperature: Temperature(celsius: 21.5),
                              place: Place(city: "Lyon", floors: [1, 2]), at: Date(timeIntervalSince1970: 1_700_000_000.123), note: nil)
        try dbQueue.write { db in try reading.insert(db) }
        let fetched = try dbQueue.read { db in try Reading.fetchOne(db) }
        #expect(try dbQueue.read { db in try String.fetchOne(db, sql: "SELECT typeof(id) || ' ' || typeof(textID) FROM readings") } == "blob text")
        #expect(changes.value == [.inserted(try #require(fetched))])
        #expect(fetched?.place == reading.place && fetched?.temperature == reading.temperature)
    }
}
