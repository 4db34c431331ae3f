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
**       observer closes the connection or registers the extension on it
**       again; the events not yet delivered are dropped with the old state.
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
**   temp.swift_callback_pending (virtual table)
**       SELECT seq, name, args FROM temp.swift_callback_pending
**       The events of the open transaction, not yet committed (seq and tx
**       NULL).
**       Writes are refused: swift_callback() alone writes it, once per
**       transaction, because a nested INSERT is how a virtual table joins a
**       transaction.  From then on SQLite reports every savepoint, release,
**       rollback and commit to it (xSavepoint, xRelease, xRollbackTo,
**       xRollback, xSync, xCommit), with no commit, rollback or update hook,
**       which GRDB owns.
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
** Delivery to after-commit observers happens in sqlitetriggers_deliver(),
** not in xCommit: xCommit runs inside sqlite3_step(), where an observer
** could not use the connection.  The host calls sqlitetriggers_deliver()
** once a statement has finished (SQLiteTriggersGRDB does it when GRDB
** reports the commit); observers may then read and write the database, and
** events their writes commit are delivered by the same call, in order.
*/
#include "sqlitetriggers_internal.h"
#include "include/sqlitetriggers.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>

#define DEFAULT_LOG_CAPACITY 1000
#define NAME_ERROR \
  "swift_callback: the first argument must be the callback's name (text)"

/* ---- events ------------------------------------------------------------ */

typedef struct StoredArg StoredArg;
struct StoredArg {
  int eType;                  /* SQLITE_INTEGER, ... SQLITE_NULL */
  int nByte;                  /* text or blob length */
  union {
    sqlite3_int64 i;
    double r;
    const unsigned char *z;   /* text (NUL-terminated) or blob bytes */
  } u;
};

/* What observers see: a copy of the call's name and arguments. */
struct sqlitetriggers_event {
  sqlite3_int64 seq;          /* 0 until committed */
  sqlite3_int64 iTransaction; /* the commit's number; 0 until committed */
  const char *zName;
  int nArg;
  StoredArg *aStored;         /* in the same allocation */
};

/*
** Events are carved out of 64 KiB chunks, one after another, rather than
** allocated one by one: sqlite3_malloc() and sqlite3_free() take SQLite's
** memory mutex and keep its statistics, and cost more than all the rest
** of swift_callback().  A chunk counts its live events; once it is no
** longer the one events are carved from, its last release frees it.  An
** event larger than an eighth of a chunk is allocated alone.  The chunk
** that an event of the log still holds stays: at most about as many
** chunks as the log's capacity spans, since they are used in order.
*/
#define CHUNK_BYTES 65536
#define CHUNK_HEADER 16                 /* keeps events 8-byte aligned */

typedef struct EventChunk EventChunk;
struct EventChunk {
  int nLive;                  /* events carved here and not yet released */
  int nUsed;                  /* bytes carved, the header included */
  int isRetired;              /* no longer carved: freed at nLive 0 */
};

/* A committed or pending event, shared by reference. */
typedef struct StoredEvent StoredEvent;
struct StoredEvent {
  int nRef;
  EventChunk *pChunk;         /* where it was carved; NULL: alone */
  sqlitetriggers_event event;
};

/* A chunk no longer carved from: freed now if nothing lives in it, else by
** the release of its last event. */
static void eventChunkRetire(EventChunk *pChunk){
  if( pChunk==0 ) return;
  if( pChunk->nLive==0 ) sqlite3_free(pChunk); else pChunk->isRetired = 1;
}

/* nByte bytes for an event, from *ppCurrent (a new chunk when it is full
** or absent); NULL when out of memory.  *ppChunkOut says where. */
static void *eventAlloc(EventChunk **ppCurrent, sqlite3_uint64 nByte,
                        EventChunk **ppChunkOut){
  EventChunk *pChunk = *ppCurrent;
  void *pMem;
  nByte = (nByte + 7) & ~(sqlite3_uint64)7;
  if( nByte > CHUNK_BYTES/8 ){
    *ppChunkOut = 0;
    return sqlite3_malloc64(nByte);
  }
  if( pChunk==0 || pChunk->nUsed + nByte > CHUNK_BYTES ){
    EventChunk *pNew = sqlite3_malloc(CHUNK_BYTES);
    if( pNew==0 ) return 0;
    pNew->nLive = 0;
    pNew->nUsed = CHUNK_HEADER;
    pNew->isRetired = 0;
    eventChunkRetire(pChunk);
    *ppCurrent = pChunk = pNew;
  }
  pMem = (char*)pChunk + pChunk->nUsed;
  pChunk->nUsed += (int)nByte;
  pChunk->nLive++;
  *ppChunkOut = pChunk;
  return pMem;
}

/* Reads an argument once, into an ArgView; 0 when out of memory (a
** text or blob that cannot be read). */
int sqlitetriggers_arg_view_read(ArgView *pView, sqlite3_value *pValue){
  pView->eType = sqlite3_value_type(pValue);
  pView->nByte = 0;
  pView->z = 0;
  switch( pView->eType ){
    case SQLITE_INTEGER: pView->u.i = sqlite3_value_int64(pValue); break;
    case SQLITE_FLOAT:   pView->u.r = sqlite3_value_double(pValue); break;
    case SQLITE_TEXT:
      /* Reading converts (and allocates) once. */
      if( (pView->z = sqlite3_value_text(pValue))==0 ) return 0;
      pView->nByte = sqlite3_value_bytes(pValue);
      break;
    case SQLITE_BLOB:
      pView->nByte = sqlite3_value_bytes(pValue);
      if( pView->nByte>0 && (pView->z = sqlite3_value_blob(pValue))==0 ) return 0;
      break;
    default:
      pView->eType = SQLITE_NULL;
  }
  return 1;
}

/* A copy of the event whose arguments aView describes, or NULL when out of
** memory.  nName is strlen(zName). */
static StoredEvent *storedEventCreate(EventChunk **ppCurrent,
                                      const char *zName, int nName, int nArg,
                                      const ArgView *aView){
  sqlite3_uint64 nByte;
  StoredEvent *pEv;
  EventChunk *pChunk;
  unsigned char *pData;
  int i;
  assert( nArg>=0 && nArg<=SQLITETRIGGERS_MAX_CALLBACK_ARGS );
  nByte = sizeof(StoredEvent) + nArg*sizeof(StoredArg) + nName + 1;
  for(i=0; i<nArg; i++){
    if( aView[i].eType==SQLITE_TEXT ) nByte += (sqlite3_uint64)aView[i].nByte + 1;
    else if( aView[i].eType==SQLITE_BLOB ) nByte += (sqlite3_uint64)aView[i].nByte;
  }
  pEv = eventAlloc(ppCurrent, nByte, &pChunk);
  if( pEv==0 ) return 0;
  pEv->nRef = 1;
  pEv->pChunk = pChunk;
  pEv->event.seq = 0;
  pEv->event.iTransaction = 0;
  pEv->event.nArg = nArg;
  pEv->event.aStored = (StoredArg*)&pEv[1];
  pData = (unsigned char*)&pEv->event.aStored[nArg];
  memcpy(pData, zName, nName + 1);
  pEv->event.zName = (const char*)pData;
  pData += nName + 1;
  for(i=0; i<nArg; i++){
    StoredArg *pArg = &pEv->event.aStored[i];
    const ArgView *pView = &aView[i];
    pArg->eType = pView->eType;
    pArg->nByte = pView->nByte;
    switch( pView->eType ){
      case SQLITE_INTEGER: pArg->u.i = pView->u.i; break;
      case SQLITE_FLOAT:   pArg->u.r = pView->u.r; break;
      case SQLITE_TEXT:
        memcpy(pData, pView->z, pView->nByte + 1);
        pArg->u.z = pData;
        pData += pView->nByte + 1;
        break;
      case SQLITE_BLOB:
        if( pView->nByte ) memcpy(pData, pView->z, pView->nByte);
        pArg->u.z = pData;
        pData += pView->nByte;
        break;
      default:
        pArg->eType = SQLITE_NULL;
    }
  }
  return pEv;
}

static void storedEventRelease(StoredEvent *pEv){
  EventChunk *pChunk;
  if( pEv==0 || --pEv->nRef>0 ) return;
  pChunk = pEv->pChunk;
  if( pChunk==0 ){
    sqlite3_free(pEv);
  }else if( --pChunk->nLive==0 ){
    /* Nothing lives in it: free it, or carve it again from the start. */
    if( pChunk->isRetired ) sqlite3_free(pChunk);
    else pChunk->nUsed = CHUNK_HEADER;
  }
}

/* ---- the event accessors of the C API ---------------------------------- */

sqlite3_int64 sqlitetriggers_event_seq(const sqlitetriggers_event *pEvent){
  return pEvent->seq;
}
sqlite3_int64 sqlitetriggers_event_transaction(const sqlitetriggers_event *pEvent){
  return pEvent->iTransaction;
}
const char *sqlitetriggers_event_name(const sqlitetriggers_event *pEvent){
  return pEvent->zName;
}
int sqlitetriggers_event_argc(const sqlitetriggers_event *pEvent){
  return pEvent->nArg;
}
int sqlitetriggers_event_type(const sqlitetriggers_event *pEvent, int i){
  if( i<0 || i>=pEvent->nArg ) return SQLITE_NULL;
  return pEvent->aStored[i].eType;
}
sqlite3_int64 sqlitetriggers_event_int64(const sqlitetriggers_event *pEvent,
                                         int i){
  switch( sqlitetriggers_event_type(pEvent, i) ){
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
      return pEvent->aStored[i].eType==SQLITE_INTEGER
             ? pEvent->aStored[i].u.i : (sqlite3_int64)pEvent->aStored[i].u.r;
    default:
      return 0;
  }
}
double sqlitetriggers_event_double(const sqlitetriggers_event *pEvent, int i){
  switch( sqlitetriggers_event_type(pEvent, i) ){
    case SQLITE_INTEGER:
    case SQLITE_FLOAT:
      return pEvent->aStored[i].eType==SQLITE_FLOAT
             ? pEvent->aStored[i].u.r : (double)pEvent->aStored[i].u.i;
    default:
      return 0.0;
  }
}
const unsigned char *sqlitetriggers_event_text(
  const sqlitetriggers_event *pEvent, int i
){
  if( sqlitetriggers_event_type(pEvent, i)!=SQLITE_TEXT ) return 0;
  return pEvent->aStored[i].u.z;
}
const void *sqlitetriggers_event_blob(const sqlitetriggers_event *pEvent,
                                      int i){
  if( sqlitetriggers_event_type(pEvent, i)!=SQLITE_BLOB ) return 0;
  return pEvent->aStored[i].u.z;
}
int sqlitetriggers_event_bytes(const sqlitetriggers_event *pEvent, int i){
  int eType = sqlitetriggers_event_type(pEvent, i);
  if( eType!=SQLITE_TEXT && eType!=SQLITE_BLOB ) return 0;
  return pEvent->aStored[i].nByte;
}

/* ---- per-connection state ---------------------------------------------- */

typedef struct Observer Observer;
struct Observer {
  sqlite3_int64 id;
  char *zName;                /* NULL: every name */
  sqlitetriggers_immediate_callback xImmediate;     /* one of the three */
  sqlitetriggers_after_commit_callback xAfterCommit;
  sqlitetriggers_batch_callback xBatch;
  void *pArg;
  void (*xDestroy)(void*);
  int isRemoved;
};

/* A growable array of events; the delivery queue reads from iHead. */
typedef struct EventList EventList;
struct EventList {
  StoredEvent **a;
  int n, nAlloc, iHead;
};

/* The state of a savepoint level when this table first saw it. */
typedef struct SavepointMark SavepointMark;
struct SavepointMark { int iLevel; int nPending; };

struct CallbackState {
  Observer **aObserver;
  int nObserver;
  int nImmediate;             /* of them immediate, removed ones included */
  sqlite3_int64 lastObserverId;
  int nDispatching;           /* observer loops running (they nest) */
  int hasRemoved;             /* removed observers wait for the loops */
  EventChunk *pChunk;         /* where new events are carved */
  EventList pending;          /* this transaction's events */
  SavepointMark *aMark;
  int nMark, nMarkAlloc;
  int isEnlisted;             /* xBegin seen, no xCommit/xRollback yet */
  sqlite3_int64 iTransaction; /* transactions ended so far */
  char zSpoiledBy[128];       /* a captured table whose change was lost */
  const char *zSpoiledReason; /* why, a static string */
  int spoiledRc;              /* and the COMMIT's error code */
  int isEnlisting;            /* our own INSERT is running */
  EventList queue;            /* committed, not yet delivered */
  int isDelivering;
  /* The batch observer being called, and the round of the queue it reads
  ** through swift_callback_batch; iBatchGeneration changes with each call
  ** so that cursors opened in an earlier one see nothing. */
  const Observer *pBatchObserver;
  int iBatchStart, iBatchEnd;
  sqlite3_int64 iBatchGeneration;
  sqlite3_int64 lastSeq;
  sqlite3_int64 lastCommit;   /* commits that made events, numbered */
  /* The log: a ring of the last nLogCapacity events, allocated as it fills
  ** (nLogAlloc slots), so that a large capacity costs nothing until used. */
  StoredEvent **aLog;
  int nLogCapacity, nLogAlloc, nLog, iLogHead;
};

/* Room for nMore more events.  Counts stay ints: past MAX_EVENTS (in one
** transaction, or waiting) a list refuses to grow, on 32-bit targets too. */
#define MAX_EVENTS 0x3fffffff
static int eventListReserve(EventList *pList, int nMore){
  assert( pList->n>=0 && pList->n<=pList->nAlloc && nMore>=0 );
  assert( pList->iHead>=0 && pList->iHead<=pList->n );
  if( nMore > MAX_EVENTS - pList->n ) return SQLITE_NOMEM;
  if( pList->n + nMore > pList->nAlloc ){
    int nNew = pList->nAlloc ? pList->nAlloc : 16;
    StoredEvent **aNew;
    while( nNew < pList->n + nMore ) nNew = nNew>MAX_EVENTS/2 ? MAX_EVENTS : 2*nNew;
    aNew = sqlite3_realloc64(pList->a, (sqlite3_uint64)nNew*sizeof(StoredEvent*));
    if( aNew==0 ) return SQLITE_NOMEM;
    pList->a = aNew;
    pList->nAlloc = nNew;
  }
  return SQLITE_OK;
}

/* Release the events from index iFrom on, and shrink a large array. */
static void eventListTruncate(EventList *pList, int iFrom){
  while( pList->n > iFrom ) storedEventRelease(pList->a[--pList->n]);
  if( pList->n==0 ){
    pList->iHead = 0;
    if( pList->nAlloc>4096 ){
      sqlite3_free(pList->a);
      pList->a = 0;
      pList->nAlloc = 0;
    }
  }
}

static void observerFree(Observer *pObs){
  if( pObs->xDestroy ) pObs->xDestroy(pObs->pArg);
  sqlite3_free(pObs->zName);
  sqlite3_free(pObs);
}

static int hasAfterCommitObserver(CallbackState *pState);
static void queueClear(CallbackState *pState);

/* Drop removed observers, unless an observer loop is still running.  With
** the last after-commit observer gone, the events waiting for it go too. */
static void observersCompact(CallbackState *pState){
  int i, j = 0;
  if( pState->nDispatching>0 || !pState->hasRemoved ) return;
  for(i=0; i<pState->nObserver; i++){
    if( pState->aObserver[i]->isRemoved ){
      pState->nImmediate -= pState->aObserver[i]->xImmediate!=0;
      observerFree(pState->aObserver[i]);
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
  if( !hasAfterCommitObserver(pState) ) queueClear(pState);
}

static int observerMatches(const Observer *pObs, const char *zName){
  return !pObs->isRemoved && (pObs->zName==0 || strcmp(pObs->zName, zName)==0);
}

static int hasAfterCommitObserver(CallbackState *pState){
  int i;
  for(i=0; i<pState->nObserver; i++){
    const Observer *pObs = pState->aObserver[i];
    if( (pObs->xAfterCommit || pObs->xBatch) && !pObs->isRemoved ){
      return 1;
    }
  }
  return 0;
}

CallbackState *sqlitetriggers_callback_state_create(void){
  CallbackState *pState = sqlite3_malloc(sizeof(*pState));
  if( pState ){
    memset(pState, 0, sizeof(*pState));
    pState->nLogCapacity = DEFAULT_LOG_CAPACITY;
  }
  return pState;
}

/* The slot of the log's i-th event, oldest first. */
static int logSlot(const CallbackState *pState, int i){
  return (pState->iLogHead + i) % pState->nLogAlloc;
}

static void logClear(CallbackState *pState){
  int i;
  for(i=0; i<pState->nLog; i++) storedEventRelease(pState->aLog[logSlot(pState, i)]);
  pState->nLog = 0;
  pState->iLogHead = 0;
}

static void queueClear(CallbackState *pState){
  int i;
  for(i=pState->queue.iHead; i<pState->queue.n; i++){
    storedEventRelease(pState->queue.a[i]);
  }
  sqlite3_free(pState->queue.a);
  memset(&pState->queue, 0, sizeof(pState->queue));
}

void sqlitetriggers_callback_state_free(CallbackState *pState){
  int i;
  if( pState==0 ) return;
  eventListTruncate(&pState->pending, 0);
  sqlite3_free(pState->pending.a);
  queueClear(pState);
  logClear(pState);
  sqlite3_free(pState->aLog);
  sqlite3_free(pState->aMark);
  eventChunkRetire(pState->pChunk);    /* events held elsewhere keep it */
  for(i=0; i<pState->nObserver; i++) observerFree(pState->aObserver[i]);
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
  for(i=0; i<pState->nLog; i++) aNew[i] = pState->aLog[logSlot(pState, i)];
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
    storedEventRelease(pState->aLog[pState->iLogHead]);
    pState->iLogHead = logSlot(pState, 1);
    pState->nLog--;
  }
  assert( pState->nLog<pState->nLogAlloc );    /* logReserve() made room */
  pState->aLog[logSlot(pState, pState->nLog)] = pEv;
  pEv->nRef++;
  pState->nLog++;
}

/* Number, log and (where anyone listens) queue one committed event of the
** current commit (lastCommit).  The queue has room: transactionSync() or
** the caller reserved it. */
static void commitEvent(CallbackState *pState, StoredEvent *pEv,
                        int isQueued){
  pEv->event.seq = ++pState->lastSeq;
  pEv->event.iTransaction = pState->lastCommit;
  logAppend(pState, pEv);
  if( isQueued ){
    pState->queue.a[pState->queue.n++] = pEv;
    pEv->nRef++;
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

static void transactionEnd(CallbackState *pState){
  assert( savepointMarksAreValid(pState) );
  eventListTruncate(&pState->pending, 0);
  pState->nMark = 0;
  pState->isEnlisted = 0;
  pState->zSpoiledBy[0] = 0;
  pState->iTransaction++;
}

/* Make room for n events to commit: in the log, and in the queue when an
** after-commit observer listens.  Committing cannot fail after this. */
static int commitReserve(CallbackState *pState, int n){
  int rc = n>0 ? logReserve(pState, n) : SQLITE_OK;
  if( rc==SQLITE_OK && hasAfterCommitObserver(pState) ){
    rc = eventListReserve(&pState->queue, n);
  }
  return rc;
}

static int transactionSync(CallbackState *pState){
  /* The last step that may still fail the commit. */
  return commitReserve(pState, pState->pending.n);
}

static void transactionCommit(CallbackState *pState){
  /* transactionSync() made the room, so this allocates nothing. */
  int rc = commitReserve(pState, pState->pending.n), i, isQueued;
  assert( rc==SQLITE_OK );
  isQueued = rc==SQLITE_OK && hasAfterCommitObserver(pState);
  if( pState->pending.n>0 ) pState->lastCommit++;
  for(i=0; i<pState->pending.n; i++){
    commitEvent(pState, pState->pending.a[i], isQueued);
  }
  transactionEnd(pState);
}

static int savepointBegin(CallbackState *pState, int iLevel){
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
static void savepointDropMarks(CallbackState *pState, int iLevel,
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

static void savepointRollbackTo(CallbackState *pState, int iLevel){
  int i, nKeep = -1, lowest = -1;
  assert( savepointMarksAreValid(pState) );
  for(i=0; i<pState->nMark; i++){
    if( pState->aMark[i].iLevel==iLevel ) nKeep = pState->aMark[i].nPending;
    if( lowest<0 || pState->aMark[i].iLevel<lowest ) lowest = pState->aMark[i].iLevel;
  }
  /* A level below every mark began before this table joined the
  ** transaction: back to the state of xBegin, where nothing was pending. */
  if( nKeep<0 && (pState->nMark==0 || iLevel<lowest) ) nKeep = 0;
  if( nKeep>=0 ) eventListTruncate(&pState->pending, nKeep);
  savepointDropMarks(pState, iLevel, 0);
  assert( savepointMarksAreValid(pState) );
}

/* ---- the virtual tables ------------------------------------------------ */

/* The columns of swift_callback_log and temp.swift_callback_pending. */
#define EVENT_COLUMN_SEQ   0
#define EVENT_COLUMN_NAME  1
#define EVENT_COLUMN_ARGS  2
#define EVENT_COLUMN_TX    3

typedef struct EventTable EventTable;
struct EventTable {
  sqlite3_vtab base;
  Connection *p;
  int isLog;                  /* swift_callback_log, else the pending table */
};

typedef struct EventCursor EventCursor;
struct EventCursor {
  sqlite3_vtab_cursor base;
  int iRow;
};

/* A direct-only table of one of our modules, declared by zDecl. */
static int eventTableDeclare(sqlite3 *db, void *pAux, const char *zDecl,
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
  /* The column numbers below follow this declaration. */
  return eventTableDeclare(db, pAux,
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

/* A distinct xCreate keeps the pending module from being eponymous; only
** the table swift_callback() writes may exist. */
static int pendingCreate(sqlite3 *db, void *pAux, int argc,
                         const char *const*argv, sqlite3_vtab **ppVtab,
                         char **pzErr){
  if( argc<3 || sqlite3_stricmp(argv[1], "temp")!=0
   || sqlite3_stricmp(argv[2], "swift_callback_pending")!=0 ){
    *pzErr = sqlite3_mprintf("swift_callback_pending: only "
                             "temp.swift_callback_pending may use this module");
    return SQLITE_ERROR;
  }
  return pendingConnect(db, pAux, argc, argv, ppVtab, pzErr);
}

static int eventTableDisconnect(sqlite3_vtab *pVtab){
  sqlite3_free(pVtab->zErrMsg);    /* one SQLite did not take */
  sqlite3_free(pVtab);
  return SQLITE_OK;
}

/* Dropping the table would leave swift_callback() unable to join
** transactions (a ROLLBACK brings back the schema, not the table's state):
** only a newer registration on the connection, replacing it, may drop it.
** SQLite neither reads nor frees an xDestroy's zErrMsg, so the refusal
** sets none (the DROP fails with "SQL logic error"). */
static int pendingDestroy(sqlite3_vtab *pVtab){
  EventTable *pTab = (EventTable*)pVtab;
  if( sqlitetriggers_connection_find(pTab->p->db)==pTab->p ) return SQLITE_ERROR;
  return eventTableDisconnect(pVtab);
}

static int eventTableBestIndex(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo){
  (void)pVtab;
  pInfo->estimatedCost = 1000.0;
  return SQLITE_OK;
}

/* A zeroed cursor of nByte bytes, for either kind of table. */
static int cursorOpen(int nByte, sqlite3_vtab_cursor **ppCur){
  sqlite3_vtab_cursor *pCur = sqlite3_malloc(nByte);
  if( pCur==0 ) return SQLITE_NOMEM;
  memset(pCur, 0, nByte);
  *ppCur = pCur;
  return SQLITE_OK;
}

static int eventCursorOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  (void)pVtab;
  return cursorOpen(sizeof(EventCursor), ppCur);
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
    return pState->aLog[logSlot(pState, iRow)];
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

/* The arguments of pEv as a JSON array (see the top of this file). */
static char *eventArgsJson(sqlite3 *db, const sqlitetriggers_event *pEv){
  sqlite3_str *pOut = sqlite3_str_new(db);
  int i, j;
  sqlite3_str_appendchar(pOut, 1, '[');
  for(i=0; i<pEv->nArg; i++){
    const StoredArg *pArg = &pEv->aStored[i];
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

static CallbackState *tableState(sqlite3_vtab *pVtab){
  return ((EventTable*)pVtab)->p->pCallbacks;
}

static int pendingBegin(sqlite3_vtab *pVtab){
  tableState(pVtab)->isEnlisted = 1;
  return SQLITE_OK;
}
static int pendingSync(sqlite3_vtab *pVtab){
  EventTable *pTab = (EventTable*)pVtab;
  CallbackState *pState = tableState(pVtab);
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
  if( rc!=SQLITE_OK ){
    sqlite3_free(pVtab->zErrMsg);
    pVtab->zErrMsg = zErr;
    return rc;
  }
  return transactionSync(tableState(pVtab));
}
static int pendingCommit(sqlite3_vtab *pVtab){
  transactionCommit(tableState(pVtab));
  return SQLITE_OK;
}
static int pendingRollback(sqlite3_vtab *pVtab){
  transactionEnd(tableState(pVtab));
  return SQLITE_OK;
}
static int pendingSavepoint(sqlite3_vtab *pVtab, int iLevel){
  return savepointBegin(tableState(pVtab), iLevel);
}
static int pendingRelease(sqlite3_vtab *pVtab, int iLevel){
  savepointDropMarks(tableState(pVtab), iLevel, 1);
  return SQLITE_OK;
}
static int pendingRollbackTo(sqlite3_vtab *pVtab, int iLevel){
  savepointRollbackTo(tableState(pVtab), iLevel);
  return SQLITE_OK;
}

static const sqlite3_module logModule = {
  /* iVersion */ 0,
  /* xCreate  */ 0,   /* eponymous only */
  logConnect, eventTableBestIndex, eventTableDisconnect, 0,
  eventCursorOpen, eventCursorClose, eventCursorFilter, eventCursorNext,
  eventCursorEof, eventCursorColumn, eventCursorRowid,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
};

static const sqlite3_module pendingModule = {
  /* iVersion */ 2,
  pendingCreate, pendingConnect, eventTableBestIndex,
  eventTableDisconnect, pendingDestroy,
  eventCursorOpen, eventCursorClose, eventCursorFilter, eventCursorNext,
  eventCursorEof, eventCursorColumn, eventCursorRowid,
  pendingUpdate, pendingBegin, pendingSync, pendingCommit, pendingRollback,
  0, 0, pendingSavepoint, pendingRelease, pendingRollbackTo, 0
};

/* ---- swift_callback_batch ---------------------------------------------- */

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
  rc = eventTableDeclare(db, pAux, zDecl, 0, ppVtab);
  sqlite3_free(zDecl);
  return rc;
}

static int batchCursorOpen(sqlite3_vtab *pVtab, sqlite3_vtab_cursor **ppCur){
  (void)pVtab;
  return cursorOpen(sizeof(BatchCursor), ppCur);
}

static int batchCursorClose(sqlite3_vtab_cursor *pCur){
  storedEventRelease(((BatchCursor*)pCur)->pEv);
  sqlite3_free(pCur);
  return SQLITE_OK;
}

/* Move to the first event of the call's round, from iEvent on, that the
** batch observer observes; hold it. */
static void batchCursorSeek(BatchCursor *pCur, int iEvent){
  CallbackState *pState = tableState(pCur->base.pVtab);
  storedEventRelease(pCur->pEv);
  pCur->pEv = 0;
  if( pCur->iGeneration!=pState->iBatchGeneration
   || pState->pBatchObserver==0 ) return;
  for(; iEvent<pState->iBatchEnd; iEvent++){
    StoredEvent *pEv = pState->queue.a[iEvent];
    if( observerMatches(pState->pBatchObserver, pEv->event.zName) ){
      pCur->iEvent = iEvent;
      pCur->pEv = pEv;
      pEv->nRef++;
      return;
    }
  }
}

static int batchCursorFilter(sqlite3_vtab_cursor *pCur, int idxNum,
                             const char *idxStr, int argc, sqlite3_value **argv){
  BatchCursor *pBatch = (BatchCursor*)pCur;
  CallbackState *pState = tableState(pCur->pVtab);
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
  pArg = &pEvent->aStored[iColumn - BATCH_COLUMN_FIRST_ARG];
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

static const sqlite3_module batchModule = {
  /* iVersion */ 0,
  /* xCreate  */ 0,   /* eponymous only */
  batchConnect, eventTableBestIndex, eventTableDisconnect, 0,
  batchCursorOpen, batchCursorClose, batchCursorFilter, batchCursorNext,
  batchCursorEof, batchCursorColumn, batchCursorRowid,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
};

/* ---- swift_callback() -------------------------------------------------- */

/* Immediate observers of the event; 0, or 1 after setting the error. */
static int dispatchImmediate(sqlite3_context *ctx, CallbackState *pState,
                             const sqlitetriggers_event *pEvent){
  int i, n = pState->nObserver, isRefused = 0;
  pState->nDispatching++;
  for(i=0; i<n && !isRefused; i++){
    Observer *pObs = pState->aObserver[i];
    char *zError = 0;
    if( !pObs->xImmediate || !observerMatches(pObs, pEvent->zName) ) continue;
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
  observersCompact(pState);
  return isRefused;
}

/* Join the transaction with our nested INSERT (see the top of the file). */
static int enlist(sqlite3_context *ctx, Connection *p){
  CallbackState *pState = p->pCallbacks;
  sqlite3_stmt *pStmt = 0;
  int rc;
  if( sqlite3_db_readonly(p->db, "main")==1 ){
    /* The nested INSERT would succeed (TEMP is writable), and the event
    ** would wait for a commit that never comes. */
    sqlite3_result_error(ctx, "swift_callback: cannot record an event on a "
                              "read-only connection: events are delivered "
                              "after commit, and it never commits", -1);
    sqlite3_result_error_code(ctx, SQLITE_READONLY);
    return SQLITE_READONLY;
  }
  /* The INSERT begins the table's transaction (xBegin), then its row is
  ** ignored (pendingUpdate): no change is counted, so total_changes() and
  ** last_insert_rowid() stay the app's own.  changes() is still set to 0
  ** by this statement's end; a trigger's statement sets it again at its
  ** own end, so only a top-level SELECT swift_callback(...) shows it. */
  sqlite3_int64 lastRowid = sqlite3_last_insert_rowid(p->db);
  rc = sqlite3_prepare_v2(p->db,
      "INSERT OR IGNORE INTO temp.swift_callback_pending(name) VALUES (NULL)",
      -1, &pStmt, 0);
  if( rc==SQLITE_OK ){
    pState->isEnlisting = 1;
    rc = sqlite3_step(pStmt);
    pState->isEnlisting = 0;
    rc = sqlite3_finalize(pStmt);
  }
  sqlite3_set_last_insert_rowid(p->db, lastRowid);
  if( rc!=SQLITE_OK ){
    char *zErr = (rc & 0xff)==SQLITE_READONLY
      ? sqlite3_mprintf("swift_callback: cannot record an event on a "
                        "read-only connection (PRAGMA query_only?)")
      : sqlite3_mprintf("swift_callback: cannot join the transaction: %s",
                        sqlite3_errmsg(p->db));
    sqlite3_result_error(ctx, zErr ? zErr : "swift_callback", -1);
    sqlite3_result_error_code(ctx, rc);
    sqlite3_free(zErr);
  }
  return rc;
}

/* Once per transaction: ATTACH, the only way a new file's schema comes in,
** is impossible inside one. */
int sqlitetriggers_callback_join(sqlite3_context *ctx, Connection *p,
                                 const char *zFunc){
  if( p->pCallbacks->isEnlisted ) return 1;
  return sqlitetriggers_schema_guard_call(ctx, zFunc) && enlist(ctx, p)==SQLITE_OK;
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
int sqlitetriggers_callback_record(Connection *p, const char *zName, int nName,
                                   int nArg, const ArgView *aView){
  CallbackState *pState = p->pCallbacks;
  StoredEvent *pEv;
  assert( pState->isEnlisted );
  if( eventListReserve(&pState->pending, 1)!=SQLITE_OK ) return SQLITE_NOMEM;
  pEv = storedEventCreate(&pState->pChunk, zName, nName, nArg, aView);
  if( pEv==0 ) return SQLITE_NOMEM;
  pState->pending.a[pState->pending.n++] = pEv;
  return SQLITE_OK;
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
  if( !sqlitetriggers_callback_join(ctx, p, "swift_callback") ) return;
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
    pEv = storedEventCreate(&pState->pChunk, zName, nName, argc - 1, aView);
  }
  if( pEv==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( pState->nImmediate>0 && dispatchImmediate(ctx, pState, &pEv->event) ){
    storedEventRelease(pEv);
    return;
  }
  if( pState->isEnlisted ){
    if( eventListReserve(&pState->pending, 1)!=SQLITE_OK ){
      storedEventRelease(pEv);
      sqlite3_result_error_nomem(ctx);
      return;
    }
    pState->pending.a[pState->pending.n++] = pEv;
  }else{
    /* Our INSERT was the only writer of a statement outside BEGIN, and
    ** committed as it finished: nothing this statement does can roll back
    ** the event. */
    if( commitReserve(pState, 1)!=SQLITE_OK ){
      storedEventRelease(pEv);
      sqlite3_result_error_nomem(ctx);
      return;
    }
    pState->lastCommit++;
    commitEvent(pState, pEv, hasAfterCommitObserver(pState));
    storedEventRelease(pEv);
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

int sqlitetriggers_register_callback_functions(sqlite3 *db, Connection *p){
  int rc;
  /* An earlier registration's table belongs to the module replaced below. */
  rc = sqlite3_exec(db, "DROP TABLE IF EXISTS temp.swift_callback_pending",
                    0, 0, 0);
  if( rc!=SQLITE_OK ) return rc;
  p->nRef += 2;
  rc = sqlite3_create_module_v2(db, "swift_callback_log", &logModule, p,
                                sqlitetriggers_connection_release);
  if( rc==SQLITE_OK ){
    rc = sqlite3_create_module_v2(db, "swift_callback_pending", &pendingModule,
                                  p, sqlitetriggers_connection_release);
  }else{
    sqlitetriggers_connection_release(p);     /* the second module's reference */
  }
  if( rc==SQLITE_OK ){
    p->nRef++;
    rc = sqlite3_create_module_v2(db, "swift_callback_batch", &batchModule, p,
                                  sqlitetriggers_connection_release);
  }
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "swift_callback", -1, SQLITE_DIRECTONLY,
                                  p, swiftCallbackFunc);
  }
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "swift_callback_log_capacity", -1,
                                  SQLITE_DIRECTONLY, p, logCapacityFunc);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_exec(db, "CREATE VIRTUAL TABLE temp.swift_callback_pending"
                          " USING swift_callback_pending", 0, 0, 0);
  }
  return rc;
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
      observersCompact(pState);
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
      nMatch += observerMatches(pObs, pState->queue.a[iEv]->event.zName);
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
        if( pObs->xAfterCommit && observerMatches(pObs, pEv->event.zName) ){
          pObs->xAfterCommit(pObs->pArg, &pEv->event);
        }
      }
      isAttached = p->db!=0;
    }
    if( isAttached ){
      isAttached = deliverBatches(p, pState, iStart, pState->queue.iHead);
    }
    for(iEv=iStart; iEv<pState->queue.iHead; iEv++){
      storedEventRelease(pState->queue.a[iEv]);
    }
  }
  if( !sqlitetriggers_connection_unhold(p) ) return SQLITE_ABORT;
  pState->queue.n = pState->queue.iHead = 0;
  eventListTruncate(&pState->queue, 0);     /* shrinks a large array */
  pState->nDispatching--;
  pState->isDelivering = 0;
  observersCompact(pState);
  return SQLITE_OK;
}

int sqlitetriggers_undelivered_count(sqlite3 *db){
  Connection *p = sqlitetriggers_connection_find(db);
  if( p==0 ) return -1;
  return p->pCallbacks->queue.n - p->pCallbacks->queue.iHead;
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
    StoredEvent *pEv = pState->aLog[logSlot(pState, i)];
    int iNew = i - (pState->nLog - nKeep);
    if( iNew>=0 ){
      aNew[iNew] = pEv;
    }else{
      storedEventRelease(pEv);
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
