"""make bench: the durable log's writer without the extension, on the SQLite
versions Apple ships, in instructions (information rows).

The log's rows of stamp_instructions.py are counted on this machine's SQLite,
which Debian builds without lookaside (SQLITE_OMIT_LOOKASIDE): every trigger
frame SQLite allocates goes to malloc.  Apple's SQLite keeps lookaside, whose
slots take allocations of up to 1,200 bytes, so there a trigger a few
registers larger than another can cost a malloc more per write.  Here the
same files (bench_stamp --file: the log, VARIANT 2, and the same triggers by
hand, VARIANT 3) are written through apsw's builds of each SQLite version
Apple ships (make installs them into build/apple-apsw), and through this
machine's SQLite with Python's sqlite3 for comparison, counting only inside
sqlite3_step.

Usage: apple_versions_instructions.py BENCH_STAMP APPLE_APSW_DIR; prints
ROW lines for report.py, or nothing (and says why) without valgrind.
"""
import os
import subprocess
import sys
import tempfile

import callgrind_rows

WRITES = ("inserted", "updated", "deleted")
ROWS = (3_000, 1_000)
# bench_stamp's VARIANTs: the log written without the extension, and the
# same triggers by hand.
OURS, BY_HAND = 2, 3


def write_rows(library, bench_stamp, variant, write, rows):
    """Under callgrind: make the file (bench_stamp, not traced), then write
    rows rows through library, a statement per row, 100 per transaction."""
    path = os.path.join(tempfile.mkdtemp(prefix="bench_apple_"), "log.db")
    statement = subprocess.run([bench_stamp, "--file", str(variant), str(write), str(max(ROWS)), path],
                               check=True, capture_output=True, text=True).stdout.strip()
    if library == "system":
        import sqlite3
        db = sqlite3.connect(path, isolation_level=None)
    else:
        sys.path.insert(0, library)
        import apsw
        db = apsw.Connection(path)
    db.execute("PRAGMA synchronous = OFF")
    for i in range(rows):
        if i % 100 == 0:
            db.execute("BEGIN")
        db.execute(statement, (i,))
        if i % 100 == 99 or i == rows - 1:
            db.execute("COMMIT")
    db.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    os.rmdir(os.path.dirname(path))


def per_row(library, bench_stamp, variant, write):
    command = [sys.executable, __file__, "--write", library, bench_stamp, str(variant), str(write)]
    return callgrind_rows.per_row(command, "sqlite3_step", ROWS)


def main():
    if len(sys.argv) == 7 and sys.argv[1] == "--write":
        write_rows(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
        return 0
    status = callgrind_rows.refusal(sys.argv, 2, __doc__, "Apple SQLite version")
    if status is not None:
        return status
    bench_stamp, root = sys.argv[1], sys.argv[2]
    libraries = [("system", "this machine's SQLite (no lookaside)")]
    for version in sorted(os.listdir(root)):
        libraries.append((os.path.join(root, version), f"SQLite {version.rsplit('.', 1)[0]} as apsw builds it"
                          " (lookaside on)"))
    for library, name in libraries:
        for write, kind in enumerate(WRITES):
            # The SQLite versions Apple ships: at most 1.01; this machine's
            # is stamp_instructions.py's row (target 1.02), here as
            # information.
            target = "" if library == "system" else 1.01
            what = (f"durable log, a writer without the extension, instructions per {kind} row, "
                    f"{name} (callgrind{', information' if target == '' else ''})")
            callgrind_rows.print_row(what, "the log's triggers", per_row(library, bench_stamp, OURS, write),
                                     "the same triggers by hand", per_row(library, bench_stamp, BY_HAND, write), target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
