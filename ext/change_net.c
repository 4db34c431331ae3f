/*
** change_net.c: a table's net changes per transaction, read by triggers
** alone: change capture's mode 'net', for hosts that do not give
** extensions SQLite's preupdate hook (a sqlite3 shell or a Python module
** that embeds SQLite with hidden symbols: apsw, sqlean.py, the shells of
** Debian 14 and SQLite's prebuilt tools).  change_capture.c's modes 'rows'
** and 'keys' need the hook; this one works on every host.
**
** WHAT IT GIVES
**   At commit, one event per row whose stored values the transaction
**   changed, in change_capture.c's EVENT FORMAT (the same name, kinds and
**   layout, every column SELECT * shows, generated ones included):
**     'insert'  the row did not exist before the transaction and does now;
**     'delete'  it existed before and does not now;
**     'update'  it exists before and after, and some value or type differs
**               (old side: the values before the transaction; new: after).
**   A row is identified by its rowid (rowid tables) or its primary key
**   (WITHOUT ROWID): a change of key is a delete and an insert.  A row
**   changed and changed back, or inserted and deleted, gives no event.
**   Events join the connection's swift_callback() events when the
**   transaction commits, after the transaction's own events, a table's rows
**   in the order each first changed; a rolled-back transaction, savepoint
**   or statement leaves nothing.
**
** HOW
**   "Before" is the row as it was when the transaction first touched it;
**   "after" is the row as the table holds it at commit.  So only two things
**   must be seen as they happen: which rows are touched, and their values
**   before the first touch.  The TEMP triggers of the capture write both
**   into temp."sqlitetriggers_net_T":
**     (tx, existed, rid, v1 ... vN, UNIQUE(the row's identity))
**   tx: the transaction (sqlitetriggers_change_capture() returns it): rows
**   of earlier transactions are ignored, and deleted at a transaction's
**   first touch; existed: 1 with the row's values, 0 for a row that was
**   not there; rid: the rowid, or NULL.  An upsert keeps the first touch of
**   a transaction.
**     BEFORE DELETE, BEFORE UPDATE: OLD (the row before its first change).
**     BEFORE INSERT, BEFORE UPDATE: every row the new values conflict with
**       on the rowid or any UNIQUE index or key: REPLACE deletes such a row
**       without firing its DELETE triggers while PRAGMA recursive_triggers
**       is OFF.  A conflict that is not replaced (the write fails or is
**       ignored) costs a row read again at commit, unchanged: no event.
**       Then NEW's identity as absent, when no row holds it (netAppendAbsent):
**       a row inserted here is new even when another trigger writes it
**       before ours run.
**     AFTER INSERT, AFTER UPDATE: the same, a fallback for a rowid SQLite
**       picked at random.
**   Foreign-key actions and upserts fire these triggers as any write does.
**   At commit (xSync of callback_tables.c's virtual table, where SQLite
**   lets a virtual table read the database, as FTS5 writes there) the
**   transaction's rows are joined to the table, and the differences become
**   events, added to the transaction's when it commits.  Nothing in a
**   trigger depends on the order SQLite runs a table's triggers in: every
**   "before" is taken before the change it precedes, and every "after" is
**   read when nothing can change any more.
**
** WHAT IT CANNOT SEE, AND WHAT FAILS LOUDLY
**   - Incremental BLOB writes (sqlite3_blob_write) fire no trigger: such a
**     change is in the event only when the transaction touched the row by
**     SQL too.
**   - A UNIQUE index on an expression: what REPLACE deletes through it
**     cannot be probed; installing refuses, naming the index.
**   - ALTER TABLE: RENAME COLUMN rewrites the triggers; DROP COLUMN of the
**     table fails naming a trigger of the capture (turn the feed off, drop,
**     install again); after ADD COLUMN the next write fails, and a commit
**     whose transaction added a column after writing the table fails: the
**     events would lack the column; install the feed again.
**   - A transaction that drops or renames the table after the feed captured
**     changes of it cannot commit (its rows can no longer be read): turn
**     the feed off first.
**   The rest is change_capture.c's: the checks once per transaction, the
**   rename, the schema guard.
*/
#include "sqlitetriggers_internal.h"

#include <string.h>

/* ---- the table's shape ------------------------------------------------- */

/* The columns of an index through which a write can conflict (a UNIQUE
** index, or a WITHOUT ROWID table's key): column numbers and collations. */
typedef struct NetIndex NetIndex;
struct NetIndex {
  int nColumn;
  int *aColumn;
  char **azCollation;
};

typedef struct NetShape NetShape;
struct NetShape {
  int hasRowid;
  const char *zRowid;         /* a name of the rowid no column hides */
  int hasSequence;            /* AUTOINCREMENT: a row in sqlite_sequence */
  int nColumn;
  char **azColumn;            /* every column SELECT * shows, in order */
  NetIndex key;               /* WITHOUT ROWID: the primary key */
  NetIndex *aUnique;          /* the UNIQUE indexes, the key's among them */
  int nUnique;
};

static void netIndexClear(NetIndex *pIndex){
  int i;
  for(i=0; i<pIndex->nColumn; i++) sqlite3_free(pIndex->azCollation[i]);
  sqlite3_free(pIndex->aColumn);
  sqlite3_free(pIndex->azCollation);
  memset(pIndex, 0, sizeof(*pIndex));
}

static void netShapeClear(NetShape *pShape){
  int i;
  for(i=0; i<pShape->nColumn; i++) sqlite3_free(pShape->azColumn[i]);
  sqlite3_free(pShape->azColumn);
  netIndexClear(&pShape->key);
  for(i=0; i<pShape->nUnique; i++) netIndexClear(&pShape->aUnique[i]);
  sqlite3_free(pShape->aUnique);
  memset(pShape, 0, sizeof(*pShape));
}

/* Finalizes *ppStmt (and forgets it); rc, or the statement's error. */
static int netFinalize(sqlite3_stmt **ppStmt, int rc){
  int rcFinalize = sqlite3_finalize(*ppStmt);
  *ppStmt = 0;
  return rc==SQLITE_OK ? rcFinalize : rc;
}

/* A copy of column iCol of pStmt's row, or 0 when out of memory (*pRc). */
static char *netColumnText(sqlite3_stmt *pStmt, int iCol, int *pRc){
  const char *z = (const char*)sqlite3_column_text(pStmt, iCol);
  char *zCopy = sqlite3_mprintf("%s", z ? z : "");
  if( zCopy==0 ) *pRc = SQLITE_NOMEM;
  return zCopy;
}

/* The key columns of index zIndex into *pIndex; SQLITE_OK, SQLITE_NOMEM, or
** SQLITE_ERROR with *pzErr for an expression. */
static int netIndexRead(sqlite3 *db, const char *zTable, const char *zIndex,
                        NetIndex *pIndex, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  int rc = sqlite3_prepare_v2(db, "SELECT cid, coll FROM pragma_index_xinfo(?1, 'main')"
                                  " WHERE key ORDER BY seqno", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zIndex, -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    int n = pIndex->nColumn + 1;
    int *aColumn = sqlite3_realloc64(pIndex->aColumn, n*sizeof(int));
    char **azCollation;
    if( aColumn ) pIndex->aColumn = aColumn;
    azCollation = aColumn ? sqlite3_realloc64(pIndex->azCollation, n*sizeof(char*)) : 0;
    if( azCollation==0 ){ rc = SQLITE_NOMEM; break; }
    pIndex->azCollation = azCollation;
    pIndex->aColumn[n-1] = sqlite3_column_int(pStmt, 0);
    pIndex->azCollation[n-1] = netColumnText(pStmt, 1, &rc);
    pIndex->nColumn = n;
    if( rc!=SQLITE_OK ) break;
    if( pIndex->aColumn[n-1]==-2 ){
      *pzErr = sqlite3_mprintf("change capture of \"%s\": its UNIQUE index \"%s\" is on an "
          "expression, and what REPLACE deletes through it cannot be seen without the "
          "preupdate hook: index columns instead, or use a host that gives the hook",
          zTable, zIndex);
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }
  rc = netFinalize(&pStmt, rc);
  return rc;
}

/* main.zTable's shape (zTable as sqlite_schema spells it). */
static int netShapeRead(sqlite3 *db, const char *zTable, NetShape *pShape, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  int rc;
  memset(pShape, 0, sizeof(*pShape));
  *pzErr = 0;
  rc = sqlite3_prepare_v2(db, "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1",
                          -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK ){
    if( sqlite3_step(pStmt)==SQLITE_ROW ){
      pShape->hasRowid = sqlite3_column_int(pStmt, 0)==0;
    }else if( sqlite3_errcode(db)!=SQLITE_NOMEM ){
      /* At commit: dropped or renamed after the feed captured changes. */
      *pzErr = sqlite3_mprintf("change capture of \"%s\": the table was dropped or renamed in "
          "this transaction after its feed (mode 'net') captured changes of it: turn the feed "
          "off first (sqlitetriggers_change_feed('%q', 'off'))", zTable, zTable);
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }
  rc = netFinalize(&pStmt, rc);

  /* AUTOINCREMENT as SQLite's own parser marks it: the table's CREATE
  ** statement has the keyword (a name or string holding it only makes the
  ** prediction of netAppendAbsent() read sqlite_sequence for nothing). */
  /* The keyword is looked for in C: LIKE would follow PRAGMA
  ** case_sensitive_like, and miss "autoincrement". */
  if( rc==SQLITE_OK ){
    rc = sqlite3_prepare_v2(db, "SELECT sql FROM \"main\".sqlite_schema WHERE type = 'table' AND name = ?1"
                                " AND EXISTS (SELECT 1 FROM \"main\".sqlite_schema"
                                " WHERE name = 'sqlite_sequence')", -1, &pStmt, 0);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zSql = (const char*)sqlite3_column_text(pStmt, 0);
    for(; zSql && *zSql && !pShape->hasSequence; zSql++){
      pShape->hasSequence = sqlite3_strnicmp(zSql, "AUTOINCREMENT", 13)==0;
    }
  }
  rc = netFinalize(&pStmt, rc);

  if( rc==SQLITE_OK ){
    rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1, 'main') ORDER BY cid",
                            -1, &pStmt, 0);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    char **azColumn = sqlite3_realloc64(pShape->azColumn, (pShape->nColumn+1)*sizeof(char*));
    if( azColumn==0 ){ rc = SQLITE_NOMEM; break; }
    pShape->azColumn = azColumn;
    azColumn[pShape->nColumn] = netColumnText(pStmt, 0, &rc);
    if( rc==SQLITE_OK ) pShape->nColumn++;
  }
  rc = netFinalize(&pStmt, rc);
  if( rc==SQLITE_OK && pShape->hasRowid ){
    pShape->zRowid = sqlitetriggers_rowid_name((const char*const*)pShape->azColumn, pShape->nColumn);
    if( pShape->zRowid==0 ){
      *pzErr = sqlite3_mprintf("change capture of \"%s\": its columns \"rowid\", \"_rowid_\" "
          "and \"oid\" hide the rowid, which mode 'net' identifies its rows by: rename one of "
          "them, or use mode 'rows' on a host that gives the preupdate hook", zTable);
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }

  /* Partial UNIQUE indexes are probed on their columns alone: a probe that
  ** finds a row the index does not hold reads it again, unchanged. */
  if( rc==SQLITE_OK ){
    rc = sqlite3_prepare_v2(db, "SELECT name, origin FROM pragma_index_list(?1, 'main')"
                                " WHERE \"unique\" ORDER BY seq", -1, &pStmt, 0);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zIndex = (const char*)sqlite3_column_text(pStmt, 0);
    const char *zOrigin = (const char*)sqlite3_column_text(pStmt, 1);
    NetIndex *aUnique = sqlite3_realloc64(pShape->aUnique, (pShape->nUnique+1)*sizeof(NetIndex));
    if( aUnique==0 || zIndex==0 || zOrigin==0 ){ rc = SQLITE_NOMEM; break; }
    pShape->aUnique = aUnique;
    memset(&aUnique[pShape->nUnique], 0, sizeof(NetIndex));
    rc = netIndexRead(db, zTable, zIndex, &aUnique[pShape->nUnique], pzErr);
    pShape->nUnique++;
    if( rc==SQLITE_OK && !pShape->hasRowid && strcmp(zOrigin, "pk")==0 ){
      rc = netIndexRead(db, zTable, zIndex, &pShape->key, pzErr);
    }
  }
  rc = netFinalize(&pStmt, rc);
  if( rc==SQLITE_OK && (pShape->nColumn==0 || (!pShape->hasRowid && pShape->key.nColumn==0)) ){
    rc = SQLITE_NOMEM;    /* the caller checked the table: a read that failed */
  }
  if( rc!=SQLITE_OK ) netShapeClear(pShape);
  return rc;
}

/* ---- the SQL ----------------------------------------------------------- */

#define NET_STATE "sqlitetriggers_net_"

/* ", v1, v2" of the row's identity (or ", rid"), as the state table and
** its upsert name it. */
static void netAppendIdentity(sqlite3_str *pOut, const NetShape *pShape, int withCollation){
  int i;
  if( pShape->hasRowid ){
    sqlite3_str_appendall(pOut, "\"rid\"");
    return;
  }
  for(i=0; i<pShape->key.nColumn; i++){
    sqlite3_str_appendf(pOut, "%s\"v%d\"", i ? ", " : "", pShape->key.aColumn[i] + 1);
    if( withCollation ) sqlite3_str_appendf(pOut, " COLLATE \"%w\"", pShape->key.azCollation[i]);
  }
}

/* The upsert that keeps a transaction's first touch of a row. */
static void netAppendFirstTouch(sqlite3_str *pOut, const NetShape *pShape){
  int i;
  sqlite3_str_appendall(pOut, " ON CONFLICT DO UPDATE SET \"tx\" = excluded.\"tx\", "
                              "\"existed\" = excluded.\"existed\", \"rid\" = excluded.\"rid\"");
  for(i=0; i<pShape->nColumn; i++) sqlite3_str_appendf(pOut, ", \"v%d\" = excluded.\"v%d\"", i+1, i+1);
  sqlite3_str_appendall(pOut, " WHERE \"tx\" IS NOT excluded.\"tx\";");
}

/* "INSERT INTO state SELECT capture, 1, R.rowid, R.c1 ...": the values of
** row R (OLD, or a row of the table read as it is), which the caller
** finishes with FROM and WHERE, then the upsert. */
static void netAppendRow(sqlite3_str *pOut, const NetShape *pShape, const char *zTable,
                         const char *zKind, const char *zRow){
  int i;
  sqlite3_str_appendf(pOut, " INSERT INTO \"" NET_STATE "%w\" SELECT "
      "sqlitetriggers_change_capture('%q', 'net', '%s'), 1, ", zTable, zTable, zKind);
  if( pShape->hasRowid ) sqlite3_str_appendf(pOut, "%s.\"%w\"", zRow, pShape->zRowid);
  else sqlite3_str_appendall(pOut, "NULL");
  for(i=0; i<pShape->nColumn; i++) sqlite3_str_appendf(pOut, ", %s.\"%w\"", zRow, pShape->azColumn[i]);
}

/* The probes of the rows NEW conflicts with (HOW, at the top). */
static void netAppendProbes(sqlite3_str *pOut, const NetShape *pShape, const char *zTable,
                            const char *zKind){
  int i, k;
  for(i=-1; i<pShape->nUnique; i++){
    const NetIndex *pIndex = i<0 ? 0 : &pShape->aUnique[i];
    if( i<0 && !pShape->hasRowid ) continue;
    netAppendRow(pOut, pShape, zTable, zKind, "t");
    sqlite3_str_appendf(pOut, " FROM \"main\".\"%w\" AS t WHERE ", zTable);
    if( pIndex==0 ){
      sqlite3_str_appendf(pOut, "t.\"%w\" = new.\"%w\"", pShape->zRowid, pShape->zRowid);
    }
    for(k=0; pIndex && k<pIndex->nColumn; k++){
      const char *zColumn = pIndex->aColumn[k]<0 ? pShape->zRowid : pShape->azColumn[pIndex->aColumn[k]];
      sqlite3_str_appendf(pOut, "%st.\"%w\" = new.\"%w\" COLLATE \"%w\"", k ? " AND " : "",
                          zColumn, zColumn, pIndex->azCollation[k]);
    }
    netAppendFirstTouch(pOut, pShape);
  }
}

/* OLD, before its first change.  (WHERE: an upsert's SELECT needs one.) */
static void netAppendOld(sqlite3_str *pOut, const NetShape *pShape, const char *zTable,
                         const char *zKind){
  netAppendRow(pOut, pShape, zTable, zKind, "old");
  sqlite3_str_appendall(pOut, " WHERE true");
  netAppendFirstTouch(pOut, pShape);
}

/* NEW's identity, absent before unless touched already. */
static void netAppendNew(sqlite3_str *pOut, const NetShape *pShape, const char *zTable,
                         const char *zKind){
  int k;
  sqlite3_str_appendf(pOut, " INSERT INTO \"" NET_STATE "%w\"(\"tx\", \"existed\", ", zTable);
  netAppendIdentity(pOut, pShape, 0);
  sqlite3_str_appendf(pOut, ") VALUES (sqlitetriggers_change_capture('%q', 'net', '%s'), 0",
                      zTable, zKind);
  if( pShape->hasRowid ){
    sqlite3_str_appendf(pOut, ", new.\"%w\"", pShape->zRowid);
  }else{
    for(k=0; k<pShape->key.nColumn; k++){
      sqlite3_str_appendf(pOut, ", new.\"%w\"", pShape->azColumn[pShape->key.aColumn[k]]);
    }
  }
  sqlite3_str_appendall(pOut, ")");
  netAppendFirstTouch(pOut, pShape);
}

/*
** NEW's identity as absent before, when no row holds it now: written before
** the change, so that a row inserted here is known as new even when another
** trigger writes it before our AFTER trigger runs.  A key that no row holds
** and that this transaction has not touched was not there when it began;
** a key touched already keeps its first touch.  An insert given no rowid
** (NEW.rowid is -1 then) gets the one SQLite will choose, the largest plus
** one (or past sqlite_sequence's, for AUTOINCREMENT); when SQLite must pick
** at random instead, the AFTER trigger is the fallback.
*/
static void netAppendAbsent(sqlite3_str *pOut, const NetShape *pShape, const char *zTable,
                            const char *zKind, int isInsert, int hasSequence){
  int k;
  sqlite3_str_appendf(pOut, " INSERT INTO \"" NET_STATE "%w\"(\"tx\", \"existed\", ", zTable);
  netAppendIdentity(pOut, pShape, 0);
  sqlite3_str_appendf(pOut, ") SELECT sqlitetriggers_change_capture('%q', 'net', '%s'), 0, ", zTable, zKind);
  if( pShape->hasRowid ){
    sqlite3_str_appendf(pOut, "k.\"rid\" FROM (SELECT new.\"%w\" AS \"rid\"", pShape->zRowid);
    if( isInsert ){
      sqlite3_str_appendf(pOut, " UNION SELECT coalesce(max(\"%w\"), 0) + 1 FROM \"main\".\"%w\"",
                          pShape->zRowid, zTable);
      if( hasSequence ){
        sqlite3_str_appendf(pOut, " UNION SELECT seq + 1 FROM \"main\".\"sqlite_sequence\" WHERE name = '%q'",
                            zTable);
      }
    }
    sqlite3_str_appendf(pOut, ") AS k WHERE NOT EXISTS (SELECT 1 FROM \"main\".\"%w\" AS t"
                              " WHERE t.\"%w\" = k.\"rid\")", zTable, pShape->zRowid);
  }else{
    for(k=0; k<pShape->key.nColumn; k++){
      sqlite3_str_appendf(pOut, "%snew.\"%w\"", k ? ", " : "", pShape->azColumn[pShape->key.aColumn[k]]);
    }
    sqlite3_str_appendf(pOut, " WHERE NOT EXISTS (SELECT 1 FROM \"main\".\"%w\" AS t WHERE ", zTable);
    for(k=0; k<pShape->key.nColumn; k++){
      const char *zColumn = pShape->azColumn[pShape->key.aColumn[k]];
      sqlite3_str_appendf(pOut, "%st.\"%w\" = new.\"%w\" COLLATE \"%w\"", k ? " AND " : "",
                          zColumn, zColumn, pShape->key.azCollation[k]);
    }
    sqlite3_str_appendall(pOut, ")");
  }
  netAppendFirstTouch(pOut, pShape);
}

int sqlitetriggers_net_install_sql(sqlite3 *db, const char *zTable, sqlite3_str *pOut,
                                   char **pzErr){
  static const char *const aKind[3] = { "insert", "update", "delete" };
  NetShape shape;
  int i, rc = netShapeRead(db, zTable, &shape, pzErr);
  if( rc!=SQLITE_OK ) return rc;
  /* A state table of an earlier install may have other columns. */
  sqlite3_str_appendf(pOut, "DROP TABLE IF EXISTS temp.\"" NET_STATE "%w\";\n"
                      "CREATE TEMP TABLE \"" NET_STATE "%w\"(\"tx\", \"existed\", \"rid\"", zTable, zTable);
  for(i=0; i<shape.nColumn; i++) sqlite3_str_appendf(pOut, ", \"v%d\"", i+1);
  sqlite3_str_appendall(pOut, ", UNIQUE(");
  netAppendIdentity(pOut, &shape, 1);
  sqlite3_str_appendall(pOut, "));\n");
  for(i=0; i<3; i++){
    /* The BEFORE trigger joins the transaction first, even when the
    ** statements below read no row. */
    sqlite3_str_appendf(pOut,
        "CREATE TEMP TRIGGER \"sqlitetriggers_changes_%w_%s\" BEFORE %s ON \"main\".\"%w\""
        " FOR EACH ROW BEGIN SELECT sqlitetriggers_change_capture('%q', 'net', '%s');",
        zTable, aKind[i], i==0 ? "INSERT" : i==1 ? "UPDATE" : "DELETE", zTable, zTable, aKind[i]);
    if( i>0 ) netAppendOld(pOut, &shape, zTable, aKind[i]);
    if( i<2 ){
      netAppendProbes(pOut, &shape, zTable, aKind[i]);
      netAppendAbsent(pOut, &shape, zTable, aKind[i], i==0, shape.hasSequence);
    }
    sqlite3_str_appendall(pOut, " END;\n");
  }
  for(i=0; i<2; i++){
    sqlite3_str_appendf(pOut,
        "CREATE TEMP TRIGGER \"sqlitetriggers_changes_%w_%s\" AFTER %s ON \"main\".\"%w\""
        " FOR EACH ROW BEGIN", zTable, i==0 ? "inserted" : "updated", i==0 ? "INSERT" : "UPDATE", zTable);
    netAppendNew(pOut, &shape, zTable, aKind[i]);
    sqlite3_str_appendall(pOut, " END;\n");
  }
  netShapeClear(&shape);
  return SQLITE_OK;
}

char *sqlitetriggers_net_drop_sql(const char *zTable){
  return sqlite3_mprintf(
      "DROP TRIGGER IF EXISTS temp.\"sqlitetriggers_changes_%w_inserted\";"
      "DROP TRIGGER IF EXISTS temp.\"sqlitetriggers_changes_%w_updated\";"
      "DROP TABLE IF EXISTS temp.\"" NET_STATE "%w\";", zTable, zTable, zTable);
}

/* ---- at commit --------------------------------------------------------- */

/* 1 when a and b hold the same value of the same type. */
static int netSameValue(const ArgView *a, const ArgView *b){
  if( a->eType!=b->eType ) return 0;
  switch( a->eType ){
    case SQLITE_INTEGER: return a->u.i==b->u.i;
    case SQLITE_FLOAT:   return memcmp(&a->u.r, &b->u.r, sizeof(double))==0;
    case SQLITE_NULL:    return 1;
    default:
      return a->nByte==b->nByte && (a->nByte==0 || memcmp(a->z, b->z, a->nByte)==0);
  }
}

/* aView[i...] gets a side read from pStmt's columns iFirst (the rowid) on. */
static int netSide(sqlite3_stmt *pStmt, int iFirst, int nColumn, ArgView *aView, int i){
  int k;
  for(k=0; k<=nColumn; k++, i++){
    if( !sqlitetriggers_arg_view_read(&aView[i], sqlite3_column_value(pStmt, iFirst + k)) ) return -1;
  }
  return i;
}

int sqlitetriggers_net_table_state(sqlite3 *db, const char *zTable, int nColumn){
  sqlite3_stmt *pStmt = 0;
  int n = -1;
  char *zSql = sqlite3_mprintf("SELECT count(*) FROM pragma_table_info('" NET_STATE "%q', 'temp')", zTable);
  if( zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    n = sqlite3_column_int(pStmt, 0);
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  if( n<0 ) return SQLITE_NOMEM;
  return n==nColumn + 3 ? SQLITE_OK : SQLITE_ERROR;
}

int sqlitetriggers_net_forget_earlier(sqlite3 *db, const char *zTable, sqlite3_int64 iTx){
  char *zSql = sqlite3_mprintf("DELETE FROM temp.\"" NET_STATE "%w\" WHERE \"tx\" IS NOT %lld",
                               zTable, iTx);
  int rc = zSql ? sqlite3_exec(db, zSql, 0, 0, 0) : SQLITE_NOMEM;
  sqlite3_free(zSql);
  return rc;
}

int sqlitetriggers_net_read(Connection *p, const char *zTable, const char *zEvent,
                            int nEvent, sqlite3_int64 iTx, char **pzErr){
  sqlite3 *db = p->db;
  NetShape shape;
  sqlite3_str *pSql;
  sqlite3_stmt *pStmt = 0;
  char *zSql;
  int rc = netShapeRead(db, zTable, &shape, pzErr), k, nColumn;
  if( rc!=SQLITE_OK ) return rc;
  nColumn = shape.nColumn;
  pSql = sqlite3_str_new(db);
  if( shape.hasRowid ){
    sqlite3_str_appendf(pSql, "SELECT n.*, t.\"%w\" IS NOT NULL, t.\"%w\", t.* FROM temp.\"" NET_STATE
        "%w\" AS n LEFT JOIN \"main\".\"%w\" AS t ON t.\"%w\" = n.\"rid\"",
        shape.zRowid, shape.zRowid, zTable, zTable, shape.zRowid);
  }else{
    /* The first key column tells a present row (a key is NOT NULL). */
    sqlite3_str_appendf(pSql, "SELECT n.*, t.\"%w\" IS NOT NULL, NULL, t.* FROM temp.\"" NET_STATE
        "%w\" AS n LEFT JOIN \"main\".\"%w\" AS t ON ",
        shape.azColumn[shape.key.aColumn[0]], zTable, zTable);
    for(k=0; k<shape.key.nColumn; k++){
      int iCol = shape.key.aColumn[k];
      sqlite3_str_appendf(pSql, "%st.\"%w\" = n.\"v%d\" COLLATE \"%w\"", k ? " AND " : "",
                          shape.azColumn[iCol], iCol + 1, shape.key.azCollation[k]);
    }
  }
  sqlite3_str_appendf(pSql, " WHERE n.\"tx\" = %lld ORDER BY n.rowid", iTx);
  netShapeClear(&shape);
  zSql = sqlite3_str_finish(pSql);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  sqlite3_free(zSql);
  /* n.* is tx, existed, rid and the columns of the install; t.* those of now. */
  if( rc==SQLITE_OK && sqlite3_column_count(pStmt)!=2*nColumn + 5 ){
    sqlite3_finalize(pStmt);
    *pzErr = sqlite3_mprintf("change capture of \"%s\": its columns changed since its feed "
        "was installed (ALTER TABLE): install the feed again", zTable);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    ArgView aView[SQLITETRIGGERS_MAX_CALLBACK_ARGS];
    ArgView *aBefore = &aView[1], *aAfter;
    int existed = sqlite3_column_int(pStmt, 1), present = sqlite3_column_int(pStmt, nColumn + 3);
    int n = 1, iKind;
    if( !existed && !present ) continue;
    iKind = !existed ? 0 : present ? 1 : 2;
    aView[0].eType = SQLITE_TEXT;
    aView[0].z = (const unsigned char*)(iKind==0 ? "insert" : iKind==1 ? "update" : "delete");
    aView[0].nByte = (int)strlen((const char*)aView[0].z);
    aView[0].u.i = 0;
    if( existed ) n = netSide(pStmt, 2, nColumn, aView, n);
    aAfter = &aView[n];
    if( present && n>0 ) n = netSide(pStmt, nColumn + 4, nColumn, aView, n);
    if( n<0 ){ rc = SQLITE_NOMEM; break; }
    if( iKind==1 ){
      int isSame = 1;
      for(k=0; k<=nColumn && isSame; k++) isSame = netSameValue(&aBefore[k], &aAfter[k]);
      if( isSame ) continue;
    }
    rc = sqlitetriggers_callback_record_at_commit(p, zEvent, nEvent, n, aView);
  }
  if( rc==SQLITE_OK ){
    rc = sqlite3_finalize(pStmt);
    if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("change capture of \"%s\": %s", zTable, sqlite3_errmsg(db));
    }
  }else{
    sqlite3_finalize(pStmt);
    if( rc!=SQLITE_NOMEM ) *pzErr = sqlite3_mprintf("change capture of \"%s\": %s", zTable, sqlite3_errmsg(db));
  }
  return rc;
}
