/*
** change_feed.c: a table's change feed from SQL, for the sqlite3 shell, C
** and Python hosts, and the SQL that SQLiteTriggersGRDB installs for its
** own feeds: one feed per table, wherever it is installed.
**
**   sqlitetriggers_change_feed(TABLE)
**   sqlitetriggers_change_feed(TABLE, MODE)
**       Installs, or installs again, the change capture of main.TABLE
**       (change_capture.c, whose top comment gives the event format): its
**       three TEMP triggers, BEFORE INSERT, UPDATE and DELETE, named
**       sqlitetriggers_changes_TABLE_insert (_update, _delete).  From then
**       on every committed change of the table is an event named
**       'sqlitetriggers.changes.TABLE' (TABLE as sqlite_schema spells it),
**       for swift_callback observers and swift_callback_log: once, in the
**       order SQLite made the changes, never for rolled-back work, whatever
**       wrote the row, and whatever PRAGMA recursive_triggers says.  MODE
**       'rows' passes every column, 'keys' only the primary key's (for
**       transactions that touch millions of rows: the pending log then
**       holds keys, not whole rows); both need the preupdate hook.  'net'
**       gives each transaction's net change per row instead, read by
**       triggers alone (change_net.c, which adds two AFTER triggers,
**       _inserted and _updated, and a TEMP state table).  Without MODE:
**       'rows' where the host gives the hook, else 'net'.  'off' drops
**       the capture.
**
**       Returns the mode installed ('rows', 'keys', 'net'), or 'off'.  All
**       or nothing: an error leaves no trigger of the feed behind, except
**       when memory runs out between two of them (a nested statement
**       cannot clean up then); a capture missing a trigger refuses every
**       write to its table, naming it, until installed again or turned off.
**       Installing again inside a transaction whose changes a 'net'
**       capture holds is refused (its state would go).  Dropping the
**       table drops the triggers (they are TEMP).  Errors name the
**       function: not a table of the main schema, an unknown MODE, a table
**       name that is NULL or not text, and the refusals of
**       change_capture.c (no preupdate hook for 'rows' or 'keys', VIRTUAL
**       generated columns in 'rows' mode, a table too wide for an event)
**       and change_net.c (a UNIQUE index on an expression).  Direct-only:
**       a schema stored in a database file can never install triggers.
**
**   sqlitetriggers_change_feed_mode(TABLE)
**       The mode of the capture installed on main.TABLE, 'rows', 'keys' or
**       'net', or NULL when none is (read from its insert trigger, as
**       written by this file).
**
**   sqlitetriggers_change_feed_sql(TABLE, MODE)
**       The statements that sqlitetriggers_change_feed runs to install
**       (CREATE TEMP TRIGGER, and for 'net' its state table), checked as it
**       checks them, for hosts that keep triggers themselves
**       (SQLiteTriggersGRDB's rule keeper); MODE 'rows', 'keys' or 'net'.
*/
#include "sqlitetriggers_internal.h"

#include <string.h>

static const char *const aKind[3] = { "insert", "update", "delete" };

/* The DROP statements of zTable's capture, in any mode, or 0 (no memory). */
static char *feedDropSql(const char *zTable){
  char *zNet = sqlitetriggers_net_drop_sql(zTable);
  char *zDrop = zNet ? sqlite3_mprintf(
      "DROP TRIGGER IF EXISTS temp.\"sqlitetriggers_changes_%w_insert\";"
      "DROP TRIGGER IF EXISTS temp.\"sqlitetriggers_changes_%w_update\";"
      "DROP TRIGGER IF EXISTS temp.\"sqlitetriggers_changes_%w_delete\";%s",
      zTable, zTable, zTable, zNet) : 0;
  sqlite3_free(zNet);
  return zDrop;
}

/* The CREATE statements, or 0 with *pRc (and *pzErr for SQLITE_ERROR).
** zTable is the canonical name. */
static char *feedCreateSql(sqlite3 *db, const char *zTable, const char *zMode,
                           int *pRc, char **pzErr){
  sqlite3_str *pOut = sqlite3_str_new(0);
  int i;
  *pRc = SQLITE_OK;
  if( strcmp(zMode, "net")==0 ){
    *pRc = sqlitetriggers_net_install_sql(db, zTable, pOut, pzErr);
    if( *pRc!=SQLITE_OK ){
      sqlite3_free(sqlite3_str_finish(pOut));
      return 0;
    }
  }
  /* The hook's probe (change_capture.c, HOOK OWNERSHIP): a TEMP table of
  ** one BLOB row, made once per connection. */
  if( strcmp(zMode, "net")!=0 ){
    sqlite3_str_appendall(pOut, "CREATE TEMP TABLE IF NOT EXISTS \"sqlitetriggers_hook_probe\""
                                " AS SELECT zeroblob(1) AS b;\n");
  }
  for(i=0; i<3 && strcmp(zMode, "net")!=0; i++){
    sqlite3_str_appendf(pOut,
        "CREATE TEMP TRIGGER \"sqlitetriggers_changes_%w_%s\" BEFORE %s ON \"main\".\"%w\""
        " FOR EACH ROW BEGIN SELECT sqlitetriggers_change_capture('%q', '%s', '%s'); END;\n",
        zTable, aKind[i], i==0 ? "INSERT" : i==1 ? "UPDATE" : "DELETE", zTable,
        zTable, zMode, aKind[i]);
  }
  if( sqlite3_str_errcode(pOut) ){
    sqlite3_free(sqlite3_str_finish(pOut));
    *pRc = SQLITE_NOMEM;
    return 0;
  }
  return sqlite3_str_finish(pOut);
}

/*
** The arguments checked: the canonical table name (to be freed) and the
** mode, or 0 after setting the error.  MODE 'off' is taken only when
** allowOff, and then the table need not exist.
*/
static char *feedArguments(sqlite3_context *ctx, const char *zFunc, int argc,
                           sqlite3_value **argv, int allowOff, const char **pzMode){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  const char *zTable, *zMode = 0;
  char *zCanonical = 0, *zErr = 0;
  int rc, hasHook = sqlitetriggers_capture_has_hook(p);
  if( (zTable = sqlitetriggers_name_argument(ctx, zFunc, argv[0], "a table name"))==0 ) return 0;
  /* Without MODE: the exact capture where the host gives the hook, net
  ** changes per transaction where it does not. */
  if( argc>1 && sqlite3_value_type(argv[1])==SQLITE_TEXT ){
    if( (zMode = sqlitetriggers_name_argument(ctx, zFunc, argv[1], "MODE"))==0 ) return 0;
  }else if( argc>1 ){
    zMode = 0;
  }else{
    zMode = hasHook ? "rows" : "net";
  }
  if( hasHook<0 ){
    sqlite3_result_error_nomem(ctx);
    return 0;
  }
  if( zMode==0 || (strcmp(zMode, "rows") && strcmp(zMode, "keys") && strcmp(zMode, "net")
                   && (!allowOff || strcmp(zMode, "off"))) ){
    sqlitetriggers_result_error(ctx, zFunc, allowOff ? "MODE is 'rows', 'keys', 'net' or 'off'"
                                                     : "MODE is 'rows', 'keys' or 'net'");
    return 0;
  }
  *pzMode = zMode;
  if( strcmp(zMode, "off")==0 ){
    zCanonical = sqlite3_mprintf("%s", zTable);
    if( zCanonical==0 ) sqlite3_result_error_nomem(ctx);
    return zCanonical;
  }
  rc = sqlitetriggers_capture_check(p, zTable, strcmp(zMode, "keys")==0 ? CAPTURE_KEYS
                                    : strcmp(zMode, "net")==0 ? CAPTURE_NET : CAPTURE_ROWS,
                                    &zCanonical, &zErr);
  if( rc==SQLITE_OK ) return zCanonical;
  if( rc==SQLITE_NOMEM ) sqlite3_result_error_nomem(ctx);
  else sqlitetriggers_result_error(ctx, zFunc, zErr ? zErr : sqlite3_errstr(rc));
  sqlite3_free(zErr);
  sqlite3_free(zCanonical);
  return 0;
}

static void changeFeedFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char zFunc[] = "sqlitetriggers_change_feed";
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zMode = 0;
  char *zTable;
  char *zDrop, *zCreate = 0, *zErr = 0;
  int rc, install;
  if( !sqlitetriggers_schema_guard_call(ctx, zFunc) ) return;
  zTable = feedArguments(ctx, zFunc, argc, argv, 1, &zMode);
  if( zTable==0 ) return;
  install = strcmp(zMode, "off")!=0;
  rc = SQLITE_OK;
  if( install && sqlitetriggers_capture_net_is_open(p, zTable) ){
    /* Dropping its state would lose the transaction's changes so far. */
    zErr = sqlite3_mprintf("the feed of \"%s\" captured changes in this open transaction: "
                           "install it again after the transaction ends", zTable);
    rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  zDrop = feedDropSql(zTable);
  if( rc==SQLITE_OK && install ) zCreate = feedCreateSql(db, zTable, zMode, &rc, &zErr);
  if( rc!=SQLITE_OK ){
    /* reported below */
  }else if( zDrop==0 ){
    rc = SQLITE_NOMEM;
  }else{
    rc = sqlite3_exec(db, zDrop, 0, 0, &zErr);
    if( rc==SQLITE_OK && install ) rc = sqlite3_exec(db, zCreate, 0, 0, &zErr);
    /* A trigger created before the failure goes too (when memory allows:
    ** see the top of the file). */
    if( rc!=SQLITE_OK && install ) sqlite3_exec(db, zDrop, 0, 0, 0);
  }
  if( rc==SQLITE_OK && !install ) sqlitetriggers_capture_forget(p, zTable);
  if( rc==SQLITE_NOMEM ) sqlite3_result_error_nomem(ctx);
  else if( rc!=SQLITE_OK ) sqlitetriggers_result_error(ctx, zFunc, zErr ? zErr : sqlite3_errstr(rc));
  else sqlite3_result_text(ctx, zMode, -1, SQLITE_TRANSIENT);
  sqlite3_free(zErr);
  sqlite3_free(zDrop);
  sqlite3_free(zCreate);
  sqlite3_free(zTable);
}

static void changeFeedModeFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zTable = sqlitetriggers_name_argument(ctx, "sqlitetriggers_change_feed_mode",
                                                    argv[0], "a table name");
  sqlite3_stmt *pStmt = 0;
  int rc;
  (void)argc;
  if( zTable==0 ) return;
  /* feedCreateSql() writes the mode as the capture call's second argument. */
  rc = sqlite3_prepare_v2(db, "SELECT CASE WHEN instr(sql, ', ''keys'', ''insert'')') THEN 'keys'"
                              " WHEN instr(sql, ', ''net'', ''insert'')') THEN 'net' ELSE 'rows' END"
                              " FROM temp.sqlite_master WHERE type = 'trigger'"
                              " AND name = 'sqlitetriggers_changes_' || ?1 || '_insert'", -1, &pStmt, 0);
  if( rc==SQLITE_OK ) rc = sqlite3_bind_text(pStmt, 1, zTable, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_result_first_column(ctx, pStmt);
  sqlite3_finalize(pStmt);
  if( rc==SQLITE_NOMEM ) sqlite3_result_error_nomem(ctx);
  else if( rc!=SQLITE_OK ) sqlitetriggers_result_error(ctx, "sqlitetriggers_change_feed_mode", sqlite3_errmsg(db));
}

static void changeFeedSqlFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  const char *zMode = 0;
  char *zTable = feedArguments(ctx, "sqlitetriggers_change_feed_sql", argc, argv, 0, &zMode);
  char *zCreate, *zErr = 0;
  int rc;
  if( zTable==0 ) return;
  zCreate = feedCreateSql(sqlite3_context_db_handle(ctx), zTable, zMode, &rc, &zErr);
  if( zCreate ) sqlite3_result_text(ctx, zCreate, -1, sqlite3_free);
  else if( rc==SQLITE_NOMEM ) sqlite3_result_error_nomem(ctx);
  else sqlitetriggers_result_error(ctx, "sqlitetriggers_change_feed_sql", zErr ? zErr : sqlite3_errstr(rc));
  sqlite3_free(zErr);
  sqlite3_free(zTable);
}

int sqlitetriggers_register_change_feed_functions(sqlite3 *db, Connection *p){
  int rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_change_feed", 1,
                                                     SQLITE_DIRECTONLY, p, changeFeedFunc);
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_change_feed", 2,
                                                   SQLITE_DIRECTONLY, p, changeFeedFunc);
  }
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_change_feed_sql", 2,
                                                   SQLITE_DIRECTONLY, p, changeFeedSqlFunc);
  }
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "sqlitetriggers_change_feed_mode", 1,
                                                   SQLITE_DIRECTONLY, p, changeFeedModeFunc);
  }
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register_capture_functions(db, p);
  return rc;
}
