"""Net changes per transaction on hosts that hide the preupdate hook.

A change feed installed without a MODE on such a host takes mode 'net'
(ext/change_net.c): at commit, one event per row the transaction changed,
with the row's values before the transaction and after it.  A randomized
oracle checks it where it matters, on every such host make installs:
apsw's wheels of Apple's SQLite versions (3.39.4, 3.43.2, 3.51.0),
sqlean.py, Debian forky's sqlite3 shell 3.53.4 (which embeds SQLite), and,
with MODE 'net' given, Python's own sqlite3 module on the system's SQLite,
which has the hook.  The same workload then runs the exact feed (mode
'rows', its generated length STORED) through Python's sqlite3 on the
system's SQLite 3.40.1 and Debian's 3.46.1 and 3.53.4, with columns added
to a table between the writes of some transactions: a replica applying
every change in order equals the tables, each change's old side is the row
the replica holds (a row stored before a column was added reads its
default), and the changes folded per row equal the difference of the
tables.

The transactions mix the write paths: REPLACE through the key and a UNIQUE
column, upserts, key changes, foreign-key cascades, savepoints rolled back,
statements that fail, rollbacks, a WITHOUT ROWID table keyed on a later
column, REAL columns given integers, BLOBs, VIRTUAL and STORED generated
columns, and rules (a persistent trigger created before the feed, a TEMP
one after it) that rewrite rows the statement wrote; in both PRAGMA
recursive_triggers modes.  After every transaction:
  - a replica kept from the events alone equals the tables, value for
    value and type for type;
  - the transaction's events are exactly the difference of the tables
    before and after it (a rolled-back transaction has none).
"""
import json
import os
import random
import subprocess
import sys

from checks import check, library_path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
APSW_VERSIONS = ["3.39.4", "3.43.2", "3.51.0"]
FORKY_SHELL = os.path.join(ROOT, "build", "sqlite-versions", "3.53.4", "sqlite3")
SYSTEM_PYTHON = "/usr/bin/python3"
TRANSACTIONS = 250

# Each table: its columns as SELECT * shows them, and where its key is
# (None: the rowid).
TABLES = {
    "parent": (["id", "name", "score", "data", "len", "up"], None),
    "child": (["code", "n", "pid", "r"], [1, 0]),
    "plain": (["a", "b", "c"], None),
}

SCHEMA = [
    "PRAGMA foreign_keys = ON",
    "CREATE TABLE parent(id INTEGER PRIMARY KEY, name TEXT UNIQUE, score REAL, data BLOB,"
    " len INT GENERATED ALWAYS AS (length(name)) VIRTUAL,"
    " up TEXT GENERATED ALWAYS AS (upper(name)) STORED)",
    "CREATE TABLE child(code TEXT NOT NULL, n INTEGER NOT NULL,"
    " pid INTEGER REFERENCES parent(id) ON DELETE CASCADE ON UPDATE CASCADE, r REAL,"
    " PRIMARY KEY(n, code)) WITHOUT ROWID",
    "CREATE TABLE plain(a, b, c)",
]
# A rule created before the feed: renaming a parent bumps its score.
RULE_BEFORE = ("CREATE TRIGGER parent_bump AFTER UPDATE OF name ON parent BEGIN"
               " UPDATE parent SET score = coalesce(score, 0) + 1 WHERE id = new.id; END")
# One created after it: a child inserted without r gets 0.5.
RULE_AFTER = ("CREATE TEMP TRIGGER child_default AFTER INSERT ON main.child WHEN new.r IS NULL BEGIN"
              " UPDATE child SET r = 0.5 WHERE n = new.n AND code = new.code; END")


def dump_sql(added=()):
    """One statement whose single text value is the tables and the log, as
    JSON; added: the (name, default) columns added to plain so far, whose
    defaults it carries too (a row stored before reads them)."""
    def typed(column):
        return (f"json_array(typeof({column}), CASE typeof({column}) WHEN 'blob' THEN hex({column})"
                f" WHEN 'real' THEN printf('%!.17g', {column}) ELSE {column} END)")
    parts = []
    for table, (columns, key) in TABLES.items():
        rowid = "NULL" if key else "rowid"
        columns = columns + [name for name, _ in added] if table == "plain" else columns
        values = ", ".join(typed(column) for column in columns)
        parts.append(f"'{table}', (SELECT json_group_array(json_array({rowid}, {values})) FROM {table})")
    parts.append(f"'plainDefaults', json_array({', '.join(typed(literal(value)) for _, value in added)})")
    parts.append("'log', (SELECT json_group_array(json_array(seq, name, json(args)))"
                 " FROM swift_callback_log)")
    return f"SELECT 'DUMP' || char(9) || json_object({', '.join(parts)})"


def literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return "x'" + value.hex() + "'"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def statements(rng):
    """One random write."""
    name = lambda: rng.choice(["ann", "bob", "cy", "dee", "Ed", None])
    score = lambda: rng.choice([None, 1, 2.0, 2.5, -0.0, 0.1, 1.0000000000000002, 9007199254740993, "7"])
    data = lambda: rng.choice([None, b"", b"\x00\xff", "text", 3])
    pid = lambda: rng.randint(1, 8)
    conflict = lambda: rng.choice(["", "OR REPLACE ", "OR IGNORE ", "OR REPLACE "])
    code = lambda: rng.choice(["a", "b", "A"])
    writes = [
        lambda: (f"INSERT {conflict()}INTO parent(id, name, score, data) VALUES "
                 f"({literal(rng.choice([None, pid()]))}, {literal(name())}, {literal(score())}, {literal(data())})"),
        lambda: f"UPDATE {conflict()}parent SET name = {literal(name())} WHERE id = {pid()}",
        lambda: f"UPDATE parent SET score = {literal(score())}, data = {literal(data())} WHERE id = {pid()}",
        lambda: f"UPDATE {conflict()}parent SET id = {pid()} WHERE id = {pid()}",
        lambda: f"DELETE FROM parent WHERE id = {pid()}",
        lambda: (f"INSERT INTO parent(id, name, score) VALUES ({pid()}, {literal(name())}, {literal(score())})"
                 f" ON CONFLICT(name) DO UPDATE SET score = excluded.score"),
        lambda: (f"INSERT {conflict()}INTO child VALUES ({literal(code())}, {rng.randint(1, 5)},"
                 f" {literal(rng.choice([None, pid()]))}, {literal(rng.choice([None, 1, 1.5]))})"),
        lambda: f"UPDATE {conflict()}child SET code = {literal(code())}, r = {literal(score())} WHERE n = {rng.randint(1, 5)}",
        lambda: f"DELETE FROM child WHERE n = {rng.randint(1, 5)}",
        lambda: f"INSERT INTO plain(a, b, c) VALUES ({literal(score())}, {literal(name())}, {literal(data())})",
        lambda: f"REPLACE INTO plain(rowid, a, b) VALUES ({rng.randint(1, 6)}, {literal(score())}, {literal(name())})",
        lambda: f"UPDATE plain SET a = {literal(score())}, rowid = {rng.randint(1, 9)} WHERE rowid = {rng.randint(1, 9)}",
        lambda: f"DELETE FROM plain WHERE b IS {literal(name())}",
        lambda: f"UPDATE parent SET name = name WHERE id = {pid()}",
        lambda: "UPDATE plain SET b = b, a = a",
    ]
    return rng.choice(writes)()


def script(seed, recursive, mode):
    """The run's items: ("sql", text) to execute, ("dump", None) to read.
    For the exact feed (mode 'rows'), whose hook sees no VIRTUAL column, the
    generated length is STORED."""
    rng = random.Random(seed)
    schema = [sql.replace("VIRTUAL", "STORED") if mode == "rows" else sql for sql in SCHEMA]
    items = [("sql", s) for s in schema]
    items.append(("sql", f"PRAGMA recursive_triggers = {'ON' if recursive else 'OFF'}"))
    items.append(("sql", RULE_BEFORE))
    argument = f", '{mode}'" if mode else ""
    for table in TABLES:
        items.append(("install", f"SELECT sqlitetriggers_change_feed('{table}'{argument})"))
    items.append(("sql", RULE_AFTER))
    added = []
    items.append(("dump", list(added)))
    for number in range(TRANSACTIONS):
        # The exact feed: now and then a column added between writes of a
        # transaction that commits (events widen; old rows read its default).
        if mode == "rows" and number % 25 == 12:
            default = rng.choice([7, 2.5, "d", None, b"\x01"])
            added.append((f"x{len(added)}", default))
            items += [("sql", "BEGIN"), ("sql", statements(rng)), ("sql", "UPDATE plain SET a = a"),
                      ("sql", f"ALTER TABLE plain ADD COLUMN x{len(added) - 1} DEFAULT {literal(default)}"),
                      ("sql", statements(rng)), ("sql", "UPDATE plain SET b = b || ''"), ("sql", "COMMIT"),
                      ("dump", list(added))]
            continue
        items.append(("sql", "BEGIN"))
        savepoint = False
        for _ in range(rng.randint(1, 6)):
            roll = rng.random()
            if roll < 0.1 and not savepoint:
                items.append(("sql", "SAVEPOINT s"))
                savepoint = True
            elif roll < 0.18 and savepoint:
                items.append(("sql", "ROLLBACK TO s"))
            items.append(("sql", statements(rng)))
        items.append(("sql", "ROLLBACK" if rng.random() < 0.12 else "COMMIT"))
        items.append(("dump", list(added)))
    return items


def run_items(execute, items):
    """Runs items through execute(sql) -> first value of the first row (or
    raises); returns (install results, dumps)."""
    installs, dumps = [], []
    for kind, sql in items:
        if kind == "dump":
            dumps.append(json.loads(execute(dump_sql(sql)).split("\t", 1)[1]))
            continue
        try:
            result = execute(sql)
        except Exception as error:  # the random writes fail by design
            if kind == "install":
                installs.append("error: " + str(error))
            continue
        if kind == "install":
            installs.append(result)
    return installs, dumps


def run_shell(shell, library, items):
    """Runs the items in one sqlite3 shell process, reading its output."""
    lines = [".load " + library[:-3]]
    for kind, sql in items:
        if kind == "dump":
            lines.append(dump_sql(sql) + ";")
        elif kind == "install":
            lines.append("SELECT 'INSTALL' || char(9) || " + sql[len("SELECT "):] + ";")
        else:
            lines.append(sql + ";")
    result = subprocess.run([shell, ":memory:"], input="\n".join(lines) + "\n", capture_output=True, text=True)
    installs, dumps = [], []
    for line in result.stdout.splitlines():
        if line.startswith("DUMP\t"):
            dumps.append(json.loads(line.split("\t", 1)[1]))
        elif line.startswith("INSTALL\t"):
            installs.append(line.split("\t", 1)[1])
    for line in result.stderr.splitlines():
        if "sqlitetriggers_change_feed" in line:
            installs.append("error: " + line)
    return installs, dumps


# ---- the oracle -------------------------------------------------------------

def typed_from_dump(pair):
    kind, value = pair
    if kind == "real":
        return ("real", float(value))
    if kind == "blob":
        return ("blob", value.upper())
    if kind == "null":
        return ("null", None)
    return (kind, value)


def typed_from_event(value):
    if value is None:
        return ("null", None)
    if isinstance(value, dict):
        return ("blob", value["blob"].upper())
    if isinstance(value, bool):
        raise ValueError("a JSON boolean in an event")
    if isinstance(value, int):
        return ("integer", value)
    if isinstance(value, float):
        return ("real", value)
    return ("text", value)


def row_key(table, rowid, values):
    columns, key = TABLES[table]
    if key is None:
        return ("rowid", rowid)
    return tuple(values[i] for i in key)


def tables_of(dump):
    """The tables, and the defaults of the columns added to plain."""
    tables = {}
    for table in TABLES:
        rows = {}
        for entry in json.loads(dump[table]) if isinstance(dump[table], str) else dump[table]:
            rowid, values = entry[0], tuple(typed_from_dump(pair) for pair in entry[1:])
            rows[row_key(table, rowid, values)] = (rowid, values)
        tables[table] = rows
    defaults = dump["plainDefaults"]
    defaults = json.loads(defaults) if isinstance(defaults, str) else defaults
    return tables, tuple(typed_from_dump(pair) for pair in defaults)


def padded(table, row, defaults):
    """A row of plain as SELECT reads it after columns were added: the
    added columns it lacks read their defaults."""
    if row is None or table != "plain":
        return row
    rowid, values = row
    base = len(TABLES["plain"][0])
    return rowid, values + defaults[len(values) - base:]


def log_of(dump):
    entries = json.loads(dump["log"]) if isinstance(dump["log"], str) else dump["log"]
    return [(seq, name, args) for seq, name, args in entries]


def verify(installs, dumps, expected_mode):
    """The mismatches of one run, and the number of cases looked at.  The
    exact feed (mode 'rows') gives every change: the replica applies them in
    order, each one's old side must be the row the replica holds, and their
    fold per row (its first old side, its last new side) must be the
    difference of the tables."""
    exact = expected_mode == "rows"
    mismatches = []
    if installs != [expected_mode] * len(TABLES):
        mismatches.append(f"installs gave {installs}, expected {expected_mode!r} for each table")
    if len(dumps) != TRANSACTIONS + 1:
        return mismatches + [f"{len(dumps)} dumps, expected {TRANSACTIONS + 1}"], 1
    replica = {table: {} for table in TABLES}
    seen_seq = 0
    cases = 0
    previous, _ = tables_of(dumps[0])
    for number, dump in enumerate(dumps[1:], 1):
        now, defaults = tables_of(dump)
        new_events = [entry for entry in log_of(dump) if entry[0] > seen_seq]
        if new_events:
            seen_seq = new_events[-1][0]
        got = {table: {} for table in TABLES}
        for seq, name, args in new_events:
            table = name[len("sqlitetriggers.changes."):]
            kind, sides = args[0], args[1:]
            # A side's rowid and values (a column added widens later events).
            width = len(sides) // 2 if kind == "update" else len(sides)
            old = new = None
            if kind in ("delete", "update"):
                old = (sides[0], tuple(typed_from_event(v) for v in sides[1:width]))
            if kind == "insert":
                new = (sides[0], tuple(typed_from_event(v) for v in sides[1:width]))
            if kind == "update":
                new = (sides[width], tuple(typed_from_event(v) for v in sides[width + 1:2 * width]))
            if exact:
                fold(got[table], table, old, new)
            else:
                key = row_key(table, *(old or new))
                if key in got[table]:
                    mismatches.append(f"transaction {number}: two events for {table} {key}")
                got[table][key] = (kind, old, new)
            if exact and old is not None:
                # Each change's old side is the row as the replica has it.
                held = padded(table, replica[table].get(row_key(table, *old)), defaults)
                if held != padded(table, old, defaults):
                    mismatches.append(f"transaction {number}: a change's old side {old} is not the row "
                                      f"the replica holds, {held}")
            if old is not None:
                replica[table].pop(row_key(table, *old), None)
            if new is not None:
                replica[table][row_key(table, *new)] = new
        for table in TABLES:
            cases += 1
            replica[table] = {key: padded(table, row, defaults) for key, row in replica[table].items()}
            if replica[table] != now[table]:
                mismatches.append(f"transaction {number}: the replica of {table} differs from the table: "
                                  f"{sorted(map(str, replica[table].items()))[:4]} vs {sorted(map(str, now[table].items()))[:4]}")
                replica[table] = dict(now[table])
            expected = {}
            for key in set(previous[table]) | set(now[table]):
                before, after = padded(table, previous[table].get(key), defaults), now[table].get(key)
                if before == after:
                    continue
                kind = "insert" if before is None else "delete" if after is None else "update"
                expected[key] = (kind, before, after)
            if exact:
                sides = {key: (padded(table, before, defaults), padded(table, after, defaults))
                         for key, (before, after) in got[table].items()}
                got[table] = {key: (("insert" if before is None else "delete" if after is None else "update"),
                                    before, after)
                              for key, (before, after) in sides.items() if before != after}
            if expected != got[table]:
                mismatches.append(f"transaction {number}, {table}: events {got[table]} differ from "
                                  f"the difference of the tables {expected}")
        previous = now
    return mismatches, cases


def fold(folded, table, old, new):
    """Adds an exact change to folded: key -> (row before, row after) over
    the transaction; a change of key is a delete and an insert."""
    if old is not None and new is not None and row_key(table, *old) != row_key(table, *new):
        fold(folded, table, old, None)
        fold(folded, table, None, new)
        return
    key = row_key(table, *(old or new))
    before = folded[key][0] if key in folded else old
    folded[key] = (before, new)


def connect(host, library):
    """An execute(sql) -> first value function on a new connection of host
    ('apsw', 'sqlean' or 'sqlite3'), and the host's name with its SQLite."""
    if host == "apsw":
        import apsw
        connection = apsw.Connection(":memory:")
        (getattr(connection, "enable_load_extension", None) or connection.enableloadextension)(True)
        (getattr(connection, "load_extension", None) or connection.loadextension)(library, "sqlite3_sqlitetriggers_init")
        cursor = connection.cursor()

        def execute(sql):
            rows = list(cursor.execute(sql))
            return rows[0][0] if rows else None
        return execute, "apsw " + apsw.sqlitelibversion()
    module = __import__(host)
    connection = module.connect(":memory:", isolation_level=None)
    connection.enable_load_extension(True)
    connection.load_extension(library)

    def execute(sql):
        row = connection.execute(sql).fetchone()
        return row[0] if row else None
    return execute, f"{host} {module.sqlite_version}"


def child(library, host, mode):
    """Runs in a process of its own (one apsw per process)."""
    runs = []
    for seed, recursive in ((1, False), (2, True)):
        execute, name = connect(host, library)
        installs, dumps = run_items(execute, script(seed, recursive, mode or None))
        runs.append({"host": name, "recursive": recursive, "installs": installs, "dumps": dumps})
    print(json.dumps(runs))


def report(host, runs, expected_mode):
    for run_ in runs:
        mismatches, cases = verify(run_["installs"], run_["dumps"], expected_mode)
        what = "exact changes, folded," if expected_mode == "rows" else "net changes"
        check(f"{host}, recursive_triggers {'ON' if run_['recursive'] else 'OFF'}: {what} per transaction "
              f"equal the difference of the tables, and a replica equals them, over {TRANSACTIONS} "
              f"random transactions", mismatches, cases)


def run_child(python, host, mode, name, expected_mode, pythonpath=None):
    """python: the interpreter, or a command list that runs it."""
    environment = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else None
    command = python if isinstance(python, list) else [python]
    result = subprocess.run(command + [__file__, "--child", library_path(), host, mode], capture_output=True,
                            text=True, env=environment)
    if result.returncode != 0:
        check(f"{name} runs the net-change oracle", [result.stderr.strip()[-800:]], 1)
        return
    report(name, json.loads(result.stdout), expected_mode)


def run():
    for version in APSW_VERSIONS:
        target = os.path.join(ROOT, "build", "apple-apsw", version + ".0")
        if not os.path.isdir(target):
            check(f"apsw {version} runs the net-change oracle", [f"{target} is missing: make installs it"], 1)
            continue
        run_child(sys.executable, "apsw", "", f"apsw {version} (no preupdate hook; the feed's default mode)",
                  "net", target)
    run_child(sys.executable, "sqlean", "", "sqlean.py (no preupdate hook; the feed's default mode)", "net")
    run_child(SYSTEM_PYTHON, "sqlite3", "net", "Python's sqlite3 (the hook is there; mode 'net' asked)", "net")
    # The exact feed under the same workload, folded, on every SQLite with
    # the hook that make test runs: the system's and Debian's newer ones.
    run_child(SYSTEM_PYTHON, "sqlite3", "rows", "the exact feed, Python's sqlite3 on the system SQLite", "rows")
    for version in ("3.46.1", "3.53.4"):
        runner = os.path.join(ROOT, "build", "sqlite-versions", version, "run")
        if not os.path.exists(runner):
            check(f"the exact feed on SQLite {version}", [f"{runner} is missing: Tests/versions/fetch.sh unpacks it"], 1)
            continue
        run_child([runner, SYSTEM_PYTHON], "sqlite3", "rows", f"the exact feed, Python's sqlite3 on SQLite {version}",
                  "rows")
    if not os.path.exists(FORKY_SHELL):
        check("forky's sqlite3 shell 3.53.4 runs the net-change oracle",
              [f"{FORKY_SHELL} is missing: Tests/versions/fetch.sh unpacks it"], 1)
        return
    runs = []
    for seed, recursive in ((3, False), (4, True)):
        installs, dumps = run_shell(FORKY_SHELL, library_path(), script(seed, recursive, None))
        runs.append({"recursive": recursive, "installs": installs, "dumps": dumps})
    report("forky's sqlite3 shell 3.53.4 (embeds SQLite; the feed's default mode)", runs, "net")


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    child(sys.argv[2], sys.argv[3], sys.argv[4])
