extension TempTrigger {
    /// Installs the trigger on this connection.
    ///
    /// ```swift
    /// config.prepareDatabase { db in
    ///     try db.installSQLiteTriggers()
    ///     try Reminder.afterUpdateTouch(\.updatedAt).execute(db)
    /// }
    /// ```
    ///
    /// SQLite compiles a trigger's body only when a statement fires it, so
    /// a rule naming a column the table lacks (a `@TriggerTable` property the
    /// migration never added) would install fine and break every write.
    /// Here the statements that fire it are compiled at once, never run: a
    /// mismatch removes the trigger again and throws, naming the rule, the
    /// table and SQLite's reason (such as `no such column: new.archivedAt`).
    ///
    /// SQLite also accepts `UPDATE OF` a column the table lacks, and such a
    /// trigger never fires: each column it names is checked against the
    /// live table too.
    ///
    /// A read-only connection (a `DatabasePool` reader) is refused: it never
    /// writes, so its triggers would never fire.
    public func execute(_ db: Database) throws {
        try refuseIfInvalid()
        if db.configuration.readonly {
            throw DatabaseError(resultCode: .SQLITE_READONLY, message: readOnlyRefusal(
                "rule \"\(name)\"", consequence: "its triggers would never fire", remedy: "install rules on the writer"))
        }
        try db.execute(sql: sql)
        do {
            try refuseIfUnfit(db)
        } catch {
            try? drop().execute(db)
            throw error
        }
    }

    /// Throws when the rule, installed, does not fit the live schema: the
    /// statements that fire it are compiled (never run), which compiles its
    /// body, and each `UPDATE OF` column must be the table's. The error
    /// names the rule, the table and SQLite's reason.
    func refuseIfUnfit(_ db: Database) throws {
        let table = SQLQuoting.identifier(tableName)
        var probes: [String] = []
        if firedBy.contains("INSERT") { probes.append("INSERT INTO \(table) DEFAULT VALUES") }
        if firedBy.contains("DELETE") { probes.append("DELETE FROM \(table)") }
        if firedBy.contains("UPDATE") {
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0", arguments: [tableName])
                .map(SQLQuoting.identifier)
            probes.append("UPDATE \(table) SET " + columns.map { "\($0) = \($0)" }.joined(separator: ", "))
        }
        for probe in probes {
            do {
                _ = try db.makeStatement(sql: probe)
            } catch let error as DatabaseError {
                throw DatabaseError(resultCode: error.resultCode, message:
                    "rule \"\(name)\" on \"\(tableName)\" does not fit the live schema: \(error.message ?? "\(error.resultCode)"). "
                    + "Does the table have every column the rule names (a property missing from the table)?")
            }
        }
        let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_xinfo(?)", arguments: [tableName])
        for column in updateOfColumns() where !columns.containsName(column) {
            throw DatabaseError(resultCode: .SQLITE_ERROR, message:
                "rule \"\(name)\" on \"\(tableName)\" does not fit the live schema: UPDATE OF names \"\(column)\", "
                + "which the table does not have, so the rule would never fire. "
                + "Does the table have every column the rule names (a property missing from the table)?")
        }
    }

    /// Throws why SQL given to `TempTrigger(sql:)` is no trigger a rule set
    /// can keep, naming the SQL.
    func refuseIfInvalid() throws {
        if let invalidReason {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: invalidReason + ": " + sql)
        }
    }

    /// The columns every `UPDATE OF` clause of the statement names (its
    /// companions' too), read with the SQL tokenizer.
    func updateOfColumns() -> [String] {
        let tokens = tokenizeSQL(sql).filter { $0.kind != .trivia }
        var columns: [String] = []
        var index = 0
        while index + 2 < tokens.count {
            guard tokens[index].isWord("UPDATE"), tokens[index + 1].isWord("OF") else { index += 1; continue }
            index += 2
            while index < tokens.count, tokens[index].isName, !tokens[index].isWord("ON") {
                columns.append(tokens[index].name)
                index += 1
                guard index < tokens.count, tokens[index].text == "," else { break }
                index += 1
            }
        }
        return columns
    }
}

extension DropTrigger {
    /// Removes the trigger from this connection.
    ///
    /// ```swift
    /// try Reminder.afterUpdateTouch(\.updatedAt).drop().execute(db)
    /// ```
    public func execute(_ db: Database) throws {
        try db.execute(sql: sql)
    }
}

extension TempView {
    /// Creates the view on this connection (readers too: a view only reads).
    ///
    /// ```swift
    /// try ReminderTitle.createTempView(from: Reminder.self) { view, reminder in
    ///     view.id = reminder.id
    ///     view.title = reminder.title
    /// }.execute(db)
    /// ```
    public func execute(_ db: Database) throws {
        try db.execute(sql: sql)
    }
}
