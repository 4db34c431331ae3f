#!/usr/bin/env bash
# The change feeds and the rest of the extension on the SQLite versions
# that bracket Apple's (3.43.2 and 3.51.0): Debian's 3.46.1 and 3.53.4,
# unpacked by Tests/versions/fetch.sh and run through their own loader.
#   - the C tests (build/test_c), the randomized session-extension oracle
#     of the change capture among them, in both recursive_triggers modes,
#     on each version;
#   - the shell suites with that version's sqlite3: 3.46.1's links
#     libsqlite3, so the change-feed suite runs; 3.53.4's (forky) embeds
#     SQLite and hides the preupdate hook from extensions, so there the
#     feed suite is left to the C tests and the SQL-level suites run.
# The system's 3.40.1 runs all of it in the other stages.
# Prints "versions: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
passed=0 failed=0
count() {   # count SUMMARY: add "NAME: N passed, N failed"
  if [[ $1 =~ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
  else
    echo "FAIL no summary: $1"; failed=$((failed + 1))
  fi
}
if ! versions=$(bash Tests/versions/fetch.sh 2>&1); then
  echo "$versions"
  echo "FAIL could not unpack Debian's newer SQLite (Tests/versions/fetch.sh)"
  echo "versions: 0 passed, 1 failed"
  exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for version in $versions; do
  root=build/sqlite-versions/$version
  "$root/run" build/test_c >"$log" 2>&1
  grep -E '^FAIL' "$log" | head -n 20
  if grep -qx "     SQLite $version" "$log"; then passed=$((passed + 1)); else
    echo "FAIL the C tests should run on SQLite $version: $(head -n 1 "$log")"; failed=$((failed + 1))
  fi
  summary=$(grep -E '^c: ' "$log" | tail -n 1)
  echo "SQLite $version, C tests and the capture oracle: ${summary#c: }"
  count "$summary"
  case $version in
    3.46.*) suites="change_feed callback durable_log durable_log_sync log_forgery log_rules log_upgrade log_upgrade_format2 uuid time controls install" ;;
    *)      suites="callback durable_log durable_log_sync log_forgery log_rules log_upgrade log_upgrade_format2 uuid time controls install" ;;
  esac
  seen=$("$root/sqlite3" :memory: "SELECT sqlite_version()" 2>&1)
  if [ "$seen" = "$version" ]; then passed=$((passed + 1)); else
    echo "FAIL its shell should run SQLite $version: $seen"; failed=$((failed + 1))
  fi
  NORMALIZE_SHELL_ERRORS=1 SQLITE3=$PWD/$root/sqlite3 SUITES=$suites bash Tests/shell/run.sh >"$log" 2>&1
  grep -E '^FAIL|^  ' "$log" | head -n 40
  summary=$(tail -n 1 "$log")
  echo "SQLite $version, shell suites ($suites): ${summary#shell: }"
  count "$summary"
done
echo "versions: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
