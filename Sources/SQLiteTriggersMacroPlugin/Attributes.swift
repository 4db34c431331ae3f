import SwiftSyntax

/// The attributes `@TriggerTable` reads, however they are written: bare
/// (`@TriggerColumn`), qualified (`@SQLiteTriggersMacros.TriggerColumn`) or
/// with a module selector (`@SQLiteTriggersMacros::TriggerColumn`).
///
/// StructuredQueries' own `@Column("name", primaryKey:)` and `@Ephemeral`
/// say the same things as ours (a column's SQL name, the primary key, a
/// property that is no column), so they are read too: a struct that carries
/// both `@Table` and `@TriggerTable` is described once, and one attribute
/// can never be honoured by one macro and ignored by the other.
enum RecognizedAttribute: Equatable {
    case triggerColumn, triggerIgnored
    /// StructuredQueries' `@Table`, `@Column`, `@Ephemeral` and `@Columns`.
    case table, column, ephemeral, columnGroup

    /// The modules that may qualify each kind of attribute.
    private static let ourModules: Set<String> = ["SQLiteTriggersMacros"]
    private static let structuredQueriesModules: Set<String> = [
        "StructuredQueries", "StructuredQueriesCore", "StructuredQueriesSQLite", "StructuredQueriesSQLiteCore", "SQLiteData",
    ]

    init?(_ attribute: AttributeSyntax) {
        // `A.B` and `A::B` alike: the last component names the attribute,
        // anything before it must be a module that declares it.
        let components = attribute.attributeName.trimmedDescription
            .filter { !$0.isWhitespace }
            .split(whereSeparator: { $0 == "." || $0 == ":" }).map(String.init)
        guard let name = components.last else { return nil }
        let module = components.count > 1 ? components.dropLast().joined(separator: ".") : nil
        let ours = module.map(Self.ourModules.contains) ?? true
        let theirs = module.map(Self.structuredQueriesModules.contains) ?? true
        switch name {
        case "TriggerColumn" where ours: self = .triggerColumn
        case "TriggerIgnored" where ours: self = .triggerIgnored
        case "Table" where theirs: self = .table
        case "Column" where theirs: self = .column
        case "Ephemeral" where theirs: self = .ephemeral
        case "Columns" where theirs: self = .columnGroup
        default: return nil
        }
    }
}

/// The first attribute of the list that is `kind`.
func attribute(_ kind: RecognizedAttribute, in attributes: AttributeListSyntax) -> AttributeSyntax? {
    for element in attributes {
        if let attribute = element.as(AttributeSyntax.self), RecognizedAttribute(attribute) == kind { return attribute }
    }
    return nil
}
