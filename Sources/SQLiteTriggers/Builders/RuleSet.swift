/// An app's rules, declared once. SQLiteTriggersGRDB installs them on a
/// writer and keeps them installed when a migration drops their tables.
///
/// ```swift
/// let rules = RuleSet {
///     Reminder.afterInsertTouch(\.createdAt)
///     Reminder.afterUpdateTouch(\.updatedAt)
///     ReminderTag.createTempTrigger(before: .insert { new in
///         .raise(.abort, "Reminders can have a maximum of 5 tags.",
///                when: ReminderTag.count { $0.reminderID == new.reminderID } >= 5)
///     })
/// }
/// ```
public struct RuleSet: Sendable {
    /// The triggers, in installation order.
    public let rules: [TempTrigger]

    /// The rules of an array.
    ///
    /// ```swift
    /// let rules = RuleSet([Reminder.afterUpdateTouch(\.updatedAt)])
    /// ```
    public init(_ rules: [TempTrigger]) {
        self.rules = Self.foldingTouches(rules)
    }

    /// The rules listed in the closure, one per line; `if` and `for` work.
    ///
    /// ```swift
    /// let rules = RuleSet {
    ///     Reminder.afterUpdateTouch(\.updatedAt)
    ///     if stampsCreation { Reminder.afterInsertTouch(\.createdAt) }
    /// }
    /// ```
    public init(@RuleSetBuilder _ rules: () -> [TempTrigger]) {
        self.rules = Self.foldingTouches(rules())
    }

    /// An insert touch and an update touch of every UPDATE on one table
    /// stamp in one write: the insert touch's UPDATE also sets the update
    /// touch's columns, so the update touch does not fire on it (see
    /// `TouchRole`). Only where that gives the same rows: one update touch
    /// on the table (same schema, same name), stamping columns the insert
    /// touch does not, with the clock (`.now`) alone, which reads no column
    /// the insert touch just set.
    static func foldingTouches(_ rules: [TempTrigger]) -> [TempTrigger] {
        var updated: [String: [[(column: String, value: String, operand: String)]]] = [:]
        for rule in rules {
            if case .everyUpdate(let table, let assignments) = rule.touch { updated[table, default: []].append(assignments) }
        }
        return rules.map { rule in
            guard case .insert(let insertTouch) = rule.touch, let touches = updated[insertTouch.table], touches.count == 1,
                  let stamps = touches.first,
                  stamps.allSatisfy({ $0.value == nowSQL && !insertTouch.columns.contains($0.column) })
            else { return rule }
            return insertTouch.alsoStamping(stamps)
        }
    }
}

/// Collects the triggers of a ``RuleSet``.
@resultBuilder
public enum RuleSetBuilder {
    public static func buildExpression(_ rule: TempTrigger) -> [TempTrigger] { [rule] }
    // Disfavored, so that an element of the wrong type (a StructuredQueries
    // trigger not wrapped in `TempTrigger(…)`) is diagnosed against the
    // single-rule overload, where Swift 6.3 otherwise fails to produce one.
    @_disfavoredOverload
    public static func buildExpression(_ rules: [TempTrigger]) -> [TempTrigger] { rules }
    public static func buildBlock(_ parts: [TempTrigger]...) -> [TempTrigger] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [TempTrigger]?) -> [TempTrigger] { part ?? [] }
    public static func buildEither(first part: [TempTrigger]) -> [TempTrigger] { part }
    public static func buildEither(second part: [TempTrigger]) -> [TempTrigger] { part }
    public static func buildArray(_ parts: [[TempTrigger]]) -> [TempTrigger] { parts.flatMap { $0 } }
}
