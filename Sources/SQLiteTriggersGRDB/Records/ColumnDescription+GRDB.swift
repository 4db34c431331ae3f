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

// MARK: - Comparisons with values, without importing GRDB

/// GRDB's comparison operators are members of its expression protocols, which
/// an app's operators find only when it imports GRDB itself; these let a described column compare with a
/// value (or another column of its type) with `SQLiteTriggersGRDB` alone, as
/// the UUID overloads above do, so that every column compares the same way.
///
/// ```swift
/// @TriggerTable struct Item: Codable, FetchableRecord, PersistableRecord { var id: UUID; var title: String; var rank: Int }
/// let milk = Item.filter { $0.title == "Milk" && $0.rank >= 2 }.order(\.title)
/// ```
public func == <V: SQLExpressible>(lhs: ColumnDescription<V>, rhs: V) -> SQLExpression { lhs.sqlExpression == rhs }
public func != <V: SQLExpressible>(lhs: ColumnDescription<V>, rhs: V) -> SQLExpression { lhs.sqlExpression != rhs }
public func < <V: SQLExpressible>(lhs: ColumnDescription<V>, rhs: V) -> SQLExpression { lhs.sqlExpression < rhs }
public func <= <V: SQLExpressible>(lhs: ColumnDescription<V>, rhs: V) -> SQLExpression { lhs.sqlExpression <= rhs }
public func > <V: SQLExpressible>(lhs: ColumnDescription<V>, rhs: V) -> SQLExpression { lhs.sqlExpression > rhs }
public func >= <V: SQLExpressible>(lhs: ColumnDescription<V>, rhs: V) -> SQLExpression { lhs.sqlExpression >= rhs }
public func == <V>(lhs: ColumnDescription<V>, rhs: ColumnDescription<V>) -> SQLExpression { lhs.sqlExpression == rhs.sqlExpression }
public func != <V>(lhs: ColumnDescription<V>, rhs: ColumnDescription<V>) -> SQLExpression { lhs.sqlExpression != rhs.sqlExpression }
/// `&&`, `||` and `!` on the comparisons above, with `SQLiteTriggersGRDB` alone.
public func && (lhs: SQLExpression, rhs: SQLExpression) -> SQLExpression { [lhs, rhs].joined(operator: .and) }
public func || (lhs: SQLExpression, rhs: SQLExpression) -> SQLExpression { [lhs, rhs].joined(operator: .or) }
public prefix func ! (operand: SQLExpression) -> SQLExpression { SQL("NOT (\(operand))").sqlExpression }
