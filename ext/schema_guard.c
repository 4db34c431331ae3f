/*
** schema_guard.c: keep database files away from the direct-only functions.
**
** swift_callback(), swift_callback_log_capacity(), sqlitetriggers_pin_clock(),
** sqlitetriggers_seed_random(), the change feed's installer and capture
** (sqlitetriggers_change_feed(), sqlitetriggers_change_capture()) and the
** durable log's (sqlitetriggers_log_install(), _uninstall(), _origin()) change state
** or deliver something.  They are registered SQLITE_DIRECTONLY, and
** SQLite refuses them in views, triggers, DEFAULTs, CHECKs and generated
** columns read from a file.  Index expressions and partial-index WHERE
** clauses escape that rule: when SQLite parses a schema before the function
** exists it accepts the unknown name, and once the function exists it never
** checks again.  A hostile file could then fake events, switch the log off,
** pin the clock or seed uuid() to known values.
**
** So a schema that names one of these functions as a function call, in any
** object of any attached database other than TEMP (the app's own), makes
** every call of a guarded function fail, with an error naming the
** database, the object and the function:
**
**   swift_callback: refused: index "ix" in database "main" calls
**   swift_callback(); a database file must never reach this function
**   (drop the object, or move it to the TEMP schema)
**
** Likewise a table or view named swift_callback_log, swift_callback_batch
** or swift_callback_pending, in any schema, TEMP too: SQLite looks a name
** up in the schemas before it tries an eponymous virtual table, so such an
** object would hide the extension's own table, and a host reading it (a
** change feed decoding a batch) would read the file's rows as events:
**
**   swift_callback: refused: table "swift_callback_batch" in database
**   "main" hides the extension's own swift_callback_batch table (rename or
**   drop it)
**
** Registration reads no schema (sqlitetriggers.c): the guard runs at the
** calls.  No guarded function can take effect before its first call, and
** every call is checked: swift_callback() and the capture once per
** transaction, when they join it (no file can be attached, and no other
** connection can change a schema, inside a transaction of this one; and a
** hostile schema refuses the very call that would join), the controls and
** the installers and sqlitetriggers_log_origin() on every call.  The
** once-per-transaction check is remembered apart from joining: the log's
** stamp joins a transaction without it (a file's own triggers call the
** stamp), and a guarded function joining after it still meets the guard.
** So whenever the file was opened, attached or changed by another
** connection, its schema never reaches them.
**
** A check that passes is remembered with the schema's signature: every
** database's name and schema_version, and the memory its parsed schema
** takes.  A call whose signature is the same skips the scan (a few cheap
** PRAGMAs instead of a query per database, which made the first event of
** every transaction cost ten times the rest).  The durable log's
** stamp and its probes' kind (sqlite_compileoption_get(-7316) and (-7317),
** durable_log.c) are not guarded: the file's own triggers call them, and
** they only read.  The scan reads every row of sqlite_schema and judges
** it in C, tokenizing its SQL as SQLite does, so names in string literals
** and comments are ignored and quoted names ("swift_callback"(...)) are
** caught.  No SQL function, operator or collation takes part in the
** decision: LIKE follows PRAGMA case_sensitive_like, and an app may define
** its own lower() or like(); the guard decides the same whatever the
** connection's pragmas and functions.
*/
#include "sqlitetriggers_internal.h"

#include <string.h>

static const char *const aGuardedName[] = {
  "swift_callback", "swift_callback_log_capacity",
  "sqlitetriggers_pin_clock", "sqlitetriggers_seed_random",
  /* They install or drop triggers, or record a table's changes. */
  "sqlitetriggers_change_feed", "sqlitetriggers_change_capture",
  "sqlitetriggers_log_install", "sqlitetriggers_log_uninstall",
  /* It marks whose writes a transaction's are. */
  "sqlitetriggers_log_origin",
};
#define N_GUARDED_NAME (int)(sizeof(aGuardedName)/sizeof(aGuardedName[0]))

static int isIdentChar(unsigned char c){
  return (c>='a' && c<='z') || (c>='A' && c<='Z') || (c>='0' && c<='9')
      || c=='_' || c=='$' || c>=0x80;
}

/* The length of the space or comment at z (0 if there is none). */
static int skipSpaceAndComments(const char *z){
  const char *p = z;
  for(;;){
    if( *p==' ' || *p=='\t' || *p=='\n' || *p=='\r' || *p=='\f' || *p=='\v' ){
      p++;
    }else if( p[0]=='-' && p[1]=='-' ){
      while( *p && *p!='\n' ) p++;
    }else if( p[0]=='/' && p[1]=='*' ){
      p += 2;
      while( *p && !(p[0]=='*' && p[1]=='/') ) p++;
      if( *p ) p += 2;
    }else{
      return (int)(p - z);
    }
  }
}

/* The guarded name equal (ASCII case-insensitively) to z[0..n), or 0. */
static const char *guardedName(const char *z, int n){
  int i;
  for(i=0; i<N_GUARDED_NAME; i++){
    if( (int)strlen(aGuardedName[i])==n
     && sqlite3_strnicmp(z, aGuardedName[i], n)==0 ){
      return aGuardedName[i];
    }
  }
  return 0;
}

/* Our table that an object of type zType named zName hides, or 0: a table
** or view of that name, in any case. */
static const char *hiddenTable(const char *zType, const char *zName){
  static const char *const azOurs[] = {
    "swift_callback_log", "swift_callback_batch", "swift_callback_pending"
  };
  int i;
  if( zType==0 || zName==0 || (strcmp(zType, "table")!=0 && strcmp(zType, "view")!=0) ) return 0;
  for(i=0; i<(int)(sizeof(azOurs)/sizeof(azOurs[0])); i++){
    if( sqlite3_stricmp(zName, azOurs[i])==0 ) return azOurs[i];
  }
  return 0;
}

/*
** The token at z, read as SQLite's tokenizer (tokenize.c) reads it: its
** length (0 at the end of the text).  *pzName, *pnName: its name when it
** is a bare or quoted identifier, or a string (which SQLite takes as a
** name where one is expected: INSERT INTO 'x'), else NULL; *pIsString
** for a string.  Space and comments before it are skipped (*pnSkip).
** What matters is where a token ends: a parameter, $name(...) included,
** which SQLite turns into NULL in a schema it loads, must not be read as
** a name, a parenthesis and a string that would hide what follows.
*/
static int readToken(const char *z, int *pnSkip, const char **pzName, int *pnName, int *pIsString){
  const char *zStart;
  int nSkip = skipSpaceAndComments(z);
  z += nSkip;
  *pnSkip = nSkip;
  *pzName = 0;
  *pnName = 0;
  *pIsString = 0;
  zStart = z;
  if( *z==0 ) return 0;
  if( *z=='\'' || *z=='"' || *z=='`' || *z=='[' ){
    char cEnd = *z=='[' ? ']' : *z;
    *pIsString = *z=='\'';
    *pzName = ++z;
    while( *z && !(*z==cEnd && (cEnd==']' || z[1]!=cEnd)) ) z += *z==cEnd ? 2 : 1;
    *pnName = (int)(z - *pzName);
    if( *z ) z++;
  }else if( *z=='$' || *z=='@' || *z==':' || *z=='#' ){
    /* A parameter: name characters, a Tcl "::", or a "(...)" that ends
    ** at the first ')' or space (SQLITE_OMIT_TCL_VARIABLE aside). */
    int n = 0;
    for(z++; *z; z++){
      if( isIdentChar((unsigned char)*z) ){
        n++;
      }else if( *z=='(' && n>0 ){
        do{ z++; }while( *z && *z!=')' && *z!=' ' && *z!='\t' && *z!='\n' && *z!='\r'
                         && *z!='\f' && *z!='\v' );
        if( *z==')' ) z++;
        break;
      }else if( *z==':' && z[1]==':' ){
        z++;
      }else{
        break;
      }
    }
  }else if( isIdentChar((unsigned char)*z) ){
    *pzName = z;
    while( isIdentChar((unsigned char)*z) ) z++;
    *pnName = (int)(z - *pzName);
  }else{
    z++;
  }
  return (int)(z - zStart);
}

/*
** The guarded function that zSql calls (zOnly, when not NULL: that one
** alone), or 0: a bare or quoted identifier (never a string) naming it,
** followed by "(".  Tokens are read as SQLite reads them (readToken()),
** so names in strings and comments are ignored.
*/
static const char *sqlCallsGuardedFunction(const char *zSql, const char *zOnly){
  const char *z = zSql, *zName, *zFound;
  int n, nSkip, nName, isString;
  while( (n = readToken(z, &nSkip, &zName, &nName, &isString))>0 ){
    z += nSkip + n;
    if( zName==0 || isString ) continue;
    zFound = guardedName(zName, nName);
    if( zFound && (zOnly==0 || zFound==zOnly) && z[skipSpaceAndComments(z)]=='(' ) return zFound;
  }
  return 0;
}

/* 1 when the SQL text zSql calls zFunc (one of aGuardedName, as spelled
** there), as the guard reads calls. */
int sqlitetriggers_sql_calls(const char *zSql, const char *zFunc){
  const char *zOnly = guardedName(zFunc, (int)strlen(zFunc));
  return zSql && zOnly && sqlCallsGuardedFunction(zSql, zOnly)!=0;
}

/* readToken() for the other files: the token at z, as SQLite reads it. */
int sqlitetriggers_sql_token(const char *z, int *pnSkip, const char **pzName, int *pnName, int *pIsString){
  return readToken(z, pnSkip, pzName, pnName, pIsString);
}

/* 1 when the token (zName, nName) is the word zWord, ASCII case-insensitively. */
static int tokenIs(const char *zName, int nName, const char *zWord){
  return zName && (int)strlen(zWord)==nName && sqlite3_strnicmp(zName, zWord, nName)==0;
}

/*
** 1 when zSql is nothing but a call of zFunc, SELECT zFunc(...) [[AS]
** alias] [;], so that nothing of the statement runs after the call: its
** arguments are computed before it, and its row is the statement's only
** row.  A statement that calls zFunc beside anything else (another
** column, FROM, WHERE) could fail after zFunc had taken effect.
*/
int sqlitetriggers_sql_is_lone_call(const char *zSql, const char *zFunc){
  const char *z = zSql, *zName;
  int n, nSkip, nName, isString, depth = 0;
  if( z==0 ) return 0;
  n = readToken(z, &nSkip, &zName, &nName, &isString);
  if( !tokenIs(zName, nName, "select") ) return 0;
  z += nSkip + n;
  n = readToken(z, &nSkip, &zName, &nName, &isString);
  if( !tokenIs(zName, nName, zFunc) || isString ) return 0;
  z += nSkip + n;
  n = readToken(z, &nSkip, &zName, &nName, &isString);
  if( z[nSkip]!='(' ) return 0;
  /* The arguments, to the parenthesis that closes them. */
  do{
    n = readToken(z, &nSkip, &zName, &nName, &isString);
    if( n==0 ) return 0;
    if( zName==0 && z[nSkip]=='(' ) depth++;
    if( zName==0 && z[nSkip]==')' ) depth--;
    z += nSkip + n;
  }while( depth>0 );
  n = readToken(z, &nSkip, &zName, &nName, &isString);
  if( tokenIs(zName, nName, "as") ){
    z += nSkip + n;
    n = readToken(z, &nSkip, &zName, &nName, &isString);
    if( zName==0 ) return 0;
  }
  if( zName ){
    z += nSkip + n;
    n = readToken(z, &nSkip, &zName, &nName, &isString);
  }
  if( n>0 && zName==0 && z[nSkip]==';' ){
    z += nSkip + n;
    n = readToken(z, &nSkip, &zName, &nName, &isString);
  }
  return n==0;
}

/* The first of azName[0..nName) that zSql names, as a bare or quoted
** identifier or as a string (which SQLite takes as a name where one is
** expected: INSERT INTO 'x' ...), ASCII case-insensitively; or NULL. */
const char *sqlitetriggers_sql_names(const char *zSql, const char *const *azName, int nName){
  const char *z = zSql, *zToken;
  int n, nSkip, nToken, isString, i;
  while( z && (n = readToken(z, &nSkip, &zToken, &nToken, &isString))>0 ){
    for(i=0; zToken && i<nName; i++){
      if( tokenIs(zToken, nToken, azName[i]) ) return azName[i];
    }
    z += nSkip + n;
  }
  return 0;
}

/*
** SQLITE_OK when no schema but TEMP names a guarded function.  Otherwise
** an error code, with *pzErr (sqlite3_free it) saying where, prefixed by
** zFunc.  A schema that cannot be read is reported the same way: a file
** that cannot be checked is not trusted.
*/
int sqlitetriggers_schema_guard(sqlite3 *db, const char *zFunc, char **pzErr){
  int iDb, rc = SQLITE_OK;
  const char *zDb;
  *pzErr = 0;
  for(iDb=0; rc==SQLITE_OK && (zDb = sqlite3_db_name(db, iDb))!=0; iDb++){
    sqlite3_stmt *pStmt = 0;
    char *zSql;
    /* Every row is read and judged here, in C: a LIKE, lower() or IN in
    ** this query would follow the connection's pragmas
    ** (case_sensitive_like) and the app's own functions of those names. */
    zSql = sqlite3_mprintf("SELECT type, name, sql FROM \"%w\".sqlite_schema", zDb);
    if( zSql==0 ) return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
    sqlite3_free(zSql);
    while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zType = (const char*)sqlite3_column_text(pStmt, 0);
      const char *zName = (const char*)sqlite3_column_text(pStmt, 1);
      const char *zObjSql = (const char*)sqlite3_column_text(pStmt, 2);
      /* TEMP is the app's own: only a hiding name is refused there. */
      const char *zCalled = zObjSql && iDb!=1 ? sqlCallsGuardedFunction(zObjSql, 0) : 0;
      const char *zHidden = hiddenTable(zType, zName);
      if( zHidden ){
        *pzErr = sqlite3_mprintf(
            "%s: refused: %s \"%w\" in database \"%w\" hides the extension's "
            "own %s table (rename or drop it)", zFunc, zType, zName, zDb, zHidden);
        rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
      }else if( zCalled ){
        *pzErr = sqlite3_mprintf(
            "%s: refused: %s \"%w\" in database \"%w\" calls %s(); a database "
            "file must never reach this function (drop the object, or move "
            "it to the TEMP schema)", zFunc, zType, zName ? zName : "", zDb, zCalled);
        rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
      }
    }
    if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt);
    else sqlite3_finalize(pStmt);
    if( rc!=SQLITE_OK && *pzErr==0 && rc!=SQLITE_NOMEM ){
      *pzErr = sqlite3_mprintf("%s: cannot check the schema of database "
                               "\"%w\": %s", zFunc, zDb, sqlite3_errmsg(db));
    }
  }
  return rc;
}

/* The schema's signature (see the top of this file), or NULL when it
** cannot be read (then the scan runs).  log_check.c's check keys its
** cache on it too. */
char *sqlitetriggers_schema_signature(sqlite3 *db){
  sqlite3_str *pOut = sqlite3_str_new(db);
  const char *zDb;
  int iDb, nUsed = 0, nHighwater = 0, rc = SQLITE_OK;
  for(iDb=0; rc==SQLITE_OK && (zDb = sqlite3_db_name(db, iDb))!=0; iDb++){
    sqlite3_stmt *pStmt = 0;
    char *zSql = sqlite3_mprintf("PRAGMA \"%w\".schema_version", zDb);
    rc = zSql ? sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0) : SQLITE_NOMEM;
    sqlite3_free(zSql);
    if( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      /* The file too: a file attached under a name another had, with the
      ** same schema_version, is another schema. */
      sqlite3_str_appendf(pOut, "%Q %Q %lld\n", zDb, sqlite3_db_filename(db, zDb),
                          sqlite3_column_int64(pStmt, 0));
    }else{
      rc = SQLITE_ERROR;
    }
    sqlite3_finalize(pStmt);
  }
  sqlite3_db_status(db, SQLITE_DBSTATUS_SCHEMA_USED, &nUsed, &nHighwater, 0);
  sqlite3_str_appendf(pOut, "%d", nUsed);
  if( rc!=SQLITE_OK ){
    sqlite3_free(sqlite3_str_finish(pOut));
    return 0;
  }
  return sqlite3_str_finish(pOut);
}

/*
** Whether a check made now may be remembered by the schema's signature.
** The signature names each schema_version, which a ROLLBACK (or ROLLBACK
** TO) of a change made in this transaction puts back, so that a later,
** different change (by this connection or another process) can show the
** same signature as a schema that was checked and never committed. A
** check is remembered only when the schema it read is committed (no write
** transaction is open) or when the connection has joined the transaction,
** whose rollbacks forget every remembered check
** (sqlitetriggers_forget_schema_checks(), from callback_tables.c).
*/
int sqlitetriggers_schema_check_rememberable(Connection *p){
  return sqlite3_txn_state(p->db, 0)!=SQLITE_TXN_WRITE || sqlitetriggers_callback_is_enlisted(p);
}

/* The join has enlisted (callback.c): the guard's check that just passed,
** in a write transaction it could not remember then, may be now. */
void sqlitetriggers_schema_guard_joined(Connection *p){
  if( p->zCallSignature && sqlitetriggers_schema_check_rememberable(p) ){
    sqlite3_free(p->zGuardedSignature);
    p->zGuardedSignature = sqlite3_mprintf("%s", p->zCallSignature);
  }
}

/* A rollback: every check remembered by signature goes (see above). */
void sqlitetriggers_forget_schema_checks(Connection *p){
  sqlite3_free(p->zGuardedSignature);
  p->zGuardedSignature = 0;
  sqlite3_free(p->zLogCheckedSignature);
  p->zLogCheckedSignature = 0;
  sqlitetriggers_capture_forget_checks(p);
}

/* The guard for a SQL function whose user data is the Connection: 1 if the
** call may go on, else 0 with the error set on ctx. */
int sqlitetriggers_schema_guard_call(sqlite3_context *ctx, const char *zFunc){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  char *zErr = 0, *zSignature = sqlitetriggers_schema_signature(db);
  int rc;
  /* The caller's own check may reuse it: nothing changes the schema
  ** within one call (change_capture.c takes it). */
  sqlite3_free(p->zCallSignature);
  p->zCallSignature = zSignature ? sqlite3_mprintf("%s", zSignature) : 0;
  if( zSignature && p->zGuardedSignature
   && strcmp(zSignature, p->zGuardedSignature)==0 ){
    sqlite3_free(zSignature);
    return 1;
  }
  rc = sqlitetriggers_schema_guard(db, zFunc, &zErr);
  if( rc==SQLITE_OK ){
    if( sqlitetriggers_schema_check_rememberable(p) ){
      sqlite3_free(p->zGuardedSignature);
      p->zGuardedSignature = zSignature;
    }else{
      sqlite3_free(zSignature);
    }
    return 1;
  }
  sqlite3_free(zSignature);
  if( zErr ){
    sqlite3_result_error(ctx, zErr, -1);
    sqlite3_free(zErr);
    if( rc!=SQLITE_ERROR ) sqlite3_result_error_code(ctx, rc);
  }else if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else{
    sqlite3_result_error_code(ctx, rc);
  }
  return 0;
}
