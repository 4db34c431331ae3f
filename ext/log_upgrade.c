/*
** log_upgrade.c: carrying a durable log of format 1 (durable_log.c, THE
** FORMAT) to format 2, and saying what is true of a log part-way there.
**
** FORMAT 1'S REAL KEYS
**   Format 1 wrote a composite key as json_array() of its columns, a REAL
**   among them as json(printf('%!.17g', v)), or, beyond +-DBL_MAX, as v
**   itself (which json_array() writes as Inf or -Inf before SQLite 3.45,
**   9.0e+999 after: the first is not JSON).  SQLite's printf() wrote other
**   digits than the exact ones before 3.43 (DBL_MAX, and about one double
**   in a thousand above 1e120), so such a text may name no row; format 2
**   writes {"real":[M,E]}, exactly M * 2^E (appendExactReal() there).
**
**   sqlitetriggers_log_upgrade_keys() rewrites, in sqlitetriggers_log, each
**   composite rowKey that holds such a REAL into format 2's text: every
**   other element (an integer, a text, {"blob":"hex"}, null) is kept byte
**   for byte (format 1 and format 2 write them alike), and each REAL
**   becomes {"real":[M,E]} of the double it stood for, found so:
**     1. the old text parsed (strtod: correctly rounded) gives P; the
**        window is P and UPGRADE_ULPS doubles either way (an overflowed
**        text, parsed as infinity, reaches DBL_MAX and below);
**     2. the table's live rows whose other key columns are the key's and
**        whose REALs lie in the window: the one whose values this SQLite's
**        printf('%!.17g') writes as the old text (the writer's printf,
**        when SQLite is the same), else the nearest; P itself first;
**     3. no such row (deleted): the one double of the window that
**        printf('%!.17g') writes as the old text, else P.
**   The choice depends only on the text and the tables, which the rewrite
**   does not change, so every occurrence of one old text becomes the same
**   new text.  A key that is not an array of the table's key columns (a
**   forged row) is left as it is.
**
** WHEN
**   The install that upgrades the file (sqlitetriggers_log_ensure_shared(), isInstall)
**   rewrites every composite table's keys, inside its transaction: a
**   SIGKILL leaves format 1 whole or format 2 complete.  Tables not yet
**   installed again keep format 1's triggers, which go on writing such
**   texts, so every later install first rewrites the keys of each table
**   whose triggers still write printf('%!.17g') (none, once all are
**   installed again: one query of sqlite_schema).
**
** THE CHECK'S MESSAGES
**   sqlitetriggers_log_stale_message() words sqlitetriggers_log_check()'s
**   refusal of a table whose triggers differ from an install's now: that
**   changes were not logged only when its insert, update or delete
**   trigger is missing; that an earlier SQLiteTriggers wrote them (format
**   1's REAL text or probe calls, or no rowid probe where format 2 always
**   writes one), and what they do not log yet; else that a UNIQUE index or
**   the table changed.  The remedy is always to install it again.
*/
#include "sqlitetriggers_internal.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

/* Neighbouring doubles tried either way of a parsed REAL: SQLite 3.40's
** printf() is off by one at most over 200,000 random doubles. */
#define UPGRADE_ULPS 4
/* Log rows read before the rewritten ones are written back. */
#define UPGRADE_CHUNK 128
/* Format 1's REAL in a trigger (its appendKey()). */
#define UPGRADE_FORMAT1_REAL "'printf(''%!.17g'''"

/* ---- doubles ------------------------------------------------------------ */

/* r as an integer of the same order (-0.0 as 0.0), and back: a step of
** one is one ulp, and the infinities are one past +-DBL_MAX. */
static sqlite3_int64 realOrder(double r){
  sqlite3_uint64 u;
  memcpy(&u, &r, sizeof(u));
  return (u>>63) ? -(sqlite3_int64)(u & ~(1ULL<<63)) : (sqlite3_int64)u;
}
static double realFromOrder(sqlite3_int64 k){
  const sqlite3_int64 inf = 0x7ff0000000000000LL;
  sqlite3_uint64 u = (sqlite3_uint64)(k<-inf ? inf : k<0 ? -k : k>inf ? inf : k);
  double r;
  if( k<0 ) u |= 1ULL<<63;
  memcpy(&r, &u, sizeof(r));
  return r;
}

/* {"real":[M,E]} as format 2 writes r (log_triggers.c, appendExactReal()):
** M below 2^53 with r's sign, in [2^52, 2^53) unless E is -1074; 0.0 as
** [0,0]; +-infinity as [+-1,1024].  Read from the bits: no libm. */
static void appendReal(sqlite3_str *pOut, double r){
  sqlite3_uint64 u, m;
  int ex, e, isNeg;
  memcpy(&u, &r, sizeof(u));
  isNeg = (int)(u>>63);
  ex = (int)((u>>52) & 0x7ff);
  m = u & ((1ULL<<52)-1);
  if( ex==0x7ff ){
    sqlite3_str_appendf(pOut, "{\"real\":[%d,1024]}", isNeg ? -1 : 1);
    return;
  }
  if( ex==0 && m==0 ){
    sqlite3_str_appendall(pOut, "{\"real\":[0,0]}");
    return;
  }
  if( ex==0 ){
    e = -1074;                    /* subnormal */
  }else{
    m |= 1ULL<<52;
    e = ex - 1075;
  }
  sqlite3_str_appendf(pOut, "{\"real\":[%lld,%d]}",
                      isNeg ? -(sqlite3_int64)m : (sqlite3_int64)m, e);
}

/* Whether printf('%!.17g', r), as format 1 wrote r, is the n bytes z. */
static int writesAs(double r, const char *z, int n, int *pRc){
  char *zText = sqlite3_mprintf("%!.17g", r);
  int isSame = zText && (int)strlen(zText)==n && memcmp(zText, z, n)==0;
  if( zText==0 ) *pRc = SQLITE_NOMEM;
  sqlite3_free(zText);
  return isSame;
}

/* The n bytes z as a double, all of them; 0 when they are not one.  A
** host whose locale writes another decimal point gets it. */
static int parseReal(const char *z, int n, double *pR){
  char zBuf[64], *zEnd;
  int i;
  if( n<=0 || n>=(int)sizeof(zBuf) ) return 0;
  memcpy(zBuf, z, n);
  zBuf[n] = 0;
  *pR = strtod(zBuf, &zEnd);
  if( zEnd==zBuf+n ) return 1;
  for(i=0; i<n; i++){
    if( zBuf[i]=='.' ) zBuf[i] = localeconv()->decimal_point[0];
  }
  *pR = strtod(zBuf, &zEnd);
  return zEnd==zBuf+n;
}

/* ---- format 1's keys ---------------------------------------------------- */

/* One element of a composite key's text. */
typedef struct KeyPart KeyPart;
struct KeyPart {
  int iStart, nByte;            /* its bytes in the key's text */
  char eKind;                   /* 'r' REAL, 'b' blob, 'n' null, 'x' other */
  double rParsed;               /* 'r': the text parsed */
  double rFound;                /* 'r': the double it stands for */
};

/* The end of the JSON value that starts at z[i] (a string, an object or
** an array, or a scalar up to the next ',' or ']'), or -1. */
static int valueEnd(const char *z, int n, int i){
  int depth = 0, isString = 0;
  if( z[i]!='"' && z[i]!='{' && z[i]!='[' ){
    while( i<n && z[i]!=',' && z[i]!=']' ) i++;
    return i;
  }
  for(; i<n; i++){
    if( isString ){
      if( z[i]=='\\' ) i++;
      else if( z[i]=='"' ) isString = 0;
      if( isString || depth ) continue;
      return i+1;
    }
    if( z[i]=='"' ) isString = 1;
    else if( z[i]=='{' || z[i]=='[' ) depth++;
    else if( (z[i]=='}' || z[i]==']') && --depth==0 ) return i+1;
  }
  return -1;
}

/*
** Splits the key text z (n bytes) into its nKey elements: the number of
** REALs among them, or -1 when it is not a JSON array of nKey values as
** json_array() writes them (no spaces).  A REAL is a number with a point
** or an exponent, or an infinity.
*/
static int splitKey(const char *z, int n, KeyPart *aPart, int nKey){
  int i = 1, iPart = 0, nReal = 0;
  if( n<2 || z[0]!='[' || z[n-1]!=']' ) return -1;
  while( i<n-1 ){
    KeyPart *p = &aPart[iPart];
    int iEnd = valueEnd(z, n-1, i), j;
    if( iEnd<=i || iPart>=nKey ) return -1;
    p->iStart = i;
    p->nByte = iEnd - i;
    p->eKind = 'x';
    if( z[i]=='{' && strncmp(z+i, "{\"blob\":\"", 9)==0 ){
      p->eKind = 'b';
    }else if( p->nByte==4 && strncmp(z+i, "null", 4)==0 ){
      p->eKind = 'n';
    }else if( z[i]=='-' || z[i]=='I' || (z[i]>='0' && z[i]<='9') ){
      for(j=i; j<iEnd; j++){
        if( z[j]=='.' || z[j]=='e' || z[j]=='E' || z[j]=='I' ) p->eKind = 'r';
      }
      if( p->eKind=='r' && !parseReal(z+i, p->nByte, &p->rParsed) ) return -1;
      if( p->eKind=='r' ){ p->rFound = p->rParsed; nReal++; }
    }
    iPart++;
    i = iEnd;
    if( i<n-1 && z[i++]!=',' ) return -1;
  }
  return iPart==nKey ? nReal : -1;
}

/* A composite table whose keys are rewritten. */
typedef struct UpgradeTable UpgradeTable;
struct UpgradeTable {
  int iTable;
  char *zName;
  char **azKey;                 /* its key columns, in key order */
  int nKey;
  KeyPart *aPart;               /* the key being rewritten */
  char *zShape;                 /* the kinds pLookup was made for */
  sqlite3_stmt *pLookup;        /* its rows by a key of that shape */
  int isUnreadable;             /* no lookup: not a table, or a column gone */
};

static void upgradeTableClear(UpgradeTable *pTab){
  int i;
  sqlite3_free(pTab->zName);
  for(i=0; i<pTab->nKey; i++) sqlite3_free(pTab->azKey[i]);
  sqlite3_free(pTab->azKey);
  sqlite3_free(pTab->aPart);
  sqlite3_free(pTab->zShape);
  sqlite3_finalize(pTab->pLookup);
}

/*
** The statement that reads the rows of pTab whose key matches the key
** split into pTab->aPart (every column its element, a REAL in its window):
** each key column, then (but for a REAL) its value as format 2 writes it.
** Made again only when the kinds of the elements change.
*/
static int prepareLookup(sqlite3 *db, UpgradeTable *pTab){
  sqlite3_str *pSql;
  char *zSql;
  int i, rc;
  for(i=0; i<pTab->nKey; i++){
    if( pTab->zShape && pTab->zShape[i]!=pTab->aPart[i].eKind ) break;
  }
  if( pTab->zShape && i==pTab->nKey ) return SQLITE_OK;
  sqlite3_finalize(pTab->pLookup);
  pTab->pLookup = 0;
  sqlite3_free(pTab->zShape);
  pTab->zShape = sqlite3_malloc(pTab->nKey);
  if( pTab->zShape==0 ) return SQLITE_NOMEM;
  pSql = sqlite3_str_new(db);
  sqlite3_str_appendall(pSql, "SELECT ");
  for(i=0; i<pTab->nKey; i++){
    const char *z = pTab->azKey[i];
    pTab->zShape[i] = pTab->aPart[i].eKind;
    sqlite3_str_appendf(pSql, "\"%w\", ", z);
    if( pTab->aPart[i].eKind=='r' ) sqlite3_str_appendall(pSql, "NULL, ");
    else sqlite3_str_appendf(pSql, "CASE typeof(\"%w\") WHEN 'blob' THEN json_object('blob', "
                             "lower(hex(\"%w\"))) ELSE json_quote(\"%w\") END, ", z, z, z);
  }
  sqlite3_str_appendf(pSql, "1 FROM main.\"%w\" WHERE 1", pTab->zName);
  for(i=0; i<pTab->nKey; i++){
    const char *z = pTab->azKey[i];
    switch( pTab->aPart[i].eKind ){
      case 'r': sqlite3_str_appendf(pSql, " AND \"%w\" BETWEEN ?%d AND ?%d", z, 2*i+1, 2*i+2); break;
      case 'n': sqlite3_str_appendf(pSql, " AND \"%w\" IS NULL", z); break;
      case 'b': sqlite3_str_appendf(pSql, " AND \"%w\" = ?%d", z, 2*i+1); break;
      default:  sqlite3_str_appendf(pSql, " AND \"%w\" = json_extract(?%d, '$')", z, 2*i+1); break;
    }
  }
  zSql = sqlite3_str_finish(pSql);
  if( zSql==0 ) return SQLITE_NOMEM;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pTab->pLookup, 0);
  sqlite3_free(zSql);
  return rc;
}

/* Binds the key's elements to pTab->pLookup: a REAL's window, a blob's
** bytes (format 1 wrote lowercase hex), any other element's JSON text. */
static int bindLookup(UpgradeTable *pTab, const char *z, unsigned char *aBlob){
  int i, j, rc = SQLITE_OK;
  for(i=0; rc==SQLITE_OK && i<pTab->nKey; i++){
    const KeyPart *p = &pTab->aPart[i];
    if( p->eKind=='r' ){
      sqlite3_int64 k = realOrder(p->rParsed);
      rc = sqlite3_bind_double(pTab->pLookup, 2*i+1, realFromOrder(k - UPGRADE_ULPS));
      if( rc==SQLITE_OK ) rc = sqlite3_bind_double(pTab->pLookup, 2*i+2, realFromOrder(k + UPGRADE_ULPS));
    }else if( p->eKind=='b' ){
      /* {"blob":"<hex>"}: the hex is from byte 9 to the last two. */
      int nHex = p->nByte - 11;
      for(j=0; j<nHex/2; j++){
        const char *zHex = z + p->iStart + 9 + 2*j;
        int hi = zHex[0]>='a' ? zHex[0]-'a'+10 : zHex[0]-'0';
        int lo = zHex[1]>='a' ? zHex[1]-'a'+10 : zHex[1]-'0';
        aBlob[j] = (unsigned char)((hi<<4) | lo);
      }
      rc = sqlite3_bind_blob(pTab->pLookup, 2*i+1, aBlob, nHex>0 ? nHex/2 : 0, SQLITE_TRANSIENT);
    }else if( p->eKind=='x' ){
      rc = sqlite3_bind_text(pTab->pLookup, 2*i+1, z + p->iStart, p->nByte, SQLITE_STATIC);
    }
  }
  return rc;
}

/*
** Sets pTab->aPart[].rFound, the double each REAL of the key text z (n
** bytes) stands for (FORMAT 1'S REAL KEYS, steps 2 and 3).
*/
static int findReals(sqlite3 *db, UpgradeTable *pTab, const char *z, int n){
  KeyPart *a = pTab->aPart;
  sqlite3_int64 bestDistance = 0;
  int rc = SQLITE_OK, i, isFound = 0, bestWritten = 0;
  if( !pTab->isUnreadable ){
    unsigned char *aBlob = sqlite3_malloc(n + 1);
    rc = aBlob ? prepareLookup(db, pTab) : SQLITE_NOMEM;
    if( rc==SQLITE_ERROR ){
      pTab->isUnreadable = 1;   /* dropped, renamed, or a key column renamed */
      rc = SQLITE_OK;
    }else if( rc==SQLITE_OK ){
      sqlite3_stmt *pRow = pTab->pLookup;
      int rcStep = SQLITE_OK;
      rc = bindLookup(pTab, z, aBlob);
      while( rc==SQLITE_OK && (rcStep = sqlite3_step(pRow))==SQLITE_ROW ){
        sqlite3_int64 distance = 0;
        int isMatch = 1, isWritten = 1;
        for(i=0; i<pTab->nKey && isMatch; i++){
          if( a[i].eKind=='r' ){
            double r = sqlite3_column_double(pRow, 2*i);
            sqlite3_int64 d = realOrder(r) - realOrder(a[i].rParsed);
            isMatch = sqlite3_column_type(pRow, 2*i)==SQLITE_FLOAT;
            distance += d<0 ? -d : d;
            if( isMatch && !writesAs(r, z + a[i].iStart, a[i].nByte, &rc) ) isWritten = 0;
          }else{
            /* Byte for byte as the key wrote it: the same type and value. */
            const char *zEnc = (const char*)sqlite3_column_text(pRow, 2*i+1);
            isMatch = zEnc && sqlite3_column_bytes(pRow, 2*i+1)==a[i].nByte
                      && memcmp(zEnc, z + a[i].iStart, a[i].nByte)==0;
          }
        }
        if( !isMatch ) continue;
        if( !isFound || isWritten>bestWritten || (isWritten==bestWritten && distance<bestDistance) ){
          isFound = 1;
          bestWritten = isWritten;
          bestDistance = distance;
          for(i=0; i<pTab->nKey; i++){
            if( a[i].eKind=='r' ) a[i].rFound = sqlite3_column_double(pRow, 2*i);
          }
        }
      }
      /* A plain SQL error is this key's (a forged text json_extract()
      ** refuses): the parsed values stand.  Out of memory, I/O, a busy or
      ** interrupted statement are the upgrade's. */
      sqlite3_reset(pRow);
      sqlite3_clear_bindings(pRow);
      if( rc==SQLITE_OK && rcStep!=SQLITE_DONE && rcStep!=SQLITE_ROW && rcStep!=SQLITE_ERROR ){
        rc = rcStep;
      }
    }
    sqlite3_free(aBlob);
  }
  /* Deleted: the one double of the window printf() writes as the text. */
  for(i=0; rc==SQLITE_OK && !isFound && i<pTab->nKey; i++){
    sqlite3_int64 k0 = realOrder(a[i].rParsed), k;
    double rPrevious = 0.0;
    int nWritten = 0;
    if( a[i].eKind!='r' ) continue;
    for(k=k0-UPGRADE_ULPS; rc==SQLITE_OK && k<=k0+UPGRADE_ULPS; k++){
      double r = realFromOrder(k);
      /* Past an infinity every step is the infinity again. */
      if( k>k0-UPGRADE_ULPS && memcmp(&r, &rPrevious, sizeof(r))==0 ) continue;
      rPrevious = r;
      if( writesAs(r, z + a[i].iStart, a[i].nByte, &rc) ){
        nWritten++;
        a[i].rFound = r;
      }
    }
    if( nWritten!=1 ) a[i].rFound = a[i].rParsed;
  }
  return rc;
}

/* The key text z (n bytes) with each REAL as format 2 writes it. */
static char *rewrittenKey(const char *z, int n, const KeyPart *a, int nKey){
  sqlite3_str *pOut = sqlite3_str_new(0);
  int i, iAt = 0;
  for(i=0; i<nKey; i++){
    if( a[i].eKind!='r' ) continue;
    sqlite3_str_append(pOut, z + iAt, a[i].iStart - iAt);
    appendReal(pOut, a[i].rFound);
    iAt = a[i].iStart + a[i].nByte;
  }
  sqlite3_str_append(pOut, z + iAt, n - iAt);
  return sqlite3_str_finish(pOut);
}

/* ---- the rewrite -------------------------------------------------------- */

/*
** The composite tables whose keys are rewritten (WHEN): all of them when
** isUpgrade, else those whose triggers still write format 1's REALs.
*/
static int readTables(sqlite3 *db, int isUpgrade, UpgradeTable **paTab, int *pnTab){
  static const char zSql[] =
      "SELECT t.id, t.tableName, k.value, EXISTS (SELECT 1 FROM sqlite_schema AS m"
      "  WHERE m.type = 'table' AND m.name = t.tableName COLLATE NOCASE"
      "  AND m.sql NOT LIKE 'CREATE VIRTUAL%') FROM sqlitetriggers_log_tables AS t,"
      " json_each(CASE WHEN json_valid(t.keyColumns) THEN t.keyColumns ELSE '[]' END) AS k"
      " WHERE CASE WHEN json_valid(t.keyColumns) THEN json_array_length(t.keyColumns) END > 1"
      " AND (?1 OR EXISTS (SELECT 1 FROM sqlite_schema AS s WHERE s.type = 'trigger'"
      "  AND s.name GLOB 'sqlitetriggers_log_' || t.id || '_*'"
      "  AND instr(s.sql, " UPGRADE_FORMAT1_REAL ") > 0))"
      " ORDER BY t.id, k.key";
  sqlite3_stmt *pStmt = 0;
  UpgradeTable *aTab = 0, *pTab = 0;
  int nTab = 0, rc;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int(pStmt, 1, isUpgrade);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    int iTable = sqlite3_column_int(pStmt, 0);
    const char *zName = (const char*)sqlite3_column_text(pStmt, 1);
    const char *zKey = (const char*)sqlite3_column_text(pStmt, 2);
    char **azNew;
    if( zName==0 || zKey==0 ){ rc = SQLITE_NOMEM; break; }
    if( pTab==0 || pTab->iTable!=iTable ){
      UpgradeTable *aNew = sqlite3_realloc64(aTab, (sqlite3_uint64)(nTab+1)*sizeof(*aTab));
      if( aNew==0 ){ rc = SQLITE_NOMEM; break; }
      aTab = aNew;
      pTab = &aTab[nTab++];
      memset(pTab, 0, sizeof(*pTab));
      pTab->iTable = iTable;
      /* Only an ordinary table is read: a view or virtual table of that
      ** name (a forged registration) would run the file's SQL. */
      pTab->isUnreadable = !sqlite3_column_int(pStmt, 3);
      pTab->zName = sqlite3_mprintf("%s", zName);
      if( pTab->zName==0 ){ rc = SQLITE_NOMEM; break; }
    }
    azNew = sqlite3_realloc64(pTab->azKey, (sqlite3_uint64)(pTab->nKey+1)*sizeof(char*));
    if( azNew==0 ){ rc = SQLITE_NOMEM; break; }
    pTab->azKey = azNew;
    pTab->azKey[pTab->nKey] = sqlite3_mprintf("%s", zKey);
    if( pTab->azKey[pTab->nKey++]==0 ){ rc = SQLITE_NOMEM; break; }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  for(pTab=aTab; rc==SQLITE_OK && pTab<aTab+nTab; pTab++){
    pTab->aPart = sqlite3_malloc64((sqlite3_uint64)pTab->nKey*sizeof(KeyPart));
    if( pTab->aPart==0 ) rc = SQLITE_NOMEM;
  }
  *paTab = aTab;
  *pnTab = nTab;
  return rc;
}

/* Rewrites the log's keys of the tables aTab, UPGRADE_CHUNK rows at a
** time: read (the lookups run meanwhile), then written back. */
static int rewriteKeys(sqlite3 *db, UpgradeTable *aTab, int nTab){
  sqlite3_stmt *pRead = 0, *pWrite = 0;
  sqlite3_int64 aId[UPGRADE_CHUNK], iLast = 0;
  char *azNew[UPGRADE_CHUNK];
  int rc, nRead, nNew, i;
  rc = sqlite3_prepare_v2(db, "SELECT id, tableId, rowKey FROM sqlitetriggers_log WHERE id > ?1"
                              " AND typeof(rowKey) = 'text' ORDER BY id LIMIT ?2", -1, &pRead, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_prepare_v2(db, "UPDATE sqlitetriggers_log SET rowKey = ?2 WHERE id = ?1",
                                              -1, &pWrite, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int(pRead, 2, UPGRADE_CHUNK);
  do{
    nRead = nNew = 0;
    if( rc==SQLITE_OK ) rc = sqlite3_bind_int64(pRead, 1, iLast);
    while( rc==SQLITE_OK && sqlite3_step(pRead)==SQLITE_ROW ){
      int iTable = sqlite3_column_int(pRead, 1), n;
      const char *z = (const char*)sqlite3_column_text(pRead, 2);
      UpgradeTable *pTab = 0;
      nRead++;
      iLast = sqlite3_column_int64(pRead, 0);
      for(i=0; i<nTab && pTab==0; i++) if( aTab[i].iTable==iTable ) pTab = &aTab[i];
      if( pTab==0 ) continue;
      if( z==0 ){ rc = SQLITE_NOMEM; break; }
      n = sqlite3_column_bytes(pRead, 2);
      if( splitKey(z, n, pTab->aPart, pTab->nKey)<=0 ) continue;
      rc = findReals(db, pTab, z, n);
      if( rc!=SQLITE_OK ) break;
      azNew[nNew] = rewrittenKey(z, n, pTab->aPart, pTab->nKey);
      if( azNew[nNew]==0 ){ rc = SQLITE_NOMEM; break; }
      aId[nNew++] = iLast;
    }
    if( rc==SQLITE_OK ) rc = sqlite3_reset(pRead); else sqlite3_reset(pRead);
    for(i=0; i<nNew; i++){
      if( rc==SQLITE_OK ) rc = sqlite3_bind_int64(pWrite, 1, aId[i]);
      if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pWrite, 2, azNew[i], -1, SQLITE_STATIC);
      if( rc==SQLITE_OK ){
        sqlite3_step(pWrite);
        rc = sqlite3_reset(pWrite);
      }
      sqlite3_free(azNew[i]);
    }
  }while( rc==SQLITE_OK && nRead==UPGRADE_CHUNK );
  sqlite3_finalize(pRead);
  sqlite3_finalize(pWrite);
  return rc;
}

/*
** Rewrites format 1's REALs in the composite keys of sqlitetriggers_log
** (FORMAT 1'S REAL KEYS): of every composite table when isUpgrade (the
** install that upgrades the file), else of those whose triggers still
** write them.  Inside the caller's transaction.  SQLITE_OK, or an error
** with *pzErr set unless out of memory.
*/
int sqlitetriggers_log_upgrade_keys(sqlite3 *db, int isUpgrade, char **pzErr){
  UpgradeTable *aTab = 0;
  int nTab = 0, rc, i;
  rc = readTables(db, isUpgrade, &aTab, &nTab);
  if( rc==SQLITE_OK && nTab>0 ) rc = rewriteKeys(db, aTab, nTab);
  for(i=0; i<nTab; i++) upgradeTableClear(&aTab[i]);
  sqlite3_free(aTab);
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("rewriting the durable log's keys of format 1: %s", sqlite3_errmsg(db));
  }
  return rc;
}

/* ---- the check's messages ----------------------------------------------- */

/* The first column of zSql's first row (?1 bound to zArg) as an integer,
** 0 when none; *pRc set on error. */
static int queryInt(sqlite3 *db, const char *zSql, const char *zArg, int *pRc){
  sqlite3_stmt *pStmt = 0;
  int rc, iOut = 0;
  if( *pRc!=SQLITE_OK ) return 0;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zArg, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ) iOut = sqlite3_column_int(pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  *pRc = rc;
  return iOut;
}

/* Whether format 2 probes the rowid of main.zTable: a rowid table keyed
** by other columns, one of whose rowid names no column takes
** (log_triggers.c, sqlitetriggers_log_read_table()). */
static int probesRowid(sqlite3 *db, const char *zTable, int *pRc){
  sqlite3_stmt *pStmt = 0;
  int taken = 0, rc;
  if( !queryInt(db, "SELECT 1 FROM pragma_table_list AS l WHERE l.schema = 'main' AND l.name = ?1"
                    " AND l.wr = 0 AND EXISTS (SELECT 1 FROM pragma_index_list(?1, 'main')"
                    " WHERE origin = 'pk')", zTable, pRc) ) return 0;
  rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1, 'main')", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zCol = (const char*)sqlite3_column_text(pStmt, 0);
    if( zCol ) taken |= sqlitetriggers_rowid_name_bit(zCol);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  *pRc = rc;
  return rc==SQLITE_OK && sqlitetriggers_rowid_name_free(taken)!=0;
}

/*
** sqlitetriggers_log_check()'s refusal of the log of zTable (id iTable),
** whose trigger of kind iKind (0 insert, 1 update, 2 delete, 3 and 4 the
** conflict probes: sqlitetriggers_log_trigger_suffix) is not what an install
** writes now: missing (hasTrigger 0), or written otherwise; the kinds
** before iKind matched.  What is true of it (THE CHECK'S MESSAGES), and
** the remedy; NULL with *pRc set on error.
*/
char *sqlitetriggers_log_stale_message(sqlite3 *db, const char *zTable, int iTable, int iKind,
                                       int hasTrigger, int *pRc){
  static const char *const azKind[] = { "insert", "update", "delete" };
  char zId[24], *zMsg = 0;
  int hasEarlierReal, hasEarlierProbe, isRowid = 0;
  if( iKind<3 && !hasTrigger ){
    zMsg = sqlite3_mprintf("the log of \"%s\" is missing its %s trigger (the table recreated by a "
        "migration, or the trigger dropped?): call sqlitetriggers_log_install('%q'); changes made "
        "since were not logged", zTable, azKind[iKind], zTable);
    if( zMsg==0 ) *pRc = SQLITE_NOMEM;
    return zMsg;
  }
  /* Format 1's marks: its REAL text in a key, its probes' constant call. */
  sqlite3_snprintf(sizeof(zId), zId, "%d", iTable);
  hasEarlierReal = queryInt(db, "SELECT 1 FROM sqlite_schema WHERE type = 'trigger' AND name GLOB"
      " 'sqlitetriggers_log_' || ?1 || '_*' AND instr(sql, " UPGRADE_FORMAT1_REAL ") > 0", zId, pRc);
  hasEarlierProbe = queryInt(db, "SELECT 1 FROM sqlite_schema WHERE type = 'trigger' AND name GLOB"
      " 'sqlitetriggers_log_' || ?1 || '_replace_*' AND instr(sql, 'sqlite_compileoption_get(-7317)') > 0",
      zId, pRc);
  if( iKind>=3 ) isRowid = probesRowid(db, zTable, pRc);
  if( *pRc!=SQLITE_OK ) return 0;
  if( hasEarlierReal ){
    zMsg = sqlite3_mprintf("the log of \"%s\" has the triggers of an earlier SQLiteTriggers (format 1), "
        "not installed again since this file's log was upgraded: they log every insert, update and "
        "delete, but write a REAL of the key as decimal text, which may find no row: call "
        "sqlitetriggers_log_install('%q')", zTable, zTable);
  }else if( iKind>=3 && (hasEarlierProbe || (isRowid && !hasTrigger)) ){
    /* Format 1 probed UNIQUE constraints with constant calls, and never
    ** the rowid, which format 2 probes in every such table. */
    zMsg = sqlite3_mprintf("the log of \"%s\" has the triggers of an earlier SQLiteTriggers (format 1), "
        "not installed again since this file's log was upgraded: they log every insert, update and "
        "delete, but not yet every row an INSERT OR REPLACE deletes %s: call "
        "sqlitetriggers_log_install('%q')", zTable,
        isRowid ? "through the rowid" : "through a UNIQUE index added or dropped since", zTable);
  }else if( iKind>=3 ){
    zMsg = sqlite3_mprintf("the log of \"%s\" is out of date (a UNIQUE index added or dropped since the "
        "install?): its inserts, updates and deletes are logged, but not necessarily the rows an "
        "INSERT OR REPLACE deletes through its UNIQUE constraints: call sqlitetriggers_log_install('%q')",
        zTable, zTable);
  }else{
    zMsg = sqlite3_mprintf("the log of \"%s\" is out of date (its table changed since the install): "
        "call sqlitetriggers_log_install('%q')", zTable, zTable);
  }
  if( zMsg==0 ) *pRc = SQLITE_NOMEM;
  return zMsg;
}
