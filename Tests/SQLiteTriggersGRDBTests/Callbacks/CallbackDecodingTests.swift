import Foundation
import GRDB
import SQLiteTriggersGRDB
import Testing

/// Decoding runs through immediate observers here: the decoded values, or
/// the decoding error, come back at once.
@Suite struct CallbackDecodingTests {
    let dbQueue: DatabaseQueue

    init() throws { dbQueue = try DatabaseQueue(configuration: installingConfiguration()) }

    /// Calls swift_callback('probe', arguments) with an immediate observer
    /// of the given types, returning what it decoded.
    func decode<each A: CallbackArgument>(_ sqlArguments: String, as types: repeat (each A).Type) throws -> (repeat each A) {
        try dbQueue.write { db in
            let decoded = Locked<(repeat each A)?>(nil)
            let observation = try db.observeCallback("probe", delivery: .immediate) { (values: repeat each A) in
                decoded.mutate { $0 = (repeat each values) }
            }
            defer { observation.cancel() }
            try db.execute(sql: "SELECT swift_callback('probe', \(sqlArguments))")
            return decoded.value!
        }
    }

    func decodingError(_ sqlArguments: String, _ body: (Database) throws -> CallbackObservation) throws -> DatabaseError {
        try dbQueue.write { db in
            let observation = try body(db)
            defer { observation.cancel() }
            return try #require(throws: DatabaseError.self) {
                try db.execute(sql: "SELECT swift_callback('probe', \(sqlArguments))")
            }
        }
    }

    @Test func numbersAndBooleans() throws {
        let (int, int64, double, fromInteger, yes, no) = try decode(
            "42, -9223372036854775808, 2.5, 3, 1, 0",
            as: Int.self, Int64.self, Double.self, Double.self, Bool.self, Bool.self)
        #expect(int == 42)
        #expect(int64 == Int64.min)
        #expect(double == 2.5)
        #expect(fromInteger == 3.0)
        #expect(yes && !no)
        let (integral) = try decode("4.0", as: Int.self)
        #expect(integral == 4)
    }

    @Test func textAndData() throws {
        let (text, blob, utf8) = try decode("'hé ''quoted''', x'00ff', 'ab'", as: String.self, Data.self, Data.self)
        #expect(text == "hé 'quoted'")
        #expect(blob == Data([0x00, 0xff]))
        #expect(utf8 == Data("ab".utf8))
    }

    @Test func uuidFromLowercaseTextUppercaseTextAndBlob() throws {
        let uuid = UUID(uuidString: "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11")!
        let (lower, upper, blob) = try decode(
            "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', uuid_blob('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')",
            as: UUID.self, UUID.self, UUID.self)
        #expect(lower == uuid && upper == uuid && blob == uuid)
        let (generated) = try decode("uuidv7()", as: UUID.self)
        #expect(generated.uuidString.lowercased().dropFirst(14).first == "7")
    }

    @Test func dateFromOurTextAndFromUnixSeconds() throws {
        let (text, seconds, whole, dayOnly, fromFunction) = try decode(
            "'2024-02-29 23:59:59.999', 1700000000.5, '2024-01-02 03:04:05', '2024-01-02', datetime_subsec(0.0)",
            as: Date.self, Date.self, Date.self, Date.self, Date.self)
        #expect(text == Date.fromDatabaseValue("2024-02-29 23:59:59.999".databaseValue), "equal to GRDB's own decoding")
        #expect(abs(text.timeIntervalSince1970 - 1_709_251_199.999) < 1e-6)
        #expect(seconds == Date(timeIntervalSince1970: 1_700_000_000.5))
        #expect(whole == Date(timeIntervalSince1970: 1_704_164_645))
        #expect(dayOnly == Date(timeIntervalSince1970: 1_704_153_600))
        #expect(fromFunction == Date(timeIntervalSince1970: -210_866_760_000))
    }

    @Test func optionalsDecodeNullAsNil() throws {
        let (int, text, uuid, date, present) = try decode(
            "NULL, NULL, NULL, NULL, 'x'",
            as: Int?.self, String?.self, UUID?.self, Date?.self, String?.self)
        #expect(int == nil && text == nil && uuid == nil && date == nil)
        #expect(present == "x")
    }

    @Test func decodablePayloadsArePositional() throws {
        struct Payload: Decodable, Equatable {
            var id: UUID
            var title: String
            var note: String?
            var dueAt: Date?
        }
        let decoded = Locked<Payload?>(nil)
        try dbQueue.write { db in
            let observation = try db.observeCallback("probe", as: Payload.self, delivery: .immediate) { payload in
                decoded.mutate { $0 = payload }
            }
            defer { observation.cancel() }
            try db.execute(sql: "SELECT swift_callback('probe', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'Milk', NULL, '2024-01-02')")
        }
        #expect(decoded.value == Payload(
            id: UUID(uuidString: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")!, title: "Milk",
            note: nil, dueAt: Date(timeIntervalSince1970: 1_704_153_600)))
    }

    @Test func mismatchesFailTheStatementWithAClearMessage() throws {
        let notAUUID = try decodingError("'nope', 'x'") { db in
            try db.observeCallback("probe", delivery: .immediate) { (_: UUID, _: String) in }
        }
        #expect(notAUUID.extendedResultCode == .SQLITE_CONSTRAINT_FUNCTION)
        #expect(notAUUID.message == "swift_callback 'probe': argument 1 should be a UUID, found text 'nope'")

        let missing = try decodingError("'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'") { db in
            try db.observeCallback("probe", delivery: .immediate) { (_: UUID, _: String) in }
        }
        #expect(missing.message == "swift_callback 'probe': expected 2 arguments (UUID, String), found 1")

        let null = try decodingError("NULL") { db in
            try db.observeCallback("probe", delivery: .immediate) { (_: Int) in }
        }
        #expect(null.message == "swift_callback 'probe': argument 1 should be an integer, found NULL")

        let fraction = try decodingError("1.5") { db in
            try db.observeCallback("probe", delivery: .immediate) { (_: Int) in }
        }
        #expect(fraction.message == "swift_callback 'probe': argument 1 should be an integer, found real 1.5")

        let badDate = try decodingError("'yesterday'") { db in
            try db.observeCallback("probe", delivery: .immediate) { (_: Date) in }
        }
        #expect(badDate.message == "swift_callback 'probe': argument 1 should be a date, found text 'yesterday'")

        let notText = try decodingError("x'01'") { db in
            try db.observeCallback("probe", delivery: .immediate) { (_: String) in }
        }
        #expect(notText.message == "swift_callback 'probe': argument 1 should be text, found blob of 1 bytes")

        struct Pair: Decodable { var a: Int; var b: Int }
        let tooMany = try decodingError("1, 2, 3") { db in
            try db.observeCallback("probe", as: Pair.self, delivery: .immediate) { _ in }
        }
        #expect(tooMany.message == "swift_callback 'probe': expected 2 arguments for Pair, found 3")
    }
}
