/*
** callback_tables.c: swift_callback_log and swift_callback_pending
** (their specification is at the top of callback.c), and
** swift_callback_keeper.
**
** Both read the connection's events with one cursor; the pending table is
** also the one swift_callback() writes once per transaction to join it,
** and so the one SQLite reports savepoints, commits and rollbacks to.
** The keeper is never read (its xBestIndex refuses): its xDisconnect,
** which sqlite3_close() runs
** before it checks for unfinalized statements, finalizes the joining
** INSERT that callback.c keeps prepared (a prepare per transaction was
** about 19,000 instructions).  The pending table cannot do it: the kept
** statement holds a reference to it, so its xDisconnect waits for the
** statement.
*/
#include "callback_internal.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>

typedef struct EventCursor EventCursor;
struct EventCursor {
  sqlite3_vtab_cursor base;
  int iRow;
};

/* A direct-only table of one of our modules, declared by zDecl. */
int sqlitetriggers_event_table_declare(sqlite3 *db, void *pAux, const char *zDecl,
                             int isLog, sqlite3_vtab **ppVtab){
  EventTable *pTab;
  int rc = sqlite3_declare_vtab(db, zDecl);
  if( rc!=SQLITE_OK ) return rc;
  sqlite3_vtab_config(db, SQLITE_VTAB_DIRECTONLY);
  pTab = sqlite3_malloc(sizeof(*pTab));
  if( pTab==0 ) return SQLITE_NOMEM;
  memset(pTab, 0, sizeof(*pTab));
  pTab->p = (Connection*)pAux;
  pTab->isLog = isLog;
  *ppVtab = &pTab->base;
  return SQLITE_OK;
}

static int eventTableConnect(sqlite3 *db, void *pAux, int argc,
                             const char *const*argv, sqlite3_vtab **ppVtab,
                             char **pzErr, int isLog){
  (void)argc; (void)argv; (void)pzErr;
  /* The EVENT_COLUMN_... numbers (callback_internal.h) follow this
  ** declaration. */
  return sqlitetriggers_event_table_declare(db, pAux,
      "CREATE TABLE x(seq INTEGER, name TEXT, args TEXT, tx INTEGER)", isLog, ppVtab);
}

static int logConnect(sqlite3 *db, void *pAux, int argc,
                      const char *const*argv, sqlite3_vtab **ppVtab,
                      char **pzErr){
  return eventTableConnect(db, pAux, argc, argv, ppVtab, pzErr, 1);
}

static int pendingConnect(sqlite3 *db, void *pAux, int argc,
                          const char *const*argv, sqlite3_vtab **ppVtab,
                          char **pzErr){
  int rc = eventTableConnect(db, pAux, argc, argv, ppVtab, pzErr, 0);
  /* So that OR IGNORE applies to enlist()'s row; see pendingUpdate(). */
  if( rc==SQLITE_OK ) sqlite3_vtab_config(db, SQLITE_VTAB_CONSTRAINT_SUPPORT, 1);
  return rc;
}

int sqlitetriggers_event_table_disconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab->zErrMsg);    /* one SQLite did not take */
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

int sqlitetriggers_event_table_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  (void)pVtab;
  pInfo->estimatedCost = 1000.0;
  return SQLITE_OK;
}

/* A zeroed cursor of nByte bytes, for either kind of table. */
int sqlitetriggers_vtab_cursor_open(int nByte, sqlite3_vtab_cursor **ppCur){
  sqlite3_vtab_cursor *pCur = sqlite3_malloc(nByte);
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, nByte);
  *ppCur = pCur;
  return SQLITE_OK;
}

static int eventCursorOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  (void)pVtab;
  return sqlitetriggers_vtab_cursor_open(sizeof(EventCursor), ppCur);
}

static int eventCursorClose(sqlite3_vtab_cursor *pCur){
  sqlite3_free(pCur);
  return SQLITE_OK;
}

static int eventCursorFilter(sqlite3_vtab_cursor *pCur, int idxNum,
                             const char *idxStr, int argc, sqlite3_value **argv){
  (void)idxNum; (void)idxStr; (void)argc; (void)argv;
  ((EventCursor*)pCur)->iRow = 0;
  return SQLITE_OK;
}

static int eventCursorNext(sqlite3_vtab_cursor *pCur){
  ((EventCursor*)pCur)->iRow++;
  return SQLITE_OK;
}

/* The cursor's event, or NULL past the end. */
static StoredEvent *eventCursorEvent(sqlite3_vtab_cursor *pCur){
  EventTable *pTab = (EventTable*)pCur->pVtab;
  CallbackState *pState = pTab->p->pCallbacks;
  int iRow = ((EventCursor*)pCur)->iRow;
  if( pTab->isLog ){
    if( iRow>=pState->nLog ) return 0;
    return pState->aLog[sqlitetriggers_log_slot(pState, iRow)];
  }
  return iRow<pState->pending.n ? pState->pending.a[iRow] : 0;
}

static int eventCursorEof(sqlite3_vtab_cursor *pCur){
  return eventCursorEvent(pCur)==0;
}

static int eventCursorRowid(sqlite3_vtab_cursor *pCur, sqlite3_int64 *pRowid){
  *pRowid = ((EventCursor*)pCur)->iRow + 1;
  return SQLITE_OK;
}

/*
** The well-formed UTF-8 sequence at z (n bytes remain): its length as a
** positive number; or, when it is not one, minus the length of its
** maximal subpart (the bytes that began it well, at least 1), which
** decoders replace by one U+FFFD (Unicode's recommended practice, as
** Python and browsers do).  Overlong forms, surrogates and code points past
** U+10FFFF are not well formed.
*/
static int utf8Sequence(const unsigned char *z, int n){
  unsigned char c = z[0], lo = 0x80, hi = 0xbf;
  int nSeq, i;
  if( c<0x80 ) return 1;
  if( c>=0xc2 && c<=0xdf ) nSeq = 2;
  else if( c>=0xe0 && c<=0xef ) nSeq = 3;
  else if( c>=0xf0 && c<=0xf4 ) nSeq = 4;
  else return -1;
  /* The second byte's range excludes overlong forms and surrogates. */
  if( c==0xe0 ) lo = 0xa0;
  else if( c==0xed ) hi = 0x9f;
  else if( c==0xf0 ) lo = 0x90;
  else if( c==0xf4 ) hi = 0x8f;
  for(i=1; i<nSeq; i++){
    if( i>=n || z[i]<lo || z[i]>hi ) return -i;
    lo = 0x80;
    hi = 0xbf;
  }
  return nSeq;
}

/* z[0..n) as a JSON string.  JSON text is Unicode: what is not
** well-formed UTF-8 becomes U+FFFD, as a decoder would show it. */
static void appendJsonString(sqlite3_str *pOut, const unsigned char *z,
                             int n){
  int i = 0;
  sqlite3_str_appendchar(pOut, 1, '"');
  while( i<n ){
    unsigned char c = z[i];
    int nSeq;
    switch( c ){
      case '"':  sqlite3_str_appendall(pOut, "\\\""); i++; continue;
      case '\\': sqlite3_str_appendall(pOut, "\\\\"); i++; continue;
      case '\n': sqlite3_str_appendall(pOut, "\\n"); i++; continue;
      case '\r': sqlite3_str_appendall(pOut, "\\r"); i++; continue;
      case '\t': sqlite3_str_appendall(pOut, "\\t"); i++; continue;
    }
    if( c<0x20 ){
      sqlite3_str_appendf(pOut, "\\u%04x", c);
      i++;
    }else if( (nSeq = utf8Sequence(z + i, n - i))>0 ){
      sqlite3_str_append(pOut, (const char*)z + i, nSeq);
      i += nSeq;
    }else{
      sqlite3_str_appendall(pOut, "\\ufffd");
      i -= nSeq;
    }
  }
  sqlite3_str_appendchar(pOut, 1, '"');
}

/* The arguments of pEv as a JSON array (see swift_callback_log at the top
** of callback.c). */
static char *eventArgsJson(sqlite3 *db, const sqlitetriggers_event *pEv){
  sqlite3_str *pOut = sqlite3_str_new(db);
  int i, j;
  sqlite3_str_appendchar(pOut, 1, '[');
  for(i=0; i<pEv->nArg; i++){
    const StoredArg *pArg = &sqlitetriggers_event_args(pEv)[i];
    if( i ) sqlite3_str_appendchar(pOut, 1, ',');
    switch( pArg->eType ){
      case SQLITE_INTEGER: sqlite3_str_appendf(pOut, "%lld", pArg->u.i); break;
      case SQLITE_FLOAT:
        if( isnan(pArg->u.r) ){
          sqlite3_str_appendall(pOut, "null");   /* SQLite stores none */
        }else if( isinf(pArg->u.r) ){
          sqlite3_str_appendall(pOut, pArg->u.r>0 ? "9e999" : "-9e999");
        }else{
          /* The C library's %.17g reads back as the same double, where
          ** SQLite's printf may not; "-0" and "1" get ".0" to stay reals
          ** (and -0.0 negative) in JSON. */
          char zNum[40], *zComma;
          snprintf(zNum, sizeof(zNum), "%.17g", pArg->u.r);
          /* An app's LC_NUMERIC may have made the decimal point a comma. */
          if( (zComma = strchr(zNum, ','))!=0 ) *zComma = '.';
          sqlite3_str_appendall(pOut, zNum);
          if( strpbrk(zNum, ".e")==0 ) sqlite3_str_appendall(pOut, ".0");
        }
        break;
      case SQLITE_TEXT: appendJsonString(pOut, pArg->u.z, pArg->nByte); break;
      case SQLITE_BLOB:
        sqlite3_str_appendall(pOut, "{\"blob\":\"");
        for(j=0; j<pArg->nByte; j++) sqlite3_str_appendf(pOut, "%02x", pArg->u.z[j]);
        sqlite3_str_appendall(pOut, "\"}");
        break;
      default: sqlite3_str_appendall(pOut, "null");
    }
  }
  sqlite3_str_appendchar(pOut, 1, ']');
  return sqlite3_str_finish(pOut);
}

static int eventCursorColumn(sqlite3_vtab_cursor *pCur, sqlite3_context *ctx,
                             int iColumn){
  StoredEvent *pEv = eventCursorEvent(pCur);
  char *zJson;
  if( pEv==0 ) return SQLITE_OK;
  switch( iColumn ){
    case EVENT_COLUMN_SEQ:
      if( pEv->event.seq ) sqlite3_result_int64(ctx, pEv->event.seq);
      break;
    case EVENT_COLUMN_NAME:
      sqlite3_result_text(ctx, pEv->event.zName, -1, SQLITE_TRANSIENT);
      break;
    case EVENT_COLUMN_TX:
      if( pEv->event.iTransaction ) sqlite3_result_int64(ctx, pEv->event.iTransaction);
      break;
    default:
      assert( iColumn==EVENT_COLUMN_ARGS );
      zJson = eventArgsJson(sqlite3_context_db_handle(ctx), &pEv->event);
      if( zJson==0 ) return SQLITE_NOMEM;
      sqlite3_result_text(ctx, zJson, -1, sqlite3_free);
  }
  return SQLITE_OK;
}

static int pendingUpdate(sqlite3_vtab *pVtab, int argc, sqlite3_value **argv,
                         sqlite3_int64 *pRowid){
  EventTable *pTab = (EventTable*)pVtab;
  (void)argc; (void)argv; (void)pRowid;
  if( pTab->p->pCallbacks->isEnlisting ) return SQLITE_CONSTRAINT;  /* OR IGNORE */
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = sqlite3_mprintf("swift_callback_pending is read-only: "
                                   "swift_callback() records events");
  return SQLITE_ERROR;
}

CallbackState *sqlitetriggers_table_state(sqlite3_vtab *pVtab){
  return ((EventTable*)pVtab)->p->pCallbacks;
}

static int pendingBegin(sqlite3_vtab *pVtab){
  sqlitetriggers_table_state(pVtab)->isEnlisted = 1;
  sqlitetriggers_table_state(pVtab)->hasBegun = 1;
  return SQLITE_OK;
}
static int pendingSync(sqlite3_vtab *pVtab){
  EventTable *pTab = (EventTable*)pVtab;
  CallbackState *pState = sqlitetriggers_table_state(pVtab);
  char *zErr = 0;
  int rc = SQLITE_OK;
  /* A transaction whose capture lost a change cannot commit
  ** (change_capture.c), nor one during which its hook was taken. */
  if( pState->zSpoiledBy[0] ){
    zErr = sqlite3_mprintf("change capture of \"%s\": %s; this transaction cannot "
                           "commit without its feed losing changes", pState->zSpoiledBy,
                           pState->zSpoiledReason);
    rc = pState->spoiledRc;
  }
  if( rc==SQLITE_OK ) rc = sqlitetriggers_capture_sync(pTab->p, &zErr);
  if( rc==SQLITE_OK && sqlitetriggers_log_is_stamped(pTab->p) ){
    sqlitetriggers_wakeup_prepare_commit(pTab->p);
  }
  if( rc!=SQLITE_OK ){
    sqlite3_free(pVtab->zErrMsg);
    pVtab->zErrMsg = zErr;
    return rc;
  }
  return sqlitetriggers_transaction_sync(sqlitetriggers_table_state(pVtab));
}
static int pendingCommit(sqlite3_vtab *pVtab){
  Connection *p = ((EventTable*)pVtab)->p;
  int wroteLog = sqlitetriggers_log_is_stamped(p);
  sqlitetriggers_transaction_commit(p->pCallbacks);
  if( wroteLog ) sqlitetriggers_wakeup_post_commit(p);
  return SQLITE_OK;
}
static int pendingRollback(sqlite3_vtab *pVtab){
  sqlitetriggers_forget_schema_checks(((EventTable*)pVtab)->p);
  sqlitetriggers_capture_rollback(((EventTable*)pVtab)->p);
  sqlitetriggers_transaction_end(sqlitetriggers_table_state(pVtab));
  return SQLITE_OK;
}
static int pendingSavepoint(sqlite3_vtab *pVtab, int iLevel){
  return sqlitetriggers_savepoint_begin(sqlitetriggers_table_state(pVtab), iLevel);
}
static int pendingRelease(sqlite3_vtab *pVtab, int iLevel){
  sqlitetriggers_savepoint_drop_marks(sqlitetriggers_table_state(pVtab), iLevel, 1);
  return SQLITE_OK;
}
static int pendingRollbackTo(sqlite3_vtab *pVtab, int iLevel){
  Connection *p = ((EventTable*)pVtab)->p;
  sqlitetriggers_savepoint_rollback_to(sqlitetriggers_table_state(pVtab), iLevel);
  sqlitetriggers_forget_schema_checks(p);
  sqlitetriggers_capture_rollback_to(p, sqlitetriggers_callback_pending_count(p));
  return SQLITE_OK;
}

/* Designated initializers, as in callback_batch.c: the struct grows with
** SQLite versions. */
const sqlite3_module sqlitetriggers_log_module = {
  .iVersion    = 0,
  .xCreate     = 0,   /* eponymous only */
  .xConnect    = logConnect,
  .xBestIndex  = sqlitetriggers_event_table_best_index,
  .xDisconnect = sqlitetriggers_event_table_disconnect,
  .xOpen       = eventCursorOpen,
  .xClose      = eventCursorClose,
  .xFilter     = eventCursorFilter,
  .xNext       = eventCursorNext,
  .xEof        = eventCursorEof,
  .xColumn     = eventCursorColumn,
  .xRowid      = eventCursorRowid,
};

const sqlite3_module sqlitetriggers_pending_module = {
  .iVersion    = 2,   /* savepoints */
  .xCreate     = 0,   /* eponymous only (callback.c says why) */
  .xConnect    = pendingConnect,
  .xBestIndex  = sqlitetriggers_event_table_best_index,
  .xDisconnect = sqlitetriggers_event_table_disconnect,
  .xOpen       = eventCursorOpen,
  .xClose      = eventCursorClose,
  .xFilter     = eventCursorFilter,
  .xNext       = eventCursorNext,
  .xEof        = eventCursorEof,
  .xColumn     = eventCursorColumn,
  .xRowid      = eventCursorRowid,
  .xUpdate     = pendingUpdate,
  .xBegin      = pendingBegin,
  .xSync       = pendingSync,
  .xCommit     = pendingCommit,
  .xRollback   = pendingRollback,
  .xSavepoint  = pendingSavepoint,
  .xRelease    = pendingRelease,
  .xRollbackTo = pendingRollbackTo,
};

/* ---- swift_callback_keeper --------------------------------------------- */

static int keeperConnect(sqlite3 *db, void *pAux, int argc, const char *const*argv,
                         sqlite3_vtab **ppVtab, char **pzErr){
  int rc;
  (void)argc; (void)argv; (void)pzErr;
  rc = sqlitetriggers_event_table_declare(db, pAux, "CREATE TABLE x(x)", 0, ppVtab);
  if( rc==SQLITE_OK ) ((Connection*)pAux)->pCallbacks->isKeeperConnected = 1;
  return rc;
}

/* 1 when pStmt is still one of db's statements, of the text zSql, among
** the first nWithin (< 0: all): a host may finalize every statement of its
** connection (sqlite3_next_stmt()), and a statement it prepares next may
** take the same address.  New statements go first in the list. */
int sqlitetriggers_is_statement_of(sqlite3 *db, sqlite3_stmt *pStmt, const char *zSql, int nWithin){
  sqlite3_stmt *pAt;
  for(pAt=sqlite3_next_stmt(db, 0); pAt && nWithin!=0; pAt=sqlite3_next_stmt(db, pAt), nWithin--){
    if( pAt==pStmt ) return sqlite3_sql(pAt)!=0 && strcmp(sqlite3_sql(pAt), zSql)==0;
  }
  return 0;
}

/* Never a statement's: a statement reading the keeper would hold it
** connected past sqlite3_close()'s disconnects, and its finalize would
** then finalize the kept INSERT inside the host's own sqlite3_finalize()
** (a host walking its statements would free that one twice).  Its
** xConnect runs before this refusal, which is all keepOrFinalize() asks. */
static int keeperBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  (void)pInfo;
  sqlite3_free(pVtab->zErrMsg);
  pVtab->zErrMsg = sqlite3_mprintf("swift_callback_keeper is internal to SQLiteTriggers: it cannot be read");
  return SQLITE_ERROR;
}

static int keeperDisconnect(sqlite3_vtab *pVtab){
  Connection *p = ((EventTable*)pVtab)->p;
  CallbackState *pState = p->pCallbacks;
  if( pState->pEnlist && sqlitetriggers_is_statement_of(p->db, pState->pEnlist, SQLITETRIGGERS_ENLIST_SQL, -1) ){
    sqlite3_finalize(pState->pEnlist);
  }
  pState->pEnlist = 0;
  pState->isKeeperConnected = 0;
  return sqlitetriggers_event_table_disconnect(pVtab);
}

static int keeperOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  sqlite3_vtab_cursor *pCur = sqlite3_malloc(sizeof(*pCur));
  (void)pVtab;
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, sizeof(*pCur));
  *ppCur = pCur;
  return SQLITE_OK;
}

static int keeperClose(sqlite3_vtab_cursor *pCur){ sqlite3_free(pCur); return SQLITE_OK; }

static int keeperFilter(sqlite3_vtab_cursor *pCur, int idxNum, const char *idxStr,
                        int argc, sqlite3_value **argv){
  (void)pCur; (void)idxNum; (void)idxStr; (void)argc; (void)argv;
  return SQLITE_OK;
}

static int keeperNext(sqlite3_vtab_cursor *pCur){ (void)pCur; return SQLITE_OK; }
static int keeperEof(sqlite3_vtab_cursor *pCur){ (void)pCur; return 1; }

static int keeperColumn(sqlite3_vtab_cursor *pCur, sqlite3_context *ctx, int iColumn){
  (void)pCur; (void)ctx; (void)iColumn;
  return SQLITE_OK;
}

static int keeperRowid(sqlite3_vtab_cursor *pCur, sqlite3_int64 *pRowid){
  (void)pCur;
  *pRowid = 0;
  return SQLITE_OK;
}

const sqlite3_module sqlitetriggers_keeper_module = {
  .iVersion    = 0,
  .xCreate     = 0,   /* eponymous only */
  .xConnect    = keeperConnect,
  .xBestIndex  = keeperBestIndex,
  .xDisconnect = keeperDisconnect,
  .xOpen       = keeperOpen,
  .xClose      = keeperClose,
  .xFilter     = keeperFilter,
  .xNext       = keeperNext,
  .xEof        = keeperEof,
  .xColumn     = keeperColumn,
  .xRowid      = keeperRowid,
};
