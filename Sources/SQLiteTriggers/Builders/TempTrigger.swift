import Foundation

/// What a trigger reacts to, with its optional WHEN condition and its body.
/// INSERT triggers see `new`, DELETE triggers `old`, UPDATE triggers both.
///
/// ```swift
/// let event: TriggerEvent<Reminder> = .insert(when: { new in new.title == "" }) { new in
///     Reminder.update { $0.title = "New reminder" }.where { $0.rowid == new.rowid }
/// }
/// ```
public struct TriggerEvent<Table: TableDescription> {
    let clause: String
    let nameFragment: String
    let when: String?
    let body: [TriggerStatement]

    /// INSERT: the body sees the inserted row as `new`, with every column,
    /// defaults applied (an INTEGER PRIMARY KEY already assigned in AFTER
    /// triggers). `when`, also given `new`, limits the rows the body runs
    /// for; the body is one or more statements, one per line.
    ///
    /// ```swift
    /// let defaultTitle: TriggerEvent<Reminder> = .insert(when: { new in new.title == "" }) { new in
    ///     Reminder.update { $0.title = "New reminder" }.find(new.id)
    /// }
    /// ```
    public static func insert(
        when condition: ((TriggerRow<Table>) -> TypedSQL<Bool>)? = nil,
        @TriggerBodyBuilder _ body: (TriggerRow<Table>) -> [TriggerStatement]
    ) -> TriggerEvent {
        let new = TriggerRow<Table>("new")
        return TriggerEvent(clause: "INSERT", nameFragment: "insert", when: condition?(new).sql, body: body(new))
    }

    /// UPDATE, or `UPDATE OF` the given columns.
    ///
    /// ```swift
    /// let completed: TriggerEvent<Reminder> = .update(of: \.status, when: { old, new in new.status == 1 && old.status != 1 }) { _, new in
    ///     .callback("reminderCompleted", new.id)
    /// }
    /// ```
    public static func update<each Column>(
        of columns: repeat KeyPath<Table.TriggerColumns.Type, ColumnDescription<each Column>>,
        when condition: ((TriggerRow<Table>, TriggerRow<Table>) -> TypedSQL<Bool>)? = nil,
        @TriggerBodyBuilder _ body: (TriggerRow<Table>, TriggerRow<Table>) -> [TriggerStatement]
    ) -> TriggerEvent {
        let old = TriggerRow<Table>("old"), new = TriggerRow<Table>("new")
        let names = Table.columnNames(repeat each columns)
        let clause = names.isEmpty ? "UPDATE" : "UPDATE OF \(names.map(SQLQuoting.identifier).joined(separator: ", "))"
        return TriggerEvent(clause: clause, nameFragment: names.isEmpty ? "update" : "update_of",
                            when: condition?(old, new).sql, body: body(old, new))
    }

    /// DELETE: the body sees the deleted row as `old`. `when`, also given
    /// `old`, limits the rows the body runs for. In an AFTER trigger the row
    /// is gone from the table: queries there no longer count it.
    ///
    /// ```swift
    /// let keepOneList: TriggerEvent<RemindersList> = .delete(when: { _ in !RemindersList.exists() }) { _ in
    ///     RemindersList.insert { $0.title = "Reminders" }
    /// }
    /// ```
    public static func delete(
        when condition: ((TriggerRow<Table>) -> TypedSQL<Bool>)? = nil,
        @TriggerBodyBuilder _ body: (TriggerRow<Table>) -> [TriggerStatement]
    ) -> TriggerEvent {
        let old = TriggerRow<Table>("old")
        return TriggerEvent(clause: "DELETE", nameFragment: "delete", when: condition?(old).sql, body: body(old))
    }
}

/// A `CREATE TEMP TRIGGER` statement. Install it on every connection that
/// needs it, after migrations: TEMP triggers always see the current schema
/// and vanish with the connection. `sql` is the statement;
/// `execute(_:)` (SQLiteTriggersGRDB) runs it.
///
/// ```swift
/// let trigger = Reminder.createTempTrigger(after: .delete { old in .callback("deleted", old.id) })
/// print(trigger.sql)
/// ```
public struct TempTrigger: Sendable, CustomStringConvertible {
    /// The trigger's name in the temp schema.
    public let name: String
    /// The full `CREATE TEMP TRIGGER` statement (two of them for an insert
    /// touch, whose companion keeps the stamp; see `afterInsertTouch`).
    public let sql: String
    /// Every trigger `sql` creates: `name`, then any companions.
    package let names: [String]
    /// `sql` as its statements, one `CREATE TEMP TRIGGER` each, in the
    /// order of `names`.
    package let statements: [String]
    /// The table (or view) the triggers are on.
    package let tableName: String
    /// The statements that fire them: "INSERT", "UPDATE", "DELETE".
    package let firedBy: Set<String>
    /// Why `sql` given to ``init(sql:)`` is no trigger we can keep: the
    /// error installing it throws.
    package let invalidReason: String?
    /// What a touch trigger is to a ``RuleSet``, which folds an insert
    /// touch and an update touch of one table into one write (TouchTriggers.swift).
    package var touch: TouchRole? = nil

    /// `sql` creates `name` and the companions, in one text that only
    /// SQLite splits (it is never persisted).
    package init(name: String, sql: String, tableName: String, firedBy: Set<String>, companions: [String] = []) {
        self.init(name: name, statements: [sql], names: [name] + companions, tableName: tableName, firedBy: firedBy)
    }

    /// One statement per trigger: `name`'s, then each companion's.
    package init(name: String, sql: String, tableName: String, firedBy: Set<String>,
                 companionStatements: [(name: String, sql: String)]) {
        self.init(name: name, statements: [sql] + companionStatements.map(\.sql),
                  names: [name] + companionStatements.map(\.name), tableName: tableName, firedBy: firedBy)
    }

    private init(name: String, statements: [String], names: [String], tableName: String, firedBy: Set<String>) {
        self.name = name
        self.sql = statements.joined(separator: ";\n")
        self.names = names
        self.statements = statements
        self.tableName = tableName
        self.firedBy = firedBy
        self.invalidReason = nil
    }

    public var description: String { sql }

    /// The statement that removes it (and its companions).
    public func drop() -> DropTrigger {
        DropTrigger(sql: names.map { "DROP TRIGGER IF EXISTS \"temp\".\(SQLQuoting.identifier($0))" }.joined(separator: ";\n"))
    }
}

/// A `DROP TRIGGER` statement (or `DROP VIEW`, for a ``TempView``).
public struct DropTrigger: Sendable, CustomStringConvertible {
    public let sql: String
    public var description: String { sql }
}

/// BEFORE, AFTER or INSTEAD OF (for views).
public enum TriggerTiming: String, Sendable {
    case before = "BEFORE", after = "AFTER", insteadOf = "INSTEAD OF"
}

extension TableDescription {
    /// A TEMP trigger that runs before each change `event` describes:
    /// where a rule refuses a change (`.raise`) before it happens. See
    /// ``createTempTrigger(_:ifNotExists:after:)`` for naming and
    /// installation.
    ///
    /// ```swift
    /// let atMostFiveTags = ReminderTag.createTempTrigger(before: .insert { new in
    ///     .raise(.abort, "Reminders can have a maximum of 5 tags.",
    ///            when: ReminderTag.count { $0.reminderID == new.reminderID } >= 5)
    /// })
    /// ```
    public static func createTempTrigger(_ name: String? = nil, ifNotExists: Bool = false, before event: TriggerEvent<Self>) -> TempTrigger {
        temporaryTrigger(name, ifNotExists: ifNotExists, .before, event)
    }

    /// A TEMP trigger that runs after each row change `event` describes:
    /// where rules stamp, keep invariants and notify the app.
    ///
    /// It is a value: its `sql` is a `CREATE TEMP TRIGGER` statement, which
    /// `execute(_:)` (SQLiteTriggersGRDB) installs on one connection, and a
    /// ``RuleSet`` on a writer, kept across migrations. TEMP triggers live
    /// with the connection and see the current schema, so install them
    /// after migrations, on the writer only.
    ///
    /// Without a name, the name is derived from the table, the timing, the
    /// event and a hash of the whole definition: installing the same trigger
    /// twice is a no-op (the statement says IF NOT EXISTS), and different
    /// triggers never share a name. A name you give is used as is, and
    /// installing it twice fails unless `ifNotExists` is true.
    ///
    /// ```swift
    /// let neverEmpty = RemindersList.createTempTrigger(after: .delete(when: { _ in !RemindersList.exists() }) { _ in
    ///     RemindersList.insert { $0.title = "Reminders" }
    /// })
    /// print(neverEmpty.sql)   // CREATE TEMP TRIGGER IF NOT EXISTS "remindersLists_after_delete_…" AFTER DELETE ON …
    /// ```
    public static func createTempTrigger(_ name: String? = nil, ifNotExists: Bool = false, after event: TriggerEvent<Self>) -> TempTrigger {
        temporaryTrigger(name, ifNotExists: ifNotExists, .after, event)
    }

    /// INSTEAD OF, for a view described as a table: the body does the
    /// writing the view cannot.
    ///
    /// ```swift
    /// @TriggerTable("reminderTitles") struct ReminderTitle { var id: UUID; var title: String }
    /// let renameThroughView = ReminderTitle.createTempTrigger(insteadOf: .update { _, new in
    ///     Reminder.update { $0.title = new.title }.find(new.id)
    /// })
    /// ```
    public static func createTempTrigger(_ name: String? = nil, ifNotExists: Bool = false, insteadOf event: TriggerEvent<Self>) -> TempTrigger {
        temporaryTrigger(name, ifNotExists: ifNotExists, .insteadOf, event)
    }

    /// The statement, one clause a line, the body indented. The derived
    /// name hashes the definition's tokens, not its text: how the SQL is
    /// laid out (line breaks, indentation) never renames a trigger, while
    /// any change to what it does (a name, a value, an operator, a
    /// parenthesis) does.
    static func temporaryTrigger(_ name: String?, ifNotExists: Bool, _ timing: TriggerTiming, _ event: TriggerEvent<Self>) -> TempTrigger {
        precondition(!event.body.isEmpty, "SQLiteTriggers: a trigger body needs at least one statement")
        // Tables are named with their schema, so that a TEMP table of the
        // same name cannot capture the trigger; views are not, so that a
        // TEMP view (createTempView) is found as well as a main one.
        let target = timing == .insteadOf ? SQLQuoting.identifier(tableName) : qualifiedTableName
        let definition = TriggerDefinition(timing: timing, event: event.clause, target: target, condition: event.when,
                                           body: event.body.map(\.clauses))
        let triggerName = name ?? "\(tableName)_\(timing.rawValue.lowercased().replacingOccurrences(of: " ", with: "_"))_\(event.nameFragment)_\(stableHash(canonicalTokens(definition.sql)))"
        return TempTrigger(name: triggerName, sql: definition.createStatement(named: triggerName, ifNotExists: ifNotExists || name == nil),
                                tableName: tableName, firedBy: [String(event.clause.prefix { $0 != " " })])
    }
}
