import Foundation
import Testing

/// Every Swift example in the doc comments and DocC articles of Sources/
/// compiles. Each example becomes a namespace of its own: its types inside,
/// its statements in a function whose parameters are what examples take
/// for granted (`db`, `dbQueue`, `handle`, ...); `#sourceLocation` points
/// each diagnostic at the documentation line it comes from.
@Suite struct DocumentationExampleTests {
    struct Example {
        let file: String
        let line: Int
        let lines: [String]
    }

    /// Sections of the DocC articles whose first Swift block another test
    /// compiles and runs verbatim (ReadmeQuickStartTests compares it, line
    /// for line, with the code of a Readme*.swift file), with the names that
    /// code declares around it: compiled there, not again here.
    static let sectionsRunElsewhere = [
        "## Typed triggers", "## Every builder construct", "## Change feeds:",
        "## Durable change log", "## Sync-ready primary keys",
        "## The outbox",        // SyncingWithAServer.md: ArticleSyncTests
    ]

    /// Articles whose blocks need StructuredQueries, which this package may
    /// not depend on: built and run by hand against StructuredQueries 0.37.0
    /// in a package outside the repository, as the article says.
    static let articlesNeedingStructuredQueries = ["WithStructuredQueries.md"]

    /// The ```swift blocks of `///` comments and of .md files.
    static func examples() throws -> [Example] {
        let sources = packageRoot.appendingPathComponent("Sources")
        var examples: [Example] = []
        let files = FileManager.default.enumerator(atPath: sources.path)!.compactMap { $0 as? String }.sorted()
        for relativePath in files where relativePath.hasSuffix(".swift") || relativePath.hasSuffix(".md") {
            let text = try String(contentsOf: sources.appendingPathComponent(relativePath), encoding: .utf8)
            let isSwift = relativePath.hasSuffix(".swift")
            if articlesNeedingStructuredQueries.contains(where: relativePath.hasSuffix) { continue }
            var block: [String]?
            var start = 0
            var skipNextBlock = false
            for (index, rawLine) in text.components(separatedBy: "\n").enumerated() {
                let trimmed = rawLine.trimmingCharacters(in: .whitespaces)
                if !isSwift, block == nil, rawLine.hasPrefix("## ") {
                    skipNextBlock = sectionsRunElsewhere.contains(where: rawLine.hasPrefix)
                }
                var line = rawLine
                if isSwift {
                    guard trimmed.hasPrefix("///") else { block = nil; continue }
                    line = String(trimmed.dropFirst(3))
                    if line.hasPrefix(" ") { line.removeFirst() }
                }
                let content = line.trimmingCharacters(in: .whitespaces)
                if block == nil, content == "```swift" {
                    block = []
                    start = index + 2
                } else if block != nil, content.hasPrefix("```") {
                    if !skipNextBlock { examples.append(Example(file: "Sources/" + relativePath, line: start, lines: block!)) }
                    skipNextBlock = false
                    block = nil
                } else {
                    block?.append(line)
                }
            }
        }
        return examples
    }

    /// Top-level items of an example: declarations of types go to the
    /// namespace, the rest to the function.
    static func items(of lines: [String]) -> [(isTypeDeclaration: Bool, firstLine: Int, lines: [String])] {
        var items: [(Bool, Int, [String])] = []
        var depth = 0
        for (index, line) in lines.enumerated() {
            if depth == 0 {
                let head = line.trimmingCharacters(in: .whitespaces)
                let declaration = ["@TriggerTable", "@CallbackEvent", "struct ", "enum ", "final class ", "class ", "extension ",
                                   "@MainActor final class", "protocol "].contains { head.hasPrefix($0) }
                // Consecutive statements stay one chunk (`do {} catch {}`).
                if let last = items.last, !last.0 && !declaration || head.isEmpty {
                    items[items.count - 1].2.append(line)
                } else {
                    items.append((declaration, index, [line]))
                }
            } else {
                items[items.count - 1].2.append(line)
            }
            for character in line.replacingOccurrences(of: #""[^"]*""#, with: "", options: .regularExpression) {
                if "{([".contains(character) { depth += 1 }
                if "})]".contains(character) { depth -= 1 }
            }
        }
        return items
    }

    static let prelude = """
        import Foundation
        import GRDB
        import SQLiteTriggersGRDB
        import SQLiteTriggersMacros

        import SQLiteTriggersCSQLite

        @TriggerTable struct Reminder: Codable, FetchableRecord, PersistableRecord {
            var id: UUID
            var title: String
            var notes: String
            var status: Int
            var isCompleted: Bool
            var isFlagged: Bool
            var priority: Int?
            var position: Int
            var score: Double
            var dueDate: Date?
            var remindersListID: UUID
            var createdAt: Date?
            var updatedAt: Date?
        }
        @TriggerTable("remindersLists") struct RemindersList { var id: UUID; var title: String; var position: Int }
        @TriggerTable struct Tag { var id: UUID; var title: String }
        @TriggerTable struct ReminderTag { var id: UUID; var reminderID: UUID; var tagID: UUID }
        @TriggerTable("archivedReminders") struct Archive { var id: UUID; var title: String }
        @TriggerTable("reminderTitles") struct ReminderTitle { var id: UUID; var title: String }
        enum Priority: Int { case low, normal, high }
        @CallbackEvent struct ReminderCompleted: Sendable { var id: UUID; var title: String }
        struct Completed: Decodable, Sendable { var id: UUID; var title: String }
        let logger = (error: { (message: String) in print(message) }, ())
        func upload(_ event: ReminderCompleted) {}
        func upload(_ changes: [DurableChange<Reminder>]) async throws {}
        // For the parameters: an example may declare a Reminder of its own.
        typealias PreludeReminder = Reminder
        typealias PreludeRemindersList = RemindersList

        """

    static let parameters = """
        db: Database, dbQueue: DatabaseQueue, dbPool: DatabasePool, handle: OpaquePointer, \
        config: inout Configuration, migrator: inout DatabaseMigrator, rules: RuleSet, path: String, \
        syncQueue: DispatchQueue, appClock: (now: Date, ()), stampsCreation: Bool, defaultTitle: String, \
        arguments: CallbackArguments, stream: CallbackStream<CallbackRecord>, observation: CallbackObservation, view: TempView, change: RecordChange<PreludeReminder>, \
        id: UUID, list: PreludeRemindersList, \
        new: TriggerRow<PreludeReminder>, old: TriggerRow<PreludeReminder>, row: inout ColumnAssignments<PreludeReminder>
        """

    static func program(_ examples: [Example]) -> String {
        var source = prelude
        for (number, example) in examples.enumerated() {
            let namespace = "DocumentationExample\(number)"
            var declarations = "", statements = ""
            for item in items(of: example.lines) {
                let location = "#sourceLocation(file: \"\(example.file)\", line: \(example.line + item.firstLine))\n"
                var text = item.lines.joined(separator: "\n")
                if item.isTypeDeclaration, let name = text.firstMatch(of: /^extension (\w+)/)?.1 {
                    // Extensions cannot nest: qualify the example's own type.
                    let declared = example.lines.contains { $0.firstMatch(of: /^(?:@\w+(?:\([^)]*\))? )*(?:struct|enum|final class|class) (\w+)/)?.1 == name }
                    if declared { text = text.replacingOccurrences(of: "extension \(name)", with: "extension \(namespace).\(name)") }
                    source += location + text + "\n#sourceLocation()\n"
                } else if item.isTypeDeclaration {
                    declarations += location + text + "\n#sourceLocation()\n"
                } else {
                    statements += location + text + "\n#sourceLocation()\n"
                }
            }
            source += """
                enum \(namespace) {
                \(declarations)
                @MainActor static func run(\(parameters)) \(statements.contains("await ") ? "async " : "")throws {
                \(statements)
                }
                }

                """
        }
        return source
    }

    @Test func everyExampleCompiles() throws {
        let examples = try Self.examples()
        #expect(examples.count > 90, "the extraction found the examples")
        let program = Self.program(examples)
        // To read the generated program: SQLITETRIGGERS_DUMP_EXAMPLES=/tmp/examples.swift swift test ...
        if let dump = ProcessInfo.processInfo.environment["SQLITETRIGGERS_DUMP_EXAMPLES"] {
            try program.write(toFile: dump, atomically: true, encoding: .utf8)
        }
        let diagnostics = try typecheckSource(program)
        #expect(diagnostics == nil, "\(diagnostics ?? "")")
    }

    @Test func aBrokenExampleIsCaughtAtItsLine() throws {
        let broken = Example(file: "Sources/Broken.swift", line: 42, lines: ["try db.observeNothing()"])
        let diagnostics = try typecheckSource(Self.program([broken]))
        #expect(diagnostics?.contains("Sources/Broken.swift:42") == true, "\(diagnostics ?? "compiled")")
    }
}
