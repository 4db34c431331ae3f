"""make bench: stamping the durable log's transactions, in instructions.

Runs Tests/bench/stamp.c (build/bench_stamp) under callgrind, counting
only its measured writes, for the durable log and for the same triggers by
hand, both on a connection with the extension, over two row counts so that
what is counted once cancels out.  The log's triggers stamp each change
with its transaction; the hand-written ones stamp nothing: the ratio is
stamping's cost (target 1.05).  Then the same on a connection without the
extension, as another process writes: the log against the same triggers by
hand (target 1.01: such a writer pays the stamp expression, which returns
NULL there).

Usage: stamp_instructions.py BENCH_STAMP; prints ROW lines for report.py,
or nothing (and says why) without valgrind.
"""
import sys

import callgrind_rows

WRITES = ("inserted", "updated", "deleted")


def per_row(binary, variant, write):
    return callgrind_rows.per_row([binary, str(variant), str(write)], "measuredWrites")


def main():
    status = callgrind_rows.refusal(sys.argv, 1, __doc__, "stamping")
    if status is not None:
        return status
    for write, kind in enumerate(WRITES):
        what = f"durable log, instructions per {kind} row (a statement per row, 100 per transaction, callgrind)"
        callgrind_rows.print_row(what, "durable log, a writer with SQLiteTriggers (stamps transactions)",
                                 per_row(sys.argv[1], 0, write),
                                 "the same triggers by hand (no stamps), a writer with SQLiteTriggers",
                                 per_row(sys.argv[1], 1, write), 1.05)
        callgrind_rows.print_row(what, "durable log, a writer without the extension", per_row(sys.argv[1], 2, write),
                                 "hand-written triggers recording table, key, kind", per_row(sys.argv[1], 3, write),
                                 1.01)
    return 0


if __name__ == "__main__":
    sys.exit(main())
