"""The durable change log under real processes (durable_log.c's top comment
gives the format and the consumer's protocol).

Several processes write one database file at once: Python's sqlite3 module
and the sqlite3 CLI, neither with the extension loaded, apsw with it (on
the SQLite of iOS 16 and macOS 13, 3.39.4, when make installed it), and
the Swift API (SQLiteTriggersGRDB on a DatabasePool, Tests/processes/swift),
whose rows are stamped with their transaction, in both
PRAGMA recursive_triggers modes, through every write path (foreign-key
cascades, INSERT OR REPLACE and UPDATE OR REPLACE over the key and over a
UNIQUE column, upserts, key changes, a trigger of the app's writing another
table, failing statements, savepoints, rollbacks).  Meanwhile consumers in
other processes read the log in plain SQL and keep replicas:

  exactly-once: its replica tables live in the same file, and each batch is
      applied and the position advanced in one transaction;
  at-least-once: its replica is another file, committed before the
      position moves, so a crash between the two repeats the batch;
  swift: observeDurableChanges, exactly once, in a Swift process.

The driver kills consumers with SIGKILL at random moments and starts them
again.  When the writers are done and the consumers have drained the log,
each replica must equal the tables, and the log must be empty (compacted).
An auditor consumer, which reads only at the end, checks the stamps: each
transaction of the writers with the extension is one run of rows whose tx
is one stamp of its own, and every other row has none.

  python3 durable_log.py DIR [--mode wal|delete] [--transactions N] [--seed S]
      [--swift PATH]   (the durable-log-process executable; without it, no
                        Swift processes)

prints one "processes:" summary line with the counts.
"""
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

TABLES = {
    # name: (key columns, all columns)
    "lists": (["id"], ["id", "title", "position"]),
    "reminders": (["id"], ["id", "listId", "title", "done"]),
    "tags": (["name", "owner"], ["name", "owner", "note"]),
}

SCHEMA = """
CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT UNIQUE, position INTEGER NOT NULL DEFAULT 0);
CREATE TABLE reminders(id TEXT PRIMARY KEY NOT NULL, listId INTEGER NOT NULL REFERENCES lists(id)
    ON DELETE CASCADE ON UPDATE CASCADE, title TEXT, done INTEGER NOT NULL DEFAULT 0);
CREATE TABLE tags(name TEXT NOT NULL, owner TEXT NOT NULL, note TEXT, PRIMARY KEY(name, owner)) WITHOUT ROWID;
-- The app's own rule, writing another logged table's row.
CREATE TRIGGER reminderCounts AFTER INSERT ON reminders BEGIN
  UPDATE lists SET position = position + 1 WHERE id = new.listId;
END;
"""

REPLICA_SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}lists(id INTEGER PRIMARY KEY, title, position);
CREATE TABLE IF NOT EXISTS {p}reminders(id TEXT PRIMARY KEY, listId, title, done);
CREATE TABLE IF NOT EXISTS {p}tags(name, owner, note, PRIMARY KEY(name, owner)) WITHOUT ROWID;
"""
CONSUMERS = ("inplace", "remote", "swift")


def connect(path, timeout=60):
    db = sqlite3.connect(path, timeout=timeout, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")
    return db


# ---- writers ---------------------------------------------------------------

def random_statement(rng):
    """One random write, as SQL text with literals (the CLI runs it too)."""
    list_id = rng.randint(1, 12)
    title = rng.choice(["inbox", "home", "work", "errands", "Home", "later", None])
    rid = f"r{rng.randint(1, 40)}"
    tag = rng.choice(["red", "blue", "green"])
    owner = f"r{rng.randint(1, 40)}"
    q = lambda v: "NULL" if v is None else "'" + str(v).replace("'", "''") + "'"  # noqa: E731
    return rng.choice([
        f"INSERT INTO lists(id, title) VALUES ({list_id}, {q(title)})",
        f"INSERT OR REPLACE INTO lists(id, title) VALUES ({list_id}, {q(title)})",
        f"INSERT OR IGNORE INTO lists(title) VALUES ({q(title)})",
        f"UPDATE OR REPLACE lists SET title = {q(title)} WHERE id = {list_id}",
        f"UPDATE lists SET id = {rng.randint(1, 12)} WHERE id = {list_id}",
        f"UPDATE OR REPLACE lists SET id = {rng.randint(1, 12)} WHERE id = {list_id}",
        f"DELETE FROM lists WHERE id = {list_id}",
        f"INSERT INTO reminders(id, listId, title) VALUES ({q(rid)}, {list_id}, {q(title)})"
        f" ON CONFLICT(id) DO UPDATE SET title = excluded.title, done = done + 1",
        f"INSERT OR REPLACE INTO reminders(id, listId, title) VALUES ({q(rid)}, {list_id}, {q(title)})",
        f"UPDATE reminders SET done = done + 1 WHERE listId = {list_id}",
        f"UPDATE OR REPLACE reminders SET id = {q(rid)} WHERE id = 'r{rng.randint(1, 40)}'",
        f"DELETE FROM reminders WHERE id = {q(rid)}",
        f"INSERT OR REPLACE INTO tags VALUES ({q(tag)}, {q(owner)}, {q(title)})",
        f"UPDATE tags SET owner = 'r{rng.randint(1, 40)}' WHERE name = {q(tag)} AND owner = {q(owner)}",
        f"DELETE FROM tags WHERE owner = {q(owner)}",
    ])


def random_transaction(rng):
    """A list of SQL statements: one transaction, maybe with a savepoint
    rolled back, maybe rolled back as a whole."""
    body = [random_statement(rng) for _ in range(rng.randint(1, 6))]
    if rng.random() < 0.2:
        cut = rng.randint(0, len(body))
        body = body[:cut] + ["SAVEPOINT sp"] + [random_statement(rng) for _ in range(2)] \
            + ["ROLLBACK TO sp", "RELEASE sp"] + body[cut:]
    end = "ROLLBACK" if rng.random() < 0.1 else "COMMIT"
    return ["BEGIN IMMEDIATE"] + body + [end]


def python_writer(path, seed, count, recursive):
    rng = random.Random(seed)
    db = connect(path)
    db.execute(f"PRAGMA recursive_triggers = {'ON' if recursive else 'OFF'}")
    committed = 0
    for _ in range(count):
        time.sleep(rng.uniform(0, 0.002))    # so that the writers interleave
        for sql in random_transaction(rng):
            try:
                db.execute(sql)
                if sql == "COMMIT":
                    committed += 1
            except sqlite3.IntegrityError:
                pass      # a failing statement; the transaction goes on
    print(committed)


def extension_writer(path, seed, count, recursive, ext):
    """Writes through apsw with the extension loaded, which stamps its log
    rows; prints the id range of each committed transaction's rows."""
    import apsw
    rng = random.Random(seed)
    db = apsw.Connection(path)
    # Old apsw (3.39's) spells these without underscores.
    (getattr(db, "set_busy_timeout", None) or db.setbusytimeout)(60000)
    (getattr(db, "enable_load_extension", None) or db.enableloadextension)(True)
    (getattr(db, "load_extension", None) or db.loadextension)(ext)
    db.execute("PRAGMA foreign_keys = ON")
    db.execute(f"PRAGMA recursive_triggers = {'ON' if recursive else 'OFF'}")
    version = (getattr(apsw, "sqlite_lib_version", None) or apsw.sqlitelibversion)()
    print(f"apsw writer on SQLite {version}", file=sys.stderr)
    end = "SELECT coalesce((SELECT id FROM sqlitetriggers_log ORDER BY id DESC LIMIT 1), 0)"
    ranges = []
    for _ in range(count):
        time.sleep(rng.uniform(0, 0.002))
        for sql in random_transaction(rng):
            if sql == "COMMIT":
                last = db.execute(end).fetchone()[0]
            try:
                db.execute(sql)
            except apsw.ConstraintError:
                continue
            if sql == "BEGIN IMMEDIATE":
                first = db.execute(end).fetchone()[0] + 1
            if sql == "COMMIT" and last >= first:
                ranges.append([first, last])
    print(json.dumps(ranges))


def audit_stamps(db, ranges):
    """Mismatches between the log's tx column and the extension writers'
    transactions (ranges of ids): each one's rows share one stamp, which no
    other row carries; every other row is unstamped."""
    owner = {}
    for first, last in ranges:
        for i in range(first, last + 1):
            owner[i] = first
    rows = db.execute("SELECT id, tx FROM sqlitetriggers_log ORDER BY id").fetchall()
    stamp_of, problems = {}, []
    for i, tx in rows:
        transaction = owner.get(i)
        if transaction is None:
            if tx is not None:
                problems.append(f"row {i}: tx {tx}, expected none (a writer without the extension)")
        elif tx is None or stamp_of.setdefault(transaction, tx) != tx:
            problems.append(f"row {i}: tx {tx}, expected the stamp of the transaction from {transaction}")
    if len(set(stamp_of.values())) != len(stamp_of):
        problems.append("two transactions share a stamp")
    return problems, len(rows)


def cli_script(seed, count, recursive):
    rng = random.Random(seed)
    lines = [".timeout 60000", "PRAGMA foreign_keys = ON;",
             f"PRAGMA recursive_triggers = {'ON' if recursive else 'OFF'};"]
    for _ in range(count):
        # Each statement on its own line: the CLI skips the rest of a line
        # after an error, and goes on with the next.
        lines.extend(sql + ";" for sql in random_transaction(rng))
    return "\n".join(lines) + "\n"


# ---- consumers -------------------------------------------------------------

def current_row(db, table, key):
    keys, columns = TABLES[table]
    values = json.loads(key) if len(keys) > 1 else [key]
    where = " AND ".join(f"{k} = ?" for k in keys)
    return db.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {where}", values).fetchone(), values


def apply_change(source, target, prefix, table, key):
    """Makes the replica's row of (table, key) what the source holds now."""
    keys, columns = TABLES[table]
    row, values = current_row(source, table, key)
    where = " AND ".join(f"{k} = ?" for k in keys)
    target.execute(f"DELETE FROM {prefix}{table} WHERE {where}", values)
    if row is not None:
        target.execute(f"INSERT INTO {prefix}{table} VALUES ({', '.join('?' * len(columns))})", row)


def read_batch(db, name, limit):
    position, = db.execute("SELECT position FROM sqlitetriggers_log_consumers WHERE name = ?", (name,)).fetchone()
    through, = db.execute("SELECT compactedThrough FROM sqlitetriggers_log_meta").fetchone()
    if position < through:
        raise RuntimeError(f"consumer {name} fell behind")
    return db.execute("SELECT id, tableName, kind, rowKey FROM sqlitetriggers_changes"
                      " WHERE id > ? ORDER BY id LIMIT ?", (position, limit)).fetchall()


def consumer(path, name, kind, replica_path, stop_file, seed):
    """Runs until the stop file exists and the log holds nothing for it."""
    rng = random.Random(seed)
    db = connect(path)
    replica = connect(replica_path) if kind == "remote" else db
    prefix = "replica_" if kind == "inplace" else ""
    applied = 0
    while True:
        stopping = os.path.exists(stop_file)
        if kind == "inplace":
            # Exactly once: read, apply and advance in one write transaction.
            db.execute("BEGIN IMMEDIATE")
            batch = read_batch(db, name, rng.randint(1, 40))
            for _, table, _, key in batch:
                apply_change(db, db, prefix, table, key)
            if batch:
                db.execute("UPDATE sqlitetriggers_log_consumers SET position = ? WHERE name = ?",
                           (batch[-1][0], name))
            db.execute("COMMIT")
        else:
            # At least once: a read transaction, the replica's commit, then
            # the position.
            db.execute("BEGIN")
            batch = read_batch(db, name, rng.randint(1, 40))
            rows = [(table, key) for _, table, _, key in batch]
            replica.execute("BEGIN IMMEDIATE")
            for table, key in rows:
                apply_change(db, replica, prefix, table, key)
            db.execute("COMMIT")
            replica.execute("COMMIT")
            if batch:
                db.execute("UPDATE sqlitetriggers_log_consumers SET position = max(position, ?)"
                           " WHERE name = ?", (batch[-1][0], name))
        applied += len(batch)
        if not batch:
            if stopping:
                break
            time.sleep(0.01)


# ---- the driver ------------------------------------------------------------

def table_rows(db, prefix=""):
    out = {}
    for table, (keys, columns) in TABLES.items():
        out[table] = db.execute(f"SELECT {', '.join(columns)} FROM {prefix}{table}"
                                f" ORDER BY {', '.join(keys)}").fetchall()
    return out


def run_once(directory, mode, transactions, seed, ext, sqlite3_cli, swift):
    """One run in one journal mode; every process it started is gone when it
    returns or raises."""
    started = []

    def spawn(*args, **kwargs):
        process = subprocess.Popen(*args, **kwargs)
        started.append(process)
        return process
    try:
        return run_processes(spawn, directory, mode, transactions, seed, ext, sqlite3_cli, swift)
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.wait()


def run_processes(spawn, directory, mode, transactions, seed, ext, sqlite3_cli, swift):
    path = os.path.join(directory, f"log-{mode}.sqlite")
    remote = os.path.join(directory, f"replica-{mode}.sqlite")
    stop_file = os.path.join(directory, f"stop-{mode}")
    for f in (path, path + "-wal", path + "-shm", remote, stop_file):
        if os.path.exists(f):
            os.remove(f)
    db = connect(path)
    db.execute(f"PRAGMA journal_mode = {mode}")
    db.executescript(SCHEMA + REPLICA_SCHEMA.format(p="replica_") + REPLICA_SCHEMA.format(p="swift_"))
    connect(remote).executescript(REPLICA_SCHEMA.format(p=""))
    db.close()
    # The install is the one step that needs the extension: the CLI, with it.
    out = subprocess.run([sqlite3_cli, path], input=f".load {ext[:-3]}\nSELECT sqlitetriggers_log_install('lists'),"
                         " sqlitetriggers_log_install('reminders'), sqlitetriggers_log_install('tags');\n"
                         "INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('inplace'), ('remote'),"
                         " ('swift'), ('auditor');\n",
                         capture_output=True, text=True)
    if out.stdout.strip() != "1|2|3" or out.stderr:
        raise RuntimeError(f"install: {out.stdout} {out.stderr}")

    me = os.path.abspath(__file__)
    # A Swift process that fails exits at once, without a backtracer that
    # would keep its output open.
    env = dict(os.environ, SWIFT_BACKTRACE="enable=no")
    per_writer = transactions // 6
    outputs = {}

    def output(name):
        """A file for a process's standard output, read once it exits."""
        handle = open(os.path.join(directory, f"{name}-{mode}.out"), "w+")
        outputs[name] = handle
        return handle
    # apsw with the SQLite of iOS 16 and macOS 13, when make installed it.
    apple = os.path.join(os.path.dirname(ext), "apple-apsw", "3.39.4.0")
    apsw_env = dict(env, PYTHONPATH=apple) if os.path.isdir(apple) else env
    stamped = [spawn([sys.executable, me, "--extension-writer", path, str(seed + 5),
                      str(per_writer), "1", ext], stdout=output("apsw"), env=apsw_env)]
    # Scripts and outputs go through files: a full pipe would stop a writer,
    # in the middle of its transaction or before it exits.
    if swift:
        rng_swift = random.Random(seed + 6)
        script = os.path.join(directory, f"swift-{mode}.jsonl")
        with open(script, "w") as f:
            for _ in range(per_writer):
                f.write(json.dumps(random_transaction(rng_swift)) + "\n")
        with open(script) as f:
            stamped.append(spawn([swift, "writer", path], stdin=f, stdout=output("swift"), env=env))
    writers = [
        spawn([sys.executable, me, "--writer", path, str(seed + 1), str(per_writer), "0"], stdout=output("python0")),
        spawn([sys.executable, me, "--writer", path, str(seed + 2), str(per_writer), "1"], stdout=output("python1")),
    ]
    clis = []
    for i, recursive in enumerate((0, 1)):
        script = os.path.join(directory, f"cli-{mode}-{i}.sql")
        errors = os.path.join(directory, f"cli-{mode}-{i}.err")
        with open(script, "w") as f:
            f.write(cli_script(seed + 3 + i, per_writer, recursive))
        with open(script) as stdin, open(errors, "w") as stderr:
            clis.append((spawn([sqlite3_cli, path], stdin=stdin, stdout=subprocess.DEVNULL, stderr=stderr), errors))

    def start(name, kind, n):
        if kind == "swift":
            return spawn([swift, "consumer", path, name, stop_file], env=env)
        return spawn([sys.executable, me, "--consumer", path, name, kind, remote, stop_file,
                                 str(seed * 100 + n)], env=env)
    names = [name for name in CONSUMERS if swift or name != "swift"]
    consumers = {name: start(name, name, i) for i, name in enumerate(names)}

    rng = random.Random(seed)
    kills = 0
    restarts = 0
    while any(p.poll() is None for p in writers + stamped) or any(p.poll() is None for p, _ in clis):
        time.sleep(rng.uniform(0.01, 0.1))
        name = rng.choice(list(consumers))
        proc = consumers[name]
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
        elif proc.returncode != 0:
            raise RuntimeError(f"consumer {name} failed with {proc.returncode}")
        consumers[name] = start(name, name, restarts + 2)
        restarts += 1
    def printed(p, name):
        p.wait()
        outputs[name].seek(0)
        return outputs[name].read()
    committed = sum(int(printed(p, name).strip() or 0) for p, name in zip(writers, ("python0", "python1")))
    ranges = []
    for p, name in zip(stamped, ("apsw", "swift")):
        out = printed(p, name)
        if p.returncode != 0:
            raise RuntimeError(f"a writer with the extension failed: {p.args[:2]}")
        ranges += json.loads(out)
    for p, errors in clis:
        p.wait()
        err = open(errors).read()
        # The CLI reports the failing statements; anything else is a fault.
        unexpected = [line for line in err.splitlines() if "constraint failed" not in line]
        if unexpected:
            raise RuntimeError("sqlite3 CLI: " + "\n".join(unexpected[:5]))
    open(stop_file, "w").close()
    for name, proc in consumers.items():
        if proc.wait(timeout=600) != 0:
            raise RuntimeError(f"consumer {name} failed with {proc.returncode}")

    db = connect(path)
    problems, audited = audit_stamps(db, ranges)
    db.execute("UPDATE sqlitetriggers_log_consumers SET position = (SELECT coalesce((SELECT id FROM sqlitetriggers_log ORDER BY id DESC LIMIT 1), 0)) WHERE name = 'auditor'")
    truth = table_rows(db)
    results = {
        "each stamped transaction's rows share one stamp of their own, the rest unstamped":
            not problems and audited > 0 and ranges,
        "exactly-once replica equals the tables": table_rows(db, "replica_") == truth,
        "at-least-once replica equals the tables": table_rows(connect(remote)) == truth,
        "the Swift consumer's replica equals the tables": not swift or table_rows(db, "swift_") == truth,
        "the drained log is compacted to its last change, which holds its end":
            db.execute("SELECT count(*) FROM sqlitetriggers_log").fetchone()[0] == 1,
    }
    changes = db.execute("SELECT coalesce((SELECT id FROM sqlitetriggers_log ORDER BY id DESC LIMIT 1), 0)").fetchone()[0]
    rows = sum(len(v) for v in truth.values())
    for line in problems[:5]:
        print("  ", line)
    return results, {"committed (Python writers)": committed, "stamped transactions": len(ranges),
                     "logged changes": changes,
                     "consumer kills": kills, "rows at the end": rows}


def main(argv):
    if argv[1:2] == ["--writer"]:
        python_writer(argv[2], int(argv[3]), int(argv[4]), argv[5] == "1")
        return 0
    if argv[1:2] == ["--extension-writer"]:
        extension_writer(argv[2], int(argv[3]), int(argv[4]), argv[5] == "1", argv[6])
        return 0
    if argv[1:2] == ["--consumer"]:
        consumer(argv[2], argv[3], argv[4], argv[5], argv[6], int(argv[7]))
        return 0
    directory = argv[1]
    args = dict(zip(argv[2::2], argv[3::2]))
    transactions = int(args.get("--transactions", "400"))
    seed = int(args.get("--seed", "1"))
    modes = [args["--mode"]] if "--mode" in args else ["wal", "delete"]
    ext = os.path.abspath(os.environ.get("EXT", "build/libsqlitetriggers")) + ".so"
    cli = os.environ.get("SQLITE3", "sqlite3")
    swift = args.get("--swift")
    passed = failed = 0
    for mode in modes:
        results, counts = run_once(directory, mode, transactions, seed, ext, cli, swift)
        for name, ok in results.items():
            if ok:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {mode}: {name}")
        print(f"{mode}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    print(f"processes: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
