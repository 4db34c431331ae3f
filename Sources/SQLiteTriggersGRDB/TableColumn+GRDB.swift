import GRDB
import SQLiteTriggers

/// A described column is a GRDB column too: `@Table`'s columns work in
/// GRDB's query interface as GRDB's own do.
///
/// ```swift
/// @Table struct Reminder: Codable, FetchableRecord, PersistableRecord {
///     var id: UUID
///     var title: String
/// }
/// let milk = try Reminder.filter { $0.title == "Milk" }.order(\.title).fetchAll(db)
/// ```
extension TableColumn: ColumnExpression {}
