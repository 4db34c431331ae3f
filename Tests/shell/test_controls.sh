# sqlitetriggers_pin_clock() and sqlitetriggers_seed_random().

check "a pinned clock is 'now' for datetime_subsec, unixepoch_subsec and uuidv7" \
  "SELECT sqlitetriggers_pin_clock('2024-01-02 03:04:05.678');
   SELECT datetime_subsec(), unixepoch_subsec(), uuidv7_datetime(uuidv7()),
          uuidv7_timestamp(uuidv7());
   SELECT datetime_subsec('now', '+1 day'), datetime_subsec('NOW', 'start of day'),
          unixepoch_subsec('now');" \
  "2024-01-02 03:04:05.678
2024-01-02 03:04:05.678|1704164645.678|2024-01-02 03:04:05.678|1704164645678
2024-01-03 03:04:05.678|2024-01-02 00:00:00.000|1704164645.678"

check "the pinned time takes modifiers and numbers, and holds across rows" \
  "SELECT sqlitetriggers_pin_clock('2024-01-02', '+1.5 hours');
   SELECT count(DISTINCT datetime_subsec()) FROM generate_series(1, 1000);
   SELECT sqlitetriggers_pin_clock(2460000.5);" \
  "2024-01-02 01:30:00.000
1
2023-02-25 00:00:00.000"

check "pinning NULL unpins" \
  "SELECT sqlitetriggers_pin_clock('2000-01-01');
   SELECT quote(sqlitetriggers_pin_clock(NULL));
   SELECT abs(unixepoch_subsec() - unixepoch()) < 2, datetime_subsec() > '2020';" \
  "2000-01-01 00:00:00.000
NULL
1|1"

check "pinned uuidv7() keeps the pinned millisecond and stays strictly increasing" \
  "SELECT sqlitetriggers_pin_clock('2024-01-02 03:04:05.678');
   CREATE TEMP TABLE g AS SELECT value AS n, uuidv7() AS u FROM generate_series(1, 10000);
   SELECT count(DISTINCT uuidv7_timestamp(u)), min(uuidv7_datetime(u)) FROM g;
   SELECT count(*) FROM g a JOIN g b ON b.n = a.n + 1 WHERE b.u <= a.u;" \
  "2024-01-02 03:04:05.678
1|2024-01-02 03:04:05.678
0"

check "the counter carries into the timestamp when a millisecond is exhausted" \
  "SELECT sqlitetriggers_pin_clock('2024-01-02 03:04:05.678');
   CREATE TEMP TABLE g AS SELECT value AS n, uuidv7() AS u FROM generate_series(1, 100000);
   SELECT count(DISTINCT u) FROM g;
   SELECT count(*) FROM g a JOIN g b ON b.n = a.n + 1 WHERE b.u <= a.u;
   SELECT max(uuidv7_timestamp(u)) - 1704164645678 BETWEEN 1 AND 3 FROM g;" \
  "2024-01-02 03:04:05.678
100000
0
1"

check "a clock that steps backwards never makes uuidv7() go backwards" \
  "SELECT sqlitetriggers_pin_clock('2024-06-01') IS NOT NULL;
   CREATE TEMP TABLE g(n INTEGER PRIMARY KEY, u TEXT);
   INSERT INTO g(u) SELECT uuidv7() FROM generate_series(1, 10);
   SELECT sqlitetriggers_pin_clock('2024-05-01') IS NOT NULL;
   INSERT INTO g(u) SELECT uuidv7() FROM generate_series(1, 10);
   SELECT sqlitetriggers_pin_clock(NULL) IS NULL;
   INSERT INTO g(u) SELECT uuidv7() FROM generate_series(1, 10);
   SELECT count(*) FROM g a JOIN g b ON b.n = a.n + 1 WHERE b.u <= a.u;" \
  "1
1
1
0"

seeded_run="SELECT sqlitetriggers_seed_random(42);
   SELECT sqlitetriggers_pin_clock('2024-01-02 03:04:05.678') IS NOT NULL;
   SELECT uuid() FROM generate_series(1, 3);
   SELECT uuidv7() FROM generate_series(1, 3);"
first=$(sql "$seeded_run")
second=$(sql "$seeded_run")
check_same "a seed and a pinned clock reproduce uuid() and uuidv7() across processes" \
  "$second" "$first"
check "seeded values are still valid UUIDs" \
  "SELECT sqlitetriggers_seed_random(42);
   SELECT uuid_version(uuid()), uuid_version(uuidv7());" \
  "42
4|7"
check "reseeding restarts the stream; another seed gives another one" \
  "SELECT sqlitetriggers_seed_random(7) = 7;
   CREATE TEMP TABLE a AS SELECT uuid() u FROM generate_series(1, 5);
   SELECT sqlitetriggers_seed_random(7) = 7;
   CREATE TEMP TABLE b AS SELECT uuid() u FROM generate_series(1, 5);
   SELECT sqlitetriggers_seed_random(8) = 8;
   CREATE TEMP TABLE c AS SELECT uuid() u FROM generate_series(1, 5);
   SELECT (SELECT group_concat(u) FROM a) = (SELECT group_concat(u) FROM b),
          (SELECT group_concat(u) FROM a) = (SELECT group_concat(u) FROM c);" \
  "1
1
1
1|0"
check "seeding NULL returns to kernel randomness" \
  "SELECT sqlitetriggers_seed_random(1);
   SELECT quote(sqlitetriggers_seed_random(NULL));
   CREATE TEMP TABLE a AS SELECT uuid() u FROM generate_series(1, 5);
   SELECT sqlitetriggers_seed_random(1);
   SELECT sqlitetriggers_seed_random(NULL) IS NULL;
   CREATE TEMP TABLE b AS SELECT uuid() u FROM generate_series(1, 5);
   SELECT (SELECT group_concat(u) FROM a) = (SELECT group_concat(u) FROM b);" \
  "1
NULL
1
1
0"
unseeded_a=$(sql "SELECT uuid();")
unseeded_b=$(sql "SELECT uuid();")
if [ "$unseeded_a" != "$unseeded_b" ]; then pass "unseeded processes differ"; else fail "unseeded processes differ" "different" "$unseeded_a"; fi

check "bad arguments to the controls are errors that name the function" \
  "SELECT sqlitetriggers_seed_random('x');
   SELECT sqlitetriggers_seed_random(1.5);
   SELECT sqlitetriggers_pin_clock('not a time');
   SELECT sqlitetriggers_pin_clock();
   SELECT sqlitetriggers_pin_clock('2024-01-01', 'bogus');" \
  "Runtime error near line 2: sqlitetriggers_seed_random: the seed must be an integer, or NULL to unseed
Runtime error near line 3: sqlitetriggers_seed_random: the seed must be an integer, or NULL to unseed
Runtime error near line 4: sqlitetriggers_pin_clock: not a time value and modifiers datetime() accepts, or an instant outside its range (-4713-11-24 12:00:00 to 9999-12-31 23:59:59.999 UTC)
Runtime error near line 5: sqlitetriggers_pin_clock: expects a time value and optional modifiers, or NULL to unpin
Runtime error near line 6: sqlitetriggers_pin_clock: not a time value and modifiers datetime() accepts, or an instant outside its range (-4713-11-24 12:00:00 to 9999-12-31 23:59:59.999 UTC)"

db=$(scratch_db)
check "no stored schema can call the controls (SQLITE_DIRECTONLY)" \
  "CREATE TABLE t(x);
   CREATE VIEW v AS SELECT sqlitetriggers_pin_clock('2000-01-01');
   SELECT * FROM v;
   CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT sqlitetriggers_seed_random(1); END;
   INSERT INTO t VALUES (1);" \
  "Parse error near line 4: unsafe use of sqlitetriggers_pin_clock()
Parse error near line 6: unsafe use of sqlitetriggers_seed_random()" "$db"

check "a TEMP trigger may call the controls" \
  "CREATE TEMP TABLE t(x);
   CREATE TEMP TRIGGER tr AFTER INSERT ON t BEGIN SELECT sqlitetriggers_pin_clock(new.x); END;
   INSERT INTO t VALUES ('2001-02-03 04:05:06.789');
   SELECT datetime_subsec();" \
  "2001-02-03 04:05:06.789"

db=$(scratch_db)
check "the controls are per connection" \
  "SELECT sqlitetriggers_pin_clock('2000-01-01') IS NOT NULL;
.connection 1
.open $db
.load $EXT
SELECT datetime_subsec() > '2020';
.connection 0
SELECT datetime_subsec();" \
  "1
1
2000-01-01 00:00:00.000" "$db"

# A seed is a promise across platforms, CPUs (with or without AVX2) and
# releases: this value may only change with a documented break.
check "seed 42 gives the same first uuid() everywhere" \
  "SELECT sqlitetriggers_seed_random(42);
   SELECT uuid();" \
  "42
5d2d08f0-a14e-4f5e-b06c-5cfe32938cfa"

check "'subsec' and 'subsecond' as the time value mean 'now', as in SQLite 3.42+" \
  "SELECT sqlitetriggers_pin_clock('2024-01-02 03:04:05.678');
   SELECT datetime_subsec('subsec'), datetime_subsec('SUBSECOND', '+1 day'),
          unixepoch_subsec('subsec'), unixepoch_subsec('subsecond', 'subsec');" \
  "2024-01-02 03:04:05.678
2024-01-02 03:04:05.678|2024-01-03 03:04:05.678|1704164645.678|1704164645.678"

check "pinning an instant outside SQLite's date range says so" \
  "SELECT sqlitetriggers_pin_clock('9999-12-31 23:59:59.999');
SELECT sqlitetriggers_pin_clock('9999-12-31', '+1 day');
SELECT datetime_subsec();" \
  "9999-12-31 23:59:59.999
Runtime error near line 3: sqlitetriggers_pin_clock: not a time value and modifiers datetime() accepts, or an instant outside its range (-4713-11-24 12:00:00 to 9999-12-31 23:59:59.999 UTC)
9999-12-31 23:59:59.999"
