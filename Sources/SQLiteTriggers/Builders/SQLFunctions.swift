import Foundation

/// Value types `uuid()` and `uuidv7()` can fill: UUID and UUID?.
public protocol SQLUUIDValue {}
extension UUID: SQLUUIDValue {}
extension Optional: SQLUUIDValue where Wrapped == UUID {}

/// Value types `datetime_subsec()` can fill: Date and Date?.
public protocol SQLDateValue {}
extension Date: SQLDateValue {}
extension Optional: SQLDateValue where Wrapped == Date {}

extension TypedSQL where Value: SQLUUIDValue {
    /// `uuid()`: a new random (v4) UUID, at fire time.
    public static var uuid: TypedSQL { TypedSQL(raw: "uuid()") }
    /// `uuidv7()`: a new time-ordered (v7) UUID, at fire time.
    public static var uuidv7: TypedSQL { TypedSQL(raw: "uuidv7()") }
}

/// `.now`'s SQL: the one clock expression a ``RuleSet`` may fold (RuleSet.swift).
let nowSQL = "datetime_subsec()"

extension TypedSQL where Value: SQLDateValue {
    /// `datetime_subsec()`: the time when the trigger fires, to the
    /// millisecond (the pinned time when the clock is pinned).
    ///
    /// ```swift
    /// row.updatedAt = .now
    /// ```
    public static var now: TypedSQL { TypedSQL(raw: nowSQL) }

    /// A fixed instant written into the trigger. This is rarely what a
    /// trigger wants: it never changes after installation. For the time of
    /// the change, use ``now``.
    public static func frozen(_ date: Date) -> TypedSQL {
        TypedSQL(raw: SQLQuoting.string(StorageConventions.text(for: date)))
    }

    /// Not a literal: a `Date` written into a trigger never changes again,
    /// which is rarely meant. The compiler points here, to the two spellings.
    @available(*, unavailable, message: "a Date is no SQL literal: use .now for the time the trigger fires, or .frozen(date) for a fixed instant")
    public static func value(_ date: Date) -> TypedSQL { fatalError("unavailable") }
}

extension TableDescription {
    /// `(SELECT count(*) FROM table WHERE ...)`.
    ///
    /// ```swift
    /// let tagCount: TypedSQL<Int> = ReminderTag.count { $0.reminderID == new.id }
    /// ```
    public static func count(where condition: ((TriggerRow<Self>) -> TypedSQL<Bool>)? = nil) -> TypedSQL<Int> {
        TypedSQL(raw: "(SELECT count(*) FROM \(SQLQuoting.identifier(tableName))\(whereClause(condition)))")
    }

    /// `EXISTS (SELECT 1 FROM table WHERE ...)`.
    ///
    /// ```swift
    /// !RemindersList.exists()
    /// ```
    public static func exists(where condition: ((TriggerRow<Self>) -> TypedSQL<Bool>)? = nil) -> TypedSQL<Bool> {
        TypedSQL(raw: "EXISTS (SELECT 1 FROM \(SQLQuoting.identifier(tableName))\(whereClause(condition)))")
    }

    /// " WHERE condition", or nothing.
    static func whereClause(_ condition: ((TriggerRow<Self>) -> TypedSQL<Bool>)?) -> String {
        condition.map { " WHERE \($0(row).sql)" } ?? ""
    }

    /// The WHERE clause of a statement, or none.
    static func whereClauses(_ condition: ((TriggerRow<Self>) -> TypedSQL<Bool>)?) -> [String] {
        condition.map { ["WHERE \($0(row).sql)"] } ?? []
    }
}
