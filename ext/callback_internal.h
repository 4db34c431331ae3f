/*
** callback_internal.h: what the files of swift_callback() share.
**
**   callback.c             the SQL-level specification, swift_callback()
**                          itself, joining the transaction, registration
**   callback_event.c       the event store: chunked allocation, the event
**                          accessors of the C API, growable event lists
**   callback_transaction.c per-connection state, commit, rollback and
**                          savepoints, the log ring
**   callback_tables.c      swift_callback_log and swift_callback_pending
**   callback_batch.c       swift_callback_batch
**   callback_delivery.c    observers and their C API, immediate dispatch,
**                          after-commit delivery
**
** Every name it declares is hidden, as sqlitetriggers_internal.h's are.
*/
#ifndef SQLITETRIGGERS_CALLBACK_INTERNAL_H
#define SQLITETRIGGERS_CALLBACK_INTERNAL_H

#include "sqlitetriggers_internal.h"
#include "include/sqlitetriggers.h"

#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility push(hidden)
#endif

#define DEFAULT_LOG_CAPACITY 1000

/* ---- events (callback_event.c) ----------------------------------------- */

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

/* What observers see: a copy of the call's name and arguments.  Always
** the last member of a StoredEvent, whose arguments follow it in the same
** allocation (sqlitetriggers_event_args()): a pointer to them would cost
** every event 8 bytes, and the events of a large transaction are written
** and read back from memory, so their size is time. */
struct sqlitetriggers_event {
  sqlite3_int64 seq;          /* 0 until committed */
  sqlite3_int64 iTransaction; /* the commit's number; 0 until committed */
  const char *zName;
  int nArg;
  int nRef;                   /* the StoredEvent's references (in what
                              ** would be padding) */
};

typedef struct EventChunk EventChunk;

/* A committed or pending event, shared by reference. */
typedef struct StoredEvent StoredEvent;
struct StoredEvent {
  EventChunk *pChunk;         /* where it was carved; NULL: alone */
  sqlitetriggers_event event; /* last: the arguments follow */
};

static inline const StoredArg *sqlitetriggers_event_args(const sqlitetriggers_event *pEvent){
  return (const StoredArg*)&pEvent[1];
}

/* A growable array of events; the delivery queue reads from iHead. */
typedef struct EventList EventList;
struct EventList {
  StoredEvent **a;
  int n, nAlloc, iHead;
};

StoredEvent *sqlitetriggers_stored_event_create(EventChunk **ppCurrent,
                                      const char *zName, int nName, int nArg,
                                      const ArgView *aView);
void sqlitetriggers_stored_event_release(StoredEvent *pEv);
void sqlitetriggers_event_chunk_retire(EventChunk *pChunk);
int sqlitetriggers_event_list_grow(EventList *pList, int nMore);
/* Room for nMore more events (SQLITE_OK), or SQLITE_NOMEM.  Inline: every
** event asks, and the array almost always has room. */
static inline int sqlitetriggers_event_list_reserve(EventList *pList, int nMore){
  return nMore <= pList->nAlloc - pList->n ? SQLITE_OK
                                           : sqlitetriggers_event_list_grow(pList, nMore);
}
void sqlitetriggers_event_list_truncate(EventList *pList, int iFrom);

/* ---- per-connection state (callback_transaction.c) --------------------- */

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
  EventList atCommit;         /* made at xSync (change_net.c), pending from
                              ** xCommit on: after the transaction's own */
  SavepointMark *aMark;
  int nMark, nMarkAlloc;
  int isEnlisted;             /* xBegin seen, no xCommit/xRollback yet */
  int isGuarded;              /* enlisted through the schema guard
                              ** (sqlitetriggers_callback_join), not only
                              ** by the log's stamp */
  sqlite3_int64 iTransaction; /* transactions ended so far */
  char zSpoiledBy[128];       /* a captured table whose change was lost */
  const char *zSpoiledReason; /* why, a static string */
  int spoiledRc;              /* and the COMMIT's error code */
  int isEnlisting;            /* our own INSERT is running */
  int hasBegun;               /* xBegin came during that INSERT */
  /* That INSERT, kept prepared once swift_callback_keeper is connected,
  ** whose xDisconnect (sqlite3_close() runs it before it looks for
  ** unfinalized statements) finalizes it; see keepOrFinalize(). */
  sqlite3_stmt *pEnlist;
  int isKeeperConnected;
  int isKeeperTried;          /* its connection tried once (a file's table
                              ** may hide it): never again */
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

int sqlitetriggers_log_slot(const CallbackState *pState, int i);
void sqlitetriggers_queue_clear(CallbackState *pState);
int sqlitetriggers_commit_reserve(CallbackState *pState, int n);
void sqlitetriggers_commit_event(CallbackState *pState, StoredEvent *pEv,
                        int isQueued, int isLogged);
int sqlitetriggers_transaction_sync(CallbackState *pState);
void sqlitetriggers_transaction_commit(CallbackState *pState);
void sqlitetriggers_transaction_end(CallbackState *pState);
int sqlitetriggers_savepoint_begin(CallbackState *pState, int iLevel);
void sqlitetriggers_savepoint_drop_marks(CallbackState *pState, int iLevel,
                               int isInclusive);
void sqlitetriggers_savepoint_rollback_to(CallbackState *pState, int iLevel);

/* ---- the virtual tables (callback_tables.c, callback_batch.c) ---------- */

/* The columns of swift_callback_log and swift_callback_pending. */
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

int sqlitetriggers_event_table_declare(sqlite3 *db, void *pAux, const char *zDecl,
                             int isLog, sqlite3_vtab **ppVtab);
int sqlitetriggers_event_table_best_index(sqlite3_vtab *pVtab, sqlite3_index_info *pInfo);
int sqlitetriggers_event_table_disconnect(sqlite3_vtab *pVtab);
int sqlitetriggers_vtab_cursor_open(int nByte, sqlite3_vtab_cursor **ppCur);
CallbackState *sqlitetriggers_table_state(sqlite3_vtab *pVtab);
extern const sqlite3_module sqlitetriggers_log_module;
extern const sqlite3_module sqlitetriggers_pending_module;
extern const sqlite3_module sqlitetriggers_keeper_module;
int sqlitetriggers_is_statement_of(sqlite3 *db, sqlite3_stmt *pStmt, const char *zSql, int nWithin);
/* How a connection joins a transaction (callback.c). */
#define SQLITETRIGGERS_ENLIST_SQL "INSERT OR IGNORE INTO main.swift_callback_pending(name) VALUES (NULL)"
extern const sqlite3_module sqlitetriggers_batch_module;

/* ---- observers and delivery (callback_delivery.c) ---------------------- */

void sqlitetriggers_observer_free(Observer *pObs);
void sqlitetriggers_observers_compact(CallbackState *pState);
int sqlitetriggers_observer_matches(const Observer *pObs, const char *zName);
int sqlitetriggers_has_after_commit_observer(CallbackState *pState);
int sqlitetriggers_dispatch_immediate(sqlite3_context *ctx, CallbackState *pState,
                             const sqlitetriggers_event *pEvent);

#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility pop
#endif

#endif /* SQLITETRIGGERS_CALLBACK_INTERNAL_H */
