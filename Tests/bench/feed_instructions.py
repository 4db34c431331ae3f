"""make bench: change feeds against their peers, in instructions.

The times that sqlitetriggers-bench prints for change feeds drift by tens
of percent from run to run on a busy virtual machine; instruction counts do
not.  For each write (one statement for all rows, or one statement per
row), this runs `sqlitetriggers-bench --change-feed-write VARIANT WRITE ROWS`
under callgrind for the bare queue, the change feed, GRDB's observer and
the session peer, counting only inside the measured write (commit and
delivery included), over two row counts so that what is counted once
cancels out.  Then the decoding floor (a cursor decoding records, less the
same cursor stepping rows), so that transport can be shown net of the
records each side decodes.  The bench binary is copied without its debug
information first: valgrind cannot read Swift's.

Usage: feed_instructions.py BENCH_BINARY WORK_DIRECTORY; prints ROW lines
for report.py, or nothing (and says why) without valgrind.
"""
import sys

import callgrind_rows

# sqlitetriggers-bench's feedWrites; deletes have no GRDB peer (a deleted
# row cannot be fetched).
WRITES = {0: ("inserted", "one statement"), 1: ("updated", "one statement"), 2: ("deleted", "one statement"),
          3: ("inserted", "a statement per row"), 4: ("updated", "a statement per row"),
          5: ("deleted", "a statement per row")}
VARIANTS = {"bare": 0, "feed": 1, "peer": 2, "session": 3, "decode": 4, "step": 5}


def per_row(binary, variant, write):
    return callgrind_rows.per_row([binary, "--change-feed-write", str(variant), str(write)],
                                  "$s20sqlitetriggers_bench17measuredFeedWrite*")


def main():
    status = callgrind_rows.refusal(sys.argv, 2, __doc__, "change-feed")
    if status is not None:
        return status
    binary = callgrind_rows.stripped_copy(sys.argv[1], sys.argv[2])
    decode = per_row(binary, VARIANTS["decode"], 0) - per_row(binary, VARIANTS["step"], 0)
    callgrind_rows.print_row("decoding one typed record, instructions (callgrind)", "GRDB FeedItem(row:)", decode,
                             "", None)
    for write, (kind, form) in WRITES.items():
        bare = per_row(binary, VARIANTS["bare"], write)
        feed, session = (per_row(binary, VARIANTS[v], write) - bare for v in ("feed", "session"))
        callgrind_rows.print_row(f"change feed, instructions per {kind} row ({form}), against a peer that delivers the same",
                                 "observeChanges", feed, "SQLite session + changeset + FeedItem(row:)", session, 1.0)
        if kind == "deleted":
            continue
        peer = per_row(binary, VARIANTS["peer"], write) - bare
        records = 2 if kind == "updated" else 1
        callgrind_rows.print_row(f"change feed, instructions per {kind} row ({form}), net of the bare write",
                                 "observeChanges", feed, "GRDB TransactionObserver rowids + fetch after commit", peer)
        # The target: GRDB's observer gives less (no old values, and it is
        # not exact), so ours may cost up to 2.0 of it, 2.7 for an update's
        # two records; the peer that delivers the same (the session, above)
        # is held to 1.0.
        target = 2.7 if kind == "updated" else 2.0
        callgrind_rows.print_row(f"change feed transport, instructions per {kind} row ({form}), net of decoding its records",
                                 f"observeChanges ({records} record{'s' if records > 1 else ''})", feed - records * decode,
                                 "GRDB TransactionObserver rowids + fetch (1 record)", peer - decode, target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
