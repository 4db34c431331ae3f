import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Table` and `@Table("name")`: the struct's `TableDescription`.
///
/// The table name defaults to the struct's name in lowerCamel case, made
/// plural: `Reminder` -> `reminders`, `RemindersList` -> `remindersLists`,
/// `Category` -> `categories`, `Box` -> `boxes`. Each stored property is a
/// column named like it, unless `@Column("name")` says otherwise; the primary
/// key is the property marked `@Column(primaryKey: true)`, or else `id`.
/// Computed, static and lazy properties, and those marked `@Ephemeral`, are
/// not columns.
public struct TableMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let (typeName, tableName) = namedStruct(node, declaration, type, macro: "Table",
                                                      defaultName: defaultTableName, in: context)
        else { return [] }
        let properties = storedProperties(of: declaration, in: context)
        var firstUse: [String: String] = [:]
        for property in properties {
            if let first = firstUse[property.columnName] {
                context.diagnose(Diagnostic(node: property.node, message: MacroDiagnostic.duplicateColumn(column: property.columnName, firstProperty: first)))
            } else {
                firstUse[property.columnName] = property.name
            }
        }
        let hasExplicitKey = properties.contains(where: \.isPrimaryKey)
        let access = accessModifier(of: declaration)
        let columns = properties.map { property in
            let isKey = property.isPrimaryKey || (!hasExplicitKey && property.columnName == "id" && property.name == "id")
            return "\(access)let \(property.name) = SQLiteTriggers.TableColumn<\(property.type)>(\(literal(property.columnName))\(isKey ? ", primaryKey: true" : ""))"
        }
        let source: DeclSyntax = """
            extension \(raw: typeName): SQLiteTriggers.TableDescription {
                \(raw: access)static let tableName = \(raw: literal(tableName))
                \(raw: access)struct Columns: Sendable {
                    \(raw: columns.joined(separator: "\n"))
                }
                \(raw: access)static let columns = Columns()
            }
            """
        return [source.cast(ExtensionDeclSyntax.self)]
    }

    /// lowerCamel, then a plural by the usual English endings.
    static func defaultTableName(_ typeName: String) -> String {
        let base = lowerCamel(typeName)
        let lower = base.lowercased()
        if lower.hasSuffix("y"), let beforeY = lower.dropLast().last, !"aeiou".contains(beforeY) {
            return base.dropLast() + "ies"
        }
        if ["s", "x", "z", "ch", "sh"].contains(where: lower.hasSuffix) { return base + "es" }
        return base + "s"
    }
}

/// A Swift string literal for `text`.
func literal(_ text: String) -> String {
    StringLiteralExprSyntax(content: text).trimmedDescription
}

/// What both macros start with: the struct's (possibly qualified) type
/// name, and the SQL name given as the attribute's argument or derived from
/// the struct's own name. Nil, after a diagnostic, when it is no struct.
func namedStruct(
    _ node: AttributeSyntax, _ declaration: some DeclGroupSyntax, _ type: some TypeSyntaxProtocol,
    macro: String, defaultName: (String) -> String, in context: some MacroExpansionContext
) -> (typeName: String, sqlName: String)? {
    guard diagnoseIfNotAStruct(declaration, macro: macro, in: context),
          let structName = declaration.as(StructDeclSyntax.self)?.name.text else { return nil }
    var sqlName = defaultName(structName)
    if let argument = node.arguments?.as(LabeledExprListSyntax.self)?.first,
       let name = stringLiteral(argument.expression, macro: macro, in: context) {
        sqlName = name
    }
    return (type.trimmedDescription, sqlName)
}

/// Reports `@macro` on something other than a struct (with a fix-it for a
/// class); true when it is a struct.
func diagnoseIfNotAStruct(_ declaration: some DeclGroupSyntax, macro: String, in context: some MacroExpansionContext) -> Bool {
    if declaration.is(StructDeclSyntax.self) { return true }
    if let classDecl = declaration.as(ClassDeclSyntax.self) {
        context.diagnose(Diagnostic(
            node: classDecl.classKeyword,
            message: MacroDiagnostic.notAStruct(macro: macro, kind: "a class"),
            fixIts: [FixIt(
                message: MacroFixIt(message: "Make it a struct"),
                changes: [.replace(oldNode: Syntax(classDecl.classKeyword),
                                   newNode: Syntax(TokenSyntax.keyword(.struct, leadingTrivia: classDecl.classKeyword.leadingTrivia,
                                                                       trailingTrivia: classDecl.classKeyword.trailingTrivia)))])]))
    } else {
        let kind = declaration.is(EnumDeclSyntax.self) ? "an enum"
            : declaration.is(ActorDeclSyntax.self) ? "an actor"
            : declaration.is(ProtocolDeclSyntax.self) ? "a protocol" : "an extension"
        context.diagnose(Diagnostic(node: declaration, message: MacroDiagnostic.notAStruct(macro: macro, kind: kind)))
    }
    return false
}

/// `@Column(...)`: read by `@Table`; expands to nothing.
public struct ColumnMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] { [] }
}

/// `@Ephemeral`: keeps a stored property out of the table; expands to nothing.
public struct EphemeralMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] { [] }
}
