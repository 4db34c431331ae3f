"""make bench: the primary-key migration against the same migration by hand,
in instructions.

The migration's time row (sqlitetriggers-bench, 1,000,000 children) moves
by ten percent from run to run on a busy virtual machine; instruction
counts do not.  This runs `sqlitetriggers-bench --migration-write VARIANT
CHILDREN` under callgrind, counting only inside the measured migration
(variant 0: the four statements by hand; 1: migratePrimaryKeys), over two
child counts, so that what is counted once (parsing and planning, the
same for any size) cancels out: what remains is each side's cost of a row.

Usage: migration_instructions.py BENCH_BINARY WORK_DIRECTORY; prints a ROW
line for report.py, or nothing (and says why) without valgrind.
"""
import sys

import callgrind_rows

TOGGLE = "$s20sqlitetriggers_bench17measuredMigration*"


def per_child(binary, variant):
    return callgrind_rows.per_row([binary, "--migration-write", str(variant)], TOGGLE, rows=(200_000, 100_000))


def main():
    status = callgrind_rows.refusal(sys.argv, 2, __doc__, "migration")
    if status is not None:
        return status
    binary = callgrind_rows.stripped_copy(sys.argv[1], sys.argv[2])
    callgrind_rows.print_row("primary-key migration, instructions per child row (1,000 parents, callgrind)",
                             "migratePrimaryKeys", per_child(binary, 1),
                             "hand-written four-step SQL, same ids, rowids kept", per_child(binary, 0), 1.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
