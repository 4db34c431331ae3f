"""make bench: the Swift observers against GRDB's DatabaseFunction, in
instructions.

The observer suite's times (sqlitetriggers-bench) are taken on a busy
virtual machine; instruction counts do not drift.  This runs
`sqlitetriggers-bench --observer-write VARIANT ROWS` under callgrind,
counting only inside the measured UPDATE (commit and after-commit delivery
included), over two row counts so that what is counted once cancels out,
for the bare UPDATE and for each observer: an observer's cost per event is
its count less the bare one's.

Usage: observer_instructions.py BENCH_BINARY WORK_DIRECTORY; prints ROW
lines for report.py, or nothing (and says why) without valgrind.
"""
import sys

import callgrind_rows

TOGGLE = "$s20sqlitetriggers_bench21measuredObserverWrite*"
# ObserverVariant's numbers.
BARE, AFTER_COMMIT, IMMEDIATE, GRDB_FUNCTION = 0, 1, 2, 3


def per_row(binary, variant):
    return callgrind_rows.per_row([binary, "--observer-write", str(variant)], TOGGLE)


def main():
    status = callgrind_rows.refusal(sys.argv, 2, __doc__, "observer")
    if status is not None:
        return status
    binary = callgrind_rows.stripped_copy(sys.argv[1], sys.argv[2])
    bare = per_row(binary, BARE)
    peer = per_row(binary, GRDB_FUNCTION) - bare
    what = "Swift observer, instructions per event over the bare UPDATE (callgrind)"
    for variant, ours in ((AFTER_COMMIT, "observeCallback, after commit, typed"),
                          (IMMEDIATE, "observeCallback, immediate, typed")):
        callgrind_rows.print_row(what, ours, per_row(binary, variant) - bare,
                                 "GRDB DatabaseFunction, same decoding", peer, 0.7)
    return 0


if __name__ == "__main__":
    sys.exit(main())
