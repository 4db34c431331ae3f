/*
** The session extension's interface, declared here: sqlite3.h declares it
** only under SQLITE_ENABLE_SESSION, and Apple's SDK header not at all.  Weak,
** so that a SQLite without it links and the bench says so instead.
*/
#include "bench_session.h"

#include <stdlib.h>

#if defined(__GNUC__) || defined(__clang__)
# define BENCH_WEAK __attribute__((weak))
#else
# define BENCH_WEAK
#endif

typedef struct sqlite3_session sqlite3_session;
typedef struct sqlite3_changeset_iter sqlite3_changeset_iter;
int sqlite3session_create(sqlite3*, const char*, sqlite3_session**) BENCH_WEAK;
int sqlite3session_attach(sqlite3_session*, const char*) BENCH_WEAK;
int sqlite3session_changeset(sqlite3_session*, int*, void**) BENCH_WEAK;
void sqlite3session_delete(sqlite3_session*) BENCH_WEAK;
int sqlite3changeset_start(sqlite3_changeset_iter**, int, void*) BENCH_WEAK;
int sqlite3changeset_next(sqlite3_changeset_iter*) BENCH_WEAK;
int sqlite3changeset_op(sqlite3_changeset_iter*, const char**, int*, int*, int*) BENCH_WEAK;
int sqlite3changeset_old(sqlite3_changeset_iter*, int, sqlite3_value**) BENCH_WEAK;
int sqlite3changeset_new(sqlite3_changeset_iter*, int, sqlite3_value**) BENCH_WEAK;
int sqlite3changeset_finalize(sqlite3_changeset_iter*) BENCH_WEAK;

#define MAX_BENCH_COLUMNS 64

int sqlitetriggers_bench_session_available(void){
  return sqlite3session_create && sqlite3session_attach && sqlite3session_changeset
      && sqlite3session_delete && sqlite3changeset_start && sqlite3changeset_next
      && sqlite3changeset_op && sqlite3changeset_old && sqlite3changeset_new
      && sqlite3changeset_finalize;
}

sqlitetriggers_bench_session *sqlitetriggers_bench_session_start(sqlite3 *db, const char *zTable){
  sqlite3_session *pSession = 0;
  if( !sqlitetriggers_bench_session_available() ) return 0;
  if( sqlite3session_create(db, "main", &pSession)!=SQLITE_OK ) return 0;
  if( sqlite3session_attach(pSession, zTable)!=SQLITE_OK ){
    sqlite3session_delete(pSession);
    return 0;
  }
  return (sqlitetriggers_bench_session*)pSession;
}

int sqlitetriggers_bench_session_read(sqlitetriggers_bench_session *p,
                                      sqlitetriggers_bench_session_change xChange, void *pCtx){
  sqlite3_session *pSession = (sqlite3_session*)p;
  sqlite3_changeset_iter *pIter = 0;
  void *pChangeset = 0;
  int nChangeset = 0, rc;
  rc = sqlite3session_changeset(pSession, &nChangeset, &pChangeset);
  if( rc==SQLITE_OK ) rc = sqlite3changeset_start(&pIter, nChangeset, pChangeset);
  while( rc==SQLITE_OK && sqlite3changeset_next(pIter)==SQLITE_ROW ){
    sqlite3_value *apOld[MAX_BENCH_COLUMNS], *apNew[MAX_BENCH_COLUMNS];
    const char *zTable;
    int nCol, op, isIndirect, i;
    sqlite3changeset_op(pIter, &zTable, &nCol, &op, &isIndirect);
    if( nCol>MAX_BENCH_COLUMNS ){ rc = SQLITE_TOOBIG; break; }
    for(i=0; i<nCol; i++){
      apOld[i] = apNew[i] = 0;
      if( op!=SQLITE_INSERT ) sqlite3changeset_old(pIter, i, &apOld[i]);
      if( op!=SQLITE_DELETE ) sqlite3changeset_new(pIter, i, &apNew[i]);
    }
    xChange(pCtx, op, nCol, apOld, apNew);
  }
  if( pIter ){
    int rc2 = sqlite3changeset_finalize(pIter);
    if( rc==SQLITE_OK ) rc = rc2;
  }
  sqlite3_free(pChangeset);
  return rc;
}

void sqlitetriggers_bench_session_end(sqlitetriggers_bench_session *p){
  if( p ) sqlite3session_delete((sqlite3_session*)p);
}
