import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct SQLiteTriggersMacroPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [
        TableMacro.self,
        ColumnMacro.self,
        EphemeralMacro.self,
        CallbackEventMacro.self,
    ]
}
