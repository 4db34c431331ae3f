import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

/// The insert touch never loses its stamp, even when a GRDB record that
/// was inserted and not fetched again (still `createdAt == nil`) is saved.
@Suite struct TimestampRecordTests {
    @TriggerTable("notes") struct Note { let id: Int; var title: String; var createdAt: Date?; var updatedAt: Date? }

    struct NoteRecord: Codable, FetchableRecord, MutablePersistableRecord {
        static let databaseTableName = "notes"
        var id: Int64?
        var title: String
        var createdAt: Date?
        var updatedAt: Date?
        mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
    }

    func makeQueue() throws -> DatabaseQueue {
        var config = Configuration()
        config.prepareDatabase { db in
            try db.installSQLiteTriggers()
            try db.execute(sql: "PRAGMA recursive_triggers = ON")
        }
        let dbQueue = try DatabaseQueue(configuration: config)
        try dbQueue.write { db in
            try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT NOT NULL, createdAt TEXT, updatedAt TEXT)")
            try Note.afterInsertTouch(\.createdAt).execute(db)
            try Note.afterUpdateTouch(\.updatedAt).execute(db)
        }
        return dbQueue
    }

    @Test func savingARecordThatWasNotFetchedAgainKeepsItsCreationTime() throws {
        let dbQueue = try makeQueue()
        try dbQueue.write { db throws in
            try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000))
            var note = NoteRecord(title: "Draft")
            try note.insert(db)
            #expect(note.createdAt == nil, "the record still holds what it was inserted with")
            let stamped = try String.fetchOne(db, sql: "SELECT createdAt FROM notes")
            #expect(stamped == "2023-11-14 22:13:20.000")
            try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_060))
            note.title = "Final"
            try note.update(db)                      // writes createdAt = NULL
            let row = try Row.fetchOne(db, sql: "SELECT title, createdAt, updatedAt FROM notes")!
            #expect(row["title"] as String == "Final")
            #expect(row["createdAt"] as String? == stamped, "the creation time survives")
            #expect(row["updatedAt"] as String? == "2023-11-14 22:14:20.000")
            try db.execute(sql: "UPDATE notes SET createdAt = NULL")
            #expect(try String.fetchOne(db, sql: "SELECT createdAt FROM notes") == stamped, "raw SQL too")
            try db.execute(sql: "UPDATE notes SET createdAt = '2000-01-01 00:00:00.000'")
            #expect(try String.fetchOne(db, sql: "SELECT createdAt FROM notes") == "2000-01-01 00:00:00.000",
                    "a value the statement sets is kept")
        }
    }

    @Test func droppingTheTouchDropsItsCompanion() throws {
        let dbQueue = try makeQueue()
        try dbQueue.write { db throws in
            try Note.afterInsertTouch(\.createdAt).drop().execute(db)
            #expect(try String.fetchAll(db, sql: "SELECT name FROM sqlite_temp_master WHERE type = 'trigger'")
                    == [Note.afterUpdateTouch(\.updatedAt).name])
        }
    }

    @Test func insertAndFetchShowsTheRowBeforeAfterTriggersSoFetchAgain() throws {
        let dbQueue = try makeQueue()
        try dbQueue.write { db throws in
            let note = NoteRecord(title: "Draft")
            let returned = try note.insertAndFetch(db)
            #expect(returned.createdAt == nil, "RETURNING shows the row before AFTER triggers ran")
            let fetched = try NoteRecord.fetchOne(db, key: returned.id)
            #expect(fetched?.createdAt != nil, "fetching again by key reads the stamp")
        }
    }
}
