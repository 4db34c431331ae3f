import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@CallbackEvent` and `@CallbackEvent("name")`: one declaration for a
/// callback's name and payload. It generates
///
/// - `callbackName`, by default the struct's name in lowerCamel case;
/// - `callback(field: TypedSQL<FieldType>, ...)`, the typed
///   `SELECT swift_callback(...)` for trigger bodies, its arguments in field
///   order, so a mismatched expression does not compile;
/// - `decode(from:)`, reading the arguments back in the same order.
public struct CallbackEventMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let (typeName, callbackName) = namedStruct(node, declaration, type, macro: "CallbackEvent",
                                                         defaultName: lowerCamel, in: context)
        else { return [] }
        let fields = storedProperties(of: declaration, in: context)
        let access = accessModifier(of: declaration)
        let parameters = fields.map { "\($0.name): SQLiteTriggers.TypedSQL<\($0.type)>" }.joined(separator: ", ")
        let arguments = (["callbackName"] + fields.map(\.name)).joined(separator: ", ")
        let decoding: String
        if fields.isEmpty {
            decoding = "let _: () = try arguments.decode()\nreturn Self()"
        } else {
            let names = fields.map(\.name).joined(separator: ", ")
            let types = fields.map { "(\($0.type)).self" }.joined(separator: ", ")
            let labels = fields.map { "\($0.name): \($0.name)" }.joined(separator: ", ")
            decoding = "let (\(names)) = try arguments.decode(\(types))\nreturn Self(\(labels))"
        }
        let source: DeclSyntax = """
            extension \(raw: typeName): SQLiteTriggers.CallbackEvent {
                \(raw: access)static let callbackName = \(raw: literal(callbackName))
                \(raw: access)static func callback(\(raw: parameters)) -> SQLiteTriggers.TriggerStatement {
                    .callback(\(raw: arguments))
                }
                \(raw: access)static func decode(from arguments: SQLiteTriggers.CallbackArguments) throws(SQLiteTriggers.CallbackDecodingError) -> Self {
                    \(raw: decoding)
                }
            }
            """
        return [source.cast(ExtensionDeclSyntax.self)]
    }
}
