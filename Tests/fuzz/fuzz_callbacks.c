/*
** libFuzzer harness for swift_callback() delivery (make fuzz).
**
** Each input byte is one step: BEGIN, SAVEPOINT, ROLLBACK TO, RELEASE,
** COMMIT, ROLLBACK, or a write that succeeds or fails (a multi-row insert
** whose last row breaks UNIQUE, a RAISE(ABORT), a RAISE(ROLLBACK), an
** INSERT OR FAIL that keeps its earlier rows, updates and deletes of many
** rows).  The same TEMP triggers write an ordinary audit table and call
** swift_callback(), and the host delivers after every step as an app
** would.  At the end the delivered events must equal the committed audit
** rows, in order; any difference aborts.
*/
#include "sqlitetriggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Delivered { sqlite3_int64 *a; int n, nAlloc; } Delivered;

static void collect(void *pArg, const sqlitetriggers_event *pEvent){
  Delivered *p = (Delivered*)pArg;
  if( p->n==p->nAlloc ){
    p->nAlloc = p->nAlloc ? 2*p->nAlloc : 64;
    p->a = realloc(p->a, p->nAlloc*sizeof(sqlite3_int64));
    if( p->a==0 ) abort();
  }
  p->a[p->n++] = sqlitetriggers_event_int64(pEvent, 0);
}

static const char *schema =
  "CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER UNIQUE);"
  "CREATE TABLE audit(v INTEGER);"
  "CREATE TEMP TRIGGER t_ai AFTER INSERT ON t BEGIN"
  "  INSERT INTO audit VALUES (new.v);"
  "  SELECT swift_callback('changed', new.v);"
  "END;"
  "CREATE TEMP TRIGGER t_au AFTER UPDATE ON t BEGIN"
  "  INSERT INTO audit VALUES (new.v);"
  "  SELECT swift_callback('changed', new.v);"
  "END;"
  "CREATE TEMP TRIGGER t_ad AFTER DELETE ON t BEGIN"
  "  INSERT INTO audit VALUES (-old.v);"
  "  SELECT swift_callback('changed', -old.v);"
  "END;"
  "CREATE TEMP TRIGGER t_abort AFTER INSERT ON t WHEN new.v % 1000 = 13 BEGIN"
  "  SELECT RAISE(ABORT, 'abort');"
  "END;"
  "CREATE TEMP TRIGGER t_rollback AFTER INSERT ON t WHEN new.v % 1000 = 17 BEGIN"
  "  SELECT RAISE(ROLLBACK, 'rollback');"
  "END;";

int LLVMFuzzerTestOneInput(const unsigned char *aData, size_t nData){
  sqlite3 *db;
  Delivered delivered = {0, 0, 0};
  sqlite3_stmt *pStmt;
  sqlite3_int64 next = 1000;       /* fresh values, never 13 or 17 mod 1000 */
  size_t i;
  int n = 0;
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK ) abort();
  if( sqlitetriggers_register(db)!=SQLITE_OK ) abort();
  if( sqlite3_exec(db, schema, 0, 0, 0)!=SQLITE_OK ) abort();
  sqlitetriggers_observe_after_commit(db, "changed", collect, &delivered, 0, 0);
  for(i=0; i<nData && i<200; i++){
    unsigned char op = aData[i] % 14, arg = aData[i] / 14;
    char *zSql = 0;
    next += 1000;
    switch( op ){
      case 0: zSql = sqlite3_mprintf("BEGIN"); break;
      case 1: zSql = sqlite3_mprintf("SAVEPOINT s%d", arg%4); break;
      case 2: zSql = sqlite3_mprintf("ROLLBACK TO s%d", arg%4); break;
      case 3: zSql = sqlite3_mprintf("RELEASE s%d", arg%4); break;
      case 4: zSql = sqlite3_mprintf("COMMIT"); break;
      case 5: zSql = sqlite3_mprintf("ROLLBACK"); break;
      case 6: case 7:
        zSql = sqlite3_mprintf("INSERT INTO t(v) VALUES (%lld)", next); break;
      case 8:     /* fails on its third row */
        zSql = sqlite3_mprintf("INSERT INTO t(v) VALUES (%lld), (%lld), (%lld)",
                               next, next+1, next);
        break;
      case 9:     /* keeps its first rows, then fails */
        zSql = sqlite3_mprintf("INSERT OR FAIL INTO t(v) VALUES (%lld), (%lld), (%lld)",
                               next, next+1, next);
        break;
      case 10:
        zSql = sqlite3_mprintf("INSERT INTO t(v) VALUES (%lld), (%lld)",
                               next, next - next%1000 + 13);
        break;
      case 11:
        zSql = sqlite3_mprintf("INSERT INTO t(v) VALUES (%lld)",
                               next - next%1000 + 17);
        break;
      case 12:
        zSql = sqlite3_mprintf("UPDATE t SET v = v + 1 WHERE id %% %d = 0",
                               arg%3 + 1);
        break;
      default:
        zSql = sqlite3_mprintf("DELETE FROM t WHERE id %% %d = 1", arg%3 + 2);
    }
    sqlite3_exec(db, zSql, 0, 0, 0);
    sqlite3_free(zSql);
    sqlitetriggers_deliver(db);
  }
  if( !sqlite3_get_autocommit(db) ) sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
  sqlitetriggers_deliver(db);

  sqlite3_prepare_v2(db, "SELECT v FROM audit ORDER BY rowid", -1, &pStmt, 0);
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    if( n>=delivered.n || delivered.a[n]!=sqlite3_column_int64(pStmt, 0) ){
      fprintf(stderr, "mismatch at event %d: delivered %lld, audit %lld\n", n,
              n<delivered.n ? (long long)delivered.a[n] : -1LL,
              (long long)sqlite3_column_int64(pStmt, 0));
      abort();
    }
    n++;
  }
  sqlite3_finalize(pStmt);
  if( n!=delivered.n ){
    fprintf(stderr, "delivered %d events, audit has %d rows\n", delivered.n, n);
    abort();
  }
  sqlite3_close(db);
  free(delivered.a);
  return 0;
}
