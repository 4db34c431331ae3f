import GRDB
import Foundation

// How a feed installs and reads the change capture of ext/change_capture.c
// (after commit).
extension ChangeFeed {
    /// The table as `sqlite_schema` spells it: the capture's events are
    /// named after it (ext/change_capture.c).
    func capturedTable(_ db: Database) throws -> String {
        let table = tableName
        guard let name = try String.fetchOne(db, sql: """
            SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name = ? COLLATE NOCASE
            """, arguments: [table]) else { throw missingTableError() }
        return name
    }

    /// The capture's mode for this feed: a keys-only feed shares a row
    /// capture another feed of the table installed (it reads the key
    /// columns by name), a row feed replaces a keys-only capture, and a net
    /// feed of rows reads a capture installed in mode 'net' from SQL (net
    /// changes by triggers, ext/change_net.c: the same events, one per row
    /// per transaction), which any other feed replaces.
    /// Drops the installed capture when it must change.
    func captureMode(_ db: Database, table: String) throws -> String {
        let installed = try String.fetchOne(db, sql: "SELECT sqlitetriggers_change_feed_mode(?)", arguments: [table])
        let mode = isNet && !isKeysOnly && installed == "net" ? "net" : isKeysOnly && installed != "rows" ? "keys" : "rows"
        if let installed, installed != mode { try Self.captureRule(db, table: table, mode: installed).drop().execute(db) }
        return mode
    }

    /// The capture's triggers, as the C installer writes them: three BEFORE
    /// ones, and in mode 'net' two AFTER ones (and its state table, which
    /// installing again replaces).
    static func captureRule(_ db: Database, table: String, mode: String) throws -> TempTrigger {
        let sql = try String.fetchOne(db, sql: "SELECT sqlitetriggers_change_feed_sql(?, ?)", arguments: [table, mode]) ?? ""
        let name = { (kind: String) in "sqlitetriggers_changes_\(table)_\(kind)" }
        return TempTrigger(name: name("insert"), sql: sql, tableName: table, firedBy: ["INSERT", "UPDATE", "DELETE"],
                           companions: [name("update"), name("delete")] + (mode == "net" ? [name("inserted"), name("updated")] : []))
    }

    /// The SQL condition on `swift_callback_batch` rows that keeps this
    /// feed's changes, or nil for every change: its kinds, the columns an
    /// update must change (`IS NOT`), and its conditions, where `old.x` and
    /// `new.x` read the event's arguments for `columns` (the capture's
    /// layout, ext/change_capture.c). Conditions run after commit: a
    /// subquery in one sees the database as committed.
    func batchFilter(columns: [String]) throws -> String? {
        let layout = ChangeEventLayout(columnCount: columns.count)
        // Which side `old` and `new` read: the first, or an update's second.
        func isSecondSide(_ row: String, kind: String) -> Bool? {
            switch (kind, row) {
            case ("insert", "new"), ("delete", "old"), ("update", "old"): false
            case ("update", "new"): true
            default: nil
            }
        }
        func argument(_ row: String, _ column: String, kind: String) throws -> String {
            guard let secondSide = isSecondSide(row, kind: kind) else {
                throw filterError("\(kind) conditions cannot read \"\(row).\(column)\"")
            }
            if let index = columns.firstIndex(where: { sqliteNamesEqual($0, column) }) {
                return "arg\(layout.valueArgument(index, secondSide: secondSide))"
            }
            if ["rowid", "oid", "_rowid_"].contains(column.lowercased()) { return "arg\(layout.rowidArgument(secondSide: secondSide))" }
            throw filterError("no column \"\(column)\" in the change of \"\(tableName)\" (a keys-only feed has the key's alone)")
        }
        func rewrite(_ condition: String, kind: String) throws -> String {
            let tokens = tokenizeSQL(condition)
            var output = "", index = 0
            func next(after start: Int) -> Int? {
                var i = start + 1
                while i < tokens.count, tokens[i].kind == .trivia { i += 1 }
                return i < tokens.count ? i : nil
            }
            while index < tokens.count {
                let token = tokens[index]
                if token.isName, ["old", "new"].contains(token.name.lowercased()), let dot = next(after: index), tokens[dot].text == ".",
                   let column = next(after: dot), tokens[column].isName {
                    output += try argument(token.name.lowercased(), tokens[column].name, kind: kind)
                    index = column + 1
                } else {
                    output += token.text
                    index += 1
                }
            }
            return output
        }
        var clauses: [String] = []
        var keepsEverything = true
        for (kind, filter) in [("insert", inserts), ("update", updates), ("delete", deletes)] {
            guard case .some(let condition) = filter else { keepsEverything = false; continue }
            var parts = ["arg\(ChangeEventLayout.kindArgument) = '\(kind)'"]
            if kind == "update", !updateColumns.isEmpty {
                parts.append("(" + (try updateColumns.map { column in
                    "\(try argument("old", column, kind: kind)) IS NOT \(try argument("new", column, kind: kind))"
                }).joined(separator: " OR ") + ")")
            }
            if let condition { parts.append("(\(try rewrite(condition, kind: kind)))") }
            keepsEverything = keepsEverything && parts.count == 1
            clauses.append("(" + parts.joined(separator: " AND ") + ")")
        }
        return keepsEverything ? nil : clauses.isEmpty ? "0" : clauses.joined(separator: " OR ")
    }

    private func filterError(_ reason: String) -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_ERROR, message: "change feed of \"\(tableName)\": \(reason)")
    }
}
