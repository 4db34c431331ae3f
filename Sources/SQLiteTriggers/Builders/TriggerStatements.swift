import Foundation

/// One statement of a trigger body.
///
/// ```swift
/// let statement: TriggerStatement = RemindersList.insert { $0.title = "Reminders" }.statement
/// print(statement.sql)   // INSERT INTO "remindersLists" ("title")
///                        // VALUES ('Reminders')
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

    public subscript<Value>(dynamicMember keyPath: KeyPath<Table.TriggerColumns.Type, ColumnDescription<Value>>) -> TypedSQL<Value> {
        get { TypedSQL(raw: SQLQuoting.identifier(Table.TriggerColumns.self[keyPath: keyPath].name)) }
        set {
            let name = Table.TriggerColumns.self[keyPath: keyPath].name
            pairs.removeAll { $0.column == name }
            pairs.append((name, newValue.sql, newValue.operand))
        }
    }

    var columnList: String { pairs.map { SQLQuoting.identifier($0.column) }.joined(separator: ", ") }
    var valueList: String { pairs.map(\.value).joined(separator: ", ") }
    var setList: String { pairs.map { "\(SQLQuoting.identifier($0.column)) = \($0.value)" }.joined(separator: ", ") }
}

/// How RAISE ends the statement; see SQLite's RAISE().
public enum RaiseAction: String, Sendable {
    case abort = "ABORT", fail = "FAIL", rollback = "ROLLBACK", ignore = "IGNORE"
}

extension TableDescription {
    /// `INSERT [OR conflict] INTO table (columns) VALUES (values)`; an
    /// upsert with ``TableInsert/onConflict(_:doUpdate:)``.
    ///
    /// With no assignment, a row of defaults (SQLite refuses `DEFAULT VALUES`
    /// inside triggers, so the statement inserts a NULL rowid instead).
    ///
    /// ```swift
    /// let defaultList = RemindersList.insert { $0.title = "Reminders" }
    /// let once = Tag.insert(or: .ignore) { $0.title = "urgent" }
    /// ```
    public static func insert(or conflict: ConflictAlgorithm? = nil, _ assign: (inout ColumnAssignments<Self>) -> Void) -> TableInsert<Self> {
        var assignments = ColumnAssignments<Self>()
        assign(&assignments)
        if assignments.pairs.isEmpty {
            let rowid = SQLQuoting.identifier(rowidName ?? "rowid")
            return TableInsert(conflict: conflict, columns: "(\(rowid))", source: ["VALUES (NULL)"], isSelect: false)
        }
        return TableInsert(conflict: conflict, columns: "(\(assignments.columnList))", source: ["VALUES (\(assignments.valueList))"], isSelect: false)
    }

    /// `INSERT [OR conflict] INTO table (columns) SELECT values FROM source WHERE ...`.
    ///
    /// ```swift
    /// let archive = Archive.insert(from: Reminder.self, where: { $0.status == 1 }) { row, source in row.title = source.title }
    /// ```
    public static func insert<Source: TableDescription>(
        or conflict: ConflictAlgorithm? = nil,
        from source: Source.Type,
        where condition: ((TriggerRow<Source>) -> TypedSQL<Bool>)? = nil,
        _ assign: (inout ColumnAssignments<Self>, TriggerRow<Source>) -> Void
    ) -> TableInsert<Self> {
        var assignments = ColumnAssignments<Self>()
        assign(&assignments, Source.row)
        return TableInsert(conflict: conflict, columns: "(\(assignments.columnList))",
                           source: ["SELECT \(assignments.valueList)", "FROM \(SQLQuoting.identifier(Source.tableName))"]
                               + Source.whereClauses(condition),
                           isSelect: true)
    }

    /// `UPDATE table SET ... FROM source WHERE ...`: each row takes values
    /// from the `source` row the condition pairs it with.
    ///
    /// ```swift
    /// let inheritTitle = Reminder.update(from: RemindersList.self, where: { reminder, list in
    ///     reminder.remindersListID == list.id && list.id == new.remindersListID
    /// }) { row, list in row.notes = list.title }
    /// ```
    public static func update<Source: TableDescription>(
        from source: Source.Type,
        where condition: (TriggerRow<Self>, TriggerRow<Source>) -> TypedSQL<Bool>,
        _ assign: (inout ColumnAssignments<Self>, TriggerRow<Source>) -> Void
    ) -> TriggerStatement {
        var assignments = ColumnAssignments<Self>()
        assign(&assignments, Source.row)
        return TriggerStatement(clauses: ["UPDATE \(SQLQuoting.identifier(tableName))", "SET \(assignments.setList)",
                                          "FROM \(SQLQuoting.identifier(Source.tableName))", "WHERE \(condition(row, Source.row).sql)"])
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
        TriggerStatement(clauses: ["UPDATE \(SQLQuoting.identifier(Table.tableName))", "SET \(assignments.setList)"]
                         + (condition.map { ["WHERE \($0)"] } ?? []))
    }
}

/// How an INSERT resolves a constraint conflict (`INSERT OR …`).
public enum ConflictAlgorithm: String, Sendable {
    case rollback = "ROLLBACK", abort = "ABORT", fail = "FAIL", ignore = "IGNORE", replace = "REPLACE"
}

/// An INSERT; an upsert with `onConflict`. It converts to a statement
/// wherever a trigger body expects one.
///
/// ```swift
/// let counted = Tag.insert { $0.title = new.title }.onConflict(\.title) { row, excluded in row.title = excluded.title }
/// ```
public struct TableInsert<Table: TableDescription>: TriggerStatementConvertible {
    let conflict: ConflictAlgorithm?
    let columns: String
    let source: [String]
    let isSelect: Bool
    var upsert: [String] = []

    /// `ON CONFLICT (columns) DO UPDATE SET ...`: on a UNIQUE or PRIMARY
    /// KEY conflict over `columns`, update the existing row instead;
    /// `excluded` is the row that was not inserted.
    ///
    /// ```swift
    /// let renamed = Tag.insert { $0.id = new.id; $0.title = new.title }
    ///     .onConflict(\.id) { row, excluded in row.title = excluded.title }
    /// ```
    public func onConflict<each Column>(
        _ columns: repeat KeyPath<Table.TriggerColumns.Type, ColumnDescription<each Column>>,
        doUpdate assign: (inout ColumnAssignments<Table>, TriggerRow<Table>) -> Void
    ) -> TableInsert {
        var assignments = ColumnAssignments<Table>()
        assign(&assignments, TriggerRow("excluded"))
        var copy = self
        let target = Table.columnNames(repeat each columns).map(SQLQuoting.identifier).joined(separator: ", ")
        copy.upsert = ["ON CONFLICT\(target.isEmpty ? "" : " (\(target))") DO UPDATE", "SET \(assignments.setList)"]
        return copy
    }

    /// `ON CONFLICT DO NOTHING`: a conflicting row is skipped.
    ///
    /// ```swift
    /// let once = Tag.insert { $0.title = "urgent" }.onConflictDoNothing()
    /// ```
    public func onConflictDoNothing() -> TableInsert {
        var copy = self
        copy.upsert = ["ON CONFLICT DO NOTHING"]
        return copy
    }

    public var statement: TriggerStatement {
        let verb = "INSERT" + (conflict.map { " OR \($0.rawValue)" } ?? "")
        var body = source
        // SQLite's parser needs a WHERE before an upsert's ON in INSERT … SELECT.
        if isSelect, !upsert.isEmpty, !body.contains(where: { $0.hasPrefix("WHERE ") }) { body.append("WHERE true") }
        return TriggerStatement(clauses: ["\(verb) INTO \(SQLQuoting.identifier(Table.tableName)) \(columns)"] + body + upsert)
    }
}

extension TableDescription {
    /// The SQL names of columns given as key paths.
    package static func columnNames<each Column>(_ columns: repeat KeyPath<TriggerColumns.Type, ColumnDescription<each Column>>) -> [String] {
        var names: [String] = []
        for column in repeat each columns { names.append(TriggerColumns.self[keyPath: column].name) }
        return names
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

    /// `SELECT value, ...`: evaluates expressions for their effect, such as a
    /// function the app registered.
    ///
    /// ```swift
    /// let ping: TriggerStatement = .select(TypedSQL<Int>(sql: "appDidInsert(\(new.id))"))
    /// ```
    public static func select(_ values: any TypedSQLExpression...) -> TriggerStatement {
        TriggerStatement(clauses: ["SELECT \(values.map(\.typedSQLText).joined(separator: ", "))"])
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
