import MacroTesting
import SwiftSyntaxMacros
import SQLiteTriggersMacroPlugin
import Testing

@Suite struct TableMacroTests {
    let macros: [String: any Macro.Type] = [
        "Table": TableMacro.self, "Column": ColumnMacro.self, "Ephemeral": EphemeralMacro.self,
    ]

    @Test func aStructWithAnIDKey() {
        assertMacro(macros) {
            """
            @Table struct Reminder {
              let id: UUID
              var title: String
              var updatedAt: Date?
              var priority: Optional<Int>
            }
            """
        } expansion: {
            """
            struct Reminder {
              let id: UUID
              var title: String
              var updatedAt: Date?
              var priority: Optional<Int>
            }

            extension Reminder: SQLiteTriggers.TableDescription {
                static let tableName = "reminders"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                    static let title = SQLiteTriggers.TableColumn<String>("title")
                    static let updatedAt = SQLiteTriggers.TableColumn<Date?>("updatedAt")
                    static let priority = SQLiteTriggers.TableColumn<Optional<Int>>("priority")
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id, TableColumns.title, TableColumns.updatedAt, TableColumns.priority]
            }
            """
        }
    }

    @Test func anExplicitTableName() {
        assertMacro(macros) {
            """
            @Table("remindersLists")
            struct RemindersList {
              let id: UUID
              var title: String
            }
            """
        } expansion: {
            """
            struct RemindersList {
              let id: UUID
              var title: String
            }

            extension RemindersList: SQLiteTriggers.TableDescription {
                static let tableName = "remindersLists"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                    static let title = SQLiteTriggers.TableColumn<String>("title")
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id, TableColumns.title]
            }
            """
        }
    }

    @Test func renamedColumnsAndAnExplicitKey() {
        assertMacro(macros) {
            """
            @Table struct Tag {
              @Column(primaryKey: true) var code: String
              @Column("display_title") var title: String
              var id: Int
            }
            """
        } expansion: {
            """
            struct Tag {
              var code: String
              var title: String
              var id: Int
            }

            extension Tag: SQLiteTriggers.TableDescription {
                static let tableName = "tags"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let code = SQLiteTriggers.TableColumn<String>("code", primaryKey: true)
                    static let title = SQLiteTriggers.TableColumn<String>("display_title")
                    static let id = SQLiteTriggers.TableColumn<Int>("id")
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.code, TableColumns.title, TableColumns.id]
            }
            """
        }
    }

    @Test func computedStaticLazyAndEphemeralPropertiesAreSkipped() {
        assertMacro(macros) {
            """
            @Table struct Reminder {
              let id: UUID
              var status: Int { didSet { print(status) } }
              var isCompleted: Bool { status == 1 }
              var flagged: Bool { get { true } set { } }
              static var defaultTitle = "New"
              lazy var cache: [Int] = []
              @Ephemeral var isSelected: Bool = false
            }
            """
        } expansion: {
            """
            struct Reminder {
              let id: UUID
              var status: Int { didSet { print(status) } }
              var isCompleted: Bool { status == 1 }
              var flagged: Bool { get { true } set { } }
              static var defaultTitle = "New"
              lazy var cache: [Int] = []
              var isSelected: Bool = false
            }

            extension Reminder: SQLiteTriggers.TableDescription {
                static let tableName = "reminders"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                    static let status = SQLiteTriggers.TableColumn<Int>("status")
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id, TableColumns.status]
            }
            """
        }
    }

    @Test func publicStructsGetPublicMembers() {
        assertMacro(macros) {
            """
            @Table public struct Item {
              public let id: UUID
            }
            """
        } expansion: {
            """
            public struct Item {
              public let id: UUID
            }

            extension Item: SQLiteTriggers.TableDescription {
                public static let tableName = "items"
                public static var databaseTableName: String {
                  tableName
                }
                public enum TableColumns {
                    public static let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                }
                public typealias Columns = TableColumns
                public static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id]
            }
            """
        }
    }

    @Test func pluralsAndQuotedNames() {
        assertMacro(macros) {
            """
            @Table struct Category {
              var `select`: Int, `where`: String
            }
            @Table struct Box { var id: Int }
            @Table struct Key { var id: Int }
            @Table struct Watch { var id: Int }
            """
        } expansion: {
            """
            struct Category {
              var `select`: Int, `where`: String
            }
            struct Box { var id: Int 
            }
            struct Key { var id: Int 
            }
            struct Watch { var id: Int 
            }

            extension Category: SQLiteTriggers.TableDescription {
                static let tableName = "categories"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let `select` = SQLiteTriggers.TableColumn<Int>("select")
                    static let `where` = SQLiteTriggers.TableColumn<String>("where")
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.`select`, TableColumns.`where`]
            }

            extension Box: SQLiteTriggers.TableDescription {
                static let tableName = "boxes"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<Int>("id", primaryKey: true)
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id]
            }

            extension Key: SQLiteTriggers.TableDescription {
                static let tableName = "keys"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<Int>("id", primaryKey: true)
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id]
            }

            extension Watch: SQLiteTriggers.TableDescription {
                static let tableName = "watches"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<Int>("id", primaryKey: true)
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id]
            }
            """
        }
    }

    /// A GRDB record's own `Columns` stays; the typed columns sit beside it.
    @Test func aGRDBStyleColumnsEnumIsKept() {
        assertMacro(macros) {
            """
            @Table struct Player {
              var id: Int64
              var name: String
              enum Columns {
                static let id = Column("id")
                static let name = Column("name")
              }
            }
            """
        } expansion: {
            """
            struct Player {
              var id: Int64
              var name: String
              enum Columns {
                static let id = Column("id")
                static let name = Column("name")
              }
            }

            extension Player: SQLiteTriggers.TableDescription {
                static let tableName = "players"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<Int64>("id", primaryKey: true)
                    static let name = SQLiteTriggers.TableColumn<String>("name")
                }

                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id, TableColumns.name]
            }
            """
        }
    }

    /// GRDB's databaseTableName, declared in the body, is the one name.
    @Test func aDeclaredDatabaseTableNameIsTheName() {
        assertMacro(macros) {
            """
            @Table struct Player {
              static let databaseTableName = "player"
              var id: Int64
            }
            """
        } expansion: {
            """
            struct Player {
              static let databaseTableName = "player"
              var id: Int64
            }

            extension Player: SQLiteTriggers.TableDescription {
                static let tableName = "player"
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<Int64>("id", primaryKey: true)
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id]
            }
            """
        }
    }

    @Test func aComputedDatabaseTableNameIsReadAtRunTime() {
        assertMacro(macros) {
            """
            @Table struct Player {
              static var databaseTableName: String { prefix + "player" }
              var id: Int64
            }
            """
        } expansion: {
            """
            struct Player {
              static var databaseTableName: String { prefix + "player" }
              var id: Int64
            }

            extension Player: SQLiteTriggers.TableDescription {
                static var tableName: String {
                  databaseTableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<Int64>("id", primaryKey: true)
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id]
            }
            """
        }
    }

    @Test func twoDifferentTableNamesAreRefused() {
        assertMacro(macros) {
            """
            @Table("players") struct Player {
              static let databaseTableName = "player"
              var id: Int64
            }
            """
        } diagnostics: {
            """
            @Table("players") struct Player {
              static let databaseTableName = "player"
                         ┬───────────────────────────
                         ╰─ 🛑 @Table("players") contradicts databaseTableName "player": a record and its triggers must name one table; keep one of them
              var id: Int64
            }
            """
        }
        assertMacro(macros) {
            """
            @Table("players") struct Player {
              static var databaseTableName: String { "pl" + "ayer" }
              var id: Int64
            }
            """
        } diagnostics: {
            """
            @Table("players") struct Player {
              static var databaseTableName: String { "pl" + "ayer" }
                         ┬──────────────────────────────────────────
                         ╰─ 🛑 @Table("players") and a databaseTableName would name the table twice; keep one of them
              var id: Int64
            }
            """
        }
    }

    @Test func classesAreRefusedWithAFixIt() {
        assertMacro(macros) {
            """
            @Table class Reminder {
              var id: UUID
            }
            """
        } diagnostics: {
            """
            @Table class Reminder {
                   ┬────
                   ╰─ 🛑 @Table applies to a struct, not a class
                      ✏️ Make it a struct
              var id: UUID
            }
            """
        } fixes: {
            """
            @Table struct Reminder {
              var id: UUID
            }
            """
        } expansion: {
            """
            struct Reminder {
              var id: UUID
            }

            extension Reminder: SQLiteTriggers.TableDescription {
                static let tableName = "reminders"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id]
            }
            """
        }
    }

    @Test func enumsAreRefused() {
        assertMacro(macros) {
            """
            @Table enum Status {
              case open
            }
            """
        } diagnostics: {
            """
            @Table enum Status {
            ╰─ 🛑 @Table applies to a struct, not an enum
              case open
            }
            """
        }
    }

    @Test func propertiesWithoutTypesAreDiagnosed() {
        assertMacro(macros) {
            """
            @Table struct Reminder {
              let id: UUID
              var title = ""
              var count = 0
              var ratio = 0.5
              var isFlagged = false
              var createdAt = Date()
            }
            """
        } diagnostics: {
            """
            @Table struct Reminder {
              let id: UUID
              var title = ""
                  ┬────
                  ╰─ 🛑 'title' needs a type annotation: the macro reads each column's type from it
                     ✏️ Insert ': String'
              var count = 0
                  ┬────
                  ╰─ 🛑 'count' needs a type annotation: the macro reads each column's type from it
                     ✏️ Insert ': Int'
              var ratio = 0.5
                  ┬────
                  ╰─ 🛑 'ratio' needs a type annotation: the macro reads each column's type from it
                     ✏️ Insert ': Double'
              var isFlagged = false
                  ┬────────
                  ╰─ 🛑 'isFlagged' needs a type annotation: the macro reads each column's type from it
                     ✏️ Insert ': Bool'
              var createdAt = Date()
                  ┬────────
                  ╰─ 🛑 'createdAt' needs a type annotation: the macro reads each column's type from it
            }
            """
        }
    }

    @Test func theTypeFixItInsertsTheAnnotation() {
        assertMacro(macros) {
            """
            @Table struct Reminder {
              let id: UUID
              var title = ""
            }
            """
        } diagnostics: {
            """
            @Table struct Reminder {
              let id: UUID
              var title = ""
                  ┬────
                  ╰─ 🛑 'title' needs a type annotation: the macro reads each column's type from it
                     ✏️ Insert ': String'
            }
            """
        } fixes: {
            """
            @Table struct Reminder {
              let id: UUID
              var title: String = ""
            }
            """
        } expansion: {
            """
            struct Reminder {
              let id: UUID
              var title: String = ""
            }

            extension Reminder: SQLiteTriggers.TableDescription {
                static let tableName = "reminders"
                static var databaseTableName: String {
                  tableName
                }
                enum TableColumns {
                    static let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                    static let title = SQLiteTriggers.TableColumn<String>("title")
                }
                typealias Columns = TableColumns
                static let allColumns: [any SQLiteTriggers.AnyTableColumn] = [TableColumns.id, TableColumns.title]
            }
            """
        }
    }

    @Test func duplicateColumnNamesAreDiagnosed() {
        assertMacro(macros) {
            """
            @Table struct Reminder {
              let id: UUID
              @Column("title") var name: String
              var title: String
            }
            """
        } diagnostics: {
            """
            @Table struct Reminder {
              let id: UUID
              @Column("title") var name: String
              var title: String
                  ┬────────────
                  ╰─ 🛑 column "title" is already used by 'name'
            }
            """
        }
    }

    @Test func namesMustBeLiterals() {
        assertMacro(macros) {
            """
            @Table(tableName) struct Reminder {
              let id: UUID
            }
            """
        } diagnostics: {
            """
            @Table(tableName) struct Reminder {
                   ┬────────
                   ╰─ 🛑 @Table takes its name as a string literal
              let id: UUID
            }
            """
        }
    }
}

@Suite struct CallbackEventMacroTests {
    let macros: [String: any Macro.Type] = ["CallbackEvent": CallbackEventMacro.self, "Ephemeral": EphemeralMacro.self]

    @Test func anEvent() {
        assertMacro(macros) {
            """
            @CallbackEvent struct ReminderCompleted {
              var id: UUID
              var title: String
              var dueDate: Date?
            }
            """
        } expansion: {
            """
            struct ReminderCompleted {
              var id: UUID
              var title: String
              var dueDate: Date?
            }

            extension ReminderCompleted: SQLiteTriggers.CallbackEvent {
                static let callbackName = "reminderCompleted"
                static func callback(id: SQLiteTriggers.TypedSQL<UUID>, title: SQLiteTriggers.TypedSQL<String>, dueDate: SQLiteTriggers.TypedSQL<Date?>) -> SQLiteTriggers.TriggerStatement {
                    .callback(callbackName, id, title, dueDate)
                }
                static func decode(from arguments: SQLiteTriggers.CallbackArguments) throws(SQLiteTriggers.CallbackDecodingError) -> Self {
                    let (id, title, dueDate) = try arguments.decode((UUID).self, (String).self, (Date?).self)
                    return Self(id: id, title: title, dueDate: dueDate)
                }
            }
            """
        }
    }

    @Test func aNamedEventWithoutPayload() {
        assertMacro(macros) {
            """
            @CallbackEvent("ping") public struct Ping {}
            """
        } expansion: {
            """
            public struct Ping {}

            extension Ping: SQLiteTriggers.CallbackEvent {
                public static let callbackName = "ping"
                public static func callback() -> SQLiteTriggers.TriggerStatement {
                    .callback(callbackName)
                }
                public static func decode(from arguments: SQLiteTriggers.CallbackArguments) throws(SQLiteTriggers.CallbackDecodingError) -> Self {
                    let _: () = try arguments.decode()
                    return Self()
                }
            }
            """
        }
    }

    @Test func classesAreRefused() {
        assertMacro(macros) {
            """
            @CallbackEvent class Completed {
              var id: UUID
            }
            """
        } diagnostics: {
            """
            @CallbackEvent class Completed {
                           ┬────
                           ╰─ 🛑 @CallbackEvent applies to a struct, not a class
                              ✏️ Make it a struct
              var id: UUID
            }
            """
        } fixes: {
            """
            @CallbackEvent struct Completed {
              var id: UUID
            }
            """
        } expansion: {
            """
            struct Completed {
              var id: UUID
            }

            extension Completed: SQLiteTriggers.CallbackEvent {
                static let callbackName = "completed"
                static func callback(id: SQLiteTriggers.TypedSQL<UUID>) -> SQLiteTriggers.TriggerStatement {
                    .callback(callbackName, id)
                }
                static func decode(from arguments: SQLiteTriggers.CallbackArguments) throws(SQLiteTriggers.CallbackDecodingError) -> Self {
                    let (id) = try arguments.decode((UUID).self)
                    return Self(id: id)
                }
            }
            """
        }
    }
}
