# datetime_subsec() and unixepoch_subsec().

D='[0-9]'
SUBSEC_GLOB="$D$D$D$D-$D$D-$D$D $D$D:$D$D:$D$D.$D$D$D"

check "datetime_subsec() is now, as 'YYYY-MM-DD HH:MM:SS.SSS' UTC" \
  "SELECT datetime_subsec() GLOB '$SUBSEC_GLOB',
          abs(julianday(datetime_subsec()) - julianday('now')) * 86400 < 2;" \
  "1|1"

check "unixepoch_subsec() is now as REAL seconds" \
  "SELECT typeof(unixepoch_subsec()), abs(unixepoch_subsec() - unixepoch()) < 2;" \
  "real|1"

check "datetime_subsec() reads the clock on every call" \
  "WITH t(v) AS MATERIALIZED (SELECT datetime_subsec() FROM generate_series(1, 300000))
   SELECT count(DISTINCT v) > 1 FROM t;" \
  "1"

check "datetime_subsec(value, modifiers...) matches datetime(..., 'subsec') of 3.42+" \
  "SELECT datetime_subsec('2024-02-29 23:59:59.999', '+1 day');
   SELECT datetime_subsec(1700000000.5, 'unixepoch');
   SELECT datetime_subsec('2024-01-31 10:00:00.25', '+1 month', 'start of day', '+1.5 seconds');
   SELECT datetime_subsec('2024-03-15 12:00:00', 'weekday 0');
   SELECT datetime_subsec('2024-03-15T12:00:00.123+02:00');
   SELECT datetime_subsec(2460000.5);" \
  "2024-03-01 23:59:59.999
2023-11-14 22:13:20.500
2024-03-02 00:00:01.500
2024-03-17 12:00:00.000
2024-03-15 10:00:00.123
2023-02-25 00:00:00.000"

check "datetime_subsec('now', 'start of day') is today at midnight" \
  "SELECT datetime_subsec('now', 'start of day') = date('now') || ' 00:00:00.000';" "1"

check "a fraction above .999 counts as .999, as in newer SQLite" \
  "SELECT datetime_subsec('2024-02-29 23:59:59.9999', '+1 day'),
          datetime_subsec('12:00:00.99951');" \
  "2024-03-01 23:59:59.999|2000-01-01 12:00:00.999"

check "'subsec' and 'subsecond' modifiers are accepted and ignored" \
  "SELECT datetime_subsec('2024-01-01 00:00:00.5', 'subsec'),
          unixepoch_subsec(1.25, 'unixepoch', 'SUBSECOND');" \
  "2024-01-01 00:00:00.500|1.25"

check "unixepoch_subsec(value, modifiers...) has millisecond precision" \
  "SELECT unixepoch_subsec('1970-01-01 00:00:01.500'),
          unixepoch_subsec('2023-11-14 22:13:20.123'),
          unixepoch_subsec('1969-12-31 23:59:59.750');" \
  "1.5|1700000000.123|-0.25"

check "years before 400 follow the proleptic Gregorian calendar, as newer SQLite" \
  "SELECT datetime_subsec('0300-02-28', '+1 day'), datetime_subsec(1830691.5);" \
  "0300-03-01 00:00:00.000|0300-03-01 00:00:00.000"

check "the range is datetime()'s: 4714 BC to 9999 AD, NULL outside" \
  "SELECT datetime_subsec(0), datetime_subsec('9999-12-31 23:59:59.999'),
          quote(datetime_subsec('9999-12-31 23:59:59.999', '+1 second')),
          quote(datetime_subsec(-1));" \
  "-4713-11-24 12:00:00.000|9999-12-31 23:59:59.999|NULL|NULL"

check "invalid input gives NULL, as datetime() does" \
  "SELECT quote(datetime_subsec('bad')), quote(datetime_subsec('2024-13-01')),
          quote(datetime_subsec('2024-01-01', 'bogus')), quote(datetime_subsec(NULL)),
          quote(datetime_subsec('2024-01-01', NULL)), quote(unixepoch_subsec('bad')),
          quote(datetime_subsec(x'00'));" \
  "NULL|NULL|NULL|NULL|NULL|NULL|NULL"

check "more modifiers than the statement cache holds" \
  "SELECT datetime_subsec('2024-01-01' $(for i in $(seq 1 20); do printf ", '+1 day'"; done), '+0.001 seconds');" \
  "2024-01-21 00:00:00.001"

# Our formatter against SQLite's own calendar on whole milliseconds (where
# strftime's %f cannot round).  From year 401 on: before that, 3.40's
# strftime() has a leap-year error that newer SQLite fixed (0300-02-29
# exists for it); the comparison with a newer SQLite covers those years.
check "formatting agrees with strftime() for 100,000 instants in years 401..9999" \
  "WITH t(ms) AS MATERIALIZED (
     SELECT 161353944000000 + abs(random()) % (464269060799999 - 161353944000000)
     FROM generate_series(1, 100000))
   SELECT count(*) FROM t
   WHERE datetime_subsec(ms / 86400000.0) = strftime('%Y-%m-%d %H:%M:%f', ms / 86400000.0);" \
  "100000"

db=$(scratch_db)
check "DEFAULT (datetime_subsec()) works with trusted_schema=OFF" \
  "PRAGMA trusted_schema = OFF;
   CREATE TABLE log(at TEXT NOT NULL DEFAULT (datetime_subsec()), what TEXT);
   INSERT INTO log(what) VALUES ('x');
   SELECT at GLOB '$SUBSEC_GLOB' FROM log;" \
  "1" "$db"
