import Foundation
import GRDB
import SQLiteTriggersGRDB
import SQLiteTriggersMacros
import Testing

/// Observations started from a writer, as GRDB's ValueObservation is.
@Suite(.timeLimit(.minutes(1))) struct WriterObservationTests {
    @CallbackEvent("inserted") struct Inserted: Sendable, Equatable { var value: String }
    struct Payload: Decodable, Sendable { var value: Int }

    func prepare(_ writer: some DatabaseWriter) throws {
        try writer.write { db in try db.execute(sql: insertedSchema) }
    }

    func insert(_ values: String..., into writer: some DatabaseWriter) throws {
        try writer.write { db in
            for value in values { try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: [value]) }
        }
    }

    func rollBack(_ value: String, in writer: some DatabaseWriter) throws {
        try writer.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: [value])
                return .rollback
            }
        }
    }

    /// Waits (at most a few seconds) until `condition` holds.
    func eventually(isolation: isolated (any Actor)? = #isolation, _ condition: () -> Bool) async {
        for _ in 0..<500 where !condition() { try? await Task.sleep(nanoseconds: 10_000_000) }
    }

    /// Observers started while another thread commits: each gets every
    /// event from its first on, none dropped, and (under ThreadSanitizer, in
    /// make test) the token's cancellation flag is set without a race.
    @Test func startingObserversWhileAnotherThreadCommits() async throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try prepare(dbQueue)
        let count = 300
        let writes = Task.detached {
            for value in 0..<count { try dbQueue.write { db in try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: ["\(value)"]) } }
        }
        var received: [Locked<[Int]>] = [], observations: [CallbackObservation] = []
        for _ in 0..<30 {
            let seen = Locked<[Int]>([])
            observations.append(try dbQueue.observe(Inserted.self, scheduling: .onWriterQueue) { event in
                seen.mutate { $0.append(Int(event.value)!) }
            })
            received.append(seen)
            await Task.yield()
        }
        try await writes.value
        for seen in received where !seen.value.isEmpty {
            let values = seen.value
            #expect(values == Array(values[0]..<count), "every event from the observer's first one on, in order")
        }
        #expect(received.contains { !$0.value.isEmpty })
        observations.forEach { $0.cancel() }
    }

    @MainActor @Test(arguments: WriterKind.allCases)
    func onTheMainActorByDefault(_ kind: WriterKind) async throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        try prepare(writer)
        var received: [String] = []
        let observation = try writer.observe(Inserted.self) { event in
            MainActor.preconditionIsolated()
            received.append(event.value)
        }
        try rollBack("rolled back", in: writer)
        try insert("a", "b", into: writer)
        await eventually { received.count == 2 }
        #expect(received == ["a", "b"])
        observation.cancel()
    }

    @Test(arguments: WriterKind.allCases)
    func onAGivenQueue(_ kind: WriterKind) async throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        try prepare(writer)
        let queue = DispatchQueue(label: "observer")
        let received = Locked<[String]>([])
        let observation = try writer.observe(Inserted.self, scheduling: .async(onQueue: queue)) { event in
            dispatchPrecondition(condition: .onQueue(queue))
            received.mutate { $0.append(event.value) }
        }
        try insert("a", into: writer)
        try rollBack("x", in: writer)
        try insert("b", into: writer)
        await eventually { received.value.count == 2 }
        #expect(received.value == ["a", "b"])
        _ = observation
    }

    @Test(arguments: WriterKind.allCases)
    func immediatelyOnTheWritersQueue(_ kind: WriterKind) throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        try prepare(writer)
        let received = Locked<[String]>([])
        let observation = try writer.observe(Inserted.self, scheduling: .onWriterQueue) { event in
            received.mutate { $0.append(event.value) }
        }
        try insert("a", into: writer)
        #expect(received.value == ["a"], "delivered before write returned")
        try rollBack("x", in: writer)
        #expect(received.value == ["a"])
        _ = observation
    }

    @Test func aCancelledOrReleasedTokenStopsEvenQueuedEvents() async throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try prepare(dbQueue)
        let queue = DispatchQueue(label: "observer")
        let received = Locked<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }                       // hold the queue: the event waits behind
        do {
            let released = try dbQueue.observe(Inserted.self, scheduling: .async(onQueue: queue)) { event in
                received.mutate { $0.append(event.value) }
            }
            try insert("queued", into: dbQueue)
            _ = released
        }
        gate.signal()
        queue.sync {}
        #expect(received.value.isEmpty, "released before its queued event ran")

        let kept = try dbQueue.observe(Inserted.self, scheduling: .onWriterQueue) { event in
            received.mutate { $0.append(event.value) }
        }
        kept.cancel()
        try insert("after cancel", into: dbQueue)
        #expect(received.value.isEmpty)
    }

    /// Our tokens sit beside GRDB's own cancellables and stop through them.
    @Test func tokensAreGRDBCancellables() throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try prepare(dbQueue)
        let received = Locked<[String]>([])
        let valueObservation = ValueObservation.tracking { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        var cancellables: [any DatabaseCancellable] = [
            valueObservation.start(in: dbQueue, scheduling: .async(onQueue: .global()), onError: { _ in }, onChange: { _ in }),
            try dbQueue.observe(Inserted.self, scheduling: .onWriterQueue) { event in received.mutate { $0.append(event.value) } },
        ]
        try insert("a", into: dbQueue)
        for cancellable in cancellables { cancellable.cancel() }
        try insert("b", into: dbQueue)
        #expect(received.value == ["a"])
        #expect((cancellables[1] as? CallbackObservation)?.isCancelled == true)
        cancellables.removeAll()
    }

    @Test func undecodableArgumentsGoToOnErrorOnTheSameQueue() async throws {
        let dbQueue = try DatabaseQueue(configuration: installingConfiguration())
        try prepare(dbQueue)
        let queue = DispatchQueue(label: "observer")
        let errors = Locked<[String]>([])
        let observation = try dbQueue.observeCallback("inserted", as: Payload.self, scheduling: .async(onQueue: queue),
                                                      onError: { error in
            dispatchPrecondition(condition: .onQueue(queue))
            errors.mutate { $0.append("\(error)") }
        }) { _ in Issue.record("text 'a' is no Int") }
        try insert("a", into: dbQueue)
        await eventually { errors.value.count == 1 }
        #expect(errors.value.first?.contains("inserted") == true)
        _ = observation
    }

    @Test(arguments: WriterKind.allCases)
    func anAsyncSequenceFromTheWriter(_ kind: WriterKind) async throws {
        let (writer, cleanup) = try makeWriter(kind)
        defer { cleanup() }
        try prepare(writer)
        let stream = try writer.committedCallbacks(Inserted.self)
        try insert("a", into: writer)
        try rollBack("x", in: writer)
        try insert("b", into: writer)
        var received: [String] = []
        for await event in stream {
            received.append(event.value)
            if received.count == 2 { break }
        }
        #expect(received == ["a", "b"])
    }
}
