import Foundation
import GRDB
import SQLiteTriggersGRDB

/// A note as both the devices and the server hold it. `updatedAt` is kept
/// as the text SQLite stores (milliseconds, UTC), so that comparing two
/// versions never goes through a floating-point Date. Last writer wins on
/// (updatedAt, editedBy): the time, then the writer's name for two edits of
/// the same millisecond.
struct Note: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    static let databaseTableName = "notes"
    var id: String
    var title: String
    var body: String
    var editedBy: String
    var updatedAt: String
}

/// The columns the touch rules name (a TableDescription by hand; apps with
/// macros write `@TriggerTable` instead).
enum NoteColumns: TableDescription {
    static let tableName = "notes"
    enum TriggerColumns {
        static let id = ColumnDescription<String>("id", primaryKey: true)
        static let updatedAt = ColumnDescription<Date?>("updatedAt")
    }
    static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.updatedAt]
}

/// A device: its file, opened with SQLiteTriggers, migrated.
enum Device {
    /// Every writer stamps: the shell, Python, this app. The insert touch
    /// fills `updatedAt` when an INSERT leaves it out; the update touch
    /// stamps an edit that does not set it.
    static let rules = RuleSet {
        NoteColumns.afterInsertTouch(\.updatedAt)
        NoteColumns.afterUpdateTouch(\.updatedAt)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("notes") { db in
            try db.execute(sql: """
                CREATE TABLE notes(
                  id TEXT PRIMARY KEY NOT NULL,
                  title TEXT NOT NULL DEFAULT '',
                  body TEXT NOT NULL DEFAULT '',
                  editedBy TEXT NOT NULL,
                  updatedAt TEXT
                );
                -- How far this device has downloaded (the server's version).
                CREATE TABLE syncState(name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
                -- The last version of each note the server sent: never sent back.
                CREATE TABLE received(id TEXT PRIMARY KEY NOT NULL, updatedAt TEXT NOT NULL, editedBy TEXT NOT NULL) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("rules every writer obeys") { db in
            try rules.installPersistently(db)
        }
        migrator.registerMigration("outbox") { db in
            try db.installDurableLog(for: ["notes"], tombstones: true)
            try db.startDurableConsumer("upload")
        }
        return migrator
    }

    static func open(_ path: String) throws -> DatabasePool {
        var config = Configuration()
        config.busyMode = .timeout(30)
        config.prepareDatabase { db in try db.installSQLiteTriggers() }
        let pool = try DatabasePool(path: path, configuration: config)
        try migrator.migrate(pool)
        let drift = try pool.read { db in try rules.persistentRuleDrift(db) }
        guard drift.isEmpty else { throw SyncError("the rules drifted: \(drift)") }
        return pool
    }
}

struct SyncError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Who a deletion's version is by: after every writer's name, so that a
/// deletion wins a tie with the edit it deleted.
func deletionAuthor(device: String) -> String { "~deleted-by-\(device)" }

/// The device a version comes from: "A" for "A-shell" and "~deleted-by-A".
func device(ofAuthor author: String) -> String {
    author.hasPrefix("~deleted-by-") ? String(author.dropFirst("~deleted-by-".count)) : String(author.prefix { $0 != "-" })
}

/// A Date as the text SQLite's clock writes, to the nearest millisecond (a
/// tombstone's time arrives as a Date).
func millisecondText(_ date: Date) -> String {
    let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
    var seconds = time_t(milliseconds / 1000)
    var parts = tm()
    gmtime_r(&seconds, &parts)
    return String(format: "%04d-%02d-%02d %02d:%02d:%02d.%03d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                  Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(milliseconds % 1000))
}
