#!/usr/bin/env bash
# The SQL-level shell suites (functions, swift_callback() semantics, the
# schema guard, the test controls, the durable log) against each SQLite
# version Apple ships,
# with recursive_triggers OFF and ON (Apple's build defaults to ON): the
# sqlite3 CLI there is Tests/python/apsw_cli.py over apsw's wheel of that
# version (make installs them into build/apple-apsw).  The change-feed
# suite is not among them: apsw hides the preupdate hook, and
# test_apple_sqlite_versions.py checks that feeds refuse there.
# Prints "apple: N passed, N failed" (every check of every run).
#   PYTHON  the venv python (make provides it)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-$root/build/venv/bin/python}
python=$(cd "$(dirname "$python")" && pwd)/$(basename "$python")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
for version in 3.39.4.0 3.43.2.0 3.51.0.0; do
  for recursive in 0 1; do
    if [ ! -d "$root/build/apple-apsw/$version" ]; then
      echo "FAIL build/apple-apsw/$version is missing: make installs it"; failed=$((failed + 1)); continue
    fi
    cli="$work/sqlite3-$version-$recursive"
    printf '#!/bin/sh\nAPSW_RECURSIVE_TRIGGERS=%s PYTHONPATH=%s exec %s %s "$@"\n' \
      "$recursive" "$root/build/apple-apsw/$version" "$python" "$root/Tests/python/apsw_cli.py" > "$cli"
    chmod +x "$cli"
    # The stand-in runs the version and the mode it is meant to.
    seen=$(printf 'PRAGMA recursive_triggers;\nSELECT sqlite_version();\n' | "$cli" 2>&1)
    if [ "$seen" == "$recursive
${version%.0}" ]; then passed=$((passed + 1)); else
      echo "FAIL the stand-in CLI should run SQLite ${version%.0} with recursive_triggers=$recursive: $seen"; failed=$((failed + 1))
    fi
    summary=$(cd "$root" && SQLITE3=$cli SUITES="uuid time callback schema_guard controls durable_log durable_log_sync log_forgery log_rules" \
      bash Tests/shell/run.sh 2>&1 | tee "$work/log" | tail -n 1)
    grep -E '^FAIL|^  ' "$work/log" | head -n 40
    echo "SQLite ${version%.0} (apsw), recursive_triggers=$recursive: ${summary#shell: }"
    if [[ $summary =~ ^shell:\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
      passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
    else
      failed=$((failed + 1))
    fi
  done
done
echo "apple: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
