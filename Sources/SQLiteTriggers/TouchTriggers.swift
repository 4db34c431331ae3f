import Foundation

extension TableDescription {
    /// After an UPDATE, stamps columns of the updated row, e.g. `updatedAt`.
    ///
    /// The rule: the touch happens only when the UPDATE left every touched
    /// column unchanged, so a value the statement set itself is kept. The
    /// touch's own UPDATE changes a touched column (it skips rows already
    /// holding every target value), so the trigger never fires for it
    /// again: it terminates with `PRAGMA recursive_triggers = ON`, and with
    /// a pinned clock. Rows are found by rowid, so text primary keys work.
    ///
    /// ```swift
    /// Reminder.afterUpdateTouch { $0.updatedAt = .now }
    /// ```
    public static func afterUpdateTouch(_ name: String? = nil, _ assign: (inout ColumnAssignments<Self>) -> Void) -> TemporaryTrigger {
        let assignments = touchAssignments(assign)
        let unchanged = assignments.pairs
            .map { "\"new\".\(SQLQuoting.identifier($0.column)) IS \"old\".\(SQLQuoting.identifier($0.column))" }
            .joined(separator: " AND ")
        return temporaryTrigger(name, ifNotExists: false, .after, TriggerEvent(
            clause: "UPDATE", nameFragment: "update_touch", when: unchanged,
            body: [touchStatement(assignments)]))
    }

    /// `afterUpdateTouch` for one date column, set to `datetime_subsec()`.
    ///
    /// ```swift
    /// Reminder.afterUpdateTouch(\.updatedAt)
    /// ```
    public static func afterUpdateTouch<Value: SQLDateValue>(_ column: KeyPath<TableColumns.Type, TableColumn<Value>>, name: String? = nil) -> TemporaryTrigger {
        afterUpdateTouch(name) { $0[dynamicMember: column] = .now }
    }

    /// After an INSERT, stamps columns the INSERT left NULL, e.g. `createdAt`.
    /// A value the statement gave is kept.
    ///
    /// A stamp is never lost: a companion trigger puts it back when an UPDATE
    /// sets the column to NULL, as saving a GRDB record that was inserted and
    /// not fetched again does (it still holds `createdAt == nil`). Because
    /// the stamp is an UPDATE, an update touch on `updatedAt` stamps the new
    /// row too: a new row's `updatedAt` is its creation time.
    ///
    /// ```swift
    /// Reminder.afterInsertTouch { $0.createdAt = .now }
    /// ```
    public static func afterInsertTouch(_ name: String? = nil, _ assign: (inout ColumnAssignments<Self>) -> Void) -> TemporaryTrigger {
        let assignments = touchAssignments(assign)
        let unset = assignments.pairs
            .map { "\"new\".\(SQLQuoting.identifier($0.column)) IS NULL" }
            .joined(separator: " OR ")
        var stamped = ColumnAssignments<Self>()
        stamped.pairs = assignments.pairs.map { pair in
            let value = "coalesce(\(SQLQuoting.identifier(pair.column)), \(pair.value))"
            return (pair.column, value, value)
        }
        let stamp = temporaryTrigger(name, ifNotExists: false, .after, TriggerEvent(
            clause: "INSERT", nameFragment: "insert_touch", when: unset,
            body: [touchStatement(stamped)]))
        // The companion: an UPDATE that blanks a stamp gets the old one back.
        let columns = assignments.pairs.map { SQLQuoting.identifier($0.column) }
        let blanked = columns.map { "(\"new\".\($0) IS NULL AND \"old\".\($0) IS NOT NULL)" }.joined(separator: " OR ")
        let restore = columns.map { "\($0) = coalesce(\"new\".\($0), \"old\".\($0))" }.joined(separator: ", ")
        let keep = temporaryTrigger("\(stamp.name)_kept", ifNotExists: true, .after, TriggerEvent(
            clause: "UPDATE OF \(columns.joined(separator: ", "))", nameFragment: "keep_stamp", when: blanked,
            body: [TriggerStatement(clauses: ["UPDATE \(SQLQuoting.identifier(tableName))", "SET \(restore)", "WHERE \"rowid\" = \"new\".\"rowid\""])]))
        return TemporaryTrigger(name: stamp.name, sql: stamp.sql + ";\n" + keep.sql, tableName: tableName,
                                firedBy: stamp.firedBy.union(keep.firedBy), companions: [keep.name])
    }

    /// `afterInsertTouch` for one date column, set to `datetime_subsec()`.
    ///
    /// ```swift
    /// Reminder.afterInsertTouch(\.createdAt)
    /// ```
    public static func afterInsertTouch<Value: SQLDateValue>(_ column: KeyPath<TableColumns.Type, TableColumn<Value>>, name: String? = nil) -> TemporaryTrigger {
        afterInsertTouch(name) { $0[dynamicMember: column] = .now }
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
        let set = assignments.pairs.map { "\(SQLQuoting.identifier($0.column)) = \($0.value)" }.joined(separator: ", ")
        let differs = assignments.pairs.map { "\(SQLQuoting.identifier($0.column)) IS NOT \($0.operand)" }.joined(separator: " OR ")
        return TriggerStatement(clauses: ["UPDATE \(SQLQuoting.identifier(tableName))", "SET \(set)", "WHERE \"rowid\" = \"new\".\"rowid\" AND (\(differs))"])
    }
}
