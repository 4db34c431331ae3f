/*
** The generators and clocks where the sqlite3 shell cannot reach: threads,
** fork(), a VFS clock that steps backwards, the C API of the test controls
** and the ChaCha20 core.
*/
#include "harness.h"
#include "../../ext/sqlitetriggers_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- uuidv7() from several threads ---------------------------------- */

#define N_THREADS 4
#define N_PER_THREAD 25000

typedef struct Worker {
  char (*aUuid)[37];
  int isOrdered;
} Worker;

static void *generateUuidv7(void *pArg){
  Worker *w = (Worker*)pArg;
  sqlite3 *db = openRegistered(0);
  sqlite3_stmt *pStmt;
  int i;
  sqlite3_prepare_v2(db, "SELECT uuidv7()", -1, &pStmt, 0);
  w->isOrdered = 1;
  for(i=0; i<N_PER_THREAD; i++){
    sqlite3_step(pStmt);
    memcpy(w->aUuid[i], sqlite3_column_text(pStmt, 0), 37);
    sqlite3_reset(pStmt);
    if( i>0 && strcmp(w->aUuid[i-1], w->aUuid[i])>=0 ) w->isOrdered = 0;
  }
  sqlite3_finalize(pStmt);
  sqlite3_close(db);
  return 0;
}

static int compareUuid(const void *a, const void *b){
  return strcmp((const char*)a, (const char*)b);
}

static void testUuidv7AcrossThreads(void){
  pthread_t aThread[N_THREADS];
  Worker aWorker[N_THREADS];
  char (*aAll)[37] = malloc(sizeof(*aAll) * N_THREADS * N_PER_THREAD);
  int i, isOrdered = 1, nDuplicate = 0;
  for(i=0; i<N_THREADS; i++){
    aWorker[i].aUuid = aAll + i*N_PER_THREAD;
    pthread_create(&aThread[i], 0, generateUuidv7, &aWorker[i]);
  }
  for(i=0; i<N_THREADS; i++){
    pthread_join(aThread[i], 0);
    isOrdered &= aWorker[i].isOrdered;
  }
  qsort(aAll, N_THREADS*N_PER_THREAD, sizeof(*aAll), compareUuid);
  for(i=1; i<N_THREADS*N_PER_THREAD; i++){
    nDuplicate += strcmp(aAll[i-1], aAll[i])==0;
  }
  expect(isOrdered, "uuidv7() is strictly increasing within each of 4 threads");
  expect(nDuplicate==0, "uuidv7() from 4 concurrent threads has no duplicate");
  free(aAll);
}

/* Calls serialized by a lock give a total order: it must be sorted. */
static pthread_mutex_t orderMutex = PTHREAD_MUTEX_INITIALIZER;
static char aOrdered[N_THREADS*2000][37];
static int nOrdered = 0;

static void *generateInTurn(void *pArg){
  sqlite3 *db = openRegistered(0);
  int i;
  (void)pArg;
  for(i=0; i<2000; i++){
    pthread_mutex_lock(&orderMutex);
    queryText(db, "SELECT uuidv7()", aOrdered[nOrdered++]);
    pthread_mutex_unlock(&orderMutex);
  }
  sqlite3_close(db);
  return 0;
}

static void testUuidv7TotalOrder(void){
  pthread_t aThread[N_THREADS];
  int i, isSorted = 1;
  for(i=0; i<N_THREADS; i++) pthread_create(&aThread[i], 0, generateInTurn, 0);
  for(i=0; i<N_THREADS; i++) pthread_join(aThread[i], 0);
  for(i=1; i<nOrdered; i++) isSorted &= strcmp(aOrdered[i-1], aOrdered[i])<0;
  expect(nOrdered==N_THREADS*2000 && isSorted,
         "uuidv7() calls on 4 threads' connections, in call order, are sorted");
}

/* ---- fork() ------------------------------------------------------------ */

static void testForkNeverRepeatsTheParentStream(void){
  sqlite3 *db = openRegistered(0);
  char zParent[5][128], zChild[5][128], zWarm[128];
  int aPipe[2], i, nSame = 0, status = 0;
  pid_t pid;
  queryText(db, "SELECT uuid()", zWarm);   /* the pool holds keystream now */
  if( pipe(aPipe)!=0 ){ expect(0, "pipe"); return; }
  pid = fork();
  if( pid==0 ){
    for(i=0; i<5; i++){
      queryText(db, "SELECT uuid() || uuidv7()", zChild[i]);
    }
    if( write(aPipe[1], zChild, sizeof(zChild))!=(ssize_t)sizeof(zChild) ) _exit(1);
    _exit(0);
  }
  for(i=0; i<5; i++) queryText(db, "SELECT uuid() || uuidv7()", zParent[i]);
  if( read(aPipe[0], zChild, sizeof(zChild))!=(ssize_t)sizeof(zChild) ){
    expect(0, "reading the child's UUIDs");
  }
  waitpid(pid, &status, 0);
  for(i=0; i<5; i++) nSame += memcmp(zParent[i], zChild[i], 36)==0;
  expect(nSame==0, "after fork() the child's uuid() never repeats the parent's");
  for(i=0; i<5; i++) nSame += memcmp(zParent[i]+36+24, zChild[i]+36+24, 12)==0;
  expect(nSame==0, "after fork() the child's uuidv7() random bits differ");
  close(aPipe[0]);
  close(aPipe[1]);
  sqlite3_close(db);
}

/* ---- the VFS clock ----------------------------------------------------- */

static sqlite3_vfs steppableVfs;
static sqlite3_int64 steppableNow;   /* Julian-day milliseconds */

static int steppableCurrentTime(sqlite3_vfs *pVfs, sqlite3_int64 *piNow){
  (void)pVfs;
  *piNow = steppableNow;
  return SQLITE_OK;
}

static void testVfsClockSteppingBackwards(void){
  sqlite3 *db;
  char zA[128], zB[128], zTime[128];
  steppableVfs = *sqlite3_vfs_find(0);
  steppableVfs.zName = "steppable";
  steppableVfs.xCurrentTimeInt64 = steppableCurrentTime;
  sqlite3_vfs_register(&steppableVfs, 0);
  db = openRegistered("steppable");

  /* 2100-01-01 00:00:00.250 UTC, ahead of every earlier UUID here. */
  steppableNow = (sqlite3_int64)4102444800250LL + 210866760000000LL;
  queryText(db, "SELECT datetime_subsec()", zTime);
  expect(strcmp(zTime, "2100-01-01 00:00:00.250")==0,
         "datetime_subsec() reads the connection's VFS clock");
  queryText(db, "SELECT uuidv7()", zA);
  steppableNow -= 10000;
  queryText(db, "SELECT uuidv7()", zB);
  expect(strcmp(zA, zB)<0,
         "uuidv7() keeps increasing when the clock steps back 10 s");
  queryText(db, "SELECT uuidv7_timestamp(uuidv7()) - 4102444800250", zTime);
  expect(strcmp(zTime, "0")==0,
         "after the step back, uuidv7() holds the last timestamp it issued");
  sqlite3_close(db);
  sqlite3_vfs_unregister(&steppableVfs);
}

/* ---- the C API of the controls ----------------------------------------- */

static void testControlsFromC(void){
  sqlite3 *db = openRegistered(0), *plain = 0;
  char zTime[128], zFirst[128], zSecond[128];
  expect(sqlitetriggers_pin_clock(db, 1704164645678LL)==SQLITE_OK,
         "sqlitetriggers_pin_clock() succeeds on a registered connection");
  queryText(db, "SELECT datetime_subsec() || ' ' || uuidv7_datetime(uuidv7())",
            zTime);
  expect(strcmp(zTime, "2024-01-02 03:04:05.678 2024-01-02 03:04:05.678")==0,
         "the C pin reaches datetime_subsec() and uuidv7()");
  sqlitetriggers_seed_random(db, 99);
  queryText(db, "SELECT uuid() || uuidv7()", zFirst);
  sqlitetriggers_seed_random(db, 99);
  queryText(db, "SELECT uuid() || uuidv7()", zSecond);
  expect(memcmp(zFirst, zSecond, 36)==0,
         "sqlitetriggers_seed_random() from C makes uuid() reproducible");
  sqlitetriggers_unseed_random(db);
  queryText(db, "SELECT uuid()", zSecond);
  expect(memcmp(zFirst, zSecond, 36)!=0, "sqlitetriggers_unseed_random()");
  sqlitetriggers_unpin_clock(db);
  queryText(db, "SELECT datetime_subsec() > '2020'", zTime);
  expect(strcmp(zTime, "1")==0, "sqlitetriggers_unpin_clock()");
  expect(sqlitetriggers_pin_clock(db, (sqlite3_int64)1<<62)==SQLITE_RANGE,
         "pinning outside datetime()'s range is SQLITE_RANGE");
  /* Under UBSan an overflowing addition would abort here. */
  expect(sqlitetriggers_pin_clock(db, INT64_MAX)==SQLITE_RANGE
         && sqlitetriggers_pin_clock(db, INT64_MIN)==SQLITE_RANGE,
         "pinning INT64_MAX or INT64_MIN is SQLITE_RANGE, without overflow");
  expect(sqlitetriggers_pin_clock(db, 253402300799999LL)==SQLITE_OK
         && sqlitetriggers_pin_clock(db, 253402300800000LL)==SQLITE_RANGE
         && sqlitetriggers_pin_clock(db, -210866760000000LL)==SQLITE_OK
         && sqlitetriggers_pin_clock(db, -210866760000001LL)==SQLITE_RANGE,
         "the pinnable range ends exactly at SQLite's");
  sqlitetriggers_unpin_clock(db);

  sqlite3_open(":memory:", &plain);
  expect(sqlitetriggers_pin_clock(plain, 0)==SQLITE_MISUSE
         && sqlitetriggers_seed_random(plain, 0)==SQLITE_MISUSE,
         "the controls refuse a connection that was never registered");
  sqlite3_close(plain);

  expect(sqlitetriggers_register(db)==SQLITE_OK,
         "registering twice on one connection succeeds");
  queryText(db, "SELECT uuid_version(uuid())", zTime);
  expect(strcmp(zTime, "4")==0, "functions work after re-registration");
  expect(sqlite3_close(db)==SQLITE_OK, "a registered connection closes cleanly");
}

/* ---- the ChaCha20 core ------------------------------------------------ */

/* RFC 8439 appendix A.1, test vectors 1 and 2: key 0, nonce 0, blocks 0
** and 1.  Our layout interleaves words: word w of block b sits at byte
** 16*w + 4*b. */
/* ---- the host's clock --------------------------------------------------- */

typedef struct HostClock { sqlite3_int64 unixMs; int rc; int nCalls; int nDestroyed; } HostClock;

static int hostClockNow(void *pArg, sqlite3_int64 *pUnixMs){
  HostClock *p = (HostClock*)pArg;
  p->nCalls++;
  *pUnixMs = p->unixMs;
  return p->rc;
}

static void hostClockDestroy(void *pArg){ ((HostClock*)pArg)->nDestroyed++; }

static void testHostClock(void){
  sqlite3 *db = openRegistered(0), *plain = 0;
  HostClock first = {1704164645678LL, SQLITE_OK, 0, 0}, second = {0, SQLITE_OK, 0, 0};
  char zTime[128];
  const char *zMsg;
  expect(sqlitetriggers_set_clock(db, hostClockNow, &first, hostClockDestroy)==SQLITE_OK,
         "sqlitetriggers_set_clock() succeeds on a registered connection");
  /* Seeded, uuidv7() orders per connection, not after the process's
  ** newest timestamp (the year 2100 of the test above). */
  sqlitetriggers_seed_random(db, 7);
  queryText(db, "SELECT datetime_subsec() || ' ' || unixepoch_subsec() || ' ' "
                "|| uuidv7_datetime(uuidv7()) || ' ' || datetime_subsec('now', '+1 day')", zTime);
  expect(strcmp(zTime, "2024-01-02 03:04:05.678 1704164645.678 2024-01-02 03:04:05.678 "
                       "2024-01-03 03:04:05.678")==0,
         "the host's clock is \"now\" for datetime_subsec(), unixepoch_subsec() and uuidv7()");
  sqlitetriggers_pin_clock(db, 0);
  queryText(db, "SELECT datetime_subsec()", zTime);
  expect(strcmp(zTime, "1970-01-01 00:00:00.000")==0, "a pinned clock wins over the host's");
  sqlitetriggers_unpin_clock(db);

  first.rc = SQLITE_IOERR;
  expect(exec(db, "SELECT datetime_subsec()")==SQLITE_ERROR, "a failing host clock fails the call");
  zMsg = sqlite3_errmsg(db);
  expect(strcmp(zMsg, "datetime_subsec: the connection's clock failed (disk I/O error)")==0,
         "the error names the function and the clock");
  expect(exec(db, "SELECT uuidv7()")==SQLITE_ERROR
         && strcmp(sqlite3_errmsg(db), "uuidv7: the connection's clock failed")==0,
         "uuidv7() fails with the clock, naming itself");
  first.rc = SQLITE_OK;
  first.unixMs = INT64_MAX;
  expect(exec(db, "SELECT unixepoch_subsec()")==SQLITE_ERROR
         && strstr(sqlite3_errmsg(db), "outside the range of datetime()")!=0,
         "an instant out of range is an error, without overflow");

  expect(sqlitetriggers_set_clock(db, hostClockNow, &second, hostClockDestroy)==SQLITE_OK
         && first.nDestroyed==1, "replacing the clock destroys the old one's argument");
  expect(sqlitetriggers_set_clock(db, 0, 0, 0)==SQLITE_OK && second.nDestroyed==1,
         "clearing it destroys it too");
  queryText(db, "SELECT datetime_subsec() > '2020'", zTime);
  expect(strcmp(zTime, "1")==0, "cleared, \"now\" is the VFS clock again");
  second.nDestroyed = 0;
  sqlitetriggers_set_clock(db, hostClockNow, &second, hostClockDestroy);
  sqlite3_close(db);
  expect(second.nDestroyed==1, "closing the connection destroys the clock's argument");

  sqlite3_open(":memory:", &plain);
  first.nDestroyed = 0;
  expect(sqlitetriggers_set_clock(plain, hostClockNow, &first, hostClockDestroy)==SQLITE_MISUSE
         && first.nDestroyed==1,
         "an unregistered connection is refused, and the argument still destroyed");
  sqlite3_close(plain);
}

static const char *rfc8439Block[2] = {
  "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
  "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586",
  "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
  "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f",
};

/* A plain ChaCha20 written from RFC 8439 section 2.3, independent of
** ext/random.c: blocks 0..15 under key (nonce 0), in the kernels' layout
** (word w of block b at 256*(b/4) + 16*w + 4*(b%4), little-endian). */
#define REF_ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
static void referenceQuarterRound(uint32_t *s, int a, int b, int c, int d){
  s[a] += s[b]; s[d] ^= s[a]; s[d] = REF_ROTL(s[d], 16);
  s[c] += s[d]; s[b] ^= s[c]; s[b] = REF_ROTL(s[b], 12);
  s[a] += s[b]; s[d] ^= s[a]; s[d] = REF_ROTL(s[d], 8);
  s[c] += s[d]; s[b] ^= s[c]; s[b] = REF_ROTL(s[b], 7);
}
static void referenceBlocks16(const uint32_t key[8], unsigned char *aOut){
  int block, i, round;
  for(block=0; block<16; block++){
    uint32_t initial[16] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
    uint32_t s[16];
    for(i=0; i<8; i++) initial[4+i] = key[i];
    initial[12] = (uint32_t)block;
    memcpy(s, initial, sizeof(s));
    for(round=0; round<10; round++){
      referenceQuarterRound(s, 0, 4, 8, 12);
      referenceQuarterRound(s, 1, 5, 9, 13);
      referenceQuarterRound(s, 2, 6, 10, 14);
      referenceQuarterRound(s, 3, 7, 11, 15);
      referenceQuarterRound(s, 0, 5, 10, 15);
      referenceQuarterRound(s, 1, 6, 11, 12);
      referenceQuarterRound(s, 2, 7, 8, 13);
      referenceQuarterRound(s, 3, 4, 9, 14);
    }
    for(i=0; i<16; i++){
      uint32_t v = s[i] + initial[i];
      unsigned char *p = aOut + 256*(block/4) + 16*i + 4*(block%4);
      p[0] = (unsigned char)v;         p[1] = (unsigned char)(v >> 8);
      p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
    }
  }
}

static void testChaCha20KnownAnswers(void){
  uint32_t key[8] = {0};
  unsigned char aOut[1024], aPortable[1024];
  char zHex[129];
  int block, word, i;
  sqlitetriggers_random_init_once();
  sqlitetriggers_chacha20_blocks16(key, aOut);
  for(block=0; block<2; block++){
    for(word=0; word<16; word++){
      for(i=0; i<4; i++){
        snprintf(zHex + 8*word + 2*i, 3, "%02x", aOut[16*word + 4*block + i]);
      }
    }
    expect(strcmp(zHex, rfc8439Block[block])==0,
           block==0 ? "ChaCha20 block 0 matches RFC 8439 test vector 1"
                    : "ChaCha20 block 1 matches RFC 8439 test vector 2");
  }
  {
    /* The single-block function, standard order, test vector 2 (block 1). */
    uint32_t zeroKey[8] = {0}, input[4] = {1, 0, 0, 0};
    unsigned char aBlock[64];
    sqlitetriggers_chacha20_block(zeroKey, input, aBlock);
    for(i=0; i<64; i++) snprintf(zHex + 2*i, 3, "%02x", aBlock[i]);
    expect(strcmp(zHex, rfc8439Block[1])==0,
           "the single-block ChaCha20 matches RFC 8439 test vector 2");
  }
  {
    /* Every kernel, and the dispatched one, against the reference below,
    ** on keys that exercise every bit. */
    static const char *azKernel[] = { "scalar", "vector", "avx2" };
    const char *zForced = getenv("SQLITETRIGGERS_CHACHA20");
    int kernel, nAvailable = 0, nDiffering = 0, nKey;
    uint64_t state = 0x243f6a8885a308d3ULL;
    for(kernel=0; kernel<3; kernel++){
      int isAvailable = 1;
      for(nKey=0; nKey<200 && isAvailable; nKey++){
        for(i=0; i<8; i++){
          state = state*6364136223846793005ULL + 1442695040888963407ULL;
          key[i] = (uint32_t)(state >> 32);
        }
        referenceBlocks16(key, aPortable);
        isAvailable = sqlitetriggers_chacha20_blocks16_kernel(kernel, key, aOut);
        if( isAvailable && memcmp(aOut, aPortable, sizeof(aOut))!=0 ) nDiffering++;
        sqlitetriggers_chacha20_blocks16(key, aOut);
        if( memcmp(aOut, aPortable, sizeof(aOut))!=0 ) nDiffering++;
      }
      nAvailable += isAvailable;
      if( isAvailable ) printf("     ChaCha20 kernel %s: checked\n", azKernel[kernel]);
    }
    expect(nAvailable>=2 && nDiffering==0,
           "every ChaCha20 kernel (scalar, vector, avx2 where present) equals "
           "the reference on 200 keys");
    expect(zForced==0 || zForced[0]==0
           || strcmp(zForced, sqlitetriggers_chacha20_kernel_name())==0,
           "SQLITETRIGGERS_CHACHA20 forces the kernel it names");
    printf("     ChaCha20 kernel in use: %s\n", sqlitetriggers_chacha20_kernel_name());
  }
}

/* sqlitetriggers_uuidv7() for the host and SQL's uuidv7() share one order. */
static void testHostUuidv7SharesSqlOrder(void){
  sqlite3 *db = openRegistered(0);
  char azValue[40][64];
  int i, isOrdered = 1, isV7 = 1;
  for(i=0; i<40; i++){
    if( i%2 ){
      unsigned char aBlob[16];
      sqlite3_stmt *pStmt = 0;
      expect(sqlitetriggers_uuidv7(aBlob)==SQLITE_OK, "sqlitetriggers_uuidv7() succeeds");
      sqlite3_prepare_v2(db, "SELECT uuid_str(?1)", -1, &pStmt, 0);
      sqlite3_bind_blob(pStmt, 1, aBlob, 16, SQLITE_STATIC);
      azValue[i][0] = 0;
      if( sqlite3_step(pStmt)==SQLITE_ROW ) snprintf(azValue[i], 64, "%s", (const char*)sqlite3_column_text(pStmt, 0));
      sqlite3_finalize(pStmt);
      isV7 = isV7 && aBlob[6]>>4==7 && (aBlob[8] & 0xc0)==0x80;
    }else{
      queryText(db, "SELECT uuidv7()", azValue[i]);
    }
    if( i>0 && strcmp(azValue[i-1], azValue[i])>=0 ) isOrdered = 0;
  }
  expect(isV7, "sqlitetriggers_uuidv7() gives version 7, variant 10");
  expect(isOrdered, "host and SQL v7 UUIDs, interleaved, are strictly increasing");
  sqlite3_close(db);
}

/* Registration touches no database: the schema is not even parsed (SQLite
** reads it at the first statement), no TEMP schema exists, no transaction
** is open, and the file need not be a database at all. */
static void testRegistrationTouchesNoDatabase(void){
  const char *zPath = "build/test_c_registration.sqlite";
  sqlite3 *db = 0;
  FILE *pGunk;
  int nUsed = -1, nHighwater = 0;
  remove(zPath);
  sqlite3_open(zPath, &db);
  exec(db, "CREATE TABLE t(x); CREATE INDEX tx ON t(x);");
  sqlite3_close(db);
  db = 0;
  sqlite3_open(zPath, &db);
  expect(sqlitetriggers_register(db)==SQLITE_OK, "registration on a file with a schema");
  sqlite3_db_status(db, SQLITE_DBSTATUS_SCHEMA_USED, &nUsed, &nHighwater, 0);
  expect(nUsed==0, "registration parses no schema");
  expect(sqlite3_txn_state(db, 0)==SQLITE_TXN_NONE, "registration leaves no transaction open");
  expect(sqlite3_db_name(db, 1)==0 || sqlite3_txn_state(db, "temp")==SQLITE_TXN_NONE,
         "registration opens no TEMP transaction");
  sqlite3_close(db);
  remove(zPath);

  pGunk = fopen(zPath, "wb");
  if( pGunk ){
    int i;
    for(i=0; i<8192; i++) fputc('A', pGunk);
    fclose(pGunk);
  }
  db = 0;
  sqlite3_open(zPath, &db);
  expect(sqlitetriggers_register(db)==SQLITE_OK, "registration on a file that is not a database succeeds");
  expect(exec(db, "SELECT count(*) FROM sqlite_schema")==SQLITE_NOTADB,
         "its first query fails as SQLite's own: SQLITE_NOTADB");
  sqlite3_close(db);
  remove(zPath);
}

void runExtensionTests(void){
  testRegistrationTouchesNoDatabase();
  testHostUuidv7SharesSqlOrder();
  testChaCha20KnownAnswers();
  testUuidv7AcrossThreads();
  testUuidv7TotalOrder();
  testForkNeverRepeatsTheParentStream();
  testVfsClockSteppingBackwards();
  testControlsFromC();
  testHostClock();
}
