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
                struct Columns: Sendable {
                    let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                    let title = SQLiteTriggers.TableColumn<String>("title")
                    let updatedAt = SQLiteTriggers.TableColumn<Date?>("updatedAt")
                    let priority = SQLiteTriggers.TableColumn<Optional<Int>>("priority")
                }
                static let columns = Columns()
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
                struct Columns: Sendable {
                    let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                    let title = SQLiteTriggers.TableColumn<String>("title")
                }
                static let columns = Columns()
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
                struct Columns: Sendable {
                    let code = SQLiteTriggers.TableColumn<String>("code", primaryKey: true)
                    let title = SQLiteTriggers.TableColumn<String>("display_title")
                    let id = SQLiteTriggers.TableColumn<Int>("id")
                }
                static let columns = Columns()
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
                struct Columns: Sendable {
                    let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                    let status = SQLiteTriggers.TableColumn<Int>("status")
                }
                static let columns = Columns()
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
                public struct Columns: Sendable {
                    public let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                }
                public static let columns = Columns()
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
                struct Columns: Sendable {
                    let `select` = SQLiteTriggers.TableColumn<Int>("select")
                    let `where` = SQLiteTriggers.TableColumn<String>("where")
                }
                static let columns = Columns()
            }

            extension Box: SQLiteTriggers.TableDescription {
                static let tableName = "boxes"
                struct Columns: Sendable {
                    let id = SQLiteTriggers.TableColumn<Int>("id", primaryKey: true)
                }
                static let columns = Columns()
            }

            extension Key: SQLiteTriggers.TableDescription {
                static let tableName = "keys"
                struct Columns: Sendable {
                    let id = SQLiteTriggers.TableColumn<Int>("id", primaryKey: true)
                }
                static let columns = Columns()
            }

            extension Watch: SQLiteTriggers.TableDescription {
                static let tableName = "watches"
                struct Columns: Sendable {
                    let id = SQLiteTriggers.TableColumn<Int>("id", primaryKey: true)
                }
                static let columns = Columns()
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
                struct Columns: Sendable {
                    let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                }
                static let columns = Columns()
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
                struct Columns: Sendable {
                    let id = SQLiteTriggers.TableColumn<UUID>("id", primaryKey: true)
                    let title = SQLiteTriggers.TableColumn<String>("title")
                }
                static let columns = Columns()
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
