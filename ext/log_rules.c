/*
** log_rules.c: RULES' WRITES.  A persistent rule that stamps the row it
** fired on (a touch of SQLiteTriggersGRDB's RuleSet.installPersistently:
** createdAt, updatedAt) writes that row a second time, and from a writer
** without the extension each write was a change of its own in the log (tx
** NULL: nothing tells one transaction from the next), so an INSERT was two
** changes, an UPDATE two, and net folding could not join them.  A write is
** one change: such a rule ends with the statement that
** sqlitetriggers_log_unlog_sql() writes (log_triggers.c), which makes the
** change its own UPDATE logged a placeholder (THE FORMAT: no change, which
** consumers skip and the view leaves out; the log's last row never goes).  Plain SQL, for every writer.
**
** THE SHAPE
**   A trigger of main on a logged table T qualifies when it is AFTER INSERT
**   or AFTER UPDATE [OF ...] and its last statement is UPDATE [OR ...] T.
**   Then the change it fired on, of its row "new", is logged in the same
**   statement by the log's own INSERT or UPDATE trigger (before the rule or
**   after it: the order of a table's triggers does not matter), and the
**   row the statement takes back was written during the rule's UPDATE, of that
**   same key: changes() = 1 says the UPDATE changed a row, which the log's
**   UPDATE trigger logged at the end of the log, and only a kind 2 of the
**   key of "new" at the end is taken back (a row of another key is kept).  So
**   a consumer reads that key once, the row read afresh: nothing is lost.
**   Not BEFORE: a write that follows may change nothing (INSERT OR IGNORE).
**   Only after the last statement: changes() counts the statement before.
**   An AFTER trigger on T that stops its row with RAISE(IGNORE) or
**   RAISE(FAIL) would skip the log's UPDATE trigger of the rule's write
**   (and so this statement would take back the change before it): the
**   check refuses such a trigger (sqlitetriggers_log_trigger_stops_rows()).
**   A key the rule's UPDATE changes is logged as a deletion and an insert,
**   never taken back.  An update that fails undoes the statement with it.
**
** SAFETY
**   Such a rule names the log, which no object of the file but the log's
**   own may (log_check.c).  It is the log's own when its text is exactly a
**   qualifying trigger with that statement on a line of its own right
**   after its last statement (a line end, two spaces, the statement as
**   the log on T writes it now, then only END), naming the log's state
**   nowhere else: the shape, not its author, is what makes it harmless, so
**   a file may hold it.
**
** WHO WRITES IT
**   Installing the log of T adds the statement to the rules of T that
**   SQLiteTriggersGRDB's registry (sqlitetriggers_rules: triggerName,
**   rule, tableName, sql) lists as installed, exactly as the file has them,
**   and updates their sql there; uninstalling takes it out of every
**   trigger of T that has it (a RENAME COLUMN rewrites a rule, not the
**   registry's copy).  Each trigger is one statement (THE SHAPE), written
**   by a prepared statement, never by running the file's text.  An install of
**   rules asks sqlitetriggers_log_rule_sql(TABLE, SQL) for a rule's text
**   as the log wants it.  A trigger written by hand is never rewritten.
*/
#include "log_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- reading a trigger's text ------------------------------------------ */

typedef struct RuleToken RuleToken;
struct RuleToken {
  const char *z;      /* where it starts in the text */
  int n;              /* its length */
  const char *zName;  /* a name's text (quotes not undone), or NULL */
  int nName;
  int isWord;         /* a bare name: a keyword where one is expected */
};

/* The tokens of zSql in *paTok (sqlite3_free it); their number, or -1
** when out of memory. */
static int ruleTokens(const char *zSql, RuleToken **paTok){
  RuleToken *aTok = 0;
  int nTok = 0, nAlloc = 0, n, nSkip, isString;
  const char *z = zSql;
  *paTok = 0;
  for(;;){
    RuleToken tok;
    n = sqlitetriggers_sql_token(z, &nSkip, &tok.zName, &tok.nName, &isString);
    if( n==0 ) break;
    tok.z = z + nSkip;
    tok.n = n;
    tok.isWord = tok.zName!=0 && tok.zName==tok.z;
    if( isString ) tok.zName = 0;
    z += nSkip + n;
    if( nTok==nAlloc ){
      RuleToken *aNew;
      nAlloc = nAlloc ? nAlloc*2 : 64;
      aNew = sqlite3_realloc64(aTok, (sqlite3_uint64)nAlloc*sizeof(RuleToken));
      if( aNew==0 ){ sqlite3_free(aTok); return -1; }
      aTok = aNew;
    }
    aTok[nTok++] = tok;
  }
  *paTok = aTok;
  return nTok;
}

static int ruleIsWord(const RuleToken *p, const char *zWord){
  return p->isWord && (int)strlen(zWord)==p->nName && sqlite3_strnicmp(p->zName, zWord, p->nName)==0;
}

static int ruleIsChar(const RuleToken *p, char c){
  return p->zName==0 && p->n==1 && p->z[0]==c;
}

/* Whether the name token p is zTable, its quotes undone, as SQLite
** compares names (ASCII case-insensitively). */
static int ruleNamesTable(const RuleToken *p, const char *zTable){
  int i = 0, j = 0, isQuoted;
  if( p->zName==0 ) return 0;
  isQuoted = !p->isWord;
  while( i<p->nName ){
    char c = p->zName[i];
    if( zTable[j]==0 ) return 0;
    if( sqlite3_strnicmp(&c, &zTable[j], 1)!=0 ) return 0;
    /* A doubled closing quote inside a quoted name is one character. */
    i += isQuoted && i+1<p->nName && c==p->z[p->n-1] && p->zName[i+1]==c ? 2 : 1;
    j++;
  }
  return zTable[j]==0;
}

/* The index of AFTER in CREATE TRIGGER [IF NOT EXISTS] [schema.]name
** AFTER ..., or -1 (another timing, or not a trigger). */
static int ruleAfterAt(const RuleToken *aTok, int nTok){
  int i = 2;
  if( nTok<5 || !ruleIsWord(&aTok[0], "create") || !ruleIsWord(&aTok[1], "trigger") ) return -1;
  if( ruleIsWord(&aTok[i], "if") ) i += 3;
  if( i+1<nTok && ruleIsChar(&aTok[i+1], '.') ) i += 2;
  i++;
  return i<nTok && ruleIsWord(&aTok[i], "after") ? i : -1;
}

/*
** THE SHAPE: 1 when zSql is CREATE TRIGGER ... AFTER INSERT or AFTER
** UPDATE ... whose last statement is UPDATE [OR ...] zTable, with *piAfter
** the offset just after that statement's ';'; else 0 (-1 out of memory).
*/
static int ruleStampsItsRow(const char *zSql, const char *zTable, int *piAfter){
  RuleToken *aTok;
  int nTok = ruleTokens(zSql, &aTok), i, k, isShape = 0;
  if( nTok<0 ) return -1;
  i = ruleAfterAt(aTok, nTok);
  if( i>=0 && nTok>8 ){
    isShape = i+1<nTok
           && (ruleIsWord(&aTok[i+1], "insert") || ruleIsWord(&aTok[i+1], "update"))
           && ruleIsWord(&aTok[nTok-1], "end") && ruleIsChar(&aTok[nTok-2], ';');
    /* One statement: the trigger ends at its first ';' END (no statement
    ** of a body begins with END, and no ';' comes before the body), and
    ** nothing follows it.  SQLite compiles a schema row's first statement
    ** only: text planted after it would be read here and run by no one,
    ** or run by whoever executes the text (an install rewriting it). */
    for(k=i+2; isShape && k<nTok-2; k++){
      if( ruleIsChar(&aTok[k], ';') && ruleIsWord(&aTok[k+1], "end") ) isShape = 0;
    }
  }
  if( isShape ){
    /* The last statement's start: an UPDATE after ';' or BEGIN (an
    ** upsert's DO UPDATE and the event's UPDATE follow other words). */
    isShape = 0;
    for(k=nTok-3; k>i+1 && !ruleIsChar(&aTok[k], ';'); k--){
      if( ruleIsWord(&aTok[k], "update") && (ruleIsChar(&aTok[k-1], ';') || ruleIsWord(&aTok[k-1], "begin")) ){
        int j = k+1;
        if( j<nTok && ruleIsWord(&aTok[j], "or") ) j += 2;
        isShape = j+1<nTok && ruleNamesTable(&aTok[j], zTable) && !ruleIsChar(&aTok[j+1], '.');
        break;
      }
    }
  }
  if( isShape ) *piAfter = (int)(aTok[nTok-2].z - zSql) + 1;
  sqlite3_free(aTok);
  return isShape;
}

/* How the statement stands in a rule: on a line of its own after the
** rule's last statement. */
#define RULE_UNLOG_LEAD "\n  "

/*
** zSql without the statement zUnlog (*pzWithout, sqlite3_free it; zUnlog
** NULL: zSql), and whether that has THE SHAPE on zTable (1; 0 not; -1 out
** of memory); *pHas: zSql had it, as ruleWith() puts it: RULE_UNLOG_LEAD
** and zUnlog, then only the final END.
*/
static int ruleWithout(const char *zSql, const char *zTable, const char *zUnlog, char **pzWithout, int *pHas){
  int iAfter;
  *pHas = 0;
  *pzWithout = 0;
  if( zUnlog ){
    char *zLine = sqlite3_mprintf(RULE_UNLOG_LEAD "%s", zUnlog);
    const char *zAt, *zLast = 0;
    if( zLine==0 ) return -1;
    for(zAt = strstr(zSql, zLine); zAt; zAt = strstr(zAt + 1, zLine)) zLast = zAt;
    if( zLast ){
      RuleToken *aTok;
      int nTok = ruleTokens(zLast + strlen(zLine), &aTok);
      if( nTok<0 ){ sqlite3_free(zLine); return -1; }
      *pHas = nTok==1 && ruleIsWord(&aTok[0], "end");
      sqlite3_free(aTok);
    }
    if( *pHas ){
      *pzWithout = sqlite3_mprintf("%.*s%s", (int)(zLast - zSql), zSql, zLast + strlen(zLine));
    }
    sqlite3_free(zLine);
  }
  if( !*pHas ) *pzWithout = sqlite3_mprintf("%s", zSql);
  if( *pzWithout==0 ) return -1;
  return ruleStampsItsRow(*pzWithout, zTable, &iAfter);
}

/* zWithout (which has THE SHAPE) with zUnlog after its last statement. */
static char *ruleWith(const char *zWithout, const char *zTable, const char *zUnlog){
  int iAfter;
  if( ruleStampsItsRow(zWithout, zTable, &iAfter)!=1 ) return 0;
  return sqlite3_mprintf("%.*s" RULE_UNLOG_LEAD "%s%s", iAfter, zWithout, zUnlog, zWithout + iAfter);
}

/* ---- the logged table's statement ------------------------------------- */

/* The statement for the log on main.zTable, or NULL when it is not logged
** (or out of memory: *pRc).  The log is found by its INSERT trigger, which
** follows a RENAME TO, as sqlitetriggers_log_check() does. */
static char *ruleUnlogFor(sqlite3 *db, const char *zTable, int *pRc){
  char *zId, *zErr = 0, *zUnlog = 0;
  LogTable tab;
  int rc;
  if( *pRc!=SQLITE_OK ) return 0;
  zId = sqlitetriggers_log_query_text(db, "SELECT 1 FROM main.sqlite_schema WHERE type = 'table'"
      " AND name = 'sqlitetriggers_log_tables'", 0, pRc);
  if( zId==0 ) return 0;
  sqlite3_free(zId);
  zId = sqlitetriggers_log_query_text(db, "SELECT t.id FROM main.sqlite_schema AS s, main.sqlitetriggers_log_tables AS t"
      " WHERE s.type = 'trigger' AND s.name = 'sqlitetriggers_log_' || t.id || '_insert'"
      " AND s.tbl_name = ?1 COLLATE NOCASE", zTable, pRc);
  if( zId==0 ) return 0;
  rc = sqlitetriggers_log_read_table(db, zTable, atoi(zId), 0, &tab, &zErr);
  if( rc==SQLITE_OK ) zUnlog = sqlitetriggers_log_unlog_sql(&tab, atoi(zId), &rc);
  /* A table the log could not install (a refusal) has no statement. */
  if( rc==SQLITE_ERROR ) rc = SQLITE_OK;
  sqlitetriggers_log_table_clear(&tab);
  sqlite3_free(zErr);
  sqlite3_free(zId);
  *pRc = rc;
  return zUnlog;
}

/*
** The text of a rule of main.zTable as the log wants it: zSql with the
** statement when it has THE SHAPE and zTable is logged, else zSql as it
** is; a fresh string, or NULL with *pRc set.
*/
char *sqlitetriggers_log_rule_sql(sqlite3 *db, const char *zTable, const char *zSql, int *pRc){
  char *zWithout = 0, *zUnlog, *zOut = 0;
  int isShape, hasUnlog;
  zUnlog = ruleUnlogFor(db, zTable, pRc);
  if( *pRc!=SQLITE_OK ) return 0;
  isShape = ruleWithout(zSql, zTable, zUnlog, &zWithout, &hasUnlog);
  if( isShape<0 ){
    *pRc = SQLITE_NOMEM;
  }else{
    zOut = zUnlog && isShape ? ruleWith(zWithout, zTable, zUnlog) : sqlite3_mprintf("%s", zSql);
    if( zOut==0 ) *pRc = SQLITE_NOMEM;
  }
  sqlite3_free(zUnlog);
  sqlite3_free(zWithout);
  return zOut;
}

/*
** SAFETY: 1 when the trigger zSql on main.zOn, which names the log's state,
** is the log's own: exactly what sqlitetriggers_log_rule_sql() makes of a
** trigger of THE SHAPE that names none of azState[0..nState).
*/
int sqlitetriggers_log_rule_is_own(sqlite3 *db, const char *zOn, const char *zSql,
                                   const char *const *azState, int nState, int *pRc){
  char *zWithout = 0, *zUnlog, *zWant = 0;
  int isShape, hasUnlog, isOwn = 0;
  zUnlog = ruleUnlogFor(db, zOn, pRc);
  if( zUnlog==0 ) return 0;
  isShape = ruleWithout(zSql, zOn, zUnlog, &zWithout, &hasUnlog);
  if( isShape<0 ) *pRc = SQLITE_NOMEM;
  if( isShape==1 && hasUnlog && sqlitetriggers_sql_names(zWithout, azState, nState)==0 ){
    zWant = ruleWith(zWithout, zOn, zUnlog);
    if( zWant==0 ) *pRc = SQLITE_NOMEM;
    isOwn = zWant && strcmp(zWant, zSql)==0;
  }
  sqlite3_free(zWant);
  sqlite3_free(zUnlog);
  sqlite3_free(zWithout);
  return isOwn;
}

/* ---- the registry's rules ---------------------------------------------- */

/* Replaces the trigger zName of main by zNew (one statement: THE SHAPE),
** and the registry's row of it when it recorded zOld. */
static int ruleReplace(sqlite3 *db, const char *zName, const char *zOld, const char *zNew, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  const char *zTail = 0;
  char *zDrop = sqlite3_mprintf("DROP TRIGGER main.\"%w\"", zName);
  int rc = zDrop ? sqlite3_exec(db, zDrop, 0, 0, pzErr) : SQLITE_NOMEM;
  sqlite3_free(zDrop);
  if( rc==SQLITE_OK ) rc = sqlite3_prepare_v2(db, zNew, -1, &pStmt, &zTail);
  if( rc==SQLITE_OK ){
    int n, nSkip, nName, isString;
    const char *zTok;
    /* Never more than the one statement (THE SHAPE ensures it). */
    n = zTail ? sqlitetriggers_sql_token(zTail, &nSkip, &zTok, &nName, &isString) : 0;
    if( n>0 || pStmt==0 ){
      rc = SQLITE_ERROR;
      if( *pzErr==0 ) *pzErr = sqlite3_mprintf("the trigger \"%s\" is not one statement", zName);
    }else{
      sqlite3_step(pStmt);
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  pStmt = 0;
  if( rc==SQLITE_OK ){
    rc = sqlite3_prepare_v2(db, "UPDATE main.sqlitetriggers_rules SET sql = (SELECT sql FROM main.sqlite_schema"
        " WHERE type = 'trigger' AND name = ?1) WHERE triggerName = ?1 AND sql = ?2", -1, &pStmt, 0);
    if( rc==SQLITE_OK ){
      sqlite3_bind_text(pStmt, 1, zName, -1, SQLITE_STATIC);
      sqlite3_bind_text(pStmt, 2, zOld, -1, SQLITE_STATIC);
      sqlite3_step(pStmt);
      rc = sqlite3_finalize(pStmt);
    }else{
      /* A registry in another shape, or none: nothing of it follows. */
      sqlite3_finalize(pStmt);
      rc = SQLITE_OK;
    }
  }
  if( rc!=SQLITE_OK && rc!=SQLITE_NOMEM && *pzErr==0 ) *pzErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  return rc;
}

/*
** WHO WRITES IT, in the caller's transaction.  isInstall (after the log
** of main.zTable is installed): the rules of zTable that the registry
** lists as installed, exactly as the file has them, get the statement.
** Else (before it is uninstalled): every trigger of zTable that has it,
** listed or not, loses it, so that the file stays one the check takes.
** The registry follows where it recorded the file's text.
*/
void sqlitetriggers_log_rewrite_rules(sqlite3 *db, const char *zTable, int isInstall, int *pRc, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char **azName = 0, **azOld = 0, **azNew = 0, *zUnlog = 0;
  int nRule = 0, nAlloc = 0, i, rc = *pRc;
  if( rc!=SQLITE_OK ) return;
  if( isInstall ){
    char *zExists = sqlitetriggers_log_query_text(db, "SELECT 1 FROM main.sqlite_schema WHERE type = 'table'"
        " AND name = 'sqlitetriggers_rules'", 0, &rc);
    if( zExists==0 ){ *pRc = rc; return; }
    sqlite3_free(zExists);
    /* A registry in another shape (SQLiteTriggersGRDB refuses it, naming
    ** it) lists no rules. */
    if( sqlite3_prepare_v2(db, "SELECT s.name, s.sql FROM main.sqlitetriggers_rules AS r, main.sqlite_schema AS s"
        " WHERE s.type = 'trigger' AND s.name = r.triggerName AND s.sql = r.sql"
        " AND s.tbl_name = ?1 COLLATE NOCASE AND r.tableName = s.tbl_name", -1, &pStmt, 0)!=SQLITE_OK ){
      sqlite3_finalize(pStmt);
      return;
    }
  }else{
    zUnlog = ruleUnlogFor(db, zTable, &rc);
    if( zUnlog==0 ){ *pRc = rc; return; }
    rc = sqlite3_prepare_v2(db, "SELECT name, sql FROM main.sqlite_schema WHERE type = 'trigger'"
                                " AND tbl_name = ?1 COLLATE NOCASE AND sql IS NOT NULL", -1, &pStmt, 0);
  }
  if( rc==SQLITE_OK ) sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  /* Read first, written after: the schema changes under the loop. */
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zName = (const char*)sqlite3_column_text(pStmt, 0);
    const char *zSql = (const char*)sqlite3_column_text(pStmt, 1);
    char *zNew = 0, *zWithout = 0;
    int hasUnlog, isShape;
    if( zName==0 || zSql==0 ){ rc = SQLITE_NOMEM; break; }
    if( isInstall ){
      zNew = sqlitetriggers_log_rule_sql(db, zTable, zSql, &rc);
    }else{
      isShape = ruleWithout(zSql, zTable, zUnlog, &zWithout, &hasUnlog);
      if( isShape<0 ) rc = SQLITE_NOMEM;
      else if( isShape && hasUnlog ){ zNew = zWithout; zWithout = 0; }
    }
    sqlite3_free(zWithout);
    if( zNew && strcmp(zNew, zSql)!=0 ){
      if( nRule==nAlloc ){
        char **azN, **azO = 0, **azS = 0;
        nAlloc = nAlloc ? nAlloc*2 : 8;
        azN = sqlite3_realloc64(azName, (sqlite3_uint64)nAlloc*sizeof(char*));
        if( azN ){ azName = azN; azO = sqlite3_realloc64(azOld, (sqlite3_uint64)nAlloc*sizeof(char*)); }
        if( azO ){ azOld = azO; azS = sqlite3_realloc64(azNew, (sqlite3_uint64)nAlloc*sizeof(char*)); }
        if( azS ) azNew = azS;
        if( azS==0 ){ sqlite3_free(zNew); rc = SQLITE_NOMEM; break; }
      }
      azName[nRule] = sqlite3_mprintf("%s", zName);
      azOld[nRule] = sqlite3_mprintf("%s", zSql);
      azNew[nRule] = zNew;
      if( azName[nRule]==0 || azOld[nRule]==0 ) rc = SQLITE_NOMEM;
      nRule++;
    }else{
      sqlite3_free(zNew);
    }
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  for(i=0; i<nRule && rc==SQLITE_OK; i++) rc = ruleReplace(db, azName[i], azOld[i], azNew[i], pzErr);
  for(i=0; i<nRule; i++){ sqlite3_free(azName[i]); sqlite3_free(azOld[i]); sqlite3_free(azNew[i]); }
  sqlite3_free(zUnlog);
  sqlite3_free(azName);
  sqlite3_free(azOld);
  sqlite3_free(azNew);
  *pRc = rc;
}

/*
** What stops a logged table's own trigger: the RAISE (FAIL or IGNORE) of
** the AFTER trigger zSql, or NULL.  A statement stopped by either keeps the
** row it was writing and runs no more of that row's AFTER triggers, so the
** log's own may never run (and a rule's statement could take back the
** change that stood for the row): the check refuses such a trigger on a
** logged table.  A BEFORE trigger's stops the row before it is written.
*/
const char *sqlitetriggers_log_trigger_stops_rows(const char *zSql){
  RuleToken *aTok;
  int nTok = ruleTokens(zSql, &aTok), k;
  const char *zStop = 0;
  if( nTok<0 ) return 0;
  for(k=ruleAfterAt(aTok, nTok); k>=0 && k+2<nTok && zStop==0; k++){
    if( ruleIsWord(&aTok[k], "raise") && ruleIsChar(&aTok[k+1], '(') ){
      if( ruleIsWord(&aTok[k+2], "fail") ) zStop = "FAIL";
      if( ruleIsWord(&aTok[k+2], "ignore") ) zStop = "IGNORE";
    }
  }
  sqlite3_free(aTok);
  return zStop;
}

/* sqlitetriggers_log_rule_sql(TABLE, SQL): the rule's text as the log
** wants it (an install of persistent rules asks). */
void sqlitetriggers_log_rule_sql_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char zFunc[] = "sqlitetriggers_log_rule_sql";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zTable, *zSql;
  char *zOut;
  int rc = SQLITE_OK;
  (void)argc;
  zTable = sqlitetriggers_name_argument(ctx, zFunc, argv[0], "a table name");
  if( zTable==0 ) return;
  zSql = sqlitetriggers_name_argument(ctx, zFunc, argv[1], "a trigger's SQL");
  if( zSql==0 ) return;
  zOut = sqlitetriggers_log_rule_sql(db, zTable, zSql, &rc);
  if( sqlitetriggers_log_report(ctx, zFunc, rc, rc==SQLITE_NOMEM ? 0 : sqlite3_errmsg(db)) ){
    sqlite3_result_text(ctx, zOut, -1, sqlite3_free);
    zOut = 0;
  }
  sqlite3_free(zOut);
}
