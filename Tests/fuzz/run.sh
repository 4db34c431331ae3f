#!/usr/bin/env bash
# Runs every libFuzzer harness in build/ for SECONDS each (make test: a
# 60-second smoke run; make fuzz: longer), each with its own corpus in
# build/fuzz-corpus/NAME.  A harness passes when it runs its time without
# a finding.  Prints "fuzz: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
seconds=${1:-60}
passed=0
failed=0
# The harnesses run at once, sharing the cores (make test's smoke
# run would otherwise take SECONDS per harness).
names=()
pids=()
for harness in build/fuzz_*; do
  [ -x "$harness" ] || continue
  name=$(basename "$harness")
  corpus=build/fuzz-corpus/$name
  mkdir -p "$corpus"
  "$harness" -max_total_time="$seconds" -max_len=512 -print_final_stats=1 \
    -artifact_prefix=build/"$name"- "$corpus" >"build/$name.log" 2>&1 &
  names+=("$name")
  pids+=($!)
done
for i in "${!names[@]}"; do
  name=${names[$i]}
  log=build/$name.log
  if wait "${pids[$i]}"; then
    passed=$((passed + 1))
    echo "ok   $name: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') inputs in ${seconds}s"
  else
    failed=$((failed + 1))
    echo "FAIL $name (log: $log)"
    grep -E 'fuzz_|ERROR|SUMMARY|runtime error' "$log" | head -n 20
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
