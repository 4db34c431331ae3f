import Foundation
import Testing

/// An app that imports StructuredQueries beside our modules must find no
/// name twice. StructuredQueries cannot be resolved here, so a stand-in
/// module named `StructuredQueries` declares every public top-level name of
/// the real one (Fixtures/structured-queries-names.txt), and a source that
/// imports it, SQLiteTriggersGRDB and SQLiteTriggersMacros uses each of
/// them, and ours, unqualified.
@Suite struct StructuredQueriesCoexistenceTests {
    static func structuredQueriesNames() throws -> [String] {
        let list = packageRoot.appendingPathComponent("Tests/SQLiteTriggersGRDBTests/Fixtures/structured-queries-names.txt")
        return try String(contentsOf: list, encoding: .utf8).split(separator: "\n")
            .map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
    }

    static func isFunction(_ name: String) -> Bool { name.drop { $0 == "_" }.first?.isLowercase == true }

    /// Emits the stand-in module into a fresh folder and returns the folder.
    static func emitStandIn(declaring names: [String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sq-standin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let source = names.map { isFunction($0) ? "public func \($0)() {}" : "public enum \($0) {}" }.joined(separator: "\n")
        let file = folder.appendingPathComponent("StructuredQueries.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let (status, output) = try runProcess(URL(fileURLWithPath: "/usr/bin/env"), [
            "swiftc", "-emit-module", "-parse-as-library", "-module-name", "StructuredQueries",
            "-emit-module-path", folder.appendingPathComponent("StructuredQueries.swiftmodule").path, file.path])
        #expect(status == 0, "\(output)")
        return folder
    }

    /// Every StructuredQueries name, and ours, used unqualified.
    static func appSource(using names: [String]) -> String {
        """
        import Foundation
        import StructuredQueries
        import SQLiteTriggersGRDB
        import SQLiteTriggersMacros

        @TriggerTable struct Reminder {
            let id: UUID
            @TriggerColumn("done") var isCompleted: Bool
            @TriggerIgnored var isSelected = false
        }
        let trigger: TempTrigger = Reminder.createTempTrigger(after: .update(of: \\.isCompleted) { _, new in
            .callback("completed", new.id)
        })
        let column = ColumnDescription<UUID>("id", primaryKey: true)
        func label(_ done: TypedSQL<Bool>) -> TypedSQL<String> { SQLCase().when(done, then: "done").else("open") }
        let conflict = ConflictAlgorithm.replace
        func use(_ db: Database, _ queue: DatabaseQueue, _ observation: CallbackObservation) {}

        """ + names.map { isFunction($0) ? "let _: () -> Void = \($0)" : "_ = \($0).self" }.joined(separator: "\n")
    }

    @Test func noNameIsDeclaredTwice() throws {
        let names = try Self.structuredQueriesNames()
        #expect(names.count > 100, "the list holds StructuredQueries' names")
        let folder = try Self.emitStandIn(declaring: names)
        defer { try? FileManager.default.removeItem(at: folder) }
        let diagnostics = try typecheckSource(Self.appSource(using: names), extraArguments: ["-I", folder.path])
        #expect(diagnostics == nil, "\(diagnostics ?? "")")
    }

    /// The control: a stand-in that does declare one of our names makes the
    /// same source fail, so the check above can fail.
    @Test func aSharedNameWouldBeFound() throws {
        let names = try Self.structuredQueriesNames() + ["TempTrigger"]
        let folder = try Self.emitStandIn(declaring: names)
        defer { try? FileManager.default.removeItem(at: folder) }
        let diagnostics = try typecheckSource(Self.appSource(using: names), extraArguments: ["-I", folder.path])
        #expect(diagnostics?.contains("'TempTrigger' is ambiguous") == true, "\(diagnostics ?? "compiled")")
    }
}
