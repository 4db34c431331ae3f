"""make bench: swift_callback() with an after-commit C observer against a
no-op C function in the same trigger, in instructions.

The time row (Tests/bench/callback.c) is taken on a busy virtual machine,
where the same two programs read a few percent apart from one build to the
next; instruction counts do not drift.  This runs `bench_callback
--instructions FUNCTION ROWS` under callgrind, counting only the UPDATE of
every row and the delivery after it, over two row counts so that what is
counted once cancels out.  Information: the target (1.3) is the time
row's.

Usage: callback_instructions.py BENCH_CALLBACK; prints a ROW line for
report.py, or nothing (and says why) without valgrind.
"""
import sys

import callgrind_rows

ROWS = (30_000, 10_000)


def per_row(binary, function):
    return callgrind_rows.per_row([binary, "--instructions", function], "measuredUpdate", ROWS)


def main():
    status = callgrind_rows.refusal(sys.argv, 1, __doc__, "swift_callback")
    if status is not None:
        return status
    callgrind_rows.print_row(
        "swift_callback in an AFTER UPDATE trigger, instructions per row, delivery included (callgrind)",
        "swift_callback + after-commit C observer", per_row(sys.argv[1], "swift_callback"),
        "no-op C function", per_row(sys.argv[1], "noop"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
