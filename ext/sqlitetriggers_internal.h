/*
** Declarations shared by the C sources of the extension.  Not installed;
** the public interface is include/sqlitetriggers.h.
*/
#ifndef SQLITETRIGGERS_INTERNAL_H
#define SQLITETRIGGERS_INTERNAL_H

/*
** The loadable build calls SQLite through the routines table that .load
** hands it (sqlite3ext.h).  The linked build (-DSQLITE_CORE, as SwiftPM
** compiles ext/ into an app) calls the host's SQLite directly and needs
** only sqlite3.h.
**
** Apple's SDKs ship a sqlite3ext.h that defines SQLITE_OMIT_LOAD_EXTENSION
** and so declares no routines table: Apple's SQLite never loads an
** extension.  A loadable build must be compiled against another SQLite's
** headers (the Makefile passes Homebrew's on macOS); say so here rather
** than fail on an undeclared sqlite3_api.
*/
#ifdef SQLITE_CORE
# include <sqlite3.h>
# define SQLITE_EXTENSION_INIT1
# define SQLITE_EXTENSION_INIT2(pApi) (void)(pApi)
# define SQLITE_EXTENSION_INIT3
#else
# include "sqlite3ext.h"
# ifdef SQLITE_OMIT_LOAD_EXTENSION
#  error "this sqlite3ext.h is from a SQLite that cannot load extensions (Apple's SDK): build the loadable library against one that can, e.g. make SQLITE_PREFIX=$(brew --prefix sqlite), or link ext/ into the app with -DSQLITE_CORE"
# endif
#endif
SQLITE_EXTENSION_INIT3

/* The oldest SQLite the code calls into: sqlite3_db_name() is new in
** 3.39.0 (iOS 16, macOS 13).  Registration on an older one fails, naming
** both versions, before anything calls past the end of its routines. */
#define SQLITETRIGGERS_MIN_SQLITE_VERSION 3039000
#define SQLITETRIGGERS_MIN_SQLITE_TEXT "3.39.0"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/*
** Every symbol shared between these sources is named sqlitetriggers_...
** and hidden: an app links us beside libraries we never see, and only the
** API in include/sqlitetriggers.h may be visible (Tests/shell/
** test_symbols.sh checks the built objects).
*/
#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility push(hidden)
#endif

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
  uint64_t forkGeneration;    /* of the kernel key; 0 when seeded,
                              ** UINT64_MAX until keyed (key_later) */
};
extern _Atomic uint64_t sqlitetriggers_random_fork_generation;
void sqlitetriggers_random_init_once(void);
uint32_t sqlitetriggers_load_le32(const unsigned char *p);
void sqlitetriggers_random_pool_key_later(RandomPool *pPool);
void sqlitetriggers_random_pool_key_from_kernel(RandomPool *pPool);
void sqlitetriggers_random_pool_seed(RandomPool *pPool, sqlite3_int64 seed);
void sqlitetriggers_random_pool_refill(RandomPool *pPool);
void sqlitetriggers_chacha20_blocks16(const uint32_t key[8], unsigned char *aOut);
int sqlitetriggers_chacha20_blocks16_kernel(int i, const uint32_t key[8], unsigned char *aOut);
const char *sqlitetriggers_chacha20_kernel_name(void);
void sqlitetriggers_chacha20_block(const uint32_t key[8], const uint32_t input[4], unsigned char *aOut);

/*
** n (at most 64) bytes of pPool's keystream.  Inline so that the copies
** of a constant n compile to a few moves: this runs once per uuid().  A
** kernel-keyed pool rekeys first when the process has forked since, and a
** pool not keyed yet keys itself (both: its generation is not the
** process's).
*/
static inline void randomPoolBytes(RandomPool *pPool, unsigned char *aOut,
                                   int n){
  if( pPool->forkGeneration!=0
   && pPool->forkGeneration!=atomic_load_explicit(&sqlitetriggers_random_fork_generation,
                                                  memory_order_relaxed) ){
    sqlitetriggers_random_pool_key_from_kernel(pPool);
  }
  if( pPool->iNext + n > (int)sizeof(pPool->aBuf) ) sqlitetriggers_random_pool_refill(pPool);
  memcpy(aOut, pPool->aBuf + pPool->iNext, n);
  memset(pPool->aBuf + pPool->iNext, 0, n);
  pPool->iNext += n;
}

/* callback.c, time.c and change_capture.c keep their state private. */
typedef struct CallbackState CallbackState;
typedef struct CaptureState CaptureState;
typedef struct TimeHelper TimeHelper;

/* The per-connection state behind every SQL function. */
typedef struct Connection Connection;
struct Connection {
  sqlite3 *db;
  int nRef;                   /* one per SQL function that holds it */
  int nHold;                  /* deliveries running; see connection_hold */
  sqlite3_vfs *pVfs;          /* source of "now", as for SQLite's 'now' */
  int isClockPinned;
  int (*xClock)(void*, sqlite3_int64*);  /* the host's clock, or NULL */
  void *pClockArg;
  void (*xClockDestroy)(void*);
  sqlite3_int64 pinnedJD;     /* iJD while the clock is pinned */
  int isSeeded;
  RandomPool random;          /* kernel-keyed, or seeded by the control */
  uint64_t lastLocalV7Tick;   /* uuidv7 order while pinned or seeded */
  CallbackState *pCallbacks;  /* swift_callback() events and observers */
  TimeHelper *pTimeHelper;    /* time.c's julianday() connection, or NULL */
  char *zGuardedSignature;    /* schema_guard.c: the schema last found safe */
  char *zCallSignature;       /* schema_guard.c: the signature the guard read
                              ** in the call running, for that call's own
                              ** later check (change_capture.c); or NULL */
  CaptureState *pCapture;     /* change_capture.c: captured tables, or NULL */
  sqlite3_int64 logTransaction;   /* log_stamp.c: the transaction stamped, */
  sqlite3_int64 logTransactionId; /* and the stamp its log rows carry */
  int isWritingOrigin;        /* log_stamp.c: sqlitetriggers_log_origin() writes */
  char *zLogCheckedSignature; /* log_check.c: the schema last checked, */
  int nLogCheckedTables;      /* and how many tables it logged */
  char *zWakeupName;          /* log_wakeup.c: the main file's name, or NULL */
  unsigned char aWakeupDb[16];/* log_wakeup.c: the databases to post for */
  Connection *pNext;          /* registry of live connections */
};

/* sqlitetriggers.c */
Connection *sqlitetriggers_connection_find(sqlite3 *db);
void sqlitetriggers_connection_release(void *pConnection);
void sqlitetriggers_connection_hold(Connection *p);
int sqlitetriggers_connection_unhold(Connection *p);
int sqlitetriggers_connection_create_function(sqlite3 *db, const char *zName, int nArg,
                             int flags, Connection *p,
                             void (*xFunc)(sqlite3_context*,int,sqlite3_value**));
int sqlitetriggers_connection_now_jd(Connection *p, sqlite3_int64 *piJD);
const char *sqlitetriggers_name_argument(sqlite3_context *ctx, const char *zFunc,
                                         sqlite3_value *pArg, const char *zWhat);
const char *sqlitetriggers_rowid_name(const char *const *azColumn, int nColumn);
int sqlitetriggers_rowid_name_bit(const char *zColumn);
const char *sqlitetriggers_rowid_name_free(int taken);
/* Sets the function's error "FUNC: MESSAGE", or out of memory. */
void sqlitetriggers_result_error(sqlite3_context *ctx, const char *zFunc, const char *zMsg);
/* Steps pStmt once: its first row's first column, if any, becomes the
** function's result; SQLITE_OK when it ran, else the error code. */
int sqlitetriggers_result_first_column(sqlite3_context *ctx, sqlite3_stmt *pStmt);

/* log_stamp.c */
int sqlitetriggers_log_is_stamped(Connection *p);

/* log_wakeup.c */
void sqlitetriggers_wakeup_prepare_commit(Connection *p);
void sqlitetriggers_wakeup_post_commit(Connection *p);

/* time.c */
int sqlitetriggers_format_jd(sqlite3_int64 iJD, char *zOut);
#define JD_ERROR  (-1)
#define JD_NULL     0
#define JD_OK       1
int sqlitetriggers_compute_jd(sqlite3_context *ctx, Connection *p, const char *zFunc,
              int argc, sqlite3_value **argv, sqlite3_int64 *piJD);
int sqlitetriggers_register_time_functions(sqlite3 *db, Connection *p);
void sqlitetriggers_time_helper_free(TimeHelper *pHelper);

/* callback*.c: swift_callback() (callback_internal.h lists its files) */
#define SQLITETRIGGERS_MAX_CALLBACK_ARGS 126
/* One argument of an event, as read once: from an sqlite3_value
** (sqlitetriggers_arg_view_read) or set directly. */
typedef struct ArgView ArgView;
struct ArgView {
  int eType;                  /* SQLITE_INTEGER, ... SQLITE_NULL */
  int nByte;                  /* text or blob length */
  const unsigned char *z;     /* text or blob bytes (text need not end in NUL) */
  union { sqlite3_int64 i; double r; } u;
};
int sqlitetriggers_arg_view_read(ArgView *pView, sqlite3_value *pValue);
int sqlitetriggers_callback_join(sqlite3_context *ctx, Connection *p, const char *zFunc);
int sqlitetriggers_callback_enlist(sqlite3_context *ctx, Connection *p);
int sqlitetriggers_callback_is_enlisted(Connection *p);
int sqlitetriggers_callback_enlist_quietly(Connection *p);
sqlite3_int64 sqlitetriggers_callback_transaction(Connection *p);
void sqlitetriggers_callback_spoil(Connection *p, const char *zTable, int rc,
                                   const char *zReason);
int sqlitetriggers_callback_record(Connection *p, const char *zName, int nName,
                                   int nArg, const ArgView *aView);
int sqlitetriggers_callback_record_at_commit(Connection *p, const char *zName, int nName,
                                             int nArg, const ArgView *aView);
void sqlitetriggers_callback_forget_at_commit(Connection *p);
int sqlitetriggers_callback_pending_count(Connection *p);
int sqlitetriggers_callback_patch_pending(Connection *p, int iEvent, const char *zName,
                                          int iArg, sqlite3_value *pValue);
CallbackState *sqlitetriggers_callback_state_create(void);
void sqlitetriggers_callback_state_free(CallbackState *pState);
int sqlitetriggers_register_callback_functions(sqlite3 *db, Connection *p, int isNew);

/* schema_guard.c; the _call form's function has the Connection as user
** data. */
int sqlitetriggers_schema_guard(sqlite3 *db, const char *zFunc, char **pzErr);
int sqlitetriggers_schema_guard_call(sqlite3_context *ctx, const char *zFunc);
int sqlitetriggers_sql_calls(const char *zSql, const char *zFunc);
char *sqlitetriggers_schema_signature(sqlite3 *db);
int sqlitetriggers_schema_check_rememberable(Connection *p);
void sqlitetriggers_schema_guard_joined(Connection *p);
void sqlitetriggers_forget_schema_checks(Connection *p);
int sqlitetriggers_sql_is_lone_call(const char *zSql, const char *zFunc);
const char *sqlitetriggers_sql_names(const char *zSql, const char *const *azName, int nName);
int sqlitetriggers_sql_token(const char *z, int *pnSkip, const char **pzName, int *pnName, int *pIsString);

/* uuid.c */
int sqlitetriggers_register_uuid_functions(sqlite3 *db, Connection *p);

/* change_capture.c */
int sqlitetriggers_capture_sync(Connection *p, char **pzErr);
void sqlitetriggers_capture_rollback(Connection *p);
void sqlitetriggers_capture_rollback_to(Connection *p, int nPending);
void sqlitetriggers_capture_unhook(Connection *p);
void sqlitetriggers_capture_free(Connection *p);
/* The modes of a capture: every column by the hook, the key's by the hook,
** net changes per transaction by triggers (change_net.c). */
#define CAPTURE_ROWS 0
#define CAPTURE_KEYS 1
#define CAPTURE_NET  2
int sqlitetriggers_capture_has_hook(Connection *p);
int sqlitetriggers_capture_net_is_open(Connection *p, const char *zTable);
int sqlitetriggers_capture_check(Connection *p, const char *zTable, int eMode,
                                 char **pzCanonical, char **pzErr);
void sqlitetriggers_capture_forget(Connection *p, const char *zTable);
void sqlitetriggers_capture_forget_checks(Connection *p);
int sqlitetriggers_register_capture_functions(sqlite3 *db, Connection *p);

/* change_net.c: mode 'net' of change capture */
int sqlitetriggers_net_install_sql(sqlite3 *db, const char *zTable, sqlite3_str *pOut,
                                   char **pzErr);
char *sqlitetriggers_net_drop_sql(const char *zTable);
int sqlitetriggers_net_table_state(sqlite3 *db, const char *zTable, int nColumn);
int sqlitetriggers_net_forget_earlier(sqlite3 *db, const char *zTable, sqlite3_int64 iTx);
int sqlitetriggers_net_read(Connection *p, const char *zTable, const char *zEvent,
                            int nEvent, sqlite3_int64 iTx, char **pzErr);

/* controls.c */
int sqlitetriggers_register_controls(sqlite3 *db, Connection *p);

/* change_feed.c */
int sqlitetriggers_register_change_feed_functions(sqlite3 *db, Connection *p);

/* durable_log.c */
int sqlitetriggers_register_durable_log_functions(sqlite3 *db, Connection *p);

/* log_upgrade.c: the durable log's keys carried from format 1, and the
** check's words for a log part-way there */
int sqlitetriggers_log_upgrade_keys(sqlite3 *db, int isUpgrade, char **pzErr);
char *sqlitetriggers_log_stale_message(sqlite3 *db, const char *zTable, int iTable, int iKind,
                                       int hasTrigger, int *pRc);

#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility pop
#endif

#endif /* SQLITETRIGGERS_INTERNAL_H */
