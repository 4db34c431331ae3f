import Foundation

extension TempTrigger {
    /// A TEMP trigger written elsewhere, as SQL: by hand, or by another
    /// library's trigger builder (StructuredQueries' `createTempTrigger`
    /// renders one), so that it joins a ``RuleSet`` and is checked against
    /// the live schema and kept across migrations like ours.
    ///
    /// ```swift
    /// let rules = RuleSet {
    ///     TempTrigger(sql: """
    ///         CREATE TEMP TRIGGER "reminders_touch" AFTER UPDATE OF "title" ON "reminders"
    ///         BEGIN UPDATE "reminders" SET "updatedAt" = datetime_subsec() WHERE rowid = new.rowid; END
    ///         """)
    /// }
    /// ```
    ///
    /// Its name, its table and the statements that fire it are read from
    /// the SQL. SQL that is not one `CREATE TEMP TRIGGER` statement (a
    /// persistent trigger, two statements, a typo) is kept as given and
    /// refused when installed, with the reason.
    public init(sql: String) {
        let parsed = Self.parse(sql)
        self.sql = sql
        self.name = parsed.name ?? ""
        self.names = [self.name]
        self.statements = [sql]
        self.tableName = parsed.table ?? ""
        self.firedBy = parsed.firedBy
        self.invalidReason = parsed.invalidReason
    }

    /// The name, table and events of a `CREATE TEMP TRIGGER` statement, or
    /// why it is not one.
    private static func parse(_ sql: String)
        -> (name: String?, table: String?, firedBy: Set<String>, invalidReason: String?) {
        var tokens = tokenizeSQL(sql).filter { $0.kind != .trivia }
        func refuse(_ reason: String) -> (String?, String?, Set<String>, String?) {
            (nil, nil, [], "this SQL is not a TEMP trigger that a RuleSet can keep: \(reason)")
        }
        if tokens.last?.text == ";" { tokens.removeLast() }
        guard tokens.count > 3, tokens[0].isWord("CREATE") else { return refuse("it does not start with CREATE") }
        guard tokens[1].isWord("TEMP") || tokens[1].isWord("TEMPORARY") else {
            return refuse("it is not CREATE TEMP TRIGGER (write the rule TEMP: a RuleSet installs it on the writer, "
                          + "or into the file for every writer with installPersistently)")
        }
        guard tokens[2].isWord("TRIGGER") else { return refuse("it creates no trigger") }
        var index = 3
        if index + 2 < tokens.count, tokens[index].isWord("IF"), tokens[index + 1].isWord("NOT"), tokens[index + 2].isWord("EXISTS") {
            index += 3
        }
        guard index < tokens.count, tokens[index].isName else { return refuse("it names no trigger") }
        var name = tokens[index].name
        if index + 2 < tokens.count, tokens[index + 1].text == "." {
            guard name.lowercased() == "temp" else { return refuse("the trigger \"\(tokens[index + 2].name)\" is not in the temp schema") }
            index += 2
            name = tokens[index].name
        }
        var firedBy: Set<String> = []
        var table: String?
        index += 1
        while index < tokens.count, table == nil {
            let token = tokens[index]
            if token.isWord("INSERT") || token.isWord("UPDATE") || token.isWord("DELETE") {
                firedBy.insert(token.text.uppercased())
            } else if token.isWord("ON"), index + 1 < tokens.count {
                index += 1
                if index + 2 < tokens.count, tokens[index + 1].text == "." { index += 2 }
                table = tokens[index].name
            } else if token.isWord("BEGIN") {
                break
            }
            index += 1
        }
        guard let table, firedBy.count == 1 else { return refuse("it names no INSERT, UPDATE or DELETE ON a table") }
        // A trigger body holds no CREATE: a second one is a second statement.
        guard tokens.last?.isWord("END") == true, !tokens.dropFirst().contains(where: { $0.isWord("CREATE") }) else {
            return refuse("it is not one statement ending with END (one CREATE TEMP TRIGGER, nothing after it)")
        }
        return (name, table, firedBy, nil)
    }
}
