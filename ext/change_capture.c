/*
** change_capture.c: every committed row change of chosen tables, exact,
** read by SQLite's preupdate hook.  The change feeds of change_feed.c (SQL)
** and of SQLiteTriggersGRDB (Swift) are built on it.
**
** WHY A HOOK AND NOT TRIGGERS
**   An AFTER trigger's NEW is a snapshot taken when its row changed, and
**   SQLite runs a table's triggers in an unspecified order: when another
**   trigger or a foreign-key action rewrites the row first, a feed built
**   from triggers reports values the table never ended with, out of order.
**   And a row that REPLACE deletes fires no trigger at all while PRAGMA
**   recursive_triggers is OFF.  The preupdate hook is called for each row
**   change as SQLite makes it, with the row's values before and after, in
**   the order the changes happen, for every write path: statements,
**   triggers, foreign-key actions, REPLACE, upserts.  SQLite's session
**   extension records its changesets with the same hook.
**
** THE EVENT FORMAT (written once; the Swift decoder reads the same)
**   A change of main.T is an event named "sqlitetriggers.changes.T", T as
**   sqlite_schema spells it, with these arguments:
**     'insert', ROWID, V1 ... Vn
**     'update', OLD ROWID, OLD V1 ... OLD Vn, NEW ROWID, NEW V1 ... NEW Vn
**     'delete', ROWID, V1 ... Vn
**   ROWID is NULL in a WITHOUT ROWID table.  V1 ... Vn are every column in
**   table order (mode 'rows'), or the primary key's columns in key order
**   (mode 'keys'; none for a table keyed by the rowid alone).  Events join
**   the connection's swift_callback() events (callback*.c): numbered at
**   commit, in the log, delivered to after-commit and batch observers,
**   dropped with the statement, savepoint or transaction that rolls back.
**   Immediate observers do not see them: the hook cannot fail a statement.
**
** JOINING THE TRANSACTION
**   The hook cannot run SQL, and an event must join the transaction that
**   makes it (callback_tables.c's virtual table, told of every savepoint, commit
**   and rollback).  So each captured table has three TEMP triggers, BEFORE
**   INSERT, UPDATE and DELETE, whose body is
**     SELECT sqlitetriggers_change_capture('T', MODE, KIND)
**   A BEFORE trigger of the table runs before any change of one of its
**   rows (a foreign-key action and an upsert run the table's triggers too;
**   REPLACE deletes only within a statement that fired one), so the
**   transaction is joined before the hook sees a change, and the change
**   is announced: the hook records only announced changes (see
**   captureHook).  The function also checks, once per transaction and
**   table, that the capture still fits: the table exists under that name,
**   its three triggers exist, its width fits an event, and the preupdate
**   hook is ours.  Its triggers name no column, so ALTER TABLE ... DROP
**   COLUMN and ADD COLUMN work with a capture installed; after RENAME TO,
**   the next write fails, naming the capture and the remedy.  The triggers
**   are the capture: a table recreated under the same name (a migration)
**   is not captured until its feed is installed again.  Registering the
**   extension again keeps the connection's capture as it is.
**
** WHAT FAILS LOUDLY
**   - A host that does not give extensions the preupdate hook (a SQLite
**     built without SQLITE_ENABLE_PREUPDATE_HOOK, or one linked statically
**     into its host with hidden symbols, as apsw's wheels are): installing
**     fails, naming the cause.
**   - Another preupdate hook on the connection (a SQLite session, or GRDB
**     built with SQLITE_ENABLE_PREUPDATE_HOOK): see HOOK OWNERSHIP.
**   - A change that could not be recorded (out of memory), a captured
**     table renamed and written in the same transaction, or an incremental
**     BLOB write to one while the hook is set (SQLite reports it as a
**     DELETE, without the bytes written): the COMMIT fails.  A BLOB write
**     in a transaction that announced nothing finds no hook: unseen.
**     A capture missing one of its triggers (dropped by hand, or an
**     install that ran out of memory) fails the next write that fires one.
**   - VIRTUAL generated columns in 'rows' mode (the hook does not see
**     their values; it gives STORED ones, as any column) and tables too
**     wide for an event (126 arguments): installing fails, naming the
**     remedy.
**
** HOOK OWNERSHIP
**   A connection has one preupdate hook, and SQLite's interface gives back
**   only the previous hook's context, never its function: a library that
**   sets the hook where another's was cannot put it back.  So the capture
**   sets the hook only to install it, at the first announced change of a
**   transaction, and removes it when the transaction ends (xSync, or
**   xRollback, of callback_tables.c's virtual table); it never sets it
**   otherwise.  Its context is NULL (the hook finds its Connection from the
**   sqlite3*): a SQLite session created while it is set chains the
**   previous context as its next session, and would walk ours.  Between
**   transactions the slot is empty, so a session or another hook set then
**   is untouched until the capture's next transaction finds it there: that
**   transaction fails, naming it.  A hook set or cleared during the
**   transaction is found at xSync: a BLOB write to a TEMP table of ours
**   (CAPTURE_HOOK_PROBE) calls whatever hook is set, and ours notes it;
**   when ours did not see it, the COMMIT fails and the slot is left as it
**   is.  A hook with a context found at install is left with its context
**   (a session can then be deleted safely), but its function cannot be, and
**   the error says so.  What cannot be told: a hook set with a NULL context
**   between transactions looks like an empty slot, and is replaced.
**
** WHAT IT FIXES UP
**   The hook gives values as the row stores them, before the column's
**   affinity is applied: an integral REAL in a REAL column (stored as an
**   integer) comes as an integer, so a REAL column's integer is made a
**   REAL again (captureFixType).  Before SQLite 3.53 the old side of a
**   WITHOUT ROWID table whose key is not its first column gets other
**   columns' affinities: see captureReadMisreads.
**   A row stored before ALTER TABLE ... ADD COLUMN lacks the new column;
**   the hook reports its old value as NULL where SELECT reads the default.
**   The old side gets the default (captureOldValue), in rowid tables; for a
**   column added after the transaction's check, at xSync, where SQL can
**   read the default (captureApplyPatches).
*/
#if !defined(SQLITE_CORE) && !defined(_WIN32) && !defined(_GNU_SOURCE)
# define _GNU_SOURCE          /* dladdr() in glibc */
#endif
#include "sqlitetriggers_internal.h"

#include <assert.h>
#include <stddef.h>
#if !defined(SQLITE_CORE) && !defined(_WIN32)
# include <dlfcn.h>
#endif

#define CAPTURE_EVENT_PREFIX "sqlitetriggers.changes."
/* A TEMP table of one BLOB row, which the commit writes to see whether the
** hook is still ours (HOOK OWNERSHIP). */
#define CAPTURE_HOOK_PROBE "sqlitetriggers_hook_probe"

/* ---- SQLite's preupdate interface -------------------------------------- */

/*
** sqlite3.h declares it only under SQLITE_ENABLE_PREUPDATE_HOOK, Apple's
** SDK header not at all, and sqlite3ext.h's routine table never: so it is
** looked up.  Linked into the app (SQLITE_CORE), the declarations are weak:
** a SQLite without the hook leaves them NULL instead of failing to link.
** (Apple's libsqlite3 exports them, as GRDB's own declarations rely on;
** we could not link for Apple here.)  Loaded as an extension, the symbols
** are looked up in the library that holds the routine table's
** sqlite3_libversion_number (Python's sqlite3 module loads libsqlite3
** privately, so the process-wide namespace may not have them), and taken
** only if that library's sqlite3_libversion_number is the very function the
** routine table gives: the same SQLite that loaded us.
*/
typedef void (*PreupdateCallback)(void*, sqlite3*, int, const char*,
                                  const char*, sqlite3_int64, sqlite3_int64);
typedef struct PreupdateApi PreupdateApi;
struct PreupdateApi {
  void *(*xHook)(sqlite3*, PreupdateCallback, void*);
  int (*xOld)(sqlite3*, int, sqlite3_value**);
  int (*xNew)(sqlite3*, int, sqlite3_value**);
  int (*xCount)(sqlite3*);
  int (*xBlobWrite)(sqlite3*);    /* NULL where this SQLite has none */
};

#ifdef SQLITE_CORE
# if defined(__GNUC__) || defined(__clang__)
#  define WEAK_IMPORT __attribute__((weak))
# else
#  define WEAK_IMPORT
# endif
void *sqlite3_preupdate_hook(sqlite3*, PreupdateCallback, void*) WEAK_IMPORT;
int sqlite3_preupdate_old(sqlite3*, int, sqlite3_value**) WEAK_IMPORT;
int sqlite3_preupdate_new(sqlite3*, int, sqlite3_value**) WEAK_IMPORT;
int sqlite3_preupdate_count(sqlite3*) WEAK_IMPORT;
int sqlite3_preupdate_blobwrite(sqlite3*) WEAK_IMPORT;
#endif

/* 1 and the interface in *pApi, or 0 when this host has none. */
static int preupdateApiFind(PreupdateApi *pApi){
#ifdef SQLITE_CORE
  pApi->xHook = sqlite3_preupdate_hook;
  pApi->xOld = sqlite3_preupdate_old;
  pApi->xNew = sqlite3_preupdate_new;
  pApi->xCount = sqlite3_preupdate_count;
  pApi->xBlobWrite = sqlite3_preupdate_blobwrite;
#elif defined(_WIN32)
  memset(pApi, 0, sizeof(*pApi));
#else
  Dl_info info;
  void *pLibrary = 0;
  memset(pApi, 0, sizeof(*pApi));
  if( dladdr((void*)sqlite3_api->libversion_number, &info) && info.dli_fname ){
    pLibrary = dlopen(info.dli_fname, RTLD_LAZY|RTLD_NOLOAD);
  }
  if( pLibrary ){
    int (*xVersion)(void) = (int(*)(void))dlsym(pLibrary, "sqlite3_libversion_number");
    if( xVersion!=0 && xVersion==sqlite3_api->libversion_number ){
      pApi->xHook = (void*(*)(sqlite3*,PreupdateCallback,void*))dlsym(pLibrary, "sqlite3_preupdate_hook");
      pApi->xOld = (int(*)(sqlite3*,int,sqlite3_value**))dlsym(pLibrary, "sqlite3_preupdate_old");
      pApi->xNew = (int(*)(sqlite3*,int,sqlite3_value**))dlsym(pLibrary, "sqlite3_preupdate_new");
      pApi->xCount = (int(*)(sqlite3*))dlsym(pLibrary, "sqlite3_preupdate_count");
      pApi->xBlobWrite = (int(*)(sqlite3*))dlsym(pLibrary, "sqlite3_preupdate_blobwrite");
    }
    /* The library stays loaded: its host holds it. */
    dlclose(pLibrary);
  }
#endif
  return pApi->xHook && pApi->xOld && pApi->xNew && pApi->xCount;
}

#define NO_PREUPDATE_HOOK \
  "this SQLite does not give extensions its preupdate hook (built without " \
  "SQLITE_ENABLE_PREUPDATE_HOOK, or linked into its host with hidden " \
  "symbols, as apsw's wheels are), which exact change capture needs: load " \
  "the extension into a SQLite that exports it, or link it with SQLITE_CORE"

#define HOOK_TAKEN \
  "this connection's preupdate hook was replaced or cleared during the transaction " \
  "(a SQLite session opened or closed, or another library's hook), so the changes " \
  "made after that went unseen: a connection has one hook, and change feeds need " \
  "it; use them on a connection without the other hook"

#define HOOK_PROBE_GONE \
  "its probe table temp." CAPTURE_HOOK_PROBE " (made when a feed is installed) is " \
  "gone or empty, so the commit cannot check that the preupdate hook is still the " \
  "capture's: install the feed again"

#define HOOK_SET \
  "another preupdate hook is set on this connection (a SQLite session, or GRDB " \
  "built with SQLITE_ENABLE_PREUPDATE_HOOK?), and it stopped running when the " \
  "capture found it (SQLite cannot give a hook back): a connection has one hook, " \
  "and change feeds need it; use them on a connection without the other hook"

/* ---- the captured tables ----------------------------------------------- */

/* An argument of a pending event to replace with its column's default. */
typedef struct AddedColumnPatch AddedColumnPatch;
struct AddedColumnPatch { int iEvent, iArg, iCol; };

typedef struct CapturedTable CapturedTable;
struct CapturedTable {
  char *zTable;               /* as the capture's triggers name it */
  char *zEvent;               /* CAPTURE_EVENT_PREFIX, then the table */
  int nEvent;
  int isKeysOnly;
  int isNet;                  /* mode 'net' (change_net.c): no hook */
  int hasRowid;
  int nKey;                   /* keys mode: the key's column indexes */
  int *aKey;
  /* A rowid table's column defaults in 'rows' mode (NULL where none), for
  ** rows stored before ALTER TABLE ... ADD COLUMN: see captureOldValue. */
  sqlite3_value **apDefault;
  int nDefault;
  /* Per column (see WHAT IT FIXES UP): its affinity, 'R' REAL, 'N' INTEGER
  ** or NUMERIC, 'T' TEXT, 'B' none; and aOldMisread[i], 1 when this
  ** SQLite's sqlite3_preupdate_old() applies REAL affinity to column i of
  ** this WITHOUT ROWID table, which has none. */
  char *aAffinity;
  char *aOldMisread;
  int nColumn;
  int readsMissing;           /* rows mode, rowid table: see captureOldValue */
  /* Old values of columns added after this transaction's check, missing
  ** from the rows stored before: their defaults, patched in at xSync. */
  AddedColumnPatch *aPatch;
  int nPatch, nPatchAlloc;
  sqlite3_int64 iPatchTransaction;
  sqlite3_int64 iCheckedTransaction;  /* checked while enlisted in it; -1 */
  char *zCheckedSignature;    /* the schema's signature at the last check */
  sqlite3_int64 iNetTransaction;      /* 'net': the last one it wrote in */
  sqlite3_int64 iArmedTransaction;    /* of the counts below */
  int anArmed[3];             /* BEFORE INSERT, UPDATE, DELETE firings not yet
                              ** matched by a change (see captureHook) */
};

struct CaptureState {
  PreupdateApi api;
  int hasApi;
  int isHooked;               /* our hook is set, for this transaction */
  int isProbeSeen;            /* our hook saw the probe (captureHookIsOurs) */
  sqlite3_int64 netEpoch;     /* 'net': a transaction's tx is netEpoch ^ its number */
  CapturedTable **aTable;
  int nTable;
};

static void capturedDefaultsFree(sqlite3_value **apDefault, int nDefault){
  int i;
  for(i=0; i<nDefault; i++) sqlite3_value_free(apDefault[i]);
  sqlite3_free(apDefault);
}

/* The column descriptions captureRead() allocates, freed. */
static void capturedColumnsFree(CapturedTable *pTab){
  sqlite3_free(pTab->aKey);
  sqlite3_free(pTab->aAffinity);
  sqlite3_free(pTab->aOldMisread);
  capturedDefaultsFree(pTab->apDefault, pTab->nDefault);
  pTab->aKey = 0;
  pTab->aAffinity = 0;
  pTab->aOldMisread = 0;
  pTab->apDefault = 0;
  pTab->nDefault = 0;
}

static void capturedTableFree(CapturedTable *pTab){
  if( pTab==0 ) return;
  capturedColumnsFree(pTab);
  sqlite3_free(pTab->aPatch);
  sqlite3_free(pTab->zTable);
  sqlite3_free(pTab->zEvent);
  sqlite3_free(pTab->zCheckedSignature);
  sqlite3_free(pTab);
}

/* p's capture state, created on first use; NULL when out of memory. */
static CaptureState *captureState(Connection *p){
  if( p->pCapture==0 ){
    CaptureState *pCap = sqlite3_malloc(sizeof(*pCap));
    if( pCap==0 ) return 0;
    memset(pCap, 0, sizeof(*pCap));
    pCap->hasApi = preupdateApiFind(&pCap->api);
    /* A state table left by an earlier registration on the connection
    ** holds another epoch's transactions. */
    sqlite3_randomness(sizeof(pCap->netEpoch), &pCap->netEpoch);
    p->pCapture = pCap;
  }
  return p->pCapture;
}

static CapturedTable *capturedTableFind(CaptureState *pCap, const char *zTable){
  int i;
  for(i=0; i<pCap->nTable; i++){
    if( sqlite3_stricmp(pCap->aTable[i]->zTable, zTable)==0 ) return pCap->aTable[i];
  }
  return 0;
}

void sqlitetriggers_capture_forget(Connection *p, const char *zTable){
  CaptureState *pCap = p->pCapture;
  int i;
  if( pCap==0 ) return;
  for(i=0; i<pCap->nTable; i++){
    if( sqlite3_stricmp(pCap->aTable[i]->zTable, zTable)==0 ){
      capturedTableFree(pCap->aTable[i]);
      pCap->aTable[i] = pCap->aTable[--pCap->nTable];
      return;
    }
  }
}

/* p lets go of its connection (closing, or replaced by a new registration,
** which took the hook over first): a hook still ours must not outlive p.
** During sqlite3_close() SQLite ignores the call or clears a field. */
void sqlitetriggers_capture_unhook(Connection *p){
  CaptureState *pCap = p->pCapture;
  if( pCap && pCap->isHooked && p->db ) pCap->api.xHook(p->db, 0, 0);
  if( pCap ) pCap->isHooked = 0;
}

void sqlitetriggers_capture_free(Connection *p){
  CaptureState *pCap = p->pCapture;
  int i;
  if( pCap==0 ) return;
  for(i=0; i<pCap->nTable; i++) capturedTableFree(pCap->aTable[i]);
  sqlite3_free(pCap->aTable);
  sqlite3_free(pCap);
  p->pCapture = 0;
}

/* ---- the hook ---------------------------------------------------------- */

static int captureReadDefaults(sqlite3 *db, const char *zTable, int nColumn, CapturedTable *pTab);

/*
** The old value of column iCol, given what sqlite3_preupdate_old() gave.
** A row stored before ALTER TABLE ... ADD COLUMN lacks the new columns,
** which SELECT reads as their default; sqlite3_preupdate_old() gives NULL
** for them, and a NULL of its own (one static value) rather than one of the
** row's unpacked values, which sit in one array, column after column.  So a
** NULL that is not at its column's place in that array (found from columns
** 0 and 1, which a table always stored unless it began with one column) is
** a missing column: its default.  Rowid tables only (a WITHOUT ROWID
** table's values sit in its key's order).  aFirst holds columns 0 and 1's
** values as given, in order.  A column added since this transaction's check
** has a default the hook cannot read (no SQL there): *pIsUnknown is set,
** and xSync patches it in (captureApplyPatches).
*/
static sqlite3_value *captureOldValue(CapturedTable *pTab, int iCol, sqlite3_value *pValue,
                                      sqlite3_value **aFirst, int *pIsUnknown){
  const char *zBase, *zValue = (const char*)pValue;
  ptrdiff_t stride;
  int isMissing, isKnown = iCol<pTab->nColumn;
  if( iCol<2 ) aFirst[iCol] = pValue;
  if( iCol==0 || sqlite3_value_type(pValue)!=SQLITE_NULL ) return pValue;
  if( isKnown && (iCol>=pTab->nDefault || pTab->apDefault[iCol]==0) ) return pValue;
  zBase = (const char*)aFirst[0];
  stride = (const char*)aFirst[1] - zBase;
  if( stride>0 && stride<=512 ){
    isMissing = zValue!=zBase + iCol*stride;
  }else{
    isMissing = 1;    /* column 1 itself is missing: so are those after it */
  }
  if( !isMissing ) return pValue;
  if( !isKnown ){
    *pIsUnknown = 1;
    return pValue;
  }
  return pTab->apDefault[iCol];
}

/*
** pView (column iCol's value, as the hook gave it) made the value the table
** holds (WHAT IT FIXES UP).  0 when it cannot be: an integer that SQLite
** made a REAL and rounded.
*/
static int captureFixType(const CapturedTable *pTab, int iCol, int isOld, ArgView *pView){
  char affinity = pTab->aAffinity && iCol<pTab->nColumn ? pTab->aAffinity[iCol] : 'B';
  if( affinity=='R' && pView->eType==SQLITE_INTEGER ){
    pView->eType = SQLITE_FLOAT;
    pView->u.r = (double)pView->u.i;
  }else if( isOld && pTab->aOldMisread && iCol<pTab->nColumn && pTab->aOldMisread[iCol]
         && affinity=='N' && pView->eType==SQLITE_FLOAT && pView->u.r==(double)(sqlite3_int64)pView->u.r ){
    /* Integral, so stored as an integer: exact below 2^53, lost above. */
    if( pView->u.r > -9007199254740992.0 && pView->u.r < 9007199254740992.0 ){
      pView->eType = SQLITE_INTEGER;
      pView->u.i = (sqlite3_int64)pView->u.r;
    }else{
      return 0;
    }
  }
  return 1;
}

/* Describes side (old or new) of the current change into aView from i on;
** returns the next index, -1 when out of memory, or -2 when a value
** cannot be read exactly (captureFixType). */
static int captureSide(CaptureState *pCap, CapturedTable *pTab, sqlite3 *db,
                       int isNew, sqlite3_int64 iRowid, ArgView *aView, int i,
                       AddedColumnPatch *aPatch, int *pnPatch){
  int (*xValue)(sqlite3*, int, sqlite3_value**) = isNew ? pCap->api.xNew : pCap->api.xOld;
  sqlite3_value *aFirst[2] = { 0, 0 };
  int iCol, nCol = pTab->isKeysOnly ? pTab->nKey : pCap->api.xCount(db);
  if( pTab->hasRowid ){
    aView[i].eType = SQLITE_INTEGER;
    aView[i].u.i = iRowid;
  }else{
    aView[i].eType = SQLITE_NULL;
  }
  aView[i].nByte = 0;
  aView[i].z = 0;
  i++;
  for(iCol=0; iCol<nCol; iCol++, i++){
    sqlite3_value *pValue = 0;
    int iTableCol = pTab->isKeysOnly ? pTab->aKey[iCol] : iCol;
    if( i>=SQLITETRIGGERS_MAX_CALLBACK_ARGS ) return -1;   /* widened since */
    if( xValue(db, iTableCol, &pValue)!=SQLITE_OK || pValue==0 ) return -1;
    if( !isNew && pTab->readsMissing ){
      int isUnknown = 0;
      pValue = captureOldValue(pTab, iCol, pValue, aFirst, &isUnknown);
      if( isUnknown ){
        aPatch[*pnPatch].iArg = i;
        aPatch[*pnPatch].iCol = iCol;
        ++*pnPatch;
      }
    }
    if( !sqlitetriggers_arg_view_read(&aView[i], pValue) ) return -1;
    if( !captureFixType(pTab, iTableCol, !isNew, &aView[i]) ) return -2;
  }
  return i;
}

/* The tx column of mode 'net' for transaction number iTransaction. */
static sqlite3_int64 captureNetTx(const CaptureState *pCap, sqlite3_int64 iTransaction){
  return pCap->netEpoch ^ iTransaction;
}

/* Keeps the patches of the event just recorded (the last pending one);
** 0 when out of memory. */
static int captureKeepPatches(Connection *p, CapturedTable *pTab, AddedColumnPatch *aPatch, int nPatch){
  sqlite3_int64 iTransaction = sqlitetriggers_callback_transaction(p);
  int i, iEvent = sqlitetriggers_callback_pending_count(p) - 1;
  if( pTab->iPatchTransaction!=iTransaction ){
    pTab->nPatch = 0;
    pTab->iPatchTransaction = iTransaction;
  }
  if( pTab->nPatch + nPatch > pTab->nPatchAlloc ){
    int nNew = 2*(pTab->nPatch + nPatch);
    AddedColumnPatch *aNew = sqlite3_realloc64(pTab->aPatch, (sqlite3_uint64)nNew*sizeof(*aNew));
    if( aNew==0 ) return 0;
    pTab->aPatch = aNew;
    pTab->nPatchAlloc = nNew;
  }
  for(i=0; i<nPatch; i++){
    aPatch[i].iEvent = iEvent;
    pTab->aPatch[pTab->nPatch++] = aPatch[i];
  }
  return 1;
}

/* A captured table's BEFORE trigger of kind ran: its change is expected. */
static void captureArm(Connection *p, CapturedTable *pTab, int iKind){
  sqlite3_int64 iTransaction = sqlitetriggers_callback_transaction(p);
  if( pTab->iArmedTransaction!=iTransaction ){
    memset(pTab->anArmed, 0, sizeof(pTab->anArmed));
    pTab->iArmedTransaction = iTransaction;
  }
  pTab->anArmed[iKind]++;
}

/* 1 if main.zTable exists (0 if it does not, or if this SQLite cannot
** say without running SQL, which a hook must not). */
static int captureTableExists(sqlite3 *db, const char *zTable){
#ifdef SQLITE_CORE
  return sqlite3_table_column_metadata(db, "main", zTable, 0, 0, 0, 0, 0, 0)==SQLITE_OK;
#else
  if( sqlite3_api->table_column_metadata==0 ) return 1;
  return sqlite3_table_column_metadata(db, "main", zTable, 0, 0, 0, 0, 0, 0)==SQLITE_OK;
#endif
}

/*
** The hook.  A change of a captured table is recorded when the table's
** BEFORE trigger of the same kind announced it (captureArm), so that only
** the table the capture's triggers are on is captured: a new table of the
** same name (a migration that recreates it) has no triggers and is not,
** and neither is a table whose triggers were dropped.  A row that REPLACE
** deletes fires no DELETE trigger while recursive_triggers is off: a
** deletion inside an announced insert or update of the table is recorded
** too.  A change of a table the capture does not know, while a captured
** table whose name no longer exists has announced a change, is that table
** under a new name (ALTER TABLE ... RENAME TO in this transaction): the
** transaction cannot commit.
*/
static void captureHook(void *pArg, sqlite3 *db, int op, const char *zDb,
                        const char *zTable, sqlite3_int64 iKey1,
                        sqlite3_int64 iKey2){
  Connection *p;
  CaptureState *pCap;
  CapturedTable *pTab;
  ArgView aView[SQLITETRIGGERS_MAX_CALLBACK_ARGS];
  AddedColumnPatch aPatch[SQLITETRIGGERS_MAX_CALLBACK_ARGS];
  int n = 1, iKind = op==SQLITE_INSERT ? 0 : op==SQLITE_UPDATE ? 1 : 2, i, nPatch = 0;
  sqlite3_int64 iTransaction;
  (void)pArg;                 /* always NULL: see HOOK OWNERSHIP */
  if( strcmp(zDb, "temp")==0 && strcmp(zTable, CAPTURE_HOOK_PROBE)==0 ){
    if( (p = sqlitetriggers_connection_find(db))!=0 && p->pCapture ) p->pCapture->isProbeSeen = 1;
    return;
  }
  if( strcmp(zDb, "main")!=0 || (p = sqlitetriggers_connection_find(db))==0 ) return;
  pCap = p->pCapture;
  if( pCap==0 || pCap->nTable==0 || !pCap->isHooked ) return;
  if( !sqlitetriggers_callback_is_enlisted(p) ) return;   /* nothing announced */
  iTransaction = sqlitetriggers_callback_transaction(p);
  if( (pTab = capturedTableFind(pCap, zTable))==0 ){
    for(i=0; i<pCap->nTable; i++){
      CapturedTable *pArmed = pCap->aTable[i];
      if( pArmed->iArmedTransaction==iTransaction
       && (pArmed->anArmed[0] || pArmed->anArmed[1] || pArmed->anArmed[2])
       && !captureTableExists(db, pArmed->zTable) ){
        sqlitetriggers_callback_spoil(p, pArmed->zTable, SQLITE_ERROR,
            "renamed in this transaction (ALTER TABLE ... RENAME TO): install its feed "
            "under the new name after the rename's own transaction");
      }
    }
    return;
  }
  /* sqlite3_blob_write() reports a DELETE of the row it writes, with no
  ** trigger, and without the bytes written: not a deletion, and not
  ** something the feed can deliver. */
  if( op==SQLITE_DELETE && pCap->api.xBlobWrite && pCap->api.xBlobWrite(db)>=0 ){
    sqlitetriggers_callback_spoil(p, pTab->zTable, SQLITE_ERROR,
        "an incremental BLOB write (sqlite3_blob_write) changed one of its rows, which a change "
        "feed cannot deliver: write BLOBs with UPDATE");
    return;
  }
  if( pTab->iArmedTransaction!=iTransaction ) return;
  if( pTab->anArmed[iKind]>0 ){
    pTab->anArmed[iKind]--;
  }else if( !(iKind==2 && (pTab->anArmed[0] || pTab->anArmed[1])) ){
    return;                                     /* not announced */
  }
  aView[0].eType = SQLITE_TEXT;
  aView[0].z = (const unsigned char*)(iKind==0 ? "insert" : iKind==1 ? "update" : "delete");
  aView[0].nByte = (int)strlen((const char*)aView[0].z);
  if( op!=SQLITE_INSERT ) n = captureSide(pCap, pTab, db, 0, iKey1, aView, n, aPatch, &nPatch);
  if( op!=SQLITE_DELETE && n>0 ) n = captureSide(pCap, pTab, db, 1, iKey2, aView, n, aPatch, &nPatch);
  if( n==-2 ){
    sqlitetriggers_callback_spoil(p, pTab->zTable, SQLITE_ERROR,
        "this SQLite's preupdate hook gave an integer beyond 2^53 of a WITHOUT ROWID table, "
        "whose key is not its first column, rounded to a REAL (fixed in later SQLite): "
        "make the key the table's first columns, or use SQLite 3.53 or later");
    return;
  }
  if( n<0 || sqlitetriggers_callback_record(p, pTab->zEvent, pTab->nEvent, n, aView)!=SQLITE_OK
   || (nPatch && !captureKeepPatches(p, pTab, aPatch, nPatch)) ){
    /* The hook cannot fail the statement: the transaction cannot commit. */
    sqlitetriggers_callback_spoil(p, pTab->zTable, SQLITE_NOMEM,
                                  "a change could not be recorded (out of memory)");
  }
}

/*
** Installs the hook for this transaction (HOOK OWNERSHIP); 1, or 0 when
** another library's hook is set, which is left in place (its context, at
** least: SQLite never returns a hook's function, so it cannot be put back,
** and it stops running) and named in the error.
*/
static int captureHookInstall(Connection *p, CaptureState *pCap){
  void *pPrevious;
  if( pCap->isHooked ) return 1;
  pPrevious = pCap->api.xHook(p->db, captureHook, 0);
  if( pPrevious!=0 ){
    pCap->api.xHook(p->db, 0, pPrevious);
    return 0;
  }
  pCap->isHooked = 1;
  return 1;
}

/*
** 1 when the hook set now is still ours, 0 when it is not (cleared, or
** another library's, whatever its context), -1 when the probe table is
** gone, -2 when out of memory.  SQLite tells only a hook's context, and ours is NULL, like that of
** a cleared hook: so the probe writes the BLOB of the probe table's row
** (sqlite3_blob_write() calls the preupdate hook, and changes no counter,
** neither changes() nor last_insert_rowid()), and ours notes it.
*/
static int captureHookIsOurs(Connection *p, CaptureState *pCap){
  static const unsigned char aZero[1] = { 0 };
  sqlite3_blob *pBlob = 0;
  int rc = sqlite3_blob_open(p->db, "temp", CAPTURE_HOOK_PROBE, "b", 1, 1, &pBlob);
  pCap->isProbeSeen = 0;
  if( rc==SQLITE_OK ) rc = sqlite3_blob_write(pBlob, aZero, 1, 0);
  sqlite3_blob_close(pBlob);
  if( rc!=SQLITE_OK ) return (rc & 0xff)==SQLITE_NOMEM ? -2 : -1;
  return pCap->isProbeSeen;
}

/* Removes the hook at the end of a transaction; 1, or 0 when another
** library's hook had replaced it during the transaction (whose context is
** left in place, as above). */
static int captureHookRemove(Connection *p, CaptureState *pCap){
  void *pPrevious;
  int i;
  if( !pCap->isHooked ) return 1;
  pCap->isHooked = 0;
  /* The next announcement installs it again, even in this transaction. */
  for(i=0; i<pCap->nTable; i++) pCap->aTable[i]->iCheckedTransaction = -1;
  pPrevious = pCap->api.xHook(p->db, 0, 0);
  if( pPrevious!=0 ){
    pCap->api.xHook(p->db, 0, pPrevious);
    return 0;
  }
  return 1;
}

/*
** The defaults of columns added during the transaction, into the old sides
** that lacked them (captureOldValue): read now, where SQL runs.  ALTER TABLE
** ... ADD COLUMN takes constant defaults only, so the current schema's is
** the one SELECT read.
*/
static int captureApplyPatches(Connection *p, CaptureState *pCap, sqlite3_int64 iTransaction){
  int i, k, rc = SQLITE_OK;
  for(i=0; i<pCap->nTable && rc==SQLITE_OK; i++){
    CapturedTable *pTab = pCap->aTable[i], defaults;
    int nColumn = 0;
    if( pTab->nPatch==0 || pTab->iPatchTransaction!=iTransaction ) continue;
    for(k=0; k<pTab->nPatch; k++){
      if( pTab->aPatch[k].iCol>=nColumn ) nColumn = pTab->aPatch[k].iCol + 1;
    }
    memset(&defaults, 0, sizeof(defaults));
    rc = captureReadDefaults(p->db, pTab->zTable, nColumn, &defaults);
    for(k=0; k<pTab->nPatch && rc==SQLITE_OK && defaults.apDefault; k++){
      sqlite3_value *pDefault = defaults.apDefault[pTab->aPatch[k].iCol];
      if( pDefault ){
        rc = sqlitetriggers_callback_patch_pending(p, pTab->aPatch[k].iEvent, pTab->zEvent,
                                                   pTab->aPatch[k].iArg, pDefault);
      }
    }
    capturedDefaultsFree(defaults.apDefault, defaults.nDefault);
    if( rc==SQLITE_OK ) pTab->nPatch = 0;
  }
  return rc;
}

/* After ROLLBACK TO (or a statement's rollback), nPending events remain:
** the patches of the events dropped go. */
void sqlitetriggers_capture_rollback_to(Connection *p, int nPending){
  int i, k, n;
  for(i=0; p->pCapture && i<p->pCapture->nTable; i++){
    CapturedTable *pTab = p->pCapture->aTable[i];
    for(k=0, n=0; k<pTab->nPatch; k++){
      if( pTab->aPatch[k].iEvent<nPending ) pTab->aPatch[n++] = pTab->aPatch[k];
    }
    pTab->nPatch = n;
  }
}

/* xSync: the commit is refused when the hook was taken during the
** transaction, since changes made after that went unseen. */
int sqlitetriggers_capture_sync(Connection *p, char **pzErr){
  CaptureState *pCap = p->pCapture;
  sqlite3_int64 iTransaction = sqlitetriggers_callback_transaction(p);
  int i, rc;
  if( pCap==0 ) return SQLITE_OK;
  /* An earlier xSync of this transaction whose commit failed made some. */
  sqlitetriggers_callback_forget_at_commit(p);
  rc = captureApplyPatches(p, pCap, iTransaction);
  if( rc!=SQLITE_OK ){
    captureHookRemove(p, pCap);
    return rc;
  }
  for(i=0; i<pCap->nTable; i++){
    CapturedTable *pTab = pCap->aTable[i];
    if( !pTab->isNet || pTab->iNetTransaction!=iTransaction ) continue;
    rc = sqlitetriggers_net_read(p, pTab->zTable, pTab->zEvent, pTab->nEvent,
                                 captureNetTx(pCap, iTransaction), pzErr);
    if( rc!=SQLITE_OK ){
      sqlitetriggers_callback_forget_at_commit(p);
      captureHookRemove(p, pCap);
      return rc;
    }
  }
  if( pCap->isHooked && (rc = captureHookIsOurs(p, pCap))!=1 ){
    /* Whatever is set now is not ours: it stays as it is. */
    pCap->isHooked = 0;
    for(i=0; i<pCap->nTable; i++) pCap->aTable[i]->iCheckedTransaction = -1;
    if( rc==-2 ) return SQLITE_NOMEM;
    *pzErr = sqlite3_mprintf("change capture: %s", rc<0 ? HOOK_PROBE_GONE : HOOK_TAKEN);
    return SQLITE_MISUSE;
  }
  if( captureHookRemove(p, pCap) ) return SQLITE_OK;
  *pzErr = sqlite3_mprintf("change capture: %s", HOOK_TAKEN);
  return SQLITE_MISUSE;
}

/* A rollback or ROLLBACK TO (schema_guard.c): each table's check is made
** again at its next change, in this transaction too: what was rolled back
** may have been an ALTER the check saw. */
void sqlitetriggers_capture_forget_checks(Connection *p){
  CaptureState *pCap = p->pCapture;
  int i;
  if( pCap==0 ) return;
  for(i=0; i<pCap->nTable; i++){
    sqlite3_free(pCap->aTable[i]->zCheckedSignature);
    pCap->aTable[i]->zCheckedSignature = 0;
    pCap->aTable[i]->iCheckedTransaction = -1;
  }
}

/* xRollback: nothing to refuse; the hook goes, and the patches. */
void sqlitetriggers_capture_rollback(Connection *p){
  sqlitetriggers_capture_rollback_to(p, 0);
  if( p->pCapture ) captureHookRemove(p, p->pCapture);
}

/* ---- checking a table -------------------------------------------------- */

/* The error message, or 0 when out of memory. */
static char *captureError(const char *zTable, const char *zReason){
  return sqlite3_mprintf("change capture of \"%s\": %s", zTable, zReason);
}

/* The constant defaults of zTable's columns into pTab->apDefault (NULL
** when no column has one).  ALTER TABLE ... ADD COLUMN takes constant
** defaults only, so evaluating one once gives what SELECT reads. */
static int captureReadDefaults(sqlite3 *db, const char *zTable, int nColumn, CapturedTable *pTab){
  sqlite3_stmt *pStmt = 0;
  int rc;
  capturedDefaultsFree(pTab->apDefault, pTab->nDefault);
  pTab->apDefault = 0;
  pTab->nDefault = 0;
  rc = sqlite3_prepare_v2(db, "SELECT cid, dflt_value FROM pragma_table_xinfo(?1, 'main')"
                              " WHERE dflt_value IS NOT NULL AND upper(dflt_value) <> 'NULL'", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    int iCol = sqlite3_column_int(pStmt, 0);
    const char *zDefault = (const char*)sqlite3_column_text(pStmt, 1);
    char *zSql = zDefault ? sqlite3_mprintf("SELECT %s", zDefault) : 0;
    sqlite3_stmt *pValue = 0;
    if( zSql==0 ){ rc = SQLITE_NOMEM; break; }
    if( pTab->apDefault==0 ){
      pTab->apDefault = sqlite3_malloc64((sqlite3_uint64)nColumn*sizeof(sqlite3_value*));
      if( pTab->apDefault==0 ){ sqlite3_free(zSql); rc = SQLITE_NOMEM; break; }
      memset(pTab->apDefault, 0, nColumn*sizeof(sqlite3_value*));
      pTab->nDefault = nColumn;
    }
    /* A default that does not evaluate alone (CURRENT_TIMESTAMP does; a
    ** column name never can) is left out: such a column was not added by
    ** ALTER TABLE. */
    if( iCol>=0 && iCol<nColumn
     && sqlite3_prepare_v2(db, zSql, -1, &pValue, 0)==SQLITE_OK
     && sqlite3_step(pValue)==SQLITE_ROW ){
      pTab->apDefault[iCol] = sqlite3_value_dup(sqlite3_column_value(pValue, 0));
      if( pTab->apDefault[iCol]==0 ) rc = SQLITE_NOMEM;
    }
    sqlite3_finalize(pValue);
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  return rc;
}

/* A declared type's affinity, by SQLite's rules ("Determination Of Column
** Affinity"), as captureFixType() needs it: 'R', 'N', 'T' or 'B'. */
static char captureAffinity(const char *zType, int isStrict){
  char zUpper[64];
  int i;
  if( zType==0 ) return 'B';
  for(i=0; zType[i] && i<(int)sizeof(zUpper)-1; i++){
    zUpper[i] = (zType[i]>='a' && zType[i]<='z') ? (char)(zType[i]-32) : zType[i];
  }
  zUpper[i] = 0;
  if( isStrict && strcmp(zUpper, "ANY")==0 ) return 'B';
  if( strstr(zUpper, "INT") ) return 'N';
  if( strstr(zUpper, "CHAR") || strstr(zUpper, "CLOB") || strstr(zUpper, "TEXT") ) return 'T';
  if( strstr(zUpper, "BLOB") || zUpper[0]==0 ) return 'B';
  if( strstr(zUpper, "REAL") || strstr(zUpper, "FLOA") || strstr(zUpper, "DOUB") ) return 'R';
  return 'N';
}

/*
** Before SQLite 3.53 (3.40.1 and 3.46.1 do it; 3.53.4 does not; the
** versions between are taken to), sqlite3_preupdate_old() on a WITHOUT
** ROWID table applies the affinity of the column whose index is the value's
** place in the stored row (the key's columns first, then the others in
** table order): a value lands under REAL affinity that is not its own.  A
** REAL column misread so gives an integer, which captureFixType() makes
** REAL again; an INTEGER or NUMERIC one gives a REAL, made an integer again
** (exactly below 2^53).  A column without affinity would be ambiguous (it
** may hold REALs): refused, naming the remedy.
*/
static int captureReadMisreads(CapturedTable *pTab, const char *zTable, char **pzErr){
  int i, iStored = 0, k;
  if( pTab->hasRowid || sqlite3_libversion_number()>=3053000 ) return SQLITE_OK;
  pTab->aOldMisread = sqlite3_malloc64((sqlite3_uint64)pTab->nColumn + 1);
  if( pTab->aOldMisread==0 ) return SQLITE_NOMEM;
  memset(pTab->aOldMisread, 0, pTab->nColumn + 1);
  /* The stored place of each column: the key's first, then the rest. */
  for(k=0; k<pTab->nKey; k++){
    int iCol = pTab->aKey[k];
    pTab->aOldMisread[iCol] = pTab->aAffinity[k]=='R' && pTab->aAffinity[iCol]!='R';
  }
  iStored = pTab->nKey;
  for(i=0; i<pTab->nColumn; i++){
    int isKey = 0;
    for(k=0; k<pTab->nKey; k++) isKey |= pTab->aKey[k]==i;
    if( isKey ) continue;
    pTab->aOldMisread[i] = iStored<pTab->nColumn && pTab->aAffinity[iStored]=='R'
                        && pTab->aAffinity[i]!='R';
    iStored++;
  }
  for(i=0; i<pTab->nColumn; i++){
    int isRead = !pTab->isKeysOnly;
    for(k=0; k<pTab->nKey; k++) isRead |= pTab->aKey[k]==i;
    if( isRead && pTab->aOldMisread[i] && pTab->aAffinity[i]=='B' ){
      char *zReason = sqlite3_mprintf("this SQLite's preupdate hook reads the old value of "
          "column %d, which has no declared type, as a REAL in this WITHOUT ROWID table whose "
          "key is not its first column (fixed in SQLite 3.53): declare the column's type, "
          "make the key the table's first columns, or use SQLite 3.53 or later", i + 1);
      *pzErr = zReason ? captureError(zTable, zReason) : 0;
      sqlite3_free(zReason);
      return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }
  return SQLITE_OK;
}

/*
** Checks that main.zTable can be captured in the mode asked, and reads what
** the hook needs into *pTab (zTable and zEvent set by the caller).  SQLITE_OK;
** SQLITE_ERROR with *pzErr; SQLITE_NOMEM.  *pzCanonical: the name as
** sqlite_schema spells it.
*/
static int captureRead(sqlite3 *db, const char *zTable, int eMode,
                       int isInstalled, CapturedTable *pTab, char **pzCanonical,
                       char **pzErr){
  int isKeysOnly = eMode==CAPTURE_KEYS;
  sqlite3_stmt *pStmt = 0;
  int rc, nColumn = 0, nGenerated = 0, nVirtual = 0, nKey = 0, maxWidth, isStrict = 0;
  *pzErr = 0;
  *pzCanonical = 0;
  rc = sqlite3_prepare_v2(db, "SELECT name, wr, strict FROM pragma_table_list WHERE schema = 'main'"
                              " AND type = 'table' AND name = ?1 COLLATE NOCASE", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK ){
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zName = (const char*)sqlite3_column_text(pStmt, 0);
      *pzCanonical = zName ? sqlite3_mprintf("%s", zName) : 0;
      pTab->hasRowid = sqlite3_column_int(pStmt, 1)==0;
      isStrict = sqlite3_column_int(pStmt, 2);
      if( *pzCanonical==0 ) rc = SQLITE_NOMEM;
    }else{
      rc = sqlite3_errcode(db)==SQLITE_NOMEM ? SQLITE_NOMEM : SQLITE_DONE;
    }
  }
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_DONE ){
    /* Installed triggers firing on a table of another name: renamed. */
    *pzErr = isInstalled
      ? captureError(zTable, "no such table in the main schema: renamed? Call "
          "sqlitetriggers_change_feed(old name, 'off'), then install the feed "
          "under the new name")
      : sqlite3_mprintf("no table \"%s\" in the main schema", zTable);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( rc!=SQLITE_OK ) return rc;

  rc = sqlite3_prepare_v2(db, "SELECT cid, pk, hidden, type FROM pragma_table_xinfo(?1, 'main')"
                              " ORDER BY cid", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, *pzCanonical, -1, SQLITE_STATIC);
  pTab->nKey = 0;
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    int pk = sqlite3_column_int(pStmt, 1), hidden = sqlite3_column_int(pStmt, 2);
    char *aNewAffinity = sqlite3_realloc64(pTab->aAffinity, (sqlite3_uint64)nColumn+1);
    if( aNewAffinity==0 ){ rc = SQLITE_NOMEM; break; }
    pTab->aAffinity = aNewAffinity;
    pTab->aAffinity[nColumn] = captureAffinity((const char*)sqlite3_column_text(pStmt, 3), isStrict);
    nColumn++;
    nGenerated += hidden==2 || hidden==3;
    nVirtual += hidden==2;
    if( pk>0 ){
      int *aNew = sqlite3_realloc64(pTab->aKey, (sqlite3_uint64)(nKey<pk ? pk : nKey)*sizeof(int));
      if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
      pTab->aKey = aNew;
      if( pk>nKey ) nKey = pk;
      pTab->aKey[pk-1] = sqlite3_column_int(pStmt, 0);
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK ) return rc;
  pTab->nKey = nKey;
  pTab->nColumn = nColumn;
  pTab->isKeysOnly = isKeysOnly;
  pTab->isNet = eMode==CAPTURE_NET;
  /* Mode 'net' reads values with SQL, as SELECT * shows them. */
  if( !pTab->isNet ){
    rc = captureReadMisreads(pTab, *pzCanonical, pzErr);
    if( rc!=SQLITE_OK ) return rc;
  }
  pTab->readsMissing = eMode==CAPTURE_ROWS && pTab->hasRowid && !nGenerated;
  if( pTab->readsMissing ){
    rc = captureReadDefaults(db, *pzCanonical, nColumn, pTab);
    if( rc!=SQLITE_OK ) return rc;
  }
  /* STORED generated columns are in the stored row, where the hook reads
  ** them; VIRTUAL ones are not (and only they shift the stored columns). */
  if( eMode==CAPTURE_ROWS && nVirtual ){
    *pzErr = captureError(*pzCanonical, "the table has VIRTUAL generated columns, whose values "
        "SQLite's preupdate hook does not give: make them STORED, or capture it in 'keys' or 'net' mode");
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  /* An update carries the kind and two sides of a rowid and the values. */
  maxWidth = (SQLITETRIGGERS_MAX_CALLBACK_ARGS - 1)/2 - 1;
  if( (isKeysOnly ? nKey : nColumn) > maxWidth ){
    char *zReason = sqlite3_mprintf("the table has %d %s, and an event carries at "
        "most %d: capture it in 'keys' mode%s", isKeysOnly ? nKey : nColumn,
        isKeysOnly ? "key columns" : "columns", maxWidth,
        pTab->isNet ? ", on a host that gives the preupdate hook" : "");
    *pzErr = zReason ? captureError(*pzCanonical, zReason) : 0;
    sqlite3_free(zReason);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  return SQLITE_OK;
}

int sqlitetriggers_capture_net_is_open(Connection *p, const char *zTable){
  CapturedTable *pTab = p->pCapture ? capturedTableFind(p->pCapture, zTable) : 0;
  return pTab && pTab->isNet && sqlitetriggers_callback_is_enlisted(p)
      && pTab->iNetTransaction==sqlitetriggers_callback_transaction(p);
}

int sqlitetriggers_capture_has_hook(Connection *p){
  CaptureState *pCap = captureState(p);
  return pCap==0 ? -1 : pCap->hasApi;
}

int sqlitetriggers_capture_check(Connection *p, const char *zTable, int eMode,
                                 char **pzCanonical, char **pzErr){
  CapturedTable probe;
  CaptureState *pCap = captureState(p);
  int rc;
  *pzErr = 0;
  *pzCanonical = 0;
  if( pCap==0 ) return SQLITE_NOMEM;
  if( !pCap->hasApi && eMode!=CAPTURE_NET ){
    *pzErr = captureError(zTable, NO_PREUPDATE_HOOK "; or use mode 'net', net changes per "
                                  "transaction, which this host can give");
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  memset(&probe, 0, sizeof(probe));
  rc = captureRead(p->db, zTable, eMode, 0, &probe, pzCanonical, pzErr);
  capturedColumnsFree(&probe);
  return rc;
}

/* ---- sqlitetriggers_change_capture(TABLE, MODE) ------------------------ */

/* How many of zTable's capture triggers exist, of the three BEFORE ones
** and, in mode 'net', of its two AFTER ones too; -1 for an error. */
static int captureTriggerCount(sqlite3 *db, const char *zTable, int isNet){
  sqlite3_stmt *pStmt = 0;
  int n = -1;
  if( sqlite3_prepare_v2(db, "SELECT count(*) FROM temp.sqlite_master WHERE type = 'trigger'"
        " AND name IN ('sqlitetriggers_changes_' || ?1 || '_insert',"
        " 'sqlitetriggers_changes_' || ?1 || '_update', 'sqlitetriggers_changes_' || ?1 || '_delete',"
        " 'sqlitetriggers_changes_' || ?1 || ?2, 'sqlitetriggers_changes_' || ?1 || ?3)",
        -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC)==SQLITE_OK
   && sqlite3_bind_text(pStmt, 2, isNet ? "_inserted" : "", -1, SQLITE_STATIC)==SQLITE_OK
   && sqlite3_bind_text(pStmt, 3, isNet ? "_updated" : "", -1, SQLITE_STATIC)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    n = sqlite3_column_int(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  return n;
}

/* The captured table zTable, checked for this transaction; 0 after setting
** the error.  Called while the transaction is joined.
**
** The check reads the table's shape and the feed's triggers (five PRAGMA
** and schema queries, about 300,000 instructions), which a server writing
** one row per transaction would pay on every write; so it is kept while
** the schema's signature (schema_guard.c: every schema's version, the
** files, the schema's memory) is the one it was made under, and made again
** only when that changed. */
static CapturedTable *captureEnter(sqlite3_context *ctx, Connection *p,
                                   CaptureState *pCap, const char *zTable,
                                   int eMode){
  CapturedTable *pTab = capturedTableFind(pCap, zTable), fresh;
  char *zCanonical = 0, *zErr = 0;
  /* The guard's, when it ran in this call (the join): the same schema. */
  char *zSignature = p->zCallSignature ? p->zCallSignature : sqlitetriggers_schema_signature(p->db);
  int rc = SQLITE_OK, nTrigger = eMode==CAPTURE_NET ? 5 : 3;
  int isUnchanged;
  p->zCallSignature = 0;      /* taken */
  isUnchanged = pTab && zSignature && pTab->zCheckedSignature
                 && strcmp(pTab->zCheckedSignature, zSignature)==0
                 && pTab->isNet==(eMode==CAPTURE_NET) && pTab->isKeysOnly==(eMode==CAPTURE_KEYS);
  memset(&fresh, 0, sizeof(fresh));
  if( !isUnchanged ){
    rc = captureRead(p->db, zTable, eMode, 1, &fresh, &zCanonical, &zErr);
  }
  if( rc==SQLITE_OK && !isUnchanged ){
    /* The triggers pass the name sqlite_schema spelled at install. */
    if( sqlite3_stricmp(zCanonical, zTable)!=0 ){
      zErr = captureError(zTable, "the table's name changed case: install the feed again");
      rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }else if( (nTrigger = captureTriggerCount(p->db, zTable, eMode==CAPTURE_NET))<0 ){
      rc = SQLITE_NOMEM;
    }
  }
  if( rc==SQLITE_OK && pTab==0 ){
    CapturedTable **aNew = sqlite3_realloc64(pCap->aTable,
                               (sqlite3_uint64)(pCap->nTable+1)*sizeof(*aNew));
    if( aNew ) pCap->aTable = aNew;
    pTab = aNew ? sqlite3_malloc(sizeof(*pTab)) : 0;
    if( pTab ){
      memset(pTab, 0, sizeof(*pTab));
      pTab->iCheckedTransaction = -1;
      pTab->iArmedTransaction = -1;
      pTab->iNetTransaction = -1;
      pTab->zTable = zCanonical;
      zCanonical = 0;
      pTab->zEvent = sqlite3_mprintf(CAPTURE_EVENT_PREFIX "%s", pTab->zTable);
    }
    if( pTab==0 || pTab->zEvent==0 ){
      capturedTableFree(pTab);
      pTab = 0;
      rc = SQLITE_NOMEM;
    }else{
      pTab->nEvent = (int)strlen(pTab->zEvent);
      pCap->aTable[pCap->nTable++] = pTab;
    }
  }
  sqlite3_free(zCanonical);
  if( rc==SQLITE_OK && !isUnchanged ){
    capturedColumnsFree(pTab);
    pTab->aKey = fresh.aKey;
    pTab->nKey = fresh.nKey;
    pTab->hasRowid = fresh.hasRowid;
    pTab->isKeysOnly = fresh.isKeysOnly;
    pTab->isNet = fresh.isNet;
    pTab->apDefault = fresh.apDefault;
    pTab->nDefault = fresh.nDefault;
    pTab->aAffinity = fresh.aAffinity;
    pTab->aOldMisread = fresh.aOldMisread;
    pTab->nColumn = fresh.nColumn;
    pTab->readsMissing = fresh.readsMissing;
    memset(&fresh, 0, sizeof(fresh));
  }
  capturedColumnsFree(&fresh);
  if( rc==SQLITE_OK && nTrigger<(eMode==CAPTURE_NET ? 5 : 3) ){
    /* A change the missing trigger's statements make would go unseen. */
    zErr = captureError(pTab->zTable, "some of its triggers are missing (an install "
        "that ran out of memory, or dropped by hand): install the feed again");
    rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK && eMode==CAPTURE_NET ){
    sqlite3_int64 iTransaction = sqlitetriggers_callback_transaction(p);
    rc = isUnchanged ? SQLITE_OK : sqlitetriggers_net_table_state(p->db, pTab->zTable, pTab->nColumn);
    if( rc==SQLITE_ERROR ){
      zErr = captureError(pTab->zTable, "its columns changed since its feed was installed "
          "(ALTER TABLE), or its state table was dropped: install the feed again");
      if( zErr==0 ) rc = SQLITE_NOMEM;
    }
    /* Rows of earlier transactions go (a statement that rolls back may
    ** bring them back: change_net.c reads this transaction's alone). */
    if( rc==SQLITE_OK && pTab->iNetTransaction!=iTransaction ){
      rc = sqlitetriggers_net_forget_earlier(p->db, pTab->zTable, captureNetTx(pCap, iTransaction));
      if( rc==SQLITE_OK ) pTab->iNetTransaction = iTransaction;
    }
  }else if( rc==SQLITE_OK && !captureHookInstall(p, pCap) ){
    zErr = captureError(pTab->zTable, HOOK_SET);
    rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( rc==SQLITE_NOMEM ) sqlite3_result_error_nomem(ctx);
  else if( rc!=SQLITE_OK ) sqlite3_result_error(ctx, zErr, -1);
  sqlite3_free(zErr);
  if( pTab && !isUnchanged ){
    /* Kept only for a check that passed and may be remembered
    ** (schema_guard.c: a rollback forgets it); NULL when the signature
    ** could not be read: the next transaction checks again. */
    int keep = rc==SQLITE_OK && sqlitetriggers_schema_check_rememberable(p);
    sqlite3_free(pTab->zCheckedSignature);
    pTab->zCheckedSignature = keep ? zSignature : 0;
    if( keep ) zSignature = 0;
  }
  sqlite3_free(zSignature);
  if( rc!=SQLITE_OK ) return 0;
  pTab->iCheckedTransaction = sqlitetriggers_callback_transaction(p);
  return pTab;
}

static void changeCaptureFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  CaptureState *pCap;
  CapturedTable *pTab;
  const char *zTable = (const char*)sqlite3_value_text(argv[0]);
  const char *zMode = (const char*)sqlite3_value_text(argv[1]);
  const char *zKind = (const char*)sqlite3_value_text(argv[2]);
  int iKind = zKind==0 ? -1 : strcmp(zKind, "insert")==0 ? 0 : strcmp(zKind, "update")==0 ? 1
            : strcmp(zKind, "delete")==0 ? 2 : -1;
  (void)argc;
  /* Its triggers pass names without NUL; anyone else gets the usage. */
  if( zTable && (int)strlen(zTable)!=sqlite3_value_bytes(argv[0]) ) zTable = 0;
  int eMode = zMode==0 ? -1 : strcmp(zMode, "rows")==0 ? CAPTURE_ROWS
            : strcmp(zMode, "keys")==0 ? CAPTURE_KEYS : strcmp(zMode, "net")==0 ? CAPTURE_NET : -1;
  if( zTable==0 || eMode<0 || iKind<0 ){
    sqlite3_result_error(ctx, "sqlitetriggers_change_capture: called by a change feed's "
                              "triggers with its table, 'rows', 'keys' or 'net', and its kind", -1);
    return;
  }
  if( (pCap = captureState(p))==0 ){ sqlite3_result_error_nomem(ctx); return; }
  /* The common case, once checked in this transaction: a lookup. */
  pTab = capturedTableFind(pCap, zTable);
  if( pTab && sqlitetriggers_callback_is_enlisted(p)
   && pTab->iCheckedTransaction==sqlitetriggers_callback_transaction(p)
   && pTab->isNet==(eMode==CAPTURE_NET) ){
    if( pTab->isNet ){
      sqlite3_result_int64(ctx, captureNetTx(pCap, pTab->iCheckedTransaction));
    }else{
      captureArm(p, pTab, iKind);
    }
    return;
  }
  /* The schema guard first (the join runs it): a hostile file's call is
  ** refused as such, even where there is no hook. */
  sqlite3_free(p->zCallSignature);
  p->zCallSignature = 0;
  if( !sqlitetriggers_callback_join(ctx, p, "sqlitetriggers_change_capture") ){
    sqlite3_free(p->zCallSignature);
    p->zCallSignature = 0;
    return;
  }
  if( !pCap->hasApi && eMode!=CAPTURE_NET ){
    char *zErr = captureError(zTable, NO_PREUPDATE_HOOK);
    sqlite3_result_error(ctx, zErr ? zErr : NO_PREUPDATE_HOOK, -1);
    sqlite3_free(zErr);
    return;
  }
  pTab = captureEnter(ctx, p, pCap, zTable, eMode);
  if( pTab && pTab->isNet ) sqlite3_result_int64(ctx, captureNetTx(pCap, pTab->iCheckedTransaction));
  else if( pTab ) captureArm(p, pTab, iKind);
}

int sqlitetriggers_register_capture_functions(sqlite3 *db, Connection *p){
  return sqlitetriggers_connection_create_function(db, "sqlitetriggers_change_capture", 3,
                                                   SQLITE_DIRECTONLY, p, changeCaptureFunc);
}
