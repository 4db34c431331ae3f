/*
** sqlitetriggers.c: registration and the per-connection state.
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
**   sqlitetriggers_log_install(TABLE), _uninstall(TABLE)          durable_log.c
**   sqlitetriggers_log_check()                                    log_check.c
**   sqlitetriggers_log_origin(ORIGIN), _transaction()             log_stamp.c
**   swift_callback(NAME, ...), swift_callback_log_capacity(N), the tables
**   swift_callback_log and swift_callback_pending          callback.c
**
** and the test controls (controls.c).  The sources: sqlitetriggers_internal.h
** lists what they share; callback_internal.h lists the callback_*.c files,
** log_internal.h the durable log's.
*/
#include "sqlitetriggers_internal.h"
SQLITE_EXTENSION_INIT1
#include "include/sqlitetriggers.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>

/*
** Live Connection objects, so the C test controls can find the state that
** belongs to a sqlite3* (SQLite 3.40 has no sqlite3_get_clientdata()),
** and registering again finds the state it keeps.
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
  sqlitetriggers_random_pool_key_later(&p->random);
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
  sqlite3_free(p->zCallSignature);
  sqlite3_free(p->zLogCheckedSignature);
  sqlite3_free(p->zWakeupName);
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

void sqlitetriggers_result_error(sqlite3_context *ctx, const char *zFunc, const char *zMsg){
  char *zErr = sqlite3_mprintf("%s: %s", zFunc, zMsg);
  if( zErr ){ sqlite3_result_error(ctx, zErr, -1); sqlite3_free(zErr); }
  else sqlite3_result_error_nomem(ctx);
}

/*
** pArg as a name (zWhat: "a table name", "MODE"), or 0 after setting the
** error: it must be text, and hold no NUL character, since SQLite (and
** every C string here) would read it only up to the NUL and act on another
** name than the one given.
*/
const char *sqlitetriggers_name_argument(sqlite3_context *ctx, const char *zFunc,
                                         sqlite3_value *pArg, const char *zWhat){
  const char *zName;
  char *zErr;
  if( sqlite3_value_type(pArg)!=SQLITE_TEXT ){
    zErr = sqlite3_mprintf("expects %s", zWhat);
    sqlitetriggers_result_error(ctx, zFunc, zErr ? zErr : zWhat);
    sqlite3_free(zErr);
    return 0;
  }
  zName = (const char*)sqlite3_value_text(pArg);
  if( zName==0 ){
    sqlite3_result_error_nomem(ctx);
    return 0;
  }
  if( (int)strlen(zName)!=sqlite3_value_bytes(pArg) ){
    /* "a table name" is "the table name" here. */
    zErr = sqlite3_mprintf("%s%s holds a NUL character (char(0)), where SQLite would cut it: "
                           "pass it without one", strncmp(zWhat, "a ", 2)==0 ? "the " : "",
                           strncmp(zWhat, "a ", 2)==0 ? zWhat+2 : zWhat);
    sqlitetriggers_result_error(ctx, zFunc, zErr ? zErr : zWhat);
    sqlite3_free(zErr);
    return 0;
  }
  return zName;
}

int sqlitetriggers_result_first_column(sqlite3_context *ctx, sqlite3_stmt *pStmt){
  int rc = sqlite3_step(pStmt);
  if( rc==SQLITE_ROW ){
    sqlite3_result_value(ctx, sqlite3_column_value(pStmt, 0));
    return SQLITE_OK;
  }
  return rc==SQLITE_DONE ? SQLITE_OK : rc;
}

/*
** The first of SQLite's names of the rowid (rowid, _rowid_, oid) that no
** column of azColumn takes (a column of that name hides it, in SQL and in
** a trigger's NEW and OLD), or 0 when the columns hide all three.
*/
static const char *const azRowidName[] = { "rowid", "_rowid_", "oid" };

const char *sqlitetriggers_rowid_name(const char *const *azColumn, int nColumn){
  int k, taken = 0;
  for(k=0; k<nColumn; k++) taken |= sqlitetriggers_rowid_name_bit(azColumn[k]);
  return sqlitetriggers_rowid_name_free(taken);
}

/* The bit of the rowid's name zColumn takes (1 rowid, 2 _rowid_, 4 oid,
** any case), or 0: for callers that read the columns one by one. */
int sqlitetriggers_rowid_name_bit(const char *zColumn){
  int i;
  for(i=0; i<3; i++){
    if( sqlite3_stricmp(zColumn, azRowidName[i])==0 ) return 1<<i;
  }
  return 0;
}

/* The first name of the rowid whose bit is not in taken, or 0. */
const char *sqlitetriggers_rowid_name_free(int taken){
  int i;
  for(i=0; i<3; i++){
    if( (taken & (1<<i))==0 ) return azRowidName[i];
  }
  return 0;
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

int sqlitetriggers_register_v2(sqlite3 *db, char **pzErrMsg){
  Connection *p, *pOld;
  int rc;
  if( pzErrMsg ) *pzErrMsg = 0;
#ifndef SQLITE_CORE
  /* The loadable library reaches SQLite only through the routines table
  ** that SQLite hands its entry point: called directly before any
  ** connection loaded it, there is none, and not even an error message can
  ** be allocated.  Load it (sqlite3_load_extension(), or
  ** sqlite3_auto_extension() with sqlite3_sqlitetriggers_init), or link
  ** ext/ into the app with -DSQLITE_CORE. */
  if( sqlite3_api==0 || db==0 ) return SQLITE_MISUSE;
#else
  if( db==0 ) return SQLITE_MISUSE;
#endif
  if( sqlite3_libversion_number() < SQLITETRIGGERS_MIN_SQLITE_VERSION ){
    if( pzErrMsg ){
      *pzErrMsg = sqlite3_mprintf("sqlitetriggers: needs SQLite "
          SQLITETRIGGERS_MIN_SQLITE_TEXT " or later, and this is SQLite %s",
          sqlite3_libversion());
    }
    return SQLITE_ERROR;
  }
  sqlitetriggers_random_init_once();
  /* Registration touches no database: no schema read, no TEMP object, no
  ** lock, nothing that can fail because of the file (it may be locked,
  ** encrypted and not yet keyed, or not a database at all, and a new one's
  ** encoding is not yet chosen).  What needs the schema happens at the first
  ** call that needs it, inside that statement: the schema guard
  ** (schema_guard.c), the pending table (callback.c). */
  /* Registering again (a helper that "makes sure the extension is
  ** loaded", inside a transaction too) keeps the connection's state: the
  ** transaction's events, captures and log stamp, observers, clock and
  ** seed.  Only the SQL functions are registered again, with the same
  ** state, in case the app replaced one of them. */
  p = pOld = sqlitetriggers_connection_find(db);
  if( p==0 && (p = connectionCreate(db))==0 ) return SQLITE_NOMEM;
  p->nRef++;                    /* held until the end of this function */
  rc = sqlitetriggers_register_controls(db, p);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_uuid_functions(db, p);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_time_functions(db, p);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_callback_functions(db, p, pOld==0);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_change_feed_functions(db, p);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_durable_log_functions(db, p);
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

int sqlite3_sqlitetriggers_init(
  sqlite3 *db,
  char **pzErrMsg,
  const struct sqlite3_api_routines *pApi
){
  SQLITE_EXTENSION_INIT2(pApi);
  return sqlitetriggers_register_v2(db, pzErrMsg);
}
