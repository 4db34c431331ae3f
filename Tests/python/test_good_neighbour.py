"""Loading the extension changes nothing until it is used: registration
reads no schema, makes no TEMP object and takes no lock.  Each case is run
on Debian's Python and SQLite, once with `load_extension()` and once with
the entry point registered by `sqlite3_auto_extension()` (as GRDB's and
CPython's suites are run with it), and compared with the same case without
the extension: every answer must be the same.

1. Opening and loading while another connection holds an exclusive lock
   (no busy timeout yet).
2. A file that is not a database: the first query fails with SQLite's own
   "file is not a database", not at load.
3. PRAGMA encoding on a new database, set after loading, takes effect.
4. TEMP stays empty: PRAGMA database_list lists main alone, and there is no
   TEMP schema to serialize.
5. An encrypted database (SQLCipher, through the sqlcipher3-binary wheel
   make installs in build/venv): the extension loaded before the key is
   set, then the key, then every use.
"""
import json
import os
import subprocess
import tempfile

from checks import check, library_path

SYSTEM_PYTHON = "/usr/bin/python3"   # Debian's, whose sqlite3 loads extensions

CHILD = r"""
import ctypes, ctypes.util, json, os, sqlite3, sys
library, how, folder = sys.argv[1], sys.argv[2], sys.argv[3]
if how == "auto":
    system = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
    ours = ctypes.CDLL(library)
    assert system.sqlite3_auto_extension(ctypes.cast(ours.sqlite3_sqlitetriggers_init, ctypes.c_void_p)) == 0

def connect(path, **options):
    db = sqlite3.connect(path, isolation_level=None, **options)
    if how == "load":
        db.enable_load_extension(True)
        db.load_extension(library)
    return db

def outcome(action):
    try:
        return ["ok", action()]
    except Exception as error:
        return ["error", type(error).__name__, str(error)]

seen = {}
path = os.path.join(folder, "locked.db")
holder = sqlite3.connect(path, isolation_level=None)
holder.execute("CREATE TABLE IF NOT EXISTS t(x)")
holder.execute("BEGIN EXCLUSIVE")
seen["open while locked"] = outcome(lambda: connect(path, timeout=0) and "opened")
holder.execute("ROLLBACK")

gunk = os.path.join(folder, "gunk.db")
with open(gunk, "wb") as f:
    f.write(b"A" * 8192)
seen["not a database"] = outcome(lambda: connect(gunk).execute("SELECT count(*) FROM sqlite_schema").fetchall())

def connect_memory_encoding():
    db = connect(":memory:")
    db.execute("PRAGMA encoding='UTF-16le'")
    db.execute("CREATE TABLE t(x)")
    return db.execute("PRAGMA encoding").fetchone()[0]
seen["encoding"] = outcome(connect_memory_encoding)

temp = connect(":memory:")
seen["database_list"] = outcome(lambda: [name for (_, name, _) in temp.execute("PRAGMA database_list")])
# SQLite serializes nothing of a TEMP schema never used (Python raises).
seen["serialize temp"] = outcome(lambda: len(temp.serialize(name="temp")))
print(json.dumps(seen))
"""


SQLCIPHER = r"""
import json, os, sys
import sqlcipher3
library, how, path = sys.argv[1], sys.argv[2], sys.argv[3]
maker = sqlcipher3.connect(path)
maker.execute("PRAGMA key = 'secret'")
maker.execute("CREATE TABLE t(x)")
maker.execute("INSERT INTO t VALUES (1)")
maker.commit()
maker.close()
seen = {}
try:
    db = sqlcipher3.connect(path, isolation_level=None)
    if how == "load":
        db.enable_load_extension(True)
        db.load_extension(library)
    db.execute("PRAGMA key = 'secret'")
    seen["rows"] = db.execute("SELECT count(*) FROM t").fetchone()[0]
    if how == "load":
        db.execute("CREATE TEMP TRIGGER r AFTER INSERT ON t BEGIN SELECT swift_callback('added', new.x); END")
        db.execute("INSERT INTO t VALUES (2)")
        seen["events"] = [args for (args,) in db.execute("SELECT args FROM swift_callback_log")]
except Exception as error:
    seen["error"] = str(error)
print(json.dumps(seen))
"""


def run_sqlcipher(folder):
    import sys
    results = {}
    for how in ("none", "load"):
        done = subprocess.run([sys.executable, "-c", SQLCIPHER, library_path(), how, os.path.join(folder, f"{how}.db")],
                              capture_output=True, text=True)
        if done.returncode != 0:
            check("SQLCipher: an encrypted database with the extension loaded before its key",
                  [done.stderr.strip()[-600:]], 1)
            return
        results[how] = json.loads(done.stdout)
    check("SQLCipher: loaded before the key is set, the extension lets the key open the file and works after",
          [] if results["none"] == {"rows": 1} and results["load"] == {"rows": 1, "events": ["[2]"]}
          else [json.dumps(results)], 1)


def run():
    folder = tempfile.mkdtemp()
    run_sqlcipher(folder)
    results = {}
    for how in ("none", "load", "auto"):
        sub = os.path.join(folder, how)
        os.mkdir(sub)
        done = subprocess.run([SYSTEM_PYTHON, "-c", CHILD, library_path(), how, sub],
                              capture_output=True, text=True)
        if done.returncode != 0:
            check(f"the good-neighbour cases run ({how})", [done.stderr.strip()[-600:]], 1)
            return
        results[how] = json.loads(done.stdout)
    baseline = results["none"]
    for how in ("load", "auto"):
        for case, expected in baseline.items():
            got = results[how][case]
            check(f"{case}: the same with the extension ({'load_extension' if how == 'load' else 'sqlite3_auto_extension'})",
                  [] if got == expected else [f"without: {expected!r}", f"with:    {got!r}"], 1)
    # What the baseline is, so that a change of SQLite's own is noticed.
    check("without the extension: the lock, the file, the encoding and TEMP behave as SQLite documents",
          [] if (baseline["open while locked"] == ["ok", "opened"]
                 and baseline["not a database"][:2] == ["error", "DatabaseError"]
                 and baseline["encoding"] == ["ok", "UTF-16le"]
                 and baseline["database_list"] == ["ok", ["main"]]
                 and baseline["serialize temp"][0] == "error") else [json.dumps(baseline)], 1)
