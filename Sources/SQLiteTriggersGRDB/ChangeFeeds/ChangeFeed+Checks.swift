import GRDB
import Foundation

// How `checkChanges` watches a table: its own triggers, inside the statement.
extension ChangeFeed {
    /// The callback name of a check's triggers: one per table and filter,
    /// so that two checks with different filters never hear each other.
    var checkCallbackName: String {
        let filter = [inserts, updates, deletes].map { kind in kind.map { $0 ?? "all" } ?? "none" }
            + [updateColumns.joined(separator: ",")]
        return "sqlitetriggers.checks.\(tableName).\(stableHash(filter.joined(separator: "|")).prefix(8))"
    }

    /// A check's TEMP triggers for the table's live columns: each calls
    /// `swift_callback(name, kind, rowids…, values…)` inside the statement,
    /// where an immediate observer can refuse it, in the capture's layout.
    /// (AFTER triggers see `NEW` as the row was written; later triggers
    /// may still change it, which is why feeds use the capture instead.)
    func checkTriggers(_ db: Database) throws -> [TempTrigger] {
        let table = tableName
        let columns = try liveColumns(db)
        let quotedTable = SQLQuoting.identifier(table)
        let hasRowID = try Bool.fetchOne(db, sql: "SELECT wr = 0 FROM pragma_table_list WHERE schema = 'main' AND name = ?", arguments: [table]) ?? true
        let rowidName = RowidName.unhidden(by: columns).map(SQLQuoting.identifier)
        func rowid(_ row: String) -> String { hasRowID ? rowidName.map { "\"\(row)\".\($0)" } ?? "NULL" : "NULL" }
        func values(_ row: String) -> String { ([rowid(row)] + columns.map { "\"\(row)\".\(SQLQuoting.identifier($0))" }).joined(separator: ", ") }
        var triggers: [TempTrigger] = []
        func add(_ kind: String, _ clause: String, _ condition: String?, _ arguments: String) {
            let body = "SELECT swift_callback(\(SQLQuoting.string(checkCallbackName)), '\(kind)', \(arguments))"
            let definition = TriggerDefinition(timing: .after, event: clause, target: "\"main\".\(quotedTable)",
                                               condition: condition, body: [[body]])
            let name = "\(table)_checks_\(kind)_\(stableHash(canonicalTokens(definition.sql)).prefix(8))"
            triggers.append(TempTrigger(name: name, sql: definition.createStatement(named: name, ifNotExists: true),
                                        tableName: table, firedBy: [kind.uppercased()]))
        }
        if case .some(let condition) = inserts { add("insert", "INSERT", condition, values("new")) }
        if case .some(let condition) = updates {
            let clause = updateColumns.isEmpty ? "UPDATE" : "UPDATE OF " + updateColumns.map(SQLQuoting.identifier).joined(separator: ", ")
            add("update", clause, condition, values("old") + ", " + values("new"))
        }
        if case .some(let condition) = deletes { add("delete", "DELETE", condition, values("old")) }
        return triggers
    }
}
