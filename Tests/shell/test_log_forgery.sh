# A hostile file against the durable log and swift_callback(): what a file
# may call (the log's stamp, sqlite_compileoption_get(-7316), which its own
# triggers need) never opens a door to what it may not, and no object of a
# file but the log's own writes the state that decides what is delivered
# or uploaded (durable_log.c's SAFETY and ORIGINS, schema_guard.c).

# hostile_python SCRIPT DB: Python's sqlite3 (no extension) plants SCRIPT,
# defining our function names as no-ops so that SQLite accepts them.
hostile_python() {
  python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for name in ('swift_callback', 'sqlitetriggers_log_origin'):
    db.create_function(name, -1, lambda *a: 1, deterministic=True)
db.executescript(sys.argv[2])
db.commit()" "$2" "$1"
}

# plain_sql SCRIPT DB: the sqlite3 CLI without the extension.
plain_sql() {
  printf '%s\n' "$1" | "$SQLITE3" -batch "$2" 2>&1
}

# loaded_run DB ORDER SQL: the CLI with the extension; ORDER read-then-load
# parses the schema before our functions exist.
loaded_run() {
  local pre=""
  [ "$2" = read-then-load ] && pre="SELECT count(*) > 0 FROM sqlite_schema;"
  printf '%s\n.load %s\n%s\n' "$pre" "$EXT" "$3" | "$SQLITE3" -batch "$1" 2>&1 |
    sed -E 's/^(Runtime error|Error) near line [0-9]+: //; s/ \([0-9]+\)$//' | grep -v '^1$'
}

GUARD_INDEX='swift_callback: refused: index "evil" in database "main" calls swift_callback(); a database file must never reach this function (drop the object, or move it to the TEMP schema)'

# read-then-load only: where SQLite parses the schema after the load, it
# refuses these files itself (a non-deterministic function in a partial
# index: malformed schema), and nothing runs.
for order in read-then-load; do
  # The issue's file: its own trigger reads the stamp first, which joins
  # the transaction without the guard; swift_callback() must still meet it.
  db=$(scratch_db)
  hostile_python "CREATE TABLE ix(id INTEGER PRIMARY KEY, y);
    CREATE TRIGGER j BEFORE INSERT ON ix BEGIN SELECT sqlite_compileoption_get(-7316); END;
    CREATE INDEX evil ON ix(y) WHERE swift_callback('forged', y) IS NOT NULL;" "$db"
  check_same "$order: a file's trigger reading the stamp first does not open the schema guard to its index" \
    "$(loaded_run "$db" $order "INSERT INTO ix(y) VALUES (1);
SELECT count(*) FROM swift_callback_log;
SELECT count(*) FROM ix;")" "$GUARD_INDEX
0
0"

  # The app writes a logged table first (its stamp joins), then a table
  # whose index calls swift_callback().
  db=$(scratch_db)
  sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, body); SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
  hostile_python "CREATE TABLE ix(id INTEGER PRIMARY KEY, y);
    CREATE INDEX evil ON ix(y) WHERE swift_callback('forged', y) IS NOT NULL;" "$db"
  check_same "$order: after the app's logged write joined the transaction, a file's index still meets the guard" \
    "$(loaded_run "$db" $order "BEGIN;
INSERT INTO notes(body) VALUES ('typed');
INSERT INTO ix(y) VALUES (1);
SELECT swift_callback('mine');
COMMIT;
SELECT count(*) FROM swift_callback_log;
SELECT count(*) FROM ix;")" "$GUARD_INDEX
swift_callback: refused: index \"evil\" in database \"main\" calls swift_callback(); a database file must never reach this function (drop the object, or move it to the TEMP schema)
0
0"
done

# Objects of a file that reach the log's state (marks, positions, the
# log's end, the rules' registry), directly or through a view: the check
# and the installer refuse the file, naming the object.
FOREIGN=(
  "mark|CREATE TRIGGER mark AFTER INSERT ON notes BEGIN INSERT OR IGNORE INTO sqlitetriggers_log_origins VALUES (sqlite_compileoption_get(-7316), 'server', 0); END;|sqlitetriggers_log_origins"
  "unmark|CREATE TRIGGER unmark AFTER INSERT ON sqlitetriggers_log_origins BEGIN DELETE FROM \"SQLITETRIGGERS_LOG_ORIGINS\"; END;|sqlitetriggers_log_origins"
  "skip|CREATE TRIGGER skip AFTER INSERT ON notes BEGIN UPDATE sqlitetriggers_log_consumers SET position = position + 1; END;|sqlitetriggers_log_consumers"
  "rewind|CREATE TRIGGER rewind AFTER DELETE ON notes BEGIN UPDATE sqlite_sequence SET seq = 0 WHERE name = 'sqlitetriggers_log'; END;|sqlite_sequence"
  "registry|CREATE TRIGGER registry AFTER INSERT ON notes BEGIN DELETE FROM 'sqlitetriggers_rules'; END;|sqlitetriggers_rules"
  "meta|CREATE TRIGGER meta AFTER INSERT ON notes BEGIN UPDATE [sqlitetriggers_log_meta] SET maxBacklog = 0; END;|sqlitetriggers_log_meta"
  "sqlitetriggers_log_99_insert|CREATE TRIGGER sqlitetriggers_log_99_insert AFTER INSERT ON notes BEGIN INSERT INTO sqlitetriggers_log_origins VALUES (1, 'server', 0); END;|sqlitetriggers_log_origins"
  "via_view|CREATE VIEW marks AS SELECT * FROM sqlitetriggers_log_origins; CREATE VIEW marks2 AS SELECT * FROM marks; CREATE TRIGGER via_view AFTER INSERT ON notes BEGIN SELECT count(*) FROM marks2; END;|marks2"
)
for entry in "${FOREIGN[@]}"; do
  IFS='|' read -r name ddl named <<<"$entry"
  db=$(scratch_db)
  sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, body); CREATE TABLE sqlitetriggers_rules(name TEXT PRIMARY KEY, sql TEXT);
SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
  plain_sql "$ddl" "$db"
  on=$("$SQLITE3" "$db" "SELECT tbl_name FROM sqlite_schema WHERE name = '$name'")
  msg="the trigger \"$name\" on \"$on\" is not the durable log's, and reaches its state (\"$named\"), which decides what is delivered and uploaded: drop the trigger (only the log's own triggers may name the log's tables)"
  check "a file's trigger $name: the check and the installer refuse the file, naming it" \
    "SELECT sqlitetriggers_log_check();
SELECT sqlitetriggers_log_install('notes');" \
    "Runtime error near line 2: sqlitetriggers_log_check: $msg
Runtime error near line 3: sqlitetriggers_log_install: $msg" "$db"
done

# The app's own TEMP triggers and a file's views that only read are not
# the file writing the log's state.
check "a TEMP trigger of the app's and a file's reading view pass the check" \
  "CREATE TABLE notes(id INTEGER PRIMARY KEY, body);
SELECT sqlitetriggers_log_install('notes');
CREATE VIEW recent_changes AS SELECT * FROM sqlitetriggers_changes;
CREATE TEMP TRIGGER audit AFTER INSERT ON notes BEGIN SELECT count(*) FROM sqlitetriggers_log_origins; END;
INSERT INTO notes(body) VALUES ('x');
SELECT sqlitetriggers_log_check();" "1
1"

# A mark is a row only sqlitetriggers_log_origin() writes, for its own
# transaction: a file's trigger, the shell without the extension and the
# app's own SQL cannot add, change or remove one that is still in the log.
for loaded in with without; do
  db=$(scratch_db)
  sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, body); SELECT sqlitetriggers_log_install('notes');
BEGIN; SELECT sqlitetriggers_log_origin('server'); INSERT INTO notes(body) VALUES ('downloaded'); COMMIT;" "$db" >/dev/null
  script="INSERT INTO sqlitetriggers_log_origins VALUES (7, 'server', 0);
UPDATE sqlitetriggers_log_origins SET origin = 'local';
DELETE FROM sqlitetriggers_log_origins;
BEGIN;
INSERT INTO notes(body) VALUES ('typed');
INSERT INTO sqlitetriggers_log_origins SELECT tx, 'server', 1 FROM sqlitetriggers_log WHERE id = 2;
COMMIT;
SELECT rowKey, quote(origin) FROM sqlitetriggers_changes ORDER BY id;"
  refused="sqlitetriggers_log: only sqlitetriggers_log_origin() marks a transaction's origin"
  if [ $loaded = with ]; then out=$(sql "$script" "$db"); else out=$(plain_sql "$script" "$db"); fi
  check_same "$loaded the extension, no statement but sqlitetriggers_log_origin()'s marks or unmarks a transaction" \
    "$(echo "$out" | sed -E 's/^(Runtime error|Error) near line [0-9]+: //; s/ \([0-9]+\)$//')" "$refused
$refused
$refused
$refused
1|'server'
2|NULL"
done

# Trigger-planted marks fail the app's write itself (the guard), before
# any check runs.
db=$(scratch_db)
sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, body); SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
plain_sql "CREATE TRIGGER mark AFTER INSERT ON notes BEGIN INSERT OR IGNORE INTO sqlitetriggers_log_origins VALUES (sqlite_compileoption_get(-7316), 'server', 0); END;" "$db"
check "a file's trigger marking the app's write fails that write; nothing is marked" \
  "INSERT INTO notes(body) VALUES ('typed');
SELECT count(*) FROM notes;
SELECT count(*) FROM sqlitetriggers_log_origins;" \
  "Runtime error near line 2: sqlitetriggers_log: only sqlitetriggers_log_origin() marks a transaction's origin (19)
0
0" "$db"

# A statement that fails after the mark leaves none: the mark is made only
# by a statement that is nothing but the call.
check "a statement that calls sqlitetriggers_log_origin() beside anything else is refused and marks nothing" \
  "CREATE TABLE notes(id INTEGER PRIMARY KEY, body);
SELECT sqlitetriggers_log_install('notes');
INSERT INTO notes(body) VALUES ('a'), ('b');
BEGIN;
SELECT sqlitetriggers_log_origin('server'), json('x');
SELECT sqlitetriggers_log_origin('server') FROM notes;
SELECT sqlitetriggers_log_origin('server') WHERE json('x');
SELECT sqlitetriggers_log_origin('server') UNION ALL SELECT json('x');
INSERT INTO notes(body) VALUES ('local');
SELECT quote(sqlitetriggers_log_origin());
COMMIT;
SELECT count(*) FROM sqlitetriggers_changes WHERE origin IS NOT NULL;
BEGIN;
 /* a comment */ select   \"sqlitetriggers_log_origin\" ( 'server' || '' )  AS  [o] ; -- and one more
SELECT sqlitetriggers_log_origin();
ROLLBACK;" \
  "1
Runtime error near line 6: sqlitetriggers_log_origin: call it alone, in a SELECT of the app's own: SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could fail after the mark; a statement that writes, a view, an index, a CHECK or a generated column cannot call it)
Runtime error near line 7: sqlitetriggers_log_origin: call it alone, in a SELECT of the app's own: SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could fail after the mark; a statement that writes, a view, an index, a CHECK or a generated column cannot call it)
Runtime error near line 8: malformed JSON
Runtime error near line 9: sqlitetriggers_log_origin: call it alone, in a SELECT of the app's own: SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could fail after the mark; a statement that writes, a view, an index, a CHECK or a generated column cannot call it)
NULL
0
server
server"

# A read never takes the write lock: a file's view that selects the stamp,
# read inside a transaction, leaves every other writer free (WAL).
for other in plain loaded; do
  db=$(scratch_db)
  sql "PRAGMA journal_mode = WAL; CREATE TABLE notes(id INTEGER PRIMARY KEY, body);
SELECT sqlitetriggers_log_install('notes');
CREATE VIEW recent AS SELECT sqlite_compileoption_get(-7316) AS stamp, * FROM notes;
INSERT INTO notes(body) VALUES ('first');" "$db" >/dev/null
  # The other writer, a process of its own, run while the reader's
  # transaction is open.
  writer="$SCRATCH/writer$RANDOM.sh"
  load=""; [ $other = loaded ] && load=".load $EXT"
  printf '#!/bin/sh\nprintf "%%s\\n" "%s" "INSERT INTO notes(body) VALUES (\x27other\x27);" "SELECT \x27written\x27;" | "%s" -batch "%s" 2>&1\n' \
    "$load" "$SQLITE3" "$db" > "$writer"
  check "reading a view of the stamp in a transaction leaves the write lock to a writer $other" \
    "BEGIN;
SELECT quote(stamp) FROM recent UNION ALL SELECT 'none';
.system sh $writer
COMMIT;
SELECT count(*), count(tx) FROM sqlitetriggers_log;" "NULL
none
written
2|$([ $other = plain ] && echo 1 || echo 2)" "$db"
done
