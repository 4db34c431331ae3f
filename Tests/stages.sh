# Sourced by run_all.sh and sanitize.sh: runs test stages and adds up the
# "NAME: N passed, N failed" line each prints into total_passed and
# total_failed.  A stage that dies before its summary counts as one failure.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
total_passed=0
total_failed=0

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
    return
  fi
  passed=$(echo "$summary" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
  failed=$(echo "$summary" | sed -E 's/.* ([0-9]+) failed$/\1/')
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
}
