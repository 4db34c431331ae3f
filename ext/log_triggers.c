/*
** log_triggers.c: a logged table's triggers, the durable log's writers
** (durable_log.c, THE FORMAT, lists the tables they write).  Written in
** plain SQL, so that every writer runs them; they call no function of
** ours but the stamp's reads (log_stamp.c).
**
**   On each logged table T, whose id is N:
**     sqlitetriggers_log_N_insert, _update, _delete: AFTER triggers that
**       insert the change, and nothing else (a condition, such as "only
**       while a consumer exists", costs every write a lookup).
**     sqlitetriggers_log_N_replace: when T has UNIQUE constraints besides
**       its key, or is a rowid table keyed by other columns (a REPLACE
**       through the rowid deletes a row of another key), BEFORE INSERT and
**       BEFORE UPDATE triggers log the rows a write conflicts with.  With
**       PRAGMA recursive_triggers OFF (SQLite's default) a row that REPLACE
**       deletes fires no DELETE trigger; the probe logs it first, as kind
**       4.  With it ON the DELETE trigger logs that deletion after the
**       probe, whose kind is then 5.  A writer tells which with the probe's
**       kind expression,
**           coalesce(sqlite_compileoption_get(-7317), 4)
**       (see TRANSACTIONS; the probes pass -7317 and -7316 through the
**       conflicting row, appendProbeCall()): 5 on a connection with this
**       extension and recursive_triggers ON, else 4.  When the write does
**       not replace (it fails, or is ignored) the probe is either rolled
**       back with the statement or a harmless hint: see CONSUMING.  Net
**       folding (in SQLiteTriggersGRDB) counts kind 4 as a deletion and
**       kind 5 as none; the view shows both as 'delete'.
**
** TOMBSTONES
**   The log keeps keys, which is enough while the row can be read; a
**   deleted row cannot.  A table installed with 'tombstones' also logs, for
**   each deletion (the DELETE trigger, a key changed by an UPDATE, a row a
**   REPLACE deletes: the probes), the row's last values as deletedRow, a
**   JSON object of its columns (generated ones included) whose values
**   keep their types as keys do: integers and text as JSON, NULL as null,
**   a blob as {"blob":"<lowercase hex>"}, a REAL as {"real":[M,E]}, in a
**   row of sqlitetriggers_log_tombstones that the trigger writes after
**   the change's, under its id (last_insert_rowid()); after a probe,
**   only when the probe logged a row (LOG_TOMBSTONE_PROBED), so that a
**   write that deletes nothing looks each conflict up once.  A column that can
**   never hold a REAL (TEXT affinity; INT, INTEGER, TEXT or BLOB in a
**   STRICT table) goes without the REAL branch, whose registers SQLite
**   would zero in every run of the trigger.  The deletion's time, in
**   datetime_subsec()'s format:
**       coalesce(sqlite_compileoption_get(-7319), strftime('%Y-%m-%d %H:%M:%f', 'now'))
**   the connection's clock (one clock with the app's touch stamps: a pinned
**   clock or GRDB's transactionDate) where the extension is loaded,
**   SQLite's 'now' elsewhere.  Naming the columns in a trigger means an
**   ALTER TABLE DROP COLUMN of such a table fails (SQLite names the log's
**   trigger): install the table without tombstones first.
*/
#include "log_internal.h"

#include <string.h>

/* How every trigger of the log starts its row. */
#define LOG_INSERT "INSERT INTO \"sqlitetriggers_log\"(\"tableId\", \"kind\", \"rowKey\", \"tx\") "

/* TOMBSTONES: the time of a deletion, and how its row starts. */
#define LOG_TOMBSTONE_INSERT "INSERT INTO \"sqlitetriggers_log_tombstones\"(\"id\", \"time\", \"deletedRow\") "
/* After a conflict probe: its FROM, which reads nothing when the probe
** logged no row (appendProbe). */
#define LOG_TOMBSTONE_PROBED "FROM (SELECT 1 WHERE changes() > 0) AS g CROSS JOIN "
#define LOG_TIME_SQL "coalesce(sqlite_compileoption_get(" LOG_QUOTE_VALUE(LOG_TIME_ARGUMENT) \
  "), strftime('%Y-%m-%d %H:%M:%f', 'now'))"

/* ---- small helpers ----------------------------------------------------- */

/* z as a JSON string, quoted and escaped (RFC 8259); inside an SQL string
** literal when isInSqlLiteral (its quotes doubled as well), and that
** literal a printf() format when isInFormat (its % signs doubled). */
static void appendJsonString(sqlite3_str *pOut, const char *z, int isInSqlLiteral, int isInFormat){
  sqlite3_str_appendchar(pOut, 1, '"');
  for(; *z; z++){
    unsigned char c = (unsigned char)*z;
    if( (c=='\'' && isInSqlLiteral) || (c=='%' && isInFormat) ){
      sqlite3_str_appendchar(pOut, 2, (char)c);
    }else if( c=='"' || c=='\\' ){
      sqlite3_str_appendchar(pOut, 1, '\\');
      sqlite3_str_appendchar(pOut, 1, (char)c);
    }else if( c<0x20 ){
      /* As json_quote() escapes them (JSON IN PLAIN SQL). */
      static const char aShort[32] = { 0,0,0,0,0,0,0,0,'b','t','n',0,'f','r' };
      if( aShort[c] ) sqlite3_str_appendf(pOut, "\\%c", aShort[c]);
      else sqlite3_str_appendf(pOut, "\\u%04x", c);
    }else{
      sqlite3_str_appendchar(pOut, 1, (char)c);
    }
  }
  sqlite3_str_appendchar(pOut, 1, '"');
}

/* ---- describing a table ------------------------------------------------ */

/* Whether zType (case-insensitively) holds zPart. */
static int typeHolds(const char *zType, const char *zPart){
  int n = (int)strlen(zPart);
  for(; *zType; zType++){
    if( sqlite3_strnicmp(zType, zPart, n)==0 ) return 1;
  }
  return 0;
}

/* Whether a column declared zType can hold a REAL: not with TEXT affinity
** (SQLite's rules: a type naming INT is INTEGER, else one naming CHAR,
** CLOB or TEXT is TEXT, which stores numbers as text), nor, in a STRICT
** table, as INT, INTEGER, TEXT or BLOB. */
static int columnMayBeReal(const char *zType, int isStrict){
  if( isStrict ) return sqlite3_stricmp(zType, "REAL")==0 || sqlite3_stricmp(zType, "ANY")==0;
  if( typeHolds(zType, "INT") ) return 1;
  return !(typeHolds(zType, "CHAR") || typeHolds(zType, "CLOB") || typeHolds(zType, "TEXT"));
}

void sqlitetriggers_log_table_clear(LogTable *pTab){
  int i;
  sqlite3_free(pTab->zName);
  for(i=0; i<pTab->nKey; i++) sqlite3_free(pTab->azKey[i]);
  sqlite3_free(pTab->azKey);
  for(i=0; i<pTab->nColumn; i++) sqlite3_free(pTab->azColumn[i]);
  sqlite3_free(pTab->azColumn);
  sqlite3_free(pTab->aMayBeReal);
  sqlite3_free(sqlite3_str_finish(pTab->pKeyColumns));
  for(i=0; i<4; i++) sqlite3_free(sqlite3_str_finish(pTab->apProbe[i/2][i%2]));
  memset(pTab, 0, sizeof(*pTab));
}

/*
** JSON IN PLAIN SQL.  The composite keys and the tombstones are JSON text,
** written without SQLite's JSON functions: before 3.43 (iOS 16's 3.39,
** Debian 12's 3.40) json_object(), json_array() and json_quote() are not
** innocuous, and with PRAGMA trusted_schema = OFF a trigger calling them
** fails every write, for every writer.  The text is the one json_array()
** and json_object() write (so that keys logged before read the same):
** no space, a string quoted as json_quote() quotes it, an integer in
** decimal, null; the pieces are joined by printf() (one pass, where ||
** would copy the text once per piece), 100 pieces to a call, since a
** function takes at most 127 arguments.
*/
#define LOG_PRINTF_PIECES 100

/*
** The JSON string of the text zAlias.zCol, as json_quote() writes it: '"'
** and '\' escaped by a backslash, a control character as \b, \t, \n, \f,
** \r or \u00XX (lowercase hex), NUL included.  Text without any of them
** (the common case) is only quoted, after a GLOB and an instr() (GLOB,
** like every pattern, cannot see past a NUL); any other goes through the
** CTE q, one replace() per character to escape: 34 passes over the text
** (33 nested replace() calls overflow SQLite's parser, and a CTE that
** escaped a character at a time would copy the text once per character;
** a third, cheaper path for quotes and line ends alone cost every text
** its registers).  Its row c = n is step n:
** '\' at n = -1 (first: the other escapes add backslashes), '"' at 0,
** the character of code n - 1 at 1 to 32.  replace() takes no NUL as a
** pattern (nor does any core function but instr() and substr() on a
** BLOB), so the CTE z then cuts the text at each NUL, as bytes: a cost of
** the number of NULs times the length, for a text that holds any.
*/
static void appendJsonQuote(sqlite3_str *pOut, const char *zAlias, const char *zCol){
  /* The GLOB classes hold the control characters themselves: a pattern
  ** computed with char() would be computed again in every run of the
  ** trigger, for every column (constant functions are factored out of a
  ** row's loop, not out of a trigger's program). */
  sqlite3_str_appendf(pOut,
      "CASE WHEN instr(%s.\"%w\", x'00') OR %s.\"%w\" GLOB '*[\x01-\x1f\"\\]*' "
      "THEN '\"' || (WITH RECURSIVE q(c, s) AS "
      "(SELECT -2, %s.\"%w\" UNION ALL SELECT c + 1, replace(s, CASE c + 1 WHEN -1 THEN '\\' WHEN 0 THEN "
      "'\"' ELSE char(c) END, CASE c + 1 WHEN -1 THEN '\\\\' WHEN 0 THEN '\\\"' WHEN 9 THEN '\\b' "
      "WHEN 10 THEN '\\t' WHEN 11 THEN '\\n' WHEN 13 THEN '\\f' WHEN 14 THEN '\\r' "
      "ELSE printf('\\u%%04x', c) END) FROM q WHERE c < 32), "
      "z(rest, o) AS (SELECT CAST(s AS BLOB), '' FROM q WHERE c = 32 UNION ALL "
      "SELECT substr(rest, instr(rest, x'00') + 1), o || CAST(substr(rest, 1, instr(rest, x'00') - 1) AS TEXT) "
      "|| '\\u0000' FROM z WHERE instr(rest, x'00')) "
      "SELECT o || CAST(rest AS TEXT) FROM z WHERE NOT instr(rest, x'00')) || '\"' "
      "ELSE '\"' || %s.\"%w\" || '\"' END",
      zAlias, zCol, zAlias, zCol, zAlias, zCol, zAlias, zCol);
}

/*
** {"real":[M,E]}, the REAL zAlias.zCol exactly as M * 2^E: M an integer
** below 2^53 in magnitude, with the value's sign, and E from -1074 to 971;
** 0.0 is [0,0], and +-Infinity [1,1024] and [-1,1024] (1 * 2^1024
** overflows to it).  With isSigned (a tombstone's value, not a key, in
** which -0.0 and 0.0 are the same row), -0.0 is [-0,0]: no operator or
** core function of SQL shows the sign of a zero, so the extension's
** sqlite_compileoption_get() answers '-0' for it (sqlitetriggers_log_compileoption_func);
** SQLite's own answers with a compile option, and a writer without the
** extension writes [0,0].  Only a column without REAL or NUMERIC affinity
** keeps -0.0 at all: SQLite stores a REAL column's -0.0 as the integer 0.
** A decimal text cannot do: SQLite's printf() writes
** other digits than the exact ones before 3.43 (and other digits in every
** version), its text-to-REAL conversion rounds differently on a machine
** without long double (arm64), so a key written by one writer would not
** find its row, or group with the same key written by another.  M and E
** are reached by multiplying by powers of two, which is exact: halving (or
** doubling) until the value lies in [2^52, 2^53), by 2^32 at a time while
** far away, or until E reaches -1074 (subnormals).  A recursive CTE, in
** plain SQL, so that every writer (without the extension too) writes the
** same text.
*/
static void appendExactReal(sqlite3_str *pOut, const char *zAlias, const char *zCol, int isSigned){
  /* 2^52, 2^53, 2^53 * 2^32 and 2^32, as expressions SQLite evaluates
  ** exactly (a long decimal literal would go through its conversion). */
  static const char zFar[] = "(9007199254740992.0 * 4294967296)";
  static const char zGoOn[] =
      "v * 2 <> v AND (v >= 9007199254740992 OR (v < 4503599627370496 AND e > -1074))";
  sqlite3_str_appendf(pOut,
      "'{\"real\":[' || (WITH RECURSIVE s(v, e) AS (SELECT abs(%s.\"%w\"), 0 UNION ALL "
      "SELECT CASE WHEN v >= %s THEN v * (1.0 / 4294967296) WHEN v >= 9007199254740992 THEN v * 0.5 "
      "WHEN v < 1048576 AND e >= -1042 THEN v * 4294967296 ELSE v * 2 END, "
      "CASE WHEN v >= %s THEN e + 32 WHEN v >= 9007199254740992 THEN e + 1 "
      "WHEN v < 1048576 AND e >= -1042 THEN e - 32 ELSE e - 1 END "
      "FROM s WHERE %s) "
      "SELECT CASE WHEN v <> 0 AND v * 2 = v THEN sign(%s.\"%w\") || ',1024' ",
      zAlias, zCol, zFar, zFar, zGoOn, zAlias, zCol);
  if( isSigned ){
    sqlite3_str_appendf(pOut, "WHEN v = 0 AND sqlite_compileoption_get(%s.\"%w\") IS '-0' THEN '-0,0' ",
                        zAlias, zCol);
  }
  sqlite3_str_appendf(pOut,
      "ELSE (CAST(v AS INTEGER) * sign(%s.\"%w\")) || ',' || e END FROM s WHERE NOT (%s)) || ']}'",
      zAlias, zCol, zGoOn);
}

/*
** zAlias.zCol as JSON text that keeps its type (JSON IN PLAIN SQL).  JSON
** holds no blob: a blob is {"blob":"<lowercase hex>"}, as in
** swift_callback_log.  Nor, exactly, a REAL: see appendExactReal();
** mayBeReal is 0 for a column that cannot hold one (columnMayBeReal()),
** whose CTE's registers SQLite would zero in every run of the trigger,
** taken or not.  An integer is itself: printf() and || write it in
** decimal.
*/
static void appendExactValue(sqlite3_str *pOut, const char *zAlias, const char *zCol, int mayBeReal,
                             int isSigned){
  sqlite3_str_appendf(pOut, "CASE typeof(%s.\"%w\") WHEN 'text' THEN ", zAlias, zCol);
  appendJsonQuote(pOut, zAlias, zCol);
  sqlite3_str_appendf(pOut, " WHEN 'null' THEN 'null' WHEN 'blob' THEN '{\"blob\":\"' || lower(hex(%s.\"%w\")) "
                      "|| '\"}'", zAlias, zCol);
  if( mayBeReal ){
    sqlite3_str_appendall(pOut, " WHEN 'real' THEN ");
    appendExactReal(pOut, zAlias, zCol, isSigned);
  }
  sqlite3_str_appendf(pOut, " ELSE %s.\"%w\" END", zAlias, zCol);
}

/*
** The JSON array (isObject 0: the key's columns) or object (isObject 1:
** every column, named) of the row zAlias names, as printf() calls of at
** most LOG_PRINTF_PIECES values each, joined by ||.
*/
static void appendJsonRow(sqlite3_str *pOut, const LogTable *pTab, const char *zAlias, int isObject){
  int n = isObject ? pTab->nColumn : pTab->nKey, i, iChunk;
  char *const *azCol = isObject ? pTab->azColumn : pTab->azKey;
  for(iChunk=0; iChunk<n; iChunk+=LOG_PRINTF_PIECES){
    int nEnd = iChunk+LOG_PRINTF_PIECES<n ? iChunk+LOG_PRINTF_PIECES : n;
    sqlite3_str_appendall(pOut, iChunk ? " || printf('" : "printf('");
    for(i=iChunk; i<nEnd; i++){
      sqlite3_str_appendall(pOut, i==0 ? (isObject ? "{" : "[") : ",");
      if( isObject ){
        appendJsonString(pOut, azCol[i], 1, 1);
        sqlite3_str_appendall(pOut, ":");
      }
      sqlite3_str_appendall(pOut, "%s");
    }
    if( nEnd==n ) sqlite3_str_appendall(pOut, isObject ? "}" : "]");
    sqlite3_str_appendall(pOut, "'");
    for(i=iChunk; i<nEnd; i++){
      sqlite3_str_appendall(pOut, ", ");
      appendExactValue(pOut, zAlias, azCol[i], isObject ? pTab->aMayBeReal[i] : 1, isObject);
    }
    sqlite3_str_appendall(pOut, ")");
  }
}

/* The key of the row that zAlias (new, old, or a table alias) names: the
** column's value for a one-column key, else a JSON array. */
static void appendKey(sqlite3_str *pOut, const LogTable *pTab, const char *zAlias){
  if( pTab->nKey==1 ){
    sqlite3_str_appendf(pOut, "%s.\"%w\"", zAlias, pTab->azKey[0]);
  }else{
    appendJsonRow(pOut, pTab, zAlias, 0);
  }
}

/* TOMBSTONES: the values of the row zAlias names, as a JSON object. */
static void appendRowValues(sqlite3_str *pOut, const LogTable *pTab, const char *zAlias){
  appendJsonRow(pOut, pTab, zAlias, 1);
}

/* zFrom's key IS NOT zTo's, compared byte for byte. */
static void appendKeyChanged(sqlite3_str *pOut, const LogTable *pTab, const char *zFrom,
                             const char *zTo){
  appendKey(pOut, pTab, zFrom);
  sqlite3_str_appendall(pOut, " IS NOT ");
  appendKey(pOut, pTab, zTo);
  sqlite3_str_appendall(pOut, " COLLATE BINARY");
}

/* With tombstones, after the log's row of a deletion: its tombstone, the
** values of the row zAlias names and the time, under the log row's id.
** zFrom, when not NULL, is the rest of the SELECT that logged it (FROM
** and WHERE: it finds the same row again, or none). */
static void appendTombstone(sqlite3_str *pOut, const LogTable *pTab, const char *zAlias,
                            const char *zFrom){
  if( !pTab->isTombstones ) return;
  /* LOG_TIME_SQL holds % signs: appended, not formatted. */
  sqlite3_str_appendall(pOut, zFrom ? LOG_TOMBSTONE_INSERT "SELECT last_insert_rowid(), "
                                    : LOG_TOMBSTONE_INSERT "VALUES (last_insert_rowid(), ");
  sqlite3_str_appendall(pOut, LOG_TIME_SQL ", ");
  appendRowValues(pOut, pTab, zAlias);
  if( zFrom ) sqlite3_str_appendf(pOut, " %s", zFrom);
  sqlite3_str_appendall(pOut, zFrom ? "; " : "); ");
}

/*
** A probe's call of sqlite_compileoption_get(iArgument), its stamp
** (LOG_STAMP_ARGUMENT) or its kind (LOG_PROBE_MODE_ARGUMENT), whose
** argument goes through zCol, a column of the conflicting row r:
**     sqlite_compileoption_get(CASE WHEN r."zCol" THEN -7316 ELSE -7316 END)
** (isEarlier: as format 1 wrote it, sqlite_compileoption_get(-7316), which
** sqlitetriggers_log_check() accepts until the table is installed again).
** The value is the same either way; the form is for the register.  SQLite
** keeps each constant argument of a function in a register of its own for
** the whole trigger program, and every run of the trigger allocates and
** zeroes all of its registers, conflict or none.  With two such registers
** the probe's frame is 1,205 bytes on SQLite 3.39 (iOS 16), past the
** 1,200 bytes a lookaside slot holds: a malloc more on every INSERT and
** UPDATE of the table (5% of the write: make bench's Apple rows).  An
** argument computed from the row takes a register SQLite reuses.
*/
static void appendProbeCall(sqlite3_str *pOut, const char *zCol, int iArgument, int isEarlier){
  if( isEarlier ){
    sqlite3_str_appendf(pOut, "sqlite_compileoption_get(%d)", iArgument);
  }else{
    sqlite3_str_appendf(pOut, "sqlite_compileoption_get(CASE WHEN r.\"%w\" THEN %d ELSE %d END)", zCol,
                        iArgument, iArgument);
  }
}

/*
** One UNIQUE index's probes: the rows a write of new's values would
** conflict with, logged as deletes.  azCol/azColl: its columns and their
** collations (azColl NULL: the rowid, which has none).  An update probes only when one of the columns changes, and
** never the row it updates.  zInsertGuard, when not NULL, is one more
** condition of the insert's probe.
*/
static void appendProbe(LogTable *pTab, int iTable, char *const *azCol, char *const *azColl,
                        int nCol, const char *zInsertGuard){
  int i, iText;
  for(iText=0; iText<4; iText++){
    int isEarlier = iText/2, isUpdate = iText%2;
    sqlite3_str *pOut = pTab->apProbe[isEarlier][isUpdate];
    sqlite3_str *pFrom = sqlite3_str_new(0);
    char *zFrom;
    sqlite3_str_appendf(pOut, LOG_INSERT "SELECT %d, coalesce(", iTable);
    appendProbeCall(pOut, azCol[0], LOG_PROBE_MODE_ARGUMENT, isEarlier);
    sqlite3_str_appendall(pOut, ", 4), ");
    appendKey(pOut, pTab, "r");
    sqlite3_str_appendall(pOut, ", ");
    appendProbeCall(pOut, azCol[0], LOG_STAMP_ARGUMENT, isEarlier);
    sqlite3_str_appendall(pOut, " ");
    /* FROM and WHERE, kept for the tombstone. */
    pOut = pFrom;
    sqlite3_str_appendf(pOut, "FROM \"%w\" AS r WHERE ", pTab->zName);
    /* The guard first; no collation for the rowid (azColl NULL), which is
    ** an integer: the probe is then a rowid lookup. */
    if( !isUpdate && zInsertGuard ) sqlite3_str_appendf(pOut, "%s AND ", zInsertGuard);
    for(i=0; i<nCol; i++){
      sqlite3_str_appendf(pOut, "%sr.\"%w\" = new.\"%w\"", i ? " AND " : "", azCol[i], azCol[i]);
      if( azColl ) sqlite3_str_appendf(pOut, " COLLATE \"%w\"", azColl[i]);
    }
    if( isUpdate ){
      sqlite3_str_appendall(pOut, " AND (");
      for(i=0; i<nCol; i++){
        sqlite3_str_appendf(pOut, "%snew.\"%w\" IS NOT old.\"%w\"%s", i ? " OR " : "", azCol[i], azCol[i],
                            azColl ? " COLLATE BINARY" : "");
      }
      sqlite3_str_appendall(pOut, ") AND ");
      appendKeyChanged(pOut, pTab, "r", "old");
    }
    pOut = pTab->apProbe[isEarlier][isUpdate];
    zFrom = sqlite3_str_finish(pFrom);
    if( zFrom ){
      sqlite3_str_appendf(pOut, "%s; ", zFrom);
      if( pTab->isTombstones ){
        /* The tombstone finds the probe's row again, only when the probe
        ** logged one: changes() is the rows of the trigger's last
        ** statement, and a one-row subquery first in a CROSS JOIN is
        ** tested before the lookup (a term of the WHERE would be tested
        ** after it: SQLite hoists no non-deterministic term). */
        char *zGuarded = sqlite3_mprintf(LOG_TOMBSTONE_PROBED "%s", zFrom + sizeof("FROM ") - 1);
        if( zGuarded==0 ) pTab->isOutOfMemory = 1;
        else appendTombstone(pOut, pTab, "r", zGuarded);
        sqlite3_free(zGuarded);
      }
    }else{
      /* Out of memory: the probes' text is unusable, and
      ** sqlitetriggers_log_read_table() reports it. */
      pTab->isOutOfMemory = 1;
    }
    sqlite3_free(zFrom);
  }
  pTab->nProbe++;
}

/* A UNIQUE index other than the key: its probes, or a refusal in *pzErr. */
static int logReadUniqueIndex(sqlite3 *db, LogTable *pTab, int iTable, const char *zIndex,
                              int isPartial, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *azCol[64], *azColl[64];
  int nCol = 0, rc, i, hasExpr = 0, isWide = 0;
  rc = sqlite3_prepare_v2(db, "SELECT cid, name, coll FROM pragma_index_xinfo(?1, 'main')"
                              " WHERE key = 1 ORDER BY seqno", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zIndex, -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zCol = (const char*)sqlite3_column_text(pStmt, 1);
    const char *zColl = (const char*)sqlite3_column_text(pStmt, 2);
    if( sqlite3_column_int(pStmt, 0)<0 || zCol==0 ){ hasExpr = 1; continue; }
    if( nCol>=64 ){ isWide = 1; continue; }
    azCol[nCol] = sqlite3_mprintf("%s", zCol);
    azColl[nCol] = sqlite3_mprintf("%s", zColl ? zColl : "BINARY");
    nCol++;
    if( azCol[nCol-1]==0 || azColl[nCol-1]==0 ) rc = SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK && (hasExpr || isPartial || isWide) ){
    *pzErr = sqlite3_mprintf("the UNIQUE index \"%s\" of \"%s\" %s: the rows an INSERT OR REPLACE "
        "deletes through it cannot be logged in plain SQL; %s, or do not log this table", zIndex,
        pTab->zName, isPartial ? "has a WHERE clause" : isWide ? "has more than 64 columns" : "is on an expression",
        isWide ? "narrow it" : "make it a UNIQUE constraint on columns");
    rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ) appendProbe(pTab, iTable, azCol, azColl, nCol, 0);
  for(i=0; i<nCol; i++){ sqlite3_free(azCol[i]); sqlite3_free(azColl[i]); }
  return rc;
}

/*
** Reads main.zTable into *pTab (which the caller clears), for a table whose
** id will be iTable, logged with tombstones or not: SQLITE_OK; SQLITE_ERROR
** with a refusal in *pzErr; another code.
*/
int sqlitetriggers_log_read_table(sqlite3 *db, const char *zTable, int iTable, int isTombstones,
                        LogTable *pTab, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zType = 0;
  int rc = SQLITE_OK, i;
  memset(pTab, 0, sizeof(*pTab));
  pTab->isTombstones = isTombstones;
  pTab->pKeyColumns = sqlite3_str_new(0);
  for(i=0; i<4; i++) pTab->apProbe[i/2][i%2] = sqlite3_str_new(0);
  pTab->zName = sqlitetriggers_log_query_text(db, "SELECT name FROM pragma_table_list WHERE schema = 'main'"
                                 " AND name = ?1 COLLATE NOCASE", zTable, &rc);
  zType = sqlitetriggers_log_query_text(db, "SELECT type FROM pragma_table_list WHERE schema = 'main'"
                           " AND name = ?1 COLLATE NOCASE", zTable, &rc);
  if( rc!=SQLITE_OK ){ sqlite3_free(zType); return rc; }
  if( pTab->zName==0 || zType==0 || strcmp(zType, "table")!=0
   || sqlite3_strnicmp(pTab->zName, "sqlitetriggers_", 15)==0
   || sqlite3_strnicmp(pTab->zName, "sqlite_", 7)==0 ){
    *pzErr = zType && strcmp(zType, "table")!=0
      ? sqlite3_mprintf("\"%s\" is a %s: only tables are logged", zTable,
                        strcmp(zType, "view")==0 ? "view" : strcmp(zType, "virtual")==0
                        ? "virtual table" : "shadow table")
      : pTab->zName && zType
      ? sqlite3_mprintf("\"%s\" is an internal table", zTable)
      : sqlite3_mprintf("no table \"%s\" in the main schema", zTable);
    sqlite3_free(zType);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  sqlite3_free(zType);

  /* The key, in key order. */
  rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1, 'main') WHERE pk > 0"
                              " ORDER BY pk", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, pTab->zName, -1, SQLITE_STATIC);
  sqlite3_str_appendall(pTab->pKeyColumns, "[");
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zCol = (const char*)sqlite3_column_text(pStmt, 0);
    char **azNew = sqlite3_realloc64(pTab->azKey, (sqlite3_uint64)(pTab->nKey+1)*sizeof(char*));
    if( azNew==0 || zCol==0 ){ rc = SQLITE_NOMEM; break; }
    pTab->azKey = azNew;
    pTab->azKey[pTab->nKey] = sqlite3_mprintf("%s", zCol);
    if( pTab->azKey[pTab->nKey]==0 ){ rc = SQLITE_NOMEM; break; }
    if( pTab->nKey ) sqlite3_str_appendchar(pTab->pKeyColumns, 1, ',');
    appendJsonString(pTab->pKeyColumns, zCol, 0, 0);
    pTab->nKey++;
  }
  sqlite3_str_appendall(pTab->pKeyColumns, "]");
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  if( rc!=SQLITE_OK ) return rc;
  if( pTab->nKey==0 ){
    *pzErr = sqlite3_mprintf("\"%s\" has no PRIMARY KEY: its rowids can change (VACUUM "
        "renumbers them), so its changes could not be matched to rows; declare a primary key "
        "(an INTEGER PRIMARY KEY keeps the rowids)", pTab->zName);
    return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }

  /* A key SQLite lets be NULL (a rowid table's PRIMARY KEY that is not
  ** the rowid, without NOT NULL): such a row could never be matched to its
  ** change.  Only an alias of the rowid cannot hold NULL, and SQLite alone
  ** decides what is one: "id INTEGER PRIMARY KEY DESC", "id INT PRIMARY
  ** KEY" and a composite key are not, and each has an index of its own
  ** (origin 'pk') where a rowid alias has none. */
  {
    char *zNullable = sqlitetriggers_log_query_text(db,
        "SELECT x.name FROM pragma_table_xinfo(?1, 'main') AS x, pragma_table_list AS l"
        " WHERE l.schema = 'main' AND l.name = ?1 AND l.wr = 0 AND x.pk > 0 AND x.\"notnull\" = 0"
        " AND EXISTS (SELECT 1 FROM pragma_index_list(?1, 'main') WHERE origin = 'pk')"
        " ORDER BY x.pk LIMIT 1", pTab->zName, &rc);
    if( rc!=SQLITE_OK ) return rc;
    if( zNullable ){
      *pzErr = sqlite3_mprintf("the primary key column \"%s\" of \"%s\" may be NULL (SQLite allows "
          "NULL in a PRIMARY KEY that is not the rowid: any but a lone \"INTEGER PRIMARY KEY\", which "
          "DESC also makes an ordinary column), and a row with a NULL key could never be matched to its "
          "changes: declare it NOT NULL", zNullable, pTab->zName);
      sqlite3_free(zNullable);
      return *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
  }

  /* TOMBSTONES: every column a deleted row's values name, generated ones
  ** included (hidden 2 and 3; 1 is a virtual table's). */
  if( isTombstones ){
    rc = sqlite3_prepare_v2(db, "SELECT x.name, x.type, l.strict FROM pragma_table_xinfo(?1, 'main') AS x,"
                                " pragma_table_list AS l WHERE l.schema = 'main' AND l.name = ?1"
                                " AND x.hidden IN (0, 2, 3) ORDER BY x.cid", -1, &pStmt, 0);
    if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, pTab->zName, -1, SQLITE_STATIC);
    while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zCol = (const char*)sqlite3_column_text(pStmt, 0);
      const char *zType = (const char*)sqlite3_column_text(pStmt, 1);
      sqlite3_uint64 n = (sqlite3_uint64)(pTab->nColumn+1);
      char **azNew = sqlite3_realloc64(pTab->azColumn, n*sizeof(char*));
      unsigned char *aNew = azNew ? sqlite3_realloc64(pTab->aMayBeReal, n) : 0;
      if( azNew ) pTab->azColumn = azNew;
      if( aNew ) pTab->aMayBeReal = aNew;
      if( azNew==0 || aNew==0 || zCol==0 ){ rc = SQLITE_NOMEM; break; }
      pTab->aMayBeReal[pTab->nColumn] = (unsigned char)columnMayBeReal(zType ? zType : "",
                                                                       sqlite3_column_int(pStmt, 2));
      pTab->azColumn[pTab->nColumn] = sqlite3_mprintf("%s", zCol);
      if( pTab->azColumn[pTab->nColumn]==0 ){ rc = SQLITE_NOMEM; break; }
      pTab->nColumn++;
    }
    if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
    pStmt = 0;
    if( rc!=SQLITE_OK ) return rc;
  }

  /* The rowid of a rowid table keyed by other columns: a write that gives
  ** the rowid of another row (INSERT OR REPLACE INTO t(rowid, ...), as
  ** restore scripts copy rows) replaces that row, whose key differs.  An
  ** INSERT that gives no rowid has NEW.rowid -1 in a BEFORE trigger, so -1
  ** is not probed on insert: an INSERT OR REPLACE of rowid -1 over another
  ** row stays unseen there (LIMITS).  A table whose columns hide every name
  ** of the rowid cannot be written through it. */
  {
    int taken = 0;              /* the rowid's names columns take */
    char *zApart = sqlitetriggers_log_query_text(db,
        "SELECT 1 FROM pragma_table_list AS l WHERE l.schema = 'main' AND l.name = ?1 AND l.wr = 0"
        " AND EXISTS (SELECT 1 FROM pragma_index_list(?1, 'main') WHERE origin = 'pk')",
        pTab->zName, &rc);
    if( rc==SQLITE_OK && zApart ){
      rc = sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_xinfo(?1, 'main')", -1, &pStmt, 0);
      if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, pTab->zName, -1, SQLITE_STATIC);
      while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
        const char *zCol = (const char*)sqlite3_column_text(pStmt, 0);
        if( zCol==0 ){ rc = SQLITE_NOMEM; break; }
        taken |= sqlitetriggers_rowid_name_bit(zCol);
      }
      if( rc==SQLITE_OK ){
        const char *zRowid = sqlitetriggers_rowid_name_free(taken);
        if( zRowid ){
          char *zCol = sqlite3_mprintf("%s", zRowid), *zGuard = sqlite3_mprintf("new.\"%w\" <> -1", zRowid);
          if( zCol && zGuard ) appendProbe(pTab, iTable, &zCol, 0, 1, zGuard);
          else rc = SQLITE_NOMEM;
          sqlite3_free(zCol);
          sqlite3_free(zGuard);
        }
      }
      if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
      pStmt = 0;
    }
    sqlite3_free(zApart);
    if( rc!=SQLITE_OK ) return rc;
  }

  /* UNIQUE indexes other than the key. */
  rc = sqlite3_prepare_v2(db, "SELECT name, partial FROM pragma_index_list(?1, 'main')"
                              " WHERE \"unique\" AND origin <> 'pk' ORDER BY name", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, pTab->zName, -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zIndex = (const char*)sqlite3_column_text(pStmt, 0);
    if( zIndex==0 ){ rc = SQLITE_NOMEM; break; }
    rc = logReadUniqueIndex(db, pTab, iTable, zIndex, sqlite3_column_int(pStmt, 1), pzErr);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK && (sqlite3_str_errcode(pTab->pKeyColumns) || sqlite3_str_errcode(pTab->apProbe[0][0])
                        || sqlite3_str_errcode(pTab->apProbe[0][1]) || sqlite3_str_errcode(pTab->apProbe[1][0])
                        || sqlite3_str_errcode(pTab->apProbe[1][1]) || pTab->isOutOfMemory) ){
    rc = SQLITE_NOMEM;
  }
  return rc;
}

/* pOut's text (sqlite3_free it), or NULL with *pRc set when out of memory. */
static char *logFinishText(sqlite3_str *pOut, int *pRc){
  char *zOut;
  if( sqlite3_str_errcode(pOut) ){
    sqlite3_free(sqlite3_str_finish(pOut));
    *pRc = SQLITE_NOMEM;
    return 0;
  }
  zOut = sqlite3_str_finish(pOut);
  if( zOut==0 ) *pRc = SQLITE_NOMEM;
  return zOut;
}

/* ---- the triggers ------------------------------------------------------ */

/* The kinds of a table's triggers, by name: sqlitetriggers_log_N_<suffix>. */
const char *const sqlitetriggers_log_trigger_suffix[N_TRIGGER_KINDS] = {
  "insert", "update", "delete", "replace_insert", "replace_update"
};

/*
** The CREATE TRIGGER statement of kind iKind (sqlitetriggers_log_trigger_suffix) of pTab,
** whose id is iTable, or NULL when it has none (the probes of a table
** without other UNIQUE constraints); *pRc set when out of memory.  These
** are the texts sqlitetriggers_log_check() compares; isEarlier, the probes
** as format 1 wrote them, which it accepts too (appendProbeCall()).
*/
char *sqlitetriggers_log_trigger_sql(const LogTable *pTab, int iTable, int iKind, int isEarlier, int *pRc){
  sqlite3_str *pOut;
  if( iKind>=3 && pTab->nProbe==0 ) return 0;
  pOut = sqlite3_str_new(0);
  sqlite3_str_appendf(pOut, "CREATE TRIGGER \"sqlitetriggers_log_%d_%s\" %s %s ON \"%w\" "
      "BEGIN ",
      iTable, sqlitetriggers_log_trigger_suffix[iKind], iKind>=3 ? "BEFORE" : "AFTER",
      iKind==0 || iKind==3 ? "INSERT" : iKind==1 || iKind==4 ? "UPDATE" : "DELETE", pTab->zName);
  switch( iKind ){
    case 0:
      sqlite3_str_appendf(pOut, LOG_INSERT "VALUES (%d, 1, ", iTable);
      appendKey(pOut, pTab, "new");
      sqlite3_str_appendall(pOut, ", " LOG_STAMP_SQL "); ");
      break;
    case 1: {
      /* A new key: the old one is deleted, the new one inserted. */
      sqlite3_str *pWhere = sqlite3_str_new(0);
      char *zWhere;
      sqlite3_str_appendall(pWhere, "WHERE ");
      appendKeyChanged(pWhere, pTab, "old", "new");
      zWhere = sqlite3_str_finish(pWhere);
      if( zWhere==0 ){ *pRc = SQLITE_NOMEM; sqlite3_free(sqlite3_str_finish(pOut)); return 0; }
      sqlite3_str_appendf(pOut, LOG_INSERT "SELECT %d, 3, ", iTable);
      appendKey(pOut, pTab, "old");
      sqlite3_str_appendf(pOut, ", " LOG_STAMP_SQL " %s; ", zWhere);
      appendTombstone(pOut, pTab, "old", zWhere);
      sqlite3_free(zWhere);
      sqlite3_str_appendf(pOut, LOG_INSERT "VALUES (%d, CASE WHEN ", iTable);
      appendKeyChanged(pOut, pTab, "old", "new");
      sqlite3_str_appendall(pOut, " THEN 1 ELSE 2 END, ");
      appendKey(pOut, pTab, "new");
      sqlite3_str_appendall(pOut, ", " LOG_STAMP_SQL "); ");
      break;
    }
    case 2:
      sqlite3_str_appendf(pOut, LOG_INSERT "VALUES (%d, 3, ", iTable);
      appendKey(pOut, pTab, "old");
      sqlite3_str_appendall(pOut, ", " LOG_STAMP_SQL "); ");
      appendTombstone(pOut, pTab, "old", 0);
      break;
    default: {
      sqlite3_str *pProbe = pTab->apProbe[isEarlier][iKind==4];
      sqlite3_str_append(pOut, sqlite3_str_value(pProbe), sqlite3_str_length(pProbe));
      break;
    }
  }
  sqlite3_str_appendall(pOut, "END");
  return logFinishText(pOut, pRc);
}

/*
** RULES' WRITES (log_rules.c): the statement a rule's trigger on pTab ends
** with when its last statement updates the row it fired on, so that the
** update is part of that row's change: it makes the log's last row a
** placeholder (THE FORMAT: tableId 0, kind 0, no key) when the rule's
** UPDATE changed one row (changes() is the rows of the trigger's last
** statement) and that row is pTab's update (kind 2) of the key of "new",
** which the log's UPDATE trigger wrote during it.  Not a deletion: the
** log's last row never goes (its id is the log's end).  As the log's
** triggers, plain SQL, for every writer.
*/
char *sqlitetriggers_log_unlog_sql(const LogTable *pTab, int iTable, int *pRc){
  sqlite3_str *pOut = sqlite3_str_new(0);
  sqlite3_str_appendf(pOut, "UPDATE \"sqlitetriggers_log\" SET \"tableId\" = 0, \"kind\" = 0, \"rowKey\" = NULL "
      "WHERE changes() = 1 AND \"id\" = (SELECT max(\"id\") FROM \"sqlitetriggers_log\") "
      "AND \"kind\" = 2 AND \"tableId\" = %d AND \"rowKey\" IS ", iTable);
  appendKey(pOut, pTab, "new");
  sqlite3_str_appendall(pOut, " COLLATE BINARY;");
  return logFinishText(pOut, pRc);
}
