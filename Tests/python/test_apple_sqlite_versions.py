"""The SQLite versions Apple ships, through apsw's wheels of exactly those
versions: 3.39.4 (iOS 16, macOS 13), 3.43.2 (iOS 17 and 18, macOS 14 and
15) and 3.51.0 (iOS 26), built like Apple's with DEFAULT_RECURSIVE_TRIGGERS.
make installs each into build/apple-apsw/VERSION; each runs in a process of
its own (one apsw per process).

On each: the library loads; its functions answer; swift_callback() events
reach the log only when their transaction commits, with recursive triggers
on as Apple's default has them (apsw turns them off; the test turns them
back on), beside a rule that rewrites the row; and a change feed installs in
mode 'net' by itself: apsw's wheels link their SQLite with hidden symbols
(the 3.39.4 and 3.43.2 ones without the preupdate hook at all), so the
exact capture cannot run there (test_net_feed_oracle.py checks 'net' there).
Apple's own libsqlite3 exports the hook to the apps that link it, as
GRDB's own declarations of it rely on; that, we cannot run here.
"""
import json
import sys

from checks import apple_apsw_children, check, library_path



def child(library):
    """Runs in the version's own process: prints what it saw as JSON."""
    import apsw
    seen = {"version": apsw.sqlitelibversion()}
    connection = apsw.Connection(":memory:")
    # apsw's older releases spell these without underscores.
    (getattr(connection, "enable_load_extension", None) or connection.enableloadextension)(True)
    (getattr(connection, "load_extension", None) or connection.loadextension)(library, "sqlite3_sqlitetriggers_init")
    cursor = connection.cursor()
    cursor.execute("PRAGMA recursive_triggers = ON")
    seen["recursive_triggers"] = cursor.execute("PRAGMA recursive_triggers").fetchone()[0]
    seen["functions"] = cursor.execute(
        "SELECT uuid_version(uuidv7()), datetime_subsec(1700000000.5, 'unixepoch'), "
        "length(uuid()), uuid_blob('00000000-0000-4000-8000-000000000000') IS NOT NULL").fetchone()
    cursor.execute("""
        CREATE TABLE reminders(id INTEGER PRIMARY KEY, title TEXT, status INT DEFAULT 0);
        CREATE TEMP TRIGGER completed AFTER UPDATE OF status ON main.reminders
          WHEN new.status = 1 AND old.status <> 1
          BEGIN SELECT swift_callback('reminderCompleted', new.id, new.title); END;
        CREATE TEMP TRIGGER touch AFTER UPDATE ON main.reminders WHEN new.title IS old.title
          BEGIN UPDATE reminders SET title = title || '!' WHERE id = new.id; END;
        INSERT INTO reminders(title) VALUES ('a'), ('b');
        BEGIN; UPDATE reminders SET status = 1 WHERE id = 1; ROLLBACK;
        UPDATE reminders SET status = 1 WHERE id = 2;
    """)
    # The touch may run before or after the callback's trigger (SQLite's
    # order is unspecified): the title is either.
    seen["log"] = [json.loads(args)[0] for (args,) in cursor.execute("SELECT args FROM swift_callback_log ORDER BY seq")]
    seen["titles"] = [title for (title,) in cursor.execute("SELECT title FROM reminders ORDER BY id")]
    try:
        seen["feed"] = cursor.execute("SELECT sqlitetriggers_change_feed('reminders')").fetchone()[0]
    except apsw.SQLError as error:
        seen["feed"] = str(error)
    seen["feed_triggers"] = cursor.execute(
        "SELECT count(*) FROM sqlite_temp_master WHERE name LIKE 'sqlitetriggers_changes_%'").fetchone()[0]
    print(json.dumps(seen))


def run():
    for version, name, seen in apple_apsw_children(__file__, lambda version: f"Apple's SQLite {version} (apsw)",
                                                   library_path()):
        mismatches = []
        expectations = [
            ("version", version),
            ("recursive_triggers", 1),
            ("functions", [7, "2023-11-14 22:13:20.500", 36, 1]),
            ("log", [2]),
            ("titles", ["a", "b!"]),
            ("feed", "net"),
            ("feed_triggers", 5),
        ]
        for key, expected in expectations:
            if seen[key] != expected:
                mismatches.append(f"{key}: expected {expected!r}, got {seen[key]!r}")
        check(name + ": functions, swift_callback after commit, a feed in mode 'net' by itself", mismatches,
              len(expectations))


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    child(sys.argv[2])
