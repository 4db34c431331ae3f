# A database file must never reach swift_callback(), the test controls, or
# the installers and capture of the change feeds and the durable log,
# whatever its schema does and whatever the order of reading the schema,
# attaching and loading.  Each hostile file is made with writable_schema,
# as an attacker would; the function must not take effect, and the failure
# must say so.

# hostile_db KIND CALL: a file with one object of KIND whose SQL calls CALL,
# where COL stands for column a (a DEFAULT, which cannot name a column,
# gets 1).
hostile_db() {
  local db placeholder='abs(a)' ddl call=${2//COL/a}
  db=$(scratch_db)
  case $1 in
    view)             ddl="CREATE TABLE t(a); CREATE VIEW v AS SELECT $placeholder FROM t;" ;;
    trigger)          ddl="CREATE TABLE t(a); CREATE TABLE x(a);
                       CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO x SELECT $placeholder FROM t; END;" ;;
    default)          ddl="CREATE TABLE t(a, b DEFAULT (abs(1)));"; placeholder='abs(1)'; call=${2//COL/1} ;;
    check)            ddl="CREATE TABLE t(a CHECK ($placeholder IS NOT 'x'));" ;;
    generated)        ddl="CREATE TABLE t(a, b AS ($placeholder));" ;;
    expression-index) ddl="CREATE TABLE t(a); CREATE INDEX ix ON t($placeholder);" ;;
    partial-index)    ddl="CREATE TABLE t(a); CREATE INDEX px ON t(a) WHERE $placeholder IS NOT 'x';" ;;
  esac
  "$SQLITE3" "$db" "$ddl
    PRAGMA writable_schema = ON;
    UPDATE sqlite_schema SET sql = replace(sql, '$placeholder', '${call//\'/\'\'}')
      WHERE sql LIKE '%abs(%';"
  echo "$db"
}

# What each object needs to run: reading it and writing through it.
TOUCH="INSERT INTO DB.t(a) VALUES (1);
SELECT count(*) >= 0 FROM DB.t;
SELECT count(*) >= 0 FROM DB.v;"

# The connection's own tables: notes has a durable log and, where the host
# gives extensions the preupdate hook (not apsw's wheels), a change feed;
# other has neither.
FEED_ON_NOTES=""
FEED_EFFECT=""
FEED_UNCHANGED=""
if [ "$(sql "CREATE TABLE probe(id INTEGER PRIMARY KEY); SELECT sqlitetriggers_change_feed('probe');")" = 3 ]; then
  FEED_ON_NOTES="SELECT sqlitetriggers_change_feed('notes');"
  FEED_EFFECT="SELECT 'feed: ' || ifnull(sqlitetriggers_change_feed_mode('notes'), 'off');"
  FEED_UNCHANGED="
feed: rows"
fi
OWN="CREATE TABLE notes(id INTEGER PRIMARY KEY, body); CREATE TABLE other(id INTEGER PRIMARY KEY);
$FEED_ON_NOTES SELECT sqlitetriggers_log_install('notes');"

# Whether a guarded function took effect, on this connection.
EFFECTS="SELECT 'events logged: ' || count(*) FROM swift_callback_log;
SELECT 'log capacity: ' || swift_callback_log_capacity();
SELECT 'clock pinned: ' || (datetime_subsec() < '2010');
SELECT 'seeded: ' || (uuid() = '5d2d08f0-a14e-4f5e-b06c-5cfe32938cfa');
$FEED_EFFECT
SELECT 'log triggers: ' || count(*) FROM main.sqlite_schema WHERE name GLOB 'sqlitetriggers_log_[0-9]*';
SELECT 'origins: ' || count(*) FROM main.sqlitetriggers_log_origins;"
NO_EFFECTS="events logged: 0
log capacity: 1000
clock pinned: 0
seeded: 0$FEED_UNCHANGED
log triggers: 3
origins: 0"

# With the hostile file as main, the app's own installs are refused too,
# and so is reading the capacity: what is left to look at.
EFFECTS_MAIN="SELECT 'events logged: ' || count(*) FROM swift_callback_log;
SELECT 'clock pinned: ' || (datetime_subsec() < '2010');
SELECT 'seeded: ' || (uuid() = '5d2d08f0-a14e-4f5e-b06c-5cfe32938cfa');
SELECT 'feed: ' || ifnull(sqlitetriggers_change_feed_mode('notes'), 'off');
SELECT 'log triggers: ' || count(*) FROM main.sqlite_schema WHERE name GLOB 'sqlitetriggers_log_[0-9]*';"
NO_EFFECTS_MAIN="events logged: 0
clock pinned: 0
seeded: 0
feed: off
log triggers: 0"

# expect_refused_without_effect NAME OUT OBJECT FN SPELLED: OUT (a run that
# touched a hostile file attached as h, then printed $EFFECTS) shows the
# refusal of OBJECT (a glob: "*" for any) calling FN (or SQLite's own,
# naming the function as SPELLED), and ends with $NO_EFFECTS.
expect_refused_without_effect() {
  local name=$1 out=$2 object=$3 fn=$4 spelled=$5 tail
  tail=$(echo "$out" | tail -n "$(echo "$NO_EFFECTS" | wc -l)")
  if [ "$tail" == "$NO_EFFECTS" ] &&
     { [[ $out == *"refused: "$object" in database \"h\" calls $fn();"* ]] ||
       [[ $out == *"unsafe use of $spelled()"* ]] ||
       [[ $out == *"$fn: called by an expression, not by the app"* ]] ||
       [[ $out == *"non-deterministic functions prohibited"* ]]; }; then
    pass "$name"
  else
    fail "$name" "a refusal naming $object or the unsafe use of $spelled(), then $NO_EFFECTS" "$out"
  fi
}

# The calls a file might make, one per guarded function.
CALLS=("swift_callback('evil', COL)"
       "swift_callback_log_capacity(0 * COL)"
       "sqlitetriggers_pin_clock('2000-01-01', '+' || COL || ' seconds')"
       "sqlitetriggers_seed_random(41 + COL)"
       "sqlitetriggers_change_feed('notes', 'off' || substr(COL, 1, 0))"
       "sqlitetriggers_change_capture('notes', 'rows', 'insert' || substr(COL, 1, 0))"
       "sqlitetriggers_log_install('other' || substr(COL, 1, 0))"
       "sqlitetriggers_log_uninstall('notes' || substr(COL, 1, 0))"
       "sqlitetriggers_log_origin('server' || substr(COL, 1, 0))")

for kind in view trigger default check generated expression-index partial-index; do
  for call in "${CALLS[@]}"; do
    fn=${call%%(*}
    for trusted in ON OFF; do
      db=$(hostile_db "$kind" "$call")
      for order in read-then-load load-then-read; do
        # The file as main: loading reads nothing and succeeds; every call
        # of a guarded function, the file's and the app's own, is refused
        # while the file is open, naming the object, and nothing takes
        # effect.  read-then-load: SQLite parsed the schema before the
        # functions existed, and accepted the unknown names in it.
        pre=""; [ $order = read-then-load ] && pre="SELECT count(*) FROM sqlite_schema;"
        out=$(printf '%s\nPRAGMA trusted_schema = %s;\n.load %s\n%s\n%s\n%s\n' "$pre" "$trusted" "$EXT" \
                "CREATE TABLE notes(id INTEGER PRIMARY KEY, body); $FEED_ON_NOTES SELECT sqlitetriggers_log_install('notes');" \
                "${TOUCH//DB/main}" "$EFFECTS_MAIN" | "$SQLITE3" -batch "$db" 2>&1)
        # Where SQLite parses the schema after loading, it refuses the file
        # itself (malformed schema): no statement runs, and so no effect.
        if [[ $out != *"error during initialization"* ]] &&
           { [[ $out == *"refused: "*" in database \"main\" calls $fn();"* ]] ||
             [[ $out == *"$fn: called by an expression, not by the app"* ]] ||
             [[ $out == *"unsafe use of $fn()"* ]] ||
             [[ $out == *"non-deterministic functions prohibited"* ]]; } &&
           [[ $out == *"clock pinned: 0"*"seeded: 0"* ]] &&
           ! echo "$out" | grep -qE '^(events logged: [1-9]|feed: (rows|net|keys)|log triggers: [1-9])'; then
          pass "main $kind $fn $trusted $order"
        else
          fail "main $kind $fn trusted_schema=$trusted $order: loads, then every guarded call is refused" \
            "no initialization error, a refusal naming the object, then $NO_EFFECTS_MAIN" "$out"
        fi
      done
      # The file attached after loading: every call from it is refused, and
      # nothing takes effect.
      out=$(sql "$OWN
PRAGMA trusted_schema = $trusted;
ATTACH '$db' AS h;
${TOUCH//DB/h}
DETACH h;
$EFFECTS")
      expect_refused_without_effect "attached after .load: $kind calling $fn(), trusted_schema=$trusted" \
        "$out" "*" "$fn" "$fn"
    done
  done
done

for spelled in '"swift_callback"(a)' '[SWIFT_CALLBACK] /* c */ (a)' '`swift_callback`
(a)'; do
  db=$(hostile_db expression-index "$spelled")
  out=$(printf 'SELECT count(*) FROM sqlite_schema;\n.load %s\nSELECT swift_callback_log_capacity();\n' "$EXT" |
        "$SQLITE3" -batch "$db" 2>&1)
  check_same "a quoted name in an index is still refused: $spelled" \
    "$(echo "$out" | grep -o 'index "ix" in database "main" calls swift_callback()')" \
    'index "ix" in database "main" calls swift_callback()'
done

# Names in strings and comments, and columns of that name, are not calls.
db=$(scratch_db)
"$SQLITE3" "$db" "CREATE TABLE t(swift_callback TEXT DEFAULT 'swift_callback(1)'
  /* swift_callback(2) */ CHECK (swift_callback <> 'sqlitetriggers_pin_clock()'));
  CREATE INDEX ix ON t(swift_callback);"
check "a column named swift_callback and the name in strings and comments are harmless" \
  "INSERT INTO t DEFAULT VALUES;
SELECT swift_callback FROM t;
SELECT swift_callback('direct') IS NULL;" \
  "swift_callback(1)
1" "$db"

check "the app's own TEMP triggers and views may call the guarded functions" \
  "CREATE TABLE t(a);
CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT swift_callback('ok', new.a); END;
CREATE TEMP VIEW v AS SELECT sqlitetriggers_seed_random(7) AS s;
INSERT INTO t VALUES (1);
SELECT * FROM v;
SELECT name, args FROM swift_callback_log;" \
  "7
ok|[1]"

# A table or view named like one of ours would hide it: SQLite finds
# schema objects before eponymous virtual tables, and a change feed would
# decode the file's rows as events.
db=$(scratch_db)
"$SQLITE3" "$db" "CREATE TABLE Swift_Callback_Batch(seq, name, argc, arg1);
  INSERT INTO Swift_Callback_Batch VALUES (1, 'x', 1, 'forged');"
check "a file whose table hides swift_callback_batch loads, and every guarded call is refused, naming the table" \
  "SELECT 1;
SELECT swift_callback('x');
SELECT count(*) FROM swift_callback_log;" \
  "1
Runtime error near line 3: swift_callback: refused: table \"Swift_Callback_Batch\" in database \"main\" hides the extension's own swift_callback_batch table (rename or drop it)
0" "$db"
db=$(scratch_db)
"$SQLITE3" "$db" "CREATE TABLE swift_callback_pending(seq, name, args);"
check "a file whose table hides swift_callback_pending: swift_callback refuses, naming it" \
  "SELECT swift_callback('x');" \
  "Runtime error near line 2: swift_callback: refused: table \"swift_callback_pending\" in database \"main\" hides the extension's own swift_callback_pending table (rename or drop it)" "$db"

check "a TEMP view hiding swift_callback_log stops swift_callback, naming it" \
  "CREATE TEMP VIEW swift_callback_log AS SELECT 1 AS seq, 'forged' AS name, '[]' AS args;
SELECT swift_callback('x');" \
  "Runtime error near line 3: swift_callback: refused: view \"swift_callback_log\" in database \"temp\" hides the extension's own swift_callback_log table (rename or drop it)"

check "an index named swift_callback_batch hides nothing" \
  "CREATE TABLE t(x); CREATE INDEX swift_callback_batch ON t(x);
SELECT swift_callback('x') IS NULL;" \
  "1"

# A passing check is remembered with the schema's signature, but another
# connection that makes the file hostile changes its schema_version: the
# next call checks again and refuses.
db=$(scratch_db)
"$SQLITE3" "$db" "CREATE TABLE t(a); CREATE VIEW v AS SELECT abs(a) FROM t;"
hostile_edit="PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, 'abs(a)', 'swift_callback(''evil'', a)') WHERE name = 'v';
PRAGMA schema_version = 100;"
printf '%s' "$hostile_edit" > "$SCRATCH/hostile_edit.sql"
check "a schema made hostile by another connection after a passing check is refused at the next call" \
  "SELECT swift_callback('before') IS NULL;
SELECT swift_callback('before, again') IS NULL;
.system $SQLITE3 $db < $SCRATCH/hostile_edit.sql
SELECT swift_callback('after');" \
  "1
1
Runtime error near line 5: swift_callback: refused: view \"v\" in database \"main\" calls swift_callback(); a database file must never reach this function (drop the object, or move it to the TEMP schema)" "$db"

# The guard decides the same whatever the connection's pragmas: LIKE
# follows case_sensitive_like, and SQLite's function names are
# case-insensitive, so a prefilter by LIKE let a call spelled in capitals
# through.
for pragma in "case_sensitive_like = ON" "case_sensitive_like = OFF" "trusted_schema = OFF"; do
  for spelled in "SQLITETRIGGERS_CHANGE_FEED('notes', 'off')" "Swift_Callback('forged', y)"; do
    db=$(scratch_db)
    "$SQLITE3" "$db" "CREATE TABLE ix(id INTEGER PRIMARY KEY, y); CREATE INDEX evil ON ix(y) WHERE abs(y) IS NOT NULL;
      PRAGMA writable_schema = ON;
      UPDATE sqlite_schema SET sql = replace(sql, 'abs(y)', '${spelled//\'/\'\'}') WHERE name = 'evil';"
    fn=$(echo "${spelled%%(*}" | tr 'A-Z' 'a-z')
    # Attached after the connection's own feed and log are in place.
    out=$(sql "PRAGMA $pragma;
$OWN
ATTACH '$db' AS h;
INSERT INTO h.ix(y) VALUES (1);
DETACH h;
$EFFECTS")
    expect_refused_without_effect "PRAGMA $pragma: an attached index calling $spelled is refused, nothing takes effect" \
      "$out" 'index "evil"' "$fn" "${spelled%%(*}"
    # As main, its schema read before the extension is loaded (SQLite then
    # accepts the unknown function in the index and never checks it again).
    out=$(printf 'PRAGMA %s;\nSELECT count(*) FROM sqlite_schema;\n.load %s\n%s\nINSERT INTO ix(y) VALUES (2);\nSELECT count(*) FROM swift_callback_log;\n' \
            "$pragma" "$EXT" "SELECT sqlitetriggers_change_feed('ix') IS NOT NULL;" | "$SQLITE3" -batch "$db" 2>&1)
    case $out in
      *"refused: index \"evil\" in database \"main\" calls $fn();"*) pass "PRAGMA $pragma as main: $spelled refused" ;;
      *) fail "PRAGMA $pragma: a main file whose index calls $spelled is refused" "refused: ... calls $fn()" "$out" ;;
    esac
  done
done
