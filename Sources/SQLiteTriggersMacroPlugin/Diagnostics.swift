import SwiftDiagnostics
import SwiftSyntax

/// Every diagnostic the macros emit, with its message.
enum MacroDiagnostic: DiagnosticMessage {
    case notAStruct(macro: String, kind: String)
    case missingType(property: String)
    case duplicateColumn(column: String, firstProperty: String)
    case nameNotALiteral(macro: String)
    case conflictingTableName(argument: String, declared: String?)
    case conflictingColumnName(ours: String, theirs: String)
    case columnGroup
    case nameGivenBesideStructuredQueriesTable

    var message: String {
        switch self {
        case .notAStruct(let macro, let kind):
            "@\(macro) applies to a struct, not \(kind)"
        case .missingType(let property):
            "'\(property)' needs a type annotation: the macro reads each column's type from it"
        case .duplicateColumn(let column, let firstProperty):
            "column \"\(column)\" is already used by '\(firstProperty)'"
        case .nameNotALiteral(let macro):
            "@\(macro) takes its name as a string literal"
        case .conflictingTableName(let argument, let declared?):
            "@TriggerTable(\"\(argument)\") contradicts databaseTableName \"\(declared)\": a record and its triggers must name one table; keep one of them"
        case .conflictingTableName(let argument, nil):
            "@TriggerTable(\"\(argument)\") and a databaseTableName would name the table twice; keep one of them"
        case .conflictingColumnName(let ours, let theirs):
            "@TriggerColumn(\"\(ours)\") contradicts @Column(\"\(theirs)\"): a column has one name; keep one of them"
        case .columnGroup:
            "@TriggerTable describes single columns, not a column group (@Columns): declare the group's columns in the struct, or describe the table by hand (TableDescription)"
        case .nameGivenBesideStructuredQueriesTable:
            "StructuredQueries' @Table names this table for both macros: give the name to @Table, not to @TriggerTable"
        }
    }

    var diagnosticID: MessageID {
        let id: String
        switch self {
        case .notAStruct: id = "notAStruct"
        case .missingType: id = "missingType"
        case .duplicateColumn: id = "duplicateColumn"
        case .nameNotALiteral: id = "nameNotALiteral"
        case .conflictingTableName: id = "conflictingTableName"
        case .conflictingColumnName: id = "conflictingColumnName"
        case .columnGroup: id = "columnGroup"
        case .nameGivenBesideStructuredQueriesTable: id = "nameGivenBesideStructuredQueriesTable"
        }
        return MessageID(domain: "SQLiteTriggersMacros", id: id)
    }

    var severity: DiagnosticSeverity { .error }
}

/// A fix-it, described for the editor.
struct MacroFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "SQLiteTriggersMacros", id: message) }
}
