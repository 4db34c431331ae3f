@_exported import SQLiteTriggers

/// Describes a struct as a table for the trigger builders.
///
/// ```swift
/// @TriggerTable struct Reminder {
///     let id: UUID
///     var title = ""          // a literal says the type; `var dueDate = Date()` needs `: Date`
///     var updatedAt: Date?
/// }
/// @TriggerTable("remindersLists") struct RemindersList { let id: UUID; var title: String }
/// ```
///
/// The table name defaults to the lowerCamel plural of the struct's name
/// (`Reminder` -> `reminders`); the argument overrides it. See ``TriggerColumn(_:primaryKey:)``
/// and ``TriggerIgnored()``. The macro generates nothing for migrations: they
/// stay frozen SQL, while the TEMP triggers built from these descriptions
/// are installed anew on each connection and always match the schema.
@attached(extension, conformances: TableDescription, names: named(tableName), named(databaseTableName), named(TriggerColumns), named(Columns), named(allColumns))
public macro TriggerTable(_ name: String? = nil) = #externalMacro(module: "SQLiteTriggersMacroPlugin", type: "TriggerTableMacro")

/// Renames a column, or marks the primary key (by default the `id` property).
///
/// ```swift
/// @TriggerColumn("list_id") var remindersListID: UUID
/// @TriggerColumn(primaryKey: true) var code: String
/// ```
@attached(peer)
public macro TriggerColumn(_ name: String? = nil, primaryKey: Bool = false) = #externalMacro(module: "SQLiteTriggersMacroPlugin", type: "TriggerColumnMacro")

/// Keeps a stored property out of the table.
///
/// ```swift
/// @TriggerIgnored var isSelected = false
/// ```
@attached(peer)
public macro TriggerIgnored() = #externalMacro(module: "SQLiteTriggersMacroPlugin", type: "TriggerIgnoredMacro")

/// Declares a callback's name and payload once, for both sides: trigger
/// bodies fire it with typed expressions, observers receive the struct.
///
/// ```swift
/// @CallbackEvent struct ReminderCompleted { var id: UUID; var title: String }
///
/// Reminder.createTempTrigger(after: .update(of: \.status) { _, new in
///     ReminderCompleted.callback(id: new.id, title: new.title)
/// })
/// try db.observe(ReminderCompleted.self) { event in print(event.title) }
/// ```
@attached(extension, conformances: CallbackEvent, names: named(callbackName), named(callback), named(decode))
public macro CallbackEvent(_ name: String? = nil) = #externalMacro(module: "SQLiteTriggersMacroPlugin", type: "CallbackEventMacro")
