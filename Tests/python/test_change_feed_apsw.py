"""sqlitetriggers_change_feed() in a Python host: apsw's newer SQLite
loads the library, installs a table's change feed from SQL, and reads each
committed change back from swift_callback_log, with its values, in order,
never for a rollback.
"""
import json

import apsw

from checks import check, library_path


def run():
    connection = apsw.Connection(":memory:")
    connection.enable_load_extension(True)
    connection.load_extension(library_path(), "sqlite3_sqlitetriggers_init")
    cursor = connection.cursor()
    cursor.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT, score REAL)")
    installed = cursor.execute("SELECT sqlitetriggers_change_feed('notes')").fetchone()[0]
    cursor.execute("INSERT INTO notes(body, score) VALUES ('a', 1.5)")
    cursor.execute("BEGIN; UPDATE notes SET body = 'rolled back'; ROLLBACK;")
    cursor.execute("UPDATE notes SET body = 'b'")
    cursor.execute("DELETE FROM notes")
    logged = [(name, json.loads(args)) for name, args in
              cursor.execute("SELECT name, args FROM swift_callback_log ORDER BY seq")]
    expected = [
        ("sqlitetriggers.changes.notes", ["insert", 1, 1, "a", 1.5]),
        ("sqlitetriggers.changes.notes", ["update", 1, 1, "a", 1.5, 1, 1, "b", 1.5]),
        ("sqlitetriggers.changes.notes", ["delete", 1, 1, "b", 1.5]),
    ]
    mismatches = [] if (installed, logged) == (3, expected) else [f"installed {installed}, logged {logged}"]
    check("a Python host reads a table's committed changes from the change feed", mismatches, len(expected))
