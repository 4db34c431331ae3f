import Foundation
import SQLiteTriggers

// The CREATE TABLE rewriting the primary-key migration needs, on the SQL
// tokenizer of the core (SQLiteTriggers/SQL/SQLTokenizer.swift).

/// Why a table cannot be migrated.
public struct PrimaryKeyMigrationError: Error, Equatable, CustomStringConvertible {
    public var table: String
    public var reason: String

    public init(table: String, reason: String) {
        self.table = table
        self.reason = reason
    }

    public var description: String { "migratePrimaryKeys: table \"\(table)\": \(reason)" }
}

/// A parsed `CREATE TABLE name (items) options`, with the positions the
/// primary-key migration rewrites. Anything it does not recognize is refused.
package struct CreateTableStatement {
    struct Item {
        /// Token indexes of the item, without surrounding trivia.
        var range: Range<Int>
        var isTableConstraint: Bool
        var columnName: String?
        /// Token indexes of the column's type name (empty when it has none).
        var typeRange: Range<Int>
        /// Token index where the column's constraints start.
        var constraintsStart: Int
    }

    let table: String
    var tokens: [SQLToken]
    let nameIndex: Int
    let openParen: Int
    let closeParen: Int
    var items: [Item]

    package init(sql: String, table: String) throws(PrimaryKeyMigrationError) {
        self.table = table
        let tokens = tokenizeSQL(sql)      // a local: the closures below cannot capture self yet
        self.tokens = tokens
        let significant = tokens.indices.filter { tokens[$0].kind != .trivia }
        func refuse(_ reason: String) -> PrimaryKeyMigrationError { PrimaryKeyMigrationError(table: table, reason: reason) }
        guard significant.count >= 4, tokens[significant[0]].isWord("CREATE") else {
            throw refuse("its SQL does not start with CREATE TABLE")
        }
        if tokens[significant[1]].isWord("VIRTUAL") { throw refuse("virtual tables cannot be migrated") }
        guard tokens[significant[1]].isWord("TABLE") else { throw refuse("its SQL does not start with CREATE TABLE") }
        var position = 2
        if tokens[significant[position]].isWord("IF") { position += 3 }
        if significant.count > position + 1, tokens[significant[position + 1]].text == "." { position += 2 }
        nameIndex = significant[position]
        guard position + 1 < significant.count, tokens[significant[position + 1]].text == "(" else {
            throw refuse("it has no column list (CREATE TABLE ... AS SELECT is not supported)")
        }
        let openParen = significant[position + 1]
        self.openParen = openParen
        var depth = 0
        var itemStart = openParen + 1
        var parsedItems: [Range<Int>] = []
        var close: Int?
        for index in openParen..<tokens.count where tokens[index].kind == .punctuation {
            switch tokens[index].text {
            case "(": depth += 1
            case ")":
                depth -= 1
                if depth == 0 { close = index; parsedItems.append(itemStart..<index) }
            case "," where depth == 1:
                parsedItems.append(itemStart..<index)
                itemStart = index + 1
            default: break
            }
            if close != nil { break }
        }
        guard let close else { throw refuse("its column list is not closed") }
        closeParen = close
        let options = tokens[(close + 1)...].filter { $0.kind != .trivia }.map { $0.text.uppercased() }
        if options.contains("WITHOUT") { throw refuse("WITHOUT ROWID tables cannot be migrated: they have no rowid to convert") }
        if let unknown = options.first(where: { !["STRICT", ",", ";"].contains($0) }) {
            throw refuse("the table option \(unknown) is not understood")
        }
        let constraintWords: Set<String> = ["CONSTRAINT", "PRIMARY", "NOT", "NULL", "UNIQUE", "CHECK", "DEFAULT",
                                            "COLLATE", "REFERENCES", "GENERATED", "AS"]
        items = try parsedItems.map { range throws(PrimaryKeyMigrationError) -> Item in
            let inner = range.filter { tokens[$0].kind != .trivia }
            guard let first = inner.first, let last = inner.last else { throw refuse("it has an empty column definition") }
            let firstToken = tokens[first]
            if firstToken.kind == .word, ["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"].contains(firstToken.text.uppercased()) {
                return Item(range: first..<(last + 1), isTableConstraint: true, columnName: nil,
                            typeRange: first..<first, constraintsStart: first)
            }
            guard firstToken.isName else { throw refuse("a column definition starts with \(firstToken.text)") }
            var typeEnd = first + 1
            var cursor = first + 1
            var parenDepth = 0
            while cursor <= last {
                let token = tokens[cursor]
                if token.kind == .trivia { cursor += 1; continue }
                if parenDepth == 0, token.kind == .word, constraintWords.contains(token.text.uppercased()) { break }
                if token.text == "(" { parenDepth += 1 }
                if token.text == ")" { parenDepth -= 1 }
                cursor += 1
                typeEnd = cursor
            }
            let typeStart = inner.count > 1 ? inner[1] : first + 1
            return Item(range: first..<(last + 1), isTableConstraint: false, columnName: firstToken.name,
                        typeRange: typeStart < typeEnd ? typeStart..<typeEnd : typeEnd..<typeEnd,
                        constraintsStart: cursor)
        }
    }

    func text(_ range: Range<Int>) -> String { tokens[range].map(\.text).joined() }

    func typeName(of item: Item) -> String {
        tokens[item.typeRange].filter { $0.kind != .trivia }.map { $0.text.uppercased() }.joined(separator: " ")
    }

    func significantWords(_ range: Range<Int>) -> [SQLToken] {
        tokens[range].filter { $0.kind != .trivia }
    }
}

/// How the migration rewrites one table's CREATE TABLE.
package struct PrimaryKeyRewrite {
    /// The new CREATE TABLE, naming the table `temporaryName`.
    package let sql: String
    /// The integer key column (nil when the table had none and gains "id").
    package let oldKeyColumn: String?
    /// The key column in the new table.
    package let keyColumn: String
    /// What was dropped on the way, for the report.
    package let notes: [String]
}

extension CreateTableStatement {
    /// Rewrites the statement: the key becomes
    /// `<name> TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (<function>())`
    /// (or such an "id" is added), the columns in `foreignKeyColumns` become
    /// TEXT, and the table is named `temporaryName`. Everything else is kept.
    ///
    /// - `foreignKeyDefaults`: a new DEFAULT literal for foreign-key
    ///   columns whose integer default names a parent row.
    /// - `dropUnique`: drop UNIQUE column and table constraints.
    /// - `addedKeyName`: the key a table without one gains.
    package func rewritten(temporaryName: String, foreignKeyColumns: Set<String>, uuidFunction: String,
                           foreignKeyDefaults: [String: String] = [:], dropUnique: Bool = false,
                           addedKeyName: String = "id") throws(PrimaryKeyMigrationError) -> PrimaryKeyRewrite {
        func refuse(_ reason: String) -> PrimaryKeyMigrationError { PrimaryKeyMigrationError(table: table, reason: reason) }
        let keyDefinition = "TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (\(uuidFunction)())"
        var notes: [String] = []

        // Where the key is: a column's PRIMARY KEY, or a table constraint.
        var keyItem: Int?
        var tableKeyConstraint: Int?
        for (index, item) in items.enumerated() {
            let words = significantWords(item.isTableConstraint ? item.range : item.constraintsStart..<item.range.upperBound)
            guard let primary = words.firstIndex(where: { $0.isWord("PRIMARY") }) else { continue }
            if item.isTableConstraint {
                guard tableKeyConstraint == nil, keyItem == nil else { throw refuse("it has more than one primary key clause") }
                guard let open = words.firstIndex(where: { $0.text == "(" }), open > primary,
                      let close = words.firstIndex(where: { $0.text == ")" }) else { throw refuse("its PRIMARY KEY clause is not understood") }
                // One indexed column: a name, then COLLATE x, ASC or DESC, AUTOINCREMENT.
                let parts = words[(open + 1)..<close].split { $0.text == "," }
                guard parts.count == 1, let column = parts.first?.first, column.isName else {
                    throw refuse("composite primary keys cannot be migrated")
                }
                let modifiers = parts[0].dropFirst().map { $0.text.uppercased() }
                var modifierIndex = modifiers.startIndex
                while modifierIndex < modifiers.endIndex {
                    switch modifiers[modifierIndex] {
                    case "ASC", "DESC", "AUTOINCREMENT": modifierIndex += 1
                    case "COLLATE": modifierIndex += 2
                    default: throw refuse("its PRIMARY KEY clause is not understood")
                    }
                }
                let columns = [column]
                guard words[(close + 1)...].allSatisfy({ $0.isWord("ON") || $0.isWord("CONFLICT") || ["ROLLBACK", "ABORT", "FAIL", "IGNORE", "REPLACE"].contains($0.text.uppercased()) }) else {
                    throw refuse("its PRIMARY KEY clause is not understood")
                }
                tableKeyConstraint = index
                keyItem = items.firstIndex { $0.columnName.map { sqliteNamesEqual($0, columns[0].name) } == true }
                guard keyItem != nil else { throw refuse("its PRIMARY KEY names an unknown column") }
            } else {
                guard keyItem == nil else { throw refuse("composite primary keys cannot be migrated") }
                keyItem = index
            }
        }

        var edits: [(range: Range<Int>, text: String)] = [(nameIndex..<(nameIndex + 1), SQLQuoting.identifier(temporaryName))]
        let oldKeyColumn: String?
        let keyColumn: String
        if let keyItem {
            let item = items[keyItem]
            let type = typeName(of: item)
            // SQLite's first affinity rule: a type containing INT is an
            // integer (INT, BIGINT, MySQL's int(11), UNSIGNED BIG INT...).
            guard type.contains("INT") else {
                throw refuse("its primary key \"\(item.columnName!)\" is \(type.isEmpty ? "untyped" : type), not an integer")
            }
            let (kept, dropped) = try keyColumnConstraints(of: item)
            notes += dropped.map { "its primary key's \($0) was written for integers and is dropped" }
            oldKeyColumn = item.columnName
            keyColumn = item.columnName!
            let nameText = tokens[item.range.lowerBound].text
            edits.append((item.range, ([nameText, keyDefinition] + kept).joined(separator: " ")))
            if let tableKeyConstraint {
                // Drop the table constraint and the comma before it.
                let constraint = items[tableKeyConstraint]
                let comma = tokens[..<constraint.range.lowerBound].lastIndex { $0.text == "," }!
                edits.append((comma..<constraint.range.upperBound, ""))
            }
        } else {
            guard !items.contains(where: { $0.columnName.map { sqliteNamesEqual($0, addedKeyName) } == true }) else {
                throw refuse("it has no primary key, and its column \"\(addedKeyName)\" would clash with the one it gains")
            }
            oldKeyColumn = nil
            keyColumn = addedKeyName
            // Before the first column, laid out like it: its indentation again.
            let first = items[0].range.lowerBound
            let indentation = text((openParen + 1)..<first)
            edits.append((first..<first, "\(SQLQuoting.identifier(addedKeyName)) \(keyDefinition),\(indentation.isEmpty ? " " : indentation)"))
        }

        if dropUnique {
            for item in items where item.columnName != nil && !(oldKeyColumn.map { sqliteNamesEqual($0, item.columnName!) } ?? false) {
                edits += uniqueClauses(in: item.constraintsStart..<item.range.upperBound).map { ($0, "") }
            }
            for item in items where item.isTableConstraint && significantWords(item.range).contains(where: { $0.isWord("UNIQUE") }) {
                let comma = tokens[..<item.range.lowerBound].lastIndex { $0.text == "," }!
                edits.append((comma..<item.range.upperBound, ""))
            }
        }

        for column in foreignKeyColumns {
            guard oldKeyColumn.map({ !sqliteNamesEqual(column, $0) }) ?? true else {
                throw refuse("its primary key is also a foreign key, which is not supported")
            }
            guard let item = items.first(where: { $0.columnName.map { sqliteNamesEqual($0, column) } == true }) else {
                throw refuse("its foreign key column \"\(column)\" is not understood")
            }
            if item.typeRange.isEmpty {
                edits.append((item.typeRange, " TEXT"))
            } else {
                edits.append((item.typeRange, "TEXT"))
            }
            if let literal = foreignKeyDefaults.first(where: { sqliteNamesEqual($0.key, column) })?.value,
               let value = defaultValueRange(of: item) {
                edits.append((value, literal))
            }
        }

        var result = tokens.map(\.text)
        for edit in edits.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            result.replaceSubrange(edit.range, with: [edit.text])
        }
        return PrimaryKeyRewrite(sql: result.joined(), oldKeyColumn: oldKeyColumn, keyColumn: keyColumn, notes: notes)
    }

    /// The key column's constraints: what the new key keeps (COLLATE,
    /// comments) and the CHECKs it drops, since they test integers. UNIQUE
    /// is dropped silently: the primary key already is unique.
    func keyColumnConstraints(of item: Item) throws(PrimaryKeyMigrationError) -> (kept: [String], droppedChecks: [String]) {
        var kept: [String] = [], dropped: [String] = []
        var index = item.constraintsStart
        let end = item.range.upperBound
        func nextSignificant(after index: Int) -> Int? {
            tokens[(index + 1)..<end].indices.first { tokens[$0].kind != .trivia }
        }
        let notUnderstood = PrimaryKeyMigrationError(table: table, reason:
            "the constraints of its primary key column are not understood: \(text(item.constraintsStart..<end))")
        while index < end {
            let token = tokens[index]
            if token.kind == .trivia {
                if token.text.hasPrefix("/*") { kept.append(token.text) }
                if token.text.hasPrefix("--") { kept.append(token.text + "\n") }
                index += 1
                continue
            }
            switch token.text.uppercased() {
            case "PRIMARY", "KEY", "ASC", "DESC", "AUTOINCREMENT", "NOT", "NULL", "ON", "CONFLICT",
                 "ROLLBACK", "ABORT", "FAIL", "IGNORE", "REPLACE", "UNIQUE":
                index += 1
            case "CONSTRAINT":
                index = (nextSignificant(after: index) ?? end) + 1
            case "COLLATE":
                guard let name = nextSignificant(after: index) else { throw notUnderstood }
                kept.append("COLLATE \(tokens[name].text)")
                index = name + 1
            case "CHECK":
                guard let open = nextSignificant(after: index), tokens[open].text == "(",
                      let close = matchingParenthesis(open, end) else { throw notUnderstood }
                dropped.append(text(index..<(close + 1)))
                index = close + 1
            default:
                throw notUnderstood
            }
        }
        return (kept, dropped)
    }

    func matchingParenthesis(_ open: Int, _ end: Int) -> Int? {
        var depth = 0
        for index in open..<end where tokens[index].kind == .punctuation {
            if tokens[index].text == "(" { depth += 1 }
            if tokens[index].text == ")" { depth -= 1; if depth == 0 { return index } }
        }
        return nil
    }

    /// The token ranges of UNIQUE clauses (with their ON CONFLICT) among a
    /// column's constraints, and the CONSTRAINT name before one.
    func uniqueClauses(in range: Range<Int>) -> [Range<Int>] {
        let significant = range.filter { tokens[$0].kind != .trivia }
        var clauses: [Range<Int>] = []
        for (position, index) in significant.enumerated() where tokens[index].isWord("UNIQUE") {
            var start = index
            if position >= 2, tokens[significant[position - 2]].isWord("CONSTRAINT") { start = significant[position - 2] }
            // With the space before it, so that no gap is left.
            if start > 0, tokens[start - 1].kind == .trivia, tokens[start - 1].text.allSatisfy(\.isWhitespace) {
                start -= 1
            }
            var last = index
            if position + 2 < significant.count, tokens[significant[position + 1]].isWord("ON"),
               tokens[significant[position + 2]].isWord("CONFLICT"), position + 3 < significant.count {
                last = significant[position + 3]
            }
            clauses.append(start..<(last + 1))
        }
        return clauses
    }

    /// The tokens of a column's DEFAULT value: a literal, a signed
    /// number, or a parenthesized expression.
    func defaultValueRange(of item: Item) -> Range<Int>? {
        let significant = (item.constraintsStart..<item.range.upperBound).filter { tokens[$0].kind != .trivia }
        guard let position = significant.firstIndex(where: { tokens[$0].isWord("DEFAULT") }),
              position + 1 < significant.count else { return nil }
        let first = significant[position + 1]
        if tokens[first].text == "(" {
            return matchingParenthesis(first, item.range.upperBound).map { first..<($0 + 1) }
        }
        if ["+", "-"].contains(tokens[first].text), position + 2 < significant.count {
            return first..<(significant[position + 2] + 1)
        }
        return first..<(first + 1)
    }

    /// The DEFAULT value of a column, as written, or nil.
    package func defaultValue(ofColumn column: String) -> String? {
        guard let item = items.first(where: { $0.columnName.map { sqliteNamesEqual($0, column) } == true }),
              let range = defaultValueRange(of: item) else { return nil }
        return significantWords(range).map(\.text).joined()
    }

    /// The column names and expression text of generated columns.
    package var generatedColumns: [(name: String, expression: String)] {
        items.compactMap { item in
            guard let name = item.columnName else { return nil }
            let words = significantWords(item.constraintsStart..<item.range.upperBound)
            guard let asIndex = words.firstIndex(where: { $0.isWord("AS") }) else { return nil }
            return (name, words[asIndex...].map(\.text).joined(separator: " "))
        }
    }
}
