import Foundation
import GRDB
import SQLiteTriggers

/// A described column is a GRDB column too: `@TriggerTable`'s columns work in
/// GRDB's query interface as GRDB's own do.
///
/// ```swift
/// @TriggerTable struct Reminder: Codable, FetchableRecord, PersistableRecord {
///     var id: UUID
///     var title: String
/// }
/// let milk = try Reminder.filter { $0.title == "Milk" }.order(\.title).fetchAll(db)
/// ```
extension ColumnDescription: ColumnExpression {}

// MARK: - UUID columns compare as the text they hold

/// A typed UUID column holds lowercase text (the storage convention), where
/// GRDB binds a plain `UUID` as a 16-byte blob that never matches it. These
/// overloads bind the text form, so that
/// `Note.filter { $0.folderID == folder.id }` finds the rows.
///
/// ```swift
/// @TriggerTable struct Note: Codable, FetchableRecord, PersistableRecord { var id: UUID; var folderID: UUID?; var title: String }
/// let inFolder = Note.filter { $0.folderID == UUID() }
/// ```
public func == (lhs: ColumnDescription<UUID>, rhs: UUID) -> SQLExpression { lhs.sqlExpression == rhs.databaseText }
public func != (lhs: ColumnDescription<UUID>, rhs: UUID) -> SQLExpression { lhs.sqlExpression != rhs.databaseText }
public func == (lhs: ColumnDescription<UUID?>, rhs: UUID?) -> SQLExpression { lhs.sqlExpression == rhs?.databaseText }
public func != (lhs: ColumnDescription<UUID?>, rhs: UUID?) -> SQLExpression { lhs.sqlExpression != rhs?.databaseText }
