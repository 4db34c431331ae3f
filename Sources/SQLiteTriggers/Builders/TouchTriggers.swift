import Foundation

/// What a touch trigger stamps and when: after an UPDATE (of some columns,
/// under a condition) or after an INSERT. Only `after:` takes one: a BEFORE
/// trigger that changes the row being written leaves SQLite's result
/// undefined.
///
/// The rules: an update touch happens only when the UPDATE left every
/// touched column unchanged, so a value the statement set itself wins; an
/// insert touch fills only columns the INSERT left NULL. The touch's own
/// UPDATE (by rowid, so text keys work) skips rows already holding every
/// target value, so it never fires itself again: it terminates with
/// `PRAGMA recursive_triggers = ON`, and with a pinned clock.
///
/// ```swift
/// let touch = Reminder.createTempTrigger(after: .touch(of: \.title, \.notes) { $0.updatedAt = .now })
/// ```
public struct TouchEvent<Table: TableDescription> {
    let event: TriggerEvent<Table>
    let assignments: ColumnAssignments<Table>
    let isInsert: Bool
    /// An update touch of every UPDATE (no columns, no condition of its
    /// own): the one a ``RuleSet`` folds into the insert touch's write.
    var isEveryUpdate = false
    /// An insert touch's own condition, kept to render it again folded.
    var insertCondition: String?

    /// After an UPDATE (of `columns`, or of any column) for which `when`
    /// holds, stamps the row: `updatedAt`, a revision counter.
    ///
    /// ```swift
    /// let retitled: TouchEvent<Reminder> = .touch(of: \.title, when: { old, new in old.status == 0 }) { $0.updatedAt = .now }
    /// ```
    public static func touch<each Column>(
        of columns: repeat KeyPath<Table.TriggerColumns.Type, ColumnDescription<each Column>>,
        when condition: ((TriggerRow<Table>, TriggerRow<Table>) -> TypedSQL<Bool>)? = nil,
        _ assign: (inout ColumnAssignments<Table>) -> Void
    ) -> TouchEvent {
        let assignments = Table.touchAssignments(assign)
        let names = Table.columnNames(repeat each columns)
        let unchanged = assignments.pairs
            .map { "\"new\".\(SQLQuoting.identifier($0.column)) IS \"old\".\(SQLQuoting.identifier($0.column))" }
            .joined(separator: " AND ")
        let extra = condition?(TriggerRow("old"), TriggerRow("new")).operand
        return TouchEvent(event: TriggerEvent(
            clause: names.isEmpty ? "UPDATE" : "UPDATE OF \(names.map(SQLQuoting.identifier).joined(separator: ", "))",
            nameFragment: names.isEmpty ? "update_touch" : "update_of_touch",
            when: extra.map { "(\(unchanged)) AND \($0)" } ?? unchanged,
            body: [Table.touchStatement(assignments)]), assignments: assignments, isInsert: false,
            isEveryUpdate: names.isEmpty && extra == nil)
    }

    /// After an INSERT for which `when` holds, fills the columns the INSERT
    /// left NULL: `createdAt`. A companion trigger keeps the stamp when an
    /// UPDATE sets it back to NULL (see ``TableDescription/afterInsertTouch(_:_:)``).
    ///
    /// ```swift
    /// let created: TouchEvent<Reminder> = .insertTouch { $0.createdAt = .now }
    /// ```
    public static func insertTouch(
        when condition: ((TriggerRow<Table>) -> TypedSQL<Bool>)? = nil,
        _ assign: (inout ColumnAssignments<Table>) -> Void
    ) -> TouchEvent {
        insertTouch(condition: condition?(TriggerRow("new")).operand, assignments: Table.touchAssignments(assign), alsoStamping: [])
    }

    /// The insert touch; `alsoStamping`, an update touch's assignments,
    /// set outright in the same UPDATE (a ``RuleSet`` folding the two).
    static func insertTouch(condition extra: String?, assignments: ColumnAssignments<Table>,
                            alsoStamping updated: [(column: String, value: String, operand: String)]) -> TouchEvent {
        let unset = assignments.pairs
            .map { "\"new\".\(SQLQuoting.identifier($0.column)) IS NULL" }
            .joined(separator: " OR ")
        var stamped = ColumnAssignments<Table>()
        stamped.pairs = assignments.pairs.map { pair in
            let value = "coalesce(\(SQLQuoting.identifier(pair.column)), \(pair.value))"
            return (pair.column, value, value)
        } + updated
        return TouchEvent(event: TriggerEvent(
            clause: "INSERT", nameFragment: "insert_touch",
            when: extra.map { "(\(unset)) AND \($0)" } ?? unset,
            body: [Table.touchStatement(stamped)]), assignments: assignments, isInsert: true, insertCondition: extra)
    }
}

/// What a touch trigger is to a ``RuleSet``: an insert touch, which can
/// stamp an update touch's columns in its own UPDATE, or an update touch
/// of every UPDATE, whose assignments those are.
///
/// Why: an insert touch's UPDATE fires the update touch, whose own UPDATE
/// stamps the new row again, so a create wrote three times (the insert and
/// two stamps), and the durable log logged three changes from a writer
/// without the extension. Folded, the stamps are one write, and the update
/// touch, seeing its column set by that write, does not fire: the same
/// values (a new row's updatedAt is its creation time), one write fewer.
package enum TouchRole: Sendable {
    case insert(any InsertTouchRendering)
    /// `table`: schema and name, as the trigger names them.
    case everyUpdate(table: String, assignments: [(column: String, value: String, operand: String)])
}

/// An insert touch, rendered again stamping an update touch's columns too.
package protocol InsertTouchRendering: Sendable {
    /// Schema and name, as the trigger names them.
    var table: String { get }
    /// The columns it stamps.
    var columns: [String] { get }
    func alsoStamping(_ updated: [(column: String, value: String, operand: String)]) -> TempTrigger
}

/// What an insert touch was made of: its name, its condition and its
/// assignments, all text.
private struct InsertTouchFolding<Table: TableDescription>: InsertTouchRendering {
    let name: String
    let ifNotExists: Bool
    let condition: String?
    let pairs: [(column: String, value: String, operand: String)]
    var table: String { Table.qualifiedTableName }
    var columns: [String] { pairs.map(\.column) }

    func alsoStamping(_ updated: [(column: String, value: String, operand: String)]) -> TempTrigger {
        Table.foldedInsertTouch(name, ifNotExists: ifNotExists, condition: condition, pairs: pairs, alsoStamping: updated)
    }
}

extension TableDescription {
    /// A touch trigger; see ``TouchEvent``.
    ///
    /// ```swift
    /// let touch = Reminder.createTempTrigger(after: .touch { $0.updatedAt = .now })
    /// ```
    public static func createTempTrigger(_ name: String? = nil, after touch: TouchEvent<Self>) -> TempTrigger {
        var stamp = temporaryTrigger(name, ifNotExists: false, .after, touch.event)
        guard touch.isInsert else {
            if touch.isEveryUpdate {
                stamp.touch = .everyUpdate(table: qualifiedTableName, assignments: touch.assignments.pairs)
            }
            return stamp
        }
        var trigger = withKeptStamp(stamp, touch)
        // Folded by a RuleSet, the insert touch keeps its name: the rule is
        // the same rule (drift reports and `name` still find it), written
        // in one UPDATE with the update touch's columns.
        let stampName = stamp.name, ifNotExists = name == nil
        let condition = touch.insertCondition, pairs = touch.assignments.pairs
        trigger.touch = .insert(InsertTouchFolding<Self>(name: stampName, ifNotExists: ifNotExists, condition: condition, pairs: pairs))
        return trigger
    }

    /// The insert touch, named as before, stamping `updated` too.
    fileprivate static func foldedInsertTouch(_ name: String, ifNotExists: Bool, condition: String?,
                                              pairs: [(column: String, value: String, operand: String)],
                                              alsoStamping updated: [(column: String, value: String, operand: String)]) -> TempTrigger {
        var assignments = ColumnAssignments<Self>()
        assignments.pairs = pairs
        let folded = TouchEvent.insertTouch(condition: condition, assignments: assignments, alsoStamping: updated)
        return withKeptStamp(temporaryTrigger(name, ifNotExists: ifNotExists, .after, folded.event), folded)
    }

    /// An insert touch's trigger and its companion: an UPDATE that blanks a
    /// stamp gets the old one back.
    private static func withKeptStamp(_ stamp: TempTrigger, _ touch: TouchEvent<Self>) -> TempTrigger {
        let columns = touch.assignments.pairs.map { SQLQuoting.identifier($0.column) }
        let blanked = columns.map { "(\"new\".\($0) IS NULL AND \"old\".\($0) IS NOT NULL)" }.joined(separator: " OR ")
        let restore = columns.map { "\($0) = coalesce(\"new\".\($0), \"old\".\($0))" }.joined(separator: ", ")
        let keep = temporaryTrigger("\(stamp.name)_kept", ifNotExists: true, .after, TriggerEvent(
            clause: "UPDATE OF \(columns.joined(separator: ", "))", nameFragment: "keep_stamp", when: blanked,
            body: [TriggerStatement(clauses: ["UPDATE \(SQLQuoting.identifier(tableName))", "SET \(restore)", "WHERE \(newRowCondition)"])]))
        return TempTrigger(name: stamp.name, sql: stamp.sql, tableName: tableName,
                           firedBy: stamp.firedBy.union(keep.firedBy), companionStatements: [(keep.name, keep.sql)])
    }

    /// After an UPDATE, stamps columns of the updated row, e.g. `updatedAt`;
    /// `.touch` with no columns and no condition.
    ///
    /// ```swift
    /// Reminder.afterUpdateTouch { $0.updatedAt = .now }
    /// ```
    public static func afterUpdateTouch(_ name: String? = nil, _ assign: (inout ColumnAssignments<Self>) -> Void) -> TempTrigger {
        createTempTrigger(name, after: .touch(assign))
    }

    /// `afterUpdateTouch` for one date column, set to `datetime_subsec()`.
    ///
    /// ```swift
    /// Reminder.afterUpdateTouch(\.updatedAt)
    /// ```
    public static func afterUpdateTouch<Value: SQLDateValue>(_ column: KeyPath<TriggerColumns.Type, ColumnDescription<Value>>, name: String? = nil) -> TempTrigger {
        afterUpdateTouch(name) { $0[dynamicMember: column] = .now }
    }

    /// After an INSERT, stamps columns the INSERT left NULL, e.g. `createdAt`.
    /// A value the statement gave is kept.
    ///
    /// A stamp is never lost: a companion trigger puts it back when an UPDATE
    /// sets the column to NULL, as saving a GRDB record that was inserted and
    /// not fetched again does (it still holds `createdAt == nil`). A new
    /// row's `updatedAt` is its creation time: in a ``RuleSet`` with an
    /// update touch of every UPDATE, this UPDATE sets it too (one write);
    /// alone, it fires the update touch, which writes again.
    ///
    /// ```swift
    /// Reminder.afterInsertTouch { $0.createdAt = .now }
    /// ```
    public static func afterInsertTouch(_ name: String? = nil, _ assign: (inout ColumnAssignments<Self>) -> Void) -> TempTrigger {
        createTempTrigger(name, after: .insertTouch(assign))
    }

    /// `afterInsertTouch` for one date column, set to `datetime_subsec()`.
    ///
    /// ```swift
    /// Reminder.afterInsertTouch(\.createdAt)
    /// ```
    public static func afterInsertTouch<Value: SQLDateValue>(_ column: KeyPath<TriggerColumns.Type, ColumnDescription<Value>>, name: String? = nil) -> TempTrigger {
        afterInsertTouch(name) { $0[dynamicMember: column] = .now }
    }

    /// A touch as a statement of any trigger body, on any table: an UPDATE
    /// of the rows `where` selects that skips those already holding every
    /// target value, so touching a parent row never loops.
    ///
    /// ```swift
    /// let touchList = RemindersList.touch { $0.title = new.title }.where { $0.id == new.remindersListID }
    /// ```
    public static func touch(_ assign: (inout ColumnAssignments<Self>) -> Void) -> TableUpdate<Self> {
        let assignments = touchAssignments(assign)
        let differs = assignments.pairs.map { "\(SQLQuoting.identifier($0.column)) IS NOT \($0.operand)" }.joined(separator: " OR ")
        return TableUpdate(assignments: assignments, condition: "(\(differs))")
    }

    static func touchAssignments(_ assign: (inout ColumnAssignments<Self>) -> Void) -> ColumnAssignments<Self> {
        var assignments = ColumnAssignments<Self>()
        assign(&assignments)
        precondition(!assignments.pairs.isEmpty, "SQLiteTriggers: a touch trigger needs at least one assignment")
        return assignments
    }

    /// UPDATE of the triggering row (by rowid) that skips rows already
    /// holding every target value: that is what ends the recursion.
    static func touchStatement(_ assignments: ColumnAssignments<Self>) -> TriggerStatement {
        let differs = assignments.pairs.map { "\(SQLQuoting.identifier($0.column)) IS NOT \($0.operand)" }.joined(separator: " OR ")
        return TriggerStatement(clauses: ["UPDATE \(SQLQuoting.identifier(tableName))", "SET \(assignments.setList)",
                                          "WHERE \(newRowCondition) AND (\(differs))"])
    }
}
