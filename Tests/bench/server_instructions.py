"""make bench: the server's shape in instructions, a transaction at a time.

The server rows of sqlitetriggers-bench are times, which drift on a busy
virtual machine; these count instructions. For each configuration of
ServerSuite.swift, `sqlitetriggers-bench --server-write CONFIGURATION N`
runs N single-row transactions (a create, then an update, in turn, with
cached statements) under callgrind, counting only inside
measuredServerWrites (the commit, and a feed's delivery on the writer's
queue, included), over two counts so that what is counted once cancels
out. Each is set against the same service without SQLiteTriggers.

Usage: server_instructions.py BENCH_BINARY WORK_DIRECTORY; prints ROW lines
for report.py, or nothing (and says why) without valgrind.
"""
import sys

import callgrind_rows

# ServerConfiguration.all's indexes; 0 is the service without the library.
CONFIGURATIONS = {8: "SQLiteTriggers installed, nothing used", 1: "persistent rules", 2: "durable log",
                  3: "rules + log", 5: "change feed (.onWriterQueue)",
                  9: "rules + log, writers without SQLiteTriggers",
                  10: "the same triggers by hand (the floor of rules + log)"}


def per_transaction(binary, configuration):
    return callgrind_rows.per_row([binary, "--server-write", str(configuration)],
                                  "$s20sqlitetriggers_bench20measuredServerWrites*", rows=(900, 300))


def main():
    status = callgrind_rows.refusal(sys.argv, 2, __doc__, "server")
    if status is not None:
        return status
    binary = callgrind_rows.stripped_copy(sys.argv[1], sys.argv[2])
    plain = per_transaction(binary, 0)
    for configuration, name in CONFIGURATIONS.items():
        callgrind_rows.print_row("a server's single-row transaction (create or update, cached statements), instructions",
                                 name, per_transaction(binary, configuration), "plain GRDB (no SQLiteTriggers)", plain)
    return 0


if __name__ == "__main__":
    sys.exit(main())
