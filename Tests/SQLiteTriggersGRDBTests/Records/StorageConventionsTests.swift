import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

@Suite struct StorageConventionsTests {
    @Test func swiftFormatsDatesExactlyAsDatetimeSubsec() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        var generator = SystemRandomNumberGenerator()
        let millis = (0..<10_000).map { _ in Int64.random(in: -62_000_000_000_000...253_402_300_799_999, using: &generator) }
        let fromSQL = try dbQueue.read { db in
            try millis.map { try String.fetchOne(db, sql: "SELECT datetime_subsec(? / 1000.0, 'unixepoch')", arguments: [$0])! }
        }
        for (ms, sqlText) in zip(millis, fromSQL) {
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            #expect(StorageConventions.text(for: date) == sqlText)
            // Decoded as GRDB decodes it (see below): the same instant, to
            // well under a millisecond, and the same text again.
            let decoded = try #require(StorageConventions.date(fromText: sqlText))
            #expect(abs(decoded.timeIntervalSince(date)) < 1e-4)
            #expect(StorageConventions.text(for: decoded) == sqlText)
        }
    }

    @Test func textRoundTripsThroughDate() {
        for text in ["2024-02-29 23:59:59.999", "1970-01-01 00:00:01.001", "0300-03-01 00:00:00.000",
                     "-4713-11-24 12:00:00.000", "9999-12-31 23:59:59.999"] {
            #expect(StorageConventions.date(fromText: text).map(StorageConventions.text(for:)) == text)
        }
        for bad in ["", "2024-13-01", "2024-01-01 25:00:00", "2024-01-01 12:00:00.", "2024/01/01", "2024-01-01x"] {
            #expect(StorageConventions.date(fromText: bad) == nil, "\(bad)")
        }
    }

    @Test func conventionalRecordsWriteLowercaseTextUUIDs() throws {
        struct Item: Codable, FetchableRecord, PersistableRecord, ConventionalRecord {
            var id: UUID
            var createdAt: Date
        }
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let item = Item(id: UUID(), createdAt: Date(timeIntervalSince1970: 1_700_000_000.25))
        let (stored, type, created) = try dbQueue.write { db in
            try db.execute(sql: "CREATE TABLE item(id TEXT PRIMARY KEY, createdAt TEXT)")
            try item.insert(db)
            let row = try Row.fetchOne(db, sql: "SELECT id, typeof(id) AS type, createdAt FROM item")!
            return (row["id"] as String, row["type"] as String, row["createdAt"] as String)
        }
        #expect(stored == item.id.uuidString.lowercased())
        #expect(type == "text")
        #expect(created == "2023-11-14 22:13:20.250")
    }

    @Test func uuidTextComparisonMatchesWhereAPlainUUIDDoesNot() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let (plain, text, helper) = try dbQueue.write { db in
            try db.execute(sql: "CREATE TABLE item(id TEXT PRIMARY KEY DEFAULT (uuid())); INSERT INTO item DEFAULT VALUES")
            let id = try UUID.fetchOne(db, sql: "SELECT id FROM item")!
            let table = Table("item")
            return (try table.filter(Column("id") == id).fetchCount(db),
                    try table.filter(Column("id") == id.databaseText).fetchCount(db),
                    try table.filter(Column("id").equals(uuid: id)).fetchCount(db))
        }
        #expect(plain == 0, "the pitfall: GRDB binds a UUID as a blob")
        #expect(text == 1)
        #expect(helper == 1)
    }

    @Test func callbackDatesEqualGRDBsForTheSameText() throws {
        // Years 1583 to 9999 (before the Gregorian reform Foundation's
        // calendar, which GRDB uses, is Julian), millisecond by millisecond
        // random, plus the edges of 2001-01-01 where sums round differently.
        var rng = SystemRandomNumberGenerator()
        let start: Int64 = -12_212_553_600_000, end: Int64 = 253_402_300_799_999
        var instants = (0..<20_000).map { _ in Int64.random(in: start...end, using: &rng) }
        instants += (-3_000...3_000).map { 978_307_200_000 + $0 * 97 }
        var differing: [String] = []
        for millis in instants {
            let text = StorageConventions.text(for: Date(timeIntervalSince1970: Double(millis) / 1000))
            if StorageConventions.date(fromText: text) != Date.fromDatabaseValue(text.databaseValue) { differing.append(text) }
        }
        #expect(differing.isEmpty, "\(differing.count) texts decode differently, such as \(differing.prefix(3))")
    }

    @Test func swiftV7KeysSortWithSQLOnes() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        var keys: [String] = []
        for index in 0..<50 {
            if index.isMultiple(of: 2) {
                let id = StorageConventions.newUUIDv7()
                #expect(id.uuidString.lowercased().dropFirst(14).first == "7")
                keys.append(StorageConventions.text(for: id))
            } else {
                keys.append(try dbQueue.read { db in try String.fetchOne(db, sql: "SELECT uuidv7()")! })
            }
        }
        #expect(keys == keys.sorted() && Set(keys).count == keys.count, "Swift and SQL v7 keys, interleaved, strictly increase")
    }

    @TriggerTable("folderNotes") struct FolderNote: Codable, FetchableRecord, PersistableRecord, ConventionalRecord {
        var id: UUID
        var folderID: UUID?
        var title: String
    }

    /// GRDB binds a UUID as a blob; a typed column's comparison binds the
    /// text the convention stores.
    @Test func aTypedUUIDColumnComparesWithAUUID() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let folder = UUID(), other = UUID(), noteID = UUID()
        try dbQueue.write { db in
            try db.execute(sql: "CREATE TABLE folderNotes(id TEXT PRIMARY KEY NOT NULL, folderID TEXT, title TEXT NOT NULL)")
            try FolderNote(id: noteID, folderID: folder, title: "a").insert(db)
            try FolderNote(id: UUID(), folderID: other, title: "b").insert(db)
            try FolderNote(id: UUID(), folderID: nil, title: "c").insert(db)
        }
        try dbQueue.read { db throws in
            #expect(try FolderNote.filter { $0.folderID == folder }.fetchAll(db).map(\.title) == ["a"])
            #expect(try FolderNote.filter { $0.folderID != folder }.order(\.title).fetchAll(db).map(\.title) == ["b"])
            #expect(try FolderNote.filter { $0.id == noteID }.fetchAll(db).map(\.title) == ["a"])
            #expect(try FolderNote.filter { $0.folderID == nil as UUID? }.fetchAll(db).map(\.title) == ["c"])
        }
    }
}
