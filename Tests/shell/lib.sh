# Helpers for the shell tests: each check drives the real sqlite3 CLI with
# `.load` and compares everything it prints (stdout and stderr) with the
# expected text.  Sourced by run.sh; the variables come from there.

PASSED=0
FAILED=0

# sql SCRIPT [DB]: run SCRIPT in a fresh sqlite3 process with the extension.
sql() {
  printf '.load %s\n%s\n' "$EXT" "$1" | "$SQLITE3" -batch "${2:-:memory:}" 2>&1
}

pass() { PASSED=$((PASSED + 1)); [ -n "${VERBOSE:-}" ] && echo "ok   $1"; return 0; }

fail() {
  FAILED=$((FAILED + 1))
  echo "FAIL $1"
  printf '  expected: %s\n  actual:   %s\n' "$2" "$3" | head -n 20
}

# Shells since SQLite 3.44 print "Error near line N: MESSAGE" where older
# ones print "Runtime error near line N: MESSAGE (CODE)"; with
# NORMALIZE_SHELL_ERRORS set (Tests/versions/run.sh), both sides of a
# comparison are read in the newer form.
normalized() {
  if [ -n "${NORMALIZE_SHELL_ERRORS:-}" ]; then
    printf '%s' "$1" | sed -E -e 's/^Runtime error near line ([0-9]+): (.*) \([0-9]+\)$/Error near line \1: \2/' \
      -e 's/^Runtime error near line /Error near line /'
  else
    printf '%s' "$1"
  fi
}

# check NAME SQL EXPECTED [DB]
check() {
  local actual
  actual=$(sql "$2" "${4:-:memory:}")
  if [ "$(normalized "$actual")" == "$(normalized "$3")" ]; then pass "$1"; else fail "$1" "$3" "$actual"; fi
}

# check_same NAME ACTUAL EXPECTED: compare two outputs already computed.
check_same() {
  if [ "$(normalized "$2")" == "$(normalized "$3")" ]; then pass "$1"; else fail "$1" "$3" "$2"; fi
}

# A fresh scratch database path, removed when the run ends.
scratch_db() {
  local path
  path="$SCRATCH/db$RANDOM$RANDOM.sqlite"
  rm -f "$path"
  echo "$path"
}

# previous_release REV NAME: the library an earlier commit REV built, made
# from git at test time into build/NAME-REV/ (never kept in the tree, and
# built once); prints its path without ".so", which exists when it built.
previous_release() {
  local root dir src
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  dir=$root/build/$2-$1
  if [ ! -e "$dir/libsqlitetriggers.so" ]; then
    src=$(mktemp -d "$SCRATCH/$2.XXXXXX")
    if git -C "$root" archive "$1" ext | tar -x -C "$src" &&
       env -u LD_PRELOAD ${CC:-cc} -O2 -shared -fPIC -fvisibility=hidden \
         -o "$src/libsqlitetriggers.so" "$src"/ext/*.c -lpthread -ldl; then
      mkdir -p "$dir" && mv "$src/libsqlitetriggers.so" "$dir/libsqlitetriggers.so"
    fi
  fi
  echo "$dir/libsqlitetriggers"
}
