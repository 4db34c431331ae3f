import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// Runs the README's change-feed example.
@Suite struct ReadmeChangeFeedTests {
    @MainActor @Test func theReplicaFollowsEveryCommittedChange() async throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try await dbQueue.write { db in
            try db.execute(sql: "CREATE TABLE reminders(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, status INTEGER NOT NULL DEFAULT 0)")
        }
        let uploaded = Locked<[RecordChange<ReadmeChangeFeed.Reminder>]>([])
        let (replica, observations) = try ReadmeChangeFeed.run(dbQueue) { change in uploaded.mutate { $0.append(change) } }
        defer { observations.forEach { $0.cancel() } }
        let milk = ReadmeChangeFeed.Reminder(id: UUID(), title: "Milk", status: 0)
        try await dbQueue.write { db in
            try milk.insert(db)
            try db.execute(sql: "UPDATE reminders SET status = 1")
            try ReadmeChangeFeed.Reminder(id: UUID(), title: "Bread", status: 0).insert(db)
        }
        try? await dbQueue.write { db in
            try ReadmeChangeFeed.Reminder(id: UUID(), title: "Rolled back", status: 0).insert(db)
            throw DatabaseError(message: "abandoned")
        }
        #expect(throws: DatabaseError.self) {
            try dbQueue.write { db in try db.execute(sql: "UPDATE reminders SET title = ''") }
        }
        for _ in 0..<500 where replica.rows.count < 2 || uploaded.value.count < 2 { try await Task.sleep(nanoseconds: 10_000_000) }
        let table = try await dbQueue.read { db in try ReadmeChangeFeed.Reminder.fetchAll(db) }
        #expect(Set(replica.rows.values.map(\.title)) == Set(table.map(\.title)))
        #expect(replica.rows.count == 2)
        var done = milk; done.status = 1
        #expect(uploaded.value.count == 2, "net: the milk inserted with its final status, and the bread")
        // Uploads run on a concurrent queue, in either order.
        let milkUpload = uploaded.value.first { $0.new?.id == milk.id }
        #expect(milkUpload?.new?.status == done.status && milkUpload?.old == nil)
    }
}
