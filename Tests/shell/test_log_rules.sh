# RULES' WRITES (ext/log_rules.c): a persistent rule that stamps the row it
# fired on takes back the change its own UPDATE logged, so one write is one
# change in the durable log from every writer; and only that exact shape
# may name the log (a file's other triggers are refused, naming them).

# rules_plain SQL DB: the CLI without the extension.
rules_plain() { printf '%s\n' "$1" | "$SQLITE3" -batch "$2" 2>&1; }

# rules_python DB SQL...: Python's sqlite3 (no extension), each statement in
# autocommit.
rules_python() {
  python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
for s in sys.argv[2:]: db.execute(s)" "$@" 2>&1
}

# The rules as SQLiteTriggersGRDB renders them: an insert touch stamping
# both columns, its kept stamp, and an update touch.  $1: the table, $2:
# how the touch's UPDATE finds its row.
rules_sql() {
  cat <<EOF
CREATE TRIGGER "$1_insert_touch"
AFTER INSERT ON "$1"
FOR EACH ROW
WHEN "new"."createdAt" IS NULL
BEGIN
  UPDATE "$1"
  SET "createdAt" = coalesce("createdAt", strftime('%Y-%m-%d %H:%M:%f', 'now')), "updatedAt" = strftime('%Y-%m-%d %H:%M:%f', 'now')
  WHERE $2;
END;
CREATE TRIGGER "$1_insert_touch_kept"
AFTER UPDATE OF "createdAt" ON "$1"
FOR EACH ROW
WHEN ("new"."createdAt" IS NULL AND "old"."createdAt" IS NOT NULL)
BEGIN
  UPDATE "$1"
  SET "createdAt" = coalesce("new"."createdAt", "old"."createdAt")
  WHERE $2;
END;
CREATE TRIGGER "$1_update_touch"
AFTER UPDATE ON "$1"
FOR EACH ROW
WHEN "new"."updatedAt" IS "old"."updatedAt"
BEGIN
  UPDATE "$1"
  SET "updatedAt" = strftime('%Y-%m-%d %H:%M:%f', 'now')
  WHERE $2 AND ("updatedAt" IS NOT strftime('%Y-%m-%d %H:%M:%f', 'now'));
END;
EOF
}

RULES_REGISTRY="CREATE TABLE sqlitetriggers_rules(triggerName TEXT PRIMARY KEY NOT NULL, rule TEXT NOT NULL,
  tableName TEXT NOT NULL, sql TEXT NOT NULL) WITHOUT ROWID;"
RULES_REGISTER="INSERT INTO sqlitetriggers_rules SELECT name, name, tbl_name, sql FROM sqlite_schema
  WHERE type = 'trigger' AND name NOT LIKE 'sqlitetriggers%';"
RULES_STAMPED="SELECT count(*) FROM sqlite_schema WHERE type = 'trigger' AND sql LIKE '%UPDATE \"sqlitetriggers_log\" SET \"tableId\" = 0, \"kind\" = 0, \"rowKey\" = NULL WHERE changes() = 1%';"
RULES_REGISTERED_AS_IN_FILE="SELECT count(*) FROM sqlitetriggers_rules AS r JOIN sqlite_schema AS s ON s.name = r.triggerName AND s.sql = r.sql;"

# A file whose rules came first (the log's install rewrites them), with a
# rowid key, a text key and a composite key.
for key in rowid text composite; do
  case $key in
    rowid) table="CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, createdAt TEXT, updatedAt TEXT);"
           find='"rowid" = "new"."rowid"'; ins="INSERT INTO notes(id, title) VALUES";
           v1="(1, 'a')"; v2="(2, 'b')"; v3="(3, 'c')"; v4="(4, 'd')"; shown1=1; shown2=2; shown3=3; shown4=4 ;;
    text)  table="CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, createdAt TEXT, updatedAt TEXT);"
           find='"rowid" = "new"."rowid"'; ins="INSERT INTO notes(id, title) VALUES"
           v1="('k1', 'a')"; v2="('k2', 'b')"; v3="('k3', 'c')"; v4="('k4', 'd')"; shown1=k1; shown2=k2; shown3=k3; shown4=k4 ;;
    composite) table="CREATE TABLE notes(a TEXT NOT NULL, b INTEGER NOT NULL, title TEXT, createdAt TEXT, updatedAt TEXT, PRIMARY KEY(a, b)) WITHOUT ROWID;"
           find='"a" = "new"."a" AND "b" = "new"."b"'; ins="INSERT INTO notes(a, b, title) VALUES"
           v1="('x', 1, 'a')"; v2="('x', 2, 'b')"; v3="('x', 3, 'c')"; v4="('x', 4, 'd')"
           shown1='["x",1]'; shown2='["x",2]'; shown3='["x",3]'; shown4='["x",4]' ;;
  esac
  db=$(scratch_db)
  rules_plain "$table $RULES_REGISTRY $(rules_sql notes "$find") $RULES_REGISTER" "$db"
  check "$key key: installing the log adds the statement to the registry's rules, and the registry follows" \
    "SELECT sqlitetriggers_log_install('notes'); $RULES_STAMPED $RULES_REGISTERED_AS_IN_FILE SELECT sqlitetriggers_log_check();" "1
3
3
1" "$db"
  # Each writer: an insert, an edit, a save that blanks createdAt.
  writes() { echo "$ins $1; UPDATE notes SET title = 'e$2' WHERE title = '$2'; UPDATE notes SET createdAt = NULL WHERE title = 'e$2';"; }
  sql "$(writes "$v1" a)" "$db" >/dev/null
  rules_plain "$(writes "$v2" b)" "$db"
  rules_python "$db" "$ins $v3" "UPDATE notes SET title = 'ec' WHERE title = 'c'" "UPDATE notes SET createdAt = NULL WHERE title = 'ec'"
  rules_plain "PRAGMA recursive_triggers = ON; $(writes "$v4" d)" "$db"
  check "$key key: one change per write, from the shell with and without the extension, Python, recursive_triggers ON" \
    "SELECT rowKey, kind FROM sqlitetriggers_changes ORDER BY id;" "$shown1|insert
$shown1|update
$shown1|update
$shown2|insert
$shown2|update
$shown2|update
$shown3|insert
$shown3|update
$shown3|update
$shown4|insert
$shown4|update
$shown4|update" "$db"
  check "$key key: and every stamp was written" \
    "SELECT count(*) FROM notes WHERE createdAt GLOB '????-??-?? ??:??:??.???' AND updatedAt GLOB '????-??-?? ??:??:??.???';" "4" "$db"
  check "$key key: uninstalling the log gives the registry's rules their own text back" \
    "SELECT sqlitetriggers_log_uninstall('notes'); $RULES_STAMPED $RULES_REGISTERED_AS_IN_FILE" "1
0
3" "$db"
done

# The log first, then the rules: sqlitetriggers_log_rule_sql() is what an
# install of rules writes (SQLiteTriggersGRDB asks it).
db=$(scratch_db)
sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, createdAt TEXT, updatedAt TEXT); SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
check "sqlitetriggers_log_rule_sql() adds the statement to a rule of the shape on a logged table, and only there" \
  "SELECT sqlitetriggers_log_rule_sql('notes', 'CREATE TRIGGER \"s\"
AFTER UPDATE ON \"notes\"
BEGIN
  UPDATE \"notes\" SET title = 1 WHERE rowid = new.rowid;
END') = 'CREATE TRIGGER \"s\"
AFTER UPDATE ON \"notes\"
BEGIN
  UPDATE \"notes\" SET title = 1 WHERE rowid = new.rowid;
  UPDATE \"sqlitetriggers_log\" SET \"tableId\" = 0, \"kind\" = 0, \"rowKey\" = NULL WHERE changes() = 1 AND \"id\" = (SELECT max(\"id\") FROM \"sqlitetriggers_log\") AND \"kind\" = 2 AND \"tableId\" = 1 AND \"rowKey\" IS new.\"id\" COLLATE BINARY;
END';
SELECT sqlitetriggers_log_rule_sql('notes', 'CREATE TRIGGER s BEFORE UPDATE ON notes BEGIN UPDATE notes SET title = 1; END');
SELECT sqlitetriggers_log_rule_sql('notes', 'CREATE TRIGGER s AFTER UPDATE ON notes BEGIN UPDATE notes SET title = 1; SELECT 1; END');
SELECT sqlitetriggers_log_rule_sql('other', 'CREATE TRIGGER s AFTER UPDATE ON other BEGIN UPDATE other SET title = 1; END');" "1
CREATE TRIGGER s BEFORE UPDATE ON notes BEGIN UPDATE notes SET title = 1; END
CREATE TRIGGER s AFTER UPDATE ON notes BEGIN UPDATE notes SET title = 1; SELECT 1; END
CREATE TRIGGER s AFTER UPDATE ON other BEGIN UPDATE other SET title = 1; END" "$db"

# SAFETY.  Each trigger planted by a writer without the extension; the
# check refuses the file, naming it, unless it is exactly the shape.
UNLOG='UPDATE "sqlitetriggers_log" SET "tableId" = 0, "kind" = 0, "rowKey" = NULL WHERE changes() = 1 AND "id" = (SELECT max("id") FROM "sqlitetriggers_log") AND "kind" = 2 AND "tableId" = 1 AND "rowKey" IS new."id" COLLATE BINARY;'
# refused_shape WHAT TRIGGER-HEAD FIRST-STATEMENT [UNLOG [AFTER]]: planted
# by the CLI without the extension, the statement on its own line.
refused_shape() {
  local db actual
  db=$(scratch_db)
  sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT); CREATE TABLE other(id INTEGER PRIMARY KEY, title TEXT);
SELECT sqlitetriggers_log_install('notes'); SELECT sqlitetriggers_log_install('other');" "$db" >/dev/null
  rules_plain "CREATE TRIGGER \"h\" $2
BEGIN
  $3;
  ${4:-$UNLOG}
${5:-}END;" "$db"
  actual=$(sql "SELECT sqlitetriggers_log_check();" "$db")
  case $actual in
    *'"h"'*'is not the durable log'"'"'s'*'drop the trigger'*) pass "a file's trigger that takes back a change $1 is refused, named" ;;
    *) fail "a file's trigger that takes back a change $1 is refused, named" "an error naming \"h\"" "$actual" ;;
  esac
}
refused_shape "before the update" 'BEFORE UPDATE ON "notes"' 'UPDATE "notes" SET title = 1 WHERE rowid = new.rowid'
refused_shape "after another table's write" 'AFTER UPDATE ON "notes"' 'INSERT INTO other(title) VALUES (1)'
refused_shape "on another table" 'AFTER UPDATE ON "other"' 'UPDATE "other" SET title = 1 WHERE rowid = new.rowid'
refused_shape "after a delete" 'AFTER DELETE ON "notes"' 'UPDATE "notes" SET title = 1'
refused_shape "naming the log again" 'AFTER UPDATE ON "notes" WHEN (SELECT 1 FROM sqlitetriggers_log)' 'UPDATE "notes" SET title = 1 WHERE rowid = new.rowid'
refused_shape "of another key" 'AFTER UPDATE ON "notes"' 'UPDATE "notes" SET title = 1 WHERE rowid = new.rowid' "${UNLOG/new.\"id\"/new.\"id\" + 1}"
refused_shape "before another statement" 'AFTER UPDATE ON "notes"' 'UPDATE "notes" SET title = 1 WHERE rowid = new.rowid' "$UNLOG" '  SELECT 1;
'
refused_shape "after an upsert" 'AFTER UPDATE ON "notes"' 'INSERT INTO notes(id, title) VALUES (new.id + 1, 1) ON CONFLICT DO UPDATE SET title = 2'
refused_shape "of another kind" 'AFTER UPDATE ON "notes"' 'UPDATE "notes" SET title = 1 WHERE rowid = new.rowid' "${UNLOG/\"kind\" = 2/\"kind\" = 1}"

# The shape is harmless whoever wrote it: a change of another row that a
# rule's UPDATE makes is kept, and the change the rule fired on is logged.
db=$(scratch_db)
sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT); INSERT INTO notes VALUES (1, 'a'), (2, 'b');
SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
rules_plain "CREATE TRIGGER \"h\"
AFTER UPDATE OF title ON \"notes\"
WHEN new.id = 1
BEGIN
  UPDATE \"notes\" SET title = 'pulled' WHERE id = new.id + 1;
  $UNLOG
END;
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('c');
UPDATE notes SET title = 'edited' WHERE id = 1;" "$db"
check "a hand-written trigger of the shape is accepted, and the other row's change it makes is kept" \
  "SELECT sqlitetriggers_log_check(); SELECT rowKey, kind FROM sqlitetriggers_changes ORDER BY rowKey;" "1
1|update
2|update" "$db"

# A write that fails or is ignored leaves nothing; one that changes the key
# logs the deletion and the insert.
db=$(scratch_db)
rules_plain "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT UNIQUE, createdAt TEXT, updatedAt TEXT); $RULES_REGISTRY
$(rules_sql notes '"rowid" = "new"."rowid"') $RULES_REGISTER
CREATE TRIGGER refuse AFTER UPDATE ON notes WHEN new.title = 'bad' BEGIN SELECT RAISE(ABORT, 'refused'); END;" "$db"
check "a refused write and an ignored one leave no change; a new key is a deletion and an insert" \
  "SELECT sqlitetriggers_log_install('notes');
INSERT INTO notes(id, title) VALUES (1, 'a');
UPDATE notes SET title = 'bad' WHERE id = 1;
INSERT OR IGNORE INTO notes(id, title) VALUES (1, 'again');
UPDATE notes SET id = 5 WHERE id = 1;
SELECT rowKey, kind FROM sqlitetriggers_changes ORDER BY id;" "1
Runtime error near line 4: refused (19)
1|insert
1|delete
5|insert" "$db"

# A rule written on one line (a rule set may hold rules written as SQL):
# the statement goes on a line of its own, and comes out again.
db=$(scratch_db)
rules_plain "CREATE TABLE t(id INTEGER PRIMARY KEY, v, s); $RULES_REGISTRY
CREATE TRIGGER r AFTER INSERT ON t BEGIN UPDATE t SET s = 'x' WHERE rowid = new.rowid; END; $RULES_REGISTER" "$db"
check "a rule on one line is rewritten, checked, counted once, and given back" \
  "SELECT sqlitetriggers_log_install('t'); SELECT sqlitetriggers_log_check(); INSERT INTO t(v) VALUES (1);
SELECT rowKey, kind FROM sqlitetriggers_changes; SELECT sqlitetriggers_log_uninstall('t');
SELECT sql FROM sqlite_schema WHERE name = 'r'; $RULES_REGISTERED_AS_IN_FILE" "1
1
1|insert
1
CREATE TRIGGER r AFTER INSERT ON t BEGIN UPDATE t SET s = 'x' WHERE rowid = new.rowid; END
1" "$db"

# A rule's stored text with more after its END (planted with writable_schema:
# SQLite compiles only the first statement) is not the shape: installing
# and uninstalling run none of it, and nothing is rewritten.
db=$(scratch_db)
rules_plain "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, updatedAt TEXT); $RULES_REGISTRY
CREATE TRIGGER r AFTER UPDATE ON notes WHEN new.updatedAt IS old.updatedAt BEGIN
  UPDATE notes SET updatedAt = 1 WHERE id = new.id;
END;" "$db"
python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute('PRAGMA writable_schema = ON')
db.execute('''UPDATE sqlite_schema SET sql = sql || '; CREATE TEMP TABLE ran AS SELECT 1; CREATE TEMP TRIGGER decoy AFTER UPDATE ON notes BEGIN UPDATE notes SET updatedAt = 1 WHERE id = new.id; END' WHERE name = 'r' ''')
db.execute('PRAGMA writable_schema = OFF')
db.execute('''INSERT INTO sqlitetriggers_rules SELECT name, name, tbl_name, sql FROM sqlite_schema WHERE name = 'r' ''')" "$db"
check "a rule's text with a tail after its END is never run by the install or the uninstall, nor rewritten" \
  "SELECT sqlitetriggers_log_install('notes'); SELECT count(*) FROM temp.sqlite_schema WHERE name IN ('ran', 'decoy');
SELECT count(*) FROM sqlite_schema WHERE name = 'r' AND sql LIKE '%sqlitetriggers_log%';
SELECT sqlitetriggers_log_uninstall('notes'); SELECT count(*) FROM temp.sqlite_schema WHERE name IN ('ran', 'decoy');" "1
0
0
1
0" "$db"

# What stops a logged table's own trigger: an AFTER trigger's RAISE(FAIL)
# or RAISE(IGNORE) keeps the row and may skip the log's trigger of it (and
# a rule's statement could then take back the change that stood for it).
# The check refuses either, naming it and RAISE(ABORT); a BEFORE trigger's
# RAISE(IGNORE), which skips the row unwritten, is allowed.
for raise in "FAIL, 'empty'" IGNORE; do
  db=$(scratch_db)
  sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT); SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
  rules_plain "CREATE TRIGGER stop AFTER UPDATE ON notes WHEN new.title = '' BEGIN SELECT RAISE($raise); END;" "$db"
  actual=$(sql "SELECT sqlitetriggers_log_check();" "$db")
  case $actual in
    *'"stop" on "notes" stops a write with RAISE('"${raise%%,*}"')'*'RAISE(ABORT'*) pass "an AFTER trigger's RAISE(${raise%%,*}) on a logged table is refused, named" ;;
    *) fail "an AFTER trigger's RAISE(${raise%%,*}) on a logged table is refused, named" "an error naming \"stop\"" "$actual" ;;
  esac
done
db=$(scratch_db)
sql "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT); SELECT sqlitetriggers_log_install('notes');" "$db" >/dev/null
rules_plain "CREATE TRIGGER skip BEFORE UPDATE ON notes WHEN new.title = '' BEGIN SELECT RAISE(IGNORE); END;" "$db"
check "a BEFORE trigger's RAISE(IGNORE) on a logged table is allowed" "SELECT sqlitetriggers_log_check();" "1" "$db"

# A rule whose registry row no longer matches the file (RENAME COLUMN
# rewrites the trigger, not the registry) still loses the statement when
# the log is uninstalled: the file stays one the check and installs take.
db=$(scratch_db)
rules_plain "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, createdAt TEXT, updatedAt TEXT); CREATE TABLE b(id INTEGER PRIMARY KEY);
$RULES_REGISTRY $(rules_sql notes '"rowid" = "new"."rowid"') $RULES_REGISTER" "$db"
check "after a RENAME COLUMN, uninstalling still takes the statement out of every rule" \
  "SELECT sqlitetriggers_log_install('notes'); ALTER TABLE notes RENAME COLUMN updatedAt TO modifiedAt;
SELECT sqlitetriggers_log_check(); SELECT sqlitetriggers_log_uninstall('notes'); $RULES_STAMPED
SELECT sqlitetriggers_log_install('b'); SELECT sqlitetriggers_log_check();" "1
1
1
0
1
1" "$db"

# Beside the other write paths: REPLACE over the key, an upsert, a foreign
# key's SET NULL, and another table's trigger writing the row; each is one
# update or insert of its key (never the stamp's own), the key an integer,
# in either recursive_triggers mode (the Apple stage runs both).
db=$(scratch_db)
rules_plain "CREATE TABLE lists(id INTEGER PRIMARY KEY);
CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, list INTEGER REFERENCES lists(id) ON DELETE SET NULL, createdAt TEXT, updatedAt TEXT);
CREATE TABLE renames(note INTEGER, title TEXT);
CREATE TRIGGER renamed AFTER INSERT ON renames BEGIN UPDATE notes SET title = new.title WHERE id = new.note; END;
$RULES_REGISTRY $(rules_sql notes '"rowid" = "new"."rowid"') $RULES_REGISTER" "$db"
check "REPLACE, an upsert, a foreign key's action and another table's trigger: one change each, of the key, typed" \
  "PRAGMA foreign_keys = ON;
SELECT sqlitetriggers_log_install('notes');
INSERT INTO lists VALUES (7);
INSERT INTO notes(id, title, list) VALUES (1, 'a', 7), (2, 'b', 7);
INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('c');
INSERT OR REPLACE INTO notes(id, title) VALUES (1, 'replaced');
INSERT INTO notes(id, title) VALUES (2, 'x') ON CONFLICT(id) DO UPDATE SET title = excluded.title;
DELETE FROM lists;
INSERT INTO renames VALUES (1, 'renamed');
SELECT group_concat(kind || ' ' || rowKey || ' ' || typeof(rowKey), ', ') FROM (SELECT kind, rowKey FROM sqlitetriggers_changes
  WHERE id > (SELECT position FROM sqlitetriggers_log_consumers) AND kind <> 'delete' ORDER BY id);
SELECT count(*) FROM notes WHERE typeof(createdAt) = 'text' AND typeof(updatedAt) = 'text';" "1
insert 1 integer, update 2 integer, update 2 integer, update 1 integer
2" "$db"
