import MacroTesting
import SwiftSyntaxMacros
import SQLiteTriggersMacroPlugin
import Testing

@Suite struct CallbackEventMacroTests {
    let macros: [String: any Macro.Type] = ["CallbackEvent": CallbackEventMacro.self, "TriggerIgnored": TriggerIgnoredMacro.self]

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
