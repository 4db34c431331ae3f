/*
** make bench: what stamping the durable log's transactions costs, in
** instructions (Tests/bench/stamp_instructions.py runs this under
** callgrind, counting only measuredWrites()).
**
**   bench_stamp VARIANT WRITE LAYOUT ROWS
**   bench_stamp --file VARIANT WRITE ROWS PATH   (see fileOnly())
**
** A connection writes ROWS rows, a statement per row (prepared once), 100
** per transaction, into a table that has
**   VARIANT 0: the durable log, on a connection with the extension (its
**              triggers stamp every change with the transaction);
**   VARIANT 1: the same triggers written by hand, which stamp nothing, on a
**              connection with the extension;
**   VARIANT 2: the durable log, on a connection without the extension (a
**              writer in another process: no stamps);
**   VARIANT 3: the same triggers by hand, on a connection without it;
**   VARIANT 4: as 0, each transaction marked with an origin first;
**   VARIANT 5: the durable log with tombstones, without the extension;
**   VARIANT 6: the same two statements by hand (a change, then a row of
**              the deleted values as json_object() writes them, and the
**              time), without it;
**   VARIANT 7: by hand in one table (the values and time beside the key),
**              without it.
** The file is a temporary one, made by a child process (see main()), so
** that a connection without the extension can open what one with it
** installed.
** WRITE 0 inserts, 1 updates, 2 deletes (the rows are inserted first,
** outside the count).  LAYOUT tables are made first, which moves every
** other table's pages: SQLite's page cache hashes page numbers, and the
** same writes count a percent or two apart from one layout to the next,
** so the script averages over several.  Time on a shared machine drifts by tens of percent;
** instructions do not.
*/
#include "sqlitetriggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* A deletion's values and time, by hand: as the log keeps them (a row of
** its own, under the change's id), then in the change's own row. */
static const char zTombstonesByHand[] =
  "CREATE TABLE crud(id INTEGER PRIMARY KEY AUTOINCREMENT, tableName TEXT NOT NULL, kind INTEGER NOT NULL, rowKey);"
  "CREATE TABLE crud_values(id INTEGER PRIMARY KEY, time TEXT NOT NULL, deletedRow TEXT NOT NULL);"
  "CREATE TRIGGER crud_delete AFTER DELETE ON reminders BEGIN"
  "  INSERT INTO crud(tableName, kind, rowKey) VALUES ('reminders', 3, old.id);"
  "  INSERT INTO crud_values(id, time, deletedRow) VALUES (last_insert_rowid(), strftime('%Y-%m-%d %H:%M:%f', 'now'),"
  "  json_object('id', old.id, 'title', old.title, 'status', old.status)); END;";
static const char zTombstonesInOneTable[] =
  "CREATE TABLE crud(id INTEGER PRIMARY KEY AUTOINCREMENT, tableName TEXT NOT NULL, kind INTEGER NOT NULL, rowKey,"
  "  time TEXT, deletedRow TEXT);"
  "CREATE TRIGGER crud_delete AFTER DELETE ON reminders BEGIN"
  "  INSERT INTO crud(tableName, kind, rowKey, time, deletedRow) VALUES ('reminders', 3, old.id,"
  "  strftime('%Y-%m-%d %H:%M:%f', 'now'), json_object('id', old.id, 'title', old.title, 'status', old.status)); END;";

#define LOG_SETUP(MODE) "SELECT sqlitetriggers_log_install('reminders'" MODE ");" \
                        "INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync');"

/* Each VARIANT: what the file holds, whether the writer has the extension,
** whether its transactions set an origin. */
static const struct {
  const char *zSetup;
  int isRegistered;
  int hasOrigin;
} aVariant[] = {
  { LOG_SETUP(""), 1, 0 },
  { zByHand, 1, 0 },
  { LOG_SETUP(""), 0, 0 },
  { zByHand, 0, 0 },
  { LOG_SETUP(""), 1, 1 },
  { LOG_SETUP(", 'tombstones'"), 0, 0 },
  { zTombstonesByHand, 0, 0 },
  { zTombstonesInOneTable, 0, 0 },
};
#define N_VARIANT ((int)(sizeof(aVariant)/sizeof(aVariant[0])))

static void check(int rc, sqlite3 *db){
  if( rc!=SQLITE_OK && rc!=SQLITE_DONE && rc!=SQLITE_ROW ){
    fprintf(stderr, "bench_stamp: %s\n", sqlite3_errmsg(db));
    exit(1);
  }
}

/* The writes counted; not inlined, so that callgrind can toggle on it. */
__attribute__((noinline)) void measuredWrites(sqlite3 *db, sqlite3_stmt *pStmt, int nRow,
                                              sqlite3_stmt *pOrigin){
  int i;
  for(i=0; i<nRow; i++){
    if( i%100==0 ){
      check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db);
      /* As an app marks it: a statement prepared once. */
      if( pOrigin ){
        check(sqlite3_step(pOrigin), db);
        sqlite3_reset(pOrigin);
      }
    }
    sqlite3_bind_int(pStmt, 1, i);
    check(sqlite3_step(pStmt), db);
    sqlite3_reset(pStmt);
    if( i%100==99 || i==nRow-1 ) check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db);
  }
}

/* The writes, ?1 the row's number. */
static const char *const azWrite[] = {
  "INSERT INTO reminders(id, title) VALUES ('r' || ?1, 'Buy milk')",
  "UPDATE reminders SET title = 'Buy oat milk', status = 1 WHERE id = 'r' || ?1",
  "DELETE FROM reminders WHERE id = 'r' || ?1",
};

/* The file of VARIANT at zPath, after nLayout tables that move its pages. */
static void makeFile(const char *zPath, int variant, int nLayout){
  sqlite3 *db = 0;
  int i;
  check(sqlite3_open(zPath, &db), db);
  check(sqlitetriggers_register(db), db);
  check(sqlite3_exec(db, "PRAGMA journal_mode = WAL", 0, 0, 0), db);
  for(i=0; i<nLayout; i++){
    char *zPad = sqlite3_mprintf("CREATE TABLE pad%d(x);", i);
    check(sqlite3_exec(db, zPad, 0, 0, 0), db);
    sqlite3_free(zPad);
  }
  check(sqlite3_exec(db, zSchema, 0, 0, 0), db);
  check(sqlite3_exec(db, aVariant[variant].zSetup, 0, 0, 0), db);
  sqlite3_close(db);
}

/* The rows that updates and deletes then write, in one transaction. */
static void insertRows(sqlite3 *db, int nRow){
  sqlite3_stmt *pStmt = 0;
  int i;
  check(sqlite3_prepare_v2(db, azWrite[0], -1, &pStmt, 0), db);
  check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db);
  for(i=0; i<nRow; i++){
    sqlite3_bind_int(pStmt, 1, i);
    check(sqlite3_step(pStmt), db);
    sqlite3_reset(pStmt);
  }
  check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db);
  sqlite3_finalize(pStmt);
}

/* bench_stamp --file VARIANT WRITE ROWS PATH: the file another program
** writes (Tests/bench/apple_versions_instructions.py, through another
** SQLite): made at PATH as for a count, with ROWS rows when WRITE updates
** or deletes; the write's statement is printed. */
static int fileOnly(char **argv){
  int variant = atoi(argv[2]), write = atoi(argv[3]), nRow = atoi(argv[4]);
  sqlite3 *db = 0;
  if( variant<0 || variant>=N_VARIANT || write<0 || write>2 || nRow<1 ) return 2;
  remove(argv[5]);
  makeFile(argv[5], variant, 0);
  check(sqlite3_open(argv[5], &db), db);
  if( write>0 ) insertRows(db, nRow);
  sqlite3_close(db);
  printf("%s\n", azWrite[write]);
  return 0;
}

int main(int argc, char **argv){
  sqlite3 *db = 0;
  sqlite3_stmt *pStmt = 0;
  int variant, write, nLayout, nRow;
  char zPath[64];
  if( argc==6 && strcmp(argv[1], "--file")==0 ) return fileOnly(argv);
  if( argc!=5 ){
    fprintf(stderr, "usage: bench_stamp VARIANT WRITE LAYOUT ROWS\n"
                    "       bench_stamp --file VARIANT WRITE ROWS PATH\n");
    return 2;
  }
  variant = atoi(argv[1]);
  write = atoi(argv[2]);
  nLayout = atoi(argv[3]);
  nRow = atoi(argv[4]);
  if( variant<0 || variant>=N_VARIANT || write<0 || write>2 || nLayout<0 || nRow<1 ) return 2;
  /* A path of the same length in every run: counts then repeat. */
  snprintf(zPath, sizeof(zPath), "/tmp/bench_stamp_%06d.db", (int)getpid() % 1000000);
  remove(zPath);
  /* The file is made by a child process, so that this one's heap is in
  ** the same state for every variant when it starts to write: glibc's
  ** malloc counts differently after other allocations, by a percent or
  ** two per row, which would measure the setup and not the triggers. */
  if( fork()==0 ){
    makeFile(zPath, variant, nLayout);
    _exit(0);
  }
  {
    int status = 0;
    if( wait(&status)<0 || !WIFEXITED(status) || WEXITSTATUS(status)!=0 ) return 1;
  }
  check(sqlite3_open(zPath, &db), db);
  if( aVariant[variant].isRegistered ) check(sqlitetriggers_register(db), db);
  check(sqlite3_exec(db, "PRAGMA synchronous = OFF", 0, 0, 0), db);
  if( write>0 ) insertRows(db, nRow);
  check(sqlite3_prepare_v2(db, azWrite[write], -1, &pStmt, 0), db);
  {
    sqlite3_stmt *pOrigin = 0;
    if( aVariant[variant].hasOrigin ){
      check(sqlite3_prepare_v2(db, "SELECT sqlitetriggers_log_origin('server')", -1, &pOrigin, 0), db);
    }
    measuredWrites(db, pStmt, nRow, pOrigin);
    sqlite3_finalize(pOrigin);
  }
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
