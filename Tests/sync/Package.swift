// swift-tools-version:6.1
// Two devices syncing their notes through a PostgreSQL server: the example
// of the "Syncing with a server" article, run by `make test`
// (Tests/sync/run.sh). A package of its own, so that no app that depends on
// SQLiteTriggers ever resolves PostgresNIO.
import Foundation
import PackageDescription

// SQLiteTriggers is this repository, two folders up; SwiftPM names a
// package reached by path after its folder, whatever the clone is called.
let repository = URL(fileURLWithPath: Context.packageDirectory).appendingPathComponent("../..").standardizedFileURL

let package = Package(
    name: "TwoDeviceSync",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(path: repository.path),
        .package(url: "https://github.com/groue/GRDB.swift", "7.10.0"..<"8.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio", "1.33.0"..<"2.0.0"),
        .package(url: "https://github.com/apple/swift-log", "1.5.0"..<"2.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "two-device-sync",
            dependencies: [
                .product(name: "SQLiteTriggersGRDB", package: repository.lastPathComponent),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
    ]
)
