import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

@Suite(.timeLimit(.minutes(1))) struct CallbackStreamTests {
    struct Inserted: Decodable, Sendable, Equatable { var value: String }

    @Test(arguments: WriterKind.allCases)
    func committedEventsArriveInOrderAndRollbacksNever(_ kind: WriterKind) async throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        let stream = try await writer.write { db in
            try db.execute(sql: insertedSchema)
            return try db.committedCallbacks("inserted", as: Inserted.self)
        }
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('a'), ('b')") }
        try await writer.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "INSERT INTO t(v) VALUES ('rolled back')")
                return .rollback
            }
        }
        try await writer.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('c')") }
        var received: [String] = []
        for await event in stream {
            received.append(event.value)
            if received.count == 3 { break }
        }
        #expect(received == ["a", "b", "c"])
        #expect(stream.droppedCount == 0)
    }

    @Test func aSlowConsumerNeverBlocksTheWriterAndSeesTheNewestEvents() async throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let stream = try await dbQueue.write { db in
            try db.execute(sql: insertedSchema)
            return try db.committedCallbacks("inserted", bufferingNewest: 10)
        }
        // 100 commits while nobody consumes: the writer goes on, unblocked.
        for index in 0..<100 {
            try await dbQueue.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["\(index)"]) }
        }
        #expect(stream.droppedCount == 90)
        stream.cancel()
        var received: [CallbackRecord] = []
        for await record in stream { received.append(record) }
        #expect(received.map(\.values) == (90..<100).map { [.text("\($0)")] })
        #expect(received.map(\.sequence) == Array(91...100), "sequence numbers show the gap")
    }

    @Test func undecodableEventsAreCountedNotDelivered() async throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        let stream = try await dbQueue.write { db in
            try db.committedCallbacks("inserted", as: Inserted.self)
        }
        try await dbQueue.write { db in
            try db.execute(sql: "SELECT swift_callback('inserted', 42)")
            try db.execute(sql: "SELECT swift_callback('inserted', 'ok')")
        }
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == Inserted(value: "ok"))
        #expect(stream.undecodableCount == 1)
    }

    @Test func endingTheLoopReleasesTheStreamAndItsObservation() async throws {
        final class Weak: @unchecked Sendable { weak var stream: CallbackStream<CallbackRecord>? }
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try await dbQueue.write { db in try db.execute(sql: insertedSchema) }
        let weak = Weak()
        let received = Locked<[CallbackRecord]>([])
        let started = Locked(false)
        let consumer = Task {
            let stream = try await dbQueue.write { db in try db.committedCallbacks("inserted") }
            weak.stream = stream
            started.mutate { $0 = true }
            for await record in stream {
                received.mutate { $0.append(record) }
                break
            }
        }
        while !started.value { try await Task.sleep(nanoseconds: 1_000_000) }
        try await dbQueue.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES ('x')") }
        try await consumer.value
        #expect(received.value.map(\.values) == [[.text("x")]])
        #expect(weak.stream == nil, "no cycle keeps the stream, and so the observation, alive")
    }
}
