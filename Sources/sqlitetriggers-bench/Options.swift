import Foundation

/// What `sqlitetriggers-bench` was asked to run: the one parser of its
/// arguments.
///
///     sqlitetriggers-bench                        every suite, in order
///     sqlitetriggers-bench --change-feeds         the change-feed suite alone
///     sqlitetriggers-bench --rules                up to and with the rules suite
///     sqlitetriggers-bench --durable-log          the durable-log suite alone
///     sqlitetriggers-bench --durable-backlog      its backlog row alone (to profile it)
///     sqlitetriggers-bench --server               the server's shape alone (16 and 64 writers)
///     sqlitetriggers-bench --server-write CONFIGURATION TRANSACTIONS
///         one configuration's single-row transactions, for Tests/bench/server_instructions.py
///     sqlitetriggers-bench --observers            the observer suite alone
///     sqlitetriggers-bench --observer-write VARIANT ROWS
///         one measured UPDATE, for Tests/bench/observer_instructions.py
///     sqlitetriggers-bench --migration            the migration suite alone
///     sqlitetriggers-bench --migration-write VARIANT CHILDREN
///         one measured migration, for Tests/bench/migration_instructions.py
///     sqlitetriggers-bench --change-feed-write VARIANT WRITE ROWS
///         one measured write, for Tests/bench/feed_instructions.py
///     sqlitetriggers-bench --migration-memory N   one migration's peak memory
enum BenchMode: Equatable {
    case all
    case changeFeeds
    case throughRules
    case durableLog
    case durableBacklog
    case server
    case serverWrite(configuration: Int, transactions: Int)
    case observers
    case observerWrite(variant: Int, rows: Int)
    case migration
    case changeFeedWrite(variant: Int, write: Int, rows: Int)
    case migrationWrite(variant: Int, children: Int)
    case migrationMemory(rows: Int)

    init(arguments: [String]) {
        let numbers = arguments.dropFirst().map { Int($0) }
        switch (arguments.first, numbers.count) {
        case (nil, _): self = .all
        case ("--change-feeds", 0): self = .changeFeeds
        case ("--rules", 0): self = .throughRules
        case ("--durable-log", 0): self = .durableLog
        case ("--durable-backlog", 0): self = .durableBacklog
        case ("--server", 0): self = .server
        case ("--server-write", 2):
            guard let configuration = numbers[0], let transactions = numbers[1] else { Self.usage(arguments) }
            self = .serverWrite(configuration: configuration, transactions: transactions)
        case ("--observers", 0): self = .observers
        case ("--observer-write", 2):
            guard let variant = numbers[0], let rows = numbers[1] else { Self.usage(arguments) }
            self = .observerWrite(variant: variant, rows: rows)
        case ("--migration", 0): self = .migration
        case ("--change-feed-write", 3):
            guard let variant = numbers[0], let write = numbers[1], let rows = numbers[2] else { Self.usage(arguments) }
            self = .changeFeedWrite(variant: variant, write: write, rows: rows)
        case ("--migration-write", 2):
            guard let variant = numbers[0], let children = numbers[1] else { Self.usage(arguments) }
            self = .migrationWrite(variant: variant, children: children)
        case ("--migration-memory", 1):
            guard let rows = numbers[0] else { Self.usage(arguments) }
            self = .migrationMemory(rows: rows)
        default: Self.usage(arguments)
        }
    }

    /// Unknown arguments: said on standard error, with where the modes are
    /// listed, and exit status 2 (a refusal, not a crash).
    private static func usage(_ arguments: [String]) -> Never {
        FileHandle.standardError.write(Data(
            "sqlitetriggers-bench: unknown arguments \(arguments); its modes are listed in Sources/sqlitetriggers-bench/Options.swift\n".utf8))
        exit(2)
    }
}
