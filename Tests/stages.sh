# Sourced by run_all.sh and sanitize.sh: runs test stages and adds up the
# "NAME: N passed, N failed" line each prints into total_passed and
# total_failed.  A stage that dies before its summary counts as one failure.
log=$(mktemp)
# What each failed stage said, repeated before the total (run_all.sh): CI
# shows only the run's last lines.
failures=$(mktemp)
trap 'rm -f "$log" "$failures"' EXIT
total_passed=0
total_failed=0

# record_failure NAME: the failed stage's lines that name a failure, and
# its last lines, into $failures.
record_failure() {
  {
    echo "== $1"
    grep -aE 'FAIL|✘|[Ee]rror|Fatal|crashed|Signal|Sanitizer|no summary' "$log" | tail -n 20
    echo "-- its last lines:"
    tail -n 12 "$log"
  } >> "$failures"
}

# stage NAME COMMAND...: run it, echo its output, add up its summary line.
stage() {
  local name=$1 summary passed failed started=$SECONDS
  shift
  echo "== $name"
  "$@" 2>&1 | tee "$log"
  echo "($name took $((SECONDS - started)) s)"
  summary=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed$" "$log" | tail -n 1)
  if [ -z "$summary" ]; then
    echo "$name: no summary line; counted as one failure"
    total_failed=$((total_failed + 1))
    record_failure "$name (no summary line)"
    return
  fi
  passed=$(echo "$summary" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
  failed=$(echo "$summary" | sed -E 's/.* ([0-9]+) failed$/\1/')
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  [ "$failed" -eq 0 ] || record_failure "$name ($failed failed)"
}
