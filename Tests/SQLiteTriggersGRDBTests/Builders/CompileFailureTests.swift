import Foundation
import Testing

/// What must not compile, checked by running `swiftc -typecheck` on small
/// sources against the SQLiteTriggers module this test run was built with.
/// The control source must compile, so a broken harness cannot pass.
@Suite struct CompileFailureTests {
    static let prelude = """
        import Foundation
        import SQLiteTriggers
        enum Item: TableDescription {
            static let tableName = "items"
            enum TriggerColumns {
                static let id = ColumnDescription<UUID>("id", primaryKey: true)
                static let title = ColumnDescription<String>("title")
                static let updatedAt = ColumnDescription<Date?>("updatedAt")
            }
            static let allColumns: [any AnyColumnDescription] = [TriggerColumns.id, TriggerColumns.title, TriggerColumns.updatedAt]
        }

        """

    /// The same table and an event, declared with the macros.
    static let macroPrelude = """
        import Foundation
        import SQLiteTriggersMacros
        @TriggerTable struct Item {
            let id: UUID
            var title: String
        }
        @CallbackEvent struct ItemAdded {
            var id: UUID
            var title: String
        }

        """

    func typecheck(_ body: String, prelude: String = prelude, warningsAsErrors: Bool = false) throws -> String? {
        try typecheckSource(prelude + body, warningsAsErrors: warningsAsErrors)
    }

    @Test func theControlCompiles() throws {
        let diagnostics = try typecheck("""
            let touch = Item.afterUpdateTouch { $0.updatedAt = .now }
            let fixed = Item.afterUpdateTouch { $0.updatedAt = .frozen(Date(timeIntervalSince1970: 0)) }
            let trigger = Item.createTempTrigger(after: .insert(when: { new in new.title == "x" }) { new in
                .callback("inserted", new.id, new.title)
            })
            """)
        #expect(diagnostics == nil, "\(diagnostics ?? "")")
    }

    @Test func earlierNamesThatStructuredQueriesDoesNotDeclareNameTheirReplacement() throws {
        let diagnostics = try typecheck("""
            func oldNames(_ column: any AnyTableColumn, _ branch: CaseWhen<Int, String>) {}
            """)
        #expect(diagnostics?.contains("'AnyTableColumn' has been renamed to 'AnyColumnDescription'") == true, "\(diagnostics ?? "compiled")")
        #expect(diagnostics?.contains("'CaseWhen' has been renamed to 'SQLCaseWhen'") == true, "\(diagnostics ?? "compiled")")
    }

    @Test func aRuleSetElementOfTheWrongTypeIsDiagnosedAsSuch() throws {
        let control = try typecheck("let rules = RuleSet { Item.afterUpdateTouch(\\.updatedAt) }")
        #expect(control == nil, "\(control ?? "")")
        let wrong = try typecheck(#"let rules = RuleSet { "not a trigger" }"#)
        #expect(wrong?.contains("cannot convert value of type 'String' to expected argument type 'TempTrigger'") == true,
                "\(wrong ?? "compiled")")
        #expect(wrong?.contains("failed to produce diagnostic") != true)
    }

    @Test func migratingATypeThatIsNoTableDescriptionIsDiagnosedAsSuch() throws {
        // A StructuredQueries table that is not also a @TriggerTable, say.
        let diagnostics = try typecheckSource("""
            import SQLiteTriggersGRDB
            struct Plain { static let tableName = "plains" }
            func migrate(_ db: Database) throws {
                try migratePrimaryKeys(db, tables: [Plain.self])
            }
            """)
        #expect(diagnostics?.contains("failed to produce diagnostic") == false, "\(diagnostics ?? "compiled")")
        #expect(diagnostics?.contains("TableDescription") == true, "\(diagnostics ?? "compiled")")
    }

    @Test func describedColumnsCompareInGRDBQueriesWithOurImportsAlone() throws {
        let diagnostics = try typecheckSource("""
            import Foundation
            import SQLiteTriggersGRDB
            import SQLiteTriggersMacros
            @TriggerTable struct Item: Codable, FetchableRecord, PersistableRecord {
                var id: UUID
                var title: String
                var rank: Int
                var note: String?
            }
            let milk = Item.filter { $0.title == "Milk" }.order(\\.title)
            let ranked = Item.filter { $0.rank >= 2 && $0.title != "x" }
            let ranges = Item.filter { $0.rank < 3 }.filter { $0.rank <= 3 }.filter { $0.rank > 0 }
            let noted = Item.filter { !($0.note == nil) || $0.id == UUID() }
            """)
        #expect(diagnostics == nil, "\(diagnostics ?? "")")
    }

    @Test func aSwiftDateIsNoLiteral() throws {
        let assigned = try typecheck("let t = Item.afterUpdateTouch { $0.updatedAt = .value(Date()) }")
        #expect(assigned?.contains("use .now for the time the trigger fires, or .frozen(date) for a fixed instant") == true,
                "the diagnostic names the right spellings: \(assigned ?? "compiled")")
        let compared = try typecheck("""
            let t = Item.createTempTrigger(after: .update(when: { old, new in new.updatedAt == Date() }) { _, new in
                .callback("x", new.id)
            })
            """)
        #expect(compared != nil, "comparing with a frozen Date must not compile")
    }

    @Test func updateOfTakesColumnsOnly() throws {
        let control = try typecheck("""
            let t = Item.createTempTrigger(after: .update(of: \\.title, \\.updatedAt) { _, new in .callback("x", new.id) })
            """)
        #expect(control == nil, "\(control ?? "")")
        let notAColumn = try typecheck("""
            let t = Item.createTempTrigger(after: .update(of: \\.title.name) { _, new in .callback("x", new.id) })
            """)
        #expect(notAColumn != nil, "a key path that is not a column must not compile (it trapped at run time before)")
        let missing = try typecheck("""
            let t = Item.createTempTrigger(after: .update(of: \\.archivedAt) { _, new in .callback("x", new.id) })
            """)
        #expect(missing?.contains("archivedAt") == true, "\(missing ?? "compiled")")
    }

    @Test func typedRawSQLRefusesADate() throws {
        let control = try typecheck("""
            let t = Item.createTempTrigger(after: .insert { new in TriggerStatement(sql: "SELECT \\(new.title), \\(1), \\(Item.self)") })
            """)
        #expect(control == nil, "\(control ?? "")")
        let date = try typecheck("""
            let t = Item.createTempTrigger(after: .insert { new in TriggerStatement(sql: "SELECT \\(Date())") })
            """)
        #expect(date != nil, "a Swift Date interpolated into SQL must not compile")
    }

    @Test func aTouchEventIsForAfterTriggersOnly() throws {
        let before = try typecheck("""
            let t = Item.createTempTrigger(before: .touch { $0.updatedAt = .now })
            """)
        #expect(before != nil, "a BEFORE touch must not compile: it would change the row SQLite is writing")
    }

    @Test func mismatchedTypesDoNotCompile() throws {
        let textAsNumber = try typecheck("""
            let t = Item.createTempTrigger(after: .insert(when: { new in new.title == 1 }) { new in .callback("x", new.id) })
            """)
        #expect(textAsNumber != nil, "a text column compared with an integer must not compile")
        let textIntoUUID = try typecheck("""
            let t = Item.createTempTrigger(after: .insert { new in Item.update { $0.id = new.title }.find(new.id) })
            """)
        #expect(textIntoUUID != nil, "a String expression assigned to a UUID column must not compile")
    }

    @Test func typedEventsCheckTheirPayload() throws {
        let control = try typecheck("""
            let trigger = Item.createTempTrigger(after: .insert { new in
                ItemAdded.callback(id: new.id, title: new.title)
            })
            """, prelude: Self.macroPrelude)
        #expect(control == nil, "\(control ?? "")")
        let swapped = try typecheck("""
            let trigger = Item.createTempTrigger(after: .insert { new in
                ItemAdded.callback(id: new.title, title: new.title)
            })
            """, prelude: Self.macroPrelude)
        #expect(swapped?.contains("TypedSQL<UUID>") == true, "a String column where the event wants a UUID must not compile: \(swapped ?? "compiled")")
        let missing = try typecheck("""
            let trigger = Item.createTempTrigger(after: .insert { new in ItemAdded.callback(id: new.id) })
            """, prelude: Self.macroPrelude)
        #expect(missing != nil, "a missing field must not compile")
    }

    /// GRDB's `.immediate` scheduler means the main actor: ours was renamed,
    /// and the old spelling says so.
    @Test func theWriterQueueSchedulingIsNotCalledImmediate() throws {
        let diagnostics = try typecheck("""
            struct Payload: Decodable, Sendable { var title: String }
            func observe(_ dbQueue: DatabaseQueue) throws -> CallbackObservation {
                try dbQueue.observeCallback("x", as: Payload.self, scheduling: .immediate) { payload in print(payload.title) }
            }
            """, prelude: "import Foundation\nimport SQLiteTriggersGRDB\n")
        #expect(diagnostics?.contains("'immediate' has been renamed to 'onWriterQueue'") == true, "\(diagnostics ?? "compiled")")
    }

    @Test func aDroppedObservationTokenIsNoticed() throws {
        let grdbPrelude = """
            import Foundation
            import SQLiteTriggersGRDB

            """
        let kept = try typecheck("""
            func observe(_ db: Database) throws -> CallbackObservation {
                let observation = try db.observeCallback("reminderCompleted") { (title: String) in print(title) }
                return observation
            }
            """, prelude: grdbPrelude, warningsAsErrors: true)
        #expect(kept == nil, "\(kept ?? "")")
        for call in ["db.observeCallback(\"x\") { (title: String) in print(title) }",
                     "db.observeCallbacks(named: nil, delivery: .afterCommit) { _ in nil }"] {
            let dropped = try typecheck("func observe(_ db: Database) throws { try \(call) }",
                                        prelude: grdbPrelude, warningsAsErrors: true)
            #expect(dropped?.contains("is unused") == true, "dropping the token of \(call) must warn: \(dropped ?? "compiled silently")")
        }
    }
}
