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
**
** Then what registering a connection costs: opening a database file,
** registering the extension and closing it, against opening and closing
** it alone (registration reads no schema and makes no TEMP object, so it
** does no I/O), and against registering the same functions and modules
** as no-ops by hand (SQLite's own cost of that many).  Best of 5 runs of
** 2,000 each, alternating.
**
**   bench_callback --instructions FUNCTION ROWS
** makes the table of ROWS rows with FUNCTION (swift_callback or noop) in
** its trigger, then runs one UPDATE and the delivery inside
** measuredUpdate(), for Tests/bench/callback_instructions.py to count
** under callgrind.
*/
#include "sqlitetriggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static sqlite3 *openWithTrigger(const char *zFunction, int nRow){
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
      "END;", nRow, zFunction);
  check(sqlite3_exec(db, zSql, 0, 0, 0), db);
  sqlite3_free(zSql);
  return db;
}

#define OPENS 2000

/* The functions and modules registration makes, read once from a
** registered connection: the floor any registration of them costs. */
typedef struct Registered { char azName[64][64]; int anArg[64]; int nFunc; char azModule[8][64]; int nModule; } Registered;
static Registered registered;

static void noopDestroy(void *p){ (void)p; }
static int noopConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                       sqlite3_vtab **ppVtab, char **pzErr){
  (void)db; (void)pAux; (void)argc; (void)argv; (void)ppVtab; (void)pzErr;
  return SQLITE_ERROR;
}
static const sqlite3_module noopModule = { .xConnect = noopConnect };

/* The functions (a name per arity) that SQLite lists as not built in on a
** connection: its own per-connection ones too (Debian's SQLite registers
** FTS3, FTS5 and R*Tree functions on every connection it opens). */
static char *notBuiltinFunctions(sqlite3 *db){
  char *zList = 0;
  sqlite3_stmt *pStmt = 0;
  check(sqlite3_prepare_v2(db, "SELECT group_concat(name || '/' || narg, ' ') FROM "
                               "(SELECT DISTINCT name, narg FROM pragma_function_list WHERE builtin = 0)",
                           -1, &pStmt, 0), db);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    zList = sqlite3_mprintf(" %s ", (const char*)sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  return zList;
}

static void readRegistered(void){
  sqlite3 *db = 0;
  sqlite3_stmt *pStmt = 0;
  char *zBare;
  check(sqlite3_open(":memory:", &db), db);
  zBare = notBuiltinFunctions(db);      /* before ours: SQLite's own */
  check(sqlitetriggers_register(db), db);
  /* builtin = 0 less what a bare connection has: ours, a name per arity. */
  check(sqlite3_prepare_v2(db, "SELECT DISTINCT name, narg FROM pragma_function_list WHERE builtin = 0", -1, &pStmt, 0), db);
  while( sqlite3_step(pStmt)==SQLITE_ROW && registered.nFunc<64 ){
    char zKey[80];
    snprintf(zKey, sizeof(zKey), " %s/%d ", (const char*)sqlite3_column_text(pStmt, 0), sqlite3_column_int(pStmt, 1));
    if( zBare && strstr(zBare, zKey) ) continue;
    snprintf(registered.azName[registered.nFunc], 64, "%s", (const char*)sqlite3_column_text(pStmt, 0));
    registered.anArg[registered.nFunc++] = sqlite3_column_int(pStmt, 1);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zBare);
  check(sqlite3_prepare_v2(db, "SELECT name FROM pragma_module_list WHERE name LIKE 'swift%'", -1, &pStmt, 0), db);
  while( sqlite3_step(pStmt)==SQLITE_ROW && registered.nModule<8 ){
    snprintf(registered.azModule[registered.nModule++], 64, "%s", (const char*)sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
}

/* Seconds for OPENS rounds of open, registration (0 none, 1 ours, 2 the
** same functions and modules as no-ops, by hand), close. */
static double timeOpens(const char *zPath, int how){
  double t0 = now();
  int i, k;
  for(i=0; i<OPENS; i++){
    sqlite3 *db = 0;
    check(sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READWRITE, 0), db);
    if( how==1 ) check(sqlitetriggers_register(db), db);
    for(k=0; how==2 && k<registered.nFunc; k++){
      check(sqlite3_create_function_v2(db, registered.azName[k], registered.anArg[k], SQLITE_UTF8, &registered,
                                       noopFunc, 0, 0, noopDestroy), db);
    }
    for(k=0; how==2 && k<registered.nModule; k++){
      check(sqlite3_create_module_v2(db, registered.azModule[k], &noopModule, &registered, noopDestroy), db);
    }
    sqlite3_close(db);
  }
  return now() - t0;
}

static void benchRegistration(void){
  char zPath[64];
  sqlite3 *db = 0;
  double aBest[3] = { 1e9, 1e9, 1e9 };
  int run, how;
  readRegistered();
  snprintf(zPath, sizeof(zPath), "/tmp/bench_open_%d.db", (int)getpid());
  check(sqlite3_open(zPath, &db), db);
  check(sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES (1);", 0, 0, 0), db);
  sqlite3_close(db);
  for(run=1; run<=RUNS; run++){
    for(how=0; how<3; how++){
      double t = timeOpens(zPath, how);
      if( t<aBest[how] ) aBest[how] = t;
    }
  }
  remove(zPath);
  /* Information: opening alone does no I/O either (SQLite reads the file
  ** at the first statement), so what registration adds is SQLite's own
  ** cost of creating that many functions, measured by the next row. */
  printf("ROW\topening a database file and registering the extension, then closing (no I/O)\t"
         "open + sqlitetriggers_register() + close\t%.0f\topen + close\t%.0f\tns\t\n",
         aBest[1]/OPENS*1e9, aBest[0]/OPENS*1e9);
  printf("ROW\tregistration against SQLite's floor: the same %d functions and %d modules as no-ops, by hand\t"
         "open + sqlitetriggers_register() + close\t%.0f\topen + no-op functions and modules + close\t%.0f\tns\t1.05\n",
         registered.nFunc, registered.nModule, aBest[1]/OPENS*1e9, aBest[2]/OPENS*1e9);
}

/* The writes callgrind counts; not inlined, so that it can toggle on it. */
__attribute__((noinline)) void measuredUpdate(sqlite3 *db){
  check(sqlite3_exec(db, "UPDATE items SET updatedAt = '2024-01-01 00:00:01.000'", 0, 0, 0), db);
  check(sqlitetriggers_deliver(db), db);
}

static int countInstructions(const char *zFunction, int nRow){
  sqlite3 *db = openWithTrigger(zFunction, nRow);
  long nEvents = 0;
  check(sqlitetriggers_observe_after_commit(db, "changed", countEvent, &nEvents, 0, 0), db);
  measuredUpdate(db);
  sqlite3_close(db);
  if( strcmp(zFunction, "swift_callback")==0 && nEvents!=nRow ){
    fprintf(stderr, "bench: delivered %ld events, expected %d\n", nEvents, nRow);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv){
  sqlite3 *dbNoop, *dbCallback;
  double bestNoop = 1e9, bestCallback = 1e9;
  long nEvents = 0;
  int run;
  if( argc==4 && strcmp(argv[1], "--instructions")==0 ){
    return countInstructions(argv[2], atoi(argv[3]));
  }
  if( argc!=1 ){
    fprintf(stderr, "usage: bench_callback [--instructions swift_callback|noop ROWS]\n");
    return 2;
  }
  dbNoop = openWithTrigger("noop", ROWS);
  dbCallback = openWithTrigger("swift_callback", ROWS);
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
  benchRegistration();
  return 0;
}
