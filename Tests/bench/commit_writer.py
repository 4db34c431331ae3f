"""make bench: another process committing to a durable log, for the
wake-up latency (Sources/sqlitetriggers-bench/DurableLogSuite.swift).

    commit_writer.py DB COUNT [EXTENSION]

Inserts COUNT reminders 'latency-<i>', one transaction each, 5 to 20 ms
apart, and prints "<i> <ns>" after each commit: the wall-clock time at which
the commit returned.  With EXTENSION, through apsw with the extension
loaded (a writer with SQLiteTriggers, which posts after its commits);
without, through Python's sqlite3 module (a writer without it).
"""
import random
import sys
import time


def main():
    path, count = sys.argv[1], int(sys.argv[2])
    extension = sys.argv[3] if len(sys.argv) > 3 else None
    if extension:
        import apsw
        db = apsw.Connection(path)
        db.enable_load_extension(True)
        db.load_extension(extension)
        db.set_busy_timeout(10000)
        execute = db.execute
    else:
        import sqlite3
        db = sqlite3.connect(path, isolation_level=None, timeout=10)
        execute = db.execute
    rng = random.Random(7)
    for i in range(count):
        time.sleep(rng.uniform(0.005, 0.02))
        execute("INSERT INTO reminders(id, title) VALUES (?, 'latency')", (f"latency-{i}",))
        print(i, time.time_ns(), flush=True)


if __name__ == "__main__":
    main()
