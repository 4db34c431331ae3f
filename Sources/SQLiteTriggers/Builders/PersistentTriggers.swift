import Foundation

/// A rule rendered as an ordinary trigger of the database file, which every
/// writer of the file runs: the shell without the extension, Python, other
/// processes and other connections. SQLiteTriggersGRDB installs them
/// (`RuleSet.installPersistently(_:)`); this is the rendering alone.
///
/// The persistent statement is the TEMP one with three changes, made on
/// its tokens so that nothing else moves:
/// - `CREATE TEMP TRIGGER [IF NOT EXISTS] "name"` becomes
///   `CREATE TRIGGER "name"`, which is how SQLite stores it in
///   `sqlite_schema`: the stored text is the rendered text, and a drift
///   check compares the two.
/// - `ON "main"."table"` loses its schema: a trigger of the file fires on
///   its own database's table, whatever name the file is attached under.
/// - `datetime_subsec()`, the builders' `.now`, becomes ``persistentNow``:
///   the connection's clock where the extension is loaded, SQLite's own
///   time in the same text format elsewhere.
///
/// Any other call of a function of ours (`swift_callback()`, `uuidv7()`,
/// `datetime_subsec()` with arguments) cannot persist: a writer without the
/// extension would fail on every write the rule fires on, and a file must
/// never call a function of ours that delivers or changes state.
package struct PersistentTrigger: Sendable, Equatable {
    /// The trigger's name in the main schema (the TEMP rule's name).
    package let name: String
    /// `CREATE TRIGGER "name" ...`, as `sqlite_schema` will hold it.
    package let sql: String

    package init(name: String, sql: String) {
        self.name = name
        self.sql = sql
    }
}

/// `.now` in a persistent rule: the connection's clock where SQLiteTriggers
/// is loaded (it answers argument -7319 of SQLite's
/// `sqlite_compileoption_get()`, as for the durable log's tombstones: one
/// clock with `datetime_subsec()`, a pinned clock and GRDB's
/// `transactionDate`), and SQLite's `'now'` in `datetime_subsec()`'s format
/// on every other connection, where that argument is NULL.
package let persistentNow = "coalesce(sqlite_compileoption_get(-7319), strftime('%Y-%m-%d %H:%M:%f', 'now'))"

/// Why a rule cannot become a trigger of the file.
package struct PersistenceRefusal: Error, Sendable, Equatable {
    package let rule: String
    package let reason: String
}

/// The SQL functions of SQLiteTriggers, matched as SQLite matches names.
/// A persistent rule may call none of them (`datetime_subsec()` without
/// arguments is rewritten, never called).
package func isSQLiteTriggersFunction(_ name: String) -> Bool {
    let folded = sqliteFolded(name)
    return folded.hasPrefix("sqlitetriggers_") || folded.hasPrefix("swift_callback") || folded.hasPrefix("uuid")
        || folded == "datetime_subsec" || folded == "unixepoch_subsec"
}

extension TempTrigger {
    /// The rule's triggers as triggers of the file, or why it cannot be one.
    package func persistentTriggers() throws(PersistenceRefusal) -> [PersistentTrigger] {
        if let invalidReason { throw PersistenceRefusal(rule: name, reason: invalidReason) }
        var triggers: [PersistentTrigger] = []
        for statement in statements {
            triggers.append(try persistentTrigger(from: statement))
        }
        return triggers
    }

    /// The names of the functions the rule calls (a name followed by "("),
    /// as written, each once; names after INTO or TABLE (column lists) are
    /// not calls.
    package func calledFunctionNames() -> [String] {
        var names: [String] = []
        for statement in statements {
            let tokens = tokenizeSQL(statement).filter { $0.kind != .trivia }
            for index in tokens.indices.dropLast() where tokens[index].kind == .word || tokens[index].kind == .quotedName {
                guard tokens[index + 1].text == "(", !tokens[index].isWord("RAISE") else { continue }
                if index > 0, tokens[index - 1].isWord("INTO") || tokens[index - 1].isWord("TABLE") || tokens[index - 1].text == "." {
                    continue
                }
                let name = tokens[index].name
                if !names.containsName(name) { names.append(name) }
            }
        }
        return names
    }

    private func persistentTrigger(from statement: String) throws(PersistenceRefusal) -> PersistentTrigger {
        let tokens = tokenizeSQL(statement)
        let significant = tokens.indices.filter { tokens[$0].kind != .trivia }
        func word(_ position: Int, _ keyword: String) -> Bool {
            position < significant.count && tokens[significant[position]].isWord(keyword)
        }
        guard word(0, "CREATE"), word(1, "TEMP") || word(1, "TEMPORARY"), word(2, "TRIGGER") else {
            throw PersistenceRefusal(rule: name, reason: "its SQL is not one CREATE TEMP TRIGGER statement")
        }
        var position = 3
        if word(3, "IF") { position = 6 }
        guard position < significant.count else { throw PersistenceRefusal(rule: name, reason: "it names no trigger") }
        var nameIndex = significant[position]
        if position + 2 < significant.count, tokens[significant[position + 1]].text == "." {
            position += 2
            nameIndex = significant[position]
        }
        let triggerName = tokens[nameIndex].name
        var sql = "CREATE TRIGGER \(SQLQuoting.identifier(triggerName))"
        var index = nameIndex + 1
        var targetSeen = false
        var end = tokens.count
        while end > index, tokens[end - 1].kind == .trivia || tokens[end - 1].text == ";" { end -= 1 }
        /// The next `count` tokens after `index` that are not trivia.
        func following(_ index: Int, _ count: Int) -> [SQLToken] {
            Array(tokens[(index + 1)..<end].lazy.filter { $0.kind != .trivia }.prefix(count))
        }
        while index < end {
            let token = tokens[index]
            if !targetSeen, token.isWord("ON") {
                targetSeen = true
                if following(index, 2).last?.text == "." {
                    // ON "main"."t": keep ON and the spacing, drop the schema and its dot.
                    sql += token.text
                    index += 1
                    while tokens[index].kind == .trivia { sql += tokens[index].text; index += 1 }
                    index += 1
                    while tokens[index].text != "." { index += 1 }
                    index += 1
                    while tokens[index].kind == .trivia { index += 1 }
                    continue
                }
            }
            if token.kind == .word || token.kind == .quotedName, following(index, 1).first?.text == "(", isSQLiteTriggersFunction(token.name) {
                guard sqliteNamesEqual(token.name, "datetime_subsec"), following(index, 2).last?.text == ")" else {
                    throw PersistenceRefusal(rule: name, reason: "it calls \(token.name)(), a function of SQLiteTriggers, which "
                        + "writers without the extension lack (every write the rule fires on would fail there) and which a "
                        + "database file must never call. Keep this rule TEMP: install it with RuleSet.install(in:)"
                        + (sqliteNamesEqual(token.name, "datetime_subsec")
                            ? " (or write the time with strftime('%Y-%m-%d %H:%M:%f', ...): only .now, datetime_subsec() "
                              + "without arguments, persists, as the connection's clock or SQLite's)" : ""))
                }
                sql += persistentNow
                // Skip the name, "(" and ")", with any trivia between them.
                var skipped = 0
                while skipped < 3 { if tokens[index].kind != .trivia { skipped += 1 }; index += 1 }
                continue
            }
            sql += token.text
            index += 1
        }
        return PersistentTrigger(name: triggerName, sql: sql)
    }
}
