import Foundation

/// One statement of a trigger body.
///
/// ```swift
/// let statement: TriggerStatement = RemindersList.insert { $0.title = "Reminders" }
/// statement.sql   // INSERT INTO "remindersLists" ("title") VALUES ('Reminders')
/// ```
public struct TriggerStatement: Sendable, CustomStringConvertible {
    /// The statement's clauses, printed one a line (a line break inside a
    /// string literal or a quoted name belongs to its clause).
    let clauses: [String]

    /// The SQL text.
    public var sql: String { clauses.joined(separator: "\n") }
    public var description: String { sql }

    /// The escape hatch: one raw SQL statement, unchecked.
    ///
    /// ```swift
    /// let vacuum = TriggerStatement(unchecked: "SELECT 1")
    /// ```
    public init(unchecked sql: String) { self.clauses = [sql] }

    init(clauses: [String]) { self.clauses = clauses }
}

/// The `SET` or `VALUES` of an INSERT or UPDATE: assign typed SQL to the
/// table's columns. Reading a column gives its current value, for
/// `row.count = row.count + 1` in an UPDATE.
///
/// ```swift
/// Reminder.update { row in row.updatedAt = .now }
/// ```
@dynamicMemberLookup
public struct ColumnAssignments<Table: TableDescription> {
    /// The value as SQL, and as an operand (parenthesized where compound).
    var pairs: [(column: String, value: String, operand: String)] = []

    public subscript<Value>(dynamicMember keyPath: KeyPath<Table.TableColumns.Type, TableColumn<Value>>) -> TypedSQL<Value> {
        get { TypedSQL(raw: SQLQuoting.identifier(Table.TableColumns.self[keyPath: keyPath].name)) }
        set {
            let name = Table.TableColumns.self[keyPath: keyPath].name
            pairs.removeAll { $0.column == name }
            pairs.append((name, newValue.sql, newValue.operand))
        }
    }

    var columnList: String { pairs.map { SQLQuoting.identifier($0.column) }.joined(separator: ", ") }
    var valueList: String { pairs.map(\.value).joined(separator: ", ") }
}

/// How RAISE ends the statement; see SQLite's RAISE().
public enum RaiseAction: String, Sendable {
    case abort = "ABORT", fail = "FAIL", rollback = "ROLLBACK", ignore = "IGNORE"
}

extension TableDescription {
    /// `INSERT INTO table (columns) VALUES (values)`.
    ///
    /// ```swift
    /// RemindersList.insert { $0.title = "Reminders" }
    /// ```
    public static func insert(_ assign: (inout ColumnAssignments<Self>) -> Void) -> TriggerStatement {
        var assignments = ColumnAssignments<Self>()
        assign(&assignments)
        guard !assignments.pairs.isEmpty else {
            return TriggerStatement(clauses: ["INSERT INTO \(SQLQuoting.identifier(tableName))", "DEFAULT VALUES"])
        }
        return TriggerStatement(clauses: ["INSERT INTO \(SQLQuoting.identifier(tableName)) (\(assignments.columnList))", "VALUES (\(assignments.valueList))"])
    }

    /// `INSERT INTO table (columns) SELECT values FROM source WHERE ...`.
    ///
    /// ```swift
    /// let archive = Archive.insert(from: Reminder.self, where: { $0.status == 1 }) { row, source in row.title = source.title }
    /// ```
    public static func insert<Source: TableDescription>(
        from source: Source.Type,
        where condition: ((TriggerRow<Source>) -> TypedSQL<Bool>)? = nil,
        _ assign: (inout ColumnAssignments<Self>, TriggerRow<Source>) -> Void
    ) -> TriggerStatement {
        var assignments = ColumnAssignments<Self>()
        assign(&assignments, Source.row)
        return TriggerStatement(clauses: ["INSERT INTO \(SQLQuoting.identifier(tableName)) (\(assignments.columnList))",
                                          "SELECT \(assignments.valueList)", "FROM \(SQLQuoting.identifier(Source.tableName))"]
                                         + Source.whereClauses(condition))
    }

    /// `UPDATE table SET ...`, narrowed with ``TableUpdate/where(_:)`` or
    /// ``TableUpdate/find(_:)``.
    ///
    /// ```swift
    /// let flag = Reminder.update { $0.isFlagged = true }.find(new.id)
    /// ```
    public static func update(_ assign: (inout ColumnAssignments<Self>) -> Void) -> TableUpdate<Self> {
        var assignments = ColumnAssignments<Self>()
        assign(&assignments)
        return TableUpdate(assignments: assignments, condition: nil)
    }

    /// `DELETE FROM table WHERE ...`.
    ///
    /// ```swift
    /// let untag: TriggerStatement = ReminderTag.delete { $0.reminderID == old.id }
    /// ```
    public static func delete(where condition: ((TriggerRow<Self>) -> TypedSQL<Bool>)? = nil) -> TriggerStatement {
        TriggerStatement(clauses: ["DELETE FROM \(SQLQuoting.identifier(tableName))"] + whereClauses(condition))
    }
}

/// An UPDATE, whole-table until narrowed. It converts to a statement
/// wherever a trigger body expects one.
public struct TableUpdate<Table: TableDescription>: TriggerStatementConvertible {
    let assignments: ColumnAssignments<Table>
    let condition: String?

    /// Only the rows matching `condition`.
    public func `where`(_ condition: (TriggerRow<Table>) -> TypedSQL<Bool>) -> TableUpdate {
        let added = condition(Table.row).sql
        return TableUpdate(assignments: assignments, condition: self.condition.map { "(\($0)) AND (\(added))" } ?? added)
    }

    /// Only the row whose primary key is `key`.
    public func find<Key>(_ key: TypedSQL<Key>) -> TableUpdate {
        guard let primaryKey = Table.primaryKeyColumn else {
            preconditionFailure("SQLiteTriggers: \(Table.tableName) has no primary key column in its description (mark one `primaryKey: true` in allColumns)")
        }
        return `where` { _ in TypedSQL<Bool>(raw: "\(SQLQuoting.identifier(Table.tableName)).\(SQLQuoting.identifier(primaryKey.name)) = \(key.operand)") }
    }

    public var statement: TriggerStatement {
        let set = assignments.pairs.map { "\(SQLQuoting.identifier($0.column)) = \($0.value)" }.joined(separator: ", ")
        return TriggerStatement(clauses: ["UPDATE \(SQLQuoting.identifier(Table.tableName))", "SET \(set)"] + (condition.map { ["WHERE \($0)"] } ?? []))
    }
}

/// Anything that stands as one statement in a trigger body.
public protocol TriggerStatementConvertible {
    var statement: TriggerStatement { get }
}

extension TriggerStatement: TriggerStatementConvertible {
    public var statement: TriggerStatement { self }

    /// `SELECT RAISE(action, message)`, optionally only `when` a condition
    /// holds: the way a trigger refuses a change.
    ///
    /// ```swift
    /// let refusal: TriggerStatement = .raise(.abort, "Reminders can have a maximum of 5 tags.",
    ///                                        when: ReminderTag.count { $0.reminderID == new.id } >= 5)
    /// ```
    public static func raise(_ action: RaiseAction, _ message: String = "", when condition: TypedSQL<Bool>? = nil) -> TriggerStatement {
        let raise = action == .ignore ? "RAISE(IGNORE)" : "RAISE(\(action.rawValue), \(SQLQuoting.string(message)))"
        return TriggerStatement(clauses: ["SELECT \(raise)"] + (condition.map { ["WHERE \($0.sql)"] } ?? []))
    }

    /// `SELECT swift_callback('name', arguments...)`: tells the app's
    /// observers (see ``CallbackDelivery``).
    ///
    /// ```swift
    /// let notify: TriggerStatement = .callback("reminderCompleted", new.id, new.title)
    /// ```
    public static func callback<each V>(_ name: String, _ arguments: repeat TypedSQL<each V>) -> TriggerStatement {
        var parts = [SQLQuoting.string(name)]
        for argument in repeat each arguments { parts.append(argument.sql) }
        return TriggerStatement(unchecked: "SELECT swift_callback(\(parts.joined(separator: ", ")))")
    }
}

/// Collects a trigger's statements, one per line.
@resultBuilder
public enum TriggerBodyBuilder {
    public static func buildExpression(_ statement: TriggerStatement) -> [TriggerStatement] { [statement] }
    public static func buildExpression(_ statement: some TriggerStatementConvertible) -> [TriggerStatement] { [statement.statement] }
    public static func buildBlock(_ parts: [TriggerStatement]...) -> [TriggerStatement] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [TriggerStatement]?) -> [TriggerStatement] { part ?? [] }
    public static func buildEither(first part: [TriggerStatement]) -> [TriggerStatement] { part }
    public static func buildEither(second part: [TriggerStatement]) -> [TriggerStatement] { part }
    public static func buildArray(_ parts: [[TriggerStatement]]) -> [TriggerStatement] { parts.flatMap { $0 } }
}
