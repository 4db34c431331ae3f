/*
** make bench's peer for change feeds: SQLite's session extension recording
** a table, its changeset iterated after the commit.  Bench-only: apps never
** link this target.
*/
#ifndef SQLITETRIGGERS_BENCH_SESSION_H
#define SQLITETRIGGERS_BENCH_SESSION_H
#include <sqlite3.h>

typedef struct sqlitetriggers_bench_session sqlitetriggers_bench_session;

/* One change of the changeset: SQLITE_INSERT, _UPDATE or _DELETE, and the
** old and new values (NULL pointers where the changeset has none: the new
** side of a delete, the unchanged columns of an update). */
typedef void (*sqlitetriggers_bench_session_change)(void *pCtx, int op, int nCol,
                                                    sqlite3_value **apOld, sqlite3_value **apNew);

/* 1 if this SQLite has the session extension. */
int sqlitetriggers_bench_session_available(void);
/* A session recording main.zTable, or NULL. */
sqlitetriggers_bench_session *sqlitetriggers_bench_session_start(sqlite3 *db, const char *zTable);
/* Iterates the changeset recorded so far; SQLITE_OK or an error code. */
int sqlitetriggers_bench_session_read(sqlitetriggers_bench_session *p,
                                      sqlitetriggers_bench_session_change xChange, void *pCtx);
void sqlitetriggers_bench_session_end(sqlitetriggers_bench_session *p);
#endif
