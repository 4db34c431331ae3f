# An app update carries the user's file (ext/log_upgrade.c): files written
# by the previous release, 5eb194a (durable log of format 1), upgraded by
# this one.  The previous release's library is built from git at test time
# (build/format1-5eb194a/), never kept in the tree; every fixture is made
# by it here.

upg_rev=5eb194a
upg_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
UPG_OLD=$(previous_release "$upg_rev" format1)

# old_sql SCRIPT DB: SCRIPT through the previous release's library.
old_sql() {
  printf '.load %s\n%s\n' "$UPG_OLD" "$1" | "$SQLITE3" -batch "$2" 2>&1
}
# awk without the sanitizer stage's preloaded ASan runtime, which flags
# mawk's own reads.
upg_awk() { env -u LD_PRELOAD awk "$@"; }
# plain_sql SCRIPT DB: a writer without the extension.
plain_sql() {
  printf '%s\n' "$1" | "$SQLITE3" -batch "$2" 2>&1
}

if [ ! -e "$UPG_OLD.so" ]; then
  fail "the previous release's library builds from git (git archive $upg_rev ext)" "built" "not built"
else

# A file of format 1: WAL; a composite key holding REALs (1,362 doubles
# above 1e120, of which SQLite 3.40's printf() misprints 6; +-DBL_MAX; the
# infinities; a subnormal; -0.0), beside blobs, texts and integers; a
# WITHOUT ROWID one; a text-keyed rowid table; an integer-keyed one; a
# consumer; a row inserted and deleted before the update, and rows
# deleted since.
UPG_SCHEMA="CREATE TABLE c(a NOT NULL, b NOT NULL, v, PRIMARY KEY(a, b));
CREATE TABLE t(id TEXT PRIMARY KEY NOT NULL, v);
CREATE TABLE w(k REAL NOT NULL, s TEXT NOT NULL, PRIMARY KEY(k, s)) WITHOUT ROWID;
CREATE TABLE n(id INTEGER PRIMARY KEY, v);"
UPG_ROWS="INSERT INTO c SELECT v, i, 'seq' FROM (WITH RECURSIVE s(i, v) AS (SELECT 0, 1.0e120
  UNION ALL SELECT i + 1, v * 1.37 FROM s WHERE v < 1e306) SELECT i, v FROM s);
INSERT INTO c VALUES (1.5, 'x', 1), (1.7976931348623157e308, X'00ff', 2),
  (-1.7976931348623157e308, 3, 3), (9e999, 'inf', 4), (-9e999, 'ninf', 5),
  (0.1, 2.5e-310, 6), (-0.0, 1e200, 7), ('t\"q''', 1.0, 8), (X'', 4.9e-324, 9);
INSERT INTO w VALUES (0.3, 'a'), (1.7976931348623157e308, 'max'), (9e999, 'inf');
INSERT INTO t VALUES ('k1', 1), ('k2', 2);
INSERT INTO n(v) VALUES ('one');
INSERT INTO c VALUES (2.5, 'again', 0), (1.7976931348623157e308, 'again', 0);
DELETE FROM c WHERE b = 'again';
INSERT INTO c VALUES (1.1, 'gone', 0);
DELETE FROM c WHERE b = 'gone';"
upg_format1() {
  old_sql "PRAGMA journal_mode = WAL;
$UPG_SCHEMA
SELECT sqlitetriggers_log_install('c'), sqlitetriggers_log_install('t'),
       sqlitetriggers_log_install('w'), sqlitetriggers_log_install('n');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');
$UPG_ROWS" "$1" >/dev/null
}

# Every composite key format 1 logged, against format 2's text for the
# same row: the deletions format 2's triggers log once its tables are
# installed and every row is deleted (those deleted before, inserted
# again first).
UPG_SAME_KEYS="CREATE TEMP TABLE before AS SELECT id, tableId, rowKey FROM sqlitetriggers_log WHERE tableId IN (1, 3);
SELECT sqlitetriggers_log_install('c'), sqlitetriggers_log_install('w');
INSERT INTO c VALUES (2.5, 'again', 0), (1.7976931348623157e308, 'again', 0), (1.1, 'gone', 0);
DELETE FROM c; DELETE FROM w;
SELECT count(*), sum(json_valid(rowKey)), sum(rowKey IN (SELECT d.rowKey FROM sqlitetriggers_log AS d
  WHERE d.kind = 3 AND d.tableId = b.tableId AND d.id > (SELECT max(id) FROM temp.before)))
  FROM temp.before AS b;"
UPG_FORMAT1_COUNT=1380   # c: 1,362 + 9 + 2 + 2 + 1 + 1 changes; w: 3

db=$(scratch_db)
upg_format1 "$db"
check_same "the fixture is a log of format 1 whose REAL keys are decimal text, Inf among them" \
  "$(plain_sql "SELECT formatVersion FROM sqlitetriggers_log_meta;
SELECT count(*) FROM sqlitetriggers_log WHERE tableId IN (1, 3);
SELECT rowKey FROM sqlitetriggers_log WHERE rowKey LIKE '[Inf,%' OR rowKey LIKE '[9.0e+999,%' LIMIT 1;" "$db" |
  sed 's/^\[9\.0e+999,/[Inf,/')" "1
$UPG_FORMAT1_COUNT
[Inf,\"inf\"]"

check "installing any table rewrites every REAL of format 1's keys as format 2 writes that row's key" \
  "SELECT sqlitetriggers_log_install('n');
$UPG_SAME_KEYS" "4
1|3
$UPG_FORMAT1_COUNT|$UPG_FORMAT1_COUNT|$UPG_FORMAT1_COUNT" "$db"

db=$(scratch_db)
upg_format1 "$db"
check "blobs, texts and integers are kept byte for byte; each REAL becomes {\"real\":[M,E]}" \
  "SELECT sqlitetriggers_log_install('n');
SELECT rowKey FROM sqlitetriggers_log WHERE tableId = 1 AND id > 1362 AND kind = 1 ORDER BY id;" "4
[{\"real\":[6755399441055744,-52]},\"x\"]
[{\"real\":[9007199254740991,971]},{\"blob\":\"00ff\"}]
[{\"real\":[-9007199254740991,971]},3]
[{\"real\":[1,1024]},\"inf\"]
[{\"real\":[-1,1024]},\"ninf\"]
[{\"real\":[7205759403792794,-56]},{\"real\":[50600563326828,-1074]}]
[{\"real\":[0,0]},{\"real\":[5883593420661338,612]}]
[\"t\\\"q'\",{\"real\":[4503599627370496,-52]}]
[{\"blob\":\"\"},{\"real\":[1,-1074]}]
[{\"real\":[5629499534213120,-51]},\"again\"]
[{\"real\":[9007199254740991,971]},\"again\"]
[{\"real\":[4953959590107546,-52]},\"gone\"]" "$db"

# 11: a row inserted and deleted before the update and inserted again
# after it has one key text, so folding its changes by key (what a net
# batch does) gives one insertion, not an update then an insertion.
check "a row deleted before the update and inserted again after it keeps one key text across it" \
  "SELECT sqlitetriggers_log_install('c');
INSERT INTO c VALUES (2.5, 'again', 0), (1.7976931348623157e308, 'again', 0);
SELECT count(DISTINCT rowKey), group_concat(kind) FROM (SELECT rowKey, kind FROM sqlitetriggers_log
  WHERE tableId = 1 AND rowKey LIKE '%\"again\"]' ORDER BY id) GROUP BY rowKey LIKE '%-51]%';" "1
1|1,3,1
1|1,3,1" "$db"

# A partial re-install: the tables not installed again keep format 1's
# triggers, which go on writing decimal text (here by the previous
# release and by a writer without the extension); installing each
# rewrites what they wrote, and the check says what is true meanwhile.
db=$(scratch_db)
upg_format1 "$db"
sql "SELECT sqlitetriggers_log_install('n');" "$db" >/dev/null
old_sql "INSERT INTO c VALUES (0.7, 'old library', 0), (9e999, 'old library', 0);" "$db"
plain_sql "INSERT INTO c VALUES (0.7, 'no library', 0), (1.7976931348623157e308, 'no library', 0);
INSERT INTO w VALUES (0.7, 'no library');" "$db"
check "after a partial re-install the check says a composite-keyed table's triggers are format 1's, and what they do not do" \
  "SELECT sqlitetriggers_log_check();" \
  "Runtime error near line 2: sqlitetriggers_log_check: the log of \"c\" has the triggers of an earlier SQLiteTriggers (format 1), not installed again since this file's log was upgraded: they log every insert, update and delete, but write a REAL of the key as decimal text, which may find no row: call sqlitetriggers_log_install('c')" "$db"
check "a text-keyed table's format 1 triggers log its changes: the check says only the rowid's REPLACE is not logged yet" \
  "SELECT sqlitetriggers_log_install('c');
SELECT sqlitetriggers_log_check();" \
  "1
Runtime error near line 3: sqlitetriggers_log_check: the log of \"t\" has the triggers of an earlier SQLiteTriggers (format 1), not installed again since this file's log was upgraded: they log every insert, update and delete, but not yet every row an INSERT OR REPLACE deletes through the rowid: call sqlitetriggers_log_install('t')" "$db"
check "so does a WITHOUT ROWID table's; installed again, every table passes" \
  "SELECT sqlitetriggers_log_install('t');
SELECT sqlitetriggers_log_check();
SELECT sqlitetriggers_log_install('w');
SELECT sqlitetriggers_log_check();" \
  "2
Runtime error near line 3: sqlitetriggers_log_check: the log of \"w\" has the triggers of an earlier SQLiteTriggers (format 1), not installed again since this file's log was upgraded: they log every insert, update and delete, but write a REAL of the key as decimal text, which may find no row: call sqlitetriggers_log_install('w')
3
4" "$db"
check "what format 1's triggers wrote after the partial re-install is rewritten when its table is installed" \
  "$UPG_SAME_KEYS" "1|3
$((UPG_FORMAT1_COUNT + 5))|$((UPG_FORMAT1_COUNT + 5))|$((UPG_FORMAT1_COUNT + 5))" "$db"
check "a missing insert trigger is the one case whose changes were not logged" \
  "DROP TRIGGER sqlitetriggers_log_2_insert;
SELECT sqlitetriggers_log_check();" \
  "Runtime error near line 3: sqlitetriggers_log_check: the log of \"t\" is missing its insert trigger (the table recreated by a migration, or the trigger dropped?): call sqlitetriggers_log_install('t'); changes made since were not logged" "$db"

# 12: what the previous release's reader runs on a file of this format (3).  Its
# sqlitetriggers_log_check() (which its observations run first) and its
# install refuse the file; its durableBatch() reads sqlitetriggers_log
# and sqlitetriggers_log_tables directly, checks no format, and decodes a
# key's members with json_each(): a REAL, {"real":[M,E]}, is an object
# without "blob", which it takes as NULL.  Nothing in the file fails those
# statements without failing the documented tables' plain-SQL readers, so
# CHANGELOG.md says what an app must do before it lets users downgrade.
db=$(scratch_db)
sql "CREATE TABLE c(a NOT NULL, b NOT NULL, PRIMARY KEY(a, b));
SELECT sqlitetriggers_log_install('c');
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');
INSERT INTO c VALUES (1.5, 'x');" "$db" >/dev/null
check_same "the previous release's check and install refuse a log of this format, loudly" \
  "$(old_sql "SELECT sqlitetriggers_log_check();" "$db"; old_sql "SELECT sqlitetriggers_log_install('c');" "$db")" \
  "Runtime error near line 2: sqlitetriggers_log_check: \"sqlitetriggers_log\" exists in this file with another definition (not this version's log, or not a log at all): rename or drop it first
Runtime error near line 2: sqlitetriggers_log_install: \"sqlitetriggers_log\" exists in this file with another definition (not this version's log, or not a log at all): rename or drop it first"
# Its durableBatch()'s statements, as that commit's DurableLog.swift has them.
upg_swift=$(git -C "$upg_root" show "$upg_rev:Sources/SQLiteTriggersGRDB/DurableLog/DurableLog.swift")
upg_changes=$(upg_awk '/let changes = """/{on=1; next} on && /"""/{exit} on' <<<"$upg_swift")
upg_key=$(upg_awk '/static func key\(_ stored/{f=1} f && /sql: """/{on=1; next} on && /"""/{exit} on' <<<"$upg_swift")
check_same "the previous release's durableBatch reads a log of this format without refusing, and a REAL of a key as NULL" \
  "$(old_sql ".parameter set ?1 0
.parameter set ?2 256
$upg_changes ORDER BY l.id LIMIT ?;
.parameter clear
.parameter set ?1 '[{\"real\":[6755399441055744,-52]},\"x\"]'
$upg_key;" "$db" | sed -E 's/\|[0-9]{6,}\|/|TX|/')" "1|1|c|1|[{\"real\":[6755399441055744,-52]},\"x\"]|TX|[\"a\",\"b\"]
{\"real\":[6755399441055744,-52]}||object
x||text"
check_same "CHANGELOG.md says what an app must do before it lets users downgrade to a reader of format 1" \
  "$(upg_awk '/^## Unreleased/{on=1; next} /^## /{on=0} on' "$upg_root/CHANGELOG.md" | tr '\n' ' ' |
     grep -c 'before it lets users downgrade')" "1"

# SIGKILL anywhere in the re-install leaves format 1 whole or format 3
# complete: it is one transaction.  A log of 50,000 REAL keys; the
# re-install timed once, then killed at seven points through it.
db=$(scratch_db)
old_sql "PRAGMA journal_mode = WAL;
$UPG_SCHEMA
SELECT sqlitetriggers_log_install('c'), sqlitetriggers_log_install('n');
INSERT INTO c SELECT i * 1.37e120, i, 0 FROM (WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1
  FROM s WHERE i < 50000) SELECT i FROM s);" "$db" >/dev/null
for upg_file in "$db" "$db-wal"; do [ -e "$upg_file" ] && cp "$upg_file" "$upg_file.format1"; done
upg_log="SELECT id, tableId, kind, rowKey FROM sqlitetriggers_log ORDER BY id;"
upg_before=$(plain_sql "$upg_log" "$db")
upg_restore() {
  rm -f "$db" "$db-wal" "$db-shm"
  for upg_file in "$db" "$db-wal"; do [ -e "$upg_file.format1" ] && cp "$upg_file.format1" "$upg_file"; done
}
# The re-install, run as the sqlite3 process itself (so that $! is its pid).
upg_install=(-batch -cmd ".load $EXT" "$db" "SELECT sqlitetriggers_log_install('n');")
upg_state() {   # 1: format 1 as it was; 3: format 3 complete; x: neither
  case $(plain_sql "SELECT formatVersion FROM sqlitetriggers_log_meta;" "$db") in
    1) [ "$(plain_sql "$upg_log" "$db")" = "$upg_before" ] &&
       [ "$(plain_sql "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlitetriggers%';" "$db")" = 16 ] &&
       echo 1 || echo x ;;
    3) [ "$(plain_sql "SELECT count(*) FROM sqlitetriggers_changes WHERE rowKey LIKE '[{\"real\":[%';" "$db")" = 50000 ] &&
       echo 3 || echo x ;;
    *) echo x ;;
  esac
}
upg_restore
upg_start=$(date +%s%N); "$SQLITE3" "${upg_install[@]}" >/dev/null 2>&1; upg_ns=$(( $(date +%s%N) - upg_start ))
upg_states=$(upg_state)
for upg_eighth in 1 2 3 4 5 6 7; do
  upg_restore
  "$SQLITE3" "${upg_install[@]}" >/dev/null 2>&1 &
  upg_pid=$!
  sleep "$(upg_awk -v ns="$upg_ns" -v k="$upg_eighth" 'BEGIN { printf "%.4f", ns * k / 8 / 1e9 }')"
  kill -9 "$upg_pid" 2>/dev/null
  wait "$upg_pid" 2>/dev/null
  upg_states="$upg_states$(upg_state)"
done
[ -n "${VERBOSE:-}" ] && echo "     (the re-install took $((upg_ns / 1000000)) ms; states after the kills: ${upg_states#?})"
check_same "a SIGKILL at seven points of the re-install leaves format 1 whole or format 3 complete" \
  "$(tr -d 13 <<<"$upg_states")" ""
check_same "and the re-install not killed leaves format 3" "${upg_states:0:1}" "3"

fi
