/*
** log_internal.h: what the durable log's files share.  durable_log.c holds
** THE FORMAT and the shared objects, installing and uninstalling;
** log_triggers.c a table's triggers (and TOMBSTONES); log_check.c
** sqlitetriggers_log_check() and SAFETY; log_stamp.c TRANSACTIONS and
** ORIGINS; log_rules.c RULES' WRITES; log_upgrade.c the upgrade from
** format 1; log_wakeup.c the readers' wake-ups.
*/
#ifndef SQLITETRIGGERS_LOG_INTERNAL_H
#define SQLITETRIGGERS_LOG_INTERNAL_H

#include "sqlitetriggers_internal.h"

/* Every name declared here is hidden, as sqlitetriggers_internal.h's are. */
#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility push(hidden)
#endif

/* The end of the log: the id of its last row (0 when it has none), which
** compaction and the end guard keep (THE FORMAT), so ids never come back.
** A seek to the table's last row, never a scan. */
#define LOG_END "coalesce((SELECT \"id\" FROM \"sqlitetriggers_log\" ORDER BY \"id\" DESC LIMIT 1), 0)"

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

/* THE FORMAT's probes: their kind, 5 when the writer's REPLACE deletions
** fire DELETE triggers (recursive_triggers ON, known only to connections
** with this extension), else 4; written by appendProbeCall(). */
#define LOG_PROBE_MODE_ARGUMENT -7317

/* TOMBSTONES' time (log_triggers.c writes it, log_stamp.c answers it). */
#define LOG_TIME_ARGUMENT -7319

/* ---- a logged table, as its triggers are written (log_triggers.c) ---- */

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

/* The kinds of a table's triggers, in the order they are installed. */
#define N_TRIGGER_KINDS 5
extern const char *const sqlitetriggers_log_trigger_suffix[N_TRIGGER_KINDS];

int sqlitetriggers_log_read_table(sqlite3 *db, const char *zTable, int iTable, int isTombstones,
                                  LogTable *pTab, char **pzErr);
void sqlitetriggers_log_table_clear(LogTable *pTab);
char *sqlitetriggers_log_trigger_sql(const LogTable *pTab, int iTable, int iKind, int isEarlier, int *pRc);
char *sqlitetriggers_log_unlog_sql(const LogTable *pTab, int iTable, int *pRc);

/* ---- log_rules.c ------------------------------------------------------ */

char *sqlitetriggers_log_rule_sql(sqlite3 *db, const char *zTable, const char *zSql, int *pRc);
int sqlitetriggers_log_rule_is_own(sqlite3 *db, const char *zOn, const char *zSql,
                                   const char *const *azState, int nState, int *pRc);
void sqlitetriggers_log_rewrite_rules(sqlite3 *db, const char *zTable, int isInstall, int *pRc, char **pzErr);
void sqlitetriggers_log_rule_sql_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
const char *sqlitetriggers_log_trigger_stops_rows(const char *zSql);

/* ---- durable_log.c ---------------------------------------------------- */

char *sqlitetriggers_log_query_text(sqlite3 *db, const char *zSql, const char *zArg, int *pRc);
const char *sqlitetriggers_log_shared_sql(const char *zName);
int sqlitetriggers_log_ensure_shared(sqlite3 *db, int isInstall, char **pzErr);
int sqlitetriggers_log_report(sqlite3_context *ctx, const char *zFunc, int rc, const char *zErr);

/* ---- log_check.c ------------------------------------------------------ */

char *sqlitetriggers_log_find_foreign_writer(sqlite3 *db, int *pRc);
void sqlitetriggers_log_check_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

/* ---- log_stamp.c ------------------------------------------------------ */

void sqlitetriggers_log_compileoption_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void sqlitetriggers_log_origin_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void sqlitetriggers_log_transaction_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);
void sqlitetriggers_log_stamp_func(sqlite3_context *ctx, int argc, sqlite3_value **argv);

#if defined(__GNUC__) || defined(__clang__)
# pragma GCC visibility pop
#endif

#endif /* SQLITETRIGGERS_LOG_INTERNAL_H */
