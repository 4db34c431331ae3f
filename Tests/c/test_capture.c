/*
** Change capture against independent oracles.
**
** Twin databases run the same random writes: one with the extension and a
** change feed on every table, the other with SQLite's session extension
** (compiled into the system SQLite) recording the same tables.  A
** connection has one preupdate hook, so the two cannot share a connection.
** Every path that rewrites a row is in the mix: other TEMP triggers
** writing the same row, other rows of the same table (from a BEFORE
** trigger too) and other tables, foreign-key actions (CASCADE, SET
** NULL, ON UPDATE CASCADE, a self-reference), INSERT and UPDATE OR REPLACE
** over the key and over UNIQUE columns, upserts, RAISE(ABORT), failing
** statements, savepoints, ROLLBACK TO and ROLLBACK, integral values in a
** REAL column (stored as integers), in both recursive_triggers modes.
** Values are compared with their types.  After every committed transaction:
**   - the exact feed: each change's old values are the replica's row, and
**     the replica (kept from the changes alone) equals the table;
**   - the net changes folded from the feed equal the session's changeset
**     (the session's conventions: an UPDATE lists its changed columns, an
**     UPDATE that changes nothing is left out, a key that changes is a
**     DELETE and an INSERT);
**   - the twins hold the same rows.
** SQLITETRIGGERS_ORACLE_TRANSACTIONS sets how many transactions run per
** recursive_triggers mode (make test: 1500).
*/
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_TABLE 3
#define MAX_COLUMN 6
#define VALUE_TEXT 48
#define MAX_NET 512

static const char *const azTable[N_TABLE] = { "lists", "items", "tags" };
static const int anColumn[N_TABLE] = { 4, 6, 3 };

static const char zSchema[] =
  "CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT, position INT, touched INT DEFAULT 0);"
  "CREATE TABLE items(id INTEGER PRIMARY KEY,"
  "  listId INT REFERENCES lists(id) ON DELETE CASCADE ON UPDATE CASCADE,"
  "  name TEXT UNIQUE, parentId INT REFERENCES items(id) ON DELETE SET NULL ON UPDATE CASCADE,"
  "  flag INT DEFAULT 0, score REAL);"
  "CREATE TABLE tags(id INTEGER PRIMARY KEY, itemId INT REFERENCES items(id) ON DELETE SET NULL,"
  "  label TEXT UNIQUE COLLATE NOCASE);"
  /* New lists go last; an item's insert touches its list; an update of
  ** an item bumps its flag (terminates with recursive triggers too); a
  ** bad label is refused. */
  "CREATE TEMP TRIGGER listsLast AFTER INSERT ON main.lists BEGIN"
  "  UPDATE lists SET position = (SELECT count(*) FROM lists) - 1 WHERE id = new.id; END;"
  "CREATE TEMP TRIGGER itemsTouchList AFTER INSERT ON main.items BEGIN"
  "  UPDATE lists SET touched = touched + 1 WHERE id = new.listId; END;"
  "CREATE TEMP TRIGGER itemsBump AFTER UPDATE ON main.items WHEN new.flag IS old.flag BEGIN"
  "  UPDATE items SET flag = flag + 1 WHERE id = new.id; END;"
  "CREATE TEMP TRIGGER tagsRefuse BEFORE INSERT ON main.tags WHEN new.label = 'bad' BEGIN"
  "  SELECT RAISE(ABORT, 'bad label'); END;"
  /* A BEFORE trigger writing other rows of its own table: their changes
  ** come between the row's announcement and its change. */
  "CREATE TEMP TRIGGER tagsUnshare BEFORE UPDATE ON main.tags WHEN new.label = 'HOME' BEGIN"
  "  UPDATE tags SET itemId = NULL WHERE id <> new.id AND itemId IS new.itemId; END;";

/* ---- values as text ---------------------------------------------------- */

static void formatValue(char *zOut, int eType, sqlite3_int64 i, double r,
                        const unsigned char *z, int n){
  switch( eType ){
    case SQLITE_INTEGER: snprintf(zOut, VALUE_TEXT, "i%lld", i); break;
    case SQLITE_FLOAT:   snprintf(zOut, VALUE_TEXT, "r%.17g", r); break;
    case SQLITE_TEXT:    snprintf(zOut, VALUE_TEXT, "t%.*s", n, (const char*)z); break;
    case SQLITE_BLOB:    snprintf(zOut, VALUE_TEXT, "b%d", n); break;
    default:             snprintf(zOut, VALUE_TEXT, "n");
  }
}

static void formatSqlValue(char *zOut, sqlite3_value *pValue){
  if( pValue==0 ){ snprintf(zOut, VALUE_TEXT, "?"); return; }
  formatValue(zOut, sqlite3_value_type(pValue), sqlite3_value_int64(pValue),
              sqlite3_value_double(pValue), sqlite3_value_text(pValue),
              sqlite3_value_bytes(pValue));
}

static void formatEventValue(char *zOut, const sqlitetriggers_event *pEv, int i){
  formatValue(zOut, sqlitetriggers_event_type(pEv, i), sqlitetriggers_event_int64(pEv, i),
              sqlitetriggers_event_double(pEv, i), sqlitetriggers_event_text(pEv, i),
              sqlitetriggers_event_bytes(pEv, i));
}

typedef struct Row { char az[MAX_COLUMN][VALUE_TEXT]; } Row;

/* ---- the feed's side: a replica and the net changes -------------------- */

typedef struct Net {
  int iTable;
  char zKey[VALUE_TEXT];
  int hasOld, hasNew;
  Row old, new;
} Net;

typedef struct Feed {
  sqlite3 *replica;           /* the tables, kept from the changes alone */
  Net aNet[MAX_NET];          /* this transaction's net changes */
  int nNet;
  int nChange;
  sqlite3_int64 iFirstTx, iLastTx;  /* of this transaction's events */
  int nMixedTx;               /* a transaction whose events did not share one tx */
  int nStaleOld;              /* an old side that was not the replica's row */
  int nBadEvent;
  char zFirstProblem[256];
} Feed;

static int tableIndex(const char *zName){
  int i;
  for(i=0; i<N_TABLE; i++){
    if( strcmp(zName + strlen("sqlitetriggers.changes."), azTable[i])==0 ) return i;
  }
  return -1;
}

/* The replica's row of key zKey ("i5"), into *pRow; 0 if absent. */
static int replicaRow(sqlite3 *replica, int iTable, sqlite3_int64 iKey, Row *pRow){
  char zSql[128];
  sqlite3_stmt *pStmt = 0;
  int found = 0, i;
  snprintf(zSql, sizeof(zSql), "SELECT * FROM %s WHERE id = %lld", azTable[iTable], iKey);
  if( sqlite3_prepare_v2(replica, zSql, -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_step(pStmt)==SQLITE_ROW ){
    found = 1;
    for(i=0; i<anColumn[iTable]; i++) formatSqlValue(pRow->az[i], sqlite3_column_value(pStmt, i));
  }
  sqlite3_finalize(pStmt);
  return found;
}

static Net *netFind(Feed *p, int iTable, const char *zKey){
  int i;
  for(i=0; i<p->nNet; i++){
    if( p->aNet[i].iTable==iTable && strcmp(p->aNet[i].zKey, zKey)==0 ) return &p->aNet[i];
  }
  if( p->nNet==MAX_NET ) return 0;
  memset(&p->aNet[p->nNet], 0, sizeof(Net));
  p->aNet[p->nNet].iTable = iTable;
  snprintf(p->aNet[p->nNet].zKey, VALUE_TEXT, "%s", zKey);
  return &p->aNet[p->nNet++];
}

static void problem(Feed *p, const char *zWhat){
  if( p->zFirstProblem[0]==0 ) snprintf(p->zFirstProblem, sizeof(p->zFirstProblem), "%s", zWhat);
}

/* One side of a change: remove the old row from the replica, checking it
** was the replica's, or insert the new one; fold it into the net change. */
static void applySide(Feed *p, int iTable, const sqlitetriggers_event *pEv, int iFirst, int isNew){
  int nColumn = anColumn[iTable], i;
  sqlite3_int64 iKey = sqlitetriggers_event_int64(pEv, iFirst);
  Row row, current;
  Net *pNet;
  char zKey[VALUE_TEXT];
  for(i=0; i<nColumn; i++) formatEventValue(row.az[i], pEv, iFirst + 1 + i);
  snprintf(zKey, sizeof(zKey), "i%lld", iKey);
  if( (pNet = netFind(p, iTable, zKey))==0 ){ p->nBadEvent++; return; }
  if( isNew ){
    char zSql[512];
    int n = snprintf(zSql, sizeof(zSql), "INSERT INTO %s VALUES (", azTable[iTable]);
    for(i=0; i<nColumn; i++) n += snprintf(zSql + n, sizeof(zSql) - n, "%s?", i ? "," : "");
    snprintf(zSql + n, sizeof(zSql) - n, ")");
    {
      sqlite3_stmt *pStmt = 0;
      if( sqlite3_prepare_v2(p->replica, zSql, -1, &pStmt, 0)!=SQLITE_OK ){ p->nBadEvent++; return; }
      for(i=0; i<nColumn; i++){
        int iArg = iFirst + 1 + i;
        switch( sqlitetriggers_event_type(pEv, iArg) ){
          case SQLITE_INTEGER: sqlite3_bind_int64(pStmt, i+1, sqlitetriggers_event_int64(pEv, iArg)); break;
          case SQLITE_FLOAT: sqlite3_bind_double(pStmt, i+1, sqlitetriggers_event_double(pEv, iArg)); break;
          case SQLITE_TEXT: sqlite3_bind_text(pStmt, i+1, (const char*)sqlitetriggers_event_text(pEv, iArg),
                                              sqlitetriggers_event_bytes(pEv, iArg), SQLITE_TRANSIENT); break;
          default: break;
        }
      }
      if( sqlite3_step(pStmt)!=SQLITE_DONE ){
        p->nBadEvent++;
        problem(p, "an inserted row was already in the replica");
      }
      sqlite3_finalize(pStmt);
    }
    pNet->hasNew = 1;
    pNet->new = row;
  }else{
    char zSql[128];
    int isSame = replicaRow(p->replica, iTable, iKey, &current);
    for(i=0; i<nColumn && isSame; i++) isSame = strcmp(current.az[i], row.az[i])==0;
    if( !isSame ){
      char zWhat[256];
      int j, n = snprintf(zWhat, sizeof(zWhat), "an old side was not the replica's row: %s", azTable[iTable]);
      for(j=0; j<nColumn; j++) n += snprintf(zWhat + n, sizeof(zWhat) - n, " %s/%s", row.az[j], current.az[j]);
      p->nStaleOld++;
      problem(p, zWhat);
    }
    snprintf(zSql, sizeof(zSql), "DELETE FROM %s WHERE id = %lld", azTable[iTable], iKey);
    exec(p->replica, zSql);
    if( !pNet->hasOld && !pNet->hasNew ){ pNet->hasOld = 1; pNet->old = row; }
    pNet->hasNew = 0;
  }
}

static void onChange(void *pArg, const sqlitetriggers_event *pEv){
  Feed *p = (Feed*)pArg;
  int iTable = tableIndex(sqlitetriggers_event_name(pEv)), nColumn;
  const char *zKind = (const char*)sqlitetriggers_event_text(pEv, 0);
  if( iTable<0 || zKind==0 ){ p->nBadEvent++; return; }
  nColumn = anColumn[iTable];
  p->nChange++;
  if( p->iFirstTx==0 ) p->iFirstTx = sqlitetriggers_event_transaction(pEv);
  if( sqlitetriggers_event_transaction(pEv)!=p->iFirstTx ) p->nMixedTx++;
  if( strcmp(zKind, "insert")==0 && sqlitetriggers_event_argc(pEv)==2 + nColumn ){
    applySide(p, iTable, pEv, 1, 1);
  }else if( strcmp(zKind, "delete")==0 && sqlitetriggers_event_argc(pEv)==2 + nColumn ){
    applySide(p, iTable, pEv, 1, 0);
  }else if( strcmp(zKind, "update")==0 && sqlitetriggers_event_argc(pEv)==3 + 2*nColumn ){
    applySide(p, iTable, pEv, 1, 0);
    applySide(p, iTable, pEv, 2 + nColumn, 1);
  }else{
    p->nBadEvent++;
  }
}

/* ---- comparing ---------------------------------------------------------- */

/* One line per net change, as the session's conventions have it. */
static int netLine(const Net *pNet, char *zOut, int nOut){
  int nColumn = anColumn[pNet->iTable], i, n;
  if( !pNet->hasOld && !pNet->hasNew ) return 0;
  if( pNet->hasOld && pNet->hasNew ){
    int nChanged = 0;
    n = snprintf(zOut, nOut, "%s U %s:", azTable[pNet->iTable], pNet->zKey);
    for(i=1; i<nColumn; i++){
      if( strcmp(pNet->old.az[i], pNet->new.az[i])==0 ) continue;
      nChanged++;
      n += snprintf(zOut + n, nOut - n, " %d=%s>%s", i, pNet->old.az[i], pNet->new.az[i]);
    }
    return nChanged>0;
  }
  n = snprintf(zOut, nOut, "%s %s %s:", azTable[pNet->iTable], pNet->hasNew ? "I" : "D", pNet->zKey);
  for(i=1; i<nColumn; i++){
    n += snprintf(zOut + n, nOut - n, " %s", pNet->hasNew ? pNet->new.az[i] : pNet->old.az[i]);
  }
  return 1;
}

static int compareLines(const void *a, const void *b){
  return strcmp(*(const char*const*)a, *(const char*const*)b);
}

/* The lines sorted and joined, into zOut. */
static void joinLines(char **azLine, int nLine, char *zOut, int nOut){
  int i, n = 0;
  qsort(azLine, nLine, sizeof(char*), compareLines);
  zOut[0] = 0;
  for(i=0; i<nLine && n<nOut; i++) n += snprintf(zOut + n, nOut - n, "%s\n", azLine[i]);
}

static void sessionLines(sqlite3_session *pSession, char *zOut, int nOut){
  void *pChangeset = 0;
  int nChangeset = 0, nLine = 0, i;
  sqlite3_changeset_iter *pIter = 0;
  char *azLine[MAX_NET];
  zOut[0] = 0;
  if( sqlite3session_changeset(pSession, &nChangeset, &pChangeset)!=SQLITE_OK
   || sqlite3changeset_start(&pIter, nChangeset, pChangeset)!=SQLITE_OK ){
    snprintf(zOut, nOut, "(no changeset)");
    sqlite3_free(pChangeset);
    return;
  }
  while( sqlite3changeset_next(pIter)==SQLITE_ROW && nLine<MAX_NET ){
    const char *zTab;
    int nCol, op, bIndirect, n;
    char zValue[VALUE_TEXT], zOld[VALUE_TEXT], *zLine = malloc(1024);
    sqlite3_value *pValue = 0;
    sqlite3changeset_op(pIter, &zTab, &nCol, &op, &bIndirect);
    sqlite3changeset_old(pIter, 0, &pValue);
    if( op==SQLITE_INSERT ) sqlite3changeset_new(pIter, 0, &pValue);
    formatSqlValue(zValue, pValue);
    n = snprintf(zLine, 1024, "%s %s %s:", zTab, op==SQLITE_INSERT ? "I" : op==SQLITE_DELETE ? "D" : "U", zValue);
    for(i=1; i<nCol; i++){
      pValue = 0;
      if( op==SQLITE_UPDATE ){
        sqlite3changeset_new(pIter, i, &pValue);
        if( pValue==0 ) continue;
        formatSqlValue(zValue, pValue);
        pValue = 0;
        sqlite3changeset_old(pIter, i, &pValue);
        formatSqlValue(zOld, pValue);
        n += snprintf(zLine + n, 1024 - n, " %d=%s>%s", i, zOld, zValue);
      }else{
        if( op==SQLITE_INSERT ) sqlite3changeset_new(pIter, i, &pValue);
        else sqlite3changeset_old(pIter, i, &pValue);
        formatSqlValue(zValue, pValue);
        n += snprintf(zLine + n, 1024 - n, " %s", zValue);
      }
    }
    azLine[nLine++] = zLine;
  }
  sqlite3changeset_finalize(pIter);
  sqlite3_free(pChangeset);
  joinLines(azLine, nLine, zOut, nOut);
  for(i=0; i<nLine; i++) free(azLine[i]);
}

static void feedLines(Feed *p, char *zOut, int nOut){
  char *azLine[MAX_NET];
  int nLine = 0, i;
  for(i=0; i<p->nNet; i++){
    char *zLine = malloc(1024);
    if( netLine(&p->aNet[i], zLine, 1024) ) azLine[nLine++] = zLine; else free(zLine);
  }
  joinLines(azLine, nLine, zOut, nOut);
  for(i=0; i<nLine; i++) free(azLine[i]);
}

/* Every row of every table, as text. */
static void dumpTables(sqlite3 *db, char *zOut, int nOut){
  int t, n = 0;
  zOut[0] = 0;
  for(t=0; t<N_TABLE; t++){
    char zSql[64];
    sqlite3_stmt *pStmt = 0;
    snprintf(zSql, sizeof(zSql), "SELECT * FROM %s ORDER BY id", azTable[t]);
    if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ) continue;
    while( sqlite3_step(pStmt)==SQLITE_ROW && n<nOut - 256 ){
      int i;
      n += snprintf(zOut + n, nOut - n, "%s", azTable[t]);
      for(i=0; i<anColumn[t]; i++){
        char zValue[VALUE_TEXT];
        formatSqlValue(zValue, sqlite3_column_value(pStmt, i));
        n += snprintf(zOut + n, nOut - n, " %s", zValue);
      }
      n += snprintf(zOut + n, nOut - n, "\n");
    }
    sqlite3_finalize(pStmt);
  }
}

/* ---- random writes ------------------------------------------------------ */

static unsigned long long randomState;
static int randomInt(int n){
  randomState = randomState*6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((randomState >> 33) % (unsigned long long)n);
}

static void randomWrite(char *zSql, int nSql){
  int a = randomInt(12) + 1, b = randomInt(12) + 1, k = randomInt(6);
  switch( randomInt(16) ){
    case 0: snprintf(zSql, nSql, "INSERT INTO lists(id, title) VALUES (%d, 'l%d')", a, k); break;
    case 1: snprintf(zSql, nSql, "INSERT OR REPLACE INTO lists(id, title) VALUES (%d, 'r%d')", a, k); break;
    /* score is REAL: an integral value (2.0, or the integer 2) is stored
    ** as an integer, and must come back a REAL. */
    case 2: snprintf(zSql, nSql, "INSERT INTO items(id, listId, name, parentId, score) VALUES (%d, %d, 'n%d', %s, %d%s)",
                     a, b, k, randomInt(2) ? "NULL" : "1", k, randomInt(3)==0 ? ".5" : randomInt(2) ? ".0" : ""); break;
    case 3: snprintf(zSql, nSql, "INSERT OR REPLACE INTO items(id, listId, name) VALUES (%d, %d, 'n%d')", a, b, k); break;
    case 4: snprintf(zSql, nSql, "INSERT INTO items(id, listId, name) VALUES (%d, %d, 'n%d')"
                     " ON CONFLICT(name) DO UPDATE SET score = coalesce(score, 0) + 1", a, b, k); break;
    case 5: snprintf(zSql, nSql, "UPDATE items SET name = 'n%d' WHERE id = %d", k, a); break;
    case 6: snprintf(zSql, nSql, "UPDATE OR REPLACE items SET name = 'n%d' WHERE id = %d", k, a); break;
    case 7: snprintf(zSql, nSql, "UPDATE items SET id = %d WHERE id = %d", b, a); break;
    case 8: snprintf(zSql, nSql, "UPDATE lists SET id = %d WHERE id = %d", b, a); break;
    case 9: snprintf(zSql, nSql, "DELETE FROM lists WHERE id = %d", a); break;
    case 10: snprintf(zSql, nSql, "DELETE FROM items WHERE id %% 3 = %d", k % 3); break;
    case 11: snprintf(zSql, nSql, "INSERT INTO tags(id, itemId, label) VALUES (%d, %d, '%s')",
                      a, b, k==0 ? "bad" : k==1 ? "Home" : k==2 ? "home" : "work"); break;
    case 12: snprintf(zSql, nSql, "UPDATE OR REPLACE tags SET label = '%s' WHERE id = %d", k%2 ? "HOME" : "work", a); break;
    case 13: snprintf(zSql, nSql, "UPDATE items SET parentId = %d WHERE id = %d", b, a); break;
    case 14: snprintf(zSql, nSql, "INSERT OR REPLACE INTO tags(id, itemId, label) VALUES (%d, %d, 'x%d')", a, b, k); break;
    default: snprintf(zSql, nSql, "UPDATE items SET score = %s, flag = %d WHERE listId = %d",
                      randomInt(2) ? "NULL" : "flag * 2", k, b); break;
  }
}

/* ---- the run ------------------------------------------------------------ */

/* The oracle twin gets BEFORE triggers of the same shape as the feed's,
** doing nothing: a table's DELETE triggers change how SQLite runs REPLACE
** (it locks the table during the deletion's triggers, so that a
** foreign-key action writing it fails), and the twins must take the same
** paths. */
static sqlite3 *openTwin(int isFeed, int isRecursive){
  sqlite3 *db = isFeed ? openRegistered(0) : 0;
  char zSql[256];
  int t, k;
  if( !isFeed ) sqlite3_open(":memory:", &db);
  snprintf(zSql, sizeof(zSql), "PRAGMA foreign_keys = ON; PRAGMA recursive_triggers = %s;",
           isRecursive ? "ON" : "OFF");
  exec(db, zSql);
  exec(db, zSchema);
  for(t=0; !isFeed && t<N_TABLE; t++){
    for(k=0; k<3; k++){
      static const char *const azKind[3] = { "INSERT", "UPDATE", "DELETE" };
      snprintf(zSql, sizeof(zSql), "CREATE TEMP TRIGGER same_%s_%d BEFORE %s ON main.%s BEGIN SELECT 1; END",
               azTable[t], k, azKind[k], azTable[t]);
      exec(db, zSql);
    }
  }
  return db;
}

static void runOracle(int isRecursive, int nTransaction){
  sqlite3 *dbFeed = openTwin(1, isRecursive), *dbOracle = openTwin(0, isRecursive);
  Feed feed;
  sqlite3_session *pSession = 0;
  char *zFeedLines = malloc(65536), *zSessionLines = malloc(65536);
  char *zA = malloc(65536), *zB = malloc(65536), zSql[256], zWhat[160];
  int iTx, i, nCommitted = 0, nMismatch = 0, nTwinsDiffer = 0, nReplicaDiffers = 0;
  int nNoInstall = 0, nStatements = 0, nFailedStatements = 0;
  memset(&feed, 0, sizeof(feed));
  sqlite3_open(":memory:", &feed.replica);
  exec(feed.replica, "CREATE TABLE lists(id INTEGER PRIMARY KEY, title, position, touched);"
                     "CREATE TABLE items(id INTEGER PRIMARY KEY, listId, name, parentId, flag, score);"
                     "CREATE TABLE tags(id INTEGER PRIMARY KEY, itemId, label);");
  for(i=0; i<N_TABLE; i++){
    snprintf(zSql, sizeof(zSql), "SELECT sqlitetriggers_change_feed('%s')", azTable[i]);
    nNoInstall += exec(dbFeed, zSql)!=SQLITE_OK;
  }
  sqlitetriggers_observe_after_commit(dbFeed, 0, onChange, &feed, 0, 0);
  for(iTx=0; iTx<nTransaction; iTx++){
    int isExplicit = randomInt(3)!=0, nWrite = isExplicit ? 1 + randomInt(6) : 1;
    int isCommitted = 1, hasSavepoint = 0;
    feed.nNet = 0;
    feed.iFirstTx = 0;
    sqlite3session_create(dbOracle, "main", &pSession);
    sqlite3session_attach(pSession, 0);
    if( isExplicit ){ exec(dbFeed, "BEGIN"); exec(dbOracle, "BEGIN"); }
    for(i=0; i<nWrite; i++){
      int rcFeed, rcOracle;
      if( isExplicit && randomInt(5)==0 ){
        const char *zOp = hasSavepoint ? (randomInt(2) ? "ROLLBACK TO s" : "RELEASE s") : "SAVEPOINT s";
        hasSavepoint = strcmp(zOp, "SAVEPOINT s")==0 || strcmp(zOp, "ROLLBACK TO s")==0;
        exec(dbFeed, zOp);
        exec(dbOracle, zOp);
        continue;
      }
      randomWrite(zSql, sizeof(zSql));
      rcFeed = exec(dbFeed, zSql);
      rcOracle = exec(dbOracle, zSql);
      nStatements++;
      nFailedStatements += rcOracle!=SQLITE_OK;
      if( rcFeed!=rcOracle ){
        nTwinsDiffer++;
        if( nTwinsDiffer==1 ) printf("  twins differ on %s: %d vs %d (%s)\n", zSql, rcFeed, rcOracle, sqlite3_errmsg(dbFeed));
      }
      sqlitetriggers_deliver(dbFeed);
    }
    if( isExplicit ){
      const char *zEnd = randomInt(6)==0 ? "ROLLBACK" : "COMMIT";
      int rcFeed = exec(dbFeed, zEnd), rcOracle = exec(dbOracle, zEnd);
      if( rcFeed!=rcOracle ) nTwinsDiffer++;
      isCommitted = strcmp(zEnd, "COMMIT")==0 && rcOracle==SQLITE_OK;
      if( !sqlite3_get_autocommit(dbFeed) ) exec(dbFeed, "ROLLBACK");
      if( !sqlite3_get_autocommit(dbOracle) ) exec(dbOracle, "ROLLBACK");
      sqlitetriggers_deliver(dbFeed);
    }
    if( isCommitted && feed.iFirstTx ){
      /* The commits that made events are numbered one after another. */
      if( feed.iFirstTx!=feed.iLastTx + 1 ) feed.nMixedTx++;
      feed.iLastTx = feed.iFirstTx;
    }
    if( isCommitted ){
      nCommitted++;
      feedLines(&feed, zFeedLines, 65536);
      sessionLines(pSession, zSessionLines, 65536);
      if( strcmp(zFeedLines, zSessionLines)!=0 ){
        nMismatch++;
        if( nMismatch<=2 ) printf("  transaction %d: net feed\n%s  session\n%s", iTx, zFeedLines, zSessionLines);
      }
    }
    sqlite3session_delete(pSession);
    dumpTables(dbFeed, zA, 65536);
    dumpTables(dbOracle, zB, 65536);
    if( strcmp(zA, zB)!=0 ) nTwinsDiffer++;
    dumpTables(feed.replica, zB, 65536);
    if( strcmp(zA, zB)!=0 ){
      nReplicaDiffers++;
      if( nReplicaDiffers==1 ) printf("  after transaction %d: table\n%s  replica\n%s", iTx, zA, zB);
    }
  }
  snprintf(zWhat, sizeof(zWhat), "oracle (recursive_triggers %s): the feeds install", isRecursive ? "ON" : "OFF");
  expect(nNoInstall==0, zWhat);
  snprintf(zWhat, sizeof(zWhat), "oracle (recursive_triggers %s): the twins stay equal", isRecursive ? "ON" : "OFF");
  expect(nTwinsDiffer==0, zWhat);
  snprintf(zWhat, sizeof(zWhat), "oracle (recursive_triggers %s): every old side is the replica's row, every event well formed",
           isRecursive ? "ON" : "OFF");
  expect(feed.nStaleOld==0 && feed.nBadEvent==0, zWhat);
  snprintf(zWhat, sizeof(zWhat), "oracle (recursive_triggers %s): a transaction's events share its tx, numbered 1, 2, ...",
           isRecursive ? "ON" : "OFF");
  expect(feed.nMixedTx==0 && feed.iLastTx>0, zWhat);
  if( feed.zFirstProblem[0] ) printf("  first problem: %s\n", feed.zFirstProblem);
  snprintf(zWhat, sizeof(zWhat), "oracle (recursive_triggers %s): the exact feed's replica equals the tables after every transaction",
           isRecursive ? "ON" : "OFF");
  expect(nReplicaDiffers==0, zWhat);
  snprintf(zWhat, sizeof(zWhat), "oracle (recursive_triggers %s): the net feed equals the session's changeset for every commit",
           isRecursive ? "ON" : "OFF");
  expect(nMismatch==0 && nCommitted>0, zWhat);
  printf("     oracle, recursive_triggers %s: %d transactions (%d committed), %d statements (%d failed), %d changes\n",
         isRecursive ? "ON" : "OFF", nTransaction, nCommitted, nStatements, nFailedStatements, feed.nChange);
  sqlite3_close(dbFeed);
  sqlite3_close(dbOracle);
  sqlite3_close(feed.replica);
  free(zFeedLines); free(zSessionLines); free(zA); free(zB);
}

/* ---- the hook's conflicts ----------------------------------------------- */

static void otherHook(void *pArg, sqlite3 *db, int op, const char *zDb, const char *zTable,
                      sqlite3_int64 iKey1, sqlite3_int64 iKey2){
  (void)db; (void)op; (void)zDb; (void)zTable; (void)iKey1; (void)iKey2;
  (*(int*)pArg)++;
}

static void testAnotherHookFailsLoudly(void){
  sqlite3 *db = openRegistered(0);
  int nOther = 0;
  exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
           "SELECT sqlitetriggers_change_feed('t'); INSERT INTO t(v) VALUES ('a');");
  sqlite3_preupdate_hook(db, otherHook, &nOther);
  expect(exec(db, "INSERT INTO t(v) VALUES ('b')")!=SQLITE_OK
         && strstr(sqlite3_errmsg(db), "another preupdate hook")!=0,
         "another preupdate hook set after a feed: the next write fails, naming it");
  sqlite3_close(db);

  db = openRegistered(0);
  exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
           "SELECT sqlitetriggers_change_feed('t'); BEGIN; INSERT INTO t(v) VALUES ('a');");
  sqlite3_preupdate_hook(db, otherHook, &nOther);
  expect(exec(db, "COMMIT")!=SQLITE_OK && strstr(sqlite3_errmsg(db), "preupdate hook was replaced")!=0,
         "another preupdate hook set during a transaction: its COMMIT fails, naming it");
  expect(sqlite3_preupdate_hook(db, 0, 0)==(void*)&nOther,
         "the hook that replaced ours during the transaction is left in place");
  {
    char zCount[128];
    queryText(db, "SELECT count(*) FROM t", zCount);
    expect(strcmp(zCount, "0")==0, "the transaction whose hook was taken is rolled back");
  }
  sqlite3_close(db);
}

/* A hook whose context is NULL counts its calls here. */
static int nNullContextCalls = 0;
static void nullContextHook(void *pArg, sqlite3 *db, int op, const char *zDb, const char *zTable,
                            sqlite3_int64 iKey1, sqlite3_int64 iKey2){
  (void)pArg; (void)db; (void)op; (void)zDb; (void)zTable; (void)iKey1; (void)iKey2;
  nNullContextCalls++;
}

/* A hook with a NULL context looks like ours, or like an empty slot, to
** sqlite3_preupdate_hook(): the commit's probe tells. */
static void testNullContextHooks(void){
  sqlite3 *db = openRegistered(0);
  char zCount[128];
  exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
           "SELECT sqlitetriggers_change_feed('t'); BEGIN; INSERT INTO t(v) VALUES ('a');");
  /* Set during the transaction, with a NULL context. */
  sqlite3_preupdate_hook(db, nullContextHook, 0);
  exec(db, "INSERT INTO t(v) VALUES ('b')");
  expect(exec(db, "COMMIT")!=SQLITE_OK && strstr(sqlite3_errmsg(db), "preupdate hook was replaced")!=0,
         "a hook with a NULL context set during a transaction: its COMMIT fails, naming the hook");
  queryText(db, "SELECT count(*) FROM t", zCount);
  expect(strcmp(zCount, "0")==0, "that transaction is rolled back, not committed with changes unseen");
  sqlite3_preupdate_hook(db, 0, 0);

  /* Cleared during the transaction (as sqlite3session_delete() does). */
  exec(db, "BEGIN; INSERT INTO t(v) VALUES ('c');");
  sqlite3_preupdate_hook(db, 0, 0);
  exec(db, "INSERT INTO t(v) VALUES ('d')");
  expect(exec(db, "COMMIT")!=SQLITE_OK && strstr(sqlite3_errmsg(db), "preupdate hook was replaced or cleared")!=0,
         "a hook cleared during a transaction: its COMMIT fails, naming it");

  /* The probe's table dropped by hand: the commit cannot check, and says so. */
  exec(db, "DROP TABLE temp.sqlitetriggers_hook_probe; BEGIN; INSERT INTO t(v) VALUES ('e');");
  expect(exec(db, "COMMIT")!=SQLITE_OK && strstr(sqlite3_errmsg(db), "install the feed again")!=0,
         "without its probe table a captured transaction's COMMIT fails, naming the remedy");
  expect(exec(db, "SELECT sqlitetriggers_change_feed('t'); INSERT INTO t(v) VALUES ('f');")==SQLITE_OK,
         "installed again, the feed commits");
  queryText(db, "SELECT group_concat(json_extract(args, '$[3]')) FROM swift_callback_log", zCount);
  expect(strcmp(zCount, "f")==0, "only the committed change was delivered");

  /* What SQLite cannot tell: a NULL-context hook set between transactions
  ** looks like an empty slot, and the capture's next transaction replaces
  ** it (ChangeFeeds.md says so; set a hook with a context instead). */
  sqlite3_preupdate_hook(db, nullContextHook, 0);
  expect(exec(db, "INSERT INTO t(v) VALUES ('g')")==SQLITE_OK, "a NULL-context hook set between transactions is not seen");
  nNullContextCalls = 0;
  exec(db, "CREATE TABLE other(x); INSERT INTO other VALUES (1);");
  expect(sqlite3_preupdate_hook(db, 0, 0)==0 && nNullContextCalls==0,
         "and it was replaced: the documented limit");
  sqlite3_close(db);
}

/* A SQLite session before a feed's transaction, and after one: never a
** crash (a session chains the hook's previous context as its next
** session, and walks it), a loud failure while both want the hook, and
** the session deleted safely.  Between transactions the hook is not set. */
static void testSessionsBesideAFeed(void){
  sqlite3 *db = openRegistered(0);
  sqlite3_session *pSession = 0;
  char zLog[128];
  int nOther = 0;
  exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
           "SELECT sqlitetriggers_change_feed('t'); INSERT INTO t(v) VALUES ('a');");
  expect(sqlite3_preupdate_hook(db, 0, 0)==0, "between transactions, no hook is set (not even ours)");

  /* The feed first, then a session. */
  expect(sqlite3session_create(db, "main", &pSession)==SQLITE_OK
         && sqlite3session_attach(pSession, "t")==SQLITE_OK, "a session after the feed");
  expect(exec(db, "INSERT INTO t(v) VALUES ('b')")!=SQLITE_OK
         && strstr(sqlite3_errmsg(db), "another preupdate hook is set")!=0,
         "a session set after the feed: the feed's next write fails, naming it");
  sqlite3session_delete(pSession);
  expect(exec(db, "INSERT INTO t(v) VALUES ('c')")==SQLITE_OK, "the session deleted, the feed writes again");
  queryText(db, "SELECT group_concat(json_extract(args, '$[3]'), ',') FROM swift_callback_log", zLog);
  expect(strcmp(zLog, "a,c")==0, "the feed captured every committed change, and no failed one");

  /* A session first, then the feed's transaction. */
  pSession = 0;
  exec(db, "CREATE TABLE u(id INTEGER PRIMARY KEY)");
  expect(sqlite3session_create(db, "main", &pSession)==SQLITE_OK
         && sqlite3session_attach(pSession, "u")==SQLITE_OK, "a session between transactions");
  exec(db, "INSERT INTO u VALUES (1)");
  expect(sqlite3session_isempty(pSession)==0, "the session records writes the feed does not capture");
  expect(exec(db, "UPDATE t SET v = 'C' WHERE v = 'c'")!=SQLITE_OK
         && strstr(sqlite3_errmsg(db), "another preupdate hook is set")!=0,
         "a session set before the feed's transaction: the write fails, naming it");
  sqlite3session_delete(pSession);
  expect(exec(db, "INSERT INTO t(v) VALUES ('d')")==SQLITE_OK, "the feed writes after the session is deleted");

  /* Another library's hook found at install keeps its context. */
  sqlite3_preupdate_hook(db, otherHook, &nOther);
  expect(exec(db, "INSERT INTO t(v) VALUES ('e')")!=SQLITE_OK, "a hook found at install fails the write");
  expect(sqlite3_preupdate_hook(db, 0, 0)==(void*)&nOther, "the other hook's context is left in place");
  sqlite3_close(db);
}

/* Old values of a WITHOUT ROWID table keyed on a later column, on every
** SQLite make test runs (3.40.1, 3.46.1 and 3.53.4): exact, or a loud
** failure where this SQLite rounds them (before 3.53). */
static void testWithoutRowidOldValuesAreExact(void){
  sqlite3 *db = openRegistered(0);
  char zLog[128];
  int isFixed = sqlite3_libversion_number()>=3053000, rc;
  exec(db, "CREATE TABLE w(r REAL, k INTEGER, v, PRIMARY KEY(k)) WITHOUT ROWID;"
           "SELECT sqlitetriggers_change_feed('w');"
           "INSERT INTO w VALUES (2, 12, 1), (3.0, 9007199254740993, 1);"
           "UPDATE w SET v = 2 WHERE k = 12;");
  queryText(db, "SELECT json_extract(args, '$[2]') || typeof(json_extract(args, '$[2]')) || ','"
                " || json_extract(args, '$[3]') || typeof(json_extract(args, '$[3]'))"
                " FROM swift_callback_log WHERE args LIKE '[\"update%'", zLog);
  expect(strcmp(zLog, "2.0real,12integer")==0, "a WITHOUT ROWID update's old side: the REAL a REAL, the key an integer");
  rc = exec(db, "UPDATE w SET v = 2 WHERE k = 9007199254740993");
  if( isFixed ){
    queryText(db, "SELECT json_extract(args, '$[3]') FROM swift_callback_log ORDER BY seq DESC LIMIT 1", zLog);
    expect(rc==SQLITE_OK && strcmp(zLog, "9007199254740993")==0, "beyond 2^53, exact where SQLite reads it exactly");
  }else{
    expect(rc!=SQLITE_OK && strstr(sqlite3_errmsg(db), "beyond 2^53")!=0,
           "beyond 2^53, a loud failure where SQLite rounds it");
  }
  sqlite3_close(db);
}

/* STORED generated columns in 'rows' mode, as SELECT reads them, on every
** SQLite make test runs: the hook gives them as any stored column. */
static void testStoredGeneratedColumns(void){
  sqlite3 *db = openRegistered(0);
  char zW[128], zS[128];
  exec(db, "CREATE TABLE w(a TEXT, k INTEGER PRIMARY KEY, up TEXT AS (upper(a)) STORED, r REAL) WITHOUT ROWID;"
           "CREATE TABLE s(id INTEGER PRIMARY KEY, v INT, twice REAL AS (v * 2) STORED);"
           "SELECT sqlitetriggers_change_feed('w'), sqlitetriggers_change_feed('s');"
           "INSERT INTO w(a, k, r) VALUES ('x', 7, 1); UPDATE w SET a = 'y'; DELETE FROM w;"
           "INSERT INTO s(v) VALUES (1); UPDATE s SET v = 2;");
  queryText(db, "SELECT group_concat(args, ' ') FROM swift_callback_log WHERE name LIKE '%.w'", zW);
  queryText(db, "SELECT group_concat(args, ' ') FROM swift_callback_log WHERE name LIKE '%.s'", zS);
  expect(strcmp(zW, "[\"insert\",null,\"x\",7,\"X\",1.0] "
                    "[\"update\",null,\"x\",7,\"X\",1.0,null,\"y\",7,\"Y\",1.0] "
                    "[\"delete\",null,\"y\",7,\"Y\",1.0]")==0
         && strcmp(zS, "[\"insert\",1,1,1,2.0] [\"update\",1,1,1,2.0,1,1,2,4.0]")==0,
         "STORED generated columns arrive in 'rows' mode, typed as SELECT reads them");
  sqlite3_close(db);
}

/* Issue 33 #5: a column added inside the transaction, after the capture's
** check: the old side of a row stored before reads its default, as SELECT
** does; a change dropped by ROLLBACK TO takes its patch along. */
static void testColumnAddedInTheTransaction(void){
  sqlite3 *db = openRegistered(0);
  char zLog[128];
  exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
           "INSERT INTO t VALUES (1, 'a'), (2, 'b');"
           "SELECT sqlitetriggers_change_feed('t');"
           "BEGIN; UPDATE t SET v = 'x' WHERE id = 1;"
           "ALTER TABLE t ADD COLUMN c DEFAULT 7;"
           "SAVEPOINT s; UPDATE t SET v = 'gone' WHERE id = 1; ROLLBACK TO s;"
           "UPDATE t SET v = 'y' WHERE id = 2; COMMIT;");
  queryText(db, "SELECT group_concat(args, ' ') FROM swift_callback_log WHERE seq > 1", zLog);
  expect(strcmp(zLog, "[\"update\",2,2,\"b\",7,2,2,\"y\",7]")==0,
         "a column added in the transaction: an old row's old side reads its default");
  sqlite3_close(db);
}

static void testRegistrationAgainKeepsCapturing(void){
  sqlite3 *db = openRegistered(0);
  char zLog[128];
  exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
           "SELECT sqlitetriggers_change_feed('t'); INSERT INTO t(v) VALUES ('a');");
  /* Inside the transaction, with the hook set (ASan: nothing freed). */
  exec(db, "BEGIN; INSERT INTO t(v) VALUES ('b');");
  expect(sqlitetriggers_register(db)==SQLITE_OK, "registering again");
  exec(db, "INSERT INTO t(v) VALUES ('c'); COMMIT;");
  queryText(db, "SELECT group_concat(args, ' ') FROM swift_callback_log", zLog);
  expect(strcmp(zLog, "[\"insert\",1,1,\"a\"] [\"insert\",2,2,\"b\"] [\"insert\",3,3,\"c\"]")==0,
         "registering again inside a transaction keeps capturing, losing nothing");
  sqlite3_close(db);
}

void runCaptureTests(void){
  const char *zCount = getenv("SQLITETRIGGERS_ORACLE_TRANSACTIONS");
  int nTransaction = zCount ? atoi(zCount) : 1500;
  testAnotherHookFailsLoudly();
  testSessionsBesideAFeed();
  testNullContextHooks();
  testWithoutRowidOldValuesAreExact();
  testStoredGeneratedColumns();
  testColumnAddedInTheTransaction();
  testRegistrationAgainKeepsCapturing();
  randomState = 20261124;
  runOracle(0, nTransaction);
  runOracle(1, nTransaction);
}
