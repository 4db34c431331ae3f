/*
** make bench: swift_callback() with one after-commit observer against a
** no-op C function in the same trigger, both on this process's SQLite.
**
** 100,000 rows are updated by one UPDATE whose AFTER UPDATE trigger calls
**   swift_callback('changed', new.id, new.title, new.updatedAt)  or
**   noop('changed', new.id, new.title, new.updatedAt).
** The swift_callback timing includes delivering every event to the
** observer.  Best of 5 runs each, alternating.  Prints a ROW line for
** Tests/bench/report.py.
*/
#include "sqlitetriggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROWS 100000
#define RUNS 5

static double now(void){
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec*1e-9;
}

static void noopFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)ctx; (void)argc; (void)argv;
}

static void countEvent(void *pArg, const sqlitetriggers_event *pEvent){
  (void)pEvent;
  (*(long*)pArg)++;
}

static void check(int rc, sqlite3 *db){
  if( rc!=SQLITE_OK ){
    fprintf(stderr, "bench: %s\n", sqlite3_errmsg(db));
    exit(1);
  }
}

/* Seconds for one UPDATE of every row, with delivery afterwards. */
static double timeUpdate(sqlite3 *db, int run){
  char *zSql = sqlite3_mprintf(
      "UPDATE items SET updatedAt = '2024-01-01 00:00:%02d.000'", run);
  double start = now();
  check(sqlite3_exec(db, zSql, 0, 0, 0), db);
  check(sqlitetriggers_deliver(db), db);
  sqlite3_free(zSql);
  return now() - start;
}

static sqlite3 *openWithTrigger(const char *zFunction){
  sqlite3 *db;
  char *zSql;
  sqlite3_open(":memory:", &db);
  check(sqlitetriggers_register(db), db);
  check(sqlite3_create_function(db, "noop", -1, SQLITE_UTF8, 0, noopFunc, 0, 0), db);
  zSql = sqlite3_mprintf(
      "CREATE TABLE items(id INTEGER PRIMARY KEY, title TEXT, updatedAt TEXT);"
      "INSERT INTO items(title, updatedAt)"
      "  SELECT 'Reminder number ' || value, '2024-01-01 00:00:00.000'"
      "  FROM (WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL"
      "        SELECT value + 1 FROM n WHERE value < %d) SELECT value FROM n);"
      "CREATE TEMP TRIGGER items_au AFTER UPDATE ON items BEGIN"
      "  SELECT %s('changed', new.id, new.title, new.updatedAt);"
      "END;", ROWS, zFunction);
  check(sqlite3_exec(db, zSql, 0, 0, 0), db);
  sqlite3_free(zSql);
  return db;
}

int main(void){
  sqlite3 *dbNoop = openWithTrigger("noop");
  sqlite3 *dbCallback = openWithTrigger("swift_callback");
  double bestNoop = 1e9, bestCallback = 1e9;
  long nEvents = 0;
  int run;
  check(sqlitetriggers_observe_after_commit(dbCallback, "changed", countEvent,
                                            &nEvents, 0, 0), dbCallback);
  for(run=1; run<=RUNS; run++){
    double t = timeUpdate(dbNoop, run);
    if( t<bestNoop ) bestNoop = t;
    t = timeUpdate(dbCallback, run);
    if( t<bestCallback ) bestCallback = t;
  }
  if( nEvents!=(long)ROWS*RUNS ){
    fprintf(stderr, "bench: delivered %ld events, expected %d\n",
            nEvents, ROWS*RUNS);
    return 1;
  }
  printf("ROW\tswift_callback in an AFTER UPDATE trigger, %d rows, delivery included\t"
         "swift_callback + after-commit C observer\t%.0f\tno-op C function\t%.0f\tns/row\t1.3\n",
         ROWS, bestCallback/ROWS*1e9, bestNoop/ROWS*1e9);
  sqlite3_close(dbNoop);
  sqlite3_close(dbCallback);
  return 0;
}
