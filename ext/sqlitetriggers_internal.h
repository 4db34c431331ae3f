/*
** Declarations shared by the C sources of the extension.  Not installed;
** the public interface is include/sqlitetriggers.h.
*/
#ifndef SQLITETRIGGERS_INTERNAL_H
#define SQLITETRIGGERS_INTERNAL_H

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT3

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* Julian-day milliseconds ("iJD", as SQLite's date.c calls them) of the
** Unix epoch. */
#define UNIX_EPOCH_JD_MS ((sqlite3_int64)210866760000000LL)

/* The largest iJD SQLite's date functions accept: 9999-12-31 23:59:59.999 */
#define MAX_JD_MS ((sqlite3_int64)464269060799999LL)

/* random.c: a ChaCha20 generator with fast key erasure. */
typedef struct RandomPool RandomPool;
struct RandomPool {
  uint32_t key[8];
  unsigned char aBuf[1024];   /* keystream; consumed bytes are zeroed */
  int iNext;                  /* next unread byte of aBuf */
  uint64_t forkGeneration;    /* of the kernel key; 0 when seeded */
};
extern _Atomic uint64_t randomForkGeneration;
void randomInitOnce(void);
uint32_t loadLittleEndian32(const unsigned char *p);
void randomPoolKeyFromKernel(RandomPool *pPool);
void randomPoolSeed(RandomPool *pPool, sqlite3_int64 seed);
void randomPoolRefill(RandomPool *pPool);
void chacha20Blocks16(const uint32_t key[8], unsigned char *aOut);
void chacha20Blocks16Portable(const uint32_t key[8], unsigned char *aOut);
void chacha20Block(const uint32_t key[8], const uint32_t input[4], unsigned char *aOut);

/*
** n (at most 64) bytes of pPool's keystream.  Inline so that the copies
** of a constant n compile to a few moves: this runs once per uuid().  A
** kernel-keyed pool rekeys first when the process has forked since.
*/
static inline void randomPoolBytes(RandomPool *pPool, unsigned char *aOut,
                                   int n){
  if( pPool->forkGeneration!=0
   && pPool->forkGeneration!=atomic_load_explicit(&randomForkGeneration,
                                                  memory_order_relaxed) ){
    randomPoolKeyFromKernel(pPool);
  }
  if( pPool->iNext + n > (int)sizeof(pPool->aBuf) ) randomPoolRefill(pPool);
  memcpy(aOut, pPool->aBuf + pPool->iNext, n);
  memset(pPool->aBuf + pPool->iNext, 0, n);
  pPool->iNext += n;
}

/* callback.c keeps its state private. */
typedef struct CallbackState CallbackState;

/* The per-connection state behind every SQL function. */
typedef struct Connection Connection;
struct Connection {
  sqlite3 *db;
  int nRef;                   /* one per SQL function that holds it */
  sqlite3_vfs *pVfs;          /* source of "now", as for SQLite's 'now' */
  int isClockPinned;
  sqlite3_int64 pinnedJD;     /* iJD while the clock is pinned */
  int isSeeded;
  RandomPool random;          /* kernel-keyed, or seeded by the control */
  uint64_t lastLocalV7Tick;   /* uuidv7 order while pinned or seeded */
  CallbackState *pCallbacks;  /* swift_callback() events and observers */
  Connection *pNext;          /* registry of live connections */
};

/* sqlitetriggers.c */
Connection *connectionFind(sqlite3 *db);
void connectionRelease(void *pConnection);
int connectionCreateFunction(sqlite3 *db, const char *zName, int nArg,
                             int flags, Connection *p,
                             void (*xFunc)(sqlite3_context*,int,sqlite3_value**));
sqlite3_int64 connectionNowJD(Connection *p);

/* time.c */
int formatJD(sqlite3_int64 iJD, char *zOut);
int computeJD(sqlite3_context *ctx, Connection *p, const char *zFunc,
              int argc, sqlite3_value **argv, sqlite3_int64 *piJD);
int registerTimeFunctions(sqlite3 *db, Connection *p);

/* callback.c */
CallbackState *callbackStateCreate(void);
void callbackStateFree(CallbackState *pState);
int registerCallbackFunctions(sqlite3 *db, Connection *p);

/* uuid.c */
int registerUuidFunctions(sqlite3 *db, Connection *p);

#endif /* SQLITETRIGGERS_INTERNAL_H */
