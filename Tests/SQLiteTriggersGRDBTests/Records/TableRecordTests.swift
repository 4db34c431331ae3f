import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

/// `@TriggerTable` on GRDB records: one set of columns and one table name serve
/// GRDB's query interface and the trigger builders.
@Suite struct TableRecordTests {
    /// A record written for GRDB first: its own `Columns` and table name stay.
    @TriggerTable struct Player: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "player"
        var id: Int64
        var name: String
        var updatedAt: Date?
        enum Columns {
            static let id = Column(CodingKeys.id)
            static let name = Column(CodingKeys.name)
        }
    }

    static func prepare(_ writer: any DatabaseWriter) throws {
        try writer.write { db in
            try db.execute(sql: choresSchema)
            try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, updatedAt TEXT)")
            try Chore.afterInsertTouch(\.createdAt).execute(db)
            try Chore.afterUpdateTouch(\.updatedAt).execute(db)
            try Player.afterUpdateTouch(\.updatedAt).execute(db)
        }
    }

    @Test func oneTableName() {
        #expect(Chore.tableName == "chores")
        #expect(Chore.databaseTableName == "chores")
        #expect(Player.tableName == "player")
    }

    @Test(arguments: WriterKind.allCases)
    func recordsQueryThroughGRDBWithTheRulesInstalled(_ kind: WriterKind) throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        try Self.prepare(writer)
        try writer.write { db throws in
            try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000))
            try Chore(id: 1, title: "Milk").insert(db)
            try Chore(id: 2, title: "Bread").insert(db)
            try Chore(id: 3, title: "Eggs").insert(db)
        }
        try writer.read { db throws in
            let milk = try Chore.filter { $0.title == "Milk" }.fetchOne(db)
            #expect(milk?.id == 1)
            #expect(milk?.createdAt == Date(timeIntervalSince1970: 1_700_000_000), "the insert touch stamped it")
            #expect(try Chore.order(\.title).fetchAll(db).map(\.title) == ["Bread", "Eggs", "Milk"])
            #expect(try Chore.order(\.title.desc).fetchAll(db).map(\.title) == ["Milk", "Eggs", "Bread"])
            #expect(try Chore.filter(Chore.Columns.id > 1).fetchCount(db) == 2)
            #expect(try Chore.select(\.title, as: String.self).filter(key: 2).fetchOne(db) == "Bread")
        }
        try writer.write { db throws in
            try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_060))
            var bread = try #require(try Chore.fetchOne(db, key: 2))
            bread.title = "Rye bread"
            try bread.update(db)
            #expect(try Chore.deleteOne(db, key: 3))
            try Chore.filter { $0.id == 1 }.updateAll(db) { $0.title.set(to: "Oat milk") }
        }
        try writer.read { db throws in
            let chores = try Chore.order(\.id).fetchAll(db)
            #expect(chores.map(\.title) == ["Oat milk", "Rye bread"])
            #expect(chores.allSatisfy { $0.updatedAt == Date(timeIntervalSince1970: 1_700_000_060) })
            #expect(chores.allSatisfy { $0.createdAt == Date(timeIntervalSince1970: 1_700_000_000) },
                    "update(db) wrote the record's createdAt back; the stamp stayed")
        }
    }

    @Test func aRecordWithItsOwnColumnsKeepsThemForGRDB() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try Self.prepare(dbQueue)
        try dbQueue.write { db throws in
            try db.pinClock(to: Date(timeIntervalSince1970: 1_700_000_000))
            try Player(id: 1, name: "Arthur").insert(db)
            try Player.filter { $0.name == "Arthur" }.updateAll(db) { $0.name.set(to: "Barbara") }
            let player = try #require(try Player.filter(Player.Columns.id == 1).fetchOne(db))
            #expect(player.name == "Barbara")
            #expect(player.updatedAt == Date(timeIntervalSince1970: 1_700_000_000))
        }
    }
}
