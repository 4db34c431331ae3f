"""The durable log's REAL key values, bit for bit, on every SQLite here.

A composite key holding REALs is logged as {"real":[M,E]}, exactly M * 2^E
(ext/log_triggers.c, appendExactReal).  Random doubles over the whole range
(every exponent, subnormals, signed zero, the largest finite, infinities)
go in as keys; each rowKey must be valid JSON, give back the very double
(reconstructed here with math.ldexp, which is exact), and be the same text
whoever wrote it: a connection with the extension, one without it (the
triggers are plain SQL), and Apple's SQLite versions through apsw, each in
a process of its own.  The rowKey's REAL also finds its row through
SQLite's own arithmetic (m * 2^e by doubling), as a plain SQL consumer
would."""
import json
import math
import os
import random
import struct
import subprocess
import sys

from checks import apple_apsw_environments, check, library_path



def doubles(count, seed=20261127):
    rng = random.Random(seed)
    values = [0.0, -0.0, 1.0, -2.5, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
              1.7976931348623157e308, -1.7976931348623157e308, math.inf, -math.inf, 1e120, 1732000000.123,
              2.0 ** 52, 2.0 ** 53, 2.0 ** 53 + 2, 2.0 ** 63, 2.0 ** 64, 0.1]
    while len(values) < count:
        bits = rng.getrandbits(64)
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if not math.isnan(value):
            values.append(value)
        # Doubles above 1e120 are where decimal text went wrong most.
        values.append(rng.uniform(1e120, 1e308) * rng.choice([1, -1]))
    return values[:count]


SCHEMA = "CREATE TABLE s(d INTEGER NOT NULL, ts REAL NOT NULL, PRIMARY KEY(d, ts));"


def log_rows(execute, values, install):
    """Inserts each value with its index, returns the rowKeys in order."""
    execute(SCHEMA)
    execute(install)
    for i, value in enumerate(values):
        execute("INSERT INTO s VALUES (?, ?)", (i, value))
    return [key for (key,) in execute("SELECT rowKey FROM sqlitetriggers_log ORDER BY id")]


def decoded(row_key):
    d, real = json.loads(row_key)
    m, e = real["real"]
    # 1 * 2^1024 overflows to infinity, as the format means.
    return d, math.copysign(math.inf, m) if e == 1024 else math.ldexp(m, e)


SYSTEM_PYTHON = "/usr/bin/python3"   # Debian's, whose sqlite3 loads extensions

PLAIN_SQL_CONSUMER = """
    WITH k AS (SELECT json_extract(rowKey, '$[0]') AS d, json_extract(rowKey, '$[1].real[0]') AS m,
                      json_extract(rowKey, '$[1].real[1]') AS e FROM sqlitetriggers_log),
    r(d, v, e) AS (SELECT d, CASE WHEN e = 1024 THEN m * 9e999 ELSE m * 1.0 END,
                          CASE WHEN e = 1024 THEN 0 ELSE e END FROM k
                   UNION ALL SELECT d, CASE WHEN e > 0 THEN v * 2 ELSE v * 0.5 END,
                                    CASE WHEN e > 0 THEN e - 1 ELSE e + 1 END FROM r WHERE e <> 0)
    SELECT count(*) FROM r JOIN s ON s.d = r.d AND s.ts = r.v WHERE r.e = 0"""


def child_system(library, count):
    """Debian's SQLite through its Python: with the extension, then a writer
    without it on a file where it was installed; prints what it saw."""
    import sqlite3
    values = doubles(count)
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(library)
    keys = log_rows(lambda sql, args=(): db.execute(sql, args).fetchall(), values,
                    "SELECT sqlitetriggers_log_install('s')")
    invalid = db.execute("SELECT count(*) FROM sqlitetriggers_log WHERE NOT json_valid(rowKey)").fetchone()[0]
    # Halving a subnormal by 0.5 step by step would round: the consumer
    # above does so only where it is exact, which is what it checks.
    found = db.execute(PLAIN_SQL_CONSUMER).fetchone()[0]
    path = f"/tmp/real_keys_{os.getpid()}.db"
    for suffix in ("", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    installer = sqlite3.connect(path, isolation_level=None)
    installer.enable_load_extension(True)
    installer.load_extension(library)
    installer.execute(SCHEMA)
    installer.execute("SELECT sqlitetriggers_log_install('s')")
    installer.close()
    plain = sqlite3.connect(path, isolation_level=None)
    for i, value in enumerate(values):
        plain.execute("INSERT INTO s VALUES (?, ?)", (i, value))
    plain_keys = [key for (key,) in plain.execute("SELECT rowKey FROM sqlitetriggers_log ORDER BY id")]
    plain.close()
    os.remove(path)
    print(json.dumps({"version": sqlite3.sqlite_version, "keys": keys, "invalid": invalid, "found": found,
                      "plain_keys": plain_keys}))


def child_apsw(library, count):
    """Apple's version, through apsw: prints the rowKeys as JSON."""
    import apsw
    connection = apsw.Connection(":memory:")
    (getattr(connection, "enable_load_extension", None) or connection.enableloadextension)(True)
    (getattr(connection, "load_extension", None) or connection.loadextension)(library, "sqlite3_sqlitetriggers_init")
    cursor = connection.cursor()
    keys = log_rows(lambda sql, args=(): cursor.execute(sql, args).fetchall(), doubles(count),
                    "SELECT sqlitetriggers_log_install('s')")
    print(json.dumps({"version": apsw.sqlitelibversion(), "keys": keys}))


def run_child(python, kind, count, environment=None):
    result = subprocess.run([python, __file__, "--child", kind, library_path(), str(count)],
                            capture_output=True, text=True, env=environment or dict(os.environ))
    if result.returncode != 0:
        return None, result.stderr.strip()[-600:]
    return json.loads(result.stdout), None


def run():
    count = 3000
    values = doubles(count)
    seen, error = run_child(SYSTEM_PYTHON, "system", count)
    if error:
        check("REAL keys on the system SQLite", [error], 1)
        return
    keys = seen["keys"]
    mismatches = []
    for i, (value, key) in enumerate(zip(values, keys)):
        d, back = decoded(key)
        if d != i or struct.pack("<d", back) != struct.pack("<d", value if value != 0 else 0.0):
            mismatches.append(f"{value!r} ({float.hex(value)}) logged as {key}")
    check(f"SQLite {seen['version']}: every REAL key round-trips bit for bit through its rowKey (-0.0 as 0.0)",
          mismatches + ([] if len(keys) == count else [f"{len(keys)} keys"]), count)
    check("every rowKey is valid JSON, infinities included",
          [f"{seen['invalid']} invalid"] if seen["invalid"] else [], count)
    check("a plain SQL consumer finds every row from its REAL key",
          [] if seen["found"] == count else [f"{seen['found']} of {count} found"], count)
    check("a writer without the extension logs the same rowKeys",
          [f"{a} != {b}" for a, b in zip(keys, seen["plain_keys"]) if a != b]
          + ([] if len(seen["plain_keys"]) == count else ["count"]), count)

    def name_of(version):
        return f"Apple's SQLite {version} (apsw) logs the same REAL rowKeys"
    for version, environment in apple_apsw_environments(name_of):
        name = name_of(version)
        other, error = run_child(sys.executable, "apsw", count, environment)
        if error:
            check(name, [error], 1)
            continue
        check(name, [f"{a} != {b}" for a, b in zip(keys, other["keys"]) if a != b]
              + ([] if other["version"] == version else [f"ran {other['version']}"]), count)


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    (child_system if sys.argv[2] == "system" else child_apsw)(sys.argv[3], int(sys.argv[4]))
