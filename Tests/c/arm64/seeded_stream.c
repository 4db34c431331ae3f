/*
** Prints what a seeded connection with a pinned clock generates: uuid(),
** uuidv7() and sqlitetriggers_derived_uuid(), 3000 of each, across many
** keystream refills.  make test-arm64 runs it natively and under qemu
** (and with every ChaCha20 kernel): the outputs must be byte-identical,
** since a seed promises the same UUIDs on every platform.
*/
#include "sqlitetriggers.h"

#include <stdio.h>

int main(void){
  sqlite3 *db = 0;
  sqlite3_stmt *pStmt = 0;
  if( sqlite3_open(":memory:", &db)!=SQLITE_OK
   || sqlitetriggers_register(db)!=SQLITE_OK
   || sqlitetriggers_seed_random(db, 42)!=SQLITE_OK
   || sqlitetriggers_pin_clock(db, 1704164645678LL)!=SQLITE_OK
   || sqlite3_prepare_v2(db,
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)"
        " SELECT uuid() || ' ' || uuidv7() || ' '"
        "     || sqlitetriggers_derived_uuid(zeroblob(32), 'reminders', i) FROM n",
        -1, &pStmt, 0)!=SQLITE_OK ){
    fprintf(stderr, "seeded_stream: %s\n", sqlite3_errmsg(db));
    return 2;
  }
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    printf("%s\n", (const char*)sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
  return 0;
}
