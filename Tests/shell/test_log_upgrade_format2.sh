# An app update carries the user's file: a durable log of format 2
# (AUTOINCREMENT ids), written by 7248851, the last release of that format,
# upgraded by this one to format 3 (THE FORMAT in ext/durable_log.c).  That
# commit's library is built from git at test time (build/format2-7248851/),
# never kept in the tree; every fixture is made by it here.

f2_rev=7248851
F2_OLD=$(previous_release "$f2_rev" format2)
f2_old() { printf '.load %s\n%s\n' "$F2_OLD" "$1" | "$SQLITE3" -batch "$2" 2>&1; }
f2_plain() { printf '%s\n' "$1" | "$SQLITE3" -batch "$2" 2>&1; }

if [ ! -e "$F2_OLD.so" ]; then
  fail "format 2's library builds from git (git archive $f2_rev ext)" "built" "not built"
else

# A file of format 2: two tables (one with tombstones), a registered touch
# rule, an origin, two consumers, changes compacted away up to the end (so
# that format 2's end, sqlite_sequence, is past every id left), then one
# change more for the slow consumer.
f2_file() {
  f2_old "PRAGMA journal_mode = WAL;
CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, updatedAt TEXT);
CREATE TABLE tags(name TEXT PRIMARY KEY NOT NULL, note INTEGER);
CREATE TABLE sqlitetriggers_rules(triggerName TEXT PRIMARY KEY NOT NULL, rule TEXT NOT NULL,
  tableName TEXT NOT NULL, sql TEXT NOT NULL) WITHOUT ROWID;
CREATE TRIGGER \"stamp\"
AFTER UPDATE ON \"notes\"
FOR EACH ROW
WHEN \"new\".\"updatedAt\" IS \"old\".\"updatedAt\"
BEGIN
  UPDATE \"notes\"
  SET \"updatedAt\" = strftime('%Y-%m-%d %H:%M:%f', 'now')
  WHERE \"rowid\" = \"new\".\"rowid\";
END;
INSERT INTO sqlitetriggers_rules SELECT name, name, tbl_name, sql FROM sqlite_schema WHERE name = 'stamp';
SELECT sqlitetriggers_log_install('notes'), sqlitetriggers_log_install('tags', 'tombstones');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('fast'), ('slow');
BEGIN; SELECT sqlitetriggers_log_origin('server'); INSERT INTO notes(id, title) VALUES (1, 'a'); COMMIT;
INSERT INTO tags VALUES ('red', 1);
DELETE FROM tags WHERE name = 'red';
$1" "$2" >/dev/null
}
f2_state="SELECT formatVersion FROM sqlitetriggers_log_meta;
SELECT group_concat(id || ':' || tableId || ':' || kind || ':' || coalesce(rowKey, '-'), ' ') FROM sqlitetriggers_log;
SELECT group_concat(name || '=' || position, ' ') FROM sqlitetriggers_log_consumers;"

db=$(scratch_db)
f2_file "UPDATE sqlitetriggers_log_consumers SET position = (SELECT seq FROM sqlite_sequence WHERE name = 'sqlitetriggers_log');" "$db"
check_same "format 2's file, everything read and compacted: its end is only in sqlite_sequence" \
  "$(f2_plain "$f2_state SELECT seq FROM sqlite_sequence;" "$db")" "2

fast=3 slow=3
3"
check "this version's check refuses format 2, naming the remedy" "SELECT sqlitetriggers_log_check();" \
  "Runtime error near line 2: sqlitetriggers_log_check: the durable log in this file is of format 2 (an earlier SQLiteTriggers): install any logged table again (sqlitetriggers_log_install) to upgrade it to format 3" "$db"
check "installing upgrades it: the end kept by a placeholder (which the view leaves out), positions kept, new ids past the end, one change per write (the stamp's a placeholder)" \
  "SELECT sqlitetriggers_log_install('notes'); $f2_state
SELECT sqlitetriggers_log_check();
SELECT (SELECT count(*) FROM sqlite_sequence WHERE name = 'sqlitetriggers_log') + (SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%AUTOINCREMENT%');
UPDATE notes SET title = 'b' WHERE id = 1;
SELECT tableName, kind, rowKey FROM sqlitetriggers_changes WHERE id > 3;
SELECT count(*) FROM sqlitetriggers_log WHERE id > 3 AND tableId = 0 AND kind = 0;
SELECT count(*) FROM sqlitetriggers_changes WHERE id = 3;" "1
3
3:0:0:-
fast=3 slow=3
2
0
notes|update|1
1
0" "$db"

# Changes not yet read by the slow consumer survive the upgrade, with their
# ids, tombstones and origins.
db=$(scratch_db)
f2_file "UPDATE sqlitetriggers_log_consumers SET position = 2 WHERE name = 'fast';" "$db"
f2_before=$(f2_plain "SELECT id, tableName, kind, rowKey, origin, deletedRow IS NOT NULL FROM sqlitetriggers_changes ORDER BY id;" "$db")
check_same "a log with changes left: installing keeps every change, id, origin and tombstone" \
  "$(sql "SELECT sqlitetriggers_log_install('tags');" "$db" >/dev/null;
     f2_plain "SELECT id, tableName, kind, rowKey, origin, deletedRow IS NOT NULL FROM sqlitetriggers_changes ORDER BY id;" "$db")" "$f2_before"
check "and the log goes on from its end" \
  "INSERT INTO tags VALUES ('blue', 1); SELECT max(id), (SELECT formatVersion FROM sqlitetriggers_log_meta) FROM sqlitetriggers_log;" "4|3" "$db"

# Format 2's library, still running in another process during an app
# update, on the file of format 3: its uninstall cannot take the log's
# last row, and its marks (it reads the end from sqlite_sequence, and
# writes 0) are refused, where they would have been compacted early: the
# one mark is the fixture's own.
check_same "format 2's library cannot empty the log nor mark a transaction with a wrong end" \
  "$(f2_old "SELECT sqlitetriggers_log_uninstall('tags');" "$db" | sed -E 's/ \([0-9]+\)$//'
     f2_old "BEGIN; SELECT sqlitetriggers_log_origin('server'); INSERT INTO notes(id, title) VALUES (9, 's'); COMMIT;
SELECT count(*) FROM sqlitetriggers_log_origins;" "$db" | sed -E 's/ \([0-9]+\)$//')" \
  "Runtime error near line 2: sqlitetriggers_log_uninstall: sqlitetriggers_log: the log's last row stays: its id is the log's end, from which consumers count, and ids never come back (compaction deletes the rest)
Runtime error near line 2: sqlitetriggers_log_origin: sqlitetriggers_log: only sqlitetriggers_log_origin() marks a transaction's origin
1"

fi

# THE FORMAT's end guard and placeholders, on a log of this format.
db=$(scratch_db)
sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT); CREATE TABLE other(id INTEGER PRIMARY KEY);
SELECT sqlitetriggers_log_install('notes'); SELECT sqlitetriggers_log_install('other');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('c');
INSERT INTO notes(title) VALUES ('a'), ('b');" "$db" >/dev/null
check "a DELETE of the log by hand never takes its last row, and no id changes: ids never come back" \
  "DELETE FROM sqlitetriggers_log WHERE id = 1;
DELETE FROM sqlitetriggers_log;
UPDATE sqlitetriggers_log SET id = 1 WHERE id = 2;
SELECT group_concat(id) FROM sqlitetriggers_log;" \
  "Runtime error near line 3: sqlitetriggers_log: the log's last row stays: its id is the log's end, from which consumers count, and ids never come back (compaction deletes the rest) (19)
Runtime error near line 4: sqlitetriggers_log: a change's id never changes (ids are the log's order, and consumers' positions count them) (19)
2" "$db"
gone=$(scratch_db)
check "a deletion's tombstone never joins a later change: ids never come back" \
  "CREATE TABLE gone(id INTEGER PRIMARY KEY, v); INSERT INTO gone VALUES (1, 'secret');
SELECT sqlitetriggers_log_install('gone', 'tombstones'); DELETE FROM gone WHERE id = 1;
DELETE FROM sqlitetriggers_log;
INSERT INTO gone VALUES (2, 'b');
SELECT kind, rowKey, quote(deletedRow) FROM sqlitetriggers_changes WHERE tableName = 'gone';" "1
Runtime error near line 4: sqlitetriggers_log: the log's last row stays: its id is the log's end, from which consumers count, and ids never come back (compaction deletes the rest) (19)
delete|1|'{\"id\":1,\"v\":\"secret\"}'
insert|2|NULL" "$gone"
check "uninstalling the table of the log's last change leaves a placeholder in its place, which holds the end" \
  "SELECT sqlitetriggers_log_uninstall('notes');
SELECT id, tableId, kind, quote(rowKey) FROM sqlitetriggers_log;
INSERT INTO other VALUES (7);
SELECT tableName, kind, rowKey FROM sqlitetriggers_changes WHERE tableName = 'other';" "1
2|0|0|NULL
other|insert|7" "$db"
