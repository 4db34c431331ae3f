#!/usr/bin/env bash
# Runs every Tests/shell/test_*.sh against the real sqlite3 CLI.
#   EXT      the library to .load (default build/libsqlitetriggers)
#   SQLITE3  the CLI (default sqlite3)
#   VERBOSE  set to list passing checks too
# Prints "shell: N passed, N failed" and exits non-zero on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
EXT=${EXT:-build/libsqlitetriggers}
SQLITE3=${SQLITE3:-sqlite3}
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

# shellcheck source=lib.sh
. "$here/lib.sh"

for suite in "$here"/test_*.sh; do
  [ -n "${VERBOSE:-}" ] && echo "== $(basename "$suite")"
  # shellcheck disable=SC1090
  . "$suite"
done

echo "shell: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
