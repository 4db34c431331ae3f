#!/usr/bin/env bash
# The DocC catalogs build without a warning: each library's symbol graph is
# extracted from the debug build `swift test` made (.build/debug), then
# `docc convert` builds its catalog against it, as
# `swift package generate-documentation --target NAME` does, in seconds
# instead of minutes (the plugin rebuilds everything for symbol graphs).
# Any warning or error (an unresolved ``symbol`` or <doc:article>, a
# malformed directive) fails.  Prints "docs: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
modules=.build/debug/Modules
[ -d "$modules" ] || modules=.build/debug
for target in SQLiteTriggers SQLiteTriggersGRDB SQLiteTriggersMacros; do
  mkdir -p "$work/$target"
  if ! swift-symbolgraph-extract -module-name "$target" -I "$modules" \
      -target "$(uname -m)-unknown-linux-gnu" -output-dir "$work/$target" \
      -minimum-access-level public -emit-extension-block-symbols -I ext/include \
      -Xcc -fmodule-map-file=.build/checkouts/GRDB.swift/Sources/GRDBSQLite/module.modulemap \
      -Xcc -fmodule-map-file=Sources/SQLiteTriggersCSQLite/module.modulemap \
      -Xcc -fmodule-map-file=.build/debug/CSQLiteTriggers.build/module.modulemap >"$work/$target.log" 2>&1; then
    echo "FAIL $target: its symbol graph could not be extracted (run swift build first):"
    head -n 20 "$work/$target.log"
    failed=$((failed + 1)); continue
  fi
  docc convert "Sources/$target/Documentation.docc" --additional-symbol-graph-dir "$work/$target" \
    --fallback-display-name "$target" --fallback-bundle-identifier "$target" \
    --output-path "$work/$target.doccarchive" >"$work/$target.docc.log" 2>&1
  status=$?
  if [ "$status" -ne 0 ] || grep -qE '^(warning|error)' "$work/$target.docc.log"; then
    echo "FAIL $target's DocC catalog builds without a warning:"
    grep -E -A6 '^(warning|error)' "$work/$target.docc.log" | head -n 60
    failed=$((failed + 1))
  else
    echo "ok   $target's DocC catalog builds without a warning"
    passed=$((passed + 1))
  fi
done
echo "docs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
