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
/// and those marked @Ephemeral. Properties without a readable type get a
/// diagnostic (with a fix-it when the initializer tells the type) and are
/// left out.
func storedProperties(of declaration: some DeclGroupSyntax, in context: some MacroExpansionContext) -> [StoredProperty] {
    var properties: [StoredProperty] = []
    for member in declaration.memberBlock.members {
        guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
        let modifiers = variable.modifiers.map(\.name.tokenKind)
        if modifiers.contains(.keyword(.static)) || modifiers.contains(.keyword(.class))
            || modifiers.contains(.keyword(.lazy)) { continue }
        if attribute(named: "Ephemeral", in: variable.attributes) != nil { continue }
        let columnAttribute = attribute(named: "Column", in: variable.attributes)
        for binding in variable.bindings {
            guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
            if isComputed(binding) { continue }
            let name = identifier.identifier.trimmedDescription      // `select` keeps its backticks
            let unquotedName = name.filter { $0 != "`" }
            guard let type = binding.typeAnnotation?.type.trimmed else {
                diagnoseMissingType(binding, name: unquotedName, in: context)
                continue
            }
            let (columnName, isPrimaryKey) = columnArguments(columnAttribute, in: context)
            properties.append(StoredProperty(
                name: name, type: type, columnName: columnName ?? unquotedName,
                isPrimaryKey: isPrimaryKey, node: Syntax(binding)))
        }
    }
    return properties
}

func attribute(named name: String, in attributes: AttributeListSyntax) -> AttributeSyntax? {
    for element in attributes {
        if let attribute = element.as(AttributeSyntax.self),
           attribute.attributeName.trimmedDescription == name { return attribute }
    }
    return nil
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

/// `@Column("name", primaryKey: true)`'s arguments.
private func columnArguments(_ attribute: AttributeSyntax?, in context: some MacroExpansionContext) -> (String?, Bool) {
    guard let arguments = attribute?.arguments?.as(LabeledExprListSyntax.self) else { return (nil, false) }
    var name: String?
    var isPrimaryKey = false
    for argument in arguments {
        if argument.label == nil {
            name = stringLiteral(argument.expression, macro: "Column", in: context)
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

/// The type a literal initializer implies, for the fix-it.
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
    var fixIts: [FixIt] = []
    if let type = inferredType(of: binding.initializer) {
        let annotated = binding
            .with(\.pattern, binding.pattern.with(\.trailingTrivia, []))
            .with(\.typeAnnotation, TypeAnnotationSyntax(
                colon: .colonToken(trailingTrivia: .space),
                type: IdentifierTypeSyntax(name: .identifier(type), trailingTrivia: .space)))
        fixIts.append(FixIt(
            message: MacroFixIt(message: "Insert ': \(type)'"),
            changes: [.replace(oldNode: Syntax(binding), newNode: Syntax(annotated))]))
    }
    context.diagnose(Diagnostic(node: binding.pattern, message: MacroDiagnostic.missingType(property: name), fixIts: fixIts))
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
