import GRDB
import Foundation

/// One line makes a GRDB record follow the storage conventions of
/// SQLiteTriggers: UUIDs as lowercase text (like `uuid()` and `uuidv7()`,
/// where GRDB would write 16-byte blobs) and dates as
/// `'YYYY-MM-DD HH:MM:SS.SSS'` UTC (GRDB's own default, made explicit).
///
/// ```swift
/// struct Reminder: Codable, FetchableRecord, PersistableRecord, ConventionalRecord {
///     var id: UUID
///     var title: String
///     var updatedAt: Date?
/// }
/// ```
public protocol ConventionalRecord: EncodableRecord {}

extension ConventionalRecord {
    public static func databaseUUIDEncodingStrategy(for column: String) -> DatabaseUUIDEncodingStrategy {
        .lowercaseString
    }

    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .deferredToDate
    }
}

/// A UUID bound as lowercase text, the form the convention stores.
///
/// GRDB binds a plain `UUID` as a 16-byte blob, so
/// `Column("id") == uuid` never matches a text id. Compare with
/// `uuid.databaseText` instead, or use `Column.equals(uuid:)`:
///
/// ```swift
/// let reminder = try Reminder.filter(Column("id") == id.databaseText).fetchOne(db)
/// let same = try Reminder.filter(Column("id").equals(uuid: id)).fetchOne(db)
/// ```
public struct UUIDText: DatabaseValueConvertible, SQLExpressible, Hashable, Sendable {
    public var uuid: UUID

    public init(_ uuid: UUID) { self.uuid = uuid }

    public var databaseValue: DatabaseValue {
        StorageConventions.text(for: uuid).databaseValue
    }

    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> UUIDText? {
        UUID.fromDatabaseValue(dbValue).map(UUIDText.init)
    }
}

extension UUID {
    /// This UUID bound as lowercase text; see ``UUIDText``.
    public var databaseText: UUIDText { UUIDText(self) }
}

extension SQLExpressible {
    /// `self = '<lowercase uuid>'`: compares a text UUID column with a UUID.
    ///
    /// ```swift
    /// Reminder.filter(Column("remindersListID").equals(uuid: list.id))
    /// ```
    public func equals(uuid: UUID) -> SQLExpression {
        sqlExpression == uuid.databaseText
    }
}
