"""make bench: our SQL functions against their peers, in one process.

Every row is measured on the same SQLite: sqlean.py's, which has sqlean's
uuid and time functions built in and loads our library beside them.  Each
figure is the best of several runs of
    SELECT count(f(...)) FROM generate_series(1, N)
divided by N, so it includes the loop's own cost (the "floor" rows show it).

Usage: functions.py LIBRARY [--rows N]; prints ROW lines for report.py.
"""
import argparse
import os
import platform
import time

import sqlean

TARGETS = [
    # (ours, peer, target ratio)
    ("uuid()", "uuid4() (sqlean)", 0.6),
    ("uuidv7()", "uuid7() (sqlean)", 0.7),
    ("datetime_subsec()", "datetime(value, 'unixepoch')", 0.8),
]

CASES = [
    ("floor: count(value)", "value"),
    ("floor: constant 36-byte text", "'00000000-0000-4000-8000-000000000000' || ''"),
    ("uuid()", "uuid()"),
    ("uuid4() (sqlean)", "uuid4()"),
    ("uuidv7()", "uuidv7()"),
    ("uuid7() (sqlean)", "uuid7()"),
    ("datetime_subsec()", "datetime_subsec()"),
    ("datetime(value, 'unixepoch')", "datetime(value, 'unixepoch')"),
    ("datetime_subsec(value, 'unixepoch')", "datetime_subsec(value, 'unixepoch')"),
    ("strftime('%Y-%m-%d %H:%M:%f', value, 'unixepoch')",
     "strftime('%Y-%m-%d %H:%M:%f', value, 'unixepoch')"),
]


def measure(db, expression, rows, repeats):
    sql = f"SELECT count({expression}) FROM generate_series(1, {rows})"
    db.execute(sql).fetchone()                       # warm up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        db.execute(sql).fetchone()
        best = min(best, time.perf_counter() - start)
    return best / rows * 1e9


def parallel_speedup(library, expression, threads=4, rows=200_000):
    """Calls per second of `threads` connections running `expression` at
    once, each on its own thread, over one connection alone: how far the
    calls run in parallel, as a DatabasePool's readers do (at most the
    number of cores; 1.0 when they serialize)."""
    import threading

    def connect():
        db = sqlean.connect(":memory:", check_same_thread=False)
        db.enable_load_extension(True)
        db.load_extension(os.path.abspath(library))
        return db

    sql = f"SELECT count({expression}) FROM generate_series(1, {rows})"
    def wall(count):
        dbs = [connect() for _ in range(count)]
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    sqlean.extensions.enable_all()
    db = sqlean.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(os.path.abspath(args.library))
    version = db.execute("SELECT sqlite_version()").fetchone()[0]

    ns = {name: measure(db, expr, args.rows, args.repeats) for name, expr in CASES}
    unit, where = "ns/row", f"(SQLite {version} of sqlean.py, {args.rows:,} rows)"
    for ours, peer, target in TARGETS:
        print(f"ROW\t{ours} per row {where}\t{ours}\t{ns[ours]}\t{peer}\t{ns[peer]}\t{unit}\t{target}")
    ours, peer = "datetime_subsec(value, 'unixepoch')", "strftime('%Y-%m-%d %H:%M:%f', value, 'unixepoch')"
    print(f"ROW\tmillisecond text from a Unix time {where}\t{ours}\t{ns[ours]}\t{peer}\t{ns[peer]}\t{unit}\t")
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


if __name__ == "__main__":
    main()
