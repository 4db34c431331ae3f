import MacroTesting
import SwiftSyntaxMacros
import SQLiteTriggersMacroPlugin
import Testing

@Suite struct TriggerTableMacroTests {
    let macros: [String: any Macro.Type] = [
        "TriggerTable": TriggerTableMacro.self, "TriggerColumn": TriggerColumnMacro.self, "TriggerIgnored": TriggerIgnoredMacro.self,
    ]

    @Test func aStructWithAnIDKey() {
        assertMacro(macros) {
            """
            @TriggerTable struct Reminder {
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
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<UUID>("id", primaryKey: true)
                    static let title = SQLiteTriggers.ColumnDescription<String>("title")
                    static let updatedAt = SQLiteTriggers.ColumnDescription<Date?>("updatedAt")
                    static let priority = SQLiteTriggers.ColumnDescription<Optional<Int>>("priority")
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title, TriggerColumns.updatedAt, TriggerColumns.priority]
            }
            """
        }
    }

    @Test func anExplicitTableName() {
        assertMacro(macros) {
            """
            @TriggerTable("remindersLists")
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
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<UUID>("id", primaryKey: true)
                    static let title = SQLiteTriggers.ColumnDescription<String>("title")
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title]
            }
            """
        }
    }

    @Test func renamedColumnsAndAnExplicitKey() {
        assertMacro(macros) {
            """
            @TriggerTable struct Tag {
              @TriggerColumn(primaryKey: true) var code: String
              @TriggerColumn("display_title") var title: String
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
                enum TriggerColumns {
                    static let code = SQLiteTriggers.ColumnDescription<String>("code", primaryKey: true)
                    static let title = SQLiteTriggers.ColumnDescription<String>("display_title")
                    static let id = SQLiteTriggers.ColumnDescription<Int>("id")
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.code, TriggerColumns.title, TriggerColumns.id]
            }
            """
        }
    }

    @Test func computedStaticLazyAndEphemeralPropertiesAreSkipped() {
        assertMacro(macros) {
            """
            @TriggerTable struct Reminder {
              let id: UUID
              var status: Int { didSet { print(status) } }
              var isCompleted: Bool { status == 1 }
              var flagged: Bool { get { true } set { } }
              static var defaultTitle = "New"
              lazy var cache: [Int] = []
              @TriggerIgnored var isSelected: Bool = false
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
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<UUID>("id", primaryKey: true)
                    static let status = SQLiteTriggers.ColumnDescription<Int>("status")
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.status]
            }
            """
        }
    }

    @Test func publicStructsGetPublicMembers() {
        assertMacro(macros) {
            """
            @TriggerTable public struct Item {
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
                public enum TriggerColumns {
                    public static let id = SQLiteTriggers.ColumnDescription<UUID>("id", primaryKey: true)
                }
                public typealias Columns = TriggerColumns
                public static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id]
            }
            """
        }
    }

    @Test func pluralsAndQuotedNames() {
        assertMacro(macros) {
            """
            @TriggerTable struct Category {
              var `select`: Int, `where`: String
            }
            @TriggerTable struct Box { var id: Int }
            @TriggerTable struct Key { var id: Int }
            @TriggerTable struct Watch { var id: Int }
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
                enum TriggerColumns {
                    static let `select` = SQLiteTriggers.ColumnDescription<Int>("select")
                    static let `where` = SQLiteTriggers.ColumnDescription<String>("where")
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.`select`, TriggerColumns.`where`]
            }

            extension Box: SQLiteTriggers.TableDescription {
                static let tableName = "boxes"
                static var databaseTableName: String {
                  tableName
                }
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<Int>("id", primaryKey: true)
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id]
            }

            extension Key: SQLiteTriggers.TableDescription {
                static let tableName = "keys"
                static var databaseTableName: String {
                  tableName
                }
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<Int>("id", primaryKey: true)
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id]
            }

            extension Watch: SQLiteTriggers.TableDescription {
                static let tableName = "watches"
                static var databaseTableName: String {
                  tableName
                }
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<Int>("id", primaryKey: true)
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id]
            }
            """
        }
    }

    /// A GRDB record's own `Columns` stays; the typed columns sit beside it.
    @Test func aGRDBStyleColumnsEnumIsKept() {
        assertMacro(macros) {
            """
            @TriggerTable struct Player {
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
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<Int64>("id", primaryKey: true)
                    static let name = SQLiteTriggers.ColumnDescription<String>("name")
                }

                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.name]
            }
            """
        }
    }

    /// GRDB's databaseTableName, declared in the body, is the one name.
    @Test func aDeclaredDatabaseTableNameIsTheName() {
        assertMacro(macros) {
            """
            @TriggerTable struct Player {
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
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<Int64>("id", primaryKey: true)
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id]
            }
            """
        }
    }

    @Test func aComputedDatabaseTableNameIsReadAtRunTime() {
        assertMacro(macros) {
            """
            @TriggerTable struct Player {
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
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<Int64>("id", primaryKey: true)
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id]
            }
            """
        }
    }

    @Test func twoDifferentTableNamesAreRefused() {
        assertMacro(macros) {
            """
            @TriggerTable("players") struct Player {
              static let databaseTableName = "player"
              var id: Int64
            }
            """
        } diagnostics: {
            """
            @TriggerTable("players") struct Player {
              static let databaseTableName = "player"
                         ┬───────────────────────────
                         ╰─ 🛑 @TriggerTable("players") contradicts databaseTableName "player": a record and its triggers must name one table; keep one of them
              var id: Int64
            }
            """
        }
        assertMacro(macros) {
            """
            @TriggerTable("players") struct Player {
              static var databaseTableName: String { "pl" + "ayer" }
              var id: Int64
            }
            """
        } diagnostics: {
            """
            @TriggerTable("players") struct Player {
              static var databaseTableName: String { "pl" + "ayer" }
                         ┬──────────────────────────────────────────
                         ╰─ 🛑 @TriggerTable("players") and a databaseTableName would name the table twice; keep one of them
              var id: Int64
            }
            """
        }
    }

    @Test func classesAreRefusedWithAFixIt() {
        assertMacro(macros) {
            """
            @TriggerTable class Reminder {
              var id: UUID
            }
            """
        } diagnostics: {
            """
            @TriggerTable class Reminder {
                          ┬────
                          ╰─ 🛑 @TriggerTable applies to a struct, not a class
                             ✏️ Make it a struct
              var id: UUID
            }
            """
        } fixes: {
            """
            @TriggerTable struct Reminder {
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
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<UUID>("id", primaryKey: true)
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id]
            }
            """
        }
    }

    @Test func enumsAreRefused() {
        assertMacro(macros) {
            """
            @TriggerTable enum Status {
              case open
            }
            """
        } diagnostics: {
            """
            @TriggerTable enum Status {
            ╰─ 🛑 @TriggerTable applies to a struct, not an enum
              case open
            }
            """
        }
    }

    @Test func propertiesWithoutTypesAreDiagnosed() {
        assertMacro(macros) {
            """
            @TriggerTable struct Reminder {
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
            @TriggerTable struct Reminder {
              let id: UUID
              var title = ""
              var count = 0
              var ratio = 0.5
              var isFlagged = false
              var createdAt = Date()
                  ┬────────
                  ╰─ 🛑 'createdAt' needs a type annotation: the macro reads each column's type from it
            }
            """
        }
    }

    /// A literal says the type, as Swift infers it (StructuredQueries
    /// tables are written so).
    @Test func literalInitializersSayTheType() {
        assertMacro(macros) {
            """
            @TriggerTable struct Reminder {
              let id: UUID
              var title = ""
              var count = 0
              var ratio = 0.5
              var isFlagged = false
            }
            """
        } expansion: {
            """
            struct Reminder {
              let id: UUID
              var title = ""
              var count = 0
              var ratio = 0.5
              var isFlagged = false
            }

            extension Reminder: SQLiteTriggers.TableDescription {
                static let tableName = "reminders"
                static var databaseTableName: String {
                  tableName
                }
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<UUID>("id", primaryKey: true)
                    static let title = SQLiteTriggers.ColumnDescription<String>("title")
                    static let count = SQLiteTriggers.ColumnDescription<Int>("count")
                    static let ratio = SQLiteTriggers.ColumnDescription<Double>("ratio")
                    static let isFlagged = SQLiteTriggers.ColumnDescription<Bool>("isFlagged")
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title, TriggerColumns.count, TriggerColumns.ratio, TriggerColumns.isFlagged]
            }
            """
        }
    }

    @Test func duplicateColumnNamesAreDiagnosed() {
        assertMacro(macros) {
            """
            @TriggerTable struct Reminder {
              let id: UUID
              @TriggerColumn("title") var name: String
              var title: String
            }
            """
        } diagnostics: {
            """
            @TriggerTable struct Reminder {
              let id: UUID
              @TriggerColumn("title") var name: String
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
            @TriggerTable(tableName) struct Reminder {
              let id: UUID
            }
            """
        } diagnostics: {
            """
            @TriggerTable(tableName) struct Reminder {
                          ┬────────
                          ╰─ 🛑 @TriggerTable takes its name as a string literal
              let id: UUID
            }
            """
        }
    }

    // MARK: - Beside StructuredQueries

    /// Our attributes however they are written: qualified by the module, or
    /// with a module selector; another module's `TriggerColumn` is not ours.
    @Test func qualifiedAttributesAreRecognised() {
        assertMacro(macros) {
            """
            @TriggerTable struct Reminder {
              let id: UUID
              @SQLiteTriggersMacros.TriggerColumn("done") var isCompleted: Bool
              @SQLiteTriggersMacros::TriggerColumn("list_id") var listID: UUID
              @SQLiteTriggersMacros.TriggerIgnored var isSelected: Bool
              @OtherModule.TriggerColumn("other") var notes: String
            }
            """
        } expansion: {
            """
            struct Reminder {
              let id: UUID
              @SQLiteTriggersMacros.TriggerColumn("done") var isCompleted: Bool
              var listID: UUID
              @SQLiteTriggersMacros.TriggerIgnored var isSelected: Bool
              @OtherModule.TriggerColumn("other") var notes: String
            }

            extension Reminder: SQLiteTriggers.TableDescription {
                static let tableName = "reminders"
                static var databaseTableName: String {
                  tableName
                }
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<UUID>("id", primaryKey: true)
                    static let isCompleted = SQLiteTriggers.ColumnDescription<Bool>("done")
                    static let listID = SQLiteTriggers.ColumnDescription<UUID>("list_id")
                    static let notes = SQLiteTriggers.ColumnDescription<String>("notes")
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.isCompleted, TriggerColumns.listID, TriggerColumns.notes]
            }
            """
        }
    }

    /// StructuredQueries' `@Column` and `@Ephemeral` mean what ours mean, so
    /// a rule's `UPDATE OF "done"` names the real column.
    @Test func structuredQueriesColumnAttributesAreRead() {
        assertMacro(macros) {
            """
            @TriggerTable struct Reminder {
              @Column(primaryKey: true) let code: String
              @Column("done") var isCompleted: Bool
              @StructuredQueries.Column("list_id", as: UUID.BytesRepresentation.self) var listID: UUID
              @Ephemeral var isSelected: Bool
              @StructuredQueriesCore.Ephemeral var isExpanded: Bool
            }
            """
        } expansion: {
            """
            struct Reminder {
              @Column(primaryKey: true) let code: String
              @Column("done") var isCompleted: Bool
              @StructuredQueries.Column("list_id", as: UUID.BytesRepresentation.self) var listID: UUID
              @Ephemeral var isSelected: Bool
              @StructuredQueriesCore.Ephemeral var isExpanded: Bool
            }

            extension Reminder: SQLiteTriggers.TableDescription {
                static let tableName = "reminders"
                static var databaseTableName: String {
                  tableName
                }
                enum TriggerColumns {
                    static let code = SQLiteTriggers.ColumnDescription<String>("code", primaryKey: true)
                    static let isCompleted = SQLiteTriggers.ColumnDescription<Bool>("done")
                    static let listID = SQLiteTriggers.ColumnDescription<UUID>("list_id")
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.code, TriggerColumns.isCompleted, TriggerColumns.listID]
            }
            """
        }
    }

    /// One struct, both macros: StructuredQueries' `@Table` declares
    /// `tableName`, ours the rest, and nothing is declared twice.
    @Test func bothMacrosOnOneStruct() {
        assertMacro(macros) {
            """
            @Table("remindersLists") @TriggerTable struct RemindersList {
              let id: UUID
              var title: String
            }
            """
        } expansion: {
            """
            @Table("remindersLists") struct RemindersList {
              let id: UUID
              var title: String
            }

            extension RemindersList: SQLiteTriggers.TableDescription {
                static var databaseTableName: String {
                  tableName
                }
                enum TriggerColumns {
                    static let id = SQLiteTriggers.ColumnDescription<UUID>("id", primaryKey: true)
                    static let title = SQLiteTriggers.ColumnDescription<String>("title")
                }
                typealias Columns = TriggerColumns
                static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title]
            }
            """
        }
    }

    @Test func bothMacrosMustNotNameTheTableTwice() {
        assertMacro(macros) {
            """
            @Table @TriggerTable("lists") struct RemindersList {
              let id: UUID
            }
            """
        } diagnostics: {
            """
            @Table @TriggerTable("lists") struct RemindersList {
                   ┬─────────────────────
                   ╰─ 🛑 StructuredQueries' @Table names this table for both macros: give the name to @Table, not to @TriggerTable
              let id: UUID
            }
            """
        }
    }

    @Test func contradictoryColumnNamesAreRefused() {
        assertMacro(macros) {
            """
            @TriggerTable struct Reminder {
              let id: UUID
              @Column("done") @TriggerColumn("completed") var isCompleted: Bool
            }
            """
        } diagnostics: {
            """
            @TriggerTable struct Reminder {
              let id: UUID
              @Column("done") @TriggerColumn("completed") var isCompleted: Bool
                              ┬──────────────────────────
                              ╰─ 🛑 @TriggerColumn("completed") contradicts @Column("done"): a column has one name; keep one of them
            }
            """
        }
    }

    @Test func columnGroupsAreRefused() {
        assertMacro(macros) {
            """
            @TriggerTable struct Reminder {
              let id: UUID
              @Columns var timestamps: Timestamps
            }
            """
        } diagnostics: {
            """
            @TriggerTable struct Reminder {
              let id: UUID
              @Columns var timestamps: Timestamps
              ┬───────
              ╰─ 🛑 @TriggerTable describes single columns, not a column group (@Columns): declare the group's columns in the struct, or describe the table by hand (TableDescription)
            }
            """
        }
    }
}
