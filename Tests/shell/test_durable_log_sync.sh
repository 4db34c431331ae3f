# The durable log as a sync engine's outbox (log_stamp.c, ORIGINS,
# TOMBSTONES and the upgrade from format 1): writes a download makes carry
# their origin, deletions keep their values and time, and a file of the
# previous format is upgraded in place.  As in test_durable_log.sh, each
# statement that may fail stands on its own line.

NOTES="CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT UNIQUE, updatedAt TEXT);"

# plain_sync SCRIPT DB: the sqlite3 CLI without the extension.
plain_sync() {
  printf '%s\n' "$1" | "$SQLITE3" -batch "$2" 2>&1
}

check "a transaction's origin is written with each of its rows; other transactions log NULL (local)" \
  "$NOTES
SELECT sqlitetriggers_log_install('notes');
BEGIN;
SELECT sqlitetriggers_log_origin('server');
INSERT INTO notes(body) VALUES ('downloaded'), ('too');
UPDATE notes SET body = 'edited' WHERE id = 2;
SELECT sqlitetriggers_log_origin();
COMMIT;
INSERT INTO notes(body) VALUES ('typed');
SELECT quote(sqlitetriggers_log_origin());
SELECT id, kind, rowKey, quote(origin) FROM sqlitetriggers_changes ORDER BY id;" \
  "1
server
server
NULL
1|insert|1|'server'
2|insert|2|'server'
3|update|2|'server'
4|insert|3|NULL"

check "an origin is set inside a transaction, at any point of it, for all its changes; every mistake names the remedy" \
  "$NOTES
SELECT sqlitetriggers_log_origin('server');
SELECT sqlitetriggers_log_install('notes');
SELECT sqlitetriggers_log_origin('server');
BEGIN;
INSERT INTO notes(body) VALUES ('first');
SELECT sqlitetriggers_log_origin('server');
INSERT INTO notes(body) VALUES ('second');
SELECT sqlitetriggers_log_origin('');
SELECT sqlitetriggers_log_origin(7);
SELECT sqlitetriggers_log_origin('ser' || char(0) || 'ver');
SELECT sqlitetriggers_log_origin();
COMMIT;
BEGIN;
SELECT sqlitetriggers_log_origin('a');
INSERT INTO notes(body) VALUES ('third');
SELECT quote(sqlitetriggers_log_origin(NULL));
SELECT sqlitetriggers_log_origin(NULL) AS cleared;
COMMIT;
SELECT rowKey, quote(origin) FROM sqlitetriggers_changes ORDER BY id;
SELECT count(*) FROM sqlitetriggers_log_origins;" \
  "Runtime error near line 3: sqlitetriggers_log_origin: no transaction is open: call it after BEGIN, inside the transaction it is about
1
Runtime error near line 5: sqlitetriggers_log_origin: no transaction is open: call it after BEGIN, inside the transaction it is about
server
Runtime error near line 10: sqlitetriggers_log_origin: an origin cannot be empty: pass NULL for local changes
Runtime error near line 11: sqlitetriggers_log_origin: expects an origin (text, or NULL for local)
Runtime error near line 12: sqlitetriggers_log_origin: an origin (text, or NULL for local) holds a NUL character (char(0)), where SQLite would cut it: pass it without one
server
a
Runtime error near line 18: sqlitetriggers_log_origin: call it alone, in a SELECT of the app's own: SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could fail after the mark, and no other statement running; a statement that writes, a view, an index, a CHECK or a generated column cannot call it)

1|'server'
2|'server'
3|NULL
1"

check "a file without a durable log has no origin to set" \
  "BEGIN;
SELECT sqlitetriggers_log_origin('server');
SELECT quote(sqlitetriggers_log_origin());" \
  "Runtime error near line 3: sqlitetriggers_log_origin: this file has no durable log of format 2 to mark: install one (sqlitetriggers_log_install) first
NULL"

check "an origin lasts one transaction, and a savepoint rolled back undoes the origin it set" \
  "$NOTES
SELECT sqlitetriggers_log_install('notes');
BEGIN;
SELECT sqlitetriggers_log_origin('gone');
ROLLBACK;
INSERT INTO notes(body) VALUES ('local');
BEGIN;
SAVEPOINT s;
SELECT sqlitetriggers_log_origin('server');
ROLLBACK TO s;
INSERT INTO notes(body) VALUES ('local too');
SELECT sqlitetriggers_log_origin('kept');
COMMIT;
INSERT INTO notes(body) VALUES ('local again');
SELECT rowKey, quote(origin) FROM sqlitetriggers_changes ORDER BY id;" \
  "1
gone
server
kept
1|NULL
2|'kept'
3|NULL"

db=$(scratch_db)
sql "$NOTES SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
plain_sync "CREATE TABLE audit(n);
CREATE VIEW forge AS SELECT sqlitetriggers_log_origin('server') AS o;
CREATE TRIGGER forge_on_insert BEFORE INSERT ON audit BEGIN SELECT sqlitetriggers_log_origin('server'); END;" "$db" >/dev/null
check "no view or trigger in a file can set an origin (direct-only): the app's writes stay local" \
  "BEGIN;
SELECT o FROM forge;
INSERT INTO audit VALUES (1);
INSERT INTO notes(body) VALUES ('mine');
COMMIT;
SELECT quote(origin) FROM sqlitetriggers_changes;" \
  "Parse error near line 3: unsafe use of sqlitetriggers_log_origin()
Parse error near line 4: unsafe use of sqlitetriggers_log_origin()
NULL" "$db"
check "a file that names it makes the guarded calls refuse, as every function it guards" \
  "SELECT sqlitetriggers_log_install('notes');" \
  "Runtime error near line 2: sqlitetriggers_log_install: refused: view \"forge\" in database \"main\" calls sqlitetriggers_log_origin(); a database file must never reach this function (drop the object, or move it to the TEMP schema)" "$db"
out=$(plain_sync "BEGIN;
INSERT INTO notes(body) VALUES ('plain');
COMMIT;
SELECT quote(origin), quote(tx) FROM sqlitetriggers_changes ORDER BY id DESC LIMIT 1;" "$db")
check_same "a writer without the extension logs local changes (origin NULL)" "$out" "NULL|NULL"

check "sqlitetriggers_log_transaction() is the tx its transaction's rows carry, readable before them, refused outside" \
  "$NOTES
SELECT sqlitetriggers_log_install('notes');
SELECT sqlitetriggers_log_transaction();
BEGIN;
CREATE TEMP TABLE seen AS SELECT sqlitetriggers_log_transaction() AS tx;
INSERT INTO notes(body) VALUES ('a'), ('b');
SELECT count(*) FROM sqlitetriggers_log WHERE tx = (SELECT tx FROM temp.seen);
SELECT sqlitetriggers_log_transaction() = (SELECT tx FROM temp.seen);
COMMIT;
INSERT INTO notes(body) VALUES ('c');
SELECT count(*) FROM sqlitetriggers_log WHERE tx = (SELECT tx FROM temp.seen);" \
  "1
Runtime error near line 4: sqlitetriggers_log_transaction: no transaction is open: call it after BEGIN, inside the transaction it is about
2
1
2"

# TOMBSTONES: the deleted row's values, every type kept, and the time.
VALUES_TABLE="CREATE TABLE kept(id INTEGER PRIMARY KEY, i, r, t, b, n, g GENERATED ALWAYS AS (i * 2) VIRTUAL);"
check "with tombstones a deletion keeps the row's last values, type for type, and its time; other changes nothing more" \
  "$VALUES_TABLE
SELECT sqlitetriggers_log_install('kept', 'tombstones');
SELECT sqlitetriggers_pin_clock('2026-01-02 03:04:05.678');
INSERT INTO kept(id, i, r, t, b, n) VALUES
  (1, 9223372036854775807, 0.1, 'it''s \"quoted\" ' || char(10) || 'é', x'00ff10', NULL),
  (2, -9223372036854775808, -2.0, '', x'', NULL);
INSERT INTO kept(id, i, r, t) VALUES (3, 0, 1e308 * 10, '{\"blob\":\"00\"}');
DELETE FROM kept;
SELECT kind, rowKey, quote(time), quote(deletedRow) FROM sqlitetriggers_changes ORDER BY id;" \
  "1
2026-01-02 03:04:05.678
insert|1|NULL|NULL
insert|2|NULL|NULL
insert|3|NULL|NULL
delete|1|'2026-01-02 03:04:05.678'|'{\"id\":1,\"i\":9223372036854775807,\"r\":{\"real\":[7205759403792794,-56]},\"t\":\"it''s \\\"quoted\\\" \\né\",\"b\":{\"blob\":\"00ff10\"},\"n\":null,\"g\":{\"real\":[4503599627370496,12]}}'
delete|2|'2026-01-02 03:04:05.678'|'{\"id\":2,\"i\":-9223372036854775808,\"r\":{\"real\":[-4503599627370496,-51]},\"t\":\"\",\"b\":{\"blob\":\"\"},\"n\":null,\"g\":{\"real\":[-4503599627370496,12]}}'
delete|3|'2026-01-02 03:04:05.678'|'{\"id\":3,\"i\":0,\"r\":{\"real\":[1,1024]},\"t\":\"{\\\"blob\\\":\\\"00\\\"}\",\"b\":null,\"n\":null,\"g\":0}'"

for mode in OFF ON; do
  row1="'{\"id\":1,\"body\":\"a\",\"updatedAt\":\"x\"}'"
  if [ $mode = OFF ]; then replaced="4|1|$row1"; tombstones=2; else replaced="5|1|$row1
3|1|$row1"; tombstones=3; fi
  check "recursive_triggers $mode: with tombstones a REPLACE and a key UPDATE keep the values of the rows they delete" \
    "PRAGMA recursive_triggers = $mode;
$NOTES
SELECT sqlitetriggers_log_install('notes', 'tombstones');
INSERT INTO notes VALUES (1, 'a', 'x');
INSERT OR REPLACE INTO notes VALUES (2, 'a', 'y');
UPDATE notes SET id = 3;
SELECT l.kind, l.rowKey, quote(c.deletedRow) FROM sqlitetriggers_log AS l JOIN sqlitetriggers_changes AS c USING (id)
  WHERE l.kind <> 1 ORDER BY id;
SELECT count(*) FROM sqlitetriggers_log_tombstones;" \
    "1
$replaced
3|2|'{\"id\":2,\"body\":\"a\",\"updatedAt\":\"y\"}'
$tombstones"
done

# Each probe's tombstone reads the row again only when its probe logged one
# (the guard's text), and with two UNIQUE indexes each probe keeps its own
# (with recursive_triggers ON, the DELETE trigger keeps them too: DISTINCT).
check "with tombstones each conflict probe keeps its own rows, and its tombstone looks only after a probe that logged" \
  "CREATE TABLE pairs(id INTEGER PRIMARY KEY, a TEXT UNIQUE, b TEXT UNIQUE);
SELECT sqlitetriggers_log_install('pairs', 'tombstones');
INSERT INTO pairs VALUES (1, 'x', 'p'), (2, 'y', 'q');
INSERT OR REPLACE INTO pairs VALUES (3, 'x', 'r');
INSERT OR REPLACE INTO pairs VALUES (4, 'y', 'p');
INSERT OR REPLACE INTO pairs VALUES (5, 'x', 'p');
SELECT group_concat(id, ' ') FROM (SELECT DISTINCT json_extract(deletedRow, '\$.id') AS id FROM sqlitetriggers_log_tombstones ORDER BY 1);
SELECT count(*) FROM sqlite_schema WHERE name = 'sqlitetriggers_log_1_replace_insert'
  AND sql LIKE '%INSERT INTO \"sqlitetriggers_log_tombstones\"(\"id\", \"time\", \"deletedRow\") SELECT %FROM (SELECT 1 WHERE changes() > 0) AS g CROSS JOIN \"pairs\" AS r WHERE r.\"a\"%';" \
  "1
1 2 3 4
1"

db=$(scratch_db)
sql "$NOTES
SELECT sqlitetriggers_log_install('notes', 'tombstones');
INSERT INTO notes VALUES (1, 'a', 'x');" "$db" >/dev/null
out=$(plain_sync "DELETE FROM notes;
SELECT deletedRow, time GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]',
  abs(julianday(time) - julianday('now')) < 1.0 / 24 FROM sqlitetriggers_changes WHERE kind = 'delete';" "$db")
check_same "a writer without the extension keeps a deleted row's values and SQLite's time, in the same format" \
  "$out" "{\"id\":1,\"body\":\"a\",\"updatedAt\":\"x\"}|1|1"

check "installing again keeps a table's mode; 'keys' and 'tombstones' switch it; another mode is refused" \
  "$NOTES
SELECT sqlitetriggers_log_install('notes', 'tombstones');
SELECT sqlitetriggers_log_install('notes');
SELECT tombstones FROM sqlitetriggers_log_tables;
SELECT sqlitetriggers_log_check();
SELECT sqlitetriggers_log_install('notes', 'KEYS');
SELECT tombstones FROM sqlitetriggers_log_tables;
INSERT INTO notes VALUES (1, 'a', 'x');
DELETE FROM notes;
SELECT quote(time), quote(deletedRow) FROM sqlitetriggers_changes WHERE kind = 'delete';
SELECT sqlitetriggers_log_install('notes', 'values');
SELECT sqlitetriggers_log_install('notes', NULL);" \
  "1
1
1
1
1
0
NULL|NULL
Runtime error near line 12: sqlitetriggers_log_install: no mode 'values': 'keys' logs the keys of changed rows, 'tombstones' also the values of deleted ones and the time of each change
Runtime error near line 13: sqlitetriggers_log_install: expects a mode ('keys' or 'tombstones')"

wide="CREATE TABLE wide(id INTEGER PRIMARY KEY"
for i in $(seq 1 70); do wide="$wide, c$i"; done
check "a table of 71 columns keeps them all (past json_object()'s 63)" \
  "$wide);
SELECT sqlitetriggers_log_install('wide', 'tombstones');
INSERT INTO wide(id, c1, c70) VALUES (1, 'first', 'last');
DELETE FROM wide;
SELECT (SELECT count(*) FROM json_each(deletedRow)), json_extract(deletedRow, '$.c70') FROM sqlitetriggers_changes WHERE kind = 'delete';" \
  "1
71|last"

# SQLite's message differs between versions after the trigger's name.
out=$(sql "$NOTES
SELECT sqlitetriggers_log_install('notes', 'tombstones');
ALTER TABLE notes DROP COLUMN updatedAt;
SELECT sqlitetriggers_log_install('notes', 'keys');
ALTER TABLE notes DROP COLUMN updatedAt;
SELECT sqlitetriggers_log_install('notes', 'tombstones');
SELECT sqlitetriggers_log_check();" |
  sed -E -e 's/^Runtime error near/Error near/' -e 's/(error in trigger sqlitetriggers_log_1_).*/\1.../')
check_same "with tombstones, DROP COLUMN fails loudly, naming the log's trigger; installed as keys first, it works" \
  "$out" "1
Error near line 4: error in trigger sqlitetriggers_log_1_...
1
1
1"

# The upgrade from format 1: the fixture is a file an earlier version wrote.
FORMAT1="$(dirname "${BASH_SOURCE[0]}")/fixtures/durable_log_format1.sql"
db=$(scratch_db)
plain_sync "$(cat "$FORMAT1")" "$db" >/dev/null
check "a log of format 1 is refused by the check, naming the remedy" \
  "SELECT sqlitetriggers_log_check();
SELECT formatVersion FROM sqlitetriggers_log_meta;" \
  "Runtime error near line 2: sqlitetriggers_log_check: the durable log in this file is of format 1 (an earlier SQLiteTriggers): install any logged table again (sqlitetriggers_log_install) to upgrade it to format 3
1" "$db"
check "installing upgrades it: rows, consumers and positions kept, the logged tables' triggers as they were" \
  "CREATE TABLE other(id INTEGER PRIMARY KEY);
SELECT sqlitetriggers_log_install('other');
SELECT formatVersion FROM sqlitetriggers_log_meta;
SELECT sqlitetriggers_log_check();
SELECT id, kind, rowKey, quote(origin) FROM sqlitetriggers_changes ORDER BY id;
SELECT name, position FROM sqlitetriggers_log_consumers;
BEGIN;
SELECT sqlitetriggers_log_origin('server');
INSERT INTO lists(title) VALUES ('after');
COMMIT;
SELECT rowKey, origin FROM sqlitetriggers_changes ORDER BY id DESC LIMIT 1;" \
  "2
3
2
2|insert|2|NULL
3|insert|3|NULL
4|delete|1|NULL
sync|1
server
4|server" "$db"
fresh=$(scratch_db)
sql "CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT UNIQUE); CREATE TABLE other(id INTEGER PRIMARY KEY);
SELECT sqlitetriggers_log_install('lists'), sqlitetriggers_log_install('other');" "$fresh" >/dev/null
schema="SELECT type, name, sql FROM sqlite_schema WHERE name LIKE 'sqlitetriggers%' ORDER BY name;"
# Format 1's probes pass a constant to sqlite_compileoption_get(), which
# costs the probe's frame a register (log_triggers.c's appendProbeCall()):
# the check accepts them, and installing the table again rewrites them.
check "format 1's probes are kept, and accepted, until their table is installed again" \
  "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlitetriggers_log_1_replace%'
   AND sql LIKE '%sqlite_compileoption_get(-7317), 4), r.\"id\", sqlite_compileoption_get(-7316) FROM%';
SELECT sqlitetriggers_log_install('lists');
SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlitetriggers_log_1_replace%'
   AND sql LIKE '%sqlite_compileoption_get(CASE WHEN r.\"title\" THEN -7316 ELSE -7316 END) FROM%';
SELECT sqlitetriggers_log_check();" "2
1
2
2" "$db"
check_same "the upgraded file, its tables installed again, holds exactly the definitions a fresh install writes" \
  "$(plain_sync "$schema" "$db")" "$(plain_sync "$schema" "$fresh")"
probe=$(sql "CREATE TABLE p(id TEXT PRIMARY KEY NOT NULL, v);
SELECT sqlitetriggers_log_install('p');
SELECT replace(sql, 'ELSE -7316 END', 'ELSE -7399 END') || ';' FROM sqlite_schema
 WHERE name = 'sqlitetriggers_log_3_replace_insert';" "$db" | tail -n 1)
check "a probe that is neither this format's nor format 1's is out of date" \
  "DROP TRIGGER sqlitetriggers_log_3_replace_insert;
$probe
SELECT sqlitetriggers_log_check();" \
  "Runtime error near line 4: sqlitetriggers_log_check: the log of \"p\" is out of date (a UNIQUE index added or dropped since the install?): its inserts, updates and deletes are logged, but not necessarily the rows an INSERT OR REPLACE deletes through its UNIQUE constraints: call sqlitetriggers_log_install('p')" "$db"

# COMPACTION takes tombstones with their changes, and an origin with the
# last change of its transaction, never while that transaction is open
# (the log's last row stays, THE FORMAT, and its transaction's origin).
check "compaction takes a tombstone with its change, and an origin with its transaction's last change" \
  "$NOTES
SELECT sqlitetriggers_log_install('notes', 'tombstones');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');
INSERT INTO notes VALUES (9, 'old', NULL);
BEGIN;
SELECT sqlitetriggers_log_origin('server');
INSERT INTO notes(id, body) VALUES (1, 'a'), (2, 'b');
COMMIT;
DELETE FROM notes WHERE id = 9;
BEGIN;
SELECT sqlitetriggers_log_origin('x');
INSERT INTO notes(id, body) VALUES (3, 'c'), (4, 'd');
COMMIT;
UPDATE sqlitetriggers_log_consumers SET position = 2;
SELECT group_concat(origin) FROM (SELECT origin FROM sqlitetriggers_log_origins ORDER BY since);
SELECT count(*) FROM sqlitetriggers_log_tombstones;
UPDATE sqlitetriggers_log_consumers SET position = 4;
SELECT group_concat(origin) FROM (SELECT origin FROM sqlitetriggers_log_origins ORDER BY since);
SELECT count(*) FROM sqlitetriggers_log_tombstones;
UPDATE sqlitetriggers_log_consumers SET position = 6;
SELECT count(*) FROM sqlitetriggers_log_origins;" \
  "1
server
x
server,x
1
x
0
1"

check "a transaction that sets its origin, moves a position past its own changes and writes again keeps its origin" \
  "$NOTES
SELECT sqlitetriggers_log_install('notes');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('download');
BEGIN;
SELECT sqlitetriggers_log_origin('server');
INSERT INTO notes(body) VALUES ('a');
UPDATE sqlitetriggers_log_consumers SET position = (SELECT max(id) FROM sqlitetriggers_log);
INSERT INTO notes(body) VALUES ('b');
COMMIT;
SELECT rowKey, origin FROM sqlitetriggers_changes;" \
  "1
server
1|server
2|server"

check "marking a transaction leaves the app's last_insert_rowid() alone" \
  "$NOTES
SELECT sqlitetriggers_log_install('notes');
BEGIN;
INSERT INTO notes(id, body) VALUES (41, 'a');
SELECT sqlitetriggers_log_origin('server');
SELECT last_insert_rowid();
COMMIT;" \
  "1
server
41"

# A tombstone's values are one printf() of at most 100 (a function takes
# at most 127 arguments), joined by || past that: the same JSON text as
# SQLite's own json_object() writes (json() leaves it as it is).
check "a table of 101 columns takes two printf() calls, 100 one: the same text, json_object()'s" \
  "$(t="CREATE TABLE w100(id INTEGER PRIMARY KEY"; for i in $(seq 1 99); do t="$t, c$i"; done; echo "$t);")
$(t="CREATE TABLE w101(id INTEGER PRIMARY KEY"; for i in $(seq 1 100); do t="$t, c$i"; done; echo "$t);")
SELECT sqlitetriggers_log_install('w100', 'tombstones'), sqlitetriggers_log_install('w101', 'tombstones');
SELECT name, (length(sql) - length(replace(sql, '|| printf(''', ''))) / 11 FROM sqlite_schema WHERE name GLOB 'sqlitetriggers_log_[0-9]*_delete' ORDER BY name;
INSERT INTO w100(id, c1, c62, c99) VALUES (1, x'ff', 2.5, 'a\"b');
INSERT INTO w101(id, c1, c62, c99) VALUES (1, x'ff', 2.5, 'a\"b');
DELETE FROM w100;
DELETE FROM w101;
SELECT count(DISTINCT replace(deletedRow, ',\"c100\":null', '')), count(*), sum(deletedRow = json(deletedRow)) FROM sqlitetriggers_changes WHERE kind = 'delete';
SELECT json_extract(deletedRow, '$.c99') FROM sqlitetriggers_changes WHERE kind = 'delete' LIMIT 1;" \
  "1|2
sqlitetriggers_log_1_delete|0
sqlitetriggers_log_2_delete|1
1|2|2
a\"b"

check "a STRICT table's INTEGER and TEXT columns and a TEXT column go without the REAL branch; others keep it" \
  "CREATE TABLE s(id INTEGER PRIMARY KEY, i INTEGER, t TEXT, a ANY, r REAL) STRICT;
CREATE TABLE p(id INTEGER PRIMARY KEY, t VARCHAR(9), n NUMERIC, f FLOAT, x);
SELECT sqlitetriggers_log_install('s', 'tombstones'), sqlitetriggers_log_install('p', 'tombstones');
SELECT name, (length(sql) - length(replace(sql, '{\"real\":[', ''))) / 9 FROM sqlite_schema WHERE name GLOB 'sqlitetriggers_log_[0-9]*_delete' ORDER BY name;
INSERT INTO s VALUES (1, 2, 'x', 0.5, 1.5);
INSERT INTO p VALUES (1, 3.5, 4.5, 5.5, 6.5);
DELETE FROM s;
DELETE FROM p;
SELECT deletedRow FROM sqlitetriggers_changes WHERE kind = 'delete' ORDER BY id;" \
  "1|2
sqlitetriggers_log_1_delete|2
sqlitetriggers_log_2_delete|4
{\"id\":1,\"i\":2,\"t\":\"x\",\"a\":{\"real\":[4503599627370496,-53]},\"r\":{\"real\":[6755399441055744,-52]}}
{\"id\":1,\"t\":\"3.5\",\"n\":{\"real\":[5066549580791808,-50]},\"f\":{\"real\":[6192449487634432,-50]},\"x\":{\"real\":[7318349394477056,-50]}}"

# A file cannot mark the app's transactions, even through the expressions
# that escape the direct-only rule when SQLite parsed the schema before
# the load (an index's, a CHECK, a generated column): the schema guard
# refuses every call while such a file is open, naming the object, even
# where the app's statement itself names the function (the getter beside
# the file's generated column, as a careless "what is my origin?" query
# would).
for kind in generated generated-beside-getter check partial-index; do
  db=$(scratch_db)
  object='table "h"'
  case $kind in
    generated)     ddl="CREATE TABLE h(a, b AS (abs(a))); INSERT INTO h(a) VALUES (1);"; touch="SELECT b FROM h;" ;;
    generated-beside-getter)
                   ddl="CREATE TABLE h(a, b AS (abs(a)) VIRTUAL); INSERT INTO h(a) VALUES (1);"
                   touch="SELECT sqlitetriggers_log_origin() AS mine, (SELECT b FROM h) AS theirs;" ;;
    check)         ddl="CREATE TABLE h(a CHECK (abs(a) IS NOT 'x'));"; touch="INSERT INTO h VALUES (1);" ;;
    partial-index) ddl="CREATE TABLE h(a); CREATE INDEX hx ON h(a) WHERE abs(a) IS NOT 'x';"; touch="INSERT INTO h VALUES (1);"
                   object='index "hx"' ;;
  esac
  sql "$NOTES $ddl SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
  # The system's shell edits the schema: newer shells are defensive.
  sqlite3 "$db" "PRAGMA writable_schema = ON;
    UPDATE sqlite_schema SET sql = replace(sql, 'abs(a)', 'sqlitetriggers_log_origin(''server'' || substr(a, 1, 0))')
      WHERE sql LIKE '%abs(a)%';"
  out=$(printf 'SELECT count(*) > 0 FROM sqlite_schema;\n.load %s\nBEGIN;\nINSERT INTO notes(body) VALUES (0);\n%s\nINSERT INTO notes(body) VALUES (1);\nCOMMIT;\nSELECT quote(origin) FROM sqlitetriggers_changes;\n' \
          "$EXT" "$touch" | "$SQLITE3" -batch "$db" 2>&1)
  check_same "a file's $kind cannot mark the app's transaction; the statement fails naming the cause" \
    "$(echo "$out" | sed -E 's/^(Runtime error|Error) near line [0-9]+: //; s/ \([0-9]+\)$//')" \
    "1
sqlitetriggers_log_origin: refused: $object in database \"main\" calls sqlitetriggers_log_origin(); a database file must never reach this function (drop the object, or move it to the TEMP schema)
NULL
NULL"
done

# Foreign-key actions and the app's own triggers write through the same
# triggers: a cascade's deletion keeps its values, SET NULL is an update.
# SQLite runs the actions in no promised order: sorted by table.
for mode in OFF ON; do
  check "recursive_triggers $mode: a cascade's deletions keep their values; SET NULL is an update, with none" \
    "PRAGMA foreign_keys = ON;
PRAGMA recursive_triggers = $mode;
CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT);
CREATE TABLE items(id INTEGER PRIMARY KEY, list INTEGER REFERENCES lists(id) ON DELETE CASCADE, body BLOB);
CREATE TABLE tags(id INTEGER PRIMARY KEY, list INTEGER REFERENCES lists(id) ON DELETE SET NULL);
SELECT sqlitetriggers_log_install('items', 'tombstones'), sqlitetriggers_log_install('tags', 'tombstones');
INSERT INTO lists VALUES (1, 'home');
INSERT INTO items VALUES (10, 1, x'cafe'), (11, 1, NULL);
INSERT INTO tags VALUES (20, 1);
CREATE TEMP TRIGGER rename_before_delete BEFORE DELETE ON lists BEGIN UPDATE items SET body = x'00' WHERE id = 11; END;
DELETE FROM lists;
SELECT tableName, kind, rowKey, quote(deletedRow) FROM sqlitetriggers_changes WHERE id > 3 ORDER BY tableName, id;" \
    "1|2
items|update|11|NULL
items|delete|10|'{\"id\":10,\"list\":1,\"body\":{\"blob\":\"cafe\"}}'
items|delete|11|'{\"id\":11,\"list\":1,\"body\":{\"blob\":\"00\"}}'
tags|update|20|NULL"
done

# A deleted -0.0 keeps its sign: [-0,0], exactly -0 * 2^0, where the
# extension is loaded (no operator or core function of SQL shows the sign
# of a zero; a writer without it writes [0,0]).  Only a column without
# REAL or NUMERIC affinity holds -0.0: SQLite stores a REAL column's as 0.
db=$(scratch_db)
sql "CREATE TABLE z(id INTEGER PRIMARY KEY, v, r REAL, k);
SELECT sqlitetriggers_log_install('z', 'tombstones');
INSERT INTO z VALUES (1, -0.0, -0.0, 0.0), (2, -0.0, -0.0, 0.0);" "$db" >/dev/null
check "a deleted -0.0 is {\"real\":[-0,0]} with the extension, 0.0 and a REAL column's [0,0]" \
  "DELETE FROM z WHERE id = 1;
SELECT deletedRow FROM sqlitetriggers_changes WHERE kind = 'delete';" \
  "{\"id\":1,\"v\":{\"real\":[-0,0]},\"r\":{\"real\":[0,0]},\"k\":{\"real\":[0,0]}}" "$db"
check_same "a writer without the extension writes a deleted -0.0 as [0,0]" \
  "$(plain_sync "DELETE FROM z WHERE id = 2;
SELECT deletedRow FROM sqlitetriggers_changes WHERE kind = 'delete' AND rowKey = 2;" "$db")" \
  "{\"id\":2,\"v\":{\"real\":[0,0]},\"r\":{\"real\":[0,0]},\"k\":{\"real\":[0,0]}}"

# PRAGMA trusted_schema = OFF: the log's triggers call no function that is
# not innocuous on any SQLite (json_object() and json_array() are not before
# 3.43), so every write of every kind of logged table works there, from
# every writer, and writes the same text.
for recursive in OFF ON; do
for writer in loaded plain; do
  db=$(scratch_db)
  sql "CREATE TABLE k(a NOT NULL, b NOT NULL, v, PRIMARY KEY(a, b));
CREATE TABLE u(id TEXT PRIMARY KEY NOT NULL, n TEXT UNIQUE, v);
SELECT sqlitetriggers_log_install('k', 'tombstones'), sqlitetriggers_log_install('u', 'tombstones');" "$db" >/dev/null
  script="PRAGMA trusted_schema = OFF;
PRAGMA recursive_triggers = $recursive;
INSERT INTO k VALUES ('x', 1.5, 'a' || char(10) || 'b'), (x'01', 2, 3);
UPDATE k SET v = 'c' WHERE a = 'x';
UPDATE k SET b = 7 WHERE a = x'01';
INSERT OR REPLACE INTO k VALUES ('x', 1.5, 'replaced');
DELETE FROM k;
INSERT INTO u VALUES ('p', 'n1', 1), ('q', 'n2', 2);
INSERT OR REPLACE INTO u VALUES ('r', 'n1', 3);
UPDATE u SET id = 's' WHERE id = 'q';
DELETE FROM u;
SELECT tableName, kind, rowKey, deletedRow FROM sqlitetriggers_changes ORDER BY id;"
  if [ $writer = loaded ]; then out=$(sql "$script" "$db"); else out=$(plain_sync "$script" "$db"); fi
  # With recursive_triggers ON a REPLACE's deletion fires the DELETE
  # trigger too (after the probe, whose kind 5 the view shows as 'delete').
  replaced_k=""; replaced_u=""
  if [ $recursive = ON ]; then
    replaced_k="k|delete|[\"x\",{\"real\":[6755399441055744,-52]}]|{\"a\":\"x\",\"b\":{\"real\":[6755399441055744,-52]},\"v\":\"c\"}
"
    replaced_u="u|delete|p|{\"id\":\"p\",\"n\":\"n1\",\"v\":1}
"
  fi
  check_same "trusted_schema OFF, recursive_triggers $recursive, a writer $writer: every write of a composite-keyed and a UNIQUE-probed table with tombstones is logged" \
    "$out" "k|insert|[\"x\",{\"real\":[6755399441055744,-52]}]|
k|insert|[{\"blob\":\"01\"},2]|
k|update|[\"x\",{\"real\":[6755399441055744,-52]}]|
k|delete|[{\"blob\":\"01\"},2]|{\"a\":{\"blob\":\"01\"},\"b\":2,\"v\":3}
k|insert|[{\"blob\":\"01\"},7]|
${replaced_k}k|insert|[\"x\",{\"real\":[6755399441055744,-52]}]|
k|delete|[{\"blob\":\"01\"},7]|{\"a\":{\"blob\":\"01\"},\"b\":7,\"v\":3}
k|delete|[\"x\",{\"real\":[6755399441055744,-52]}]|{\"a\":\"x\",\"b\":{\"real\":[6755399441055744,-52]},\"v\":\"replaced\"}
u|insert|p|
u|insert|q|
u|delete|p|{\"id\":\"p\",\"n\":\"n1\",\"v\":1}
${replaced_u}u|insert|r|
u|delete|q|{\"id\":\"q\",\"n\":\"n2\",\"v\":2}
u|insert|s|
u|delete|s|{\"id\":\"s\",\"n\":\"n2\",\"v\":2}
u|delete|r|{\"id\":\"r\",\"n\":\"n1\",\"v\":3}"
done
done
