import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

struct DurableNote: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    static let databaseTableName = "notes"
    var id: String
    var title: String
}

/// A pool with the extension, and a plain GRDB queue on the same file, as
/// another process without SQLiteTriggers would write it.
private func makeFile() throws -> (pool: DatabasePool, plain: DatabaseQueue, cleanup: () -> Void) {
    let path = temporaryDatabasePath()
    let pool = try DatabasePool(path: path, configuration: installingConfiguration())
    try pool.write { db in
        try db.execute(sql: """
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL UNIQUE);
            CREATE TABLE tags(name TEXT NOT NULL, owner BLOB NOT NULL, PRIMARY KEY(name, owner)) WITHOUT ROWID;
            CREATE TABLE replica(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL);
            """)
        try db.installDurableLog(for: ["notes", "tags"])
    }
    var config = Configuration()
    config.busyMode = .timeout(10)
    let plain = try DatabaseQueue(path: path, configuration: config)
    return (pool, plain, { removeDatabaseFiles(path) })
}

/// Waits until `condition` holds, for at most ten seconds.
private func eventually(_ condition: () throws -> Bool) async throws -> Bool {
    for _ in 0..<1000 {
        if try condition() { return true }
        try await Task.sleep(nanoseconds: 10_000_000)
    }
    return try condition()
}

@Suite(.serialized) struct DurableLogTests {
    @Test func anExactlyOnceObserverKeepsAReplicaOfEveryWritersChanges() async throws {
        let (pool, plain, cleanup) = try makeFile()
        defer { cleanup() }
        let batches = Locked(0)
        let errors = Locked([String]())
        let observation = try pool.observeDurableChanges(to: DurableNote.self, consumer: "replica",
                                                         pollInterval: 0.05, onError: { error in errors.mutate { $0.append("\(error)") } }) { db, batch in
            for change in batch.changes {
                let id = change.key[0]
                try db.execute(sql: "DELETE FROM replica WHERE id = ?", arguments: [id])
                if let note = change.record {
                    try db.execute(sql: "INSERT INTO replica VALUES (?, ?)", arguments: [note.id, note.title])
                }
            }
            batches.mutate { $0 += 1 }
        }
        // This app, then "another process" without the extension: a
        // REPLACE over the UNIQUE title deletes a row without a DELETE
        // trigger (recursive_triggers OFF), a key changes, a row goes.
        try await pool.write { db in
            try DurableNote(id: "a", title: "Inbox").insert(db)
            try DurableNote(id: "b", title: "Home").insert(db)
        }
        try await plain.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO notes VALUES ('c', 'Inbox')")
            try db.execute(sql: "UPDATE notes SET id = 'd' WHERE id = 'b'")
            try db.execute(sql: "INSERT INTO notes VALUES ('e', 'Errands')")
        }
        try await plain.write { db in try db.execute(sql: "DELETE FROM notes WHERE id = 'e'") }
        let same = try await eventually {
            try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM notes ORDER BY id")
                    == Row.fetchAll(db, sql: "SELECT * FROM replica ORDER BY id")
                    && db.durableLogEnd() > 0
                    && Int64.fetchOne(db, sql: "SELECT position FROM sqlitetriggers_log_consumers WHERE name = 'replica'")
                    == db.durableLogEnd()
            }
        }
        #expect(same)
        let ids = try await pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM replica ORDER BY id") }
        #expect(ids == ["c", "d"])
        #expect(batches.value >= 1)
        #expect(errors.value.isEmpty)
        // Everything read is compacted away, but the log's last row, whose
        // id is the log's end (THE FORMAT in ext/durable_log.c).
        let logged = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlitetriggers_log") }
        #expect(logged == 1)
        observation.cancel()
    }

    @Test func changesComeInTransactionsKnownOnlyForWritersWithTheExtension() throws {
        let (pool, plain, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in _ = try db.startDurableConsumer("sync") }
        try pool.write { db in
            try DurableNote(id: "a", title: "A").insert(db)
            try DurableNote(id: "b", title: "B").insert(db)
        }
        try plain.write { db in
            try db.execute(sql: "UPDATE notes SET title = lower(title)")
        }
        let batch = try pool.read { db in try db.durableBatch(for: "sync", of: FeedTable(DurableNote.self)) }
        #expect(batch.transactions.count == 3)
        #expect(batch.transactions[0].id != nil)
        #expect(batch.transactions[0].changes.map(\.key) == [["a".databaseValue], ["b".databaseValue]])
        #expect(batch.transactions[0].changes.map(\.kind) == [.inserted, .inserted])
        #expect(batch.transactions[1].id == nil && batch.transactions[2].id == nil)
        #expect(batch.transactions[1...].map { $0.changes.map(\.kind) } == [[.updated], [.updated]])
        #expect(batch.changes.map(\.record?.title) == ["a", "b", "a", "b"])
    }

    /// A trigger another process plants after the consumer started (one
    /// that marks every local edit "server", so that an uploader excluding
    /// that origin never sends it) stops the next batch, naming it.
    @Test func aTriggerPlantedWhileConsumingStopsTheNextBatch() throws {
        let (pool, plain, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in _ = try db.startDurableConsumer("upload") }
        try pool.write { db in try DurableNote(id: "a", title: "A").insert(db) }
        let first = try pool.read { db in
            try db.durableBatch(for: "upload", of: FeedTable(DurableNote.self), excluding: ["server"])
        }
        #expect(first.changes.map(\.key) == [["a".databaseValue]])
        try plain.write { db in
            try db.execute(sql: """
                CREATE TRIGGER mark AFTER INSERT ON notes BEGIN
                  INSERT OR IGNORE INTO sqlitetriggers_log_origins VALUES (sqlite_compileoption_get(-7316), 'server', 0);
                END
                """)
        }
        let error = #expect(throws: DatabaseError.self) {
            try pool.read { db in try db.durableBatch(for: "upload", of: FeedTable(DurableNote.self), excluding: ["server"]) }
        }
        #expect(error?.message?.contains(#"the trigger "mark" on "notes" is not the durable log's"#) == true)
        // The app's writes are not marked: the origins table takes no row
        // from the trigger (its INSERT OR IGNORE is dropped by the table's
        // CHECK).
        try pool.write { db in try DurableNote(id: "b", title: "B").insert(db) }
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlitetriggers_log_origins") } == 0)
    }

    /// A full disk at the consumer's commit (SQLite's max_page_count on
    /// its connection, as a 4 MiB tmpfs would): reported through onError,
    /// tried again with a wait, and, once there is room, every change is
    /// applied once; the observation goes on.
    @Test func aFullDiskIsReportedAndTheConsumerGoesOn() async throws {
        let (pool, plain, cleanup) = try makeFile()
        defer { cleanup() }
        try await pool.write { db in
            try db.execute(sql: "CREATE TABLE audit(noteID TEXT NOT NULL, padding BLOB NOT NULL)")
        }
        let pages = try await pool.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count")! }
        try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA max_page_count = \(pages + 2)")
        }
        let errors = Locked([ResultCode]())
        let observation = try pool.observeDurableChanges(
            to: DurableNote.self, consumer: "audit", pollInterval: 0.02,
            onError: { error in errors.mutate { $0.append((error as? DatabaseError)?.resultCode ?? .SQLITE_ERROR) } }
        ) { db, batch in
            for change in batch.changes {
                try db.execute(sql: "INSERT INTO audit VALUES (?, zeroblob(20000))", arguments: [change.key[0]])
            }
        }
        for id in ["a", "b", "c"] {
            try await plain.write { db in try DurableNote(id: id, title: id.uppercased()).insert(db) }
        }
        #expect(try await eventually { errors.value.contains(.SQLITE_FULL) })
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM audit")! } == 0)
        // Room again: the same batch, once.
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA max_page_count = 1073741823") }
        #expect(try await eventually {
            try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM audit")! } == 3
        })
        try await plain.write { db in try DurableNote(id: "d", title: "D").insert(db) }
        #expect(try await eventually {
            try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM audit")! } == 4
        })
        let audited = try await pool.read { db in try String.fetchAll(db, sql: "SELECT noteID FROM audit ORDER BY noteID") }
        #expect(audited == ["a", "b", "c", "d"])
        #expect(errors.value.allSatisfy { $0 == .SQLITE_FULL })
        withExtendedLifetime(observation) {}
    }

    /// The async sequence meets a file it cannot write for a while (here
    /// `query_only`, which answers SQLITE_READONLY as a read-only mount
    /// does) when it acknowledges: reported, tried again, and the loop goes
    /// on with each batch once.
    @Test func theAsyncSequenceSurvivesAFileItCannotWriteForAWhile() async throws {
        let (pool, plain, cleanup) = try makeFile()
        defer { cleanup() }
        try await pool.write { db in _ = try db.startDurableConsumer("upload") }
        try await plain.write { db in try DurableNote(id: "a", title: "A").insert(db) }
        let errors = Locked([ResultCode]())
        let received = Locked([String]())
        let loop = Task {
            for try await batch in pool.durableChanges(
                to: DurableNote.self, consumer: "upload", pollInterval: 0.02,
                onError: { error in errors.mutate { $0.append((error as? DatabaseError)?.resultCode ?? .SQLITE_ERROR) } }
            ) {
                received.mutate { $0 += batch.changes.map { String.fromDatabaseValue($0.key[0])! } }
                if received.value == ["a"] {
                    try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA query_only = ON") }
                }
                if received.value.count == 2 { return }
            }
        }
        #expect(try await eventually { errors.value.contains(.SQLITE_READONLY) })
        #expect(try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT coalesce(position, 0) FROM sqlitetriggers_log_consumers WHERE name = 'upload'") } == 0)
        try await plain.write { db in try DurableNote(id: "b", title: "B").insert(db) }
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA query_only = OFF") }
        try await loop.value
        #expect(received.value == ["a", "b"])
        #expect(errors.value.allSatisfy { $0 == .SQLITE_READONLY })
    }

    @Test func aBatchHoldsWholeTransactionsPastItsLimit() throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in _ = try db.startDurableConsumer("sync") }
        try pool.write { db in
            for i in 0..<5 { try DurableNote(id: "n\(i)", title: "t\(i)").insert(db) }
        }
        let batch = try pool.read { db in try db.durableBatch(for: "sync", of: FeedTable(DurableNote.self), limit: 2) }
        #expect(batch.transactions.count == 1)
        #expect(batch.changes.count == 5)
    }

    @Test func netFoldingLeavesOneChangePerRowPerTransaction() throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in
            try db.startDurableConsumer("sync")
            try DurableNote(id: "kept", title: "K").insert(db)
        }
        try pool.write { db in
            try DurableNote(id: "gone", title: "G").insert(db)
            try db.execute(sql: "UPDATE notes SET title = 'g' WHERE id = 'gone'")
            try db.execute(sql: "DELETE FROM notes WHERE id = 'gone'")
            try DurableNote(id: "new", title: "N").insert(db)
            try db.execute(sql: "UPDATE notes SET title = 'n' WHERE id = 'new'")
            try db.execute(sql: "UPDATE notes SET title = 'k' WHERE id = 'kept'")
            try db.execute(sql: "UPDATE notes SET title = 'kk' WHERE id = 'kept'")
        }
        let batch = try pool.read { db in try db.durableBatch(for: "sync", of: FeedTable(DurableNote.self), net: true) }
        #expect(batch.transactions.count == 2)
        #expect(batch.transactions[1].changes.map(\.kind) == [.inserted, .updated])
        #expect(batch.transactions[1].changes.map(\.record?.title) == ["n", "kk"])
        let exact = try pool.read { db in try db.durableBatch(for: "sync", of: FeedTable(DurableNote.self)) }
        #expect(exact.transactions[1].changes.count == 7)
    }

    @Test func compositeKeysWithBlobsComeBackAsValues() throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in
            try db.startDurableConsumer("sync")
            try db.execute(sql: "INSERT INTO tags VALUES ('red', x'00ff10')")
        }
        let tags = FeedTable("tags") { row in row["name"] as String }
        let batch = try pool.read { db in try db.durableBatch(for: "sync", of: tags) }
        #expect(batch.changes.map(\.key) == [["red".databaseValue, Data([0, 255, 16]).databaseValue]])
        #expect(batch.changes.map(\.record) == ["red"])
    }

    /// A REAL in a composite key keeps every digit in the log, and a key
    /// column's name with a quote is valid JSON: the change finds its row.
    @Test func compositeKeysWithRealsAndQuotedNamesFindTheirRows() throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE readings(device TEXT NOT NULL, "at""time" REAL NOT NULL, value REAL,
                  PRIMARY KEY(device, "at""time"))
                """)
            try db.installDurableLog(for: ["readings"])
            try db.startDurableConsumer("sync")
            try db.execute(sql: "INSERT INTO readings VALUES ('d1', 1700000000.123456, 1.5), ('d2', 0.1, 2)")
            try db.execute(sql: "UPDATE readings SET value = 3 WHERE device = 'd2'")
        }
        let readings = FeedTable("readings") { row in row["value"] as Double }
        let batch = try pool.read { db in try db.durableBatch(for: "sync", of: readings) }
        #expect(batch.changes.map(\.record) == [1.5, 3, 3])      // rows as they are when read
        #expect(batch.changes.map(\.key) == [["d1".databaseValue, 1700000000.123456.databaseValue],
                                              ["d2".databaseValue, 0.1.databaseValue],
                                              ["d2".databaseValue, 0.1.databaseValue]])
    }

    /// REAL key values at the extremes come back bit for bit, and find
    /// their rows: the largest finite double, infinities, subnormals,
    /// zero, and large doubles whose 17-digit text used to miss its row.
    @Test func extremeRealKeysFindTheirRows() throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        var values: [Double] = [.greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity,
                                .leastNonzeroMagnitude, .leastNormalMagnitude, 0, -2.5, 1e120]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            values.append(Double(bitPattern: generator.next() & 0x7FEF_FFFF_FFFF_FFFF))   // finite, positive
        }
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE s(d INTEGER NOT NULL, ts REAL NOT NULL, PRIMARY KEY(d, ts))")
            try db.installDurableLog(for: ["s"])
            try db.startDurableConsumer("sync")
            for (index, value) in values.enumerated() {
                try db.execute(sql: "INSERT INTO s VALUES (?, ?)", arguments: [index, value])
            }
        }
        let table = FeedTable("s") { row in row["ts"] as Double }
        let batch = try pool.read { db in try db.durableBatch(for: "sync", of: table, limit: values.count) }
        #expect(batch.changes.count == values.count)
        for (change, value) in zip(batch.changes, values) {
            let key = change.key.last.flatMap { Double.fromDatabaseValue($0) }
            #expect(key?.bitPattern == value.bitPattern, "key of \(value)")
            #expect(change.record?.bitPattern == value.bitPattern, "row of \(value)")
        }
    }

    /// Where a consumer starts, its state, the backlog cap, and `limit`.
    @Test func theConsumerAPIStartsReportsAndCaps() async throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        try await pool.write { db in
            try DurableNote(id: "a", title: "A").insert(db)
            try DurableNote(id: "b", title: "B").insert(db)
            // "all" first: the first consumer at the end would let the log
            // compact everything before it.
            #expect(try db.startDurableConsumer("all", from: .oldestHeld))
            #expect(try db.startDurableConsumer("late"))
            #expect(try db.startDurableConsumer("all", from: .end) == false)     // exists: unchanged
        }
        try await pool.write { db in try DurableNote(id: "c", title: "C").insert(db) }
        let late = try await pool.read { db in try db.durableConsumer("late") }
        #expect(late == DurableConsumerState(name: "late", position: 2, backlog: 1, hasFallenBehind: false,
                                             maxBacklog: 1_000_000))
        #expect(try await pool.read { db in try db.durableConsumer("all")?.backlog } == 3)
        #expect(try await pool.read { db in try db.durableConsumer("nobody") } == nil)
        // limit: 1 still gives the first transaction whole.
        let first = try await pool.read { db in try db.durableBatch(for: "all", of: FeedTable(DurableNote.self), limit: 1) }
        #expect(first.changes.map(\.record?.id) == ["a", "b"])
        // The record type names its table, as the observers take it.
        let same = try await pool.read { db in try db.durableBatch(for: "all", of: DurableNote.self, limit: 1) }
        #expect(same.changes.map(\.record) == first.changes.map(\.record) && same.position == first.position)
        // A cap of 1: once "all" reads to the end, "late" (2 behind) falls behind.
        try await pool.write { db in
            try DurableNote(id: "d", title: "D").insert(db)
            try db.setDurableLogMaxBacklog(1)
            try db.acknowledge(db.durableBatch(for: "all", of: FeedTable(DurableNote.self), limit: 100))
        }
        #expect(try await pool.read { db in try db.durableConsumer("all")?.hasFallenBehind } == false)
        #expect(try await pool.read { db in try db.durableConsumer("late")?.hasFallenBehind } == true)
        await #expect(throws: DatabaseError.self) { try await pool.write { db in try db.setDurableLogMaxBacklog(0) } }
        // A break leaves the batch in hand unacknowledged: it comes again.
        try await pool.write { db in
            try db.startDurableConsumer("upload")
            try DurableNote(id: "e", title: "E").insert(db)
        }
        for _ in 1...2 {
            for try await batch in pool.durableChanges(to: DurableNote.self, consumer: "upload") {
                #expect(batch.changes.map(\.record?.id) == ["e"])
                break
            }
        }
    }

    @Test func aConsumerReadsOnlyItsTablesAndSkipsTheRest() throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in
            try db.startDurableConsumer("notesOnly")
            try db.execute(sql: "INSERT INTO tags VALUES ('red', x'01')")
        }
        let batch = try pool.read { db in try db.durableBatch(for: "notesOnly", of: FeedTable(DurableNote.self)) }
        #expect(batch.transactions.isEmpty && batch.advances)
        try pool.write { db in try db.acknowledge(batch) }
        // Compacted to the log's last row, which holds its end.
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlitetriggers_log") } == 1)
        #expect(try pool.read { db in try db.durableConsumer("notesOnly") }?.backlog == 0)
    }

    @Test func aConsumerThatFellBehindIsToldSoUntilReset() throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in
            try db.execute(sql: "UPDATE sqlitetriggers_log_meta SET maxBacklog = 2")
            try db.startDurableConsumer("reader")
            try db.startDurableConsumer("sleeper")
            for i in 0..<4 { try DurableNote(id: "n\(i)", title: "t\(i)").insert(db) }
        }
        try pool.write { db in
            try db.acknowledge(db.durableBatch(for: "reader", of: FeedTable(DurableNote.self)))
        }
        #expect {
            try pool.read { db in try db.durableBatch(for: "sleeper", of: FeedTable(DurableNote.self)) }
        } throws: { error in
            guard case DurableLogError.fellBehind("sleeper", 0, 2) = error else { return false }
            return "\(error)".contains("resetDurableConsumer(\"sleeper\")")
        }
        try pool.write { db in try db.resetDurableConsumer("sleeper") }
        let batch = try pool.read { db in try db.durableBatch(for: "sleeper", of: FeedTable(DurableNote.self)) }
        #expect(batch.changes.isEmpty && !batch.advances)
    }

    @Test func startingAConsumerAgainCompactsTheLog() throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in
            try db.execute(sql: "UPDATE sqlitetriggers_log_meta SET maxBacklog = 2")
            #expect(try db.startDurableConsumer("sleeper"))
            for i in 0..<5 { try DurableNote(id: "n\(i)", title: "t\(i)").insert(db) }
        }
        // Nobody moved: nothing was compacted, past the cap or not.
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlitetriggers_log") } == 5)
        let created = try pool.write { db in try db.startDurableConsumer("sleeper") }
        #expect(!created)
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlitetriggers_log") } == 2)
        #expect(throws: DurableLogError.self) {
            try pool.read { db in try db.durableBatch(for: "sleeper", of: FeedTable(DurableNote.self)) }
        }
    }

    @Test func mistakesFailNamingTheCause() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in try db.execute(sql: "CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL)") }
        #expect(throws: DurableLogError.self) {
            try dbQueue.write { db in try db.startDurableConsumer("sync") }
        }
        try dbQueue.write { db in try db.installDurableLog(for: ["notes"]) }
        #expect {
            try dbQueue.read { db in try db.durableBatch(for: "nobody", of: FeedTable(DurableNote.self)) }
        } throws: { error in "\(error)" == "no durable consumer \"nobody\": startDurableConsumer(\"nobody\") makes one" }
        #expect {
            try dbQueue.write { db in try db.installDurableLog(for: ["missing"]) }
        } throws: { error in "\(error)".contains("no table \"missing\" in the main schema") }
        // A migration recreated the table: observing refuses, naming the remedy.
        try dbQueue.write { db in
            try db.execute(sql: """
                CREATE TABLE new_notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, color INT);
                DROP TABLE notes;
                ALTER TABLE new_notes RENAME TO notes;
                """)
        }
        #expect {
            try dbQueue.observeDurableChanges(to: DurableNote.self, consumer: "sync") { _, _ in }
        } throws: { error in "\(error)".contains("call sqlitetriggers_log_install('notes')") }
    }

    @Test func theAsyncSequenceDeliversAgainWhatWasNotAcknowledged() async throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        try await pool.write { db in _ = try db.startDurableConsumer("upload") }
        try await pool.write { db in try DurableNote(id: "a", title: "A").insert(db) }
        // A first run takes a batch and "crashes" before asking for more.
        var first = pool.durableChanges(to: DurableNote.self, consumer: "upload", pollInterval: 0.05).makeAsyncIterator()
        let crashed = try await first.next()
        #expect(crashed?.changes.map(\.key) == [["a".databaseValue]])
        // The next run gets it again; asking for more acknowledges it.
        var second = pool.durableChanges(to: DurableNote.self, consumer: "upload", pollInterval: 0.05).makeAsyncIterator()
        let again = try await second.next()
        #expect(again?.changes.map(\.key) == [["a".databaseValue]])
        try await pool.write { db in try DurableNote(id: "b", title: "B").insert(db) }
        let next = try await second.next()
        #expect(next?.changes.map(\.key) == [["b".databaseValue]])
        let position = try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT position FROM sqlitetriggers_log_consumers WHERE name = 'upload'")
        }
        #expect(position == crashed?.position)
    }

    @Test func aForgedChangeInTheFileDeliversOnlyWhatTheTableHolds() throws {
        let (pool, plain, cleanup) = try makeFile()
        defer { cleanup() }
        try pool.write { db in
            try db.startDurableConsumer("sync")
            try DurableNote(id: "real", title: "Real").insert(db)
        }
        // A hostile writer plants log rows: hints, each read against the
        // table.
        try plain.write { db in
            try db.execute(sql: """
                INSERT INTO sqlitetriggers_log(tableId, kind, rowKey) VALUES (1, 3, 'real'), (1, 1, 'ghost');
                """)
        }
        let batch = try pool.read { db in try db.durableBatch(for: "sync", of: FeedTable(DurableNote.self), net: true) }
        let records = batch.changes.map { "\(String.fromDatabaseValue($0.key[0]) ?? "?"): \($0.record?.title ?? "absent")" }
        #expect(records == ["real: Real", "real: Real", "ghost: absent"])
        // A trigger that forges more is an object of the file writing the
        // log: the next batch refuses the file, naming it.
        try plain.write { db in
            try db.execute(sql: """
                CREATE TRIGGER forge AFTER INSERT ON tags BEGIN
                  INSERT INTO sqlitetriggers_log(tableId, kind, rowKey) VALUES (1, 2, 'real');
                END;
                INSERT INTO tags VALUES ('x', x'01');
                """)
        }
        #expect {
            try pool.read { db in try db.durableBatch(for: "sync", of: FeedTable(DurableNote.self), net: true) }
        } throws: { error in "\(error)".contains(#"the trigger "forge" on "tags" is not the durable log's"#) }
        try plain.write { db in try db.execute(sql: "DROP TRIGGER forge") }
        // A trigger planted in the file cannot call the log's functions.
        try plain.write { db in
            try db.execute(sql: "CREATE TRIGGER call AFTER INSERT ON notes BEGIN SELECT sqlitetriggers_log_install('notes'); END")
        }
        #expect {
            try pool.write { db in try DurableNote(id: "new", title: "New").insert(db) }
        } throws: { error in "\(error)".contains("unsafe use of sqlitetriggers_log_install()") }
    }

    @Test func notificationNamesAreOnePerFileWhateverPathReachesIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID().uuidString)")
        let link = folder.path + "-link"
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: folder.path)
        defer {
            try? FileManager.default.removeItem(atPath: link)
            try? FileManager.default.removeItem(at: folder)
        }
        for file in ["db.sqlite", "other.sqlite"] {
            _ = FileManager.default.createFile(atPath: folder.appendingPathComponent(file).path, contents: Data())
        }
        let name = DurableObservation.notificationName(forDatabaseAt: folder.path + "/db.sqlite")
        #expect(name?.hasPrefix("sqlitetriggers.durable-log.") == true)
        #expect(name == DurableObservation.notificationName(forDatabaseAt: link + "/./db.sqlite"))
        #expect(name != DurableObservation.notificationName(forDatabaseAt: folder.path + "/other.sqlite"))
        #expect(DurableObservation.notificationName(forDatabaseAt: folder.path + "/missing.sqlite") == nil)
    }

    /// Another process commits (the sqlite3 shell, without the extension;
    /// then with it): the observation wakes at once, long before its poll.
    @Test func anotherProcessesCommitWakesAnObservationBeforeItsPoll() async throws {
        let (pool, _, cleanup) = try makeFile()
        defer { cleanup() }
        let seen = Locked([String]())
        let observation = try pool.observeDurableChanges(to: DurableNote.self, consumer: "wake",
                                                         pollInterval: 3600) { _, batch in
            seen.mutate { $0 += batch.changes.compactMap { $0.record?.title } }
        }
        defer { observation.cancel() }
        try await Task.sleep(nanoseconds: 200_000_000)      // the first look, at the start, is done
        let shell = ProcessInfo.processInfo.environment["SQLITE3"] ?? "sqlite3"
        let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../build/libsqlitetriggers").standardizedFileURL.path
        for (title, preamble) in [("from the shell", ""), ("from the shell with the extension", ".load \(library)\n")] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [shell, "-batch", pool.path]
            let input = Pipe()
            process.standardInput = input
            try process.run()
            input.fileHandleForWriting.write(Data("\(preamble).timeout 10000\nINSERT INTO notes VALUES ('\(title)', '\(title)');\n".utf8))
            try input.fileHandleForWriting.close()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            let woke = try await eventually { seen.value.contains(title) }
            #expect(woke, "an observation polling every hour saw \(title) at once")
        }
    }
}
