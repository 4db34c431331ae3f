/*
** The C tests: compiled with the ext/ sources and -DSQLITE_CORE against the
** system libsqlite3, as an application links the extension.  Prints
** "c: N passed, N failed"; exits non-zero on any failure.
*/
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>

static int nPassed = 0, nFailed = 0;

void expect(int condition, const char *zWhat){
  if( condition ){
    nPassed++;
  }else{
    nFailed++;
    printf("FAIL %s\n", zWhat);
  }
}

sqlite3 *openRegistered(const char *zVfs){
  sqlite3 *db = 0;
  if( sqlite3_open_v2(":memory:", &db,
                      SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, zVfs)!=SQLITE_OK
   || sqlitetriggers_register(db)!=SQLITE_OK ){
    fprintf(stderr, "cannot open a registered connection: %s\n",
            sqlite3_errmsg(db));
    exit(2);
  }
  return db;
}

void queryText(sqlite3 *db, const char *zSql, char *zOut){
  sqlite3_stmt *pStmt = 0;
  zOut[0] = 0;
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW && sqlite3_column_text(pStmt, 0) ){
    snprintf(zOut, 128, "%s", (const char*)sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
}

int exec(sqlite3 *db, const char *zSql){
  return sqlite3_exec(db, zSql, 0, 0, 0);
}

int main(void){
  /* Tests/versions/run.sh checks that the SQLite it meant is the one run. */
  printf("     SQLite %s\n", sqlite3_libversion());
  runExtensionTests();
  runCallbackTests();
  runCaptureTests();
  runWakeupTests();
  printf("c: %d passed, %d failed\n", nPassed, nFailed);
  return nFailed ? 1 : 0;
}
