#!/usr/bin/env bash
# The whole test run behind `make test`: each stage prints its own
# "STAGE: N passed, N failed" line; this script adds them up and ends with
# the total as its last line.  A stage that dies before its summary counts
# as one failure.  Exits non-zero if anything failed.
#   PYTHON  the venv python with apsw (make provides it)
set -u
cd "$(dirname "$0")/.."
# shellcheck source=stages.sh
. Tests/stages.sh


# summarize_swift NAME LOG STATUS: Swift Testing's "Test run with N
# tests", less the tests marked failed, as NAME's summary line; every
# ThreadSanitizer report counts as a failure too, even in a passing test.
summarize_swift() {
  local name=$1 file=$2 status=$3 total failed warnings
  total=$(grep -oE 'Test run with [0-9]+ tests?' "$file" | grep -oE '[0-9]+' | tail -n 1)
  failed=$(grep -E 'Test [^ ]+\(.*\).* failed after' "$file" | grep -vc 'Test run with')
  warnings=$(grep -c 'WARNING: ThreadSanitizer' "$file")
  if [ -z "$total" ]; then total=0; failed=$((failed > 0 ? failed : 1)); fi
  if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  echo "$name: $((total - failed)) passed, $((failed + warnings)) failed"
}

swift_stage() {
  local swift_log status
  swift_log=$(mktemp)
  # Executables too: the tests run the sqlitetriggers-migrate command.
  swift build 2>&1 | tail -n 3
  # A log of its own: the stage's log is being written by stage() itself.
  swift test 2>&1 | tee "$swift_log"
  status=${PIPESTATUS[0]}
  summarize_swift swift "$swift_log" "$status"
  rm -f "$swift_log"
}

# Swift's tests again under ThreadSanitizer, in a build folder of their own
# so that the two builds do not undo each other.
tsan_stage() {
  local tsan_log status
  tsan_log=$(mktemp)
  swift build --sanitize=thread --scratch-path .build-tsan 2>&1 | tail -n 1
  swift test --sanitize=thread --scratch-path .build-tsan >"$tsan_log" 2>&1
  status=$?
  grep -E -A8 'WARNING: ThreadSanitizer' "$tsan_log" | head -n 60
  grep -E 'Test run with|failed after' "$tsan_log"
  summarize_swift tsan "$tsan_log" "$status"
  rm -f "$tsan_log"
}

# missing_toolchain NAME HINT: a stage whose toolchain is absent fails,
# saying what to install, rather than passing unseen.
missing_toolchain() {
  echo "$1: no toolchain for it; make test installs $2 (Tests/prerequisites.sh)"
  echo "$1: 0 passed, 1 failed"
}

# The durable log written and read by separate processes at once (Tests/processes).
# The Swift writer and consumer are an executable of the package.
processes_stage() {
  local dir
  dir=$(mktemp -d)
  swift build --product durable-log-process 2>&1 | tail -n 1
  "${PYTHON:-python3}" Tests/processes/durable_log.py "$dir" --transactions "${PROCESS_TRANSACTIONS:-4000}" \
    --swift "$(swift build --show-bin-path)/durable-log-process"
  rm -rf "$dir"
}

arm64_stage() {
  if ! command -v "${ARM64_CC:-aarch64-linux-gnu-gcc}" >/dev/null ||
     ! command -v qemu-aarch64 >/dev/null ||
     [ ! -e /usr/lib/aarch64-linux-gnu/libsqlite3.so ]; then
    missing_toolchain arm64 "gcc-aarch64-linux-gnu, qemu-user and libsqlite3-dev:arm64"
    return
  fi
  make --no-print-directory test-arm64
}

# 32-bit sizes: the same C tests built with gcc -m32.
i386_stage() {
  # build/ is per clone: unpack the i386 libsqlite3 here when the machine
  # has the 32-bit toolchain, so that make test on a fresh clone runs it.
  if { [ ! -e build/i386/usr/lib/i386-linux-gnu/libsqlite3.so ] ||
       [ ! -e build/i386/usr/include/i386-linux-gnu/asm/errno.h ]; } &&
     echo 'int main(void){return 0;}' | ${CC:-cc} -m32 -x c -o /dev/null - 2>/dev/null; then
    bash Tests/c/i386/fetch-sqlite.sh 2>&1 | tail -n 3
  fi
  if [ ! -e build/i386/usr/lib/i386-linux-gnu/libsqlite3.so ] ||
     ! echo 'int main(void){return 0;}' | ${CC:-cc} -m32 -x c -o /dev/null - 2>/dev/null; then
    missing_toolchain c32 "gcc-12-multilib and unpacks libsqlite3 (Tests/c/i386/fetch-sqlite.sh)"
    return
  fi
  make --no-print-directory test-32bit | sed -E 's/^c: ([0-9]+ passed)/c32: \1/'
}

# Fault injection runs beside the other stages: it is one thread, the
# longest stage (about 17 minutes), and most stages before the Swift ones
# leave the second core idle.  Its summary is counted at the end.
oom_log=$(mktemp)
oom_started=$SECONDS
env ASAN_OPTIONS=detect_leaks=1 build/test_oom >"$oom_log" 2>&1 &
oom_pid=$!

stage shell bash Tests/shell/run.sh
stage c build/test_c
# The same C tests on each ChaCha20 kernel this CPU has, forced.
for kernel in scalar vector; do
  stage c env SQLITETRIGGERS_CHACHA20=$kernel build/test_c
done
# Debian's SQLite 3.46.1 and 3.53.4, unpacked into build/ (Tests/versions).
stage versions bash Tests/versions/run.sh
stage sanitize bash Tests/sanitize.sh
stage fuzz bash Tests/fuzz/run.sh "${FUZZ_SMOKE_SECONDS:-60}"
stage python "${PYTHON:-python3}" Tests/python/run.py
# CPython's test_sqlite3 and apsw's own suite, without and with the
# extension on every connection: they must fail exactly the same tests.
stage neighbours "${PYTHON:-python3}" Tests/neighbours/suites.py build/libsqlitetriggers.so cpython apsw
stage processes processes_stage
stage apple env PYTHON="${PYTHON:-python3}" bash Tests/python/apple_shell_suites.sh
# Apple platforms: compiled and linked against the SDKs in APPLE_SDKS
# (make test APPLE_SDKS=DIR); skipped, and said so, without them.
apple_sdks_stage() {
  if [ -z "${APPLE_SDKS:-}" ]; then
    echo "apple-sdks: skipped: set APPLE_SDKS=DIR (iPhoneOS*.sdk, MacOSX*.sdk) to compile and link for Apple platforms"
    echo "apple-sdks: 0 passed, 0 failed"
    return
  fi
  bash Tests/apple/check.sh "$APPLE_SDKS"
}

stage apple-sdks apple_sdks_stage
stage arm64 arm64_stage
stage c32 i386_stage
stage swift swift_stage
# The durable log's suites (its net folding's randomized oracle among them)
# again on Debian's SQLite 3.46.1 and 3.53.4, unpacked by the versions stage:
# the swift stage's test binary, through each version's loader.
swift_versions_stage() {
  local version passed=0 failed=0 summary
  for version in 3.46.1 3.53.4; do
    SQLITETRIGGERS_EXPECTED_SQLITE=$version "build/sqlite-versions/$version/run" \
      "$(swift build --show-bin-path)/SQLiteTriggersPackageTests.xctest" --testing-library swift-testing \
      --filter 'DurableNetFoldingTests|DurableLogTests' >"$log.$version" 2>&1
    summary=$(summarize_swift swift-versions "$log.$version" $?)
    grep -E 'recorded an issue|failed after' "$log.$version" | head -n 20
    echo "SQLite $version: ${summary#swift-versions: }"
    passed=$((passed + $(echo "$summary" | sed -E 's/.*: ([0-9]+) passed.*/\1/')))
    failed=$((failed + $(echo "$summary" | sed -E 's/.* ([0-9]+) failed$/\1/')))
    rm -f "$log.$version"
  done
  echo "swift-versions: $passed passed, $failed failed"
}

stage swift-versions swift_versions_stage
# The DocC catalogs against the symbol graphs of the swift stage's build.
stage docs bash Tests/docs/check.sh
stage consumer bash Tests/consumer/run.sh
# Two devices syncing through a real PostgreSQL server (the example package).
stage sync bash Tests/sync/run.sh
stage tsan tsan_stage
# The fault injection started first: its output, once it has ended (waited
# for here: the stage's pipeline runs in a subshell, whose wait cannot).
wait "$oom_pid"
oom_seconds=$((SECONDS - oom_started))
oom_stage() {
  cat "$oom_log"
  echo "(oom ran for $oom_seconds s beside the other stages)"
}
stage oom oom_stage
rm -f "$oom_log"

if [ -s "$failures" ]; then
  echo "== what failed, as each stage said it"
  cat "$failures"
fi
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
