/*
** sqlitetriggers.c: registration, per-connection state and test controls.
**
** Loadable:  .load build/libsqlitetriggers   (entry sqlite3_sqlitetriggers_init)
** Linked:    call sqlitetriggers_register(db) on each connection.
**
** The functions registered, with their specifications in the files named:
**
**   uuid(), uuidv7(), uuid_str(X), uuid_blob(X), uuid_version(X),
**   uuidv7_timestamp(X), uuidv7_datetime(X)                       uuid.c
**   datetime_subsec(...), unixepoch_subsec(...)                   time.c
**   sqlitetriggers_change_feed(TABLE, MODE)                       change_feed.c
**   swift_callback(NAME, ...), swift_callback_log_capacity(N), the tables
**   swift_callback_log and temp.swift_callback_pending          callback.c
**
** and, defined here, the test controls.  Both are SQLITE_DIRECTONLY: only
** top-level SQL and TEMP triggers can call them, never a schema stored in a
** database file.
**
**   sqlitetriggers_pin_clock(X)
**       X is any time value datetime() accepts ('2024-01-01 12:00:00.250',
**       a Julian day number, 'now', ...), optionally followed by modifiers.
**       From then on "now" on this connection is that instant, to the
**       millisecond, for datetime_subsec(), unixepoch_subsec() and the
**       timestamps of uuidv7().  Returns the pinned time as
**       'YYYY-MM-DD HH:MM:SS.SSS'.  X NULL unpins and returns NULL.  A value
**       that is not a time is an error naming the function.
**
**   sqlitetriggers_seed_random(N)
**       N an integer: uuid() and uuidv7() on this connection draw from a
**       ChaCha20 stream derived from N, so a pinned clock plus a seed makes
**       both reproducible.  Returns N.  NULL returns to kernel entropy and
**       returns NULL.  Anything else is an error naming the function.
**
** Neither is remembered across registrations: registering the extension
** again on a connection starts from a live clock and kernel entropy.
*/
#include "sqlitetriggers_internal.h"
SQLITE_EXTENSION_INIT1
#include "include/sqlitetriggers.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>

/*
** Live Connection objects, so the C test controls can find the state that
** belongs to a sqlite3* (SQLite 3.40 has no sqlite3_get_clientdata()).
** Newest first: after a second registration, the newest state is the one
** the SQL functions use.
*/
static Connection *liveConnections = 0;
static pthread_mutex_t liveConnectionsMutex = PTHREAD_MUTEX_INITIALIZER;

static Connection *connectionCreate(sqlite3 *db){
  Connection *p = sqlite3_malloc(sizeof(*p));
  if( p==0 ) return 0;
  memset(p, 0, sizeof(*p));
  p->pCallbacks = sqlitetriggers_callback_state_create();
  if( p->pCallbacks==0 ){
    sqlite3_free(p);
    return 0;
  }
  p->db = db;
  sqlitetriggers_random_pool_key_from_kernel(&p->random);
  if( sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &p->pVfs)
      !=SQLITE_OK || p->pVfs==0 ){
    p->pVfs = sqlite3_vfs_find(0);
  }
  pthread_mutex_lock(&liveConnectionsMutex);
  p->pNext = liveConnections;
  liveConnections = p;
  pthread_mutex_unlock(&liveConnectionsMutex);
  return p;
}

static void connectionFree(Connection *p){
  sqlitetriggers_capture_free(p);
  sqlitetriggers_callback_state_free(p->pCallbacks);
  sqlitetriggers_time_helper_free(p->pTimeHelper);
  sqlite3_free(p->zGuardedSignature);
  if( p->xClockDestroy ) p->xClockDestroy(p->pClockArg);
  memset(p, 0, sizeof(*p));   /* the seeded key, among others */
  sqlite3_free(p);
}

/* When SQLite lets go of the last function or module holding p (the
** connection closed, or a new registration replaced them), p is detached:
** no longer found, db cleared, and freed once no delivery holds it. */
void sqlitetriggers_connection_release(void *pArg){
  Connection *p = (Connection*)pArg;
  Connection **pp;
  if( --p->nRef>0 ) return;
  pthread_mutex_lock(&liveConnectionsMutex);
  for(pp=&liveConnections; *pp; pp=&(*pp)->pNext){
    if( *pp==p ){ *pp = p->pNext; break; }
  }
  pthread_mutex_unlock(&liveConnectionsMutex);
  sqlitetriggers_capture_unhook(p);
  p->db = 0;
  if( p->nHold==0 ) connectionFree(p);
}

void sqlitetriggers_connection_hold(Connection *p){
  p->nHold++;
}

/* 1 if p is still attached to its connection, else 0 (p may be gone). */
int sqlitetriggers_connection_unhold(Connection *p){
  assert( p->nHold>0 );
  if( --p->nHold==0 && p->db==0 ){
    connectionFree(p);
    return 0;
  }
  return p->db!=0;
}

Connection *sqlitetriggers_connection_find(sqlite3 *db){
  Connection *p;
  pthread_mutex_lock(&liveConnectionsMutex);
  for(p=liveConnections; p && p->db!=db; p=p->pNext){}
  pthread_mutex_unlock(&liveConnectionsMutex);
  return p;
}

/*
** sqlite3_create_function_v2() with p as user data.  Every function that
** holds p owns one reference, released by SQLite when the function is
** replaced, deleted or the connection closes (also when registration
** fails, which is why the reference is taken first).
*/
int sqlitetriggers_connection_create_function(sqlite3 *db, const char *zName, int nArg,
                             int flags, Connection *p,
                             void (*xFunc)(sqlite3_context*,int,sqlite3_value**)){
  if( p ) p->nRef++;
  return sqlite3_create_function_v2(db, zName, nArg, SQLITE_UTF8|flags, p,
                                    xFunc, 0, 0, p ? sqlitetriggers_connection_release : 0);
}

/* "Now" as Julian-day milliseconds: pinned, or the connection's VFS clock,
** the source SQLite's own 'now' reads. */
/* "Now" as iJD: pinned, the host's clock, or the VFS clock.  SQLITE_OK,
** or an error from the host's clock (or SQLITE_RANGE for its instant). */
int sqlitetriggers_connection_now_jd(Connection *p, sqlite3_int64 *piJD){
  sqlite3_vfs *pVfs = p->pVfs;
  if( p->isClockPinned ){
    *piJD = p->pinnedJD;
    return SQLITE_OK;
  }
  if( p->xClock ){
    sqlite3_int64 unixMs = 0;
    int rc = p->xClock(p->pClockArg, &unixMs);
    if( rc!=SQLITE_OK ) return rc;
    if( unixMs < -UNIX_EPOCH_JD_MS || unixMs > MAX_JD_MS - UNIX_EPOCH_JD_MS ){
      return SQLITE_RANGE;
    }
    *piJD = unixMs + UNIX_EPOCH_JD_MS;
    return SQLITE_OK;
  }
  if( pVfs->iVersion>=2 && pVfs->xCurrentTimeInt64 ){
    pVfs->xCurrentTimeInt64(pVfs, piJD);
  }else{
    double r = 0.0;
    pVfs->xCurrentTime(pVfs, &r);
    *piJD = (sqlite3_int64)(r*86400000.0 + 0.5);
  }
  return SQLITE_OK;
}

static void pinClockFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3_int64 iJD;
  char zTime[32];
  int rc;
  if( argc==0 ){
    sqlite3_result_error(ctx, "sqlitetriggers_pin_clock: expects a time value "
                              "and optional modifiers, or NULL to unpin", -1);
    return;
  }
  if( !sqlitetriggers_schema_guard_call(ctx, "sqlitetriggers_pin_clock") ){
    return;
  }
  if( sqlite3_value_type(argv[0])==SQLITE_NULL ){
    p->isClockPinned = 0;
    return;
  }
  rc = sqlitetriggers_compute_jd(ctx, p, "sqlitetriggers_pin_clock", argc, argv, &iJD);
  if( rc==JD_ERROR ) return;
  if( rc==JD_NULL ){
    /* SQLite's julianday() answers NULL to both. */
    sqlite3_result_error(ctx, "sqlitetriggers_pin_clock: not a time value "
                              "and modifiers datetime() accepts, or an instant "
                              "outside its range (-4713-11-24 12:00:00 to "
                              "9999-12-31 23:59:59.999 UTC)", -1);
    return;
  }
  p->isClockPinned = 1;
  p->pinnedJD = iJD;
  sqlite3_result_text(ctx, zTime, sqlitetriggers_format_jd(iJD, zTime), SQLITE_TRANSIENT);
}

static void seedRandomFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  (void)argc;
  if( !sqlitetriggers_schema_guard_call(ctx, "sqlitetriggers_seed_random") ){
    return;
  }
  switch( sqlite3_value_type(argv[0]) ){
    case SQLITE_NULL:
      if( p->isSeeded ) sqlitetriggers_random_pool_key_from_kernel(&p->random);
      p->isSeeded = 0;
      return;
    case SQLITE_INTEGER:
      sqlitetriggers_random_pool_seed(&p->random, sqlite3_value_int64(argv[0]));
      p->isSeeded = 1;
      sqlite3_result_value(ctx, argv[0]);
      return;
    default:
      sqlite3_result_error(ctx, "sqlitetriggers_seed_random: the seed must be "
                                "an integer, or NULL to unseed", -1);
  }
}

int sqlitetriggers_register_v2(sqlite3 *db, char **pzErrMsg){
  Connection *p, *pOld;
  char *zErr = 0;
  int rc;
  if( pzErrMsg ) *pzErrMsg = 0;
  if( sqlite3_libversion_number() < SQLITETRIGGERS_MIN_SQLITE_VERSION ){
    if( pzErrMsg ){
      *pzErrMsg = sqlite3_mprintf("sqlitetriggers: needs SQLite "
          SQLITETRIGGERS_MIN_SQLITE_TEXT " or later, and this is SQLite %s",
          sqlite3_libversion());
    }
    return SQLITE_ERROR;
  }
  sqlitetriggers_random_init_once();
  /* Before any function exists (see schema_guard.c). */
  rc = sqlitetriggers_schema_guard(db, "sqlitetriggers", &zErr);
  if( rc!=SQLITE_OK ){
    if( pzErrMsg ) *pzErrMsg = zErr; else sqlite3_free(zErr);
    return rc;
  }
  pOld = sqlitetriggers_connection_find(db);
  p = connectionCreate(db);
  if( p==0 ) return SQLITE_NOMEM;
  /* The hook must never point at the state that registration replaces. */
  sqlitetriggers_capture_take_over(p, pOld);
  p->nRef = 1;                  /* held until the end of this function */
  rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_pin_clock", -1,
                                SQLITE_DIRECTONLY, p, pinClockFunc);
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_seed_random", 1,
                                  SQLITE_DIRECTONLY, p, seedRandomFunc);
  }
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_uuid_functions(db, p);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_time_functions(db, p);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_callback_functions(db, p);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_change_feed_functions(db, p);
  sqlitetriggers_connection_release(p);
  if( rc!=SQLITE_OK && pzErrMsg ){
    *pzErrMsg = sqlite3_mprintf("sqlitetriggers: registration failed: %s",
                                rc==SQLITE_NOMEM ? sqlite3_errstr(rc)
                                                 : sqlite3_errmsg(db));
  }
  return rc;
}

int sqlitetriggers_register(sqlite3 *db){
  return sqlitetriggers_register_v2(db, 0);
}

int sqlitetriggers_pin_clock(sqlite3 *db, sqlite3_int64 unixMillis){
  Connection *p = sqlitetriggers_connection_find(db);
  if( p==0 ) return SQLITE_MISUSE;
  /* Compared before adding: unixMillis may be anywhere in int64. */
  if( unixMillis < -UNIX_EPOCH_JD_MS
   || unixMillis > MAX_JD_MS - UNIX_EPOCH_JD_MS ) return SQLITE_RANGE;
  p->pinnedJD = unixMillis + UNIX_EPOCH_JD_MS;
  p->isClockPinned = 1;
  return SQLITE_OK;
}

int sqlitetriggers_unpin_clock(sqlite3 *db){
  Connection *p = sqlitetriggers_connection_find(db);
  if( p==0 ) return SQLITE_MISUSE;
  p->isClockPinned = 0;
  return SQLITE_OK;
}

int sqlitetriggers_set_clock(sqlite3 *db, sqlitetriggers_clock xNow,
                             void *pArg, void (*xDestroy)(void*)){
  Connection *p = sqlitetriggers_connection_find(db);
  if( p==0 ){
    if( xDestroy ) xDestroy(pArg);
    return SQLITE_MISUSE;
  }
  if( p->xClockDestroy ) p->xClockDestroy(p->pClockArg);
  p->xClock = xNow;
  p->pClockArg = xNow ? pArg : 0;
  p->xClockDestroy = xNow ? xDestroy : 0;
  if( xNow==0 && xDestroy ) xDestroy(pArg);
  return SQLITE_OK;
}

int sqlitetriggers_seed_random(sqlite3 *db, sqlite3_int64 seed){
  Connection *p = sqlitetriggers_connection_find(db);
  if( p==0 ) return SQLITE_MISUSE;
  sqlitetriggers_random_pool_seed(&p->random, seed);
  p->isSeeded = 1;
  return SQLITE_OK;
}

int sqlitetriggers_unseed_random(sqlite3 *db){
  Connection *p = sqlitetriggers_connection_find(db);
  if( p==0 ) return SQLITE_MISUSE;
  if( p->isSeeded ) sqlitetriggers_random_pool_key_from_kernel(&p->random);
  p->isSeeded = 0;
  return SQLITE_OK;
}

int sqlite3_sqlitetriggers_init(
  sqlite3 *db,
  char **pzErrMsg,
  const struct sqlite3_api_routines *pApi
){
  SQLITE_EXTENSION_INIT2(pApi);
  return sqlitetriggers_register_v2(db, pzErrMsg);
}
