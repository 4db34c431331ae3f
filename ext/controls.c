/*
** controls.c: the connection's clock, and the test controls that pin it and
** seed uuid() and uuidv7().
**
** The test controls.  Both are SQLITE_DIRECTONLY: only
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
#include "include/sqlitetriggers.h"

/* "Now" as Julian-day milliseconds (iJD): pinned, the host's clock, or the
** connection's VFS clock, the source SQLite's own 'now' reads.  SQLITE_OK,
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

int sqlitetriggers_register_controls(sqlite3 *db, Connection *p){
  int rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_pin_clock", -1,
                                SQLITE_DIRECTONLY, p, pinClockFunc);
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_seed_random", 1,
                                  SQLITE_DIRECTONLY, p, seedRandomFunc);
  }
  return rc;
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
