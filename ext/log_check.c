/*
** log_check.c: sqlitetriggers_log_check(), which consumers call before
** every batch, and what it and the installer refuse.
**
** SAFETY
**   The log's triggers call no function of ours but the stamp's reads, so
**   a file that plants a log table or trigger makes no one run our code; a
**   forged change, planted as data, names a key whose row the consumer
**   reads for itself.  No object of the file but the log's own may name
**   the log's tables (the check, the installer and every Swift batch
**   refuse the file, naming it: sqlitetriggers_log_find_foreign_writer()),
**   and a mark is a row only sqlitetriggers_log_origin() writes (ORIGINS,
**   log_stamp.c).  An AFTER trigger on a logged table that stops a write
**   with RAISE(FAIL) or RAISE(IGNORE) is refused too, naming RAISE(ABORT):
**   either keeps the row and may skip the log's own trigger of it.
**   Installing is
**   refused when one of the log's objects exists with another definition.
**   The install runs in one transaction (a savepoint inside the caller's),
**   so two processes installing at once end with one log.
*/
#include "log_internal.h"

#include <string.h>

/* 1 when zHave is kind iKind's probe trigger as format 1 wrote it: it logs
** the same, a little slower (appendProbeCall()), until installed again. */
static int logIsEarlierProbe(const LogTable *pTab, int iTable, int iKind, const char *zHave, int *pRc){
  char *zEarlier;
  int isSame;
  if( iKind<3 ) return 0;
  zEarlier = sqlitetriggers_log_trigger_sql(pTab, iTable, iKind, 1, pRc);
  isSame = zEarlier && strcmp(zEarlier, zHave)==0;
  sqlite3_free(zEarlier);
  return isSame;
}

/*
** The first logged table whose triggers differ from what an install would
** write now, as an error message; NULL when all match (*pnTable: how
** many).  *pRc set on error.
*/
static char *logFindStale(sqlite3 *db, int *pnTable, int *pRc){
  sqlite3_stmt *pStmt = 0;
  char *zStale = 0;
  int rc;
  *pnTable = 0;
  rc = sqlite3_prepare_v2(db, "SELECT id, tableName, (SELECT tbl_name FROM sqlite_schema"
      " WHERE type = 'trigger' AND name = 'sqlitetriggers_log_' || id || '_insert'), keyColumns,"
      " tombstones FROM sqlitetriggers_log_tables ORDER BY id", -1, &pStmt, 0);
  while( rc==SQLITE_OK && zStale==0 && sqlite3_step(pStmt)==SQLITE_ROW ){
    int iTable = sqlite3_column_int(pStmt, 0), i;
    const char *zName = (const char*)sqlite3_column_text(pStmt, 1);
    const char *zOn = (const char*)sqlite3_column_text(pStmt, 2);
    LogTable tab;
    char *zErr = 0;
    (*pnTable)++;
    if( zName==0 ){ rc = SQLITE_NOMEM; break; }
    if( zOn && sqlite3_stricmp(zOn, zName)!=0 ){
      zStale = sqlite3_mprintf("the log of \"%s\" is now on \"%s\" (renamed): call "
          "sqlitetriggers_log_install('%q')", zName, zOn, zOn);
      break;
    }
    rc = sqlitetriggers_log_read_table(db, zName, iTable, sqlite3_column_int(pStmt, 4), &tab, &zErr);
    if( rc==SQLITE_ERROR ){
      zStale = sqlite3_mprintf("the log of \"%s\" cannot work: %s", zName, zErr);
      rc = SQLITE_OK;
    }else if( rc==SQLITE_OK ){
      /* The key as registered: consumers read it (RENAME COLUMN rewrites
      ** the triggers, not this). */
      const char *zKeys = (const char*)sqlite3_column_text(pStmt, 3);
      if( zKeys==0 || strcmp(zKeys, sqlite3_str_value(tab.pKeyColumns))!=0 ){
        zStale = sqlite3_mprintf("the key of \"%s\" is now %s, not %s as registered (a column "
            "renamed?): call sqlitetriggers_log_install('%q')", zName,
            sqlite3_str_value(tab.pKeyColumns), zKeys ? zKeys : "NULL", zName);
      }
    }
    for(i=0; i<N_TRIGGER_KINDS && rc==SQLITE_OK && zStale==0; i++){
      char *zWant = sqlitetriggers_log_trigger_sql(&tab, iTable, i, 0, &rc);
      char *zTrigger = sqlite3_mprintf("sqlitetriggers_log_%d_%s", iTable, sqlitetriggers_log_trigger_suffix[i]);
      char *zHave = zTrigger ? sqlitetriggers_log_query_text(db, "SELECT sql FROM sqlite_schema WHERE type = 'trigger'"
                                                " AND name = ?1", zTrigger, &rc) : 0;
      if( zTrigger==0 ) rc = SQLITE_NOMEM;
      if( rc==SQLITE_OK && ((zWant==0)!=(zHave==0)
          || (zWant && strcmp(zWant, zHave)!=0 && !logIsEarlierProbe(&tab, iTable, i, zHave, &rc))) ){
        /* log_upgrade.c: what is true of it (missing, an earlier
        ** SQLiteTriggers', a UNIQUE index or the table changed) and the
        ** remedy. */
        zStale = sqlitetriggers_log_stale_message(db, zName, iTable, i, zHave!=0, &rc);
      }
      sqlite3_free(zWant);
      sqlite3_free(zHave);
      sqlite3_free(zTrigger);
    }
    sqlite3_free(zErr);
    sqlitetriggers_log_table_clear(&tab);
    if( zStale==0 && rc==SQLITE_OK ) continue;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK && zStale==0 && sqlite3_errcode(db)==SQLITE_NOMEM ) rc = SQLITE_NOMEM;
  *pRc = rc;
  return zStale;
}

/* The tables and views whose rows decide what is delivered, uploaded or
** trusted: the log's (whose last row holds its end, THE FORMAT) and the
** persistent rules' registry (SQLiteTriggersGRDB). */
static const char *const azLogState[] = {
  "sqlitetriggers_log", "sqlitetriggers_log_tombstones", /* the two the tables' triggers write */
  "sqlitetriggers_log_tables", "sqlitetriggers_log_origins", "sqlitetriggers_log_consumers",
  "sqlitetriggers_log_meta", "sqlitetriggers_changes", "sqlitetriggers_rules",
};
#define N_LOG_STATE ((int)(sizeof(azLogState)/sizeof(azLogState[0])))
/* How many of azLogState a logged table's own triggers name. */
#define N_LOG_STATE_OF_TABLES 2

/*
** SAFETY: the first object of main that is not the log's own and names
** the log's state (azLogState, or a view that reads it), as an error
** message; NULL when none (*pRc set on error).  Only triggers write, so a
** file whose other triggers never name that state cannot mark an origin,
** move a position, forge a tombstone or edit the rules' registry; an
** index on the log's tables (a UNIQUE one drops marks) or a table whose
** foreign key references them (compaction would fail) is refused too.
** The log's own: the shared objects, which sqlitetriggers_log_ensure_shared() has compared
** with azShared, and a logged table's five triggers
** (sqlitetriggers_log_N_insert ... _replace_update, N registered), which
** write the log and its tombstones only, and whose text logFindStale()
** compares.  TEMP's objects are the app's own.
*/
char *sqlitetriggers_log_find_foreign_writer(sqlite3 *db, int *pRc){
  const char *azName[N_LOG_STATE + 64];
  char *azView[64];
  int nName = N_LOG_STATE, nView = 0, isGrown = 1, i, rc = SQLITE_OK;
  char *zFound = 0;
  memcpy(azName, azLogState, sizeof(azLogState));
  /* The views that read the state, and those that read them, as names. */
  while( rc==SQLITE_OK && isGrown && zFound==0 ){
    sqlite3_stmt *pStmt = 0;
    isGrown = 0;
    rc = sqlite3_prepare_v2(db, "SELECT name, sql FROM main.sqlite_schema WHERE type = 'view'", -1, &pStmt, 0);
    while( rc==SQLITE_OK && sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zView = (const char*)sqlite3_column_text(pStmt, 0);
      const char *zSql = (const char*)sqlite3_column_text(pStmt, 1);
      int isKnown = zView==0;
      for(i=0; !isKnown && i<nName; i++) isKnown = sqlite3_stricmp(zView, azName[i])==0;
      if( isKnown ) continue;
      if( sqlitetriggers_sql_names(zSql, azName, nName)==0 ) continue;
      if( nView==(int)(sizeof(azView)/sizeof(azView[0])) ){
        zFound = sqlite3_mprintf("more than %d views of this file read the durable log's tables: "
                                 "drop some", nView);
        if( zFound==0 ) rc = SQLITE_NOMEM;
        break;
      }
      azView[nView] = sqlite3_mprintf("%s", zView);
      if( azView[nView]==0 ){ rc = SQLITE_NOMEM; break; }
      azName[nName++] = azView[nView++];
      isGrown = 1;
    }
    if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  }
  if( rc==SQLITE_OK && zFound==0 ){
    sqlite3_stmt *pStmt = 0;
    /* Every object but the shared ones: a trigger, an index on the log's
    ** tables (a UNIQUE one makes the origin's INSERT OR IGNORE drop a
    ** mark), a table whose foreign key references them (compaction would
    ** fail).  A logged table's own triggers are exactly those names. */
    rc = sqlite3_prepare_v2(db, "SELECT s.name, s.tbl_name, s.sql, s.type = 'trigger' AND EXISTS (SELECT 1"
        " FROM sqlitetriggers_log_tables AS t, (SELECT 'insert' AS k UNION ALL SELECT 'update' UNION ALL"
        " SELECT 'delete' UNION ALL SELECT 'replace_insert' UNION ALL SELECT 'replace_update') AS x"
        " WHERE s.name = 'sqlitetriggers_log_' || t.id || '_' || x.k), s.type FROM main.sqlite_schema AS s"
        " WHERE s.type IN ('trigger', 'index', 'table') AND s.sql IS NOT NULL", -1, &pStmt, 0);
    while( rc==SQLITE_OK && zFound==0 && sqlite3_step(pStmt)==SQLITE_ROW ){
      const char *zTrigger = (const char*)sqlite3_column_text(pStmt, 0);
      const char *zOn = (const char*)sqlite3_column_text(pStmt, 1);
      const char *zSql = (const char*)sqlite3_column_text(pStmt, 2);
      const char *zType = (const char*)sqlite3_column_text(pStmt, 4);
      const char *zNamed;
      int isTable;
      if( zTrigger==0 || zOn==0 || zType==0 ) continue;
      if( sqlitetriggers_log_shared_sql(zTrigger) ) continue;
      isTable = strcmp(zType, "table")==0;
      /* A table names itself: the rules' registry is not foreign. */
      if( isTable && sqlitetriggers_sql_names(zTrigger, azLogState, N_LOG_STATE) ) continue;
      if( sqlite3_column_int(pStmt, 3) ){
        /* A logged table's trigger: it may write the log and tombstones. */
        zNamed = sqlitetriggers_sql_names(zSql, azName + N_LOG_STATE_OF_TABLES, nName - N_LOG_STATE_OF_TABLES);
      }else{
        zNamed = sqlitetriggers_sql_names(zSql, azName, nName);
        /* RULES' WRITES (log_rules.c): a rule that takes back the change
        ** its own UPDATE of its row logged, in exactly that shape. */
        if( zNamed && strcmp(zType, "trigger")==0
         && sqlitetriggers_log_rule_is_own(db, zOn, zSql, azName, nName, &rc) ){
          zNamed = 0;
        }
      }
      if( zNamed==0 && strcmp(zType, "trigger")==0 && sqlite3_column_int(pStmt, 3)==0 ){
        /* What stops a logged table's own trigger (log_rules.c). */
        const char *zStop = sqlitetriggers_log_trigger_stops_rows(zSql);
        char *zLogged = zStop ? sqlitetriggers_log_query_text(db, "SELECT 1 FROM main.sqlite_schema AS s,"
            " main.sqlitetriggers_log_tables AS t WHERE s.type = 'trigger' AND s.name = 'sqlitetriggers_log_'"
            " || t.id || '_insert' AND s.tbl_name = ?1 COLLATE NOCASE", zOn, &rc) : 0;
        if( zLogged ){
          zFound = sqlite3_mprintf("the trigger \"%s\" on \"%s\" stops a write with RAISE(%s) after the row "
              "is written: the row stays, and the durable log's own trigger of it may never run, so its change "
              "would be lost; end it with RAISE(ABORT, ...) instead, which undoes the whole statement (or make "
              "it a BEFORE trigger)", zTrigger, zOn, zStop);
          if( zFound==0 ) rc = SQLITE_NOMEM;
          sqlite3_free(zLogged);
        }
      }
      if( zNamed ){
        zFound = sqlite3_mprintf("the %s \"%s\"%s%s%s is not the durable log's, and reaches "
            "its state (\"%s\"), which decides what is delivered and uploaded: drop the %s (only "
            "the log's own objects may name the log's tables)", zType, zTrigger, isTable ? "" : " on \"",
            isTable ? "" : zOn, isTable ? "" : "\"", zNamed, zType);
        if( zFound==0 ) rc = SQLITE_NOMEM;
      }
    }
    if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  }
  for(i=0; i<nView; i++) sqlite3_free(azView[i]);
  if( rc!=SQLITE_OK ){ sqlite3_free(zFound); zFound = 0; }
  *pRc = rc;
  return zFound;
}

/*
** sqlitetriggers_log_check().  Consumers call it before every batch, so a
** check that passed is remembered with the schema's signature
** (schema_guard.c): what it judges is the schema (the shared objects, the
** triggers of the file, the tables' triggers), and any change to it, by
** any connection, changes the signature.  A repeat costs a few PRAGMAs.
** Inside a write transaction it joins it first, so that a rollback is
** seen (sqlitetriggers_schema_check_rememberable()).
*/
void sqlitetriggers_log_check_func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char zFunc[] = "sqlitetriggers_log_check";
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  char *zStale = 0, *zErr = 0, *zExists, *zSignature = sqlitetriggers_schema_signature(db);
  int rc = SQLITE_OK, nTable = 0;
  (void)argc; (void)argv;
  if( zSignature && p->zLogCheckedSignature && strcmp(zSignature, p->zLogCheckedSignature)==0 ){
    sqlite3_free(zSignature);
    sqlite3_result_int(ctx, p->nLogCheckedTables);
    return;
  }
  zExists = sqlitetriggers_log_query_text(db, "SELECT 1 FROM sqlite_schema WHERE name = 'sqlitetriggers_log_tables'", 0, &rc);
  if( zExists ){
    rc = sqlitetriggers_log_ensure_shared(db, 0, &zErr);
    if( rc==SQLITE_OK ) zStale = sqlitetriggers_log_find_foreign_writer(db, &rc);
    if( rc==SQLITE_OK && zStale==0 ) zStale = logFindStale(db, &nTable, &rc);
  }
  if( rc==SQLITE_OK && zStale ){
    sqlitetriggers_result_error(ctx, zFunc, zStale);
  }else if( sqlitetriggers_log_report(ctx, zFunc, rc, zErr ? zErr : rc==SQLITE_NOMEM ? 0 : sqlite3_errmsg(db)) ){
    sqlite3_result_int(ctx, nTable);
    /* The signature after the check: creating a shared object that was
    ** missing changed the schema. */
    sqlite3_free(zSignature);
    zSignature = 0;
    /* A consumer's batch runs in a write transaction: joined, its
    ** rollback would be seen, and the check can be remembered (a full
    ** check costs about half a millisecond, a join a prepared INSERT). */
    if( sqlite3_txn_state(db, 0)==SQLITE_TXN_WRITE ) sqlitetriggers_callback_enlist_quietly(p);
    if( sqlitetriggers_schema_check_rememberable(p) ){
      zSignature = sqlitetriggers_schema_signature(db);
      sqlite3_free(p->zLogCheckedSignature);
      p->zLogCheckedSignature = zSignature;
      p->nLogCheckedTables = nTable;
      zSignature = 0;
    }
  }
  sqlite3_free(zSignature);
  sqlite3_free(zExists);
  sqlite3_free(zStale);
  sqlite3_free(zErr);
}
