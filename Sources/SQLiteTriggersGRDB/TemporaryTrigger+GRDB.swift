extension TemporaryTrigger {
    /// Installs the trigger on this connection.
    ///
    /// ```swift
    /// config.prepareDatabase { db in
    ///     try db.installSQLiteTriggers()
    ///     try Reminder.afterUpdateTouch(\.updatedAt).execute(db)
    /// }
    /// ```
    public func execute(_ db: Database) throws {
        try db.execute(sql: sql)
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
