#!/usr/bin/env bash
# The C tests on arm64 (Apple Silicon and iPhones are arm64, and the NEON
# kernel runs nowhere else), cross-compiled and run under qemu-user, once
# per ChaCha20 kernel; and the seeded stream, which must be byte-identical
# to the native (x86-64) one.  make test-arm64 builds what it runs.
# Prints "arm64: N passed, N failed".
set -u
cd "$(dirname "$0")/../../.."
QEMU=${ARM64_RUN:-qemu-aarch64}
passed=0
failed=0
record() {  # record NAME OK
  if [ "$2" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1"; fi
}

for kernel in scalar vector; do
  out=$(SQLITETRIGGERS_CHACHA20=$kernel "$QEMU" build/arm64/test_c 2>&1)
  summary=$(echo "$out" | grep -E '^c: [0-9]+ passed, [0-9]+ failed$')
  echo "$out" | grep -E '^FAIL|kernel in use'
  echo "arm64 $kernel: ${summary:-no summary}"
  [ -n "$summary" ] && [[ $summary == *" 0 failed" ]] &&
    echo "$out" | grep -q "kernel in use: $kernel"
  record "the C tests on arm64 with the $kernel kernel" $?
done

build/seeded_stream > build/seeded_stream.x86_64.txt
for kernel in scalar vector; do
  SQLITETRIGGERS_CHACHA20=$kernel "$QEMU" build/arm64/seeded_stream > build/seeded_stream.arm64.txt
  cmp -s build/seeded_stream.x86_64.txt build/seeded_stream.arm64.txt &&
    [ "$(wc -l < build/seeded_stream.arm64.txt)" -eq 3000 ]
  record "a seeded stream on arm64 ($kernel) is byte-identical to x86-64's" $?
done
for kernel in scalar vector avx2; do
  SQLITETRIGGERS_CHACHA20=$kernel build/seeded_stream | cmp -s - build/seeded_stream.x86_64.txt
  record "a seeded stream on x86-64 is the same with the $kernel kernel" $?
done

echo "arm64: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
