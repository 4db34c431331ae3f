#!/usr/bin/env bash
# The whole test run behind `make test`: each stage prints its own
# "STAGE: N passed, N failed" line; this script adds them up and ends with
# the total as its last line.  A stage that dies before its summary counts
# as one failure.  Exits non-zero if anything failed.
#   PYTHON  the venv python with apsw (make provides it)
set -u
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
total_passed=0
total_failed=0

# stage NAME COMMAND...: run it, echo its output, add up its summary line.
stage() {
  local name=$1 summary passed failed
  shift
  echo "== $name"
  "$@" 2>&1 | tee "$log"
  summary=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed$" "$log" | tail -n 1)
  if [ -z "$summary" ]; then
    echo "$name: no summary line; counted as one failure"
    total_failed=$((total_failed + 1))
    return
  fi
  passed=$(echo "$summary" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
  failed=$(echo "$summary" | sed -E 's/.* ([0-9]+) failed$/\1/')
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
}

# swift test's own lines, turned into a summary line of the same form:
# Swift Testing's "Test run with N tests", less the tests marked failed.
swift_stage() {
  # Executables too: the tests run the sqlitetriggers-migrate command.
  swift build 2>&1 | tail -n 3
  swift test 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]} total failed
  total=$(grep -oE 'Test run with [0-9]+ tests?' "$log" | grep -oE '[0-9]+' | tail -n 1)
  failed=$(grep -E 'Test [^ ]+\(.*\).* failed after' "$log" | grep -vc 'Test run with')
  if [ -z "$total" ]; then total=0; failed=$((failed > 0 ? failed : 1)); fi
  if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  echo "swift: $((total - failed)) passed, $failed failed"
}

stage shell bash Tests/shell/run.sh
stage c build/test_c
# The same C tests on each ChaCha20 kernel this CPU has, forced.
for kernel in scalar vector; do
  stage c env SQLITETRIGGERS_CHACHA20=$kernel build/test_c
done
stage oom env ASAN_OPTIONS=detect_leaks=1 build/test_oom
stage fuzz bash Tests/fuzz/run.sh "${FUZZ_SMOKE_SECONDS:-60}"
stage python "${PYTHON:-python3}" Tests/python/run.py
stage swift swift_stage

echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
