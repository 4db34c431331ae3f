#!/usr/bin/env bash
# An app that depends on this package, as the README's "Adding it to an app"
# shows (its Package.swift block, verbatim, and a main.swift), beside GRDB
# required from 7.0.0: it must resolve and build against the ranges our
# Package.swift declares. The package is reached through a link named
# SQLiteTriggers, the directory name SwiftPM takes as its identity.
# Then the same app again with swift-syntax held at 600.0.1, the lowest
# version of the range we declare: our macro plugin must build with it.
# The app is built for release, as an App Store archive is: the optimizer
# runs passes a debug build never does (a compiler crash in them once hid
# behind debug builds).
# Prints "consumer: N passed, N failed".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$root/build/consumer
rm -rf "$work/RemindersApp" && mkdir -p "$work/RemindersApp/Sources/RemindersApp"
ln -sfn "$root" "$work/SQLiteTriggers"
# The README block between its markers, without them.
awk '/<!-- BEGIN consumer Package.swift -->/{on=1; next} /<!-- END consumer Package.swift -->/{on=0} on' "$root/README.md" |
  sed '/^```/d' > "$work/RemindersApp/Package.swift"
cat > "$work/RemindersApp/Sources/RemindersApp/main.swift" <<'SWIFT'
import Foundation
import SQLiteTriggersGRDB
import SQLiteTriggersMacros

@TriggerTable struct Reminder: Codable, FetchableRecord, PersistableRecord { let id: UUID; var title: String; var updatedAt: Date? }

var config = Configuration()
config.prepareDatabase { db in try db.installSQLiteTriggers() }
let dbQueue = try DatabaseQueue(configuration: config)
try dbQueue.write { db in
    try db.execute(sql: "CREATE TABLE reminders(id TEXT PRIMARY KEY DEFAULT (uuidv7()), title TEXT, updatedAt TEXT)")
    try Reminder.afterUpdateTouch(\.updatedAt).execute(db)
    try db.execute(sql: "INSERT INTO reminders(title) VALUES ('Buy milk'); UPDATE reminders SET title = 'Buy oat milk'")
    // GRDB's query interface on described columns, with our imports alone.
    let milk = try Reminder.filter { $0.title == "Buy oat milk" && $0.title != "Buy milk" }.fetchCount(db)
    print(try String.fetchOne(db, sql: "SELECT uuid_version(id) || ' ' || (updatedAt IS NOT NULL) FROM reminders")!, milk)
}
SWIFT
# The manifest's GRDB product: `import GRDB` beside ours.
cat > "$work/RemindersApp/Sources/RemindersApp/GRDBNames.swift" <<'SWIFT'
import GRDB
let titleColumn = GRDB.Column("title")
SWIFT
passed=0 failed=0
# Built once with the newest versions the ranges resolve to, in release
# (what an archive builds, and what a debug build of the same versions
# would add nothing to), then in debug with the lowest swift-syntax.
if [ ! -s "$work/RemindersApp/Package.swift" ]; then
  echo "FAIL the README has no consumer Package.swift block"; failed=$((failed + 1))
elif (set -o pipefail; cd "$work/RemindersApp" && swift build -c release 2>&1 | tail -n 5); then
  output=$(cd "$work/RemindersApp" && .build/release/RemindersApp 2>&1)
  if [ "$output" = "7 1 1" ]; then passed=$((passed + 1)); else
    echo "FAIL the app ran (release) but printed: $output"; failed=$((failed + 1)); fi
else
  echo "FAIL an app depending on the package does not build in release"; failed=$((failed + 1))
fi

if (set -o pipefail; cd "$work/RemindersApp" &&
    swift package resolve swift-syntax --version 600.0.1 2>&1 | tail -n 2 &&
    grep -A8 '"swift-syntax"' Package.resolved | grep -q '"version" : "600.0.1"' &&
    swift build 2>&1 | tail -n 2) &&
   [ "$(cd "$work/RemindersApp" && .build/debug/RemindersApp 2>&1)" = "7 1 1" ]; then
  passed=$((passed + 1))
else
  echo "FAIL the app does not build or run with swift-syntax 600.0.1"; failed=$((failed + 1))
fi
echo "consumer: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
