#!/usr/bin/env bash
# Runs every Tests/shell/test_*.sh against the real sqlite3 CLI.
#   EXT      the library to .load (default build/libsqlitetriggers)
#   SQLITE3  the CLI (default sqlite3)
#   VERBOSE  set to list passing checks too
#   SUITES   the suites to run, by name (default: every test_*.sh)
# Prints "shell: N passed, N failed" and exits non-zero on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
EXT=${EXT:-build/libsqlitetriggers}
SQLITE3=${SQLITE3:-sqlite3}
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

# shellcheck source=lib.sh
. "$here/lib.sh"

suites=()
if [ -n "${SUITES:-}" ]; then
  for name in $SUITES; do suites+=("$here/test_$name.sh"); done
else
  suites=("$here"/test_*.sh)
fi
for suite in "${suites[@]}"; do
  [ -n "${VERBOSE:-}" ] && echo "== $(basename "$suite")"
  # shellcheck disable=SC1090
  . "$suite"
done

echo "shell: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
