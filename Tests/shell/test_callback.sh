# swift_callback(): delivery follows the transaction exactly.  The log
# (swift_callback_log) holds what an after-commit observer receives.
# Each statement that may fail stands on its own line: after an error the
# sqlite3 CLI skips the rest of that line.

SCHEMA="CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE);
CREATE TEMP TRIGGER t_ai AFTER INSERT ON t BEGIN SELECT swift_callback('inserted', new.v); END;"
LOG="SELECT seq || ' ' || name || ' ' || args FROM swift_callback_log;"

check "an autocommit statement is its own transaction" \
  "$SCHEMA
INSERT INTO t(v) VALUES ('a');
$LOG" \
  "1 inserted [\"a\"]"

check "BEGIN/COMMIT: pending until the commit, logged after it" \
  "$SCHEMA
BEGIN;
INSERT INTO t(v) VALUES ('a'), ('b');
SELECT count(*) FROM swift_callback_log;
SELECT quote(seq), name, args FROM swift_callback_pending;
COMMIT;
$LOG
SELECT count(*) FROM swift_callback_pending;" \
  "0
NULL|inserted|[\"a\"]
NULL|inserted|[\"b\"]
1 inserted [\"a\"]
2 inserted [\"b\"]
0"

check "ROLLBACK drops the transaction's events" \
  "$SCHEMA
BEGIN;
INSERT INTO t(v) VALUES ('a');
ROLLBACK;
INSERT INTO t(v) VALUES ('b');
$LOG" \
  "1 inserted [\"b\"]"

check "a multi-row statement failing on its 3rd row drops its events, keeps the others" \
  "$SCHEMA
BEGIN;
INSERT INTO t(v) VALUES ('a');
INSERT INTO t(v) VALUES ('b'), ('c'), ('a');
INSERT INTO t(v) VALUES ('d');
COMMIT;
$LOG
SELECT group_concat(v) FROM t;" \
  "Runtime error near line 6: UNIQUE constraint failed: t.v (19)
1 inserted [\"a\"]
2 inserted [\"d\"]
a,d"

check "a multi-row failure outside BEGIN drops every event of the statement" \
  "$SCHEMA
INSERT INTO t(v) VALUES ('a');
INSERT INTO t(v) VALUES ('b'), ('c'), ('a');
$LOG" \
  "Runtime error near line 5: UNIQUE constraint failed: t.v (19)
1 inserted [\"a\"]"

RAISING="$SCHEMA
CREATE TEMP TRIGGER t_ai_refuse AFTER INSERT ON t WHEN new.v = 'bad'
  BEGIN SELECT RAISE(ABORT, 'bad value'); END;"
check "a RAISE(ABORT) after the callback drops its event, in and out of BEGIN" \
  "$RAISING
INSERT INTO t(v) VALUES ('bad');
BEGIN;
INSERT INTO t(v) VALUES ('a');
INSERT INTO t(v) VALUES ('bad');
COMMIT;
$LOG" \
  "Runtime error near line 6: bad value (19)
Runtime error near line 9: bad value (19)
1 inserted [\"a\"]"

check "nested savepoints: ROLLBACK TO drops exactly the events after the savepoint" \
  "$SCHEMA
BEGIN;
INSERT INTO t(v) VALUES ('1');
SAVEPOINT a;
INSERT INTO t(v) VALUES ('2');
SAVEPOINT b;
INSERT INTO t(v) VALUES ('3');
ROLLBACK TO b;
INSERT INTO t(v) VALUES ('4');
RELEASE b;
SAVEPOINT c;
INSERT INTO t(v) VALUES ('5');
RELEASE c;
ROLLBACK TO a;
INSERT INTO t(v) VALUES ('6');
RELEASE a;
COMMIT;
$LOG" \
  "1 inserted [\"1\"]
2 inserted [\"6\"]"

check "an outermost SAVEPOINT used as the transaction" \
  "$SCHEMA
SAVEPOINT s;
INSERT INTO t(v) VALUES ('1');
ROLLBACK TO s;
INSERT INTO t(v) VALUES ('2');
RELEASE s;
SAVEPOINT s;
INSERT INTO t(v) VALUES ('3');
ROLLBACK TO s;
ROLLBACK;
$LOG" \
  "1 inserted [\"2\"]"

check "a savepoint opened before the first event, rolled back to" \
  "$SCHEMA
BEGIN;
SAVEPOINT early;
SAVEPOINT later;
INSERT INTO t(v) VALUES ('1');
ROLLBACK TO early;
INSERT INTO t(v) VALUES ('2');
COMMIT;
$LOG" \
  "1 inserted [\"2\"]"

check "RAISE(ROLLBACK) drops the whole transaction's events" \
  "$SCHEMA
CREATE TEMP TRIGGER t_ai_rollback AFTER INSERT ON t WHEN new.v = 'abandon'
  BEGIN SELECT RAISE(ROLLBACK, 'abandoned'); END;
BEGIN;
INSERT INTO t(v) VALUES ('a');
INSERT INTO t(v) VALUES ('abandon');
COMMIT;
INSERT INTO t(v) VALUES ('b');
$LOG" \
  "Runtime error near line 8: abandoned (19)
Runtime error near line 9: cannot commit - no transaction is active
1 inserted [\"b\"]"

# A deferred foreign key makes COMMIT fail until the parent exists.
FK_SCHEMA="PRAGMA foreign_keys = ON;
CREATE TABLE parent(id INTEGER PRIMARY KEY);
CREATE TABLE child(id INTEGER PRIMARY KEY,
  parentID INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);
CREATE TEMP TRIGGER child_ai AFTER INSERT ON child BEGIN SELECT swift_callback('child', new.id); END;"
check "a failed COMMIT delivers nothing; a later successful one delivers once" \
  "$FK_SCHEMA
BEGIN;
INSERT INTO child VALUES (1, 7);
COMMIT;
SELECT count(*) FROM swift_callback_log;
INSERT INTO parent VALUES (7);
COMMIT;
$LOG" \
  "Runtime error near line 9: FOREIGN KEY constraint failed (19)
0
1 child [1]"

check "a failed COMMIT then ROLLBACK delivers nothing" \
  "$FK_SCHEMA
BEGIN;
INSERT INTO child VALUES (1, 7);
COMMIT;
ROLLBACK;
SELECT count(*) FROM swift_callback_log;" \
  "Runtime error near line 9: FOREIGN KEY constraint failed (19)
0"

check "top-level calls: at once outside BEGIN, with the transaction inside it" \
  "SELECT quote(swift_callback('direct', 1));
BEGIN;
SELECT swift_callback('inside', 2) IS NULL;
ROLLBACK;
BEGIN;
SELECT swift_callback('kept', 3) IS NULL;
COMMIT;
$LOG" \
  "NULL
1
1
1 direct [1]
2 kept [3]"

check "arguments of every type, as JSON; blobs tagged {\"blob\": hex}" \
  "SELECT swift_callback('types', 42, -1.5, 'quote \" backslash \\ tab	end', x'00ff10', NULL, 1e999, 'é');
SELECT args, json_valid(args) FROM swift_callback_log;
SELECT json_extract(args, '\$[2]') = 'quote \" backslash \\ tab	end' FROM swift_callback_log;" \
  "
[42,-1.5,\"quote \\\" backslash \\\\ tab\\tend\",{\"blob\":\"00ff10\"},null,9e999,\"é\"]|1
1"

check "a callback with no arguments after the name" \
  "SELECT swift_callback('bare');
$LOG" \
  "
1 bare []"

check "the name must be non-NULL text" \
  "SELECT swift_callback(NULL);
SELECT swift_callback(5);
SELECT swift_callback(x'41');
SELECT swift_callback();" \
  "Runtime error near line 2: swift_callback: the first argument must be the callback's name (text)
Runtime error near line 3: swift_callback: the first argument must be the callback's name (text)
Runtime error near line 4: swift_callback: the first argument must be the callback's name (text)
Runtime error near line 5: swift_callback: the first argument must be the callback's name (text)"

args126=$(seq -s, 1 126)
many=$(sql "SELECT swift_callback('many', $args126) IS NULL;
SELECT json_array_length(args) FROM swift_callback_log;
SELECT swift_callback('too many', $args126, 127);" | head -n 3)
# SQLite before 3.48 refuses a 128th argument to any function when it
# compiles the call; 3.48 raised that limit, and then swift_callback()
# refuses it itself when the call runs.
case "$(normalized "$many")" in
  "1
126
Parse error near line 4: too many arguments on function swift_callback" | "1
126
Runtime error near line 4: swift_callback: at most 126 arguments may follow the name" | "1
126
Error near line 4: swift_callback: at most 126 arguments may follow the name")
    pass "126 arguments after the name are accepted, 127 are not" ;;
  *) fail "126 arguments after the name are accepted, 127 are not" "1, 126, then either SQLite's or our refusal" "$many" ;;
esac

db=$(scratch_db)
check "a persistent trigger, view or default can never call it, whatever trusted_schema says" \
  "CREATE TABLE t(v);
CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN SELECT swift_callback('stored', new.v); END;
PRAGMA trusted_schema = ON;
INSERT INTO t VALUES (1);
PRAGMA trusted_schema = OFF;
INSERT INTO t VALUES (2);
CREATE VIEW v AS SELECT swift_callback('view');
SELECT * FROM v;
CREATE TABLE d(x DEFAULT (swift_callback('default')));
INSERT INTO d DEFAULT VALUES;
SELECT count(*) FROM swift_callback_log;" \
  "Parse error near line 5: unsafe use of swift_callback()
Parse error near line 7: unsafe use of swift_callback()
Parse error near line 9: unsafe use of swift_callback()
Parse error near line 11: unsafe use of swift_callback()
0" "$db"

db=$(scratch_db)
sql "CREATE TABLE t(v);" "$db" >/dev/null
check "a TEMP trigger on a table in the file may call it" \
  "CREATE TEMP TRIGGER t_ai AFTER INSERT ON main.t BEGIN SELECT swift_callback('temp trigger', new.v); END;
INSERT INTO main.t VALUES (3);
$LOG" \
  "1 temp trigger [3]" "$db"

check "swift_callback_pending is written by swift_callback() only, and is the only table of its module" \
  "INSERT INTO swift_callback_pending(name) VALUES ('forged');
CREATE VIRTUAL TABLE temp.other USING swift_callback_pending;" \
  "Runtime error near line 2: swift_callback_pending is read-only: swift_callback() records events
Runtime error near line 3: no such module: swift_callback_pending"

check "the log keeps the newest events up to its capacity" \
  "SELECT swift_callback_log_capacity();
SELECT swift_callback_log_capacity(3);
SELECT swift_callback('e', value) FROM generate_series(1, 5);
SELECT group_concat(seq) FROM swift_callback_log;
SELECT swift_callback_log_capacity(2);
SELECT group_concat(seq) FROM swift_callback_log;
SELECT swift_callback_log_capacity(-1);
SELECT swift_callback_log_capacity('x');" \
  "1000
3





3,4,5
2
4,5
Runtime error near line 8: swift_callback_log_capacity: the capacity must be an integer from 0 to 100000000
Runtime error near line 9: swift_callback_log_capacity: the capacity must be an integer from 0 to 100000000"

# A commit of more events than the log holds logs only its newest (the
# earlier ones would leave the log within the same commit).
check "a commit larger than the log leaves the newest events in it" \
  "SELECT swift_callback_log_capacity(3);
$SCHEMA
INSERT INTO t(v) VALUES ('a'), ('b');
$LOG
BEGIN;
INSERT INTO t(v) VALUES ('c'), ('d'), ('e'), ('f'), ('g');
COMMIT;
$LOG
INSERT INTO t(v) VALUES ('h');
$LOG" \
  "3
1 inserted [\"a\"]
2 inserted [\"b\"]
5 inserted [\"e\"]
6 inserted [\"f\"]
7 inserted [\"g\"]
6 inserted [\"f\"]
7 inserted [\"g\"]
8 inserted [\"h\"]"

check "a query_only connection gets a clear error" \
  "PRAGMA query_only = 1;
SELECT swift_callback('x');" \
  "Runtime error near line 3: swift_callback: cannot record an event on a read-only connection (PRAGMA query_only?) (8)"

# 1,000,000 events in one transaction: all delivered, in order, and the
# memory they held is given back once the log lets go of them.
check "1,000,000 events in one transaction are delivered in order" \
  "SELECT swift_callback_log_capacity(1000000);
CREATE TABLE big(n INTEGER);
CREATE TEMP TRIGGER big_ai AFTER INSERT ON big BEGIN SELECT swift_callback('n', new.n); END;
BEGIN;
INSERT INTO big SELECT value FROM generate_series(1, 1000000);
COMMIT;
SELECT count(*), min(seq), max(seq), sum(json_extract(args, '\$[0]') = seq) FROM swift_callback_log;" \
  "1000000
1000000|1|1000000|1000000"

# sqlite3's .stats reports SQLite's heap: the events, and the pages of the
# in-memory table.  The same run with a no-op trigger gives the baseline.
memory_after_million() {   # TRIGGER-BODY -> "PEAK NOW"
  sql "CREATE TABLE big(n INTEGER);
CREATE TEMP TRIGGER big_ai AFTER INSERT ON big BEGIN $1; END;
BEGIN;
INSERT INTO big SELECT value FROM generate_series(1, 1000000);
COMMIT;
SELECT swift_callback_log_capacity(0);
.stats on
SELECT 1;" | sed -nE 's/^Memory Used: +([0-9]+) \(max ([0-9]+)\) bytes$/\2 \1/p' | head -n 1
}
read -r base_peak base_now <<<"$(memory_after_million "SELECT abs(new.n)")"
read -r peak now <<<"$(memory_after_million "SELECT swift_callback('n', new.n)")"
per_event=$(( (peak - base_peak) / 1000000 ))
if [ "$per_event" -gt 0 ] && [ "$per_event" -lt 100 ] && [ $((now - base_now)) -lt 1000000 ]; then
  pass "1,000,000 pending events take under 100 bytes each, all freed after delivery"
else
  fail "1,000,000 pending events take under 100 bytes each, all freed after delivery" \
    "0 < bytes per event < 100, retained < 1000000" \
    "$per_event bytes per event, retained $((now - base_now))"
fi

check "a name with a NUL character is refused, not cut at the NUL" \
  "SELECT swift_callback('a' || char(0) || 'b');
SELECT count(*) FROM swift_callback_log;" \
  "Runtime error near line 2: swift_callback: the callback's name contains a NUL character
0"

ro_db=$(scratch_db)
"$SQLITE3" "$ro_db" "CREATE TABLE t(a)"
actual=$(printf '.load %s\nSELECT swift_callback(%s);\nSELECT count(*) FROM swift_callback_log;\n' \
  "$EXT" "'x'" | "$SQLITE3" -batch -readonly "$ro_db" 2>&1)
check_same "on a read-only connection swift_callback() fails instead of losing the event" \
  "$actual" \
  "Runtime error near line 2: swift_callback: cannot record an event on a read-only connection: events are delivered after commit, and it never commits (8)
0"

check "swift_callback_pending cannot be dropped, in or out of a transaction" \
  "$SCHEMA
DROP TABLE swift_callback_pending;
BEGIN;
INSERT INTO t(v) VALUES ('kept');
DROP TABLE swift_callback_pending;
ROLLBACK;
INSERT INTO t(v) VALUES ('after');
$LOG" \
  "Parse error near line 4: table swift_callback_pending may not be dropped
Parse error near line 7: table swift_callback_pending may not be dropped
1 inserted [\"after\"]"

check "loading again replaces the pending table" \
  "$SCHEMA
.load $EXT
INSERT INTO t(v) VALUES ('a');
$LOG" \
  "1 inserted [\"a\"]"

check "the app's counters: last_insert_rowid() and total_changes() are untouched" \
  "CREATE TABLE c(a);
INSERT INTO c VALUES (1), (2), (3);
SELECT swift_callback('direct');
SELECT last_insert_rowid(), total_changes(), changes();
CREATE TEMP TRIGGER c_ai AFTER INSERT ON c BEGIN SELECT swift_callback('fired'); END;
BEGIN;
INSERT INTO c VALUES (4), (5);
SELECT last_insert_rowid(), total_changes(), changes();
COMMIT;
SELECT group_concat(name) FROM swift_callback_log;" \
  "
3|3|0
5|5|2
direct,fired,fired"

check "query_only is checked when swift_callback() joins a transaction" \
  "$SCHEMA
BEGIN;
INSERT INTO t(v) VALUES ('before');
PRAGMA query_only = 1;
SELECT swift_callback('joined already') IS NULL;
COMMIT;
SELECT swift_callback('refused');
PRAGMA query_only = 0;
$LOG" \
  "1
Runtime error near line 9: swift_callback: cannot record an event on a read-only connection (PRAGMA query_only?) (8)
1 inserted [\"before\"]
2 joined already []"

check "the documented rule: a direct call in a statement that fails without a statement savepoint keeps its event" \
  "CREATE TABLE u(v TEXT UNIQUE);
INSERT INTO u VALUES ('taken');
BEGIN;
INSERT INTO u(v) VALUES (coalesce(swift_callback('direct', 'one-row insert'), '') || 'taken');
SELECT swift_callback('direct', 'select'), abs(-9223372036854775808);
COMMIT;
$LOG" \
  "Runtime error near line 5: UNIQUE constraint failed: u.v (19)
Runtime error near line 6: integer overflow
1 direct [\"one-row insert\"]
2 direct [\"select\"]"

check "with triggers on the table, the statement has a savepoint and drops the direct call's event" \
  "$SCHEMA
INSERT INTO t(v) VALUES ('taken');
BEGIN;
INSERT INTO t(v) VALUES (coalesce(swift_callback('direct', 'dropped'), '') || 'taken');
COMMIT;
$LOG" \
  "Runtime error near line 6: UNIQUE constraint failed: t.v (19)
1 inserted [\"taken\"]"

# Arguments' text is read in place, after SQLite converted a UTF-16
# database's to UTF-8 (callback_event.c, sqlitetriggers_arg_view_read).
for encoding in UTF-8 UTF-16le; do
db=$(scratch_db)
"$SQLITE3" "$db" "PRAGMA encoding = '$encoding'; CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
check "text arguments arrive as passed: a column, a literal, empty, an embedded NUL ($encoding database)" \
  "CREATE TEMP TRIGGER t_ai AFTER INSERT ON t BEGIN
  SELECT swift_callback('ins', new.v, 'héllo ✓', '', char(97, 0, 98), new.v || '!');
END;
INSERT INTO t(v) VALUES ('ÿes'), ('');
SELECT args FROM swift_callback_log;" \
  "[\"ÿes\",\"héllo ✓\",\"\",\"a\\u0000b\",\"ÿes!\"]
[\"\",\"héllo ✓\",\"\",\"a\\u0000b\",\"!\"]" "$db"
done

# Loading again inside a transaction (a helper that "makes sure the
# extension is loaded") keeps the transaction's state: its events, its
# exact and net feeds' changes, and the log's single stamp.  (The exact
# feed where the host gives extensions the preupdate hook.)
if [ "$(sql "CREATE TABLE probe(id INTEGER PRIMARY KEY); SELECT sqlitetriggers_change_feed('probe');")" = rows ]; then
  exact_feed="sqlitetriggers_change_feed('t', 'rows')"
  exact_events="sqlitetriggers.changes.t|[\"insert\",1,1,\"a\"]
added|[1]
sqlitetriggers.changes.t|[\"insert\",2,2,\"b\"]
added|[2]"
else
  exact_feed="'rows'"
  exact_events="added|[1]
added|[2]"
fi
check "loading again inside a transaction loses nothing of it" \
  "CREATE TABLE t(id INTEGER PRIMARY KEY, v);
CREATE TABLE n(id INTEGER PRIMARY KEY, v);
CREATE TABLE l(id INTEGER PRIMARY KEY, v);
CREATE TEMP TRIGGER r AFTER INSERT ON t BEGIN SELECT swift_callback('added', new.id); END;
SELECT $exact_feed, sqlitetriggers_change_feed('n', 'net'), sqlitetriggers_log_install('l');
BEGIN;
INSERT INTO t VALUES (1, 'a'); INSERT INTO n VALUES (1, 'a'); INSERT INTO l VALUES (1, 'a');
.load $EXT
INSERT INTO t VALUES (2, 'b'); INSERT INTO n VALUES (2, 'b'); INSERT INTO l VALUES (2, 'b');
COMMIT;
SELECT name, args FROM swift_callback_log ORDER BY seq;
SELECT count(DISTINCT tx), count(*), min(tx) IS NOT NULL FROM sqlitetriggers_log;" \
  "rows|net|1
$exact_events
sqlitetriggers.changes.n|[\"insert\",1,1,\"a\"]
sqlitetriggers.changes.n|[\"insert\",2,2,\"b\"]
1|2|1"
