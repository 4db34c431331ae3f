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
    print(f"ROW\tv7 UUIDs out of order, of 100,000 in one statement\tuuidv7()\t{inversions(db, 'uuidv7()')}"
          f"\tuuid7() (sqlean)\t{inversions(db, 'uuid7()')}\tvalues\t")


if __name__ == "__main__":
    main()
