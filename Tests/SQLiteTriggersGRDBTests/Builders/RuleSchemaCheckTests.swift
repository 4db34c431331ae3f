import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

/// A rule that names a column the live table lacks fails when installed,
/// not at the first write.
@Suite struct RuleSchemaCheckTests {
    @TriggerTable("notes") struct Note { let id: Int; var title: String; var archivedAt: Date?; var updatedAt: Date? }

    @Test func aMissingColumnFailsAtInstallNamingTheRule() throws {
        let cases: [(TempTrigger, String)] = [
            (Note.afterUpdateTouch(\.archivedAt), "no such column: new.archivedAt"),
            (Note.afterInsertTouch(\.archivedAt), "no such column: new.archivedAt"),
            (Note.createTempTrigger(after: .delete { old in .callback("deleted", old.archivedAt) }), "no such column: old.archivedAt"),
        ]
        for (rule, reason) in cases {
            let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
            try dbQueue.write { db throws in
                try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, updatedAt TEXT)")
                let error = try #require(throws: DatabaseError.self) { try rule.execute(db) }
                #expect(error.message?.hasPrefix("rule \"\(rule.name)\" on \"notes\" does not fit the live schema: \(reason)") == true,
                        "\(error.message ?? "")")
                #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'") == 0,
                        "nothing stays half-installed")
                try db.execute(sql: "INSERT INTO notes(title) VALUES ('writes still work')")
            }
        }
    }

    /// SQLite itself accepts UPDATE OF a column the table lacks; the rule
    /// would install and never fire.
    @Test func anUpdateOfAMissingColumnFailsAtInstall() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db throws in
            try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, updatedAt TEXT)")
            let rule = Note.createTempTrigger(after: .update(of: \.archivedAt) { _, new in .callback("archived", new.id) })
            let error = try #require(throws: DatabaseError.self) { try rule.execute(db) }
            #expect(error.message?.contains("UPDATE OF names \"archivedAt\", which the table does not have") == true, "\(error.message ?? "")")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'") == 0)
            // With the column, it installs (a quoted name, matched as SQLite matches names).
            try db.execute(sql: "ALTER TABLE notes ADD COLUMN ARCHIVEDAT TEXT")
            try rule.execute(db)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'") == 1)
        }
    }

    /// ALTER TABLE ... DROP COLUMN leaves a trigger whose UPDATE OF names
    /// the dropped column (it never fires again): the rule set's keeper
    /// reports it and refuses the writes it should have fired on.
    @Test func aDroppedUpdateOfColumnIsReportedByTheKeeper() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db in
            try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, archivedAt TEXT, updatedAt TEXT)")
            try db.execute(sql: "INSERT INTO notes(title) VALUES ('a')")
        }
        let rule = Note.createTempTrigger(after: .update(of: \.archivedAt) { _, new in .callback("archived", new.id) })
        let reported = Locked<[String]>([])
        try RuleSet([rule]).install(in: dbQueue, onError: { error in reported.mutate { $0.append("\(error)") } })
        try dbQueue.write { db in try db.execute(sql: "ALTER TABLE notes DROP COLUMN archivedAt") }
        #expect(reported.value.count == 1 && reported.value.first?.contains(#"UPDATE OF names "archivedAt""#) == true, "\(reported.value)")
        let error = try #require(throws: DatabaseError.self) {
            try dbQueue.write { db in try db.execute(sql: "UPDATE notes SET title = 'x'") }
        }
        #expect(error.message?.contains("cannot be installed again") == true)
    }

    @Test func aRuleThatFitsInstalls() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try dbQueue.write { db throws in
            try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, archivedAt TEXT, updatedAt TEXT)")
            try Note.afterUpdateTouch(\.updatedAt).execute(db)
            try Note.afterInsertTouch(\.archivedAt).execute(db)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'") == 3)
        }
    }
}
