/*
** callback_batch.c: swift_callback_batch, a round of committed events as
** rows, for the batch observer being called (its specification is at the
** top of callback.c).
*/
#include "callback_internal.h"

/* Its columns: seq, name, argc, then arg1 ... arg126, then tx. */
#define BATCH_COLUMN_ARGC      2
#define BATCH_COLUMN_FIRST_ARG 3
#define BATCH_COLUMN_TX        (BATCH_COLUMN_FIRST_ARG + SQLITETRIGGERS_MAX_CALLBACK_ARGS)

typedef struct BatchCursor BatchCursor;
struct BatchCursor {
  sqlite3_vtab_cursor base;
  sqlite3_int64 iGeneration;  /* of the call the cursor was filtered in */
  int iEvent;                 /* its index in the delivery queue */
  /* The current event, held: column values point into it (SQLITE_STATIC),
  ** and a row stays readable until the next step, after the call too. */
  StoredEvent *pEv;
};

static int batchConnect(sqlite3 *db, void *pAux, int argc,
                        const char *const*argv, sqlite3_vtab **ppVtab,
                        char **pzErr){
  sqlite3_str *pDecl = sqlite3_str_new(db);
  char *zDecl;
  int i, rc;
  (void)argc; (void)argv; (void)pzErr;
  sqlite3_str_appendall(pDecl, "CREATE TABLE x(seq INTEGER, name TEXT, argc INTEGER");
  for(i=1; i<=SQLITETRIGGERS_MAX_CALLBACK_ARGS; i++) sqlite3_str_appendf(pDecl, ", arg%d", i);
  sqlite3_str_appendall(pDecl, ", tx INTEGER)");
  zDecl = sqlite3_str_finish(pDecl);
  if( zDecl==0 ) return SQLITE_NOMEM;
  rc = sqlitetriggers_event_table_declare(db, pAux, zDecl, 0, ppVtab);
  sqlite3_free(zDecl);
  return rc;
}

static int batchCursorOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  (void)pVtab;
  return sqlitetriggers_vtab_cursor_open(sizeof(BatchCursor), ppCur);
}

static int batchCursorClose(sqlite3_vtab_cursor *pCur){
  sqlitetriggers_stored_event_release(((BatchCursor*)pCur)->pEv);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* Move to the first event of the call's round, from iEvent on, that the
** batch observer observes; hold it. */
static void batchCursorSeek(BatchCursor *pCur, int iEvent){
  CallbackState *pState = sqlitetriggers_table_state(pCur->base.pVtab);
  sqlitetriggers_stored_event_release(pCur->pEv);
  pCur->pEv = 0;
  if( pCur->iGeneration!=pState->iBatchGeneration
   || pState->pBatchObserver==0 ) return;
  for(; iEvent<pState->iBatchEnd; iEvent++){
    StoredEvent *pEv = pState->queue.a[iEvent];
    if( sqlitetriggers_observer_matches(pState->pBatchObserver, pEv->event.zName) ){
      pCur->iEvent = iEvent;
      pCur->pEv = pEv;
      pEv->event.nRef++;
      return;
    }
  }
}

static int batchCursorFilter(sqlite3_vtab_cursor *pCur, int idxNum,
                             const char *idxStr, int argc, sqlite3_value **argv){
  BatchCursor *pBatch = (BatchCursor*)pCur;
  CallbackState *pState = sqlitetriggers_table_state(pCur->pVtab);
  (void)idxNum; (void)idxStr; (void)argc; (void)argv;
  pBatch->iGeneration = pState->iBatchGeneration;
  batchCursorSeek(pBatch, pState->iBatchStart);
  return SQLITE_OK;
}

static int batchCursorNext(sqlite3_vtab_cursor *pCur){
  BatchCursor *pBatch = (BatchCursor*)pCur;
  batchCursorSeek(pBatch, pBatch->iEvent + 1);
  return SQLITE_OK;
}

static int batchCursorEof(sqlite3_vtab_cursor *pCur){
  return ((BatchCursor*)pCur)->pEv==0;
}

static int batchCursorRowid(sqlite3_vtab_cursor *pCur, sqlite3_int64 *pRowid){
  *pRowid = ((BatchCursor*)pCur)->pEv->event.seq;
  return SQLITE_OK;
}

static int batchCursorColumn(sqlite3_vtab_cursor *pCur, sqlite3_context *ctx,
                             int iColumn){
  const sqlitetriggers_event *pEvent = &((BatchCursor*)pCur)->pEv->event;
  const StoredArg *pArg;
  if( iColumn==EVENT_COLUMN_SEQ ){
    sqlite3_result_int64(ctx, pEvent->seq);
    return SQLITE_OK;
  }
  if( iColumn==EVENT_COLUMN_NAME ){
    sqlite3_result_text(ctx, pEvent->zName, -1, SQLITE_STATIC);
    return SQLITE_OK;
  }
  if( iColumn==BATCH_COLUMN_ARGC ){
    sqlite3_result_int(ctx, pEvent->nArg);
    return SQLITE_OK;
  }
  if( iColumn==BATCH_COLUMN_TX ){
    sqlite3_result_int64(ctx, pEvent->iTransaction);
    return SQLITE_OK;
  }
  if( iColumn - BATCH_COLUMN_FIRST_ARG >= pEvent->nArg ) return SQLITE_OK;
  pArg = &sqlitetriggers_event_args(pEvent)[iColumn - BATCH_COLUMN_FIRST_ARG];
  switch( pArg->eType ){
    case SQLITE_INTEGER: sqlite3_result_int64(ctx, pArg->u.i); break;
    case SQLITE_FLOAT:   sqlite3_result_double(ctx, pArg->u.r); break;
    case SQLITE_TEXT:
      /* A length of -1 tells SQLite the text is NUL-terminated, so that
      ** sqlite3_column_text() reads it in place instead of copying it to
      ** add a terminator; text with a NUL inside needs its length.  The
      ** check is made here, not when the event is stored, so that events
      ** no batch reads cost nothing more. */
      sqlite3_result_text(ctx, (const char*)pArg->u.z,
                          strlen((const char*)pArg->u.z)==(size_t)pArg->nByte
                            ? -1 : pArg->nByte, SQLITE_STATIC);
      break;
    case SQLITE_BLOB:
      sqlite3_result_blob(ctx, pArg->u.z, pArg->nByte, SQLITE_STATIC);
      break;
  }
  return SQLITE_OK;
}

/* Designated initializers: sqlite3_module gains fields with SQLite
** versions (xIntegrity in 3.44), and a positional list warns on every
** header newer than the one it was written for. */
const sqlite3_module sqlitetriggers_batch_module = {
  .iVersion    = 0,
  .xCreate     = 0,   /* eponymous only */
  .xConnect    = batchConnect,
  .xBestIndex  = sqlitetriggers_event_table_best_index,
  .xDisconnect = sqlitetriggers_event_table_disconnect,
  .xOpen       = batchCursorOpen,
  .xClose      = batchCursorClose,
  .xFilter     = batchCursorFilter,
  .xNext       = batchCursorNext,
  .xEof        = batchCursorEof,
  .xColumn     = batchCursorColumn,
  .xRowid      = batchCursorRowid,
};
