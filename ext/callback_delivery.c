/*
** callback_delivery.c: observers of swift_callback() events.
**
** Immediate observers run inside the call (sqlitetriggers_dispatch_
** immediate()); after-commit and batch observers run in
** sqlitetriggers_deliver(), which the host calls once a statement has
** finished.  An observer removed while an observer loop runs stays until
** the loop ends (nDispatching), then observers_compact() frees it.
*/
#include "callback_internal.h"

void sqlitetriggers_observer_free(Observer *pObs){
  if( pObs->xDestroy ) pObs->xDestroy(pObs->pArg);
  sqlite3_free(pObs->zName);
  sqlite3_free(pObs);
}

/* Drop removed observers, unless an observer loop is still running.  With
** the last after-commit observer gone, the events waiting for it go too. */
void sqlitetriggers_observers_compact(CallbackState *pState){
  int i, j = 0;
  if( pState->nDispatching>0 || !pState->hasRemoved ) return;
  for(i=0; i<pState->nObserver; i++){
    if( pState->aObserver[i]->isRemoved ){
      pState->nImmediate -= pState->aObserver[i]->xImmediate!=0;
      sqlitetriggers_observer_free(pState->aObserver[i]);
    }else{
      pState->aObserver[j++] = pState->aObserver[i];
    }
  }
  pState->nObserver = j;
  pState->hasRemoved = 0;
  if( j==0 ){
    sqlite3_free(pState->aObserver);
    pState->aObserver = 0;
  }
  if( !sqlitetriggers_has_after_commit_observer(pState) ) sqlitetriggers_queue_clear(pState);
}

int sqlitetriggers_observer_matches(const Observer *pObs, const char *zName){
  return !pObs->isRemoved && (pObs->zName==0 || strcmp(pObs->zName, zName)==0);
}

int sqlitetriggers_has_after_commit_observer(CallbackState *pState){
  int i;
  for(i=0; i<pState->nObserver; i++){
    const Observer *pObs = pState->aObserver[i];
    if( (pObs->xAfterCommit || pObs->xBatch) && !pObs->isRemoved ){
      return 1;
    }
  }
  return 0;
}

/* Immediate observers of the event; 0, or 1 after setting the error. */
int sqlitetriggers_dispatch_immediate(sqlite3_context *ctx, CallbackState *pState,
                             const sqlitetriggers_event *pEvent){
  int i, n = pState->nObserver, isRefused = 0;
  pState->nDispatching++;
  for(i=0; i<n && !isRefused; i++){
    Observer *pObs = pState->aObserver[i];
    char *zError = 0;
    if( !pObs->xImmediate || !sqlitetriggers_observer_matches(pObs, pEvent->zName) ) continue;
    if( pObs->xImmediate(pObs->pArg, pEvent, ctx, &zError)!=SQLITE_OK ){
      char *zDefault = zError ? 0 : sqlite3_mprintf(
          "swift_callback: an observer of '%s' refused the change",
          pEvent->zName);
      if( zError || zDefault ){
        sqlite3_result_error(ctx, zError ? zError : zDefault, -1);
        sqlite3_result_error_code(ctx, SQLITE_CONSTRAINT_FUNCTION);
      }else{
        sqlite3_result_error_nomem(ctx);
      }
      sqlite3_free(zDefault);
      isRefused = 1;
    }
    sqlite3_free(zError);
  }
  pState->nDispatching--;
  sqlitetriggers_observers_compact(pState);
  return isRefused;
}

/* ---- the C API --------------------------------------------------------- */

static int addObserver(sqlite3 *db, const char *zName,
                       sqlitetriggers_immediate_callback xImmediate,
                       sqlitetriggers_after_commit_callback xAfterCommit,
                       sqlitetriggers_batch_callback xBatch,
                       void *pArg, void (*xDestroy)(void*),
                       sqlite3_int64 *piObserver){
  Connection *p = sqlitetriggers_connection_find(db);
  CallbackState *pState;
  Observer *pObs, **aNew;
  if( p==0 ){
    if( xDestroy ) xDestroy(pArg);
    return SQLITE_MISUSE;
  }
  pState = p->pCallbacks;
  pObs = sqlite3_malloc(sizeof(*pObs));
  aNew = sqlite3_realloc64(pState->aObserver,
                           (pState->nObserver+1)*sizeof(Observer*));
  if( aNew ) pState->aObserver = aNew;
  if( pObs==0 || aNew==0 ){
    sqlite3_free(pObs);
    if( xDestroy ) xDestroy(pArg);
    return SQLITE_NOMEM;
  }
  memset(pObs, 0, sizeof(*pObs));
  if( zName ){
    pObs->zName = sqlite3_mprintf("%s", zName);
    if( pObs->zName==0 ){
      sqlite3_free(pObs);
      if( xDestroy ) xDestroy(pArg);
      return SQLITE_NOMEM;
    }
  }
  pObs->id = ++pState->lastObserverId;
  pObs->xImmediate = xImmediate;
  pObs->xAfterCommit = xAfterCommit;
  pObs->xBatch = xBatch;
  pObs->pArg = pArg;
  pObs->xDestroy = xDestroy;
  pState->aObserver[pState->nObserver++] = pObs;
  pState->nImmediate += xImmediate!=0;
  if( piObserver ) *piObserver = pObs->id;
  return SQLITE_OK;
}

int sqlitetriggers_observe_immediate(sqlite3 *db, const char *zName,
                                     sqlitetriggers_immediate_callback xCallback,
                                     void *pArg, void (*xDestroy)(void*),
                                     sqlite3_int64 *piObserver){
  if( xCallback==0 ) return SQLITE_MISUSE;
  return addObserver(db, zName, xCallback, 0, 0, pArg, xDestroy, piObserver);
}

int sqlitetriggers_observe_after_commit(sqlite3 *db, const char *zName,
                                        sqlitetriggers_after_commit_callback xCallback,
                                        void *pArg, void (*xDestroy)(void*),
                                        sqlite3_int64 *piObserver){
  if( xCallback==0 ) return SQLITE_MISUSE;
  return addObserver(db, zName, 0, xCallback, 0, pArg, xDestroy, piObserver);
}

int sqlitetriggers_observe_after_commit_batch(sqlite3 *db, const char *zName,
                                              sqlitetriggers_batch_callback xCallback,
                                              void *pArg, void (*xDestroy)(void*),
                                              sqlite3_int64 *piObserver){
  if( xCallback==0 ) return SQLITE_MISUSE;
  return addObserver(db, zName, 0, 0, xCallback, pArg, xDestroy, piObserver);
}

int sqlitetriggers_unobserve(sqlite3 *db, sqlite3_int64 iObserver){
  Connection *p = sqlitetriggers_connection_find(db);
  CallbackState *pState;
  int i;
  if( p==0 ) return SQLITE_MISUSE;
  pState = p->pCallbacks;
  for(i=0; i<pState->nObserver; i++){
    Observer *pObs = pState->aObserver[i];
    if( pObs->id==iObserver && !pObs->isRemoved ){
      pObs->isRemoved = 1;
      pState->hasRemoved = 1;
      sqlitetriggers_observers_compact(pState);
      return SQLITE_OK;
    }
  }
  return SQLITE_NOTFOUND;
}

/* The batch observers of the round [iStart, iEnd) of the queue, each with
** the events it observes; stops early when the connection goes (0). */
static int deliverBatches(Connection *p, CallbackState *pState,
                          int iStart, int iEnd){
  int i, iEv, n = pState->nObserver;
  for(i=0; i<n && p->db!=0; i++){
    Observer *pObs = pState->aObserver[i];
    int nMatch = 0;
    if( !pObs->xBatch || pObs->isRemoved ) continue;
    for(iEv=iStart; iEv<iEnd; iEv++){
      nMatch += sqlitetriggers_observer_matches(pObs, pState->queue.a[iEv]->event.zName);
    }
    if( nMatch==0 ) continue;
    pState->pBatchObserver = pObs;
    pState->iBatchStart = iStart;
    pState->iBatchEnd = iEnd;
    pState->iBatchGeneration++;
    pObs->xBatch(pObs->pArg, nMatch);
    if( p->db==0 ) return 0;
    pState->pBatchObserver = 0;
    pState->iBatchGeneration++;
  }
  return p->db!=0;
}

/*
** Events are delivered in rounds: the events queued when a round begins
** go to each after-commit observer, event by event, then to each batch
** observer at once.  Events that observers' writes commit meanwhile make
** the next round.  A round's events stay held until its batch observers
** have read them.
*/
int sqlitetriggers_deliver(sqlite3 *db){
  Connection *p = sqlitetriggers_connection_find(db);
  CallbackState *pState;
  int isAttached = 1;
  if( p==0 ) return SQLITE_MISUSE;
  pState = p->pCallbacks;
  if( pState->isDelivering ) return SQLITE_OK;   /* the outer call goes on */
  pState->isDelivering = 1;
  pState->nDispatching++;
  /* An observer may close the connection or register the extension again:
  ** the hold keeps pState alive until the loop has seen it (p->db==0). */
  sqlitetriggers_connection_hold(p);
  while( isAttached && pState->queue.iHead < pState->queue.n ){
    int iStart = pState->queue.iHead, iEnd = pState->queue.n, iEv;
    /* Indexes, not pointers: observers' commits may grow the queue. */
    for(iEv=iStart; iEv<iEnd && isAttached; iEv++){
      StoredEvent *pEv = pState->queue.a[iEv];
      int i, n = pState->nObserver;
      pState->queue.iHead = iEv + 1;
      for(i=0; i<n && (isAttached = p->db!=0); i++){
        Observer *pObs = pState->aObserver[i];
        if( pObs->xAfterCommit && sqlitetriggers_observer_matches(pObs, pEv->event.zName) ){
          pObs->xAfterCommit(pObs->pArg, &pEv->event);
        }
      }
      isAttached = p->db!=0;
    }
    if( isAttached ){
      isAttached = deliverBatches(p, pState, iStart, pState->queue.iHead);
    }
    for(iEv=iStart; iEv<pState->queue.iHead; iEv++){
      sqlitetriggers_stored_event_release(pState->queue.a[iEv]);
    }
  }
  if( !sqlitetriggers_connection_unhold(p) ) return SQLITE_ABORT;
  pState->queue.n = pState->queue.iHead = 0;
  sqlitetriggers_event_list_truncate(&pState->queue, 0);     /* shrinks a large array */
  pState->nDispatching--;
  pState->isDelivering = 0;
  sqlitetriggers_observers_compact(pState);
  return SQLITE_OK;
}

int sqlitetriggers_undelivered_count(sqlite3 *db){
  Connection *p = sqlitetriggers_connection_find(db);
  if( p==0 ) return -1;
  return p->pCallbacks->queue.n - p->pCallbacks->queue.iHead;
}
