// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "SQLiteTriggers",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "SQLiteTriggers", targets: ["SQLiteTriggers"]),
        .library(name: "SQLiteTriggersGRDB", targets: ["SQLiteTriggersGRDB"]),
        .library(name: "SQLiteTriggersMacros", targets: ["SQLiteTriggersMacros"]),
    ],
    // Ranges, never pins: this package lives in other people's apps, whose
    // graphs must still resolve. GRDB from 7.10.0, the lowest version
    // tested; swift-syntax 600 to 604 (make test builds the macros with
    // 600.0.1 and with the newest in range: Tests/consumer/run.sh).
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", "7.10.0"..<"8.0.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"605.0.0"),
        // sqlitetriggers-migrate's command line.
        .package(url: "https://github.com/apple/swift-argument-parser", "1.5.0"..<"2.0.0"),
        .package(url: "https://github.com/pointfreeco/swift-snapshot-testing", from: "1.19.7"),
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
        // `swift package generate-documentation` (the Documentation.docc catalogs).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The system libsqlite3, the one GRDB links too: the SDK's on Apple
        // platforms, libsqlite3-dev's on Linux, whose header is on the
        // default include path (no pkg-config, no Homebrew, as GRDB does).
        // Namespaced: another package's "CSQLite" must not collide with it.
        .systemLibrary(
            name: "SQLiteTriggersCSQLite",
            path: "Sources/SQLiteTriggersCSQLite",
            providers: [.apt(["libsqlite3-dev"])]),
        // The C extension in ext/, compiled into the app with SQLITE_CORE.
        .target(
            name: "CSQLiteTriggers",
            dependencies: ["SQLiteTriggersCSQLite"],
            path: "ext",
            publicHeadersPath: "include",
            cSettings: [.define("SQLITE_CORE")]),
        // The core: any sqlite3* handle, no GRDB.
        .target(
            name: "SQLiteTriggers",
            dependencies: ["CSQLiteTriggers", "SQLiteTriggersCSQLite"]),
        // GRDB integration.
        .target(
            name: "SQLiteTriggersGRDB",
            dependencies: [
                "SQLiteTriggers",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        // @Table, @Column, @Ephemeral and @CallbackEvent: the compiler plugin,
        // and the module that declares them (apart, so that apps without
        // macros never build swift-syntax).
        .macro(
            name: "SQLiteTriggersMacroPlugin",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]),
        .target(
            name: "SQLiteTriggersMacros",
            dependencies: ["SQLiteTriggers", "SQLiteTriggersMacroPlugin"]),
        // make demo: the main job, end to end.
        .executableTarget(
            name: "reminders-demo",
            dependencies: ["SQLiteTriggersGRDB", "SQLiteTriggersMacros"]),
        // The primary-key migration as a command, for shell users.
        .executableTarget(
            name: "sqlitetriggers-migrate",
            dependencies: ["SQLiteTriggersGRDB", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // make bench: the Swift observers against GRDB's own tools, and the
        // change feeds against SQLite's session extension (a bench-only shim).
        .target(
            name: "SQLiteTriggersBenchSession",
            dependencies: ["SQLiteTriggersCSQLite"]),
        .executableTarget(
            name: "sqlitetriggers-bench",
            dependencies: ["SQLiteTriggersGRDB", "SQLiteTriggersMacros", "SQLiteTriggersBenchSession", "SQLiteTriggersCSQLite"]),
        // A writer and a consumer of the durable log in processes of their
        // own, for Tests/processes/durable_log.py (not a product).
        .executableTarget(
            name: "durable-log-process",
            dependencies: ["SQLiteTriggersGRDB"],
            path: "Tests/processes/swift"),
        // The core on its own, on raw sqlite3 handles.
        .testTarget(
            name: "SQLiteTriggersTests",
            dependencies: ["SQLiteTriggers", "SQLiteTriggersCSQLite"]),
        .testTarget(
            name: "SQLiteTriggersGRDBTests",
            dependencies: [
                "SQLiteTriggersGRDB",
                "SQLiteTriggersMacros",
                .product(name: "InlineSnapshotTesting", package: "swift-snapshot-testing"),
            ],
            // Read by path at run time (StructuredQueriesCoexistenceTests).
            exclude: ["Fixtures"]),
        .testTarget(
            name: "SQLiteTriggersMacroPluginTests",
            dependencies: [
                "SQLiteTriggersMacroPlugin",
                .product(name: "MacroTesting", package: "swift-macro-testing"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
