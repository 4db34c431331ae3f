# sqlitetriggers_change_feed(): a table's committed row changes in
# swift_callback_log, from SQL alone.  Each statement that may fail stands
# on its own line: after an error the sqlite3 CLI skips the rest of a line.

T="CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE, n INT);"
LOG="SELECT seq || ' ' || name || ' ' || args FROM swift_callback_log;"

check "inserts, updates and deletes reach the log with their values" \
  "$T
SELECT sqlitetriggers_change_feed('t');
INSERT INTO t(v, n) VALUES ('a', 1);
UPDATE t SET n = 2;
DELETE FROM t;
$LOG" \
  "3
1 sqlitetriggers.changes.t [\"insert\",1,1,\"a\",1]
2 sqlitetriggers.changes.t [\"update\",1,1,\"a\",1,1,1,\"a\",2]
3 sqlitetriggers.changes.t [\"delete\",1,1,\"a\",2]"

check "rolled-back and failed work is never logged" \
  "$T
SELECT sqlitetriggers_change_feed('t');
BEGIN; INSERT INTO t(v) VALUES ('x'); ROLLBACK;
INSERT INTO t(v) VALUES ('a');
INSERT INTO t(v) VALUES ('b'), ('a');
BEGIN; INSERT INTO t(v) VALUES ('c'); SAVEPOINT s; INSERT INTO t(v) VALUES ('d'); ROLLBACK TO s; COMMIT;
$LOG" \
  "3
Runtime error near line 6: UNIQUE constraint failed: t.v (19)
1 sqlitetriggers.changes.t [\"insert\",1,1,\"a\",null]
2 sqlitetriggers.changes.t [\"insert\",2,2,\"c\",null]"

check "'keys' carries the rowid and the primary key only" \
  "CREATE TABLE k(a TEXT, b INT, c BLOB, PRIMARY KEY(b, a));
SELECT sqlitetriggers_change_feed('k', 'keys');
INSERT INTO k VALUES ('x', 1, zeroblob(1000));
UPDATE k SET c = NULL;
$LOG" \
  "3
1 sqlitetriggers.changes.k [\"insert\",1,1,\"x\"]
2 sqlitetriggers.changes.k [\"update\",1,1,\"x\",1,1,\"x\"]"

check "a WITHOUT ROWID table gives NULL rowids; generated columns are read" \
  "CREATE TABLE w(k TEXT PRIMARY KEY, v INT, twice INT AS (v * 2)) WITHOUT ROWID;
SELECT sqlitetriggers_change_feed('w');
INSERT INTO w(k, v) VALUES ('x', 21);
$LOG" \
  "3
1 sqlitetriggers.changes.w [\"insert\",null,\"x\",21,42]"

check "calling again after a column was added rebuilds the triggers" \
  "$T
SELECT sqlitetriggers_change_feed('t');
ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'e';
SELECT sqlitetriggers_change_feed('t');
INSERT INTO t(v) VALUES ('a');
$LOG
SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger';" \
  "3
3
1 sqlitetriggers.changes.t [\"insert\",1,1,\"a\",null,\"e\"]
3"

check "'off' drops the triggers" \
  "$T
SELECT sqlitetriggers_change_feed('t');
SELECT sqlitetriggers_change_feed('t', 'off');
INSERT INTO t(v) VALUES ('a');
SELECT count(*) FROM swift_callback_log;
SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger';" \
  "3
0
0
0"

check "names that need quoting" \
  "CREATE TABLE \"we\"\"ird\"(\"sel'ect\" TEXT, \"a b\" INT);
SELECT sqlitetriggers_change_feed('we\"ird');
INSERT INTO \"we\"\"ird\" VALUES ('it''s', 1);
$LOG" \
  "3
1 sqlitetriggers.changes.we\"ird [\"insert\",1,\"it's\",1]"

check "INSERT OR REPLACE: the replaced row is reported only with recursive_triggers" \
  "$T
SELECT sqlitetriggers_change_feed('t');
INSERT INTO t(id, v) VALUES (1, 'a');
INSERT OR REPLACE INTO t(id, v) VALUES (1, 'b');
PRAGMA recursive_triggers = ON;
INSERT OR REPLACE INTO t(id, v) VALUES (1, 'c');
$LOG" \
  "3
1 sqlitetriggers.changes.t [\"insert\",1,1,\"a\",null]
2 sqlitetriggers.changes.t [\"insert\",1,1,\"b\",null]
3 sqlitetriggers.changes.t [\"delete\",1,1,\"b\",null]
4 sqlitetriggers.changes.t [\"insert\",1,1,\"c\",null]"

check "mistakes are errors that name the function" \
  "$T
SELECT sqlitetriggers_change_feed('nope');
SELECT sqlitetriggers_change_feed(NULL);
SELECT sqlitetriggers_change_feed('t', 'everything');
SELECT sqlitetriggers_change_feed('t', NULL);
CREATE VIEW v AS SELECT 1 AS x;
SELECT sqlitetriggers_change_feed('v');" \
  "Runtime error near line 3: sqlitetriggers_change_feed: no table \"nope\" in the main schema
Runtime error near line 4: sqlitetriggers_change_feed: expects a table name
Runtime error near line 5: sqlitetriggers_change_feed: MODE is 'rows', 'keys' or 'off'
Runtime error near line 6: sqlitetriggers_change_feed: MODE is 'rows', 'keys' or 'off'
Runtime error near line 8: sqlitetriggers_change_feed: no table \"v\" in the main schema"

check "direct-only: a view cannot call it" \
  "$T
CREATE VIEW install AS SELECT sqlitetriggers_change_feed('t');
SELECT * FROM install;" \
  "Parse error near line 4: unsafe use of sqlitetriggers_change_feed()"
