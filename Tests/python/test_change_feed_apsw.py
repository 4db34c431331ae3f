"""sqlitetriggers_change_feed() in Python hosts.

Python's own sqlite3 module links the system libsqlite3, which exports the
preupdate hook: the library loads there, installs a table's change feed from
SQL, and each committed change reads back from swift_callback_log, exact,
in order, REPLACE's deletions included, never for a rollback.  apsw's wheels
link their SQLite into the module with hidden symbols: there a feed takes
mode 'net' by itself (net changes per transaction, by triggers; the oracle
of test_net_feed_oracle.py checks it), says so, and the exact modes refuse,
naming the cause and the remedy, installing nothing.
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

from checks import check, library_path

# Debian's own interpreter: its sqlite3 module can load extensions, where
# the venv's (pyenv's build) cannot.
SYSTEM_PYTHON = "/usr/bin/python3"


def stdlib_log(library):
    """Runs in SYSTEM_PYTHON: the feed's log as JSON on stdout."""
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.enable_load_extension(True)
    connection.load_extension(library)
    connection.execute("PRAGMA recursive_triggers = OFF")
    connection.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT UNIQUE, score REAL)")
    installed = connection.execute("SELECT sqlitetriggers_change_feed('notes')").fetchone()[0]
    connection.execute("INSERT INTO notes(body, score) VALUES ('a', 1.5)")
    connection.executescript("BEGIN; UPDATE notes SET body = 'rolled back'; ROLLBACK;")
    connection.execute("UPDATE notes SET body = 'b'")
    connection.execute("INSERT OR REPLACE INTO notes(id, body) VALUES (2, 'b')")
    connection.execute("DELETE FROM notes")
    logged = [[name, json.loads(args)] for name, args in
              connection.execute("SELECT name, args FROM swift_callback_log ORDER BY seq")]
    print(json.dumps({"installed": installed, "logged": logged}))


def stdlib_blob_write(library):
    """Runs in SYSTEM_PYTHON: an incremental BLOB write in a transaction that
    wrote the captured table, after an insert that was ignored (whose BEFORE
    trigger ran): sqlite3_blob_write reports it to the hook as a DELETE."""
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.enable_load_extension(True)
    connection.load_extension(library)
    connection.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE, b BLOB)")
    connection.execute("SELECT sqlitetriggers_change_feed('t')")
    connection.execute("INSERT INTO t VALUES (1, 'a', zeroblob(4))")
    connection.execute("BEGIN")
    connection.execute("INSERT OR IGNORE INTO t VALUES (2, 'a', NULL)")
    with connection.blobopen("t", "b", 1) as blob:
        blob.write(b"\x01\x02\x03\x04")
    try:
        connection.execute("COMMIT")
        error = None
    except sqlite3.Error as failure:
        error = str(failure)
    logged = [json.loads(args) for (args,) in connection.execute("SELECT args FROM swift_callback_log ORDER BY seq")]
    stored = connection.execute("SELECT hex(b) FROM t").fetchone()[0]
    print(json.dumps({"error": error, "logged": logged, "stored": stored}))


def run_stdlib_blob_write():
    result = subprocess.run([SYSTEM_PYTHON, __file__, "--blob", os.path.abspath(library_path())],
                            capture_output=True, text=True)
    seen = json.loads(result.stdout) if result.returncode == 0 else {"error": result.stderr, "logged": None}
    mismatches = []
    if "incremental BLOB write" not in (seen["error"] or "") or "write BLOBs with UPDATE" not in (seen["error"] or ""):
        mismatches.append(f"the COMMIT should fail naming the BLOB write and the remedy: {seen['error']!r}")
    if seen.get("logged") != [["insert", 1, 1, "a", {"blob": "00000000"}]] or seen.get("stored") != "00000000":
        mismatches.append(f"no forged delete, nothing committed: {seen}")
    check("an incremental BLOB write to a captured table fails its COMMIT loudly, never forging a delete",
          mismatches, 2)


def run_stdlib():
    result = subprocess.run([SYSTEM_PYTHON, __file__, "--stdlib", os.path.abspath(library_path())],
                            capture_output=True, text=True)
    if result.returncode != 0:
        check("Python's sqlite3 reads a table's committed changes", [result.stderr.strip()], 1)
        return
    output = json.loads(result.stdout)
    installed, logged = output["installed"], [tuple(entry) for entry in output["logged"]]
    expected = [
        ("sqlitetriggers.changes.notes", ["insert", 1, 1, "a", 1.5]),
        ("sqlitetriggers.changes.notes", ["update", 1, 1, "a", 1.5, 1, 1, "b", 1.5]),
        ("sqlitetriggers.changes.notes", ["delete", 1, 1, "b", 1.5]),
        ("sqlitetriggers.changes.notes", ["insert", 2, 2, "b", None]),
        ("sqlitetriggers.changes.notes", ["delete", 2, 2, "b", None]),
    ]
    mismatches = [] if (installed, logged) == ("rows", expected) else [f"installed {installed}, logged {logged}"]
    check("Python's sqlite3 reads a table's committed changes, REPLACE's deletion included", mismatches,
          len(expected))


def run_apsw():
    import apsw
    connection = apsw.Connection(":memory:")
    connection.enable_load_extension(True)
    connection.load_extension(library_path(), "sqlite3_sqlitetriggers_init")
    cursor = connection.cursor()
    cursor.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
    refusals = []
    for mode in ("rows", "keys"):
        try:
            cursor.execute(f"SELECT sqlitetriggers_change_feed('notes', '{mode}')")
            refusals.append(None)
        except apsw.SQLError as error:
            refusals.append(str(error))
    triggers = cursor.execute("SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'").fetchone()[0]
    mismatches = []
    for mode, message in zip(("rows", "keys"), refusals):
        if message is None or "preupdate hook" not in message or "sqlitetriggers_change_feed" not in message \
                or "'net'" not in message:
            mismatches.append(f"apsw, mode {mode}: expected a refusal naming the preupdate hook and mode 'net', "
                              f"got {message!r}")
    if triggers != 0:
        mismatches.append(f"apsw: {triggers} triggers installed by a refused feed")
    check("a host that hides the preupdate hook (apsw) refuses the exact modes loudly, installing nothing",
          mismatches, 3)

    installed = cursor.execute("SELECT sqlitetriggers_change_feed('notes')").fetchone()[0]
    mode = cursor.execute("SELECT sqlitetriggers_change_feed_mode('notes')").fetchone()[0]
    cursor.execute("INSERT INTO notes(body) VALUES ('a')")
    cursor.execute("BEGIN; INSERT INTO notes(body) VALUES ('b'); UPDATE notes SET body = 'c' WHERE id = 2;"
                   " UPDATE notes SET body = 'A' WHERE id = 1; COMMIT;")
    logged = [json.loads(args) for (args,) in cursor.execute("SELECT args FROM swift_callback_log ORDER BY seq")]
    expected = [["insert", 1, 1, "a"], ["insert", 2, 2, "c"], ["update", 1, 1, "a", 1, 1, "A"]]
    check("there a feed without MODE takes mode 'net' by itself, says so, and gives a transaction's net changes",
          [] if (installed, mode, logged) == ("net", "net", expected) else [f"{installed}, {mode}, {logged}"], 3)


def run_busy_commit():
    """A COMMIT that fails after the net feed read the transaction at xSync
    (SQLITE_BUSY: another connection reads, in rollback-journal mode) leaves
    the transaction open; the next COMMIT reads it again, with what was
    written since, and each net change arrives once."""
    import apsw
    path = os.path.join(tempfile.mkdtemp(), "busy.db")

    def connect():
        connection = apsw.Connection(path)
        connection.enable_load_extension(True)
        connection.load_extension(library_path(), "sqlite3_sqlitetriggers_init")
        return connection
    writer, reader = connect(), connect()
    writer.execute("PRAGMA journal_mode = DELETE").fetchall()
    writer.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
    writer.execute("SELECT sqlitetriggers_change_feed('t')").fetchall()
    writer.execute("INSERT INTO t VALUES (1, 'a')")
    reader.execute("BEGIN; SELECT count(*) FROM t").fetchall()
    writer.execute("BEGIN; INSERT INTO t VALUES (2, 'b'); UPDATE t SET v = 'A' WHERE id = 1")
    try:
        writer.execute("COMMIT")
        busy = False
    except apsw.BusyError:
        busy = True
    writer.execute("INSERT INTO t VALUES (3, 'c'); DELETE FROM t WHERE id = 2")
    reader.execute("COMMIT")
    writer.execute("COMMIT")
    logged = [json.loads(args) for (args,) in writer.execute("SELECT args FROM swift_callback_log ORDER BY seq")]
    expected = [["insert", 1, 1, "a"], ["update", 1, 1, "a", 1, 1, "A"], ["insert", 3, 3, "c"]]
    check("mode 'net': a COMMIT that fails busy after the feed read the transaction, then succeeds, delivers "
          "each net change once, with the writes made in between",
          [] if (busy, logged) == (True, expected) else [f"busy {busy}, logged {logged}"], 2)


def run():
    run_stdlib()
    run_stdlib_blob_write()
    run_apsw()
    run_busy_commit()


if __name__ == "__main__" and sys.argv[1:2] == ["--stdlib"]:
    stdlib_log(sys.argv[2])
if __name__ == "__main__" and sys.argv[1:2] == ["--blob"]:
    stdlib_blob_write(sys.argv[2])
