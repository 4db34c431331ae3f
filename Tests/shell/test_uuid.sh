# uuid(), uuidv7() and the conversions.

H='[0-9a-f]'
rep() { local s="" i; for ((i = 0; i < $2; i++)); do s="$s$1"; done; echo "$s"; }
V4_GLOB="$(rep "$H" 8)-$(rep "$H" 4)-4$(rep "$H" 3)-[89ab]$(rep "$H" 3)-$(rep "$H" 12)"
V7_GLOB="$(rep "$H" 8)-$(rep "$H" 4)-7$(rep "$H" 3)-[89ab]$(rep "$H" 3)-$(rep "$H" 12)"

check "uuid() is lowercase v4 text, variant 10, 36 characters" \
  "WITH t(u) AS MATERIALIZED (SELECT uuid() FROM generate_series(1, 10000))
   SELECT count(*) FROM t WHERE u GLOB '$V4_GLOB' AND length(u) = 36 AND typeof(u) = 'text';" \
  "10000"

check "uuid() gives a new value per row (not deterministic)" \
  "SELECT count(DISTINCT uuid()) FROM generate_series(1, 10000);" "10000"

# Every random hex position of 10,000 v4 UUIDs takes all 16 digits: fails
# for a stuck or biased generator, passes for a uniform one with overwhelming
# probability (each miss has probability (15/16)^10000).
check "uuid() randomness reaches every digit in every random position" \
  "WITH u(v) AS MATERIALIZED (SELECT replace(uuid(), '-', '') FROM generate_series(1, 10000)),
   pos(i) AS (SELECT value FROM generate_series(1, 32) WHERE value NOT IN (13, 17))
   SELECT count(*) FROM pos
   WHERE (SELECT count(DISTINCT substr(v, i, 1)) FROM u) = 16;" \
  "30"

check "uuid_version() reads 4 and 7 back" \
  "SELECT uuid_version(uuid()), uuid_version(uuidv7()), uuid_version(uuid_blob(uuidv7()));" \
  "4|7|7"

check "uuidv7() is lowercase v7 text, variant 10" \
  "WITH t(u) AS MATERIALIZED (SELECT uuidv7() FROM generate_series(1, 10000))
   SELECT count(*) FROM t WHERE u GLOB '$V7_GLOB';" \
  "10000"

check "100,000 uuidv7() in one statement: unique and already sorted, as text and bytes" \
  "CREATE TEMP TABLE g AS SELECT value AS n, uuidv7() AS u FROM generate_series(1, 100000);
   SELECT count(DISTINCT u) FROM g;
   SELECT count(*) FROM g a JOIN g b ON b.n = a.n + 1 WHERE b.u <= a.u;
   SELECT count(*) FROM g a JOIN g b ON b.n = a.n + 1 WHERE uuid_blob(b.u) <= uuid_blob(a.u);" \
  "100000
0
0"

check "uuidv7() timestamp is the current millisecond (within a second)" \
  "SELECT abs(uuidv7_timestamp(uuidv7()) - unixepoch_subsec() * 1000) < 1000;" "1"

# Two connections of one process, writing alternately into one file: the
# order of insertion is the sorted order.
db=$(scratch_db)
script="CREATE TABLE g(n INTEGER PRIMARY KEY, u TEXT);
.connection 1
.open $db
.load $EXT"
for i in $(seq 1 200); do
  script="$script
.connection 0
INSERT INTO g(u) SELECT uuidv7() FROM generate_series(1, 50);
.connection 1
INSERT INTO g(u) SELECT uuidv7() FROM generate_series(1, 50);"
done
script="$script
.connection 0
SELECT count(*), count(DISTINCT u) FROM g;
SELECT count(*) FROM g a JOIN g b ON b.n = a.n + 1 WHERE b.u <= a.u;"
check "uuidv7() from two connections alternating stays strictly increasing" \
  "$script" "20000|20000
0" "$db"

check "uuid_str() and uuid_blob() round-trip 10,000 values" \
  "WITH t(u) AS MATERIALIZED (SELECT uuid() FROM generate_series(1, 5000)
                 UNION ALL SELECT uuidv7() FROM generate_series(1, 5000))
   SELECT count(*) FROM t WHERE uuid_str(uuid_blob(u)) = u AND length(uuid_blob(u)) = 16;
   WITH b(x) AS MATERIALIZED (SELECT randomblob(16) FROM generate_series(1, 10000))
   SELECT count(*) FROM b WHERE uuid_blob(uuid_str(x)) = x;" \
  "10000
10000"

check "uuid_blob() is big-endian network order" \
  "SELECT hex(uuid_blob('00112233-4455-6677-8899-aabbccddeeff'));" \
  "00112233445566778899AABBCCDDEEFF"

check "uuid_str() accepts every form SQLite's uuid.c accepts" \
  "SELECT uuid_str('A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11');
   SELECT uuid_str('{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}');
   SELECT uuid_str('a0eebc999c0b4ef8bb6d6bb9bd380a11');
   SELECT uuid_str('a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11');
   SELECT uuid_str('{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}');
   SELECT uuid_str(X'A0EEBC999C0B4EF8BB6D6BB9BD380A11');" \
  "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"

check "malformed input gives NULL from every conversion, never an error" \
  "SELECT quote(uuid_str(x)), quote(uuid_blob(x)), quote(uuid_version(x)),
          quote(uuidv7_timestamp(x)), quote(uuidv7_datetime(x))
   FROM (SELECT NULL AS x UNION ALL SELECT '' UNION ALL SELECT 'not a uuid'
         UNION ALL SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1'
         UNION ALL SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111'
         UNION ALL SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g'
         UNION ALL SELECT 'a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11'
         UNION ALL SELECT ' a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
         UNION ALL SELECT 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 '
         UNION ALL SELECT zeroblob(15) UNION ALL SELECT zeroblob(17)
         UNION ALL SELECT 42 UNION ALL SELECT 4.2);" \
  "$(for i in $(seq 1 13); do echo "NULL|NULL|NULL|NULL|NULL"; done)"

check "uuid_version() reads every version of variant 10, and NULL otherwise" \
  "SELECT group_concat(uuid_version(printf('00000000-0000-%d000-8000-000000000000', value)), ',')
   FROM generate_series(1, 8);
   SELECT quote(uuid_version('00000000-0000-0000-0000-000000000000')),
          quote(uuid_version('ffffffff-ffff-ffff-ffff-ffffffffffff')),
          quote(uuid_version('00000000-0000-4000-c000-000000000000'));" \
  "1,2,3,4,5,6,7,8
NULL|NULL|NULL"

# RFC 9562 appendix A.6: 2022-02-22 14:22:22 GMT-05:00.
check "uuidv7_timestamp() and uuidv7_datetime() decode the RFC 9562 example" \
  "SELECT uuidv7_timestamp('017F22E2-79B0-7CC3-98C4-DC0C0C07398F'),
          uuidv7_datetime('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'),
          uuidv7_datetime(uuid_blob('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'));" \
  "1645557742000|2022-02-22 19:22:22.000|2022-02-22 19:22:22.000"

check "uuidv7_timestamp() is NULL for other versions and variants" \
  "SELECT quote(uuidv7_timestamp(uuid())),
          quote(uuidv7_timestamp('017f22e2-79b0-7cc3-c8c4-dc0c0c07398f')),
          quote(uuidv7_datetime('017f22e2-79b0-4cc3-98c4-dc0c0c07398f'));" \
  "NULL|NULL|NULL"

check "uuidv7_datetime() is NULL past 9999-12-31, as datetime() is" \
  "SELECT uuidv7_datetime('e677d21f-dbff-7000-8000-000000000000'),
          quote(uuidv7_datetime('e677d21f-dc00-7000-8000-000000000000')),
          quote(uuidv7_datetime('ffffffff-ffff-7fff-bfff-ffffffffffff'));" \
  "9999-12-31 23:59:59.999|NULL|NULL"

db=$(scratch_db)
check "DEFAULT (uuid()) and (uuidv7()) in a stored schema work with trusted_schema=OFF" \
  "PRAGMA trusted_schema = OFF;
   CREATE TABLE items(
     id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()),
     seq TEXT NOT NULL DEFAULT (uuidv7()),
     title TEXT);
   INSERT INTO items(title) VALUES ('a');
   INSERT INTO items(id, title) VALUES (NULL, 'b');
   SELECT count(DISTINCT id), sum(uuid_version(id) = 4), sum(uuid_version(seq) = 7) FROM items;" \
  "2|2|2" "$db"

check "a reopened file with DEFAULT (uuid()) still inserts with trusted_schema=OFF" \
  "PRAGMA trusted_schema = OFF;
   INSERT INTO items(title) VALUES ('c');
   SELECT count(DISTINCT id), sum(uuid_version(id) = 4) FROM items;" \
  "3|3" "$db"

check "sqlitetriggers_derived_uuid() is a deterministic v8 UUID per salt, table and id" \
  "WITH s(salt) AS (SELECT zeroblob(32)), other(salt) AS (SELECT randomblob(32))
   SELECT uuid_version(sqlitetriggers_derived_uuid(salt, 'reminders', 1)),
          sqlitetriggers_derived_uuid(salt, 'reminders', 1) = sqlitetriggers_derived_uuid(salt, 'Reminders', 1),
          sqlitetriggers_derived_uuid(salt, 'reminders', 1) <> sqlitetriggers_derived_uuid(salt, 'reminders', 2),
          sqlitetriggers_derived_uuid(salt, 'reminders', 1) <> sqlitetriggers_derived_uuid(salt, 'tags', 1),
          sqlitetriggers_derived_uuid(salt, 'reminders', 1) <> (SELECT sqlitetriggers_derived_uuid(other.salt, 'reminders', 1) FROM other),
          quote(sqlitetriggers_derived_uuid(salt, 'reminders', NULL))
   FROM s;
   WITH s(salt) AS (SELECT randomblob(32))
   SELECT count(DISTINCT sqlitetriggers_derived_uuid(salt, 't', value)) FROM s, generate_series(1, 100000);" \
  "8|1|1|1|1|NULL
100000"

check "sqlitetriggers_derived_uuid() names its bad arguments" \
  "SELECT sqlitetriggers_derived_uuid(zeroblob(31), 't', 1);
   SELECT sqlitetriggers_derived_uuid(zeroblob(32), 't', 'one');" \
  "Runtime error near line 2: sqlitetriggers_derived_uuid: expects a 32-byte salt blob, a table name and an integer id
Runtime error near line 3: sqlitetriggers_derived_uuid: expects a 32-byte salt blob, a table name and an integer id"

check "uuidv7() with the clock pinned before 1970 is an error, as PostgreSQL's; at the epoch itself its timestamp is 0" \
  "SELECT sqlitetriggers_pin_clock('1969-12-31 23:59:59.999');
SELECT uuidv7();
SELECT sqlitetriggers_pin_clock('1970-01-01 00:00:00');
SELECT uuidv7_timestamp(uuidv7());" \
  "1969-12-31 23:59:59.999
Runtime error near line 3: uuidv7: timestamp out of range: the connection's clock is before 1970-01-01 00:00:00 UTC (pinned?), which a version 7 UUID cannot hold
1970-01-01 00:00:00.000
0"
