/*
** durable_log.c: a durable change log in the database file, written by
** plain SQL triggers, so that every writer records its changes (a process
** that never loaded this extension, the sqlite3 shell, Python's sqlite3
** module, a widget) and read by any number of consumers, each with its own
** position, in any process.
**
** The TEMP change feeds (change_capture.c) see only the connection that
** installed them, exactly, with values.  This log sees every process, and
** records which row of which table changed and how; a consumer reads the
** row's values when it reads the change.  Only this file's installer needs
** the extension: the log's triggers call no function of ours, and reading,
** advancing and compacting are plain SQL too.
**
** THE FORMAT (written once; SQLiteTriggersGRDB's consumer reads the same)
**   In the main schema, created by the first install:
**
**   sqlitetriggers_log(id, tableId, kind, rowKey, tx)
**       One row per row change.  id: the INTEGER PRIMARY KEY, one more than
**       the last row's; the last row always stays (compaction keeps it,
**       and guard triggers refuse deleting it and changing any id), so ids
**       only grow and never come back, and the log's end is its last row's
**       id, read with a seek (AUTOINCREMENT, format 2's, wrote
**       sqlite_sequence, a page more per commit).  Writers are serialized, so ids are commit order,
**       and one transaction's rows are contiguous.
**       tableId: sqlitetriggers_log_tables.id, or 0 with kind 0: a
**       placeholder, which names no row and which a consumer skips (the
**       view leaves it out): a rule's own write of its row, taken back
**       (RULES' WRITES, log_rules.c), an uninstalled table's last change,
**       or format 2's end past its last row.  kind: 1 insert, 2 update,
**       3 delete, 4 and 5 conflict (a row a write conflicted with on a
**       UNIQUE constraint, which the write deletes if it replaces: see the
**       probes below).  rowKey: the row's primary key, the column's value for a
**       one-column key, json_array(...) of the key's columns in key order
**       for a composite one (a blob in it as {"blob":"<lowercase hex>"},
**       a REAL as {"real":[M,E]}, exactly M * 2^E: see appendExactReal()).
**       An update that changes the key is a delete of
**       the old key and an insert of the new.  tx: the transaction's stamp,
**       or NULL (plain SQL cannot tell one transaction from the next; see
**       TRANSACTIONS).  Nothing else: each column more would cost every
**       write of every logged table (two NULL columns: 0.2 to 0.8% more
**       instructions per row), so what only some need has tables of its
**       own, below.
**   sqlitetriggers_log_origins(tx, origin, since)
**       The origin of a transaction that has one (ORIGINS), under its
**       stamp; since: the log's end when it was set, before every change
**       of the transaction.
**   sqlitetriggers_log_tombstones(id, time, deletedRow)
**       A deleted row's last values and the time of its deletion, under
**       the id of its change, for tables installed with tombstones
**       (TOMBSTONES).
**   sqlitetriggers_log_tables(id, tableName, keyColumns, tombstones)
**       The logged tables: the name installed (the triggers follow a
**       RENAME TO; install again to rename it here), the key's columns
**       as a JSON array, and 1 when its log keeps tombstones, else 0.
**   sqlitetriggers_log_consumers(name, position)
**       One row per consumer: the id of the last change it has processed.
**       Inserted with a NULL position, a consumer starts at the end of the
**       log.  A position only moves forward, and never past the end
**       (RAISE(ABORT) otherwise), by UPDATE, INSERT or INSERT OR REPLACE.
**   sqlitetriggers_log_meta(id, formatVersion, maxBacklog, compactedThrough)
**       One row.  Changes up to compactedThrough are gone.  A consumer
**       whose position is below it fell behind: its next changes are lost,
**       and it must read the tables afresh, then move its position to the
**       end.  maxBacklog (default 1,000,000) is how many changes the log
**       keeps for a consumer that does not read.
**   sqlitetriggers_changes(id, tableName, kind, rowKey, tx, origin, time,
**       deletedRow): a view of the log with table names and kinds as text,
**       its origin and tombstone joined, which consumers read.
**
**   Format 2 kept ids with AUTOINCREMENT: installing on a file of format 2
**   copies the log into this table (in the installer's transaction), with
**   a placeholder at format 2's end when its last id was compacted away,
**   and makes the consumers' triggers, the compaction triggers, the view
**   and the end guard afresh (they read the end).  Until then the check
**   refuses, naming that remedy.
**
**   Format 1 (before origins and tombstones) lacked the two tables and
**   sqlitetriggers_log_tables.tombstones; installing on a file of format
**   1 adds the column with ALTER TABLE, which writes the very definition
**   below, and makes the view, the compaction triggers and the new tables
**   afresh; the tables' triggers are those of format 1.  Until then the
**   check refuses, naming that remedy.  Format 1 wrote a REAL in a
**   composite key as 17 decimal digits (or Inf): the upgrade rewrites
**   those keys as this format writes them, and so does each later install
**   while a table keeps format 1's triggers (log_upgrade.c).
**
** THE FILES
**   This file: the format, the shared objects, installing and
**   uninstalling, and the registration.  log_triggers.c: a table's
**   triggers (the per-table part of the format, TOMBSTONES).
**   log_stamp.c: TRANSACTIONS and ORIGINS.  log_rules.c: RULES' WRITES,
**   a persistent rule's stamp of its row as part of that row's change
**   (sqlitetriggers_log_rule_sql(TABLE, SQL) gives a rule's text as the
**   log wants it).  log_check.c:
**   sqlitetriggers_log_check() and SAFETY.  log_upgrade.c: format 1's
**   upgrade.  log_wakeup.c: waking readers.  log_internal.h: what they
**   share.
**
** CONSUMING (plain SQL; SQLiteTriggersGRDB does the same)
**   In one read transaction: the consumer's position; the changes after it
**   (SELECT * FROM sqlitetriggers_changes WHERE id > :position ORDER BY id
**   LIMIT :n); for each changed key, the row as it is now (absent: deleted).
**   Apply them, then UPDATE sqlitetriggers_log_consumers SET position =
**   :lastId.  Applied in the same write transaction as the position, each
**   change is processed once, even after a crash; applied elsewhere first
**   (a server, another file), a crash before the position moves repeats the
**   batch: at least once, so apply by key, idempotently.  A change is a
**   hint that a key changed; the row read in the same transaction is the
**   truth, so an extra hint (the probes above) costs a lookup and nothing
**   else, and values are those of the time of reading, not of the change.
**
** COMPACTION
**   Every change of a consumer's position (and every new or deleted
**   consumer) moves compactedThrough to the lowest position of the
**   consumers that have not fallen behind, or to maxBacklog changes before
**   the end if that is further, and deletes the changes up to it, their
**   tombstones, and the origins of transactions none of whose changes are
**   left: set before compactedThrough ("since"), and not the transaction
**   of the first change left (its changes are contiguous), nor the one
**   compacting.  So the
**   log holds what the slowest live consumer has not read, at most
**   maxBacklog changes past the last compaction; writes alone never
**   compact (that would cost every write).  Before the first consumer the
**   log keeps every change; the first consumer starts at the end and lets
**   them all go.
**
** THE FUNCTIONS
**   sqlitetriggers_log_install(TABLE [, MODE])
**       Installs, or installs again, the log of main.TABLE and the shared
**       objects; returns the table's id.  MODE 'keys' logs keys,
**       'tombstones' keys and TOMBSTONES; without MODE, a table installed
**       before keeps its mode, a new one logs keys.  All or nothing, in a transaction
**       of its own (BEGIN IMMEDIATE) or a savepoint of the caller's; out of
**       memory can leave that transaction open, as SQLite's own
**       SQLITE_NOMEM can: roll it back.  Refused: no such table in main, a
**       view or virtual table, a table without a declared PRIMARY KEY (its
**       rowids change on VACUUM), a UNIQUE index on an expression or with
**       a WHERE clause (what REPLACE deletes through it cannot be probed).
**       A table renamed since its install keeps its id; its new name is
**       written to sqlitetriggers_log_tables.
**   sqlitetriggers_log_uninstall(TABLE)
**       Drops TABLE's triggers and its registration and changes; 1, or 0
**       when it was not logged.
**   sqlitetriggers_log_origin(ORIGIN)
**       Sets the current transaction's origin (ORIGINS): text without NUL,
**       or NULL for local; returns it.  Refused outside a transaction, in
**       a file without a log of this format, and unless the one statement
**       running is nothing but the call, SELECT
**       sqlitetriggers_log_origin(...) (logCalledByTheApp(); a file whose
**       schema reaches the function is named, schema_guard.c).
**   sqlitetriggers_log_origin()
**       The current transaction's origin, or NULL.
**   sqlitetriggers_log_transaction()
**       The current transaction's stamp, the tx its log rows carry (drawn
**       now if none is yet); refused outside a transaction.
**   sqlitetriggers_log_stamp()
**       1: every connection with the extension stamps (TRANSACTIONS); kept
**       for hosts written against earlier versions.
**   sqlitetriggers_log_rule_sql(TABLE, SQL)
**       A rule's text as the log wants it (RULES' WRITES, log_rules.c).
**   sqlitetriggers_log_check()
**       The number of logged tables, or an error naming the first table
**       whose triggers are not what an install would write now (dropped,
**       the table recreated by a migration, renamed, a UNIQUE index added),
**       and the remedy: install it again.  Consumers call it before
**       reading.
*/
#include "log_internal.h"

#include <stdlib.h>
#include <string.h>

#define LOG_FORMAT_VERSION 3
#define LOG_DEFAULT_MAX_BACKLOG 1000000

#define LOG_ORIGIN_REFUSED_TEXT "only sqlitetriggers_log_origin() marks a transaction's origin"
#define LOG_ORIGIN_REFUSED \
  "SELECT RAISE(ABORT, 'sqlitetriggers_log: only sqlitetriggers_log_origin() marks a " \
  "transaction''s origin'); END"

/* COMPACTION's statements.  An origin goes with the last change of its
** transaction (whose changes are contiguous, after "since"), never while
** its transaction is open. */
#define LOG_COMPACT \
  "UPDATE \"sqlitetriggers_log_meta\" SET \"compactedThrough\" = max(\"compactedThrough\", " \
  "coalesce((SELECT min(c.\"position\") FROM \"sqlitetriggers_log_consumers\" AS c " \
  "WHERE c.\"position\" >= \"sqlitetriggers_log_meta\".\"compactedThrough\"), " LOG_END "), " \
  LOG_END " - \"maxBacklog\"); " \
  "DELETE FROM \"sqlitetriggers_log\" WHERE \"id\" <= " \
  "(SELECT \"compactedThrough\" FROM \"sqlitetriggers_log_meta\") AND \"id\" < " LOG_END "; " \
  "DELETE FROM \"sqlitetriggers_log_tombstones\" WHERE \"id\" <= " \
  "(SELECT \"compactedThrough\" FROM \"sqlitetriggers_log_meta\"); " \
  "DELETE FROM \"sqlitetriggers_log_origins\" WHERE \"since\" < " \
  "(SELECT \"compactedThrough\" FROM \"sqlitetriggers_log_meta\") AND \"tx\" IS NOT " \
  "(SELECT \"tx\" FROM \"sqlitetriggers_log\" ORDER BY \"id\" LIMIT 1) AND \"tx\" IS NOT " \
  LOG_STAMP_SQL ";"

/* The shared objects, in creation order: the name, then the definition as
** sqlite_schema keeps it (install compares it to refuse foreign objects). */
static const char *const azShared[] = {
  "sqlitetriggers_log",
  "CREATE TABLE \"sqlitetriggers_log\"(\"id\" INTEGER PRIMARY KEY, "
  "\"tableId\" INTEGER NOT NULL, \"kind\" INTEGER NOT NULL, \"rowKey\", \"tx\" INTEGER)",

  "sqlitetriggers_log_tables",
  "CREATE TABLE \"sqlitetriggers_log_tables\"(\"id\" INTEGER PRIMARY KEY, "
  "\"tableName\" TEXT NOT NULL, \"keyColumns\" TEXT NOT NULL, "
  "\"tombstones\" INTEGER NOT NULL DEFAULT 0)",

  /* ORIGINS: a row is written only by sqlitetriggers_log_origin(), for the
  ** transaction it runs in (a CHECK: coded inline, where a trigger would
  ** be a program compiled into the mark's INSERT, 2% of a marked
  ** transaction of 100 changes; it names every column in a term SQLite
  ** cannot drop, since it skips a CHECK that names no column an UPDATE
  ** changes, and drops "x NOT NULL" for a NOT NULL column), and deleted by
  ** it or by
  ** COMPACTION (the guard trigger below). */
  "sqlitetriggers_log_origins",
  "CREATE TABLE \"sqlitetriggers_log_origins\"(\"tx\" INTEGER PRIMARY KEY, \"origin\" TEXT NOT NULL, "
  "\"since\" INTEGER NOT NULL, CONSTRAINT \"" LOG_ORIGIN_REFUSED_TEXT "\" CHECK (\"tx\" IS "
  LOG_ORIGIN_WRITER_SQL " AND \"origin\" <> '' AND \"since\" >= 0))",

  "sqlitetriggers_log_tombstones",
  "CREATE TABLE \"sqlitetriggers_log_tombstones\"(\"id\" INTEGER PRIMARY KEY, \"time\" TEXT NOT NULL, "
  "\"deletedRow\" TEXT NOT NULL)",

  "sqlitetriggers_log_consumers",
  "CREATE TABLE \"sqlitetriggers_log_consumers\"(\"name\" TEXT PRIMARY KEY NOT NULL, "
  "\"position\" INTEGER) WITHOUT ROWID",

  "sqlitetriggers_log_meta",
  "CREATE TABLE \"sqlitetriggers_log_meta\"(\"id\" INTEGER PRIMARY KEY CHECK (\"id\" = 1), "
  "\"formatVersion\" INTEGER NOT NULL, \"maxBacklog\" INTEGER NOT NULL, "
  "\"compactedThrough\" INTEGER NOT NULL)",

  "sqlitetriggers_changes",
  "CREATE VIEW \"sqlitetriggers_changes\" AS SELECT l.\"id\" AS \"id\", "
  "t.\"tableName\" AS \"tableName\", CASE l.\"kind\" WHEN 1 THEN 'insert' "
  "WHEN 2 THEN 'update' ELSE 'delete' END AS \"kind\", l.\"rowKey\" AS \"rowKey\", "
  "l.\"tx\" AS \"tx\", o.\"origin\" AS \"origin\", d.\"time\" AS \"time\", "
  "d.\"deletedRow\" AS \"deletedRow\" FROM \"sqlitetriggers_log\" AS l "
  "LEFT JOIN \"sqlitetriggers_log_tables\" AS t ON t.\"id\" = l.\"tableId\" "
  "LEFT JOIN \"sqlitetriggers_log_origins\" AS o ON o.\"tx\" = l.\"tx\" "
  "LEFT JOIN \"sqlitetriggers_log_tombstones\" AS d ON d.\"id\" = l.\"id\" WHERE l.\"kind\" <> 0",

  /* A new consumer starts at the end of the log. */
  "sqlitetriggers_log_consumer_start",
  "CREATE TRIGGER \"sqlitetriggers_log_consumer_start\" AFTER INSERT ON "
  "\"sqlitetriggers_log_consumers\" WHEN new.\"position\" IS NULL BEGIN "
  "UPDATE \"sqlitetriggers_log_consumers\" SET \"position\" = " LOG_END
  " WHERE \"name\" = new.\"name\"; END",

  "sqlitetriggers_log_consumer_guard",
  "CREATE TRIGGER \"sqlitetriggers_log_consumer_guard\" BEFORE UPDATE OF \"position\" ON "
  "\"sqlitetriggers_log_consumers\" BEGIN "
  "SELECT RAISE(ABORT, 'sqlitetriggers_log: a consumer''s position only moves forward') "
  "WHERE new.\"position\" IS NULL OR new.\"position\" < old.\"position\"; "
  "SELECT RAISE(ABORT, 'sqlitetriggers_log: a consumer''s position cannot pass the end of the log') "
  "WHERE new.\"position\" > " LOG_END "; END",

  /* A consumer inserted with a position (or written over by INSERT OR
  ** REPLACE, which deletes the old row without a DELETE trigger) obeys
  ** the same rules as a move. */
  "sqlitetriggers_log_consumer_insert_guard",
  "CREATE TRIGGER \"sqlitetriggers_log_consumer_insert_guard\" BEFORE INSERT ON "
  "\"sqlitetriggers_log_consumers\" WHEN new.\"position\" IS NOT NULL BEGIN "
  "SELECT RAISE(ABORT, 'sqlitetriggers_log: a consumer''s position only moves forward') "
  "WHERE new.\"position\" < (SELECT c.\"position\" FROM \"sqlitetriggers_log_consumers\" AS c "
  "WHERE c.\"name\" = new.\"name\"); "
  "SELECT RAISE(ABORT, 'sqlitetriggers_log: a consumer''s position cannot pass the end of the log') "
  "WHERE new.\"position\" > " LOG_END "; END",

  /* COMPACTION (see above): after each move, and each deletion. */
  "sqlitetriggers_log_compact_update",
  "CREATE TRIGGER \"sqlitetriggers_log_compact_update\" AFTER UPDATE OF \"position\" ON "
  "\"sqlitetriggers_log_consumers\" BEGIN " LOG_COMPACT " END",

  "sqlitetriggers_log_compact_delete",
  "CREATE TRIGGER \"sqlitetriggers_log_compact_delete\" AFTER DELETE ON "
  "\"sqlitetriggers_log_consumers\" BEGIN " LOG_COMPACT " END",

  /* ORIGINS: a mark still in the log is deleted only by
  ** sqlitetriggers_log_origin(); COMPACTION deletes only origins set
  ** before compactedThrough. */
  /* THE FORMAT: the last row never goes and no id changes, so ids never
  ** come back (under consumers' positions, or beside a tombstone of the
  ** id's earlier row): compaction keeps the last row, uninstalling and a
  ** rule's statement (log_rules.c) make it a placeholder, and a DELETE or
  ** an UPDATE of ids by hand is refused. */
  "sqlitetriggers_log_end_guard",
  "CREATE TRIGGER \"sqlitetriggers_log_end_guard\" BEFORE DELETE ON \"sqlitetriggers_log\" "
  "WHEN old.\"id\" = " LOG_END " BEGIN "
  "SELECT RAISE(ABORT, 'sqlitetriggers_log: the log''s last row stays: its id is the log''s end, "
  "from which consumers count, and ids never come back (compaction deletes the rest)'); END",

  "sqlitetriggers_log_id_guard",
  "CREATE TRIGGER \"sqlitetriggers_log_id_guard\" BEFORE UPDATE OF \"id\" ON \"sqlitetriggers_log\" BEGIN "
  "SELECT RAISE(ABORT, 'sqlitetriggers_log: a change''s id never changes (ids are the log''s order, "
  "and consumers'' positions count them)'); END",

  /* ORIGINS: a mark sqlitetriggers_log_origin() writes has "since" at the
  ** log's end (an earlier SQLiteTriggers, which read the end from
  ** sqlite_sequence, would write 0, and compaction would take the mark
  ** early: its mark is refused, loudly).  Every other write is the CHECK's
  ** to refuse, which INSERT OR IGNORE drops without failing the write
  ** (SAFETY: a file's trigger planting marks). */
  "sqlitetriggers_log_origin_since_guard",
  "CREATE TRIGGER \"sqlitetriggers_log_origin_since_guard\" BEFORE INSERT ON \"sqlitetriggers_log_origins\" "
  "WHEN new.\"tx\" IS " LOG_ORIGIN_WRITER_SQL " AND new.\"since\" IS NOT " LOG_END " BEGIN " LOG_ORIGIN_REFUSED,

  "sqlitetriggers_log_origin_delete_guard",
  "CREATE TRIGGER \"sqlitetriggers_log_origin_delete_guard\" BEFORE DELETE ON "
  "\"sqlitetriggers_log_origins\" WHEN old.\"since\" >= (SELECT \"compactedThrough\" FROM "
  "\"sqlitetriggers_log_meta\") AND old.\"tx\" IS NOT " LOG_ORIGIN_WRITER_SQL " BEGIN " LOG_ORIGIN_REFUSED,
};
#define N_SHARED ((int)(sizeof(azShared)/sizeof(azShared[0]))/2)

/* THE FORMAT's upgrade from format 1: ALTER TABLE ADD COLUMN appends the
** column to the stored definition, which then reads as azShared's; the
** view and the compaction triggers changed, and sqlitetriggers_log_ensure_shared() makes
** them again, with the new tables. */
#define LOG_UPGRADE_FROM_1 \
  "ALTER TABLE \"sqlitetriggers_log_tables\" ADD COLUMN \"tombstones\" INTEGER NOT NULL DEFAULT 0; " \
  "DROP VIEW \"sqlitetriggers_changes\"; " \
  "DROP TRIGGER \"sqlitetriggers_log_compact_update\"; " \
  "DROP TRIGGER \"sqlitetriggers_log_compact_delete\"; " \
  "UPDATE \"sqlitetriggers_log_meta\" SET \"formatVersion\" = 2;"

/* THE FORMAT's upgrade from format 2, in the installer's transaction: the
** log copied into a table without AUTOINCREMENT (none can be dropped by
** ALTER), its end kept by a placeholder where format 2's last id was
** compacted away; the objects that read the end made again by
** sqlitetriggers_log_ensure_shared() (after format 1's upgrade, which
** dropped the view and the compaction triggers already).  The tables'
** triggers, and rules that name the log, name it by name: they write the
** new table. */
#define LOG_UPGRADE_FROM_2 \
  "DROP VIEW IF EXISTS \"sqlitetriggers_changes\"; " \
  "DROP TRIGGER IF EXISTS \"sqlitetriggers_log_consumer_start\"; " \
  "DROP TRIGGER IF EXISTS \"sqlitetriggers_log_consumer_guard\"; " \
  "DROP TRIGGER IF EXISTS \"sqlitetriggers_log_consumer_insert_guard\"; " \
  "DROP TRIGGER IF EXISTS \"sqlitetriggers_log_compact_update\"; " \
  "DROP TRIGGER IF EXISTS \"sqlitetriggers_log_compact_delete\"; " \
  "CREATE TEMP TABLE \"sqlitetriggers_log_format2\" AS SELECT * FROM main.\"sqlitetriggers_log\"; " \
  "CREATE TEMP TABLE \"sqlitetriggers_log_format2_end\" AS SELECT coalesce((SELECT \"seq\" FROM " \
  "main.\"sqlite_sequence\" WHERE \"name\" = 'sqlitetriggers_log'), 0) AS \"seq\"; " \
  "DROP TABLE main.\"sqlitetriggers_log\"; "

/* After the table is made again (azShared's definition). */
#define LOG_UPGRADE_FROM_2_FILL \
  "INSERT INTO main.\"sqlitetriggers_log\" SELECT * FROM temp.\"sqlitetriggers_log_format2\" ORDER BY \"id\"; " \
  "INSERT INTO main.\"sqlitetriggers_log\"(\"id\", \"tableId\", \"kind\") SELECT \"seq\", 0, 0 " \
  "FROM temp.\"sqlitetriggers_log_format2_end\" WHERE \"seq\" > " LOG_END "; " \
  "DROP TABLE temp.\"sqlitetriggers_log_format2\"; " \
  "DROP TABLE temp.\"sqlitetriggers_log_format2_end\"; " \
  "UPDATE \"sqlitetriggers_log_meta\" SET \"formatVersion\" = 3;"

/* ---- small helpers ----------------------------------------------------- */


/* SQLite's sqlite_compileoption_get() exists (TRANSACTIONS).  Linked into
** an app, it does, or the app would not have linked. */
static int hasCompileOptionFunctions(void){
#ifdef SQLITE_CORE
  return 1;
#else
  return sqlite3_api->compileoption_get!=0;
#endif
}

/* The first column of zSql's first row as a fresh string (NULL when no row
** or a NULL); *pRc set on error. */
char *sqlitetriggers_log_query_text(sqlite3 *db, const char *zSql, const char *zArg, int *pRc){
  sqlite3_stmt *pStmt = 0;
  char *zOut = 0;
  int rc;
  if( *pRc!=SQLITE_OK ) return 0;
  rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_OK && zArg ) rc = sqlite3_bind_text(pStmt, 1, zArg, -1, SQLITE_STATIC);
  if( rc==SQLITE_OK ){
    rc = sqlite3_step(pStmt);
    if( rc==SQLITE_ROW ){
      const char *z = (const char*)sqlite3_column_text(pStmt, 0);
      rc = SQLITE_OK;
      if( z ){
        zOut = sqlite3_mprintf("%s", z);
        if( zOut==0 ) rc = SQLITE_NOMEM;
      }else if( sqlite3_errcode(db)==SQLITE_NOMEM ){
        rc = SQLITE_NOMEM;
      }
    }else if( rc==SQLITE_DONE ){
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(pStmt);
  *pRc = rc;
  return zOut;
}

/* Runs zSql (which may be NULL: nothing to do) unless *pRc is set. */
static void logExec(sqlite3 *db, const char *zSql, int *pRc, char **pzErr){
  if( *pRc!=SQLITE_OK || zSql==0 ) return;
  *pRc = sqlite3_exec(db, zSql, 0, 0, pzErr);
}

/* The definition azShared holds for zName. */
const char *sqlitetriggers_log_shared_sql(const char *zName){
  int i;
  for(i=0; i<N_SHARED; i++){
    if( strcmp(azShared[2*i], zName)==0 ) return azShared[2*i+1];
  }
  return 0;
}

/*
** The shared objects: created where absent, refused where different.  A
** log of format 1 (THE FORMAT) is upgraded when isInstall, else refused,
** naming the remedy.
*/
int sqlitetriggers_log_ensure_shared(sqlite3 *db, int isInstall, char **pzErr){
  int rc = SQLITE_OK, i, isUpgrade = 0;
  char *zMeta = sqlitetriggers_log_query_text(db, "SELECT sql FROM sqlite_schema WHERE name = 'sqlitetriggers_log_meta'",
                             0, &rc);
  if( zMeta && strcmp(zMeta, sqlitetriggers_log_shared_sql("sqlitetriggers_log_meta"))==0 ){
    char *zVersion = sqlitetriggers_log_query_text(db, "SELECT formatVersion FROM sqlitetriggers_log_meta", 0, &rc);
    if( rc==SQLITE_OK && zVersion && (strcmp(zVersion, "1")==0 || strcmp(zVersion, "2")==0) ){
      if( isInstall ){
        if( zVersion[0]=='1' ){
          logExec(db, LOG_UPGRADE_FROM_1, &rc, pzErr);
          isUpgrade = 1;
        }
        logExec(db, LOG_UPGRADE_FROM_2, &rc, pzErr);
        logExec(db, sqlitetriggers_log_shared_sql("sqlitetriggers_log"), &rc, pzErr);
        logExec(db, LOG_UPGRADE_FROM_2_FILL, &rc, pzErr);
      }else{
        *pzErr = sqlite3_mprintf("the durable log in this file is of format %s (an earlier "
            "SQLiteTriggers): install any logged table again (sqlitetriggers_log_install) to "
            "upgrade it to format %d", zVersion, LOG_FORMAT_VERSION);
        rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
      }
    }
    sqlite3_free(zVersion);
  }
  sqlite3_free(zMeta);
  for(i=0; i<N_SHARED && rc==SQLITE_OK; i++){
    const char *zName = azShared[2*i], *zSql = azShared[2*i+1];
    char *zFound = sqlitetriggers_log_query_text(db, "SELECT sql FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE",
                                zName, &rc);
    if( rc!=SQLITE_OK ) break;
    if( zFound==0 ){
      logExec(db, zSql, &rc, pzErr);
      if( rc==SQLITE_OK && strcmp(zName, "sqlitetriggers_log_meta")==0 ){
        char *zInsert = sqlite3_mprintf("INSERT INTO \"sqlitetriggers_log_meta\" VALUES (1, %d, %d, 0)",
                                        LOG_FORMAT_VERSION, LOG_DEFAULT_MAX_BACKLOG);
        if( zInsert==0 ) rc = SQLITE_NOMEM;
        logExec(db, zInsert, &rc, pzErr);
        sqlite3_free(zInsert);
      }
    }else if( strcmp(zFound, zSql)!=0 ){
      *pzErr = sqlite3_mprintf("\"%s\" exists in this file with another definition (not "
          "this version's log, or not a log at all): rename or drop it first", zName);
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
    sqlite3_free(zFound);
  }
  if( rc==SQLITE_OK ){
    char *zCount = sqlitetriggers_log_query_text(db, "SELECT count(*) || ' ' || coalesce(max(formatVersion), 0)"
                                    " FROM sqlitetriggers_log_meta", 0, &rc);
    char zWant[32];
    sqlite3_snprintf(sizeof(zWant), zWant, "1 %d", LOG_FORMAT_VERSION);
    if( rc==SQLITE_OK && (zCount==0 || strcmp(zCount, zWant)!=0) ){
      *pzErr = sqlite3_mprintf("sqlitetriggers_log_meta must hold one row of format %d",
                               LOG_FORMAT_VERSION);
      rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
    }
    sqlite3_free(zCount);
  }
  /* log_upgrade.c: format 1's REALs in composite keys rewritten exactly,
  ** every table's on the upgrade, then those still on format 1's triggers
  ** (none once each table is installed again). */
  if( rc==SQLITE_OK && isInstall ) rc = sqlitetriggers_log_upgrade_keys(db, isUpgrade, pzErr);
  return rc;
}

/* The id of the log whose insert trigger is on main.zTable, or of its
** registration under that name; 0 when neither exists.  A registration of
** that name whose triggers are on another table (it was renamed, and a new
** table took its name) is first renamed to follow its triggers, so that
** installing the new table never takes the renamed one's log away. */
static int logTableId(sqlite3 *db, const char *zTable, int *pRc){
  char *zId;
  int iId;
  if( *pRc==SQLITE_OK ){
    char *zFollow = sqlite3_mprintf(
        "UPDATE sqlitetriggers_log_tables SET tableName = (SELECT tbl_name FROM sqlite_schema"
        " WHERE type = 'trigger' AND name = 'sqlitetriggers_log_' || id || '_insert')"
        " WHERE tableName = %Q COLLATE NOCASE AND (SELECT tbl_name FROM sqlite_schema"
        " WHERE type = 'trigger' AND name = 'sqlitetriggers_log_' || id || '_insert') <> %Q COLLATE NOCASE",
        zTable, zTable);
    *pRc = zFollow ? sqlite3_exec(db, zFollow, 0, 0, 0) : SQLITE_NOMEM;
    sqlite3_free(zFollow);
  }
  zId = sqlitetriggers_log_query_text(db,
      "SELECT coalesce((SELECT CAST(substr(name, 20, length(name) - 26) AS INTEGER)"
      " FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE"
      " AND name GLOB 'sqlitetriggers_log_[0-9]*_insert'),"
      " (SELECT id FROM sqlitetriggers_log_tables WHERE tableName = ?1 COLLATE NOCASE), 0)",
      zTable, pRc);
  iId = zId ? atoi(zId) : 0;
  sqlite3_free(zId);
  return iId;
}

/* Drops the triggers of log iTable. */
static void logDropTriggers(sqlite3 *db, int iTable, int *pRc, char **pzErr){
  int i;
  for(i=0; i<N_TRIGGER_KINDS && *pRc==SQLITE_OK; i++){
    char *zDrop = sqlite3_mprintf("DROP TRIGGER IF EXISTS main.\"sqlitetriggers_log_%d_%s\"",
                                  iTable, sqlitetriggers_log_trigger_suffix[i]);
    if( zDrop==0 ) *pRc = SQLITE_NOMEM;
    logExec(db, zDrop, pRc, pzErr);
    sqlite3_free(zDrop);
  }
}

/* ---- transactions of our own ------------------------------------------- */

/* Opens the function's unit of work: a transaction of its own in autocommit
** mode (BEGIN IMMEDIATE: two installers queue instead of racing), else a
** savepoint inside the caller's. */
static int logBegin(sqlite3 *db, int *pIsOwn){
  *pIsOwn = sqlite3_get_autocommit(db);
  return sqlite3_exec(db, *pIsOwn ? "BEGIN IMMEDIATE" : "SAVEPOINT sqlitetriggers_log", 0, 0, 0);
}

/*
** Closes it: commits when rc is SQLITE_OK, else rolls back.  Out of memory
** inside a statement, SQLite refuses every further statement until the
** outermost one ends, so the rollback itself can fail: *pzErr (when still
** NULL) then says what the caller must roll back, though SQLite reports
** plain "out of memory" instead while its memory failure stands.  As after
** any SQLITE_NOMEM, sqlite3_get_autocommit() tells the caller.
*/
static int logEnd(sqlite3 *db, int isOwn, int rc, char **pzErr){
  int rcUndo;
  if( rc==SQLITE_OK ){
    rc = sqlite3_exec(db, isOwn ? "COMMIT" : "RELEASE sqlitetriggers_log", 0, 0, 0);
    if( rc==SQLITE_OK ) return SQLITE_OK;
  }
  if( isOwn ){
    rcUndo = sqlite3_get_autocommit(db) ? SQLITE_OK : sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
  }else{
    rcUndo = sqlite3_exec(db, "ROLLBACK TO sqlitetriggers_log; RELEASE sqlitetriggers_log", 0, 0, 0);
  }
  if( rcUndo!=SQLITE_OK && *pzErr==0 ){
    *pzErr = sqlite3_mprintf("%s, and the part done could not be undone here: %s", sqlite3_errstr(rc),
        isOwn ? "this connection is still in the transaction the function began; ROLLBACK it"
              : "the transaction holds part of it; roll the transaction back");
  }
  return rc;
}

/* Reports rc (and zErr) as the function's error; returns whether rc was OK. */
int sqlitetriggers_log_report(sqlite3_context *ctx, const char *zFunc, int rc, const char *zErr){
  if( rc==SQLITE_OK ) return 1;
  if( rc==SQLITE_NOMEM && zErr==0 ){ sqlite3_result_error_nomem(ctx); return 0; }
  sqlitetriggers_result_error(ctx, zFunc, zErr ? zErr : sqlite3_errstr(rc));
  if( (rc & 0xff)==SQLITE_BUSY || (rc & 0xff)==SQLITE_NOMEM ) sqlite3_result_error_code(ctx, rc);
  return 0;
}

/* ---- the functions ----------------------------------------------------- */

/* The table name argument, or 0 after setting the error. */
static const char *logTableArgument(sqlite3_context *ctx, const char *zFunc, sqlite3_value *pArg){
  return sqlitetriggers_name_argument(ctx, zFunc, pArg, "a table name");
}

/* The modes of sqlitetriggers_log_install(TABLE, MODE). */
#define LOG_MODE_KEEP        0   /* no MODE: as installed before, else keys */
#define LOG_MODE_KEYS        1
#define LOG_MODE_TOMBSTONES  2

/*
** Installs the log of main.zTable, in eMode, inside the caller's unit of
** work: its id in *piTable.  SQLITE_ERROR with a refusal in *pzErr, or
** another code.
*/
static int logInstallTable(sqlite3 *db, const char *zTable, int eMode, int *piTable, char **pzErr){
  LogTable tab;
  int rc = SQLITE_OK, iTable, i, isTombstones = eMode==LOG_MODE_TOMBSTONES;
  memset(&tab, 0, sizeof(tab));
  iTable = logTableId(db, zTable, &rc);
  if( rc==SQLITE_OK && iTable==0 ){
    char *zNext = sqlitetriggers_log_query_text(db, "SELECT coalesce(max(id), 0) + 1 FROM sqlitetriggers_log_tables", 0, &rc);
    iTable = zNext ? atoi(zNext) : 0;
    sqlite3_free(zNext);
  }else if( rc==SQLITE_OK && eMode==LOG_MODE_KEEP ){
    char *zWas = sqlite3_mprintf("SELECT tombstones FROM sqlitetriggers_log_tables WHERE id = %d", iTable);
    char *zMode = zWas ? sqlitetriggers_log_query_text(db, zWas, 0, &rc) : 0;
    if( zWas==0 ) rc = SQLITE_NOMEM;
    isTombstones = zMode && zMode[0]=='1';
    sqlite3_free(zMode);
    sqlite3_free(zWas);
  }
  if( rc==SQLITE_OK ) rc = sqlitetriggers_log_read_table(db, zTable, iTable, isTombstones, &tab, pzErr);
  if( rc==SQLITE_OK ) logDropTriggers(db, iTable, &rc, pzErr);
  for(i=0; i<N_TRIGGER_KINDS && rc==SQLITE_OK; i++){
    char *zSql = sqlitetriggers_log_trigger_sql(&tab, iTable, i, 0, &rc);
    logExec(db, zSql, &rc, pzErr);
    sqlite3_free(zSql);
  }
  if( rc==SQLITE_OK ){
    sqlite3_stmt *pStmt = 0;
    rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO sqlitetriggers_log_tables(id, tableName, keyColumns,"
                                " tombstones) VALUES (?1, ?2, ?3, ?4)", -1, &pStmt, 0);
    if( rc==SQLITE_OK ){
      sqlite3_bind_int(pStmt, 1, iTable);
      sqlite3_bind_text(pStmt, 2, tab.zName, -1, SQLITE_STATIC);
      sqlite3_bind_text(pStmt, 3, sqlite3_str_value(tab.pKeyColumns), -1, SQLITE_STATIC);
      sqlite3_bind_int(pStmt, 4, isTombstones);
      sqlite3_step(pStmt);
      rc = sqlite3_finalize(pStmt);
    }
  }
  /* RULES' WRITES: the table's persistent rules that stamp their row. */
  if( rc==SQLITE_OK ) sqlitetriggers_log_rewrite_rules(db, tab.zName, 1, &rc, pzErr);
  sqlitetriggers_log_table_clear(&tab);
  *piTable = iTable;
  return rc;
}

static void logInstallFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char zFunc[] = "sqlitetriggers_log_install";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zTable;
  char *zErr = 0;
  int rc, isOwn, iTable = 0, eMode = LOG_MODE_KEEP;
  if( !sqlitetriggers_schema_guard_call(ctx, zFunc) ) return;
  zTable = logTableArgument(ctx, zFunc, argv[0]);
  if( zTable==0 ) return;
  if( argc>1 ){
    const char *zMode = sqlitetriggers_name_argument(ctx, zFunc, argv[1], "a mode ('keys' or 'tombstones')");
    if( zMode==0 ) return;
    if( sqlite3_stricmp(zMode, "keys")==0 ){
      eMode = LOG_MODE_KEYS;
    }else if( sqlite3_stricmp(zMode, "tombstones")==0 ){
      eMode = LOG_MODE_TOMBSTONES;
    }else{
      char *zMsg = sqlite3_mprintf("no mode '%s': 'keys' logs the keys of changed rows, 'tombstones' "
                                   "also the values of deleted ones and the time of each change", zMode);
      sqlitetriggers_result_error(ctx, zFunc, zMsg ? zMsg : "no such mode");
      sqlite3_free(zMsg);
      return;
    }
  }
  rc = logBegin(db, &isOwn);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_log_ensure_shared(db, 1, &zErr);
  if( rc==SQLITE_OK && !hasCompileOptionFunctions() ){
    zErr = sqlite3_mprintf("this SQLite omits sqlite_compileoption_get() (SQLITE_OMIT_COMPILEOPTION_DIAGS), "
                           "which the log's triggers call to stamp transactions: use a SQLite built with it");
    rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    zErr = sqlitetriggers_log_find_foreign_writer(db, &rc);
    if( zErr ) rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ) rc = logInstallTable(db, zTable, eMode, &iTable, &zErr);
  if( rc!=SQLITE_OK && zErr==0 && rc!=SQLITE_NOMEM ){
    zErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  }
  rc = logEnd(db, isOwn, rc, &zErr);
  if( sqlitetriggers_log_report(ctx, zFunc, rc, zErr) ) sqlite3_result_int(ctx, iTable);
  sqlite3_free(zErr);
}

static void logUninstallFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char zFunc[] = "sqlitetriggers_log_uninstall";
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  const char *zTable;
  char *zErr = 0, *zExists;
  int rc, isOwn, iTable = 0;
  (void)argc;
  if( !sqlitetriggers_schema_guard_call(ctx, zFunc) ) return;
  zTable = logTableArgument(ctx, zFunc, argv[0]);
  if( zTable==0 ) return;
  rc = logBegin(db, &isOwn);
  zExists = sqlitetriggers_log_query_text(db, "SELECT 1 FROM sqlite_schema WHERE name = 'sqlitetriggers_log_tables'", 0, &rc);
  if( zExists ) iTable = logTableId(db, zTable, &rc);
  if( iTable>0 ){
    /* Its last change, when it is the log's last row, stays as a
    ** placeholder: its id is the log's end (THE FORMAT). */
    char *zDelete = sqlite3_mprintf("DELETE FROM sqlitetriggers_log_tombstones WHERE id IN"
                                    " (SELECT id FROM sqlitetriggers_log WHERE tableId = %d);"
                                    "UPDATE sqlitetriggers_log SET tableId = 0, kind = 0, rowKey = NULL, tx = NULL"
                                    " WHERE tableId = %d AND id = " LOG_END ";"
                                    "DELETE FROM sqlitetriggers_log WHERE tableId = %d;"
                                    "DELETE FROM sqlitetriggers_log_tables WHERE id = %d;", iTable, iTable, iTable, iTable);
    if( zDelete==0 && rc==SQLITE_OK ) rc = SQLITE_NOMEM;
    sqlitetriggers_log_rewrite_rules(db, zTable, 0, &rc, &zErr);
    logDropTriggers(db, iTable, &rc, &zErr);
    logExec(db, zDelete, &rc, &zErr);
    sqlite3_free(zDelete);
  }
  sqlite3_free(zExists);
  rc = logEnd(db, isOwn, rc, &zErr);
  if( sqlitetriggers_log_report(ctx, zFunc, rc, zErr) ) sqlite3_result_int(ctx, iTable>0);
  sqlite3_free(zErr);
}

int sqlitetriggers_register_durable_log_functions(sqlite3 *db, Connection *p){
  static const struct {
    const char *zName;
    int nArg;
    void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
  } aFunc[] = {
    { "sqlitetriggers_log_install", 1, logInstallFunc },
    { "sqlitetriggers_log_install", 2, logInstallFunc },
    { "sqlitetriggers_log_origin", 0, sqlitetriggers_log_origin_func },
    { "sqlitetriggers_log_origin", 1, sqlitetriggers_log_origin_func },
    { "sqlitetriggers_log_transaction", 0, sqlitetriggers_log_transaction_func },
    { "sqlitetriggers_log_uninstall", 1, logUninstallFunc },
    { "sqlitetriggers_log_check", 0, sqlitetriggers_log_check_func },
    { "sqlitetriggers_log_stamp", 0, sqlitetriggers_log_stamp_func },
    { "sqlitetriggers_log_rule_sql", 2, sqlitetriggers_log_rule_sql_func },
  };
  int rc = SQLITE_OK, i;
  for(i=0; rc==SQLITE_OK && i<(int)(sizeof(aFunc)/sizeof(aFunc[0])); i++){
    rc = sqlitetriggers_connection_create_function(db, aFunc[i].zName, aFunc[i].nArg,
                                                   SQLITE_DIRECTONLY, p, aFunc[i].xFunc);
  }
  /* Not direct-only: the log's triggers in the file call it.  Innocuous:
  ** it only reads the stamp (TRANSACTIONS), so that it also runs where
  ** PRAGMA trusted_schema is OFF, as SQLite's own does. */
  if( rc==SQLITE_OK && hasCompileOptionFunctions() ){
    rc = sqlitetriggers_connection_create_function(db, "sqlite_compileoption_get", 1,
                                                   SQLITE_INNOCUOUS, p, sqlitetriggers_log_compileoption_func);
  }
  return rc;
}

