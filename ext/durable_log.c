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
**       One row per row change.  id: AUTOINCREMENT, so ids only grow and
**       never come back after compaction; writers are serialized, so ids
**       are commit order, and one transaction's rows are contiguous.
**       tableId: sqlitetriggers_log_tables.id.  kind: 1 insert, 2 update,
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
** TRANSACTIONS
**   SQL has no transaction identity, so a trigger in plain SQL cannot stamp
**   one by itself.  The log's triggers write tx as
**       sqlite_compileoption_get(-7316)
**   which is SQLite's own function, and NULL for that argument, on a
**   connection without this extension: such a writer leaves tx NULL, and
**   consumers take such a change as a transaction of its own ("transaction
**   unknown").  Every connection with the extension overrides that one
**   function (every argument but this one and the probes' -7317 gives
**   SQLite's own result), and the override returns the transaction's
**   stamp: 63 random bits drawn when the transaction first writes a log
**   row, so one transaction's rows share a tx that no other transaction's
**   rows have (as UUIDs are unique: a repeat is a 2^-63 chance), with no
**   extra statement per change and no read of the log.  The override joins the transaction (as
**   swift_callback() does) to learn where it ends, and after it commits the
**   log's readers in other processes are woken (log_wakeup.c).  A hostile
**   file that calls the override elsewhere only reads that same stamp
**   (or the probes' kind, appendProbeCall()).
**   One more argument serves TOMBSTONES: -7319, the time; SQLite's own
**   function answers NULL to it.  Persistent rules (SQLiteTriggersGRDB's
**   RuleSet.installPersistently) stamp with the same expression, so every
**   writer of the file shares this one clock where the extension is.
**   A host whose SQLite omits the compile-option functions
**   (SQLITE_OMIT_COMPILEOPTION_DIAGS) could not run the triggers: install
**   refuses there.
**
** ORIGINS
**   A transaction may say where its writes come from ("server", for the
**   writes a sync downloads), so that a consumer can leave them out
**   instead of sending them back.  sqlitetriggers_log_origin(ORIGIN), run
**   by the app anywhere inside the transaction, writes a row of
**   sqlitetriggers_log_origins under the transaction's stamp: one
**   statement per marked transaction, nothing per change, and nothing for
**   a transaction without an origin.  Being data, it rolls back with the
**   savepoint that set it, and it is gone with the last change of its
**   transaction (COMPACTION).  A writer without the extension has no
**   stamp, so its changes are local.  No object of a file can set an
**   origin: the function is direct-only, and serves only the one
**   statement running, when it is nothing but the call
**   (logCalledByTheApp()), so that no object of a file can reach it and no
**   failure after the call can leave its mark behind.
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
**
** SAFETY
**   The log's triggers call no function of ours but the stamp's reads, so
**   a file that plants a log table or trigger makes no one run our code; a
**   forged change, planted as data, names a key whose row the consumer
**   reads for itself.  No object of the file but the log's own may name
**   the log's tables (the check, the installer and every Swift batch
**   refuse the file, naming it: logFindForeignWriter()), and a mark is a
**   row only sqlitetriggers_log_origin() writes (ORIGINS).  Installing is
**   refused when one of the log's objects exists with another definition.
**   The install runs in one transaction (a savepoint inside the caller's),
**   so two processes installing at once end with one log.
**
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
**   sqlitetriggers_log_check()
**       The number of logged tables, or an error naming the first table
**       whose triggers are not what an install would write now (dropped,
**       the table recreated by a migration, renamed, a UNIQUE index added),
**       and the remedy: install it again.  Consumers call it before
**       reading.
*/
#include "sqlitetriggers_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOG_FORMAT_VERSION 2
#define LOG_DEFAULT_MAX_BACKLOG 1000000

/* The end of the log: the last id given, even when compacted away.  The
** shared triggers keep this text (format 1 wrote it, and an upgrade
** compares them); LOG_END_FAST is the same value without the aggregate,
** cheaper to compile where a statement is prepared per call (a mark). */
#define LOG_END "(SELECT coalesce(max(\"seq\"), 0) FROM \"sqlite_sequence\" " \
                "WHERE \"name\" = 'sqlitetriggers_log')"
#define LOG_END_FAST "coalesce((SELECT \"seq\" FROM \"sqlite_sequence\" " \
                     "WHERE \"name\" = 'sqlitetriggers_log'), 0)"

/* TRANSACTIONS: the expression the log's triggers write as tx. */
#define LOG_STAMP_ARGUMENT -7316
#define LOG_QUOTE(x) #x
#define LOG_QUOTE_VALUE(x) LOG_QUOTE(x)
#define LOG_STAMP_SQL "sqlite_compileoption_get(" LOG_QUOTE_VALUE(LOG_STAMP_ARGUMENT) ")"

/* ORIGINS: the stamp of the transaction sqlitetriggers_log_origin() is
** marking while it writes the origins table, else NULL (as without the
** extension): the table's guards let nothing else mark or unmark a
** transaction that is still in the log. */
#define LOG_ORIGIN_WRITER_ARGUMENT -7318
#define LOG_ORIGIN_WRITER_SQL \
  "sqlite_compileoption_get(" LOG_QUOTE_VALUE(LOG_ORIGIN_WRITER_ARGUMENT) ")"
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
  "(SELECT \"compactedThrough\" FROM \"sqlitetriggers_log_meta\"); " \
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
  "CREATE TABLE \"sqlitetriggers_log\"(\"id\" INTEGER PRIMARY KEY AUTOINCREMENT, "
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
  "LEFT JOIN \"sqlitetriggers_log_tombstones\" AS d ON d.\"id\" = l.\"id\"",

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
  "sqlitetriggers_log_origin_delete_guard",
  "CREATE TRIGGER \"sqlitetriggers_log_origin_delete_guard\" BEFORE DELETE ON "
  "\"sqlitetriggers_log_origins\" WHEN old.\"since\" >= (SELECT \"compactedThrough\" FROM "
  "\"sqlitetriggers_log_meta\") AND old.\"tx\" IS NOT " LOG_ORIGIN_WRITER_SQL " BEGIN " LOG_ORIGIN_REFUSED,
};
#define N_SHARED ((int)(sizeof(azShared)/sizeof(azShared[0]))/2)

/* THE FORMAT's upgrade from format 1: ALTER TABLE ADD COLUMN appends the
** column to the stored definition, which then reads as azShared's; the
** view and the compaction triggers changed, and logEnsureShared() makes
** them again, with the new tables. */
#define LOG_UPGRADE_FROM_1 \
  "ALTER TABLE \"sqlitetriggers_log_tables\" ADD COLUMN \"tombstones\" INTEGER NOT NULL DEFAULT 0; " \
  "DROP VIEW \"sqlitetriggers_changes\"; " \
  "DROP TRIGGER \"sqlitetriggers_log_compact_update\"; " \
  "DROP TRIGGER \"sqlitetriggers_log_compact_delete\"; " \
  "UPDATE \"sqlitetriggers_log_meta\" SET \"formatVersion\" = 2;"

/* THE FORMAT's probes: their kind, 5 when the writer's REPLACE deletions
** fire DELETE triggers (recursive_triggers ON, known only to connections
** with this extension), else 4; written by appendProbeCall(). */
#define LOG_PROBE_MODE_ARGUMENT -7317

/* How every trigger of the log starts its row. */
#define LOG_INSERT "INSERT INTO \"sqlitetriggers_log\"(\"tableId\", \"kind\", \"rowKey\", \"tx\") "

/* TOMBSTONES: the time of a deletion, and how its row starts. */
#define LOG_TIME_ARGUMENT -7319
#define LOG_TOMBSTONE_INSERT "INSERT INTO \"sqlitetriggers_log_tombstones\"(\"id\", \"time\", \"deletedRow\") "
/* After a conflict probe: its FROM, which reads nothing when the probe
** logged no row (appendProbe). */
#define LOG_TOMBSTONE_PROBED "FROM (SELECT 1 WHERE changes() > 0) AS g CROSS JOIN "
#define LOG_TIME_SQL "coalesce(sqlite_compileoption_get(" LOG_QUOTE_VALUE(LOG_TIME_ARGUMENT) \
  "), strftime('%Y-%m-%d %H:%M:%f', 'now'))"

/* ---- small helpers ----------------------------------------------------- */

static char *logFindForeignWriter(sqlite3 *db, int *pRc);

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
static char *logQueryText(sqlite3 *db, const char *zSql, const char *zArg, int *pRc){
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

typedef struct LogTable LogTable;
struct LogTable {
  char *zName;                /* as sqlite_schema spells it */
  sqlite3_str *pKeyColumns;   /* JSON array */
  char **azKey;               /* the key's columns, in key order */
  int nKey;
  int isTombstones;           /* TOMBSTONES: deletions keep their values */
  int isOutOfMemory;          /* a text could not be built */
  char **azColumn;            /* with tombstones: every column, in order, */
  unsigned char *aMayBeReal;  /* and whether it can hold a REAL */
  int nColumn;
  /* apProbe[isEarlier][isUpdate]: the BEFORE INSERT and BEFORE UPDATE
  ** probe statements, or empty; isEarlier, as format 1 wrote them
  ** (appendProbeCall()). */
  sqlite3_str *apProbe[2][2];
  int nProbe;
};

static void logTableClear(LogTable *pTab){
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
** sqlite_compileoption_get() answers '-0' for it (compileOptionOrStampFunc);
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
      ** logReadTable() reports it. */
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
static int logReadTable(sqlite3 *db, const char *zTable, int iTable, int isTombstones,
                        LogTable *pTab, char **pzErr){
  sqlite3_stmt *pStmt = 0;
  char *zType = 0;
  int rc = SQLITE_OK, i;
  memset(pTab, 0, sizeof(*pTab));
  pTab->isTombstones = isTombstones;
  pTab->pKeyColumns = sqlite3_str_new(0);
  for(i=0; i<4; i++) pTab->apProbe[i/2][i%2] = sqlite3_str_new(0);
  pTab->zName = logQueryText(db, "SELECT name FROM pragma_table_list WHERE schema = 'main'"
                                 " AND name = ?1 COLLATE NOCASE", zTable, &rc);
  zType = logQueryText(db, "SELECT type FROM pragma_table_list WHERE schema = 'main'"
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
    char *zNullable = logQueryText(db,
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
    char *zApart = logQueryText(db,
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

/* ---- the triggers ------------------------------------------------------ */

static const char *const azTriggerSuffix[] = { "insert", "update", "delete", "replace_insert", "replace_update" };
#define N_TRIGGER_KINDS 5

/*
** The CREATE TRIGGER statement of kind iKind (azTriggerSuffix) of pTab,
** whose id is iTable, or NULL when it has none (the probes of a table
** without other UNIQUE constraints); *pRc set when out of memory.  These
** are the texts sqlitetriggers_log_check() compares; isEarlier, the probes
** as format 1 wrote them, which it accepts too (appendProbeCall()).
*/
static char *logTriggerSql(const LogTable *pTab, int iTable, int iKind, int isEarlier, int *pRc){
  sqlite3_str *pOut;
  char *zOut;
  if( iKind>=3 && pTab->nProbe==0 ) return 0;
  pOut = sqlite3_str_new(0);
  sqlite3_str_appendf(pOut, "CREATE TRIGGER \"sqlitetriggers_log_%d_%s\" %s %s ON \"%w\" "
      "BEGIN ",
      iTable, azTriggerSuffix[iKind], iKind>=3 ? "BEFORE" : "AFTER",
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
  if( sqlite3_str_errcode(pOut) ){
    sqlite3_free(sqlite3_str_finish(pOut));
    *pRc = SQLITE_NOMEM;
    return 0;
  }
  zOut = sqlite3_str_finish(pOut);
  if( zOut==0 ) *pRc = SQLITE_NOMEM;
  return zOut;
}

/* Runs zSql (which may be NULL: nothing to do) unless *pRc is set. */
static void logExec(sqlite3 *db, const char *zSql, int *pRc, char **pzErr){
  if( *pRc!=SQLITE_OK || zSql==0 ) return;
  *pRc = sqlite3_exec(db, zSql, 0, 0, pzErr);
}

/* The definition azShared holds for zName. */
static const char *logSharedSql(const char *zName){
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
static int logEnsureShared(sqlite3 *db, int isInstall, char **pzErr){
  int rc = SQLITE_OK, i, isUpgrade = 0;
  char *zMeta = logQueryText(db, "SELECT sql FROM sqlite_schema WHERE name = 'sqlitetriggers_log_meta'",
                             0, &rc);
  if( zMeta && strcmp(zMeta, logSharedSql("sqlitetriggers_log_meta"))==0 ){
    char *zVersion = logQueryText(db, "SELECT formatVersion FROM sqlitetriggers_log_meta", 0, &rc);
    if( rc==SQLITE_OK && zVersion && strcmp(zVersion, "1")==0 ){
      if( isInstall ){
        logExec(db, LOG_UPGRADE_FROM_1, &rc, pzErr);
        isUpgrade = 1;
      }else{
        *pzErr = sqlite3_mprintf("the durable log in this file is of format 1 (an earlier "
            "SQLiteTriggers): install any logged table again (sqlitetriggers_log_install) to "
            "upgrade it to format %d", LOG_FORMAT_VERSION);
        rc = *pzErr ? SQLITE_ERROR : SQLITE_NOMEM;
      }
    }
    sqlite3_free(zVersion);
  }
  sqlite3_free(zMeta);
  for(i=0; i<N_SHARED && rc==SQLITE_OK; i++){
    const char *zName = azShared[2*i], *zSql = azShared[2*i+1];
    char *zFound = logQueryText(db, "SELECT sql FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE",
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
    char *zCount = logQueryText(db, "SELECT count(*) || ' ' || coalesce(max(formatVersion), 0)"
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
  zId = logQueryText(db,
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
                                  iTable, azTriggerSuffix[i]);
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
static int logReport(sqlite3_context *ctx, const char *zFunc, int rc, const char *zErr){
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
    char *zNext = logQueryText(db, "SELECT coalesce(max(id), 0) + 1 FROM sqlitetriggers_log_tables", 0, &rc);
    iTable = zNext ? atoi(zNext) : 0;
    sqlite3_free(zNext);
  }else if( rc==SQLITE_OK && eMode==LOG_MODE_KEEP ){
    char *zWas = sqlite3_mprintf("SELECT tombstones FROM sqlitetriggers_log_tables WHERE id = %d", iTable);
    char *zMode = zWas ? logQueryText(db, zWas, 0, &rc) : 0;
    if( zWas==0 ) rc = SQLITE_NOMEM;
    isTombstones = zMode && zMode[0]=='1';
    sqlite3_free(zMode);
    sqlite3_free(zWas);
  }
  if( rc==SQLITE_OK ) rc = logReadTable(db, zTable, iTable, isTombstones, &tab, pzErr);
  if( rc==SQLITE_OK ) logDropTriggers(db, iTable, &rc, pzErr);
  for(i=0; i<N_TRIGGER_KINDS && rc==SQLITE_OK; i++){
    char *zSql = logTriggerSql(&tab, iTable, i, 0, &rc);
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
  logTableClear(&tab);
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
  if( rc==SQLITE_OK ) rc = logEnsureShared(db, 1, &zErr);
  if( rc==SQLITE_OK && !hasCompileOptionFunctions() ){
    zErr = sqlite3_mprintf("this SQLite omits sqlite_compileoption_get() (SQLITE_OMIT_COMPILEOPTION_DIAGS), "
                           "which the log's triggers call to stamp transactions: use a SQLite built with it");
    rc = zErr ? SQLITE_ERROR : SQLITE_NOMEM;
  }
  if( rc==SQLITE_OK ){
    zErr = logFindForeignWriter(db, &rc);
    if( zErr ) rc = SQLITE_ERROR;
  }
  if( rc==SQLITE_OK ) rc = logInstallTable(db, zTable, eMode, &iTable, &zErr);
  if( rc!=SQLITE_OK && zErr==0 && rc!=SQLITE_NOMEM ){
    zErr = sqlite3_mprintf("%s", sqlite3_errmsg(db));
  }
  rc = logEnd(db, isOwn, rc, &zErr);
  if( logReport(ctx, zFunc, rc, zErr) ) sqlite3_result_int(ctx, iTable);
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
  zExists = logQueryText(db, "SELECT 1 FROM sqlite_schema WHERE name = 'sqlitetriggers_log_tables'", 0, &rc);
  if( zExists ) iTable = logTableId(db, zTable, &rc);
  if( iTable>0 ){
    char *zDelete = sqlite3_mprintf("DELETE FROM sqlitetriggers_log_tombstones WHERE id IN"
                                    " (SELECT id FROM sqlitetriggers_log WHERE tableId = %d);"
                                    "DELETE FROM sqlitetriggers_log WHERE tableId = %d;"
                                    "DELETE FROM sqlitetriggers_log_tables WHERE id = %d;", iTable, iTable, iTable);
    if( zDelete==0 && rc==SQLITE_OK ) rc = SQLITE_NOMEM;
    logDropTriggers(db, iTable, &rc, &zErr);
    logExec(db, zDelete, &rc, &zErr);
    sqlite3_free(zDelete);
  }
  sqlite3_free(zExists);
  rc = logEnd(db, isOwn, rc, &zErr);
  if( logReport(ctx, zFunc, rc, zErr) ) sqlite3_result_int(ctx, iTable>0);
  sqlite3_free(zErr);
}

/* 1 when zHave is kind iKind's probe trigger as format 1 wrote it: it logs
** the same, a little slower (appendProbeCall()), until installed again. */
static int logIsEarlierProbe(const LogTable *pTab, int iTable, int iKind, const char *zHave, int *pRc){
  char *zEarlier;
  int isSame;
  if( iKind<3 ) return 0;
  zEarlier = logTriggerSql(pTab, iTable, iKind, 1, pRc);
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
    rc = logReadTable(db, zName, iTable, sqlite3_column_int(pStmt, 4), &tab, &zErr);
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
      char *zWant = logTriggerSql(&tab, iTable, i, 0, &rc);
      char *zTrigger = sqlite3_mprintf("sqlitetriggers_log_%d_%s", iTable, azTriggerSuffix[i]);
      char *zHave = zTrigger ? logQueryText(db, "SELECT sql FROM sqlite_schema WHERE type = 'trigger'"
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
    logTableClear(&tab);
    if( zStale==0 && rc==SQLITE_OK ) continue;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  if( rc==SQLITE_OK && zStale==0 && sqlite3_errcode(db)==SQLITE_NOMEM ) rc = SQLITE_NOMEM;
  *pRc = rc;
  return zStale;
}

/* The tables and views whose rows decide what is delivered, uploaded or
** trusted: the log's, the persistent rules' registry
** (SQLiteTriggersGRDB), and sqlite_sequence, which holds the log's end. */
static const char *const azLogState[] = {
  "sqlitetriggers_log", "sqlitetriggers_log_tombstones", /* the two the tables' triggers write */
  "sqlitetriggers_log_tables", "sqlitetriggers_log_origins", "sqlitetriggers_log_consumers",
  "sqlitetriggers_log_meta", "sqlitetriggers_changes", "sqlitetriggers_rules", "sqlite_sequence",
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
** The log's own: the shared objects, which logEnsureShared() has compared
** with azShared, and a logged table's five triggers
** (sqlitetriggers_log_N_insert ... _replace_update, N registered), which
** write the log and its tombstones only, and whose text logFindStale()
** compares.  TEMP's objects are the app's own.
*/
static char *logFindForeignWriter(sqlite3 *db, int *pRc){
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
      if( logSharedSql(zTrigger) ) continue;
      isTable = strcmp(zType, "table")==0;
      /* A table names itself: the rules' registry is not foreign. */
      if( isTable && sqlitetriggers_sql_names(zTrigger, azLogState, N_LOG_STATE) ) continue;
      if( sqlite3_column_int(pStmt, 3) ){
        /* A logged table's trigger: it may write the log and tombstones. */
        zNamed = sqlitetriggers_sql_names(zSql, azName + N_LOG_STATE_OF_TABLES, nName - N_LOG_STATE_OF_TABLES);
      }else{
        zNamed = sqlitetriggers_sql_names(zSql, azName, nName);
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
static void logCheckFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
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
  zExists = logQueryText(db, "SELECT 1 FROM sqlite_schema WHERE name = 'sqlitetriggers_log_tables'", 0, &rc);
  if( zExists ){
    rc = logEnsureShared(db, 0, &zErr);
    if( rc==SQLITE_OK ) zStale = logFindForeignWriter(db, &rc);
    if( rc==SQLITE_OK && zStale==0 ) zStale = logFindStale(db, &nTable, &rc);
  }
  if( rc==SQLITE_OK && zStale ){
    sqlitetriggers_result_error(ctx, zFunc, zStale);
  }else if( logReport(ctx, zFunc, rc, zErr ? zErr : rc==SQLITE_NOMEM ? 0 : sqlite3_errmsg(db)) ){
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

/* ---- stamping transactions -------------------------------------------- */

/* The stamp of the current transaction (TRANSACTIONS), made once per
** transaction after joining it. */
static void logStamp(sqlite3_context *ctx, Connection *p){
  if( !sqlitetriggers_callback_is_enlisted(p)
   || p->logTransaction!=sqlitetriggers_callback_transaction(p) || p->logTransactionId==0 ){
    sqlite3_uint64 iStamp = 0;
    int rc = sqlitetriggers_callback_enlist(ctx, p);
    if( (rc & 0xff)==SQLITE_READONLY ){
      /* No transaction can write a log row here (a read-only file,
      ** mode=ro, PRAGMA query_only): a view or query that reads the stamp
      ** gets what SQLite's own function returns. */
      sqlite3_result_null(ctx);
      return;
    }
    if( rc!=SQLITE_OK ) return;
    /* 63 random bits, never 0: SQLite's generator (kernel-seeded, and
    ** never pinned by sqlitetriggers_seed_random()). */
    while( iStamp==0 ){
      sqlite3_randomness((int)sizeof(iStamp), &iStamp);
      iStamp &= 0x7fffffffffffffffULL;
    }
    p->logTransaction = sqlitetriggers_callback_transaction(p);
    p->logTransactionId = (sqlite3_int64)iStamp;
  }
  sqlite3_result_int64(ctx, p->logTransactionId);
}

/* A probe's kind (appendProbeCall()): 5 when this connection's REPLACE
** deletions fire DELETE triggers, else 4.  Evaluated only for a row a
** write conflicts with. */
static void logProbeKind(sqlite3_context *ctx){
  int rc = SQLITE_OK;
  char *zOn = logQueryText(sqlite3_context_db_handle(ctx), "PRAGMA recursive_triggers", 0, &rc);
  if( rc==SQLITE_OK ){
    sqlite3_result_int(ctx, zOn && zOn[0]=='1' ? 5 : 4);
  }else{
    sqlite3_result_error_code(ctx, rc);
  }
  sqlite3_free(zOn);
}

/* TOMBSTONES: the time of a deletion (and a persistent rule's .now), as
** datetime_subsec() gives it. */
static void logTime(sqlite3_context *ctx, Connection *p){
  sqlite3_int64 iJD;
  char zOut[32];
  if( sqlitetriggers_compute_jd(ctx, p, "sqlitetriggers_log", 0, 0, &iJD)!=JD_OK ) return;
  sqlite3_result_text(ctx, zOut, sqlitetriggers_format_jd(iJD, zOut), SQLITE_TRANSIENT);
}

/* 1 when the transaction holds the write lock of a file with a log: main,
** or an attached file whose log's triggers call the stamp too (joining
** the transaction writes main, and so takes main's write lock: only for a
** write that logs).  Not TEMP, which is no file's log. */
static int logWritesAFile(sqlite3 *db){
  const char *zDb;
  int iDb;
  if( sqlite3_txn_state(db, "main")==SQLITE_TXN_WRITE ) return 1;
  for(iDb=2; (zDb = sqlite3_db_name(db, iDb))!=0; iDb++){
    if( sqlite3_txn_state(db, zDb)==SQLITE_TXN_WRITE ){
      sqlite3_stmt *pStmt = 0;
      char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE name = 'sqlitetriggers_log'", zDb);
      int hasLog = zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK
                   && sqlite3_step(pStmt)==SQLITE_ROW;
      sqlite3_finalize(pStmt);
      sqlite3_free(zSql);
      if( hasLog ) return 1;
    }
  }
  return 0;
}

/* sqlite_compileoption_get(N): SQLite's own, but for LOG_STAMP_ARGUMENT,
** which is the transaction's stamp, LOG_PROBE_MODE_ARGUMENT, a probe's
** kind, and LOG_TIME_ARGUMENT, a tombstone's time. */
static void compileOptionOrStampFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  int eType = sqlite3_value_type(argv[0]);
  sqlite3_int64 iArg = eType==SQLITE_INTEGER ? sqlite3_value_int64(argv[0]) : 0;
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  (void)argc;
  if( eType==SQLITE_FLOAT && sqlite3_value_double(argv[0])==0.0 && signbit(sqlite3_value_double(argv[0])) ){
    /* A tombstone's -0.0 (appendExactReal()). */
    sqlite3_result_text(ctx, "-0", 2, SQLITE_STATIC);
  }else if( iArg==LOG_STAMP_ARGUMENT ){
    /* Only a write draws a stamp.  A log trigger runs inside a statement
    ** that already holds its file's write lock; a view or query reading
    ** the stamp in a read transaction gets SQLite's own answer, NULL,
    ** instead of joining the transaction, which would take the write lock
    ** and lock every other writer out until it ends. */
    if( sqlitetriggers_log_is_stamped(p) || logWritesAFile(sqlite3_context_db_handle(ctx)) ){
      logStamp(ctx, p);
    }else{
      sqlite3_result_null(ctx);
    }
  }else if( iArg==LOG_TIME_ARGUMENT ){
    logTime(ctx, p);
  }else if( iArg==LOG_PROBE_MODE_ARGUMENT ){
    logProbeKind(ctx);
  }else if( iArg==LOG_ORIGIN_WRITER_ARGUMENT ){
    if( p->isWritingOrigin ) sqlite3_result_int64(ctx, p->logTransactionId);
  }else{
    sqlite3_result_text(ctx, sqlite3_compileoption_get(sqlite3_value_int(argv[0])), -1, SQLITE_STATIC);
  }
}

/* 1 when the transaction committing on p wrote log rows. */
int sqlitetriggers_log_is_stamped(Connection *p){
  return p->logTransactionId!=0 && p->logTransaction==sqlitetriggers_callback_transaction(p);
}

/* 1 when a transaction is open; else 0 after setting zFunc's error. */
static int logInTransaction(sqlite3_context *ctx, const char *zFunc){
  if( !sqlite3_get_autocommit(sqlite3_context_db_handle(ctx)) ) return 1;
  sqlitetriggers_result_error(ctx, zFunc, "no transaction is open: call it after BEGIN, inside the "
                              "transaction it is about");
  return 0;
}

/* ORIGINS: the statements that set and clear the origin of the
** transaction stamped ?1, and read it; "since" is the log's end, before
** every change of the transaction. */
#define LOG_SET_ORIGIN \
  "INSERT OR IGNORE INTO main.\"sqlitetriggers_log_origins\" VALUES (?1, ?2, " LOG_END_FAST ")"
#define LOG_CHANGE_ORIGIN \
  "UPDATE main.\"sqlitetriggers_log_origins\" SET \"origin\" = ?2 WHERE \"tx\" = ?1"
#define LOG_CLEAR_ORIGIN \
  "DELETE FROM main.\"sqlitetriggers_log_origins\" WHERE \"tx\" = ?1"
#define LOG_GET_ORIGIN \
  "SELECT \"origin\" FROM main.\"sqlitetriggers_log_origins\" WHERE \"tx\" = ?1"

/*
** Runs zSql, one of the statements above, with the transaction's stamp as
** ?1 and pOrigin, if any, as ?2; the first column of its row, if any,
** becomes the function's result.  Errors are set on ctx; returns whether
** none was.  Without the table (no log in the file, or an earlier
** format), reading finds no origin, and writing fails.  One prepared
** statement per call: a statement kept past it would make the app's
** sqlite3_close() fail.
*/
static int logOriginStatement(sqlite3_context *ctx, const char *zFunc, const char *zSql,
                              int isRead, sqlite3_int64 iTx, sqlite3_value *pOrigin){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *pStmt = 0;
  sqlite3_int64 lastRowid = sqlite3_last_insert_rowid(db);
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( rc==SQLITE_ERROR ){
    /* The only way these statements fail to prepare: no such table. */
    if( isRead ) return 1;
    sqlitetriggers_result_error(ctx, zFunc, "this file has no durable log of format 2 to mark: "
                                "install one (sqlitetriggers_log_install) first");
    return 0;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_bind_int64(pStmt, 1, iTx);
  if( rc==SQLITE_OK && pOrigin ) rc = sqlite3_bind_value(pStmt, 2, pOrigin);
  if( rc==SQLITE_OK ){
    /* The origins table's guards let this statement, and only it, write. */
    p->isWritingOrigin = !isRead;
    rc = sqlitetriggers_result_first_column(ctx, pStmt);
    p->isWritingOrigin = 0;
  }
  if( rc==SQLITE_OK ) rc = sqlite3_finalize(pStmt); else sqlite3_finalize(pStmt);
  /* The app's last_insert_rowid() stays its own. */
  sqlite3_set_last_insert_rowid(db, lastRowid);
  if( rc!=SQLITE_OK ){
    char *zErr = rc==SQLITE_NOMEM ? 0 : sqlite3_mprintf("%s", sqlite3_errmsg(db));
    logReport(ctx, zFunc, rc, zErr);
    sqlite3_free(zErr);
  }
  return rc==SQLITE_OK;
}

/*
** 1 when the app called zFunc itself, alone: the one statement running is
** nothing but the call, SELECT zFunc(...) (sqlitetriggers_sql_is_lone_call()),
** and reads only.  Else 0 with zFunc's error set.  Alone, because the mark
** is a row written by a statement of our own, which a failure of the
** caller's statement after the call (another column's error, a later
** row's) would not roll back; and the one statement, because an object of
** a file that escapes the direct-only rule (an index's expression, a
** CHECK or a generated column parsed before the function existed) runs
** inside a statement that reads or writes a table: beside the app's call
** (its cursor still open), or as that statement (then not a lone call).
** The argument of a lone call is the app's own SQL.  The schema guard, a
** few PRAGMAs on every call, would cost a marked transaction more than
** the mark: it runs only to name the object of a refusal.
*/
static int logCalledByTheApp(sqlite3_context *ctx, const char *zFunc){
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  sqlite3_stmt *pStmt = 0, *pRunning = 0;
  int nRunning = 0;
  while( (pStmt = sqlite3_next_stmt(db, pStmt))!=0 ){
    if( sqlite3_stmt_busy(pStmt) ){ pRunning = pStmt; nRunning++; }
  }
  if( nRunning==1 && sqlite3_stmt_readonly(pRunning)
   && sqlitetriggers_sql_is_lone_call(sqlite3_sql(pRunning), zFunc) ){
    return 1;
  }
  if( sqlitetriggers_schema_guard_call(ctx, zFunc) ){
    sqlitetriggers_result_error(ctx, zFunc, "call it alone, in a SELECT of the app's own: "
        "SELECT sqlitetriggers_log_origin('server') (with nothing else in that statement, which could "
        "fail after the mark, and no other statement running; a statement that writes, a view, an index, "
        "a CHECK or a generated column cannot call it)");
  }
  return 0;
}

/*
** sqlitetriggers_log_origin(ORIGIN) and sqlitetriggers_log_origin(): the
** origin of the current transaction (ORIGINS), kept in the file under its
** stamp, so that it lasts as long as the transaction's changes, and rolls
** back with the savepoint that set it.
*/
static void logOriginFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char zFunc[] = "sqlitetriggers_log_origin";
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3 *db = sqlite3_context_db_handle(ctx);
  int isClear;
  if( argc==0 ){
    /* Not stamped yet: no origin, and nothing drawn for a question. */
    if( !sqlite3_get_autocommit(db) && sqlitetriggers_log_is_stamped(p) ){
      logOriginStatement(ctx, zFunc, LOG_GET_ORIGIN, 1, p->logTransactionId, 0);
    }
    return;
  }
  if( !logCalledByTheApp(ctx, zFunc) || !logInTransaction(ctx, zFunc) ) return;
  isClear = sqlite3_value_type(argv[0])==SQLITE_NULL;
  if( !isClear ){
    const char *zOrigin = sqlitetriggers_name_argument(ctx, zFunc, argv[0], "an origin (text, or NULL for local)");
    if( zOrigin==0 ) return;
    if( zOrigin[0]==0 ){
      sqlitetriggers_result_error(ctx, zFunc, "an origin cannot be empty: pass NULL for local changes");
      return;
    }
  }
  if( sqlite3_db_readonly(db, "main")==1 ){
    sqlitetriggers_result_error(ctx, zFunc, "this connection is read-only: its transactions log nothing");
    return;
  }
  /* The stamp, drawn now if need be; an error joining is set on ctx. */
  logStamp(ctx, p);
  if( !sqlitetriggers_log_is_stamped(p) ) return;
  sqlite3_result_null(ctx);
  if( isClear ){
    logOriginStatement(ctx, zFunc, LOG_CLEAR_ORIGIN, 0, p->logTransactionId, 0);
  }else{
    /* Set once per transaction, as a rule: changing it is the rare case.
    ** A mark neither written nor changed (an object of the file in the
    ** way, which the check names) is an error, never a silent success. */
    if( logOriginStatement(ctx, zFunc, LOG_SET_ORIGIN, 0, p->logTransactionId, argv[0])
     && (sqlite3_changes(db)>0
         || logOriginStatement(ctx, zFunc, LOG_CHANGE_ORIGIN, 0, p->logTransactionId, argv[0])) ){
      if( sqlite3_changes(db)>0 ){
        sqlite3_result_value(ctx, argv[0]);
      }else{
        sqlitetriggers_result_error(ctx, zFunc, "the mark could not be written (sqlitetriggers_log_origins "
            "took no row): run sqlitetriggers_log_check(), which names the object of the file in the way");
      }
    }
  }
}

static void logTransactionFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  static const char zFunc[] = "sqlitetriggers_log_transaction";
  (void)argc; (void)argv;
  if( !logInTransaction(ctx, zFunc) ) return;
  logStamp(ctx, (Connection*)sqlite3_user_data(ctx));
}

static void logStampFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  (void)argc; (void)argv;
  sqlite3_result_int(ctx, 1);
}

int sqlitetriggers_register_durable_log_functions(sqlite3 *db, Connection *p){
  static const struct {
    const char *zName;
    int nArg;
    void (*xFunc)(sqlite3_context*, int, sqlite3_value**);
  } aFunc[] = {
    { "sqlitetriggers_log_install", 1, logInstallFunc },
    { "sqlitetriggers_log_install", 2, logInstallFunc },
    { "sqlitetriggers_log_origin", 0, logOriginFunc },
    { "sqlitetriggers_log_origin", 1, logOriginFunc },
    { "sqlitetriggers_log_transaction", 0, logTransactionFunc },
    { "sqlitetriggers_log_uninstall", 1, logUninstallFunc },
    { "sqlitetriggers_log_check", 0, logCheckFunc },
    { "sqlitetriggers_log_stamp", 0, logStampFunc },
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
                                                   SQLITE_INNOCUOUS, p, compileOptionOrStampFunc);
  }
  return rc;
}
