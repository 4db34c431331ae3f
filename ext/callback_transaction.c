/*
** callback_transaction.c: a connection's swift_callback() state across a
** transaction.
**
** Events wait in the pending list until the transaction commits; a
** savepoint level's mark remembers how many were pending when it began, so
** that ROLLBACK TO drops exactly the later ones.  At commit each event is
** numbered, enters the log (a ring of the newest nLogCapacity events,
** allocated as it fills; sqlitetriggers_log_slot() is its one index
** formula) and, when an after-commit observer listens, the delivery queue.
** The virtual table of callback_tables.c calls these from SQLite's
** xSync, xCommit, xRollback, xSavepoint, xRelease and xRollbackTo.
*/
#include "callback_internal.h"

#include <assert.h>

CallbackState *sqlitetriggers_callback_state_create(void){
  CallbackState *pState = sqlite3_malloc(sizeof(*pState));
  if( pState ){
    memset(pState, 0, sizeof(*pState));
    pState->nLogCapacity = DEFAULT_LOG_CAPACITY;
  }
  return pState;
}

/* The slot of the log's i-th event, oldest first. */
int sqlitetriggers_log_slot(const CallbackState *pState, int i){
  return (pState->iLogHead + i) % pState->nLogAlloc;
}

static void logClear(CallbackState *pState){
  int i;
  for(i=0; i<pState->nLog; i++) sqlitetriggers_stored_event_release(pState->aLog[sqlitetriggers_log_slot(pState, i)]);
  pState->nLog = 0;
  pState->iLogHead = 0;
}

void sqlitetriggers_queue_clear(CallbackState *pState){
  int i;
  for(i=pState->queue.iHead; i<pState->queue.n; i++){
    sqlitetriggers_stored_event_release(pState->queue.a[i]);
  }
  sqlite3_free(pState->queue.a);
  memset(&pState->queue, 0, sizeof(pState->queue));
}

void sqlitetriggers_callback_state_free(CallbackState *pState){
  int i;
  if( pState==0 ) return;
  sqlitetriggers_event_list_truncate(&pState->pending, 0);
  sqlite3_free(pState->pending.a);
  sqlitetriggers_event_list_truncate(&pState->atCommit, 0);
  sqlite3_free(pState->atCommit.a);
  sqlitetriggers_queue_clear(pState);
  logClear(pState);
  sqlite3_free(pState->aLog);
  sqlite3_free(pState->aMark);
  sqlitetriggers_event_chunk_retire(pState->pChunk);    /* events held elsewhere keep it */
  for(i=0; i<pState->nObserver; i++) sqlitetriggers_observer_free(pState->aObserver[i]);
  sqlite3_free(pState->aObserver);
  sqlite3_free(pState);
}

/* ---- commit, rollback, savepoints -------------------------------------- */

/* Room in the log's ring for n more events, before they commit: it grows
** (doubling, oldest first again) up to the capacity. */
static int logReserve(CallbackState *pState, int n){
  sqlite3_uint64 nNeeded = (sqlite3_uint64)pState->nLog + (sqlite3_uint64)n;
  sqlite3_uint64 nNew;
  StoredEvent **aNew;
  int i;
  if( nNeeded>(sqlite3_uint64)pState->nLogCapacity ) nNeeded = pState->nLogCapacity;
  if( nNeeded<=(sqlite3_uint64)pState->nLogAlloc ) return SQLITE_OK;
  nNew = pState->nLogAlloc ? 2*(sqlite3_uint64)pState->nLogAlloc : 16;
  if( nNew<nNeeded ) nNew = nNeeded;
  if( nNew>(sqlite3_uint64)pState->nLogCapacity ) nNew = pState->nLogCapacity;
  aNew = sqlite3_malloc64(nNew*sizeof(StoredEvent*));
  if( aNew==0 ) return SQLITE_NOMEM;
  for(i=0; i<pState->nLog; i++) aNew[i] = pState->aLog[sqlitetriggers_log_slot(pState, i)];
  sqlite3_free(pState->aLog);
  pState->aLog = aNew;
  pState->nLogAlloc = (int)nNew;
  pState->iLogHead = 0;
  return SQLITE_OK;
}

static void logAppend(CallbackState *pState, StoredEvent *pEv){
  if( pState->nLogCapacity==0 ) return;
  assert( pState->nLog>=0 && pState->nLog<=pState->nLogCapacity );
  if( pState->nLog==pState->nLogCapacity ){
    sqlitetriggers_stored_event_release(pState->aLog[pState->iLogHead]);
    pState->iLogHead = sqlitetriggers_log_slot(pState, 1);
    pState->nLog--;
  }
  assert( pState->nLog<pState->nLogAlloc );    /* logReserve() made room */
  pState->aLog[sqlitetriggers_log_slot(pState, pState->nLog)] = pEv;
  pEv->event.nRef++;
  pState->nLog++;
}

/* Number one committed event of the current commit (lastCommit), and log
** it (isLogged). */
static void numberEvent(CallbackState *pState, StoredEvent *pEv, int isLogged){
  pEv->event.seq = ++pState->lastSeq;
  pEv->event.iTransaction = pState->lastCommit;
  if( isLogged ) logAppend(pState, pEv);
}
/* Number, log (isLogged) and (where anyone listens) queue one committed
** event of the current commit, taking over the caller's reference: the
** queue keeps it, or it is released.  The queue has room:
** sqlitetriggers_transaction_sync() or the caller reserved it. */
void sqlitetriggers_commit_event(CallbackState *pState, StoredEvent *pEv,
                        int isQueued, int isLogged){
  numberEvent(pState, pEv, isLogged);
  if( isQueued ){
    pState->queue.a[pState->queue.n++] = pEv;
  }else{
    sqlitetriggers_stored_event_release(pEv);
  }
}

/* The marks record how many events were pending when each level began:
** never more than are pending now. */
#ifndef NDEBUG
static int savepointMarksAreValid(const CallbackState *pState){
  int i;
  for(i=0; i<pState->nMark; i++){
    if( pState->aMark[i].nPending<0
     || pState->aMark[i].nPending>pState->pending.n ) return 0;
  }
  return pState->nMark>=0 && pState->nMark<=pState->nMarkAlloc;
}
#endif

void sqlitetriggers_transaction_end(CallbackState *pState){
  assert( savepointMarksAreValid(pState) );
  sqlitetriggers_event_list_truncate(&pState->pending, 0);
  sqlitetriggers_event_list_truncate(&pState->atCommit, 0);
  pState->nMark = 0;
  pState->isEnlisted = 0;
  pState->isGuarded = 0;
  pState->zSpoiledBy[0] = 0;
  pState->iTransaction++;
}

/* Make room for n events to commit: in the log, and in the queue when an
** after-commit observer listens.  Committing cannot fail after this. */
int sqlitetriggers_commit_reserve(CallbackState *pState, int n){
  int rc = n>0 ? logReserve(pState, n) : SQLITE_OK;
  if( rc==SQLITE_OK && sqlitetriggers_has_after_commit_observer(pState) ){
    rc = sqlitetriggers_event_list_reserve(&pState->queue, n);
  }
  return rc;
}

int sqlitetriggers_transaction_sync(CallbackState *pState){
  /* The last step that may still fail the commit: room for both lists in
  ** the pending one too, where xCommit moves the events made at xSync. */
  int n = pState->pending.n + pState->atCommit.n;
  int rc = sqlitetriggers_event_list_reserve(&pState->pending, pState->atCommit.n);
  return rc==SQLITE_OK ? sqlitetriggers_commit_reserve(pState, n) : rc;
}

void sqlitetriggers_transaction_commit(CallbackState *pState){
  /* sqlitetriggers_transaction_sync() made the room, so this allocates nothing. */
  int rc, i, isQueued, iFirstLogged;
  assert( pState->pending.n + pState->atCommit.n <= pState->pending.nAlloc );
  for(i=0; i<pState->atCommit.n; i++) pState->pending.a[pState->pending.n++] = pState->atCommit.a[i];
  pState->atCommit.n = 0;
  rc = sqlitetriggers_commit_reserve(pState, pState->pending.n);
  assert( rc==SQLITE_OK );
  isQueued = rc==SQLITE_OK && sqlitetriggers_has_after_commit_observer(pState);
  if( pState->pending.n>0 ) pState->lastCommit++;
  /* The log keeps the last nLogCapacity events: the commit's earlier ones
  ** would leave it before the commit ends. */
  iFirstLogged = pState->pending.n - pState->nLogCapacity;
  if( isQueued && pState->queue.n==0 ){
    /* Nothing waits (as a rule): the queue takes the pending array whole,
    ** references and all, instead of a copy of it. */
    EventList empty = pState->queue;
    pState->queue = pState->pending;
    pState->pending = empty;
    for(i=0; i<pState->queue.n; i++) numberEvent(pState, pState->queue.a[i], i>=iFirstLogged);
  }else{
    for(i=0; i<pState->pending.n; i++){
      sqlitetriggers_commit_event(pState, pState->pending.a[i], isQueued, i>=iFirstLogged);
    }
    /* The events took their references along (sqlitetriggers_commit_event()). */
    pState->pending.n = 0;
  }
  pState->nMark = 0;        /* the savepoints' marks counted pending events */
  sqlitetriggers_transaction_end(pState);
}

int sqlitetriggers_savepoint_begin(CallbackState *pState, int iLevel){
  int i;
  for(i=0; i<pState->nMark; i++){
    if( pState->aMark[i].iLevel==iLevel ) return SQLITE_OK;  /* told twice */
  }
  assert( pState->nMark>=0 && pState->nMark<=pState->nMarkAlloc );
  if( pState->nMark==pState->nMarkAlloc ){
    /* Savepoint levels are ints too: the marks never outnumber them. */
    int nNew = pState->nMarkAlloc ? 2*pState->nMarkAlloc : 8;
    SavepointMark *aNew = sqlite3_realloc64(pState->aMark,
                                  (sqlite3_uint64)nNew*sizeof(SavepointMark));
    if( aNew==0 ) return SQLITE_NOMEM;
    pState->aMark = aNew;
    pState->nMarkAlloc = nNew;
  }
  pState->aMark[pState->nMark].iLevel = iLevel;
  pState->aMark[pState->nMark].nPending = pState->pending.n;
  pState->nMark++;
  return SQLITE_OK;
}

/* Forget the marks of iLevel and above (iLevel itself too if isInclusive). */
void sqlitetriggers_savepoint_drop_marks(CallbackState *pState, int iLevel,
                               int isInclusive){
  int i, j = 0;
  for(i=0; i<pState->nMark; i++){
    int iMark = pState->aMark[i].iLevel;
    if( iMark<iLevel || (iMark==iLevel && !isInclusive) ){
      pState->aMark[j++] = pState->aMark[i];
    }
  }
  pState->nMark = j;
}

void sqlitetriggers_savepoint_rollback_to(CallbackState *pState, int iLevel){
  int i, nKeep = -1, lowest = -1;
  assert( savepointMarksAreValid(pState) );
  for(i=0; i<pState->nMark; i++){
    if( pState->aMark[i].iLevel==iLevel ) nKeep = pState->aMark[i].nPending;
    if( lowest<0 || pState->aMark[i].iLevel<lowest ) lowest = pState->aMark[i].iLevel;
  }
  /* A level below every mark began before this table joined the
  ** transaction: back to the state of xBegin, where nothing was pending. */
  if( nKeep<0 && (pState->nMark==0 || iLevel<lowest) ) nKeep = 0;
  if( nKeep>=0 ) sqlitetriggers_event_list_truncate(&pState->pending, nKeep);
  sqlitetriggers_savepoint_drop_marks(pState, iLevel, 0);
  assert( savepointMarksAreValid(pState) );
}

int sqlitetriggers_set_callback_log_capacity(sqlite3 *db, int nCapacity){
  Connection *p = sqlitetriggers_connection_find(db);
  CallbackState *pState;
  StoredEvent **aNew = 0;
  int nKeep, i;
  if( p==0 ) return SQLITE_MISUSE;
  if( nCapacity<0 ) return SQLITE_RANGE;
  pState = p->pCallbacks;
  /* The ring keeps the newest nKeep events, oldest first; it grows as the
  ** log fills (logReserve), so a capacity costs memory only once used. */
  nKeep = pState->nLog < nCapacity ? pState->nLog : nCapacity;
  if( nKeep>0 ){
    aNew = sqlite3_malloc64((sqlite3_uint64)nKeep*sizeof(StoredEvent*));
    if( aNew==0 ) return SQLITE_NOMEM;
  }
  for(i=0; i<pState->nLog; i++){
    StoredEvent *pEv = pState->aLog[sqlitetriggers_log_slot(pState, i)];
    int iNew = i - (pState->nLog - nKeep);
    if( iNew>=0 ){
      aNew[iNew] = pEv;
    }else{
      sqlitetriggers_stored_event_release(pEv);
    }
  }
  sqlite3_free(pState->aLog);
  pState->aLog = aNew;
  pState->nLogAlloc = nKeep;
  pState->nLog = nKeep;
  pState->iLogHead = 0;
  pState->nLogCapacity = nCapacity;
  return SQLITE_OK;
}
