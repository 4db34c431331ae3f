import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct SQLiteTriggersMacroPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [
        TriggerTableMacro.self,
        TriggerColumnMacro.self,
        TriggerIgnoredMacro.self,
        CallbackEventMacro.self,
    ]
}
