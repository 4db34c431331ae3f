import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// Tables that are not GRDB records (a StructuredQueries table, a plain
/// struct): change feeds through a `FeedTable`, and rules written as SQL by
/// another trigger builder through `TempTrigger(sql:)`.
@Suite(.serialized) struct ForeignTableTests {
    /// A struct that knows nothing of GRDB, with its properties in another
    /// order than the table's columns, decoded by name as a StructuredQueries
    /// bridge decodes (README, "With StructuredQueries and SQLiteData").
    struct PlainItem: Hashable, Sendable {
        var title: String
        var rank: Int
        var id: String

        static let table = FeedTable("feedItems") { row in
            PlainItem(title: row["title"], rank: row["rank"], id: row["id"])
        }

        init(title: String, rank: Int, id: String) { (self.title, self.rank, self.id) = (title, rank, id) }
        init(_ item: FeedItem) { self.init(title: item.title, rank: item.rank, id: item.id) }
    }

    func makeQueue() throws -> DatabaseQueue {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in try db.execute(sql: feedSchema) }
        return dbQueue
    }

    /// Writes through several paths: record, raw SQL, upsert, REPLACE,
    /// cascade, a rolled-back transaction.
    func write(_ dbQueue: DatabaseQueue) throws {
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'Home')")
            try FeedItem(id: "a", listID: 1, ownerID: nil, title: "Milk", rank: 0, dueDate: nil).insert(db)
            try db.execute(sql: "UPDATE feedItems SET rank = 5 WHERE id = 'a'")
            try db.execute(sql: "INSERT INTO feedItems(id, listID, title) VALUES ('a', 1, 'Oat milk') ON CONFLICT(id) DO UPDATE SET title = excluded.title")
            try db.execute(sql: "INSERT OR REPLACE INTO feedItems(id, listID, title) VALUES ('a', 1, 'Bread')")
            try db.execute(sql: "INSERT INTO feedItems(id, listID, title) VALUES ('b', 1, 'Eggs')")
        }
        #expect(throws: RollbackForTest.self) {
            try dbQueue.write { db in try db.execute(sql: "UPDATE feedItems SET title = 'never'"); throw RollbackForTest() }
        }
        try dbQueue.write { db in try db.execute(sql: "DELETE FROM feedLists WHERE id = 1") }
    }

    /// The oracle: the same writes seen by the GRDB record feed.
    @Test func aFeedTableSeesWhatTheRecordFeedSees() throws {
        let dbQueue = try makeQueue()
        let plain = Locked<[RecordChange<PlainItem>]>([]), records = Locked<[RecordChange<FeedItem>]>([])
        let transactions = Locked<[CommittedTransaction<PlainItem>]>([])
        let net = Locked<[RecordChange<PlainItem>]>([])
        let checked = Locked<[RecordChange<PlainItem>]>([]), checkedRecords = Locked<[RecordChange<FeedItem>]>([])
        let observations = [
            try dbQueue.observeChanges(to: PlainItem.table, scheduling: .onWriterQueue) { change in plain.mutate { $0.append(change) } },
            try dbQueue.observeChanges(to: FeedItem.self, scheduling: .onWriterQueue) { change in records.mutate { $0.append(change) } },
            try dbQueue.observeTransactions(of: PlainItem.table, scheduling: .onWriterQueue) { t in transactions.mutate { $0.append(t) } },
            try dbQueue.observeChanges(to: PlainItem.table, feed: ChangeFeed.all.netPerTransaction(), scheduling: .onWriterQueue) { change in
                net.mutate { $0.append(change) } },
            try dbQueue.checkChanges(to: PlainItem.table) { change in checked.mutate { $0.append(change) } },
            try dbQueue.checkChanges(to: FeedItem.self) { change in checkedRecords.mutate { $0.append(change) } },
        ]
        defer { observations.forEach { $0.cancel() } }
        try write(dbQueue)

        func plainChanges(_ changes: [RecordChange<FeedItem>]) -> [RecordChange<PlainItem>] {
            changes.map { change in
                switch change {
                case .inserted(let new): .inserted(PlainItem(new))
                case .updated(let old, let new): .updated(old: PlainItem(old), new: PlainItem(new))
                case .deleted(let old): .deleted(PlainItem(old))
                }
            }
        }
        let expected = plainChanges(records.value)
        #expect(expected.count == 8, "\(records.value)")
        #expect(plain.value == expected)
        #expect(transactions.value.flatMap(\.changes) == expected)
        #expect(transactions.value.count == 2)
        #expect(net.value == [.inserted(PlainItem(title: "Bread", rank: 0, id: "a")), .inserted(PlainItem(title: "Eggs", rank: 0, id: "b")),
                              .deleted(PlainItem(title: "Bread", rank: 0, id: "a")), .deleted(PlainItem(title: "Eggs", rank: 0, id: "b"))])
        // Checks run inside statements, the rolled-back one too.
        #expect(checked.value == plainChanges(checkedRecords.value))
        #expect(checked.value.count >= expected.count)
    }

    /// Beside another trigger that rewrites the row, in both
    /// `recursive_triggers` modes: a replica kept from a `FeedTable`'s
    /// changes equals the table, and its net feed equals the record feed's.
    @Test(arguments: [false, true]) func besideATouchTriggerInBothRecursiveModes(recursiveTriggers: Bool) throws {
        let dbQueue = try makeQueue()
        try dbQueue.write { db in
            try db.execute(sql: "PRAGMA recursive_triggers = \(recursiveTriggers ? "ON" : "OFF")")
            try db.execute(sql: """
                CREATE TEMP TRIGGER rankTouch AFTER UPDATE ON main.feedItems WHEN new.rank IS old.rank
                BEGIN UPDATE feedItems SET rank = rank + 100 WHERE id = new.id AND rank < 100; END
                """)
        }
        let replica = Locked<[String: PlainItem]>([:])
        let plainNet = Locked<[RecordChange<PlainItem>]>([]), recordNet = Locked<[RecordChange<FeedItem>]>([])
        let observations = [
            try dbQueue.observeChanges(to: PlainItem.table, scheduling: .onWriterQueue) { change in
                replica.mutate { rows in
                    switch change {
                    case .inserted(let new): rows[new.id] = new
                    case .updated(let old, let new): rows[old.id] = nil; rows[new.id] = new
                    case .deleted(let old): rows[old.id] = nil
                    }
                }
            },
            try dbQueue.observeChanges(to: PlainItem.table, feed: ChangeFeed.all.netPerTransaction(), scheduling: .onWriterQueue) { change in
                plainNet.mutate { $0.append(change) } },
            try dbQueue.observeChanges(to: FeedItem.self, feed: ChangeFeed.all.netPerTransaction(), scheduling: .onWriterQueue) { change in
                recordNet.mutate { $0.append(change) } },
        ]
        defer { observations.forEach { $0.cancel() } }
        try dbQueue.write { db in
            try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'Home'), (2, 'Work')")
            try db.execute(sql: "INSERT INTO feedItems(id, listID, ownerID, title) VALUES ('a', 1, 2, 'Milk'), ('b', 1, NULL, 'Eggs')")
            try db.execute(sql: "UPDATE feedItems SET title = title || '!'")                      // the touch rewrites each row
            try db.execute(sql: "INSERT OR REPLACE INTO feedItems(id, listID, title) VALUES ('b', 2, 'Bread')")
        }
        try dbQueue.write { db in try db.execute(sql: "DELETE FROM feedLists WHERE id = 2") }    // CASCADE and SET NULL
        let table = try dbQueue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, title, rank FROM feedItems").map { row in
                PlainItem(title: row["title"], rank: row["rank"], id: row["id"])
            }
        }
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.id, $0) }) == replica.value)
        #expect(table.contains { $0.rank >= 100 }, "the touch trigger ran")
        #expect(plainNet.value == recordNet.value.map { change -> RecordChange<PlainItem> in
            switch change {
            case .inserted(let new): .inserted(PlainItem(new))
            case .updated(let old, let new): .updated(old: PlainItem(old), new: PlainItem(new))
            case .deleted(let old): .deleted(PlainItem(old))
            }
        })
    }

    @Test func anAsyncSequenceAndKeysOfAFeedTable() async throws {
        let dbQueue = try makeQueue()
        let keys = Locked<[RecordChange<ChangedKey>]>([])
        let keyObservation = try dbQueue.observeChangedKeys(of: PlainItem.table, scheduling: .onWriterQueue) { change in
            keys.mutate { $0.append(change) }
        }
        defer { keyObservation.cancel() }
        let changes = try dbQueue.recordChanges(to: PlainItem.table)
        try await dbQueue.write { db in
            try db.execute(sql: "INSERT INTO feedItems(id, title) VALUES ('a', 'Milk')")
            try db.execute(sql: "DELETE FROM feedItems")
        }
        var received: [RecordChange<PlainItem>] = []
        for await change in changes {
            received.append(change)
            if received.count == 2 { break }
        }
        #expect(received == [.inserted(PlainItem(title: "Milk", rank: 0, id: "a")), .deleted(PlainItem(title: "Milk", rank: 0, id: "a"))])
        #expect(keys.value.map { $0.new?.primaryKey ?? $0.old?.primaryKey } == [["id": "a".databaseValue], ["id": "a".databaseValue]])
    }

    @Test func aTableNameIsMatchedAsSQLiteMatchesIt() throws {
        let dbQueue = try makeQueue()
        let changes = Locked<[RecordChange<String>]>([])
        let observation = try dbQueue.observeChanges(to: FeedTable("FEEDLISTS") { row in row["title"] as String }, scheduling: .onWriterQueue) {
            change in changes.mutate { $0.append(change) }
        }
        defer { observation.cancel() }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'Home')") }
        #expect(changes.value == [.inserted("Home")])
    }

    /// A model that is a StructuredQueries `@Table("reminders")` and a GRDB
    /// record without `databaseTableName`: GRDB derives "sqReminder", and the
    /// error names that name, where it came from, and both remedies.
    struct SQReminder: Codable, FetchableRecord, PersistableRecord { var id: Int64; var title: String }

    @Test func aDerivedTableNameThatMissesSaysWhereItCameFrom() throws {
        let dbQueue = try makeQueue()
        try dbQueue.write { db in try db.execute(sql: "CREATE TABLE reminders(id INTEGER PRIMARY KEY, title TEXT)") }
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.observeChanges(to: FeedTable(SQReminder.self), scheduling: .onWriterQueue) { _ in }
        }
        let message = error.message ?? ""
        #expect(message.contains("change feed of \"sqReminder\": the table does not exist"), "\(message)")
        #expect(message.contains("the databaseTableName of SQReminder"), "\(message)")
        #expect(message.contains("static let databaseTableName"), "\(message)")
        #expect(message.contains("FeedTable(\"<table>\")"), "\(message)")
        // The remedy it names works.
        let observation = try dbQueue.observeChanges(to: FeedTable("reminders") { row in row["title"] as String },
                                                     scheduling: .onWriterQueue) { _ in }
        observation.cancel()
    }

    @Test func aMissingTableAndAnUndecodableRowAreReported() throws {
        let dbQueue = try makeQueue()
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.observeChanges(to: FeedTable("nosuchtable") { _ in 0 }, scheduling: .onWriterQueue) { _ in }
        }
        #expect(error.message?.contains("change feed of \"nosuchtable\": the table does not exist") == true, "\(error)")

        struct NotAList: Error {}
        let errors = Locked<[String]>([]), titles = Locked<[RecordChange<String>]>([])
        let picky = FeedTable("feedLists") { row -> String in
            let title: String = row["title"]
            if title == "bad" { throw NotAList() }
            return title
        }
        let observation = try dbQueue.observeChanges(to: picky, scheduling: .onWriterQueue, onError: { error in
            errors.mutate { $0.append("\(error)") }
        }) { change in titles.mutate { $0.append(change) } }
        defer { observation.cancel() }
        try dbQueue.write { db in try db.execute(sql: "INSERT INTO feedLists(id, title) VALUES (1, 'bad'), (2, 'good')") }
        #expect(titles.value == [.inserted("good")], "the others still come")
        #expect(errors.value == ["NotAList()"])
    }

    // MARK: - Rules written as SQL

    /// The shape StructuredQueries' `createTempTrigger(...).query`
    /// renders (0.37.0: TEMPORARY, a quoted name with the call site, an
    /// unqualified table, FOR EACH ROW, one statement per line).
    static let structuredQueriesStyleTouch = """
        CREATE TEMPORARY TRIGGER
          "after_update_on_chores@ReminderRules.swift:12:40"
        AFTER UPDATE ON "chores"
        FOR EACH ROW WHEN ("new"."title" IS NOT "old"."title")
        BEGIN
          UPDATE "chores"
          SET "updatedAt" = datetime_subsec()
          WHERE ("chores"."rowid" = "new"."rowid");
        END
        """

    @Test func aTriggerWrittenAsSQLJoinsARuleSetAndIsKept() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        var migrator = RuleSetTests.migrator
        try migrator.migrate(dbQueue)
        let rule = TempTrigger(sql: Self.structuredQueriesStyleTouch)
        #expect(rule.name == "after_update_on_chores@ReminderRules.swift:12:40")
        try RuleSet { rule }.install(in: dbQueue)
        func stamped() throws -> String? {
            try dbQueue.write { db in
                try db.execute(sql: "INSERT INTO chores(id, title) VALUES (1, 'Milk') ON CONFLICT DO UPDATE SET title = 'Milk'")
                try db.execute(sql: "UPDATE chores SET updatedAt = NULL; UPDATE chores SET title = 'Oat milk' WHERE id = 1")
                return try String.fetchOne(db, sql: "SELECT updatedAt FROM chores WHERE id = 1")
            }
        }
        #expect(try stamped() != nil)
        RuleSetTests.recreateChores(&migrator)
        try migrator.migrate(dbQueue)
        try dbQueue.write { db in try db.execute(sql: "UPDATE chores SET title = 'Milk'") }
        #expect(try stamped() != nil, "kept across a migration that recreates the table")
    }

    @Test func aTriggerWrittenAsSQLIsCheckedAgainstTheLiveSchema() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in try db.execute(sql: choresSchema) }
        let unfit = TempTrigger(sql: """
            CREATE TEMP TRIGGER archive AFTER UPDATE OF "archivedAt" ON main.chores
            BEGIN SELECT 1; END;
            """)
        #expect(unfit.name == "archive")
        let error = try #require(throws: DatabaseError.self) { try RuleSet { unfit }.install(in: dbQueue) }
        #expect(error.message?.contains("UPDATE OF names \"archivedAt\", which the table does not have") == true, "\(error)")
    }

    @Test(arguments: [
        ("CREATE TRIGGER t AFTER INSERT ON chores BEGIN SELECT 1; END", "it is not CREATE TEMP TRIGGER"),
        ("CREATE TEMP TRIGGER t AFTER INSERT ON chores BEGIN SELECT 1; END; DROP TABLE chores", "it is not one statement ending with END"),
        ("CREATE TEMP TRIGGER a AFTER INSERT ON chores BEGIN SELECT 1; END; CREATE TEMP TRIGGER b AFTER DELETE ON chores BEGIN SELECT 1; END",
         "it is not one statement ending with END"),
        ("CREATE TEMP VIEW v AS SELECT 1", "it creates no trigger"),
        ("CREATE TEMP TRIGGER main.t AFTER INSERT ON chores BEGIN SELECT 1; END", "the trigger \"t\" is not in the temp schema"),
        ("UPDATE chores SET title = ''", "it does not start with CREATE"),
    ])
    func sqlThatIsNoTempTriggerIsRefusedWhenInstalled(sql: String, reason: String) throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in try db.execute(sql: choresSchema) }
        let rule = TempTrigger(sql: sql)
        let error = try #require(throws: DatabaseError.self) { try RuleSet { rule }.install(in: dbQueue) }
        #expect(error.message?.contains("this SQL is not a TEMP trigger that a RuleSet can keep: \(reason)") == true, "\(error)")
        let direct = try #require(throws: DatabaseError.self) { try dbQueue.write { db in try rule.execute(db) } }
        #expect(direct.message?.contains(reason) == true)
        try dbQueue.read { db throws in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type IN ('trigger', 'view')") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.sqlite_master WHERE type IN ('trigger', 'view')") == 0)
            #expect(try db.tableExists("chores"), "nothing of it ran")
        }
    }
}
