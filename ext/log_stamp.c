/*
** log_stamp.c: stamping the durable log's transactions, and their
** origins (durable_log.c, THE FORMAT: the tx column and the origins
** table).
**
** TRANSACTIONS
**   SQL has no transaction identity, so a trigger in plain SQL cannot stamp
**   one by itself.  The log's triggers write tx as
**       sqlite_compileoption_get(-7316)
**   which is SQLite's own function, and NULL for that argument, on a
**   connection without this extension: such a writer leaves tx NULL, and
**   consumers take such a change as a transaction of its own ("transaction
**   unknown").  Every connection with the extension overrides that one
**   function (every argument but this one and the probes' -7317 gives
**   SQLite's own result), and the override returns the transaction's
**   stamp: 63 random bits drawn when the transaction first writes a log
**   row, so one transaction's rows share a tx that no other transaction's
**   rows have (as UUIDs are unique: a repeat is a 2^-63 chance), with no
**   extra statement per change and no read of the log.  The override joins the transaction (as
**   swift_callback() does) to learn where it ends, and after it commits the
**   log's readers in other processes are woken (log_wakeup.c).  A hostile
**   file that calls the override elsewhere only reads that same stamp
**   (or the probes' kind, appendProbeCall()).
**   One more argument serves TOMBSTONES: -7319, the time; SQLite's own
**   function answers NULL to it.  Persistent rules (SQLiteTriggersGRDB's
**   RuleSet.installPersistently) stamp with the same expression, so every
**   writer of the file shares this one clock where the extension is.
**   A host whose SQLite omits the compile-option functions
**   (SQLITE_OMIT_COMPILEOPTION_DIAGS) could not run the triggers: install
**   refuses there.
**
** ORIGINS
**   A transaction may say where its writes come from ("server", for the
**   writes a sync downloads), so that a consumer can leave them out
**   instead of sending them back.  sqlitetriggers_log_origin(ORIGIN), run
**   by the app anywhere inside the transaction, writes a row of
**   sqlitetriggers_log_origins under the transaction's stamp: one
**   statement per marked transaction, nothing per change, and nothing for
**   a transaction without an origin.  Being data, it rolls back with the
**   savepoint that set it, and it is gone with the last change of its
**   transaction (COMPACTION).  A writer without the extension has no
**   stamp, so its changes are local.  No object of a file can set an
**   origin: the function is direct-only, and serves only the one
**   statement running, when it is nothing but the call
**   (logCalledByTheApp()), so that no object of a file can reach it and no
**   failure after the call can leave its mark behind.
*/
#include "log_internal.h"

#include <math.h>
#include <string.h>

/* ---- stamping transactions -------------------------------------------- */

/* The stamp of the current transaction (TRANSACTIONS), made once per
** transaction after joining it. */
static void logStamp(sqlite3_context *ctx, Connection *p){
  if( !sqlitetriggers_callback_is_enlisted(p)
   || p->logTransaction!=sqlitetriggers_callback_transaction(p) || p->logTransactionId==0 ){
    sqlite3_uint64 iStamp = 0;
    int rc = sqlitetriggers_callback_enlist(ctx, p);
    if( (rc & 0xff)==SQLITE_READONLY ){
      /* No transaction can write a log row here (a read-only file,
      ** mode=ro, PRAGMA query_only): a view or query that reads the stamp
      ** gets what SQLite's own function returns. */
      sqlite3_result_null(ctx);
      return;
    }
    if( rc!=SQLITE_OK ) return;
    /* 63 random bits, never 0: SQLite's generator (kernel-seeded, and
    ** never pinned by sqlitetriggers_seed_random()). */
    while( iStamp==0 ){
      sqlite3_randomness((int)sizeof(iStamp), &iStamp);
      iStamp &= 0x7fffffffffffffffULL;
    }
    p->logTransaction = sqlitetriggers_callback_transaction(p);
    p->logTransactionId = (sqlite3_int64)iStamp;
  }
  sqlite3_result_int64(ctx, p->logTransactionId);
}

/* A probe's kind (appendProbeCall()): 5 when this connection's REPLACE
** deletions fire DELETE triggers, else 4.  Evaluated only for a row a
** write conflicts with. */
static void logProbeKind(sqlite3_context *ctx){
  int rc = SQLITE_OK;
  char *zOn = sqlitetriggers_log_query_text(sqlite3_context_db_handle(ctx), "PRAGMA recursive_triggers", 0, &rc);
  if( rc==SQLITE_OK ){
    sqlite3_result_int(ctx, zOn && zOn[0]=='1' ? 5 : 4);
  }else{
    sqlite3_result_error_code(ctx, rc);
  }
  sqlite3_free(zOn);
}

/* TOMBSTONES: the time of a deletion (and a persistent rule's .now), as
** datetime_subsec() gives it. */
static void logTime(sqlite3_context *ctx, Connection *p){
  sqlite3_int64 iJD;
  char zOut[32];
  if( sqlitetriggers_compute_jd(ctx, p, "sqlitetriggers_log", 0, 0, &iJD)!=JD_OK ) return;
  sqlite3_result_text(ctx, zOut, sqlitetriggers_format_jd(iJD, zOut), SQLITE_TRANSIENT);
}

/* 1 when the transaction holds the write lock of a file with a log: main,
** or an attached file whose log's triggers call the stamp too (joining
** the transaction writes main, and so takes main's write lock: only for a
** write that logs).  Not TEMP, which is no file's log. */
static int logWritesAFile(sqlite3 *db){
  const char *zDb;
  int iDb;
  if( sqlite3_txn_state(db, "main")==SQLITE_TXN_WRITE ) return 1;
  for(iDb=2; (zDb = sqlite3_db_name(db, iDb))!=0; iDb++){
    if( sqlite3_txn_state(db, zDb)==SQLITE_TXN_WRITE ){
      sqlite3_stmt *pStmt = 0;
      char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE name = 'sqlitetriggers_log'", zDb);
      int hasLog = zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
                   && sqlite3_step(pStmt)==SQLITE_ROW;
      sqlite3_finalize(pStmt);
      sqlite3_free(zSql);
      if( hasLog ) return 1;
    }
  }
  return 0;
}

/* sqlite_compileoption_get(N): SQLite's own, but for LOG_STAMP_ARGUMENT,
** which is the transaction's stamp, LOG_PROBE_MODE_ARGUMENT, a probe's
** kind, and LOG_TIME_ARGUMENT, a tombstone's time. */
void sqlitetriggers_log_compileoption_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int eType = sqlite3_value_type(argv[0]);
  sqlite3_int64 iArg = eType==SQLITE_INTEGER ? sqlite3_value_int64(argv[0]) : 0;
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  (void)argc;
  if( eType==SQLITE_FLOAT && sqlite3_value_double(argv[0])==0.0 && signbit(sqlite3_value_double(argv[0])) ){
    /* A tombstone's -0.0 (appendExactReal()). */
    sqlite3_result_text(ctx, "-0", 2, SQLITE_STATIC);
  }else if( iArg==LOG_STAMP_ARGUMENT ){
    /* Only a write draws a stamp.  A log trigger runs inside a statement
    ** that already holds its file's write lock; a view or query reading
    ** the stamp in a read transaction gets SQLite's own answer, NULL,
    ** instead of joining the transaction, which would take the write lock
    ** and lock every other writer out until it ends. */
    if( sqlitetriggers_log_is_stamped(p) || logWritesAFile(sqlite3_context_db_handle(ctx)) ){
      logStamp(ctx, p);
    }else{
      sqlite3_result_null(ctx);
    }
  }else if( iArg==LOG_TIME_ARGUMENT ){
    logTime(ctx, p);
  }else if( iArg==LOG_PROBE_MODE_ARGUMENT ){
    logProbeKind(ctx);
  }else if( iArg==LOG_ORIGIN_WRITER_ARGUMENT ){
    if( p->isWritingOrigin ) sqlite3_result_int64(ctx, p->logTransactionId);
  }else{
    sqlite3_result_text(ctx, sqlite3_compileoption_get(sqlite3_value_int(argv[0])), -1, SQLITE_STATIC);
  }
}

/* 1 when the transaction committing on p wrote log rows. */
int sqlitetriggers_log_is_stamped(Connection *p){
  return p->logTransactionId!=0 && p->logTransaction==sqlitetriggers_callback_transaction(p);
}

/* 1 when a transaction is open; else 0 after setting zFunc's error. */
static int logInTransaction(sqlite3_context *ctx, const char *zFunc){
  if( !sqlite3_get_autocommit(sqlite3_context_db_handle(ctx)) ) return 1;
  sqlitetriggers_result_error(ctx, zFunc, "no transaction is open: call it after BEGIN, inside the "
                              "transaction it is about");
  return 0;
}

/* ORIGINS: the statements that set and clear the origin of the
** transaction stamped ?1, and read it; "since" is the log's end, before
** every change of the transaction. */
#define LOG_SET_ORIGIN \
  "INSERT OR IGNORE INTO main.\"sqlitetriggers_log_origins\" VALUES (?1, ?2, " LOG_END ")"
#define LOG_CHANGE_ORIGIN \
  "UPDATE main.\"sqlitetriggers_log_origins\" SET \"origin\" = ?2 WHERE \"tx\" = ?1"
#define LOG_CLEAR_ORIGIN \
  "DELETE FROM main.\"sqlitetriggers_log_origins\" WHERE \"tx\" = ?1"
#define LOG_GET_ORIGIN \
  "SELECT \"origin\" FROM main.\"sqlitetriggers_log_origins\" WHERE \"tx\" = ?1"

/*
** Runs zSql, one of the statements above, with the transaction's stamp as
** ?1 and pOrigin, if any, as ?2; the first column of its row, if any,
** becomes the function's result.  Errors are set on ctx; returns whether
** none was.  Without the table (no log in the file, or an earlier
** format), reading finds no origin, and writing fails.  One prepared
** statement per call: a statement kept past it would make the app's
** sqlite3_close() fail.
*/
static int logOriginStatement(sqlite3_context *ctx, const char *zFunc, const char *zSql,
                              int isRead, sqlite3_int64 iTx, sqlite3_value *pOrigin){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 lastRowid = sqlite3_last_insert_rowid(db);
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_ERROR ){
    /* The only way these statements fail to prepare: no such table. */
    if( isRead ) return 1;
    sqlitetriggers_result_error(ctx, zFunc, "this file has no durable log of format 2 to mark: "
                                "install one (sqlitetriggers_log_install) first");
    return 0;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int64(pStmt, 1, iTx);
  if( rc==SQLITE_OK && pOrigin ) rc = sqlite3_bind_value(pStmt, 2, pOrigin);
  if( rc==SQLITE_OK ){
    /* The origins table's guards let this statement, and only it, write. */
    p->isWritingOrigin = !isRead;
    rc = sqlitetriggers_result_first_column(ctx, pStmt);
    p->isWritingOrigin = 0;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  /* The app's last_insert_rowid() stays its own. */
  sqlite3_set_last_insert_rowid(db, lastRowid);
  if( rc!=SQLITE_OK ){
    char *zErr = rc==SQLITE_NOMEM ? 0 : sqlite3_mprintf("%s", sqlite3_errmsg(db));
    sqlitetriggers_log_report(ctx, zFunc, rc, zErr);
    sqlite3_free(zErr);
  }
  return rc==SQLITE_OK;
}

/*
** 1 when the app called zFunc itself, alone: the one statement running is
** nothing but the call, SELECT zFunc(...) (sqlitetriggers_sql_is_lone_call()),
** and reads only.  Else 0 with zFunc's error set.  Alone, because the mark
** is a row written by a statement of our own, which a failure of the
** caller's statement after the call (another column's error, a later
** row's) would not roll back; and the one statement, because an object of
** a file that escapes the direct-only rule (an index's expression, a
** CHECK or a generated column parsed before the function existed) runs
** inside a statement that reads or writes a table: beside the app's call
** (its cursor still open), or as that statement (then not a lone call).
** The argument of a lone call is the app's own SQL.  The schema guard, a
** few PRAGMAs on every call, would cost a marked transaction more than
** the mark: it runs only to name the object of a refusal.
*/
static int logCalledByTheApp(sqlite3_context *ctx, const char *zFunc){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *pStmt = 0, *pRunning = 0;
  int nRunning = 0;
  while( (pStmt = sqlite3_next_stmt(db, pStmt))!=0 ){
    if( sqlite3_stmt_busy(pStmt) ){ pRunning = pStmt; nRunning++; }
  }
  if( nRunning==1 && sqlite3_stmt_readonly(pRunning)
   && sqlitetriggers_sql_is_lone_call(sqlite3_sql(pRunning), zFunc) ){
    return 1;
  }
  if( sqlitetriggers_schema_guard_call(ctx, zFunc) ){
    sqlitetriggers_result_error(ctx, zFunc, "call it alone, in a SELECT of the app's own: "
        "SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could "
        "fail after the mark, and no other statement running; a statement that writes, a view, an index, "
        "a CHECK or a generated column cannot call it)");
  }
  return 0;
}

/*
** sqlitetriggers_log_origin(ORIGIN) and sqlitetriggers_log_origin(): the
** origin of the current transaction (ORIGINS), kept in the file under its
** stamp, so that it lasts as long as the transaction's changes, and rolls
** back with the savepoint that set it.
*/
void sqlitetriggers_log_origin_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char zFunc[] = "sqlitetriggers_log_origin";
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  int isClear;
  if( argc==0 ){
    /* Not stamped yet: no origin, and nothing drawn for a question. */
    if( !sqlite3_get_autocommit(db) && sqlitetriggers_log_is_stamped(p) ){
      logOriginStatement(ctx, zFunc, LOG_GET_ORIGIN, 1, p->logTransactionId, 0);
    }
    return;
  }
  if( !logCalledByTheApp(ctx, zFunc) || !logInTransaction(ctx, zFunc) ) return;
  isClear = sqlite3_value_type(argv[0])==SQLITE_NULL;
  if( !isClear ){
    const char *zOrigin = sqlitetriggers_name_argument(ctx, zFunc, argv[0], "an origin (text, or NULL for local)");
    if( zOrigin==0 ) return;
    if( zOrigin[0]==0 ){
      sqlitetriggers_result_error(ctx, zFunc, "an origin cannot be empty: pass NULL for local changes");
      return;
    }
  }
  if( sqlite3_db_readonly(db, "main")==1 ){
    sqlitetriggers_result_error(ctx, zFunc, "this connection is read-only: its transactions log nothing");
    return;
  }
  /* The stamp, drawn now if need be; an error joining is set on ctx. */
  logStamp(ctx, p);
  if( !sqlitetriggers_log_is_stamped(p) ) return;
  sqlite3_result_null(ctx);
  if( isClear ){
    logOriginStatement(ctx, zFunc, LOG_CLEAR_ORIGIN, 0, p->logTransactionId, 0);
  }else{
    /* Set once per transaction, as a rule: changing it is the rare case.
    ** A mark neither written nor changed (an object of the file in the
    ** way, which the check names) is an error, never a silent success. */
    if( logOriginStatement(ctx, zFunc, LOG_SET_ORIGIN, 0, p->logTransactionId, argv[0])
     && (sqlite3_changes(db)>0
         || logOriginStatement(ctx, zFunc, LOG_CHANGE_ORIGIN, 0, p->logTransactionId, argv[0])) ){
      if( sqlite3_changes(db)>0 ){
        sqlite3_result_value(ctx, argv[0]);
      }else{
        sqlitetriggers_result_error(ctx, zFunc, "the mark could not be written (sqlitetriggers_log_origins "
            "took no row): run sqlitetriggers_log_check(), which names the object of the file in the way");
      }
    }
  }
}

void sqlitetriggers_log_transaction_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char zFunc[] = "sqlitetriggers_log_transaction";
  (void)argc; (void)argv;
  if( !logInTransaction(ctx, zFunc) ) return;
  logStamp(ctx, (Connection*)sqlite3_user_data(ctx));
}

void sqlitetriggers_log_stamp_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_int(ctx, 1);
}
