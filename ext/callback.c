/*
** callback.c: swift_callback(), transaction-exact notifications from
** trigger bodies.
**
**   swift_callback(NAME, ARG1, ..., ARGn)
**       NAME must be non-NULL text; anything else is the error
**       "swift_callback: the first argument must be the callback's name
**       (text)".  0 to 126 further arguments of any type follow.
**       SQLITE_DIRECTONLY: TEMP triggers and top-level SQL may call it; a
**       trigger, view or default stored in a database file never can,
**       whatever PRAGMA trusted_schema says.
**
**       Immediate observers of NAME (or of every name) run at once, in
**       registration order.  One may set the result; without one the result
**       is NULL.  One may refuse: the statement then fails with its message
**       and the extended code SQLITE_CONSTRAINT_FUNCTION, exactly as a
**       RAISE(ABORT) would, and later observers are not called.
**
**       The event is then kept with the current transaction, and only when
**       that transaction commits does it get its sequence number (1, 2, ...
**       per connection), enter the log, and wait for delivery to the
**       after-commit observers.  Events are dropped, never delivered, when
**       their statement fails (and SQLite rolls it back), on ROLLBACK TO a
**       savepoint opened before them, on ROLLBACK, RAISE(ROLLBACK) and a
**       failed COMMIT.  A statement outside BEGIN is its own transaction.
**       A read-only statement (a top-level SELECT) outside BEGIN writes
**       nothing that could roll back, so its events commit at once.
**       It is an error on a read-only connection (the main database
**       opened read-only, as GRDB opens a pool's readers), where no commit
**       would ever deliver the event, and on a connection in PRAGMA
**       query_only mode when it joins a transaction; a transaction it
**       joined before query_only was set keeps recording, and commits.
**       A name containing NUL is an error.
**
**       The guard of schema_guard.c runs when it joins a transaction.
**       Joining counts no change: last_insert_rowid() and total_changes()
**       stay the app's; changes() reads 0 after a top-level
**       SELECT swift_callback(...), the one statement that shows it.
**       An event comes from a trigger (exact: the statement's own
**       savepoint drops it when the statement fails) or from a direct call
**       in top-level SQL; a direct call in a statement that fails inside
**       BEGIN without a statement savepoint (a SELECT failing after the
**       call; a one-row INSERT, into a table without triggers, failing a
**       UNIQUE constraint) keeps its event, since SQLite tells a virtual
**       table nothing of such a failure.
**
**       After-commit delivery stops, returning SQLITE_ABORT, when an
**       observer closes the connection; the events not yet delivered are
**       dropped with it.  Registering the extension again keeps them.
**
**   swift_callback_log (eponymous virtual table, read-only)
**       SELECT seq, name, args, tx FROM swift_callback_log
**       The last committed events of this connection, oldest first: what
**       an after-commit observer receives.  tx numbers the commits that
**       made events (1, 2, ... per connection): one transaction's events
**       are the run with the same tx.  The capacity defaults to 1000
**       events, the oldest dropped first.  args is a JSON array: NULL,
**       integers, reals and text as JSON, and a blob as {"blob":"<hex>"}
**       with lowercase hex digits.
**
**   swift_callback_log_capacity(N)
**       Sets the log's capacity to N events (0 disables the log) and returns
**       N; without argument, returns the capacity.  SQLITE_DIRECTONLY.
**       The log's memory grows as it fills, so a large N costs nothing
**       until that many events committed.
**
**   swift_callback_pending (eponymous virtual table)
**       SELECT seq, name, args FROM swift_callback_pending
**       The events of the open transaction, not yet committed (seq and tx
**       NULL).
**       Writes are refused: swift_callback() alone writes it, once per
**       transaction, because a nested INSERT is how a virtual table joins a
**       transaction.  From then on SQLite reports every savepoint, release,
**       rollback and commit to it (xSavepoint, xRelease, xRollbackTo,
**       xRollback, xSync, xCommit), with no commit, rollback or update hook,
**       which GRDB owns.  It is eponymous, so that loading the extension
**       makes no schema object (a TEMP table made later, inside the
**       transaction that first needs it, would miss the savepoints already
**       open: SQLite reports those only to tables that joined by a write).
**       Being main's, the write that joins takes main's write lock: free
**       for a trigger on a main table, whose write holds it already; a
**       direct call, or a trigger on a TEMP or attached table, takes it as
**       any write to main would (and waits on the busy handler).  That
**       INSERT stays prepared from one transaction to the next (its
**       prepare was 16,000 to 19,000 instructions of every transaction); the
**       sqlite3_next_stmt() list shows it.
**
**   swift_callback_keeper (eponymous virtual table, never read)
**       Connected at the first join, so that sqlite3_close(), which
**       disconnects every virtual table before it looks for unfinalized
**       statements, finalizes the kept INSERT in its xDisconnect
**       (callback_tables.c).  No statement can read it (its xBestIndex
**       refuses), so none holds it connected past that.  A table of the
**       file of that name hides it: each join then prepares and finalizes
**       its own.  A host that finalizes every statement of its connection
**       finalizes the kept one too, and the next join prepares it again,
**       as it does when the host's statements prepared since have sunk it
**       past the first ENLIST_NEAR of the list (a join never walks them
**       all).
**
**   swift_callback_batch (eponymous virtual table, read-only)
**       SELECT seq, name, argc, arg1, ..., arg126, tx FROM swift_callback_batch
**       Inside a batch observer's call (sqlitetriggers_observe_after_commit_
**       batch()), the committed events that call is about, in commit
**       order; empty anywhere else.  argc is how many arguments follow the
**       name; argN is the Nth, with its own type, NULL past the last.  So
**       a host decodes a round of events with one ordinary statement, as
**       it would decode rows of a table.  A statement still open after the
**       call reads no further rows.  SQLITE_VTAB_DIRECTONLY.
**
** The files: callback_internal.h lists them.  Delivery to after-commit
** observers happens in sqlitetriggers_deliver() (callback_delivery.c),
** not in xCommit: xCommit runs inside sqlite3_step(), where an observer
** could not use the connection.  The host calls sqlitetriggers_deliver()
** once a statement has finished (SQLiteTriggersGRDB's CallbackDeliverer,
** Sources/SQLiteTriggersGRDB/Callbacks/CallbackDeliverer.swift, does it when
** GRDB reports the commit); observers may then read and write the database, and
** events their writes commit are delivered by the same call, in order.
*/
#include "callback_internal.h"

#include <assert.h>

#define NAME_ERROR \
  "swift_callback: the first argument must be the callback's name (text)"

/* How far down the connection's statements a join looks for its kept
** INSERT before it prepares it again. */
#define ENLIST_NEAR 16

/* After a join: the INSERT is kept for the next transaction when it went
** to our table and swift_callback_keeper is connected (a table of the
** file of that name hides it: then each join prepares its own). */
static void keepOrFinalize(Connection *p, sqlite3_stmt *pStmt){
  CallbackState *pState = p->pCallbacks;
  if( pState->hasBegun && !pState->isKeeperConnected && !pState->isKeeperTried ){
    /* Its xConnect runs, then its xBestIndex refuses: no statement. */
    sqlite3_stmt *pConnect = 0;
    pState->isKeeperTried = 1;
    sqlite3_prepare_v2(p->db, "SELECT 1 FROM main.swift_callback_keeper", -1, &pConnect, 0);
    sqlite3_finalize(pConnect);
  }
  if( pState->hasBegun && pState->isKeeperConnected ){
    pState->pEnlist = pStmt;
  }else{
    sqlite3_finalize(pStmt);
  }
}

/* Joins the transaction with our nested INSERT (see the top of the
** file).  SQLITE_OK, or an error code with *pzErr (sqlite3_free it) saying
** why; SQLITE_READONLY when the connection can never commit here. */
static int enlistOrExplain(Connection *p, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 lastRowid;
  int rc;
  *pzErr = 0;
  if( sqlite3_db_readonly(p->db, "main")==1 ){
    /* Said plainly: the nested INSERT would fail with SQLite's bare
    ** "attempt to write a readonly database". */
    *pzErr = sqlite3_mprintf("swift_callback: cannot record an event on a "
                             "read-only connection: events are delivered "
                             "after commit, and it never commits");
    return SQLITE_READONLY;
  }
  /* The INSERT begins the table's transaction (xBegin), then its row is
  ** ignored (pendingUpdate): no change is counted, so total_changes() and
  ** last_insert_rowid() stay the app's own.  changes() is still set to 0
  ** by this statement's end; a trigger's statement sets it again at its
  ** own end, so only a top-level SELECT swift_callback(...) shows it. */
  lastRowid = sqlite3_last_insert_rowid(p->db);
  pStmt = p->pCallbacks->pEnlist;
  p->pCallbacks->pEnlist = 0;
  if( pStmt && !sqlitetriggers_is_statement_of(p->db, pStmt, SQLITETRIGGERS_ENLIST_SQL, ENLIST_NEAR) ){
    /* Finalized by the host, or sunk under the statements it prepared
    ** since (each join would walk them all): prepared again, it is
    ** first in the list. */
    if( sqlitetriggers_is_statement_of(p->db, pStmt, SQLITETRIGGERS_ENLIST_SQL, -1) ) sqlite3_finalize(pStmt);
    pStmt = 0;
  }
  rc = pStmt ? SQLITE_OK : sqlite3_prepare_v3(p->db, SQLITETRIGGERS_ENLIST_SQL, -1, SQLITE_PREPARE_PERSISTENT, &pStmt, 0);
  if( rc==SQLITE_OK ){
    p->pCallbacks->isEnlisting = 1;
    p->pCallbacks->hasBegun = 0;
    rc = sqlite3_step(pStmt);
    p->pCallbacks->isEnlisting = 0;
    rc = sqlite3_reset(pStmt);
    keepOrFinalize(p, pStmt);
  }
  sqlite3_set_last_insert_rowid(p->db, lastRowid);
  if( rc==SQLITE_OK && !p->pCallbacks->hasBegun ){
    /* The INSERT went to a table of that name in main, which hides the
    ** eponymous one (the schema guard names such a table first). */
    *pzErr = sqlite3_mprintf("swift_callback: main.swift_callback_pending is not the "
                             "extension's table, and events could not join the transaction: "
                             "drop or rename it");
    return SQLITE_ERROR;
  }
  if( rc!=SQLITE_OK ){
    *pzErr = (rc & 0xff)==SQLITE_READONLY
      ? sqlite3_mprintf("swift_callback: cannot record an event on a "
                        "read-only connection (PRAGMA query_only?)")
      : sqlite3_mprintf("swift_callback: cannot join the transaction: %s",
                        sqlite3_errmsg(p->db));
  }
  return rc;
}

/* enlistOrExplain(), its error set on ctx. */
static int enlist(sqlite3_context *ctx, Connection *p){
  char *zErr = 0;
  int rc = enlistOrExplain(p, &zErr);
  if( rc!=SQLITE_OK ){
    sqlite3_result_error(ctx, zErr ? zErr : "swift_callback", -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zErr);
  }
  return rc;
}

/* The door every function that delivers goes through: the schema guard,
** then the transaction joined.  Once per transaction (ATTACH, the only way
** a new file's schema comes in, is impossible inside one), but never
** skipped because the transaction was joined some other way: the log's
** stamp enlists without the guard (a file's own triggers call it), and a
** file that reaches the stamp first must still meet the guard here. */
int sqlitetriggers_callback_join(sqlite3_context *ctx, Connection *p,
                                 const char *zFunc){
  CallbackState *pState = p->pCallbacks;
  if( pState->isGuarded ) return 1;
  if( !sqlitetriggers_schema_guard_call(ctx, zFunc) ) return 0;
  if( !pState->isEnlisted && enlist(ctx, p)!=SQLITE_OK ) return 0;
  sqlitetriggers_schema_guard_joined(p);
  /* An autocommit statement's enlisting INSERT commits at once (and
  ** ends the transaction): then nothing is left to remember. */
  pState->isGuarded = pState->isEnlisted;
  return 1;
}

/* Joins the transaction without the schema guard, for callers that
** deliver nothing (log_stamp.c's stamp; a caller that delivers joins
** through sqlitetriggers_callback_join(), which guards even then): SQLITE_OK, SQLITE_READONLY
** (nothing set on ctx: the caller decides) or another error, set on ctx. */
int sqlitetriggers_callback_enlist(sqlite3_context *ctx, Connection *p){
  char *zErr = 0;
  int rc;
  if( p->pCallbacks->isEnlisted ) return SQLITE_OK;
  rc = enlistOrExplain(p, &zErr);
  if( rc!=SQLITE_OK && (rc & 0xff)!=SQLITE_READONLY ){
    sqlite3_result_error(ctx, zErr ? zErr : "swift_callback", -1);
    sqlite3_result_error_code(ctx, rc);
  }
  sqlite3_free(zErr);
  return rc;
}

/* Joins the transaction for a caller that only wants its rollbacks seen
** (log_check.c's check, to remember what it found): no error is set. */
int sqlitetriggers_callback_enlist_quietly(Connection *p){
  char *zErr = 0;
  int rc;
  if( p->pCallbacks->isEnlisted ) return SQLITE_OK;
  rc = enlistOrExplain(p, &zErr);
  sqlite3_free(zErr);
  return rc;
}

int sqlitetriggers_callback_is_enlisted(Connection *p){
  return p->pCallbacks->isEnlisted;
}

sqlite3_int64 sqlitetriggers_callback_transaction(Connection *p){
  return p->pCallbacks->iTransaction;
}

/* The capture of zTable cannot be exact in this transaction, for zReason
** (a static string): the transaction must not commit, and its COMMIT fails
** with rc.  The first reason stays. */
void sqlitetriggers_callback_spoil(Connection *p, const char *zTable, int rc,
                                   const char *zReason){
  CallbackState *pState = p->pCallbacks;
  if( pState->zSpoiledBy[0] ) return;
  sqlite3_snprintf((int)sizeof(pState->zSpoiledBy), pState->zSpoiledBy, "%s", zTable);
  if( pState->zSpoiledBy[0]==0 ) memcpy(pState->zSpoiledBy, "?", 2);
  pState->zSpoiledReason = zReason;
  pState->spoiledRc = rc;
}

/* Keeps a captured change with the open transaction (the caller checked
** that it is enlisted); SQLITE_NOMEM when out of memory. */
/* A copy of the event aView describes, appended to pList. */
static int eventAppend(CallbackState *pState, EventList *pList, const char *zName, int nName,
                       int nArg, const ArgView *aView){
  StoredEvent *pEv;
  if( sqlitetriggers_event_list_reserve(pList, 1)!=SQLITE_OK ) return SQLITE_NOMEM;
  pEv = sqlitetriggers_stored_event_create(&pState->pChunk, zName, nName, nArg, aView);
  if( pEv==0 ) return SQLITE_NOMEM;
  pList->a[pList->n++] = pEv;
  return SQLITE_OK;
}

int sqlitetriggers_callback_record(Connection *p, const char *zName, int nName,
                                   int nArg, const ArgView *aView){
  assert( p->pCallbacks->isEnlisted );
  return eventAppend(p->pCallbacks, &p->pCallbacks->pending, zName, nName, nArg, aView);
}

/* An event made at xSync that joins the transaction's when it commits
** (change_net.c); a commit that fails at xSync drops them, at the next
** xSync or the rollback (sqlitetriggers_callback_forget_at_commit). */
int sqlitetriggers_callback_record_at_commit(Connection *p, const char *zName, int nName,
                                             int nArg, const ArgView *aView){
  return eventAppend(p->pCallbacks, &p->pCallbacks->atCommit, zName, nName, nArg, aView);
}

int sqlitetriggers_callback_pending_count(Connection *p){
  return p->pCallbacks->pending.n;
}

/* Pending event iEvent again, argument iArg replaced by pValue, if it is
** still pending and named zName (a savepoint may have dropped it since);
** SQLITE_NOMEM when out of memory. */
int sqlitetriggers_callback_patch_pending(Connection *p, int iEvent, const char *zName,
                                          int iArg, sqlite3_value *pValue){
  CallbackState *pState = p->pCallbacks;
  ArgView aView[SQLITETRIGGERS_MAX_CALLBACK_ARGS];
  StoredEvent *pOld, *pNew;
  int i;
  if( iEvent<0 || iEvent>=pState->pending.n ) return SQLITE_OK;
  pOld = pState->pending.a[iEvent];
  if( strcmp(pOld->event.zName, zName)!=0 || iArg>=pOld->event.nArg ) return SQLITE_OK;
  for(i=0; i<pOld->event.nArg; i++){
    const StoredArg *pArg = &sqlitetriggers_event_args(&pOld->event)[i];
    aView[i].eType = pArg->eType;
    aView[i].nByte = pArg->nByte;
    aView[i].z = (pArg->eType==SQLITE_TEXT || pArg->eType==SQLITE_BLOB) ? pArg->u.z : 0;
    if( pArg->eType==SQLITE_INTEGER ) aView[i].u.i = pArg->u.i;
    if( pArg->eType==SQLITE_FLOAT ) aView[i].u.r = pArg->u.r;
  }
  if( !sqlitetriggers_arg_view_read(&aView[iArg], pValue) ) return SQLITE_NOMEM;
  pNew = sqlitetriggers_stored_event_create(&pState->pChunk, pOld->event.zName,
                                            (int)strlen(pOld->event.zName), pOld->event.nArg, aView);
  if( pNew==0 ) return SQLITE_NOMEM;
  pState->pending.a[iEvent] = pNew;
  sqlitetriggers_stored_event_release(pOld);
  return SQLITE_OK;
}

void sqlitetriggers_callback_forget_at_commit(Connection *p){
  sqlitetriggers_event_list_truncate(&p->pCallbacks->atCommit, 0);
}

static void swiftCallbackFunc(sqlite3_context *ctx, int argc,
                              sqlite3_value **argv){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  CallbackState *pState = p->pCallbacks;
  const char *zName;
  StoredEvent *pEv;
  int nName;
  if( argc<1 || sqlite3_value_type(argv[0])!=SQLITE_TEXT ){
    sqlite3_result_error(ctx, NAME_ERROR, -1);
    return;
  }
  if( argc-1>SQLITETRIGGERS_MAX_CALLBACK_ARGS ){
    sqlite3_result_error(ctx, "swift_callback: at most 126 arguments may "
                              "follow the name", -1);
    return;
  }
  zName = (const char*)sqlite3_value_text(argv[0]);
  if( zName==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  nName = sqlite3_value_bytes(argv[0]);
  if( (int)strlen(zName)!=nName ){
    sqlite3_result_error(ctx, "swift_callback: the callback's name contains "
                              "a NUL character", -1);
    return;
  }
  if( !pState->isGuarded && !sqlitetriggers_callback_join(ctx, p, "swift_callback") ) return;
  /* The copy the log and after-commit observers keep is what immediate
  ** observers read too: stored arguments are read faster than SQLite's
  ** values.  It joins the transaction's events only after them, so that
  ** events their own statements fire come first, as they happened. */
  {
    ArgView aView[SQLITETRIGGERS_MAX_CALLBACK_ARGS];
    int i;
    for(i=1; i<argc; i++){
      if( !sqlitetriggers_arg_view_read(&aView[i-1], argv[i]) ){
        sqlite3_result_error_nomem(ctx);
        return;
      }
    }
    pEv = sqlitetriggers_stored_event_create(&pState->pChunk, zName, nName, argc - 1, aView);
  }
  if( pEv==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( pState->nImmediate>0 && sqlitetriggers_dispatch_immediate(ctx, pState, &pEv->event) ){
    sqlitetriggers_stored_event_release(pEv);
    return;
  }
  if( pState->isEnlisted ){
    if( sqlitetriggers_event_list_reserve(&pState->pending, 1)!=SQLITE_OK ){
      sqlitetriggers_stored_event_release(pEv);
      sqlite3_result_error_nomem(ctx);
      return;
    }
    pState->pending.a[pState->pending.n++] = pEv;
  }else{
    /* Our INSERT was the only writer of a statement outside BEGIN, and
    ** committed as it finished: nothing this statement does can roll back
    ** the event. */
    if( sqlitetriggers_commit_reserve(pState, 1)!=SQLITE_OK ){
      sqlitetriggers_stored_event_release(pEv);
      sqlite3_result_error_nomem(ctx);
      return;
    }
    pState->lastCommit++;
    sqlitetriggers_commit_event(pState, pEv, sqlitetriggers_has_after_commit_observer(pState), 1);
  }
}

static void logCapacityFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  if( argc>1 ){
    sqlite3_result_error(ctx, "swift_callback_log_capacity: takes one "
                              "capacity, or none to read it", -1);
    return;
  }
  if( !sqlitetriggers_schema_guard_call(ctx, "swift_callback_log_capacity") ){
    return;
  }
  if( argc==1 ){
    int rc;
    if( sqlite3_value_type(argv[0])!=SQLITE_INTEGER
     || sqlite3_value_int64(argv[0])<0
     || sqlite3_value_int64(argv[0])>100000000 ){
      sqlite3_result_error(ctx, "swift_callback_log_capacity: the capacity "
                                "must be an integer from 0 to 100000000", -1);
      return;
    }
    rc = sqlitetriggers_set_callback_log_capacity(p->db,
                                                  sqlite3_value_int(argv[0]));
    if( rc!=SQLITE_OK ){
      sqlite3_result_error_code(ctx, rc);
      return;
    }
  }
  sqlite3_result_int(ctx, p->pCallbacks->nLogCapacity);
}

/* isNew: p is a new state, whose modules and table are made here; a state
** registered again keeps them (sqlitetriggers.c). */
int sqlitetriggers_register_callback_functions(sqlite3 *db, Connection *p, int isNew){
  int rc = SQLITE_OK;
  if( isNew ){
    p->nRef += 2;
    rc = sqlite3_create_module_v2(db, "swift_callback_log", &sqlitetriggers_log_module, p,
                                  sqlitetriggers_connection_release);
    if( rc==SQLITE_OK ){
      rc = sqlite3_create_module_v2(db, "swift_callback_pending", &sqlitetriggers_pending_module,
                                    p, sqlitetriggers_connection_release);
    }else{
      sqlitetriggers_connection_release(p);     /* the second module's reference */
    }
    if( rc==SQLITE_OK ){
      p->nRef++;
      rc = sqlite3_create_module_v2(db, "swift_callback_batch", &sqlitetriggers_batch_module, p,
                                    sqlitetriggers_connection_release);
    }
    if( rc==SQLITE_OK ){
      p->nRef++;
      rc = sqlite3_create_module_v2(db, "swift_callback_keeper", &sqlitetriggers_keeper_module, p,
                                    sqlitetriggers_connection_release);
    }
  }
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "swift_callback", -1, SQLITE_DIRECTONLY,
                                  p, swiftCallbackFunc);
  }
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "swift_callback_log_capacity", -1,
                                  SQLITE_DIRECTONLY, p, logCapacityFunc);
  }
  return rc;
}
