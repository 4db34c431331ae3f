@_exported import SQLiteTriggers

/// Describes a struct as a table for the trigger builders.
///
/// ```swift
/// @Table struct Reminder {
///     let id: UUID
///     var title: String       // `var title = ""` is an error, with a fix-it adding `: String`
///     var updatedAt: Date?
/// }
/// @Table("remindersLists") struct RemindersList { let id: UUID; var title: String }
/// ```
///
/// The table name defaults to the lowerCamel plural of the struct's name
/// (`Reminder` -> `reminders`); the argument overrides it. See ``Column(_:primaryKey:)``
/// and ``Ephemeral()``. The macro generates nothing for migrations: they
/// stay frozen SQL, while the TEMP triggers built from these descriptions
/// are installed anew on each connection and always match the schema.
@attached(extension, conformances: TableDescription, names: named(tableName), named(databaseTableName), named(TableColumns), named(Columns), named(allColumns))
public macro Table(_ name: String? = nil) = #externalMacro(module: "SQLiteTriggersMacroPlugin", type: "TableMacro")

/// Renames a column, or marks the primary key (by default the `id` property).
///
/// ```swift
/// @Column("list_id") var remindersListID: UUID
/// @Column(primaryKey: true) var code: String
/// ```
@attached(peer)
public macro Column(_ name: String? = nil, primaryKey: Bool = false) = #externalMacro(module: "SQLiteTriggersMacroPlugin", type: "ColumnMacro")

/// Keeps a stored property out of the table.
///
/// ```swift
/// @Ephemeral var isSelected = false
/// ```
@attached(peer)
public macro Ephemeral() = #externalMacro(module: "SQLiteTriggersMacroPlugin", type: "EphemeralMacro")

/// Declares a callback's name and payload once, for both sides: trigger
/// bodies fire it with typed expressions, observers receive the struct.
///
/// ```swift
/// @CallbackEvent struct ReminderCompleted { var id: UUID; var title: String }
///
/// Reminder.createTemporaryTrigger(after: .update(of: \.status) { _, new in
///     ReminderCompleted.callback(id: new.id, title: new.title)
/// })
/// try db.observe(ReminderCompleted.self) { event in print(event.title) }
/// ```
@attached(extension, conformances: CallbackEvent, names: named(callbackName), named(callback), named(decode))
public macro CallbackEvent(_ name: String? = nil) = #externalMacro(module: "SQLiteTriggersMacroPlugin", type: "CallbackEventMacro")
