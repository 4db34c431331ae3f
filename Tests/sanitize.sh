#!/usr/bin/env bash
# make sanitize: the shell and C tests against the ASan+UBSan build, and
# the extension inside the real sqlite3 CLI under LeakSanitizer.  Prints
# "sanitize: N passed, N failed" (make test runs it as a stage).
#   ASAN_RUNTIME  the ASan runtime to preload into the uninstrumented CLI
set -u
cd "$(dirname "$0")/.."
# shellcheck source=stages.sh
. Tests/stages.sh

# The shell suite builds and links C programs too, which a preloaded
# LeakSanitizer would fault for their own leaks: leaks are checked below.
stage shell env ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 LD_PRELOAD="$ASAN_RUNTIME" \
  EXT=build/sanitize/libsqlitetriggers bash Tests/shell/run.sh
stage c env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build/sanitize/test_c

# The loadable library in the CLI, under LeakSanitizer: the paths where
# SQLite hands memory back to us, or does not: a change feed's capture,
# installed and removed, in mode 'rows' and in mode 'net', and a refused DROP of the pending table last, so
# that nothing later takes the vtab's error message before the close.
out=$(printf '%s\n' ".load build/sanitize/libsqlitetriggers" \
  "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE, n INT DEFAULT 1);" \
  "SELECT sqlitetriggers_change_feed('t');" \
  "INSERT INTO t(v) VALUES ('a'); INSERT OR REPLACE INTO t(id, v) VALUES (2, 'a');" \
  "SELECT sqlitetriggers_change_feed('t', 'off');" \
  "SELECT sqlitetriggers_change_feed('t', 'net');" \
  "BEGIN; INSERT INTO t(v) VALUES ('b'); INSERT OR REPLACE INTO t(id, v) VALUES (3, 'b'); UPDATE t SET n = 2; COMMIT;" \
  "SELECT sqlitetriggers_change_feed('t', 'off');" \
  "SELECT count(*) FROM swift_callback_log;" \
  "DROP TABLE swift_callback_pending;" |
  ASAN_OPTIONS=detect_leaks=1 LD_PRELOAD="$ASAN_RUNTIME" sqlite3 -batch :memory: 2>&1)
if [[ $out == *"LeakSanitizer"* || $out != "rows"*"off"*"net"*"off"*"5"*"may not be dropped"* ]]; then
  echo "FAIL the extension in the sqlite3 CLI leaks nothing"
  echo "$out" | head -n 20
  total_failed=$((total_failed + 1))
else
  total_passed=$((total_passed + 1))
fi

echo "sanitize: $total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
