"""make bench: our SQL functions against their peers, in one process.

Every row is measured on the same SQLite: sqlean.py's, which has sqlean's
uuid and time functions built in and loads our library beside them.  Each
time is the best of several runs of
    SELECT count(f(...)) FROM source
over N rows, less the same loop with the bare value, `count(value)` (the
"loop" row), divided by N: the cost of the call itself.  Where valgrind is
installed, the instructions per call are counted too (callgrind, net of the
same loop): they do not drift from run to run as times do on a busy
machine.  The constant-text row is the floor of any function that returns a
fresh 36-byte text.

Usage: functions.py LIBRARY [--rows N]; prints ROW lines for report.py.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import sqlean

# The inputs: integers 1..N, and millisecond text of as many instants.
SOURCES = {
    "series": "generate_series(1, {rows})",
    "texts": "temp.texts",
}

CASES = {
    # name: (expression, source)
    "loop": ("value", "series"),
    "loop over text": ("value", "texts"),
    "constant 36-byte text": ("'00000000-0000-4000-8000-000000000000' || ''", "series"),
    "uuid()": ("uuid()", "series"),
    "uuid4() (sqlean)": ("uuid4()", "series"),
    "uuidv7()": ("uuidv7()", "series"),
    "uuid7() (sqlean)": ("uuid7()", "series"),
    "datetime_subsec()": ("datetime_subsec()", "series"),
    "datetime_subsec(value, 'unixepoch')": ("datetime_subsec(value, 'unixepoch')", "series"),
    "datetime(value, 'unixepoch')": ("datetime(value, 'unixepoch')", "series"),
    "datetime_subsec(text)": ("datetime_subsec(value)", "texts"),
    "datetime(text)": ("datetime(value)", "texts"),
    "strftime('%Y-%m-%d %H:%M:%f', value, 'unixepoch')":
        ("strftime('%Y-%m-%d %H:%M:%f', value, 'unixepoch')", "series"),
}

LOOP = {"series": "loop", "texts": "loop over text"}

# Rows whose time is information, their target on instructions alone:
# uuidv7()'s time is mostly this machine's clock read (uuid7()'s too), which
# drifts with the host, where the instructions of the code around it do not.
TIME_IS_INFORMATION = {"uuidv7()"}

# (ours, peer, target ratio or None)
COMPARISONS = [
    ("uuid()", "uuid4() (sqlean)", 0.35),
    ("uuidv7()", "uuid7() (sqlean)", 0.45),
    ("uuid()", "constant 36-byte text", None),
    ("datetime_subsec(value, 'unixepoch')", "datetime(value, 'unixepoch')", 1.0),
    ("datetime_subsec(text)", "datetime(text)", 1.0),
    ("datetime_subsec(value, 'unixepoch')", "strftime('%Y-%m-%d %H:%M:%f', value, 'unixepoch')", None),
]


def connect(library):
    db = sqlean.connect(":memory:", check_same_thread=False)
    db.enable_load_extension(True)
    db.load_extension(os.path.abspath(library))
    return db


def prepare(db, rows):
    db.execute("CREATE TEMP TABLE texts AS SELECT strftime('%Y-%m-%d %H:%M:%f', value * 1234.567, 'unixepoch') AS value"
               f" FROM generate_series(1, {rows})")


def sql_of(case, rows):
    expression, source = CASES[case]
    return f"SELECT count({expression}) FROM {SOURCES[source].format(rows=rows)}"


def measure(db, case, rows, repeats):
    sql = sql_of(case, rows)
    db.execute(sql).fetchone()                       # warm up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        db.execute(sql).fetchone()
        best = min(best, time.perf_counter() - start)
    return best / rows * 1e9


def instructions(library, case):
    """Instructions per call, net of its loop: callgrind over two row
    counts, so that what is counted once (start-up) cancels out."""
    def count(c, rows):
        probe = ("import sqlean, sys\nsqlean.extensions.enable_all()\n"
                 f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
                 "import functions\n"
                 f"db = functions.connect({library!r})\nfunctions.prepare(db, {rows})\n"
                 f"db.execute(functions.sql_of({c!r}, {rows})).fetchone()\n")
        run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                              sys.executable, "-c", probe], capture_output=True, text=True)
        for line in run.stderr.splitlines():
            if "Collected" in line:
                return int(line.split()[-1])
        raise RuntimeError(f"callgrind counted nothing: {run.stderr[-500:]}")
    def per_row(c):
        return (count(c, 60_000) - count(c, 20_000)) / 40_000
    return per_row(case) - per_row(LOOP[CASES[case][1]])


def parallel_speedup(library, expression, threads=4, rows=200_000):
    """Calls per second of `threads` connections running `expression` at
    once, each on its own thread, over one connection alone: how far the
    calls run in parallel, as a DatabasePool's readers do (at most the
    number of cores; 1.0 when they serialize)."""
    sql = f"SELECT count({expression}) FROM generate_series(1, {rows})"

    def wall(count):
        dbs = [connect(library) for _ in range(count)]
        for db in dbs:
            db.execute(sql).fetchone()               # warm up
        workers = [threading.Thread(target=lambda db=db: db.execute(sql).fetchone()) for db in dbs]
        start = time.perf_counter()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        return time.perf_counter() - start
    one = min(wall(1) for _ in range(3))
    many = min(wall(threads) for _ in range(3))
    return (threads * rows / many) / (rows / one)


def inversions(db, expression, rows=100_000):
    """How often a value sorts below the one generated before it."""
    return db.execute(
        f"WITH g(n, u) AS MATERIALIZED (SELECT value, {expression} "
        f"FROM generate_series(1, {rows})) "
        "SELECT count(*) FROM g a JOIN g b ON b.n = a.n + 1 WHERE b.u <= a.u"
    ).fetchone()[0]


def key_locality(library, rows, key):
    """Rows per second inserting `rows` rows, 10,000 per transaction, into
    a file whose table is keyed by `key`, and the file's size in MiB."""
    directory = tempfile.mkdtemp(prefix="sqlitetriggers-bench-")
    try:
        path = os.path.join(directory, "keys.sqlite")
        db = sqlean.connect(path, isolation_level=None)
        db.enable_load_extension(True)
        db.load_extension(os.path.abspath(library))
        db.execute("PRAGMA journal_mode = WAL")
        if key == "integer":
            db.execute("CREATE TABLE items(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            insert = "INSERT INTO items(title) SELECT 'Item ' || value FROM generate_series(1, 10000)"
        else:
            db.execute(f"CREATE TABLE items(id TEXT PRIMARY KEY NOT NULL DEFAULT ({key}), title TEXT NOT NULL)")
            insert = "INSERT INTO items(title) SELECT 'Item ' || value FROM generate_series(1, 10000)"
        start = time.perf_counter()
        for _ in range(rows // 10_000):
            db.execute("BEGIN")
            db.execute(insert)
            db.execute("COMMIT")
        seconds = time.perf_counter() - start
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        return rows / seconds, os.path.getsize(path) / 2**20
    finally:
        shutil.rmtree(directory)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--locality-rows", type=int, nargs="*", default=[1_000_000, 5_000_000])
    args = parser.parse_args()

    sqlean.extensions.enable_all()
    db = connect(args.library)
    prepare(db, args.rows)
    version = db.execute("SELECT sqlite_version()").fetchone()[0]

    ns = {case: measure(db, case, args.rows, args.repeats) for case in CASES}
    net = {case: ns[case] - ns[LOOP[source]] for case, (_, source) in CASES.items()}
    where = f"(SQLite {version} of sqlean.py, {args.rows:,} rows; per call, net of the loop)"
    for ours, peer, target in COMPARISONS:
        shown = None if ours in TIME_IS_INFORMATION else target
        print(f"ROW\t{ours} {where}\t{ours}\t{net[ours]}\t{peer}\t{net[peer]}\tns/call\t{shown or ''}")
    if shutil.which("valgrind"):
        counted = {}
        for ours, peer, target in COMPARISONS:
            for case in (ours, peer):
                if case not in counted:
                    counted[case] = instructions(args.library, case)
            print(f"ROW\t{ours}, instructions per call (callgrind, net of the loop)\t{ours}\t{counted[ours]}"
                  f"\t{peer}\t{counted[peer]}\tinstructions\t{target or ''}")
    else:
        print("valgrind is not installed: no instruction counts", file=sys.stderr)

    # Readers in parallel: 4 connections on 4 threads against 1, on this
    # machine's cores, for the native path and for the per-connection
    # julianday() helper that other inputs take.
    peer = "datetime(value, 'unixepoch')"
    peer_speedup = parallel_speedup(args.library, peer)
    for expression in ("datetime_subsec(value, 'unixepoch')", "datetime_subsec(value, 'unixepoch', '+1 day')"):
        print(f"ROW\t{expression}: 4 connections on 4 threads, calls per second over 1 connection "
              f"({os.cpu_count()} cores; higher is better)\t{expression}\t{parallel_speedup(args.library, expression)}"
              f"\t{peer}\t{peer_speedup}\tx\t")
    print(f"ROW\tv7 UUIDs out of order, of 100,000 in one statement\tuuidv7()\t{inversions(db, 'uuidv7()')}"
          f"\tuuid7() (sqlean)\t{inversions(db, 'uuid7()')}\tvalues\t")

    # Key locality: v7 keys arrive in order, like integers; v4 keys land
    # anywhere in the index.
    for rows in args.locality_rows:
        v7, v4, integer = (key_locality(args.library, rows, key) for key in ("uuidv7()", "uuid()", "integer"))
        what = f"inserting {rows:,} rows, 10,000 per transaction, WAL file"
        print(f"ROW\t{what}: rows per second (higher is better)\tTEXT key uuidv7()\t{v7[0]}"
              f"\tTEXT key uuid()\t{v4[0]}\trows/s\t")
        print(f"ROW\t{what}: rows per second (higher is better)\tTEXT key uuidv7()\t{v7[0]}"
              f"\tINTEGER PRIMARY KEY\t{integer[0]}\trows/s\t")
        print(f"ROW\t{what}: file size\tTEXT key uuidv7()\t{v7[1]}\tTEXT key uuid()\t{v4[1]}\tMiB\t")
        print(f"ROW\t{what}: file size\tTEXT key uuidv7()\t{v7[1]}\tINTEGER PRIMARY KEY\t{integer[1]}\tMiB\t")


if __name__ == "__main__":
    main()
