// make bench: SQLiteTriggers against its peers, in one process, as suites
// (as SQLite's test/speedtest1.c runs its tests): each suite prints ROW
// lines for Tests/bench/report.py. Options.swift lists the modes.
//
//   ObserverSuite.swift     Swift observers against GRDB's DatabaseFunction
//                           and TransactionObserver
//   ChangeFeedSuite.swift   change feeds against SQLite's session extension
//                           and GRDB's TransactionObserver + fetch
//   RulesSuite.swift        the six Reminders rules, from the builders and
//                           by hand
//   MigrationSuite.swift    the primary-key migration against hand-written
//                           SQL, and its peak memory
//   DurableLogSuite.swift   the durable log against the same triggers by
//                           hand, PowerSync-style capture and no capture
//   ServerSuite.swift       a server's requests, 16 and 64 at once, with
//                           each part of the library against none of it
//   ServerWakeupSuite.swift another process's commits seen under that load
import Foundation

switch BenchMode(arguments: Array(CommandLine.arguments.dropFirst())) {
case .migrationMemory(let rows):
    try migrationMemoryChild(rows: rows)
case .changeFeedWrite(let variant, let write, let rows):
    try changeFeedWrite(variant: variant, write: write, rows: rows)
case .changeFeeds:
    try changeFeedSuite()
case .durableLog:
    try durableLogSuite()
case .durableBacklog:
    try durableBacklogOnly()
case .server:
    try serverSuite()
    try serverWakeupSuite()
case .serverWrite(let configuration, let transactions):
    try serverWrite(configuration: configuration, transactions: transactions)
case .observers:
    try observerSuite()
case .observerWrite(let variant, let rows):
    try observerWrite(variant: variant, rows: rows)
case .migration:
    try migrationSuite()
case .migrationWrite(let variant, let children):
    try migrationWrite(variant: variant, children: children)
case .throughRules:
    try observerSuite()
    try changeFeedSuite()
    try rulesSuite()
case .all:
    try observerSuite()
    try changeFeedSuite()
    try rulesSuite()
    try migrationSuite()
    try durableLogSuite()
    try serverSuite()
    try serverWakeupSuite()
}
