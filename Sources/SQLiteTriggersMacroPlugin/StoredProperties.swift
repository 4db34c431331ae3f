import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// A stored property of the struct that becomes a column or a field.
struct StoredProperty {
    let name: String
    let type: TypeSyntax
    let columnName: String
    let isPrimaryKey: Bool
    let node: Syntax
}

/// The struct's stored instance properties, minus computed ones, lazy ones
/// and those marked `@TriggerIgnored` (or StructuredQueries' `@Ephemeral`).
/// A column group (StructuredQueries' `@Columns`) is refused. A property's
/// type is its annotation or its literal initializer's; others get a
/// diagnostic and are left out.
func storedProperties(of declaration: some DeclGroupSyntax, in context: some MacroExpansionContext) -> [StoredProperty] {
    var properties: [StoredProperty] = []
    for member in declaration.memberBlock.members {
        guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
        let modifiers = variable.modifiers.map(\.name.tokenKind)
        if modifiers.contains(.keyword(.static)) || modifiers.contains(.keyword(.class))
            || modifiers.contains(.keyword(.lazy)) { continue }
        if attribute(.triggerIgnored, in: variable.attributes) != nil
            || attribute(.ephemeral, in: variable.attributes) != nil { continue }
        if let group = attribute(.columnGroup, in: variable.attributes) {
            context.diagnose(Diagnostic(node: group, message: MacroDiagnostic.columnGroup))
            continue
        }
        let ours = attribute(.triggerColumn, in: variable.attributes)
        let theirs = attribute(.column, in: variable.attributes)
        for binding in variable.bindings {
            guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
            if isComputed(binding) { continue }
            let name = identifier.identifier.trimmedDescription      // `select` keeps its backticks
            let unquotedName = name.filter { $0 != "`" }
            // `var title = ""` (as StructuredQueries' @Table allows): a
            // literal says the type as Swift infers it; anything else must be
            // annotated.
            let literalType = inferredType(of: binding.initializer).map { TypeSyntax(IdentifierTypeSyntax(name: .identifier($0))) }
            guard let type = binding.typeAnnotation?.type.trimmed ?? literalType else {
                diagnoseMissingType(binding, name: unquotedName, in: context)
                continue
            }
            let (columnName, isPrimaryKey) = columnArguments(ours: ours, theirs: theirs, in: context)
            properties.append(StoredProperty(
                name: name, type: type, columnName: columnName ?? unquotedName,
                isPrimaryKey: isPrimaryKey, node: Syntax(binding)))
        }
    }
    return properties
}

/// A binding with a getter (not only observers) stores nothing.
private func isComputed(_ binding: PatternBindingSyntax) -> Bool {
    guard let accessorBlock = binding.accessorBlock else { return false }
    switch accessorBlock.accessors {
    case .getter:
        return true
    case .accessors(let accessors):
        return accessors.contains { accessor in
            let kind = accessor.accessorSpecifier.tokenKind
            return kind == .keyword(.get) || kind == .keyword(.set) || kind == .keyword(._read) || kind == .keyword(._modify)
        }
    }
}

/// The column's name and key from `@TriggerColumn("name", primaryKey: true)`
/// and StructuredQueries' `@Column("name", primaryKey: true)` (whose other
/// arguments, such as `as:`, say nothing to triggers). When both name the
/// column, they must agree.
private func columnArguments(ours: AttributeSyntax?, theirs: AttributeSyntax?,
                             in context: some MacroExpansionContext) -> (String?, Bool) {
    let (ourName, ourKey) = columnArguments(ours, macro: "TriggerColumn", in: context)
    let (theirName, theirKey) = columnArguments(theirs, macro: "Column", in: context)
    if let ourName, let theirName, ourName != theirName, let ours {
        context.diagnose(Diagnostic(node: ours, message: MacroDiagnostic.conflictingColumnName(ours: ourName, theirs: theirName)))
    }
    return (ourName ?? theirName, ourKey || theirKey)
}

private func columnArguments(_ attribute: AttributeSyntax?, macro: String,
                             in context: some MacroExpansionContext) -> (String?, Bool) {
    guard let arguments = attribute?.arguments?.as(LabeledExprListSyntax.self) else { return (nil, false) }
    var name: String?
    var isPrimaryKey = false
    for argument in arguments {
        if argument.label == nil {
            name = stringLiteral(argument.expression, macro: macro, in: context)
        } else if argument.label?.text == "primaryKey" {
            isPrimaryKey = argument.expression.as(BooleanLiteralExprSyntax.self)?.literal.tokenKind == .keyword(.true)
        }
    }
    return (name, isPrimaryKey)
}

/// The text of a plain string literal; anything else is diagnosed.
func stringLiteral(_ expression: ExprSyntax, macro: String, in context: some MacroExpansionContext) -> String? {
    if let literal = expression.as(StringLiteralExprSyntax.self),
       literal.segments.count == 1,
       let segment = literal.segments.first?.as(StringSegmentSyntax.self) {
        return segment.content.text
    }
    context.diagnose(Diagnostic(node: expression, message: MacroDiagnostic.nameNotALiteral(macro: macro)))
    return nil
}

/// The type Swift infers for a literal initializer.
private func inferredType(of initializer: InitializerClauseSyntax?) -> String? {
    switch initializer?.value.kind {
    case .stringLiteralExpr: "String"
    case .integerLiteralExpr: "Int"
    case .floatLiteralExpr: "Double"
    case .booleanLiteralExpr: "Bool"
    default: nil
    }
}

private func diagnoseMissingType(_ binding: PatternBindingSyntax, name: String, in context: some MacroExpansionContext) {
    context.diagnose(Diagnostic(node: binding.pattern, message: MacroDiagnostic.missingType(property: name)))
}

/// `public` or `package` when the struct is, so the generated members are
/// as visible as the type.
func accessModifier(of declaration: some DeclGroupSyntax) -> String {
    for modifier in declaration.modifiers {
        switch modifier.name.tokenKind {
        case .keyword(.public), .keyword(.open): return "public "
        case .keyword(.package): return "package "
        default: continue
        }
    }
    return ""
}

/// `ReminderTag` -> `reminderTag`.
func lowerCamel(_ name: String) -> String {
    guard let first = name.first else { return name }
    return first.lowercased() + name.dropFirst()
}
