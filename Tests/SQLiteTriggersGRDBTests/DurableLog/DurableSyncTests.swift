import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// A row of every type a tombstone keeps.
struct SyncedNote: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    static let databaseTableName = "syncedNotes"
    var id: Int64
    var title: String
    var weight: Double
    var photo: Data?
    var updatedAt: Date?
}

/// A pool with the extension and a plain queue on the same file (a writer
/// without SQLiteTriggers), `syncedNotes` logged with tombstones.
private func makeSyncFile() throws -> (pool: DatabasePool, plain: DatabaseQueue, cleanup: () -> Void) {
    let path = temporaryDatabasePath()
    let pool = try DatabasePool(path: path, configuration: installingConfiguration())
    try pool.write { db in
        try db.execute(sql: """
            CREATE TABLE syncedNotes(id INTEGER PRIMARY KEY, title TEXT NOT NULL, weight REAL NOT NULL, photo BLOB, updatedAt TEXT);
            """)
        try db.installDurableLog(for: ["syncedNotes"], tombstones: true)
        try db.startDurableConsumer("upload")
    }
    var config = Configuration()
    config.busyMode = .timeout(10)
    let plain = try DatabaseQueue(path: path, configuration: config)
    return (pool, plain, { removeDatabaseFiles(path) })
}

@Suite(.serialized) struct DurableSyncTests {
    // MARK: - Origins

    @Test func downloadsMarkedWithAnOriginDoNotEchoBackToTheUploader() throws {
        let (pool, plain, cleanup) = try makeSyncFile()
        defer { cleanup() }
        let downloaded = try pool.write { db -> Int64 in
            try db.setDurableLogOrigin("server")
            #expect(try db.durableLogOrigin() == "server")
            try SyncedNote(id: 1, title: "from the server", weight: 1, photo: nil, updatedAt: nil).insert(db)
            return try db.durableLogTransactionID()
        }
        try pool.write { db in try SyncedNote(id: 2, title: "typed here", weight: 2, photo: nil, updatedAt: nil).insert(db) }
        try plain.write { db in try db.execute(sql: "UPDATE syncedNotes SET title = 'edited in the shell' WHERE id = 1") }
        let everything = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self) }
        #expect(everything.transactions.map(\.origin) == ["server", nil, nil])
        #expect(everything.transactions.first?.id == downloaded)
        let upload = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self, excluding: ["server"]) }
        #expect(upload.changes.map(\.key) == [[2.databaseValue], [1.databaseValue]])
        #expect(upload.position == everything.position)
        try pool.write { db in try db.acknowledge(upload) }
        #expect(try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self).advances } == false)
        // The next transaction is local again.
        try pool.write { db in
            #expect(try db.durableLogOrigin() == nil)
            try SyncedNote(id: 3, title: "local", weight: 3, photo: nil, updatedAt: nil).insert(db)
        }
        let next = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self, excluding: ["server"]) }
        #expect(next.transactions.map(\.origin) == [nil])
    }

    @Test func anOriginMarksTheWholeTransactionAndASavepointRolledBackUndoesIt() throws {
        let (pool, _, cleanup) = try makeSyncFile()
        defer { cleanup() }
        #expect {
            try pool.writeWithoutTransaction { db in try db.setDurableLogOrigin("server") }
        } throws: { error in "\(error)".contains("no transaction is open: call it after BEGIN") }
        try pool.write { db in
            try SyncedNote(id: 1, title: "before the mark", weight: 1, photo: nil, updatedAt: nil).insert(db)
            try db.setDurableLogOrigin("server")
            #expect(db.lastInsertedRowID == 1)     // the mark's own row leaves it alone
            try SyncedNote(id: 2, title: "after it", weight: 1, photo: nil, updatedAt: nil).insert(db)
        }
        try pool.write { db in
            try db.inSavepoint {
                try db.setDurableLogOrigin("server")
                return .rollback
            }
            try SyncedNote(id: 3, title: "local", weight: 1, photo: nil, updatedAt: nil).insert(db)
        }
        let batch = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self) }
        #expect(batch.transactions.map(\.origin) == ["server", nil])
        #expect(batch.transactions.map { $0.changes.count } == [2, 1])
        #expect {
            try pool.writeWithoutTransaction { db in _ = try db.durableLogTransactionID() }
        } throws: { error in "\(error)".contains("sqlitetriggers_log_transaction: no transaction is open") }
    }

    @Test func anObservationLeavesOutTheOriginsItExcludes() async throws {
        let (pool, _, cleanup) = try makeSyncFile()
        defer { cleanup() }
        let seen = Locked([Int64]())
        let observation = try pool.observeDurableChanges(to: SyncedNote.self, consumer: "upload", excluding: ["server"],
                                                         pollInterval: 0.05) { _, batch in
            seen.mutate { $0 += batch.changes.compactMap { $0.key(as: Int64.self) } }
        }
        try await pool.write { db in
            try db.setDurableLogOrigin("server")
            try SyncedNote(id: 1, title: "downloaded", weight: 1, photo: nil, updatedAt: nil).insert(db)
        }
        try await pool.write { db in try SyncedNote(id: 2, title: "mine", weight: 2, photo: nil, updatedAt: nil).insert(db) }
        var delivered: [Int64] = []
        for _ in 0..<500 where delivered != [2] {
            try await Task.sleep(nanoseconds: 10_000_000)
            delivered = seen.value
        }
        #expect(delivered == [2])
        observation.cancel()
    }

    // MARK: - Tombstones

    @Test func aDeletionKeepsTheRowsLastValuesAndTimeFromEveryWriter() throws {
        let (pool, plain, cleanup) = try makeSyncFile()
        defer { cleanup() }
        let photo = Data([0, 255, 16])
        let kept = SyncedNote(id: 1, title: "it's \"quoted\"\né", weight: 0.1, photo: photo,
                              updatedAt: Date(timeIntervalSince1970: 1_700_000_000.25))
        let other = SyncedNote(id: 2, title: "", weight: -.infinity, photo: Data(), updatedAt: nil)
        try pool.write { db in
            try kept.insert(db)
            try other.insert(db)
        }
        let deletedAt = try pool.write { db -> Date in
            try db.execute(sql: "DELETE FROM syncedNotes WHERE id = 1")
            return try db.transactionDate
        }
        try plain.write { db in try db.execute(sql: "DELETE FROM syncedNotes WHERE id = 2") }
        let batch = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self) }
        let deletions = batch.changes.filter { $0.kind == .deleted }
        #expect(deletions.map(\.deletedRecord) == [kept, other])
        #expect(deletions.allSatisfy { $0.record == nil })
        // One clock with GRDB's transactionDate, to the millisecond.
        #expect(abs((deletions[0].time ?? .distantPast).timeIntervalSince(deletedAt)) < 0.001)
        #expect(abs((deletions[1].time ?? .distantPast).timeIntervalSinceNow) < 3600)
        #expect(batch.changes.filter { $0.kind == .inserted }.allSatisfy { $0.deletedRecord == nil && $0.time == nil })
    }

    /// A deletion's time as the log stores it, bit for bit, beside the
    /// `Date`: from the app (a pinned clock, and the clock an `updatedAt`
    /// stamped in the same transaction reads), and from a writer without
    /// the extension (SQLite's clock), in exact and net batches.
    @Test func aDeletionsTimeTextIsWhatTheLogStores() throws {
        let (pool, plain, cleanup) = try makeSyncFile()
        defer { cleanup() }
        try pool.write { db in
            for id in 1...3 { try SyncedNote(id: Int64(id), title: "n\(id)", weight: 1, photo: nil, updatedAt: nil).insert(db) }
        }
        // A millisecond a Date's Double holds inexactly (0.007 s is no binary fraction).
        let pinned = Date(timeIntervalSince1970: 1_700_000_000.007)
        let stamped = try pool.write { db -> String? in
            try db.pinClock(to: pinned)
            defer { try? db.pinClock(to: nil) }
            try db.execute(sql: "UPDATE syncedNotes SET updatedAt = datetime_subsec() WHERE id = 1")
            let stamped = try String.fetchOne(db, sql: "SELECT updatedAt FROM syncedNotes WHERE id = 1")
            try db.execute(sql: "DELETE FROM syncedNotes WHERE id = 1")
            return stamped
        }
        try plain.write { db in try db.execute(sql: "DELETE FROM syncedNotes WHERE id = 2") }
        for net in [false, true] {
            let batch = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self, net: net) }
            let deletions = batch.changes.filter { $0.kind == .deleted }
            #expect(deletions.count == 2)
            for change in deletions {
                let stored = try pool.read { db in
                    try Row.fetchOne(db, sql: "SELECT time, typeof(time) AS type FROM sqlitetriggers_log_tombstones WHERE id = ?",
                                     arguments: [change.id])
                }
                let text: String? = stored?["time"]
                #expect(stored?["type"] == "text" && change.timeText == text, "net: \(net)")
                #expect(change.timeText?.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$"#, options: .regularExpression) != nil)
                #expect(change.time == text.flatMap { Date.fromDatabaseValue($0.databaseValue) }, "the Date is that text decoded")
            }
            // The app's deletion: the pinned clock, the text an updatedAt
            // stamped in its transaction holds, equal as text.
            #expect(deletions.first?.timeText == "2023-11-14 22:13:20.007")
            #expect(deletions.first?.timeText == stamped)
            #expect(batch.changes.filter { $0.kind != .deleted }.allSatisfy { $0.timeText == nil && $0.time == nil })
        }
    }

    @Test func aNetBatchKeepsTheTombstoneOfARowItsTransactionDeleted() throws {
        let (pool, _, cleanup) = try makeSyncFile()
        defer { cleanup() }
        let first = SyncedNote(id: 1, title: "a", weight: 1, photo: nil, updatedAt: nil)
        try pool.write { db in
            try first.insert(db)
            try SyncedNote(id: 2, title: "b", weight: 2, photo: nil, updatedAt: nil).insert(db)
        }
        try pool.write { db in _ = try db.startDurableConsumer("net") }
        try pool.write { db in
            try db.execute(sql: "UPDATE syncedNotes SET title = 'a2' WHERE id = 1")
            try db.execute(sql: "DELETE FROM syncedNotes WHERE id = 1")
            try db.execute(sql: "DELETE FROM syncedNotes WHERE id = 2")
            try SyncedNote(id: 2, title: "b again", weight: 2, photo: nil, updatedAt: nil).insert(db)
            try SyncedNote(id: 3, title: "brief", weight: 3, photo: nil, updatedAt: nil).insert(db)
            try db.execute(sql: "DELETE FROM syncedNotes WHERE id = 3")
        }
        let batch = try pool.read { db in try db.durableBatch(for: "net", of: SyncedNote.self, net: true) }
        let byKey = Dictionary(uniqueKeysWithValues: batch.changes.map { ($0.key(as: Int64.self) ?? 0, $0) })
        #expect(Set(byKey.keys) == [1, 2])
        #expect(byKey[1]?.kind == .deleted)
        #expect(byKey[1]?.deletedRecord?.title == "a2")
        #expect(byKey[2]?.kind == .updated)
        #expect(byKey[2]?.deletedRecord == nil)
    }

    /// Transactions of one change each, as a server writes them, take the
    /// folding's shortcut: a lone deletion keeps its tombstone, and a lone
    /// insert or update is itself.
    @Test func aNetBatchOfOneChangeTransactionsKeepsEachChangeAndTombstone() throws {
        let (pool, _, cleanup) = try makeSyncFile()
        defer { cleanup() }
        try pool.write { db in try SyncedNote(id: 1, title: "a", weight: 1, photo: nil, updatedAt: nil).insert(db) }
        try pool.write { db in _ = try db.startDurableConsumer("net") }
        try pool.write { db in try SyncedNote(id: 2, title: "b", weight: 2, photo: nil, updatedAt: nil).insert(db) }
        try pool.write { db in try db.execute(sql: "UPDATE syncedNotes SET title = 'b2' WHERE id = 2") }
        try pool.write { db in try db.execute(sql: "DELETE FROM syncedNotes WHERE id = 1") }
        let batch = try pool.read { db in try db.durableBatch(for: "net", of: SyncedNote.self, net: true) }
        #expect(batch.transactions.map { $0.changes.map(\.kind) } == [[.inserted], [.updated], [.deleted]])
        #expect(batch.transactions.last?.changes.first?.deletedRecord?.title == "a")
        #expect(batch.transactions.dropLast().allSatisfy { $0.changes.allSatisfy { $0.deletedRecord == nil } })
    }

    // MARK: - Acknowledging part of a batch

    @Test func acknowledgingPartOfABatchResendsOnlyTheRest() throws {
        let (pool, _, cleanup) = try makeSyncFile()
        defer { cleanup() }
        for id in Int64(1)...3 {
            try pool.write { db in
                try SyncedNote(id: id * 10, title: "a\(id)", weight: 1, photo: nil, updatedAt: nil).insert(db)
                try SyncedNote(id: id * 10 + 1, title: "b\(id)", weight: 1, photo: nil, updatedAt: nil).insert(db)
            }
        }
        let batch = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self) }
        #expect(batch.transactions.count == 3)
        // The upload of the first change of the second transaction was confirmed; then a crash.
        try pool.write { db in try db.acknowledge(batch, through: batch.transactions[1].changes[0]) }
        let resent = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self) }
        #expect(resent.changes.compactMap { $0.key(as: Int64.self) } == [21, 30, 31])
        // A net batch is acknowledged a transaction at a time.
        let net = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self, net: true) }
        #expect {
            try pool.write { db in try db.acknowledge(net, through: net.changes[0]) }
        } throws: { error in "\(error)".contains("acknowledge through the change's DurableTransaction") }
        try pool.write { db in try db.acknowledge(net, through: net.transactions[0]) }
        let last = try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self) }
        #expect(last.changes.compactMap { $0.key(as: Int64.self) } == [30, 31])
        // What is not in the batch is refused, and the position never moves back.
        #expect {
            try pool.write { db in try db.acknowledge(last, through: batch.transactions[0]) }
        } throws: { error in "\(error)".contains("the transaction is not in this batch") }
        try pool.write { db in try db.acknowledge(batch, through: batch.transactions[0]) }
        #expect(try pool.read { db in try db.durableBatch(for: "upload", of: SyncedNote.self) }.changes.count == 2)
    }

    @Test func anUploadLoopWaitsOutAnotherProcessHoldingTheLock() async throws {
        let (pool, _, cleanup) = try makeSyncFile()
        defer { cleanup() }
        try await pool.write { db in try SyncedNote(id: 1, title: "a", weight: 1, photo: nil, updatedAt: nil).insert(db) }
        var uploads = pool.durableChanges(to: SyncedNote.self, consumer: "upload", pollInterval: 0.05).makeAsyncIterator()
        #expect(try await uploads.next()?.changes.count == 1)
        // Another process holds the write lock when the loop acknowledges
        // (the pool has no busy timeout: SQLITE_BUSY at once).
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = ["python3", "-c", """
            import sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN IMMEDIATE')
            print('locked', flush=True); time.sleep(1); c.execute('COMMIT')
            """, pool.path]
        let output = Pipe()
        holder.standardOutput = output
        try holder.run()
        _ = output.fileHandleForReading.availableData          // "locked"
        let next = Task { try await uploads.next() }
        try await Task.sleep(nanoseconds: 1_500_000_000)
        try await pool.write { db in try SyncedNote(id: 2, title: "b", weight: 1, photo: nil, updatedAt: nil).insert(db) }
        let batch = try await next.value
        holder.waitUntilExit()
        #expect(batch?.changes.compactMap { $0.key(as: Int64.self) } == [2])
    }

    // MARK: - Upgrading

    @Test func aLogOfTheEarlierFormatIsRefusedUntilInstalledAgain() throws {
        let path = temporaryDatabasePath()
        defer { removeDatabaseFiles(path) }
        let fixture = try String(contentsOf: packageRoot.appendingPathComponent("Tests/shell/fixtures/durable_log_format1.sql"),
                                 encoding: .utf8)
        try DatabaseQueue(path: path).writeWithoutTransaction { db in try db.execute(sql: fixture) }
        let pool = try DatabasePool(path: path, configuration: installingConfiguration())
        let lists = FeedTable("lists") { row in String(row["title"] ?? "") }
        #expect {
            try pool.read { db in try db.durableBatch(for: "sync", of: lists) }
        } throws: { error in "\(error)".contains("is of format 1, and this SQLiteTriggers reads format 3: installDurableLog(for:) again") }
        try pool.write { db in try db.installDurableLog(for: ["lists"]) }
        let batch = try pool.read { db in try db.durableBatch(for: "sync", of: lists) }
        #expect(batch.changes.map(\.kind) == [.inserted, .inserted, .deleted])
        #expect(batch.changes.map(\.record) == ["home", "work", nil])
    }
}
