# The durable change log (durable_log.c): installed with the extension,
# written and read in plain SQL by every process.  Each statement that may
# fail stands on its own line: after an error the sqlite3 CLI skips the
# rest of a line.

LISTS="CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT UNIQUE);"
# A transaction's stamp is random: the checks show it as the first id that
# carries it (NULL for a writer without the extension).
TX="(SELECT min(f.id) FROM sqlitetriggers_log AS f WHERE f.tx = c.tx)"
CHANGES="SELECT id, tableName, kind, rowKey, $TX FROM sqlitetriggers_changes AS c;"

# plain SCRIPT DB: the sqlite3 CLI without the extension.
plain() {
  printf '%s\n' "$1" | "$SQLITE3" -batch "$2" 2>&1
}

check "inserts, updates, deletes and key changes are logged by key, in order" \
  "$LISTS
CREATE TABLE tags(name TEXT, owner TEXT, note TEXT, PRIMARY KEY(owner, name)) WITHOUT ROWID;
SELECT sqlitetriggers_log_install('lists'), sqlitetriggers_log_install('TAGS');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');
INSERT INTO lists(title) VALUES ('inbox'), ('home');
UPDATE lists SET title = 'work' WHERE id = 2;
UPDATE lists SET id = 7 WHERE id = 1;
DELETE FROM lists WHERE id = 2;
INSERT INTO tags VALUES ('red', 'r1', NULL);
UPDATE tags SET note = 'x';
$CHANGES" \
  "1|2
1|lists|insert|1|1
2|lists|insert|2|1
3|lists|update|2|3
4|lists|delete|1|4
5|lists|insert|7|4
6|lists|delete|2|6
7|tags|insert|[\"r1\",\"red\"]|7
8|tags|update|[\"r1\",\"red\"]|8"

# (compaction keeps the log's last row: its id is the end, THE FORMAT)
check "a new consumer starts at the end; the first lets go of what came before it but the log's last row" \
  "$LISTS
SELECT sqlitetriggers_log_install('lists');
INSERT INTO lists(title) VALUES ('before'), ('again');
SELECT count(*) FROM sqlitetriggers_log;
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('a');
SELECT count(*) FROM sqlitetriggers_log;
INSERT INTO lists(title) VALUES ('after');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('b');
SELECT name, position FROM sqlitetriggers_log_consumers ORDER BY name;
SELECT group_concat(id) FROM sqlitetriggers_log;" \
  "1
2
1
a|2
b|3
3"

db=$(scratch_db)
sql "$LISTS
SELECT sqlitetriggers_log_install('lists');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');" "$db" >/dev/null
actual=$(plain "PRAGMA recursive_triggers = OFF;
INSERT INTO lists VALUES (1, 'inbox'), (2, 'home');
INSERT OR REPLACE INTO lists VALUES (3, 'inbox');
UPDATE OR REPLACE lists SET title = 'home' WHERE id = 3;
INSERT INTO lists VALUES (4, 'home');
INSERT OR IGNORE INTO lists VALUES (5, 'home');
$CHANGES
SELECT * FROM lists;" "$db")
check_same "a writer without the extension logs too, REPLACE's deletions included (recursive_triggers OFF)" \
  "$actual" \
  "Runtime error near line 5: UNIQUE constraint failed: lists.title (19)
1|lists|insert|1|
2|lists|insert|2|
3|lists|delete|1|
4|lists|insert|3|
5|lists|delete|2|
6|lists|update|3|
7|lists|delete|3|
3|home"

# A conflict probe's kind says whether the writer's REPLACE deletions fire
# DELETE triggers (5: its deletion is logged again as a delete) or not (4:
# the probe is the deletion's only trace), so that net folding counts each
# deletion once.  A writer without the extension is taken to have
# recursive_triggers OFF, SQLite's default.
db=$(scratch_db)
sql "$LISTS
SELECT sqlitetriggers_log_install('lists');
INSERT INTO lists VALUES (1, 'a'), (2, 'b'), (3, 'c');" "$db" >/dev/null
probes=$(sql "PRAGMA recursive_triggers = OFF;
INSERT OR REPLACE INTO lists VALUES (4, 'a');
PRAGMA recursive_triggers = ON;
INSERT OR REPLACE INTO lists VALUES (5, 'b');
SELECT group_concat(kind || ':' || rowKey, ' ') FROM sqlitetriggers_log WHERE id > 3;" "$db")
plain_probe=$(plain "PRAGMA recursive_triggers = ON;
INSERT OR REPLACE INTO lists VALUES (6, 'c');
SELECT group_concat(kind || ':' || rowKey, ' ') FROM sqlitetriggers_log WHERE id > 8;" "$db")
check_same "a probe is kind 5 where REPLACE fires DELETE triggers on a connection with the extension, else 4" \
  "$probes / $plain_probe" "4:1 1:4 5:2 3:2 1:5 / 4:3 3:3 1:6"

check "install refuses what it cannot log, naming the table and the remedy" \
  "CREATE TABLE nokey(a, b);
CREATE TABLE expr(id INTEGER PRIMARY KEY, t TEXT);
CREATE UNIQUE INDEX ex ON expr(lower(t));
CREATE TABLE part(id INTEGER PRIMARY KEY, t TEXT);
CREATE UNIQUE INDEX px ON part(t) WHERE t IS NOT NULL;
CREATE VIEW v AS SELECT 1;
CREATE VIRTUAL TABLE s USING fts5(body);
SELECT sqlitetriggers_log_install('nokey');
SELECT sqlitetriggers_log_install('expr');
SELECT sqlitetriggers_log_install('part');
SELECT sqlitetriggers_log_install('v');
SELECT sqlitetriggers_log_install('s');
SELECT sqlitetriggers_log_install('missing');
SELECT sqlitetriggers_log_install(1);
SELECT sqlitetriggers_log_install('sqlite_schema');
SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlitetriggers%';" \
  "Runtime error near line 9: sqlitetriggers_log_install: \"nokey\" has no PRIMARY KEY: its rowids can change (VACUUM renumbers them), so its changes could not be matched to rows; declare a primary key (an INTEGER PRIMARY KEY keeps the rowids)
Runtime error near line 10: sqlitetriggers_log_install: the UNIQUE index \"ex\" of \"expr\" is on an expression: the rows an INSERT OR REPLACE deletes through it cannot be logged in plain SQL; make it a UNIQUE constraint on columns, or do not log this table
Runtime error near line 11: sqlitetriggers_log_install: the UNIQUE index \"px\" of \"part\" has a WHERE clause: the rows an INSERT OR REPLACE deletes through it cannot be logged in plain SQL; make it a UNIQUE constraint on columns, or do not log this table
Runtime error near line 12: sqlitetriggers_log_install: \"v\" is a view: only tables are logged
Runtime error near line 13: sqlitetriggers_log_install: \"s\" is a virtual table: only tables are logged
Runtime error near line 14: sqlitetriggers_log_install: no table \"missing\" in the main schema
Runtime error near line 15: sqlitetriggers_log_install: expects a table name
Runtime error near line 16: sqlitetriggers_log_install: \"sqlite_schema\" is an internal table
0"

columns=$(seq -s ', ' -f 'c%g' 1 65)
check "a UNIQUE index wider than the probes take is refused" \
  "CREATE TABLE wide(id INTEGER PRIMARY KEY, $columns, UNIQUE($columns));
SELECT sqlitetriggers_log_install('wide');" \
  "Runtime error near line 3: sqlitetriggers_log_install: the UNIQUE index \"sqlite_autoindex_wide_1\" of \"wide\" has more than 64 columns: the rows an INSERT OR REPLACE deletes through it cannot be logged in plain SQL; narrow it, or do not log this table"

check "a consumer's position only moves forward, and never past the end" \
  "$LISTS
SELECT sqlitetriggers_log_install('lists');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');
INSERT INTO lists(title) VALUES ('a'), ('b');
UPDATE sqlitetriggers_log_consumers SET position = 3;
UPDATE sqlitetriggers_log_consumers SET position = NULL;
UPDATE sqlitetriggers_log_consumers SET position = 2;
UPDATE sqlitetriggers_log_consumers SET position = 1;
SELECT position FROM sqlitetriggers_log_consumers;" \
  "1
Runtime error near line 6: sqlitetriggers_log: a consumer's position cannot pass the end of the log (19)
Runtime error near line 7: sqlitetriggers_log: a consumer's position only moves forward (19)
Runtime error near line 9: sqlitetriggers_log: a consumer's position only moves forward (19)
2"

check "compaction keeps what the slowest consumer has not read, and the log's last row; a deleted consumer lets go; writes alone never compact" \
  "$LISTS
SELECT sqlitetriggers_log_install('lists');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('fast'), ('slow');
INSERT INTO lists(title) VALUES ('a'), ('b'), ('c'), ('d');
UPDATE sqlitetriggers_log_consumers SET position = 4 WHERE name = 'fast';
SELECT group_concat(id) FROM sqlitetriggers_log;
UPDATE sqlitetriggers_log_consumers SET position = 2 WHERE name = 'slow';
SELECT group_concat(id), (SELECT compactedThrough FROM sqlitetriggers_log_meta) FROM sqlitetriggers_log;
DELETE FROM sqlitetriggers_log_consumers WHERE name = 'slow';
SELECT count(*), (SELECT compactedThrough FROM sqlitetriggers_log_meta) FROM sqlitetriggers_log;
DELETE FROM sqlitetriggers_log_consumers;
INSERT INTO lists(title) VALUES ('e');
SELECT group_concat(id) FROM sqlitetriggers_log;" \
  "1
1,2,3,4
3,4|2
1|4
4,5"

check "a consumer that does not read falls behind past the backlog cap, and is told so" \
  "$LISTS
SELECT sqlitetriggers_log_install('lists');
UPDATE sqlitetriggers_log_meta SET maxBacklog = 3;
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('reader'), ('sleeper');
INSERT INTO lists(title) VALUES ('a'), ('b'), ('c'), ('d'), ('e');
UPDATE sqlitetriggers_log_consumers SET position = 5 WHERE name = 'reader';
SELECT group_concat(id), (SELECT compactedThrough FROM sqlitetriggers_log_meta) FROM sqlitetriggers_log;
SELECT name, position < (SELECT compactedThrough FROM sqlitetriggers_log_meta) AS fellBehind
  FROM sqlitetriggers_log_consumers ORDER BY name;
UPDATE sqlitetriggers_log_consumers SET position = 5 WHERE name = 'sleeper';
SELECT name, position < (SELECT compactedThrough FROM sqlitetriggers_log_meta) AS fellBehind
  FROM sqlitetriggers_log_consumers ORDER BY name;" \
  "1
3,4,5|2
reader|0
sleeper|1
reader|0
sleeper|0"

check "check() names a renamed, recreated or changed table; installing again follows it" \
  "$LISTS
SELECT sqlitetriggers_log_install('lists');
SELECT sqlitetriggers_log_check();
ALTER TABLE lists RENAME TO folders;
SELECT sqlitetriggers_log_check();
SELECT sqlitetriggers_log_install('folders');
SELECT sqlitetriggers_log_check(), tableName FROM sqlitetriggers_log_tables;
CREATE UNIQUE INDEX byKind ON folders(title, id);
SELECT sqlitetriggers_log_check();
SELECT sqlitetriggers_log_install('folders');
SELECT sqlitetriggers_log_check();
CREATE TABLE new_folders(id INTEGER PRIMARY KEY, title TEXT UNIQUE, color INT);
INSERT INTO new_folders(id, title) SELECT id, title FROM folders;
DROP TABLE folders;
ALTER TABLE new_folders RENAME TO folders;
SELECT sqlitetriggers_log_check();
SELECT sqlitetriggers_log_install('folders');
SELECT sqlitetriggers_log_check();" \
  "1
1
Runtime error near line 6: sqlitetriggers_log_check: the log of \"lists\" is now on \"folders\" (renamed): call sqlitetriggers_log_install('folders')
1
1|folders
Runtime error near line 10: sqlitetriggers_log_check: the log of \"folders\" is out of date (a UNIQUE index added or dropped since the install?): its inserts, updates and deletes are logged, but not necessarily the rows an INSERT OR REPLACE deletes through its UNIQUE constraints: call sqlitetriggers_log_install('folders')
1
1
Runtime error near line 17: sqlitetriggers_log_check: the log of \"folders\" is missing its insert trigger (the table recreated by a migration, or the trigger dropped?): call sqlitetriggers_log_install('folders'); changes made since were not logged
1
1"

check "ALTER TABLE ADD and DROP COLUMN work with the log installed" \
  "CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, body TEXT, extra INT);
SELECT sqlitetriggers_log_install('notes');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');
ALTER TABLE notes DROP COLUMN extra;
ALTER TABLE notes ADD COLUMN color INT;
INSERT INTO notes VALUES ('n1', 'x', 3);
SELECT sqlitetriggers_log_check();
$CHANGES" \
  "1
1
1|notes|insert|n1|1"

check "install refuses a log object of another shape, and changes nothing" \
  "CREATE TABLE sqlitetriggers_log(id INTEGER PRIMARY KEY, payload TEXT);
$LISTS
SELECT sqlitetriggers_log_install('lists');
SELECT name FROM sqlite_schema ORDER BY name;" \
  "Runtime error near line 4: sqlitetriggers_log_install: \"sqlitetriggers_log\" exists in this file with another definition (not this version's log, or not a log at all): rename or drop it first
lists
sqlite_autoindex_lists_1
sqlitetriggers_log"

check "an install inside a transaction that rolls back leaves nothing" \
  "$LISTS
BEGIN;
SELECT sqlitetriggers_log_install('lists');
ROLLBACK;
SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlitetriggers%';" \
  "1
0"

check "uninstall drops the table's triggers, registration and changes" \
  "$LISTS
CREATE TABLE other(id INTEGER PRIMARY KEY);
SELECT sqlitetriggers_log_install('lists'), sqlitetriggers_log_install('other');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');
INSERT INTO lists(title) VALUES ('a');
INSERT INTO other DEFAULT VALUES;
SELECT sqlitetriggers_log_uninstall('lists'), sqlitetriggers_log_uninstall('lists');
INSERT INTO lists(title) VALUES ('b');
SELECT tableName FROM sqlitetriggers_changes;
SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 'lists';" \
  "1|2
1|0
other
0"

check "the log's functions are direct-only: a trigger or view in a file cannot call them" \
  "$LISTS
CREATE TABLE t(id INTEGER PRIMARY KEY);
CREATE TRIGGER planted AFTER INSERT ON t BEGIN SELECT sqlitetriggers_log_install('lists'); END;
INSERT INTO t DEFAULT VALUES;
CREATE VIEW pv AS SELECT sqlitetriggers_log_uninstall('lists');
SELECT * FROM pv;" \
  "Parse error near line 5: unsafe use of sqlitetriggers_log_install()
Parse error near line 7: unsafe use of sqlitetriggers_log_uninstall()"

check "a connection with the extension stamps its transactions, with no call; a savepoint rolled back keeps the ids" \
  "$LISTS
SELECT sqlitetriggers_log_stamp();
SELECT sqlitetriggers_log_install('lists');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');
BEGIN; INSERT INTO lists(title) VALUES ('a'); SAVEPOINT s; INSERT INTO lists(title) VALUES ('x'); ROLLBACK TO s; INSERT INTO lists(title) VALUES ('b'); COMMIT;
INSERT INTO lists(title) VALUES ('c');
BEGIN; INSERT INTO lists(title) VALUES ('d'); ROLLBACK;
INSERT INTO lists(title) VALUES ('e'), ('f');
SELECT group_concat(id || ':' || $TX, ' ') FROM sqlitetriggers_log AS c;
SELECT count(DISTINCT tx), min(tx) > 0 FROM sqlitetriggers_log;
SELECT sqlite_compileoption_get(0) = (SELECT compile_options FROM pragma_compile_options LIMIT 1);" \
  "1
1
1:1 2:1 3:3 4:4 5:4
3|1
1"

# Every connection with the extension stamps, whichever process installed
# the log; a writer without the extension leaves tx NULL.  A file that
# calls the stamp itself (a CHECK here) reads the same stamp: it cannot
# merge two transactions.
db=$(scratch_db)
sql "$LISTS SELECT sqlitetriggers_log_install('lists');" "$db" >/dev/null
plain "CREATE TABLE c(id INTEGER PRIMARY KEY, x CHECK (sqlite_compileoption_get(-7316) IS NOT 0));" "$db"
sql "BEGIN; INSERT INTO lists(title) VALUES ('a'); INSERT INTO c(x) VALUES (1); UPDATE lists SET title = 'b'; COMMIT;
INSERT INTO c(x) VALUES (2);
INSERT INTO lists(title) VALUES ('c');" "$db" >/dev/null
plain "INSERT INTO lists(title) VALUES ('d'), ('e');" "$db"
sql "INSERT INTO lists(title) VALUES ('f');" "$db" >/dev/null
check_same "every process with the extension stamps, a writer without it leaves tx NULL" \
  "$(plain "SELECT group_concat(id || ':' || ifnull($TX, 'null'), ' ') FROM sqlitetriggers_log AS c;" "$db")" \
  "1:1 2:1 3:3 4:null 5:null 6:6"

# Durability: VACUUM, journal modes, backups and checkpoints keep the log.
db=$(scratch_db)
sql "$LISTS
SELECT sqlitetriggers_log_install('lists');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');
INSERT INTO lists(title) VALUES ('a'), ('b'), ('c');
DELETE FROM lists WHERE id = 2;
UPDATE sqlitetriggers_log_consumers SET position = 2;" "$db" >/dev/null
actual=$(plain "VACUUM;
PRAGMA journal_mode = WAL;
INSERT INTO lists(title) VALUES ('d');
PRAGMA wal_checkpoint(TRUNCATE);
.backup '$db.copy'
PRAGMA journal_mode = DELETE;
INSERT INTO lists(title) VALUES ('e');" "$db" | tr '\n' ' ')
check_same "VACUUM, journal_mode changes and a WAL checkpoint run with the log installed" \
  "$actual" "wal 0|0|0 delete "
check_same "the log survives them, ids and positions included" \
  "$(plain "SELECT group_concat(id || ':' || rowKey, ' ') FROM sqlitetriggers_log; SELECT position FROM sqlitetriggers_log_consumers;" "$db")" \
  "3:3 4:2 5:4 6:5
2"
check_same "a backup carries the log" \
  "$(plain "SELECT group_concat(id, ' ') FROM sqlitetriggers_log;" "$db.copy")" "3 4 5"
rm -f "$db.copy"

# Two processes installing at once end with one log.
db=$(scratch_db)
plain "$LISTS CREATE TABLE tags(id INTEGER PRIMARY KEY);" "$db" >/dev/null
for table in lists tags lists tags; do
  printf '.timeout 20000\n.load %s\nSELECT sqlitetriggers_log_install(%s);\n' "$EXT" "'$table'" \
    | "$SQLITE3" -batch "$db" >"$SCRATCH/install.$table.$RANDOM" 2>&1 &
done
wait
check_same "two processes installing at once end with one log" \
  "$(plain "SELECT count(*) FROM sqlite_schema WHERE name GLOB 'sqlitetriggers_log_[0-9]*';
SELECT group_concat(tableName, ' ') FROM (SELECT tableName FROM sqlitetriggers_log_tables ORDER BY tableName);
SELECT count(*) FROM sqlitetriggers_log_meta;" "$db" | tr '\n' ' ')|$(cat "$SCRATCH"/install.* | sort | tr '\n' ' ')" \
  "8 lists tags 1 |1 1 2 2 "

check "a key SQLite lets be NULL is refused, naming the column and the remedy; NOT NULL, INTEGER PRIMARY KEY and WITHOUT ROWID keys are taken" \
  "CREATE TABLE loose(id TEXT PRIMARY KEY, body);
CREATE TABLE pair(a INT, b TEXT NOT NULL, PRIMARY KEY(b, a));
CREATE TABLE strict_key(id TEXT PRIMARY KEY NOT NULL);
CREATE TABLE rowid_alias(id INTEGER PRIMARY KEY);
CREATE TABLE wr(id TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE descending(id INTEGER PRIMARY KEY DESC, v);
CREATE TABLE int_key(id INT PRIMARY KEY, v);
CREATE TABLE ascending(id INTEGER PRIMARY KEY ASC, v);
CREATE TABLE desc_not_null(id INTEGER PRIMARY KEY DESC NOT NULL, v);
SELECT sqlitetriggers_log_install('loose');
SELECT sqlitetriggers_log_install('pair');
SELECT sqlitetriggers_log_install('descending');
SELECT sqlitetriggers_log_install('int_key');
SELECT sqlitetriggers_log_install('strict_key'), sqlitetriggers_log_install('rowid_alias'), sqlitetriggers_log_install('wr'),
  sqlitetriggers_log_install('ascending'), sqlitetriggers_log_install('desc_not_null');" \
  "Runtime error near line 11: sqlitetriggers_log_install: the primary key column \"id\" of \"loose\" may be NULL (SQLite allows NULL in a PRIMARY KEY that is not the rowid: any but a lone \"INTEGER PRIMARY KEY\", which DESC also makes an ordinary column), and a row with a NULL key could never be matched to its changes: declare it NOT NULL
Runtime error near line 12: sqlitetriggers_log_install: the primary key column \"a\" of \"pair\" may be NULL (SQLite allows NULL in a PRIMARY KEY that is not the rowid: any but a lone \"INTEGER PRIMARY KEY\", which DESC also makes an ordinary column), and a row with a NULL key could never be matched to its changes: declare it NOT NULL
Runtime error near line 13: sqlitetriggers_log_install: the primary key column \"id\" of \"descending\" may be NULL (SQLite allows NULL in a PRIMARY KEY that is not the rowid: any but a lone \"INTEGER PRIMARY KEY\", which DESC also makes an ordinary column), and a row with a NULL key could never be matched to its changes: declare it NOT NULL
Runtime error near line 14: sqlitetriggers_log_install: the primary key column \"id\" of \"int_key\" may be NULL (SQLite allows NULL in a PRIMARY KEY that is not the rowid: any but a lone \"INTEGER PRIMARY KEY\", which DESC also makes an ordinary column), and a row with a NULL key could never be matched to its changes: declare it NOT NULL
1|2|3|4|5"

# "id INTEGER PRIMARY KEY DESC" is no rowid alias (SQLite's documented
# quirk): a writer without the extension leaves it NULL, which the log
# could never match, so the install above refuses it; with NOT NULL every
# writer must give it.
db=$(scratch_db)
sql "CREATE TABLE t(id INTEGER PRIMARY KEY DESC NOT NULL, v); SELECT sqlitetriggers_log_install('t');" "$db" >/dev/null
check_same "a writer without the extension cannot write a NULL key into a logged INTEGER PRIMARY KEY DESC" \
  "$(printf "INSERT INTO t(v) VALUES ('a');\nINSERT INTO t(id, v) VALUES (5, 'b');\nSELECT rowKey FROM sqlitetriggers_log;\n" | "$SQLITE3" -batch "$db" 2>&1)" \
  "Runtime error near line 1: NOT NULL constraint failed: t.id (19)
5"

# A REAL is {"real":[M,E]}, exactly M * 2^E (the same text from every
# writer and version; Tests/python/test_log_real_keys.py tries the range).
check "a composite key keeps a REAL exactly and a column name's quote: the logged key matches its row again, as valid JSON" \
  "CREATE TABLE d(k TEXT NOT NULL, t REAL NOT NULL, \"x\"\"y\" INT NOT NULL, PRIMARY KEY(k, t, \"x\"\"y\"));
SELECT sqlitetriggers_log_install('d');
INSERT INTO d VALUES ('d1', 1700000000.123456, 3), ('d2', 0.25, 4);
UPDATE d SET t = 2.5 WHERE k = 'd2';
SELECT group_concat(kind || ' ' || rowKey, ', ') FROM sqlitetriggers_changes;
SELECT keyColumns, json_valid(keyColumns) FROM sqlitetriggers_log_tables;
SELECT count(*) FROM d, sqlitetriggers_log AS l WHERE l.kind <> 3 AND d.k = json_extract(l.rowKey, '\$[0]')
  AND d.t = json_extract(l.rowKey, '\$[1].real[0]') * 1.0 / (1 << -json_extract(l.rowKey, '\$[1].real[1]'))
  AND d.\"x\"\"y\" = json_extract(l.rowKey, '\$[2]');" \
  '1
insert ["d1",{"real":[7130316800517812,-22]},3], insert ["d2",{"real":[4503599627370496,-54]},4], delete ["d2",{"real":[4503599627370496,-54]},4], insert ["d2",{"real":[5629499534213120,-51]},4]
["k","t","x\"y"]|1
2'

check "a consumer's position cannot be inserted past the end, nor moved back by INSERT OR REPLACE" \
  "$LISTS
SELECT sqlitetriggers_log_install('lists');
INSERT INTO lists(title) VALUES ('a'), ('b');
INSERT INTO sqlitetriggers_log_consumers(name, position) VALUES ('early', 99);
INSERT INTO sqlitetriggers_log_consumers(name, position) VALUES ('sync', 2);
INSERT OR REPLACE INTO sqlitetriggers_log_consumers(name, position) VALUES ('sync', 0);
INSERT OR REPLACE INTO sqlitetriggers_log_consumers(name, position) VALUES ('sync', 2);
SELECT name, position FROM sqlitetriggers_log_consumers;" \
  "1
Runtime error near line 5: sqlitetriggers_log: a consumer's position cannot pass the end of the log (19)
Runtime error near line 7: sqlitetriggers_log: a consumer's position only moves forward (19)
sync|2"

check "a new table under a logged table's old name gets a log of its own; the renamed table keeps its log" \
  "CREATE TABLE notes(id INTEGER PRIMARY KEY, body);
SELECT sqlitetriggers_log_install('notes');
ALTER TABLE notes RENAME TO old_notes;
CREATE TABLE notes(id INTEGER PRIMARY KEY, body);
SELECT sqlitetriggers_log_install('notes');
INSERT INTO old_notes(body) VALUES ('old');
INSERT INTO notes(body) VALUES ('new');
SELECT group_concat(tableName || ' ' || kind, ', ') FROM sqlitetriggers_changes;
SELECT group_concat(id || ' ' || tableName, ', ') FROM sqlitetriggers_log_tables;
SELECT sqlitetriggers_log_check();" \
  "1
2
old_notes insert, notes insert
1 old_notes, 2 notes
2"

check "after RENAME COLUMN of a key, check() names the table until it is installed again" \
  "CREATE TABLE notes(id INTEGER PRIMARY KEY, body);
SELECT sqlitetriggers_log_install('notes');
ALTER TABLE notes RENAME COLUMN id TO uid;
SELECT sqlitetriggers_log_check();
SELECT sqlitetriggers_log_install('notes'), sqlitetriggers_log_check(), keyColumns FROM sqlitetriggers_log_tables;" \
  "1
Runtime error near line 5: sqlitetriggers_log_check: the key of \"notes\" is now [\"uid\"], not [\"id\"] as registered (a column renamed?): call sqlitetriggers_log_install('notes')
1|1|[\"uid\"]"

# The stamp on a connection that can never write: SQLite's own answer
# (NULL), so a view reading it works there too.
db=$(scratch_db)
"$SQLITE3" "$db" "CREATE TABLE notes(id INTEGER PRIMARY KEY, body);
  CREATE VIEW stamped AS SELECT sqlite_compileoption_get(-7316) AS tx, 'view' AS via;"
for how in "-readonly $db" "file:$db?mode=ro"; do
  # shellcheck disable=SC2086
  out=$(printf '.load %s\nSELECT quote(sqlite_compileoption_get(-7316));\nSELECT quote(tx), via FROM stamped;\n' "$EXT" |
        "$SQLITE3" -batch $how 2>&1)
  check_same "the stamp on a read-only connection ($how) is NULL, as SQLite's own" "$out" "NULL
NULL|view"
done
check "the stamp under PRAGMA query_only is NULL, and a stamp again once it is off and the transaction writes" \
  "PRAGMA query_only = ON;
SELECT quote(sqlite_compileoption_get(-7316)), quote(tx) FROM stamped;
PRAGMA query_only = OFF;
BEGIN;
SELECT quote(sqlite_compileoption_get(-7316));
INSERT INTO notes(body) VALUES ('w');
SELECT sqlite_compileoption_get(-7316) > 0, tx = sqlite_compileoption_get(-7316) FROM stamped;
ROLLBACK;" \
  "NULL|NULL
NULL
1|1" "$db"

# A name SQLite would cut at a NUL is refused, naming the function: it
# would otherwise install on another table ("pre").
check "a table name with a NUL character is refused by every installer" \
  "CREATE TABLE pre(id INTEGER PRIMARY KEY, v);
SELECT sqlitetriggers_log_install('pre' || char(0) || 'fix');
SELECT sqlitetriggers_log_uninstall('pre' || char(0) || 'fix');
SELECT sqlitetriggers_change_feed('pre' || char(0) || 'fix', 'net');
SELECT sqlitetriggers_change_feed('pre', 'net' || char(0) || 'x');
SELECT sqlitetriggers_change_feed_mode('pre' || char(0) || 'fix');
SELECT count(*) FROM sqlite_temp_schema WHERE type = 'trigger';
SELECT count(*) FROM sqlite_schema WHERE name <> 'pre';" \
  "Runtime error near line 3: sqlitetriggers_log_install: the table name holds a NUL character (char(0)), where SQLite would cut it: pass it without one
Runtime error near line 4: sqlitetriggers_log_uninstall: the table name holds a NUL character (char(0)), where SQLite would cut it: pass it without one
Runtime error near line 5: sqlitetriggers_change_feed: the table name holds a NUL character (char(0)), where SQLite would cut it: pass it without one
Runtime error near line 6: sqlitetriggers_change_feed: MODE holds a NUL character (char(0)), where SQLite would cut it: pass it without one
Runtime error near line 7: sqlitetriggers_change_feed_mode: the table name holds a NUL character (char(0)), where SQLite would cut it: pass it without one
0
0"

# A REPLACE through the rowid of a table keyed by other columns deletes a
# row of another key: the probe on the rowid logs it, in both modes (kind 4
# where the DELETE trigger does not fire, 5 beside its delete where it does).
for mode in OFF ON; do
  if [ $mode = OFF ]; then replaced="4|old"; else replaced="5|old
3|old"; fi
  if [ $mode = OFF ]; then moved="4|new"; else moved="5|new
3|new"; fi
  check "recursive_triggers $mode: REPLACE through the rowid of a TEXT-keyed table logs the row it deletes" \
    "PRAGMA recursive_triggers = $mode;
CREATE TABLE t(id TEXT PRIMARY KEY NOT NULL, v); SELECT sqlitetriggers_log_install('t');
INSERT INTO t(rowid, id, v) VALUES (1, 'old', 1);
INSERT INTO t(id, v) VALUES ('x', 1);
INSERT OR REPLACE INTO t(rowid, id, v) VALUES (1, 'new', 2);
UPDATE OR REPLACE t SET rowid = 1 WHERE id = 'x';
INSERT INTO t(id, v) VALUES ('y', 3);
SELECT kind, rowKey FROM sqlitetriggers_log ORDER BY id;
SELECT group_concat(id) FROM t;" \
    "1
1|old
1|x
$replaced
1|new
$moved
2|x
1|y
x,y"
done
check "a TEXT-keyed table whose columns hide every name of the rowid gets no rowid probe" \
  "PRAGMA recursive_triggers = OFF;
CREATE TABLE t(id TEXT PRIMARY KEY NOT NULL, rowid, _rowid_, oid); SELECT sqlitetriggers_log_install('t');
SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = 't';
CREATE TABLE u(id TEXT PRIMARY KEY NOT NULL, rowid); SELECT sqlitetriggers_log_install('u');
INSERT INTO u(_rowid_, id, rowid) VALUES (1, 'a', 7);
INSERT OR REPLACE INTO u(_rowid_, id, rowid) VALUES (1, 'b', 7);
SELECT kind, rowKey FROM sqlitetriggers_log WHERE tableId = 2 ORDER BY id;" \
  "1
3
2
1|a
4|a
1|b"

# A writer without the extension inserts into a table whose key DEFAULT
# calls uuidv7() when it gives the key (SQLite compiles the defaults of
# omitted columns only), and is refused, naming the function, when it
# omits it; every write it makes is logged.
db=$(scratch_db)
sql "CREATE TABLE r(id TEXT PRIMARY KEY NOT NULL DEFAULT (uuidv7()), title TEXT);
SELECT sqlitetriggers_log_install('r');" "$db" >/dev/null
out=$("$SQLITE3" -batch "$db" "INSERT INTO r(id, title) VALUES ('given', 'x');
UPDATE r SET title = 'y';
SELECT kind || ' ' || rowKey FROM sqlitetriggers_log ORDER BY id;" 2>&1)
refused=$("$SQLITE3" -batch "$db" "INSERT INTO r(title) VALUES ('no key');" 2>&1)
check_same "a writer without the extension inserts a row that gives its uuidv7() key, and is refused without it" \
  "$out
$([[ $refused == *"unknown function: uuidv7()"* ]] && echo refused)" \
  "1 given
2 given
refused"
