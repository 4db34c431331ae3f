# A hostile file against the durable log and swift_callback(): what a file
# may call (the log's stamp, sqlite_compileoption_get(-7316), which its own
# triggers need) never opens a door to what it may not, and no object of a
# file but the log's own writes the state that decides what is delivered
# or uploaded (log_check.c's SAFETY, log_stamp.c's ORIGINS, schema_guard.c).

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
  "rewind|CREATE TRIGGER rewind AFTER DELETE ON notes BEGIN DELETE FROM sqlitetriggers_log WHERE id > 0; END;|sqlitetriggers_log"
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
  msg="the trigger \"$name\" on \"$on\" is not the durable log's, and reaches its state (\"$named\"), which decides what is delivered and uploaded: drop the trigger (only the log's own objects may name the log's tables)"
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
INSERT INTO sqlitetriggers_log_origins SELECT tx, 'server', (SELECT max(id) FROM sqlitetriggers_log) FROM sqlitetriggers_log WHERE id = 2;
COMMIT;
SELECT rowKey, quote(origin) FROM sqlitetriggers_changes ORDER BY id;"
  refused="CHECK constraint failed: only sqlitetriggers_log_origin() marks a transaction's origin"
  deleted="sqlitetriggers_log: only sqlitetriggers_log_origin() marks a transaction's origin"
  if [ $loaded = with ]; then out=$(sql "$script" "$db"); else out=$(plain_sql "$script" "$db"); fi
  check_same "$loaded the extension, no statement but sqlitetriggers_log_origin()'s marks or unmarks a transaction" \
    "$(echo "$out" | sed -E 's/^(Runtime error|Error) near line [0-9]+: //; s/ \([0-9]+\)$//')" "$refused
$refused
$deleted
$refused
$refused
1|'server'
2|NULL"
done

# A trigger-planted mark is refused by the table itself, before any check
# runs: INSERT OR IGNORE drops it (the CHECK fails), the app's write goes
# on unmarked, and the check names the trigger.
db=$(scratch_db)
sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, body); SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
plain_sql "CREATE TRIGGER mark AFTER INSERT ON notes BEGIN INSERT OR IGNORE INTO sqlitetriggers_log_origins VALUES (sqlite_compileoption_get(-7316), 'server', 0); END;" "$db"
check "a file's trigger cannot mark the app's write" \
  "INSERT INTO notes(body) VALUES ('typed');
SELECT count(*) FROM notes;
SELECT count(*) FROM sqlitetriggers_log_origins;
SELECT sqlitetriggers_log_check();" \
  "1
0
Runtime error near line 5: sqlitetriggers_log_check: the trigger \"mark\" on \"notes\" is not the durable log's, and reaches its state (\"sqlitetriggers_log_origins\"), which decides what is delivered and uploaded: drop the trigger (only the log's own objects may name the log's tables)" "$db"

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
Runtime error near line 6: sqlitetriggers_log_origin: call it alone, in a SELECT of the app's own: SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could fail after the mark, and no other statement running; a statement that writes, a view, an index, a CHECK or a generated column cannot call it)
Runtime error near line 7: sqlitetriggers_log_origin: call it alone, in a SELECT of the app's own: SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could fail after the mark, and no other statement running; a statement that writes, a view, an index, a CHECK or a generated column cannot call it)
Runtime error near line 8: malformed JSON
Runtime error near line 9: sqlitetriggers_log_origin: call it alone, in a SELECT of the app's own: SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could fail after the mark, and no other statement running; a statement that writes, a view, an index, a CHECK or a generated column cannot call it)
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

# plant_sql DB SQL NAME: Python's sqlite3 rewrites object NAME's stored SQL
# (writable_schema), as a hostile file's author would: SQLite refuses a
# parameter in a new object, but turns it into NULL in a schema it loads.
plant_sql() {
  python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute('PRAGMA writable_schema = ON')
db.execute('UPDATE sqlite_schema SET sql = ? WHERE name = ?', (sys.argv[2], sys.argv[3]))
db.commit()" "$1" "$2" "$3"
}

notes_log() {
  sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, body); SELECT sqlitetriggers_log_install('notes');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('uploader');" "$1" >/dev/null
}

# A trigger named as a logged table's are, but not one of the five it has.
db=$(scratch_db)
notes_log "$db"
plain_sql "CREATE TRIGGER sqlitetriggers_log_1_evil AFTER INSERT ON sqlitetriggers_log BEGIN DELETE FROM sqlitetriggers_log WHERE id = new.id; END;" "$db"
check "a trigger named like a logged table's own, but not one of them, is foreign" \
  "SELECT sqlitetriggers_log_check();" \
  "Runtime error near line 2: sqlitetriggers_log_check: the trigger \"sqlitetriggers_log_1_evil\" on \"sqlitetriggers_log\" is not the durable log's, and reaches its state (\"sqlitetriggers_log\"), which decides what is delivered and uploaded: drop the trigger (only the log's own objects may name the log's tables)" "$db"

# SQLite's tokenizer reads $q(') as one token (a Tcl-style parameter): a
# scan that read "(" and a string there would skip the names after it.
db=$(scratch_db)
notes_log "$db"
plain_sql "CREATE TRIGGER skip AFTER INSERT ON notes BEGIN SELECT 1; END;" "$db"
plant_sql "$db" "CREATE TRIGGER skip AFTER INSERT ON notes BEGIN SELECT \$q('); UPDATE sqlitetriggers_log_consumers SET position = (SELECT coalesce(max(seq), 0) FROM sqlite_sequence); SELECT 'x'; END" skip
check "a parameter token cannot hide a trigger's names from the scan" \
  "SELECT sqlitetriggers_log_check();" \
  "Runtime error near line 2: sqlitetriggers_log_check: the trigger \"skip\" on \"notes\" is not the durable log's, and reaches its state (\"sqlitetriggers_log_consumers\"), which decides what is delivered and uploaded: drop the trigger (only the log's own objects may name the log's tables)" "$db"

db=$(scratch_db)
python3 -c "import sqlite3, sys; a = sqlite3.connect(sys.argv[1]); a.executescript('CREATE TABLE ev(id INTEGER PRIMARY KEY, a DEFAULT (NULL), b, g AS (abs(b)) VIRTUAL); INSERT INTO ev(b) VALUES (1);')" "$db"
plant_sql "$db" "CREATE TABLE ev(id INTEGER PRIMARY KEY, a DEFAULT (\$q(')), b, g AS (swift_callback('forged', b)) VIRTUAL)" ev
check_same "a parameter token cannot hide a generated column's call from the schema guard" \
  "$(loaded_run "$db" read-then-load "SELECT g FROM ev;
SELECT count(*) FROM swift_callback_log;")" \
  "swift_callback: refused: table \"ev\" in database \"main\" calls swift_callback(); a database file must never reach this function (drop the object, or move it to the TEMP schema)
0"

# The lone call, read with SQLite's tokens: a parameter cannot make a
# second column look like part of the argument.  SQLite reads $a(') and
# $b(') as parameters (NULL); a reader of quotes would see one string
# from the first to the second, and a lone call.
db=$(scratch_db)
notes_log "$db"
check "a statement whose parameter tokens hide a second column is no lone call" \
  "BEGIN;
INSERT INTO notes(body) VALUES ('local');
SELECT sqlitetriggers_log_origin(coalesce(\$a('), 'server')), json(coalesce(\$b('), 'x'));
SELECT quote(sqlitetriggers_log_origin());
COMMIT;" \
  "Runtime error near line 4: sqlitetriggers_log_origin: call it alone, in a SELECT of the app's own: SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could fail after the mark, and no other statement running; a statement that writes, a view, an index, a CHECK or a generated column cannot call it)
NULL" "$db"

# An index on the log's tables (a UNIQUE one on the origins makes the
# mark's INSERT OR IGNORE drop a mark), a table whose foreign key
# references the log (compaction would fail): foreign objects.
for entry in \
  "index|evil|sqlitetriggers_log_origins|CREATE UNIQUE INDEX evil ON sqlitetriggers_log_origins(origin);|sqlitetriggers_log_origins" \
  "table|pinned|pinned|CREATE TABLE pinned(id INTEGER REFERENCES sqlitetriggers_log(id));|sqlitetriggers_log"; do
  IFS='|' read -r type name on ddl named <<<"$entry"
  db=$(scratch_db)
  notes_log "$db"
  plain_sql "$ddl" "$db"
  where=" on \"$on\""; [ "$type" = table ] && where=""
  check "a file's $type $name reaching the log's tables is refused, naming it" \
    "SELECT sqlitetriggers_log_check();" \
    "Runtime error near line 2: sqlitetriggers_log_check: the $type \"$name\"$where is not the durable log's, and reaches its state (\"$named\"), which decides what is delivered and uploaded: drop the $type (only the log's own objects may name the log's tables)" "$db"
done

# A mark the function could not write is an error, never a success.
db=$(scratch_db)
notes_log "$db"
plain_sql "CREATE UNIQUE INDEX evil ON sqlitetriggers_log_origins(origin);" "$db"
check "a mark the origins table does not take fails, naming the check" \
  "BEGIN;
INSERT INTO notes(body) VALUES ('dl1');
SELECT sqlitetriggers_log_origin('server');
COMMIT;
BEGIN;
INSERT INTO notes(body) VALUES ('dl2');
SELECT sqlitetriggers_log_origin('server');
COMMIT;" \
  "server
Runtime error near line 8: sqlitetriggers_log_origin: the mark could not be written (sqlitetriggers_log_origins took no row): run sqlitetriggers_log_check(), which names the object of the file in the way" "$db"

# The guard's memory of a schema that passed names each file: a file
# attached under a name another had, with the same schema_version and an
# equal schema, is judged again.
benign=$(scratch_db); hostile=$(scratch_db)
plain_sql "CREATE VIEW swift_callback_lox(seq, name, args, tx) AS SELECT 1, 'forged', '[1]', NULL; PRAGMA schema_version = 7;" "$benign"
plain_sql "CREATE VIEW swift_callback_log(seq, name, args, tx) AS SELECT 1, 'forged', '[1]', NULL; PRAGMA schema_version = 7;" "$hostile"
check "a file attached where another was, with the same schema_version, is judged again" \
  "ATTACH '$benign' AS aux;
SELECT swift_callback('a');
DETACH aux;
ATTACH '$hostile' AS aux;
SELECT swift_callback('c');" \
  "
Runtime error near line 6: swift_callback: refused: view \"swift_callback_log\" in database \"aux\" hides the extension's own swift_callback_log table (rename or drop it)"

# A transaction that wrote only an attached file without a log draws no
# stamp for a read of main: main's write lock stays free.
db=$(scratch_db); aux=$(scratch_db)
sql "PRAGMA journal_mode = WAL; CREATE TABLE notes(id INTEGER PRIMARY KEY, body);
SELECT sqlitetriggers_log_install('notes');
CREATE VIEW recent AS SELECT sqlite_compileoption_get(-7316) AS stamp, * FROM notes;
INSERT INTO notes(body) VALUES ('first');" "$db" >/dev/null
plain_sql "CREATE TABLE t(x);" "$aux"
writer="$SCRATCH/writer$RANDOM.sh"
printf '#!/bin/sh\nprintf "%%s\\n" "INSERT INTO notes(body) VALUES (\x27other\x27);" "SELECT \x27written\x27;" | "%s" -batch "%s" 2>&1\n' \
  "$SQLITE3" "$db" > "$writer"
check "a read of main's stamp after a write of an attached file without a log leaves main's lock free" \
  "ATTACH '$aux' AS aux;
BEGIN;
INSERT INTO aux.t VALUES (1);
SELECT quote(stamp) FROM recent;
.system sh $writer
COMMIT;" "NULL
written" "$db"

# Texts with NUL and rare control characters: the log's JSON is
# json_array()'s and json_object()'s, and linear in the text's length.
check "keys and tombstones of texts with NUL and control characters are json_array()'s and json_object()'s" \
  "CREATE TABLE k(a NOT NULL, b NOT NULL, v, PRIMARY KEY(a, b));
SELECT sqlitetriggers_log_install('k', 'tombstones');
CREATE TABLE texts(i INTEGER PRIMARY KEY, t);
INSERT INTO texts(t) VALUES ('a' || char(0) || 'b'), (char(0)), (char(14, 0, 31, 32)), (char(16, 18, 0)),
  (char(34, 92, 10, 13, 9, 8, 12, 27)), ('é✓' || char(0) || '\"'), (char(1) || replace(hex(zeroblob(25000)), '0', 'a'));
INSERT INTO k SELECT t, i, t FROM texts;
DELETE FROM k;
SELECT count(*), sum(l.rowKey = json_array(x.t, x.i)), sum(d.deletedRow = json_object('a', x.t, 'b', x.i, 'v', x.t))
  FROM sqlitetriggers_log AS l JOIN sqlitetriggers_log_tombstones AS d ON d.id = l.id
  JOIN texts AS x ON x.i = json_extract(l.rowKey, '\$[1]');" "1
7|7|7"
