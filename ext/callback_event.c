/*
** callback_event.c: the events swift_callback() and the change capture keep.
**
** An event is a copy of a call's name and arguments, in one allocation,
** shared by reference between the open transaction, the log and the
** delivery queue.  Events are carved from chunks (below); the C API reads
** them through the sqlitetriggers_event_...() accessors.
*/
#include "callback_internal.h"

#include <assert.h>

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

/* A chunk no longer carved from: freed now if nothing lives in it, else by
** the release of its last event. */
void sqlitetriggers_event_chunk_retire(EventChunk *pChunk){
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
    sqlitetriggers_event_chunk_retire(pChunk);
    *ppCurrent = pChunk = pNew;
  }
  pMem = (char*)pChunk + pChunk->nUsed;
  pChunk->nUsed += (int)nByte;
  pChunk->nLive++;
  *ppChunkOut = pChunk;
  return pMem;
}

/*
** Reads an argument once, into an ArgView; 0 when out of memory (a text or
** blob that cannot be read).  Text is read in place: a value that comes
** from a row's record (a column, a trigger's NEW or OLD, the preupdate
** hook's) is not NUL-terminated, and sqlite3_value_text() would copy it
** into an allocation of its own (a third of the change capture's hook,
** measured) for the event to copy again, with its own NUL.
** sqlite3_value_bytes() converts a UTF-16 database's text to UTF-8 first,
** as documented, and sqlite3_value_blob() then gives the UTF-8 bytes as
** they are (the value stays TEXT to sqlite3_value_type()).
*/
int sqlitetriggers_arg_view_read(ArgView *pView, sqlite3_value *pValue){
  pView->eType = sqlite3_value_type(pValue);
  pView->nByte = 0;
  pView->z = 0;
  switch( pView->eType ){
    case SQLITE_INTEGER: pView->u.i = sqlite3_value_int64(pValue); break;
    case SQLITE_FLOAT:   pView->u.r = sqlite3_value_double(pValue); break;
    case SQLITE_TEXT:
      if( (pView->nByte = sqlite3_value_bytes(pValue))>0 ){   /* first */
        pView->z = sqlite3_value_blob(pValue);
      }else{
        /* Empty text, or a conversion that ran out of memory: the usual
        ** way tells them apart (NULL), and may convert this time. */
        pView->z = sqlite3_value_text(pValue);
        pView->nByte = sqlite3_value_bytes(pValue);
      }
      if( pView->z==0 ) return 0;
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
StoredEvent *sqlitetriggers_stored_event_create(EventChunk **ppCurrent,
                                      const char *zName, int nName, int nArg,
                                      const ArgView *aView){
  sqlite3_uint64 nByte;
  StoredEvent *pEv;
  StoredArg *aStored;
  EventChunk *pChunk;
  unsigned char *pData;
  int i;
  assert( nArg>=0 && nArg<=SQLITETRIGGERS_MAX_CALLBACK_ARGS );
  nByte = sizeof(StoredEvent) + nArg*sizeof(StoredArg) + nName + 1;
  for(i=0; i<nArg; i++){
    /* Text and blobs keep their bytes, text a NUL more; nByte is 0 for the rest. */
    assert( aView[i].nByte==0 || aView[i].eType==SQLITE_TEXT || aView[i].eType==SQLITE_BLOB );
    nByte += (sqlite3_uint64)aView[i].nByte + (aView[i].eType==SQLITE_TEXT);
  }
  pEv = eventAlloc(ppCurrent, nByte, &pChunk);
  if( pEv==0 ) return 0;
  pEv->event.nRef = 1;
  pEv->pChunk = pChunk;
  pEv->event.seq = 0;
  pEv->event.iTransaction = 0;
  pEv->event.nArg = nArg;
  aStored = (StoredArg*)&(&pEv->event)[1];     /* sqlitetriggers_event_args() */
  assert( (char*)aStored==(char*)pEv + sizeof(StoredEvent) );   /* event is last */
  pData = (unsigned char*)&aStored[nArg];
  memcpy(pData, zName, nName + 1);
  pEv->event.zName = (const char*)pData;
  pData += nName + 1;
  for(i=0; i<nArg; i++){
    StoredArg *pArg = &aStored[i];
    const ArgView *pView = &aView[i];
    pArg->eType = pView->eType;
    pArg->nByte = pView->nByte;
    switch( pView->eType ){
      case SQLITE_INTEGER: pArg->u.i = pView->u.i; break;
      case SQLITE_FLOAT:   pArg->u.r = pView->u.r; break;
      case SQLITE_TEXT:
        memcpy(pData, pView->z, pView->nByte);
        pData[pView->nByte] = 0;
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

void sqlitetriggers_stored_event_release(StoredEvent *pEv){
  EventChunk *pChunk;
  if( pEv==0 || --pEv->event.nRef>0 ) return;
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

/* Each takes NULL as "no event" (0, NULL or SQLITE_NULL), so none of them
** can crash a host that calls it with a NULL it did not check. */
sqlite3_int64 sqlitetriggers_event_seq(const sqlitetriggers_event *pEvent){
  return pEvent ? pEvent->seq : 0;
}
sqlite3_int64 sqlitetriggers_event_transaction(const sqlitetriggers_event *pEvent){
  return pEvent ? pEvent->iTransaction : 0;
}
const char *sqlitetriggers_event_name(const sqlitetriggers_event *pEvent){
  return pEvent ? pEvent->zName : 0;
}
int sqlitetriggers_event_argc(const sqlitetriggers_event *pEvent){
  return pEvent ? pEvent->nArg : 0;
}
int sqlitetriggers_event_type(const sqlitetriggers_event *pEvent, int i){
  if( pEvent==0 || i<0 || i>=pEvent->nArg ) return SQLITE_NULL;
  return sqlitetriggers_event_args(pEvent)[i].eType;
}
sqlite3_int64 sqlitetriggers_event_int64(const sqlitetriggers_event *pEvent,
                                         int i){
  double r;
  switch( sqlitetriggers_event_type(pEvent, i) ){
    case SQLITE_INTEGER:
      return sqlitetriggers_event_args(pEvent)[i].u.i;
    case SQLITE_FLOAT:
      /* As sqlite3_value_int64(): clamped, NaN as 0 (a plain cast of a
      ** REAL outside the range is undefined). */
      r = sqlitetriggers_event_args(pEvent)[i].u.r;
      if( r!=r ) return 0;
      if( r<=-9223372036854775808.0 ) return (sqlite3_int64)(((sqlite3_uint64)1)<<63);
      if( r>=9223372036854775808.0 ) return (sqlite3_int64)(~(((sqlite3_uint64)1)<<63));
      return (sqlite3_int64)r;
    default:
      return 0;
  }
}
double sqlitetriggers_event_double(const sqlitetriggers_event *pEvent, int i){
  switch( sqlitetriggers_event_type(pEvent, i) ){
    case SQLITE_INTEGER:
      return (double)sqlitetriggers_event_args(pEvent)[i].u.i;
    case SQLITE_FLOAT:
      return sqlitetriggers_event_args(pEvent)[i].u.r;
    default:
      return 0.0;
  }
}
const unsigned char *sqlitetriggers_event_text(
  const sqlitetriggers_event *pEvent, int i
){
  if( sqlitetriggers_event_type(pEvent, i)!=SQLITE_TEXT ) return 0;
  return sqlitetriggers_event_args(pEvent)[i].u.z;
}
const void *sqlitetriggers_event_blob(const sqlitetriggers_event *pEvent,
                                      int i){
  if( sqlitetriggers_event_type(pEvent, i)!=SQLITE_BLOB ) return 0;
  return sqlitetriggers_event_args(pEvent)[i].u.z;
}
int sqlitetriggers_event_bytes(const sqlitetriggers_event *pEvent, int i){
  int eType = sqlitetriggers_event_type(pEvent, i);
  if( eType!=SQLITE_TEXT && eType!=SQLITE_BLOB ) return 0;
  return sqlitetriggers_event_args(pEvent)[i].nByte;
}

/* The slow path of sqlitetriggers_event_list_reserve(): the array grows.
** Counts stay ints: past MAX_EVENTS (in one transaction, or waiting) a list
** refuses to grow, on 32-bit targets too. */
#define MAX_EVENTS 0x3fffffff
int sqlitetriggers_event_list_grow(EventList *pList, int nMore){
  assert( pList->n>=0 && pList->n<=pList->nAlloc && nMore>=0 );
  assert( pList->iHead>=0 && pList->iHead<=pList->n );
  assert( pList->nAlloc<=MAX_EVENTS );
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
void sqlitetriggers_event_list_truncate(EventList *pList, int iFrom){
  while( pList->n > iFrom ) sqlitetriggers_stored_event_release(pList->a[--pList->n]);
  if( pList->n==0 ){
    pList->iHead = 0;
    if( pList->nAlloc>4096 ){
      sqlite3_free(pList->a);
      pList->a = 0;
      pList->nAlloc = 0;
    }
  }
}
