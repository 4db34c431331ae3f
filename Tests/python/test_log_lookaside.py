"""The durable log's conflict probes on the SQLite versions Apple ships,
which keep lookaside memory (Debian's SQLite omits it): a probe's trigger
frame must fit a lookaside slot (1,200 bytes), or every INSERT and UPDATE of
the table pays a malloc more.  With two constant arguments to
sqlite_compileoption_get() the probe's frame was 1,205 bytes on 3.39.4
(log_triggers.c's appendProbeCall()).

On each version, in a process of its own: a table keyed by text (a probe
through the rowid) with a UNIQUE column (a probe through it) is logged;
100 inserts and 100 updates are counted by SQLITE_DBSTATUS_LOOKASIDE_MISS_SIZE,
the allocations lookaside could not take for their size; then the same with
the two probe triggers dropped.  The probes must add no miss per write (the
one or two of compiling them aside), for a writer with the extension and
one without.
"""
import json
import os
import sys
import tempfile

from checks import apple_apsw_children, check, library_path

SCHEMA = "CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT);"
INSERT = "INSERT INTO notes(id, title, body) VALUES ('n' || ?1, 't' || ?1, 'a')"
UPDATE = "UPDATE notes SET body = 'b' WHERE id = 'n' || ?1"


def misses(connection, statement, first):
    """Lookaside misses for size while statement writes rows first to first + 99."""
    import apsw
    connection.status(apsw.SQLITE_DBSTATUS_LOOKASIDE_MISS_SIZE, True)
    cursor = connection.cursor()
    cursor.execute("SAVEPOINT writes")
    for i in range(first, first + 100):
        cursor.execute(statement, (i,))
    cursor.execute("RELEASE writes")
    return connection.status(apsw.SQLITE_DBSTATUS_LOOKASIDE_MISS_SIZE, True)[1]


def child(library):
    """In the version's own process: the misses, as JSON."""
    import apsw
    seen = {}
    directory = tempfile.mkdtemp(prefix="lookaside_")
    path = os.path.join(directory, "notes.db")
    installer = apsw.Connection(path)
    (getattr(installer, "enable_load_extension", None) or installer.enableloadextension)(True)
    (getattr(installer, "load_extension", None) or installer.loadextension)(library, "sqlite3_sqlitetriggers_init")
    installer.cursor().execute(SCHEMA + "SELECT sqlitetriggers_log_install('notes');")
    for writer in ("without the extension", "with the extension"):
        connection = installer if writer == "with the extension" else apsw.Connection(path)
        base = 0 if writer == "without the extension" else 1000
        with_probes = (misses(connection, INSERT, base), misses(connection, UPDATE, base))
        connection.cursor().execute("SAVEPOINT s; DROP TRIGGER sqlitetriggers_log_1_replace_insert;"
                                    " DROP TRIGGER sqlitetriggers_log_1_replace_update;")
        without_probes = (misses(connection, INSERT, base + 100), misses(connection, UPDATE, base + 100))
        connection.cursor().execute("ROLLBACK TO s; RELEASE s")
        seen[writer] = {"with probes": with_probes, "without": without_probes}
        if connection is not installer:
            connection.close()
    installer.close()
    for name in os.listdir(directory):
        os.remove(os.path.join(directory, name))
    os.rmdir(directory)
    print(json.dumps(seen))


def run():
    def name_of(version):
        return f"Apple's SQLite {version} (apsw): the log's probes fit lookaside (no malloc more per write)"
    for _, name, seen in apple_apsw_children(__file__, name_of, library_path()):
        mismatches = []
        for writer, counts in seen.items():
            # Compiling the larger programs misses once or twice; a miss
            # per write would add 100.
            added = [with_probes - without for with_probes, without in zip(counts["with probes"], counts["without"])]
            if max(added) >= 10:
                mismatches.append(f"{writer}: (inserts, updates) missed lookaside {counts['with probes']} times "
                                  f"with the probes, {counts['without']} without")
        check(name, mismatches, len(seen))


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    child(sys.argv[2])
