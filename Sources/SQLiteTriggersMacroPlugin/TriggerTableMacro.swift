import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@TriggerTable` and `@TriggerTable("name")`: the struct's `TableDescription`.
///
/// The table name defaults to the struct's name in lowerCamel case, made
/// plural: `Reminder` -> `reminders`, `RemindersList` -> `remindersLists`,
/// `Category` -> `categories`, `Box` -> `boxes`. A `databaseTableName` the
/// struct declares (GRDB's) is the name instead, and otherwise the macro
/// declares `databaseTableName` from the table name: one name for both.
/// Each stored property is a column named like it, unless
/// `@TriggerColumn("name")` says otherwise; the primary key is the property marked
/// `@TriggerColumn(primaryKey: true)`, or else `id`. Computed, static and lazy
/// properties, and those marked `@TriggerIgnored`, are not columns.
/// StructuredQueries' `@Column` and `@Ephemeral` are read as ours are, and
/// beside its `@Table` the struct takes that macro's `tableName`
/// (`RecognizedAttribute` says how attributes are recognised).
///
/// The columns are static members of `TriggerColumns`, which is also the
/// record's GRDB `Columns` unless the struct declares its own.
public struct TriggerTableMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let (typeName, derivedName) = namedStruct(node, declaration, type, macro: "TriggerTable",
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
            return "\(access)static let \(property.name) = SQLiteTriggers.ColumnDescription<\(property.type)>(\(literal(property.columnName))\(isKey ? ", primaryKey: true" : ""))"
        }
        let allColumns = properties.map { "TriggerColumns.\($0.name)" }.joined(separator: ", ")

        // The name: GRDB's databaseTableName when the struct declares one, so
        // that the record and its triggers cannot name different tables.
        let explicitName = node.arguments?.as(LabeledExprListSyntax.self)?.first?.expression
            .as(StringLiteralExprSyntax.self)?.representedLiteralValue
        let nameDeclarations: String
        if attribute(.table, in: declaration.attributes) != nil {
            // StructuredQueries' @Table on the same struct declares tableName
            // (both protocols want the same String): one name, theirs.
            if explicitName != nil {
                context.diagnose(Diagnostic(node: node, message: MacroDiagnostic.nameGivenBesideStructuredQueriesTable))
            }
            nameDeclarations = declaredTableName(in: declaration) == nil
                ? "\(access)static var databaseTableName: String { tableName }" : ""
        } else {
            switch declaredTableName(in: declaration) {
            case nil:
                nameDeclarations = """
                    \(access)static let tableName = \(literal(derivedName))
                    \(access)static var databaseTableName: String { tableName }
                    """
            case .literal(let declared, let site):
                if let explicitName, explicitName != declared {
                    context.diagnose(Diagnostic(node: site, message: MacroDiagnostic.conflictingTableName(argument: explicitName, declared: declared)))
                }
                nameDeclarations = "\(access)static let tableName = \(literal(declared))"
            case .computed(let site):
                if let explicitName {
                    context.diagnose(Diagnostic(node: site, message: MacroDiagnostic.conflictingTableName(argument: explicitName, declared: nil)))
                }
                nameDeclarations = "\(access)static var tableName: String { databaseTableName }"
            }
        }
        let columnsAlias = declaresMember(named: "Columns", in: declaration)
            ? "" : "\(access)typealias Columns = TriggerColumns"
        let source: DeclSyntax = """
            extension \(raw: typeName): SQLiteTriggers.TableDescription {
                \(raw: nameDeclarations)
                \(raw: access)enum TriggerColumns {
                    \(raw: columns.joined(separator: "\n"))
                }
                \(raw: columnsAlias)
                \(raw: access)static let allColumns: [any SQLiteTriggers.AnyColumnDescription] = [\(raw: allColumns)]
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

/// GRDB's `databaseTableName`, when the struct declares it in its body.
enum DeclaredTableName {
    /// `static let databaseTableName = "name"` (or a getter returning only a literal).
    case literal(String, site: Syntax)
    /// Anything else: the macro reads it at run time.
    case computed(site: Syntax)
}

func declaredTableName(in declaration: some DeclGroupSyntax) -> DeclaredTableName? {
    for member in declaration.memberBlock.members {
        guard let variable = member.decl.as(VariableDeclSyntax.self),
              variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) }) else { continue }
        for binding in variable.bindings
        where binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text == "databaseTableName" {
            var expression = binding.initializer?.value
            if case .getter(let body)? = binding.accessorBlock?.accessors, body.count == 1 {
                expression = body.first?.item.as(ExprSyntax.self)
                    ?? body.first?.item.as(ReturnStmtSyntax.self)?.expression
            }
            if let text = expression?.as(StringLiteralExprSyntax.self)?.representedLiteralValue {
                return .literal(text, site: Syntax(binding))
            }
            return .computed(site: Syntax(binding))
        }
    }
    return nil
}

/// Whether the struct declares a type (or typealias) of this name.
func declaresMember(named name: String, in declaration: some DeclGroupSyntax) -> Bool {
    declaration.memberBlock.members.contains { member in
        let declared: TokenSyntax?
        switch member.decl.as(DeclSyntaxEnum.self) {
        case .enumDecl(let decl): declared = decl.name
        case .structDecl(let decl): declared = decl.name
        case .classDecl(let decl): declared = decl.name
        case .typeAliasDecl(let decl): declared = decl.name
        default: declared = nil
        }
        return declared?.text == name
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

/// `@TriggerColumn(...)`: read by `@TriggerTable`; expands to nothing.
public struct TriggerColumnMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] { [] }
}

/// `@TriggerIgnored`: keeps a stored property out of the table; expands to nothing.
public struct TriggerIgnoredMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] { [] }
}
