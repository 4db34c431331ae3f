/*
** change_feed.c: a table's change feed from SQL, for the sqlite3 shell, C
** and Python hosts (Swift builds the same triggers with ChangeFeed).
**
**   sqlitetriggers_change_feed(TABLE)
**   sqlitetriggers_change_feed(TABLE, MODE)
**       Installs, or rebuilds from the live schema, three TEMP triggers on
**       main.TABLE, AFTER INSERT, UPDATE and DELETE, named
**       sqlitetriggers_changes_TABLE_insert (_update, _delete).  Each
**       changed row then calls
**         swift_callback('sqlitetriggers.changes.TABLE', KIND, ...)
**       so committed changes reach swift_callback observers and
**       swift_callback_log, once, in order, never for rolled-back work.
**       The arguments after the name:
**         'insert', new.rowid, new values
**         'update', old.rowid, old values, new.rowid, new values
**         'delete', old.rowid, old values
**       The values are every column SELECT * reads, in table order
**       (MODE 'rows', the default), or only the primary key columns (MODE
**       'keys', for transactions that touch millions of rows: the pending
**       log then holds keys, not whole rows).  A WITHOUT ROWID table gives
**       NULL rowids.  MODE 'off' drops the three triggers.
**
**       Returns the number of triggers installed: 3, or 0 for 'off'.
**       Dropping the table drops the triggers (they are TEMP); call again
**       after a migration that changes the table's columns.  Errors name
**       the function: not a table of the main schema, an unknown MODE, a
**       table name that is NULL or not text.  Direct-only: a schema stored
**       in a database file can never install triggers.
**
**       As for any trigger, a row that INSERT OR REPLACE deletes is
**       reported only when PRAGMA recursive_triggers is ON.
*/
#include "sqlitetriggers_internal.h"

#include <string.h>

/* ", \"new\".\"col\"" for each column of zTable the mode reports. */
static int appendColumns(sqlite3 *db, const char *zTable, int keysOnly,
                         const char *zRow, sqlite3_str *pOut){
  sqlite3_stmt *pStmt = 0;
  int rc = sqlite3_prepare_v2(db, keysOnly
      ? "SELECT name FROM pragma_table_info(?1, 'main') WHERE pk > 0 ORDER BY pk"
      : "SELECT name FROM pragma_table_xinfo(?1, 'main') WHERE hidden <> 1 ORDER BY cid",
      -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *zColumn = (const char*)sqlite3_column_text(pStmt, 0);
    if( zColumn==0 ){ rc = SQLITE_NOMEM; break; }
    sqlite3_str_appendf(pOut, ", \"%w\".\"%w\"", zRow, zColumn);
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  return rc;
}

/* 1 if main.zTable is a table, 0 if not, -1 for an error (out of memory). */
static int isMainTable(sqlite3 *db, const char *zTable, int *pHasRowid){
  sqlite3_stmt *pStmt = 0;
  int found = -1;
  if( sqlite3_prepare_v2(db, "SELECT wr FROM pragma_table_list WHERE schema = 'main'"
                             " AND name = ?1 AND type = 'table'", -1, &pStmt, 0)==SQLITE_OK
   && sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC)==SQLITE_OK ){
    int rc = sqlite3_step(pStmt);
    if( rc==SQLITE_ROW ){
      found = 1;
      *pHasRowid = sqlite3_column_int(pStmt, 0)==0;
    }else if( rc==SQLITE_DONE ){
      found = 0;
    }
  }
  sqlite3_finalize(pStmt);
  return found;
}

/* The DROP and CREATE statements of the three triggers, or 0 (no memory). */
static char *feedSql(sqlite3 *db, const char *zTable, int keysOnly, int hasRowid,
                     int install, int *pRc){
  static const char *aKind[3] = { "insert", "update", "delete" };
  sqlite3_str *pOut = sqlite3_str_new(db);
  int i;
  *pRc = SQLITE_OK;
  for(i=0; i<3 && *pRc==SQLITE_OK; i++){
    sqlite3_str_appendf(pOut,
        "DROP TRIGGER IF EXISTS temp.\"sqlitetriggers_changes_%w_%s\";",
        zTable, aKind[i]);
    if( !install ) continue;
    sqlite3_str_appendf(pOut,
        "CREATE TEMP TRIGGER \"sqlitetriggers_changes_%w_%s\" AFTER %s ON \"main\".\"%w\""
        " FOR EACH ROW BEGIN SELECT swift_callback('sqlitetriggers.changes.%q', '%s'",
        zTable, aKind[i], i==0 ? "INSERT" : i==1 ? "UPDATE" : "DELETE", zTable,
        zTable, aKind[i]);
    if( i>0 ){
      sqlite3_str_appendf(pOut, hasRowid ? ", \"old\".\"rowid\"" : ", NULL");
      *pRc = appendColumns(db, zTable, keysOnly, "old", pOut);
    }
    if( i<2 && *pRc==SQLITE_OK ){
      sqlite3_str_appendf(pOut, hasRowid ? ", \"new\".\"rowid\"" : ", NULL");
      *pRc = appendColumns(db, zTable, keysOnly, "new", pOut);
    }
    sqlite3_str_appendf(pOut, "); END;");
  }
  if( *pRc==SQLITE_OK ) *pRc = sqlite3_str_errcode(pOut);
  if( *pRc!=SQLITE_OK ){
    sqlite3_free(sqlite3_str_finish(pOut));
    return 0;
  }
  return sqlite3_str_finish(pOut);
}

static void changeFeedFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zTable, *zMode = "rows";
  char *zSql, *zErr = 0;
  int hasRowid = 1, found, rc, install, keysOnly;
  if( sqlite3_value_type(argv[0])!=SQLITE_TEXT ){
    sqlite3_result_error(ctx, "sqlitetriggers_change_feed: expects a table name", -1);
    return;
  }
  zTable = (const char*)sqlite3_value_text(argv[0]);
  if( argc>1 ) zMode = (const char*)sqlite3_value_text(argv[1]);
  if( zTable==0 || (argc>1 && zMode==0 && sqlite3_value_type(argv[1])!=SQLITE_NULL) ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if( zMode==0 || (strcmp(zMode, "rows") && strcmp(zMode, "keys") && strcmp(zMode, "off")) ){
    sqlite3_result_error(ctx, "sqlitetriggers_change_feed: MODE is 'rows', 'keys' or 'off'", -1);
    return;
  }
  install = strcmp(zMode, "off")!=0;
  keysOnly = strcmp(zMode, "keys")==0;
  found = isMainTable(db, zTable, &hasRowid);
  if( found<0 ){ sqlite3_result_error_nomem(ctx); return; }
  if( found==0 && install ){
    char *zMsg = sqlite3_mprintf("sqlitetriggers_change_feed: no table \"%s\" in the main schema", zTable);
    if( zMsg ){ sqlite3_result_error(ctx, zMsg, -1); sqlite3_free(zMsg); }
    else sqlite3_result_error_nomem(ctx);
    return;
  }
  zSql = feedSql(db, zTable, keysOnly, hasRowid, install, &rc);
  if( zSql ) rc = sqlite3_exec(db, zSql, 0, 0, &zErr);
  sqlite3_free(zSql);
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
  }else if( rc!=SQLITE_OK ){
    char *zMsg = sqlite3_mprintf("sqlitetriggers_change_feed: %s", zErr ? zErr : sqlite3_errstr(rc));
    if( zMsg ){ sqlite3_result_error(ctx, zMsg, -1); sqlite3_free(zMsg); }
    else sqlite3_result_error_nomem(ctx);
  }else{
    sqlite3_result_int(ctx, install ? 3 : 0);
  }
  sqlite3_free(zErr);
}

int sqlitetriggers_register_change_feed_functions(sqlite3 *db, Connection *p){
  int rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_change_feed", 1,
                                                     SQLITE_DIRECTONLY, p, changeFeedFunc);
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_change_feed", 2,
                                                   SQLITE_DIRECTONLY, p, changeFeedFunc);
  }
  return rc;
}
