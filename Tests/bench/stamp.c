/*
** make bench: what stamping the durable log's transactions costs, in
** instructions (Tests/bench/stamp_instructions.py runs this under
** callgrind, counting only measuredWrites()).
**
**   bench_stamp VARIANT WRITE ROWS
**
** A connection writes ROWS rows, a statement per row (prepared once), 100
** per transaction, into a table that has
**   VARIANT 0: the durable log, on a connection with the extension (its
**              triggers stamp every change with the transaction);
**   VARIANT 1: the same triggers written by hand, which stamp nothing, on a
**              connection with the extension;
**   VARIANT 2: the durable log, on a connection without the extension (a
**              writer in another process: no stamps);
**   VARIANT 3: the same triggers by hand, on a connection without it.
** The file is a temporary one, so that a connection without the extension
** can open what one with it installed.
** WRITE 0 inserts, 1 updates, 2 deletes (the rows are inserted first,
** outside the count).  Time on a shared machine drifts by tens of percent;
** instructions do not.
*/
#include "sqlitetriggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char zSchema[] =
  "CREATE TABLE reminders(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, status INTEGER NOT NULL DEFAULT 0);";

/* The information the log records, by hand (as in DurableLogSuite.swift). */
static const char zByHand[] =
  "CREATE TABLE crud(id INTEGER PRIMARY KEY AUTOINCREMENT, tableName TEXT NOT NULL, kind INTEGER NOT NULL, rowKey);"
  "CREATE TRIGGER crud_insert AFTER INSERT ON reminders BEGIN"
  "  INSERT INTO crud(tableName, kind, rowKey) VALUES ('reminders', 1, new.id); END;"
  "CREATE TRIGGER crud_update AFTER UPDATE ON reminders BEGIN"
  "  INSERT INTO crud(tableName, kind, rowKey) SELECT 'reminders', 3, old.id WHERE old.id IS NOT new.id;"
  "  INSERT INTO crud(tableName, kind, rowKey) VALUES ('reminders', CASE WHEN old.id IS NOT new.id THEN 1 ELSE 2 END, new.id); END;"
  "CREATE TRIGGER crud_delete AFTER DELETE ON reminders BEGIN"
  "  INSERT INTO crud(tableName, kind, rowKey) VALUES ('reminders', 3, old.id); END;"
  /* The probe of a REPLACE through the rowid, as the log's, with its kind
  ** (4, or 5 where REPLACE fires DELETE triggers), which plain SQL can
  ** tell only through that function; the stamp is what it leaves out. */
  "CREATE TRIGGER crud_replace_insert BEFORE INSERT ON reminders BEGIN"
  "  INSERT INTO crud(tableName, kind, rowKey) SELECT 'reminders', coalesce(sqlite_compileoption_get(-7317), 4), r.id"
  "  FROM reminders AS r WHERE new.rowid <> -1 AND r.rowid = new.rowid; END;"
  "CREATE TRIGGER crud_replace_update BEFORE UPDATE ON reminders BEGIN"
  "  INSERT INTO crud(tableName, kind, rowKey) SELECT 'reminders', coalesce(sqlite_compileoption_get(-7317), 4), r.id"
  "  FROM reminders AS r WHERE r.rowid = new.rowid AND new.rowid IS NOT old.rowid AND r.id IS NOT old.id; END;";

static void check(int rc, sqlite3 *db){
  if( rc!=SQLITE_OK && rc!=SQLITE_DONE && rc!=SQLITE_ROW ){
    fprintf(stderr, "bench_stamp: %s\n", sqlite3_errmsg(db));
    exit(1);
  }
}

/* The writes counted; not inlined, so that callgrind can toggle on it. */
__attribute__((noinline)) void measuredWrites(sqlite3 *db, sqlite3_stmt *pStmt, int nRow){
  int i;
  for(i=0; i<nRow; i++){
    if( i%100==0 ) check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db);
    sqlite3_bind_int(pStmt, 1, i);
    check(sqlite3_step(pStmt), db);
    sqlite3_reset(pStmt);
    if( i%100==99 || i==nRow-1 ) check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db);
  }
}

int main(int argc, char **argv){
  static const char *const azWrite[] = {
    "INSERT INTO reminders(id, title) VALUES ('r' || ?1, 'Buy milk')",
    "UPDATE reminders SET title = 'Buy oat milk', status = 1 WHERE id = 'r' || ?1",
    "DELETE FROM reminders WHERE id = 'r' || ?1",
  };
  sqlite3 *db = 0;
  sqlite3_stmt *pStmt = 0;
  int variant, write, nRow;
  char zPath[64];
  if( argc!=4 ){
    fprintf(stderr, "usage: bench_stamp VARIANT WRITE ROWS\n");
    return 2;
  }
  variant = atoi(argv[1]);
  write = atoi(argv[2]);
  nRow = atoi(argv[3]);
  if( variant<0 || variant>3 || write<0 || write>2 || nRow<1 ) return 2;
  snprintf(zPath, sizeof(zPath), "/tmp/bench_stamp_%d.db", (int)getpid());
  remove(zPath);
  check(sqlite3_open(zPath, &db), db);
  check(sqlitetriggers_register(db), db);
  check(sqlite3_exec(db, "PRAGMA journal_mode = WAL", 0, 0, 0), db);
  check(sqlite3_exec(db, zSchema, 0, 0, 0), db);
  check(sqlite3_exec(db, variant%2==0 ? "SELECT sqlitetriggers_log_install('reminders');"
                                       "INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');"
                                     : zByHand, 0, 0, 0), db);
  if( variant>=2 ){
    sqlite3_close(db);
    check(sqlite3_open(zPath, &db), db);
  }
  check(sqlite3_exec(db, "PRAGMA synchronous = OFF", 0, 0, 0), db);
  if( write>0 ){
    check(sqlite3_prepare_v2(db, azWrite[0], -1, &pStmt, 0), db);
    {
      int i;
      check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db);
      for(i=0; i<nRow; i++){
        sqlite3_bind_int(pStmt, 1, i);
        check(sqlite3_step(pStmt), db);
        sqlite3_reset(pStmt);
      }
      check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db);
    }
    sqlite3_finalize(pStmt);
  }
  check(sqlite3_prepare_v2(db, azWrite[write], -1, &pStmt, 0), db);
  measuredWrites(db, pStmt, nRow);
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
  remove(zPath);
  {
    char zSide[80];
    snprintf(zSide, sizeof(zSide), "%s-wal", zPath); remove(zSide);
    snprintf(zSide, sizeof(zSide), "%s-shm", zPath); remove(zSide);
  }
  return 0;
}
