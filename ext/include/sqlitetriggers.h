/*
** sqlitetriggers.h: the public C interface of the SQLiteTriggers extension.
**
** Two ways to use it:
**
**   - As a loadable extension: `.load build/libsqlitetriggers` in the sqlite3
**     shell, or sqlite3_load_extension() in any host.  The entry point is
**     sqlite3_sqlitetriggers_init().
**
**   - Compiled into an application with -DSQLITE_CORE (the SwiftPM target
**     does this) and linked against the system libsqlite3.  The application
**     calls sqlitetriggers_register() on every connection it opens.  There
**     is deliberately no sqlite3_auto_extension() helper: an app decides per
**     connection what it installs.
**
** The SQL functions themselves are specified at the top of each source file
** in ext/ and in README.md.
*/
#ifndef SQLITETRIGGERS_H
#define SQLITETRIGGERS_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
# define SQLITETRIGGERS_API __attribute__((visibility("default")))
#else
# define SQLITETRIGGERS_API
#endif

/*
** Register every SQL function of the extension on connection db.
** Registering again replaces the functions and resets the connection's
** test controls.  Returns an SQLite result code.
*/
SQLITETRIGGERS_API int sqlitetriggers_register(sqlite3 *db);

/*
** The same, and on failure *pzErrMsg (when pzErrMsg is not NULL) receives
** a message to free with sqlite3_free() saying why.  Registration reads no
** schema: a file whose schema calls swift_callback(), a test control or an
** installer (from an index, a view, a trigger, ...) does not fail it;
** instead every call of those functions is refused while such a file is
** open, naming the object (the SecurityModel article of the DocC).
*/
SQLITETRIGGERS_API int sqlitetriggers_register_v2(sqlite3 *db,
                                                  char **pzErrMsg);

/*
** Test controls, per connection.  They return SQLITE_MISUSE when db has
** not been registered.
**
** sqlitetriggers_pin_clock() makes "now" equal to unixMillis (milliseconds
** since 1970-01-01 00:00:00 UTC) for datetime_subsec(), unixepoch_subsec()
** and the timestamps of uuidv7() on db, until sqlitetriggers_unpin_clock().
**
** sqlitetriggers_seed_random() makes uuid() and uuidv7() on db draw from a
** deterministic ChaCha20 stream derived from seed, until
** sqlitetriggers_unseed_random() returns them to operating-system entropy.
*/
SQLITETRIGGERS_API int sqlitetriggers_pin_clock(sqlite3 *db,
                                                sqlite3_int64 unixMillis);
SQLITETRIGGERS_API int sqlitetriggers_unpin_clock(sqlite3 *db);
SQLITETRIGGERS_API int sqlitetriggers_seed_random(sqlite3 *db,
                                                  sqlite3_int64 seed);
SQLITETRIGGERS_API int sqlitetriggers_unseed_random(sqlite3 *db);

/*
** Replaces the source of "now" on db for datetime_subsec(),
** unixepoch_subsec() and the timestamps of uuidv7(): by default the VFS
** clock, as SQLite's own 'now'.  The host's clock (GRDB's transaction date,
** for one) makes the triggers' "now" the app's.  A pinned clock still wins.
**
** xNow stores the instant in *pUnixMillis (milliseconds since 1970-01-01
** 00:00:00 UTC) and returns SQLITE_OK, or returns an error code; then the
** SQL function fails with "<function>: the connection's clock failed".
** An instant outside the range datetime() covers (-4713-11-24 12:00:00 to
** 9999-12-31 23:59:59.999) fails the same way.  xNow NULL
** returns to the VFS clock.  xDestroy(pArg), when not NULL, runs once the
** clock is replaced or the connection closes (also when this call fails).
** Returns SQLITE_MISUSE when db has not been registered.
*/
typedef int (*sqlitetriggers_clock)(void *pArg, sqlite3_int64 *pUnixMillis);
SQLITETRIGGERS_API int sqlitetriggers_set_clock(sqlite3 *db,
                                                sqlitetriggers_clock xNow,
                                                void *pArg,
                                                void (*xDestroy)(void*));

/*
** A version 7 UUID for the host, such as a record's key made in Swift, in
** the same process-wide order as SQL's uuidv7() on connections whose clock
** is not pinned: keys made on either side sort together.  Writes 16 bytes
** to aOut; SQLITE_OK, or SQLITE_RANGE for a clock before 1970.  Needs no
** connection.
*/
SQLITETRIGGERS_API int sqlitetriggers_uuidv7(unsigned char *aOut);

/*
** swift_callback() observers (see ext/callback.c for the delivery rules).
**
** An event is read through the accessors below, which are strict about
** types: sqlitetriggers_event_text() is NULL unless argument i is TEXT,
** _blob() unless it is a BLOB; _int64() and _double() convert between the
** two number types and give 0 for anything else.  Argument indexes start
** at 0 after the name.  The seq of an immediate event is 0; committed
** events are numbered 1, 2, ... per connection.  Their transaction is the
** number of the commit that made them (1, 2, ... per connection, counting
** the commits that made events), so that the events of one transaction
** are the run of events with the same number; 0 for an immediate event.
** An event, and everything read from it, is valid only during the
** observer call.
*/
typedef struct sqlitetriggers_event sqlitetriggers_event;
SQLITETRIGGERS_API sqlite3_int64 sqlitetriggers_event_seq(const sqlitetriggers_event*);
SQLITETRIGGERS_API sqlite3_int64 sqlitetriggers_event_transaction(const sqlitetriggers_event*);
SQLITETRIGGERS_API const char *sqlitetriggers_event_name(const sqlitetriggers_event*);
SQLITETRIGGERS_API int sqlitetriggers_event_argc(const sqlitetriggers_event*);
SQLITETRIGGERS_API int sqlitetriggers_event_type(const sqlitetriggers_event*, int i);
SQLITETRIGGERS_API sqlite3_int64 sqlitetriggers_event_int64(const sqlitetriggers_event*, int i);
SQLITETRIGGERS_API double sqlitetriggers_event_double(const sqlitetriggers_event*, int i);
SQLITETRIGGERS_API const unsigned char *sqlitetriggers_event_text(const sqlitetriggers_event*, int i);
SQLITETRIGGERS_API const void *sqlitetriggers_event_blob(const sqlitetriggers_event*, int i);
SQLITETRIGGERS_API int sqlitetriggers_event_bytes(const sqlitetriggers_event*, int i);

/*
** An immediate observer runs inside swift_callback(), inside the statement.
** It may set swift_callback()'s result with sqlite3_result_*(pResult, ...).
** Returning anything but SQLITE_OK refuses the change: the statement fails
** with *pzError (allocate it with sqlite3_malloc/sqlite3_mprintf; it is
** freed for you) and SQLITE_CONSTRAINT_FUNCTION.  It may use the database.
*/
typedef int (*sqlitetriggers_immediate_callback)(
  void *pArg, const sqlitetriggers_event *pEvent,
  sqlite3_context *pResult, char **pzError);

/*
** An after-commit observer runs in sqlitetriggers_deliver(), once per
** committed event, in commit order.  It may read and write the database.
*/
typedef void (*sqlitetriggers_after_commit_callback)(
  void *pArg, const sqlitetriggers_event *pEvent);

/*
** A batch observer runs in sqlitetriggers_deliver() once per round of
** committed events it observes (the events waiting when the round began),
** after that round's after-commit observers, with nEvent > 0.  During the
** call the virtual table swift_callback_batch holds those events in commit
** order, one row each, argc the number of arguments after the name:
**     SELECT seq, name, argc, arg1, arg2, ..., tx FROM swift_callback_batch
** so that the host decodes them with one statement, as it decodes rows of
** a table.  It may read and write the database; events its writes commit
** come in a later round.
*/
typedef void (*sqlitetriggers_batch_callback)(void *pArg, int nEvent);

/*
** Add an observer of the callbacks named zName, or of every callback when
** zName is NULL.  xDestroy(pArg), if given, runs when the observer is
** removed, when the connection closes, and when adding fails.  The new
** observer's id goes to *piObserver.  Observers may be added and removed
** at any time, from inside an observer too.
*/
SQLITETRIGGERS_API int sqlitetriggers_observe_immediate(
  sqlite3 *db, const char *zName, sqlitetriggers_immediate_callback xCallback,
  void *pArg, void (*xDestroy)(void*), sqlite3_int64 *piObserver);
SQLITETRIGGERS_API int sqlitetriggers_observe_after_commit(
  sqlite3 *db, const char *zName, sqlitetriggers_after_commit_callback xCallback,
  void *pArg, void (*xDestroy)(void*), sqlite3_int64 *piObserver);
SQLITETRIGGERS_API int sqlitetriggers_observe_after_commit_batch(
  sqlite3 *db, const char *zName, sqlitetriggers_batch_callback xCallback,
  void *pArg, void (*xDestroy)(void*), sqlite3_int64 *piObserver);

/* Remove an observer; SQLITE_NOTFOUND when there is none with that id. */
SQLITETRIGGERS_API int sqlitetriggers_unobserve(sqlite3 *db,
                                                sqlite3_int64 iObserver);

/*
** Deliver the committed events to the after-commit observers.  Call it
** when a statement has finished, never from inside sqlite3_step(): after
** each sqlite3_step() that returned SQLITE_DONE, or after sqlite3_exec().
** Events that observers' own writes commit are delivered by the same call.
** Committed events wait only while an after-commit observer exists;
** sqlitetriggers_undelivered_count() tells how many wait.  Closing the
** connection drops events that were not delivered.
*/
SQLITETRIGGERS_API int sqlitetriggers_deliver(sqlite3 *db);
SQLITETRIGGERS_API int sqlitetriggers_undelivered_count(sqlite3 *db);

/* The capacity of swift_callback_log (default 1000; 0 turns it off). */
SQLITETRIGGERS_API int sqlitetriggers_set_callback_log_capacity(sqlite3 *db,
                                                                int nCapacity);

/*
** Wake-ups for readers of the durable log (ext/log_wakeup.c): a source
** that becomes ready when a process may have committed to the database
** file zDbPath (Linux: inotify on the file and its -wal and -journal;
** Apple platforms: the libnotify name that every connection with this
** extension posts after a transaction that wrote to the log commits).
** Open fails with SQLITE_CANTOPEN when the file does not exist, and with
** SQLITE_NOTFOUND on platforms that have neither mechanism.
**
** sqlitetriggers_wakeup_fd() polls readable when the source has woken;
** sqlitetriggers_wakeup_drain() empties it, returning 1 when a commit may
** have happened since the last drain; sqlitetriggers_wakeup_wait() polls
** and drains: 1 woken, 0 after nTimeoutMs milliseconds (negative: no
** limit), -1 on error.  A source is used by one thread at a time.
** sqlitetriggers_wakeup_pause() stops its events and
** sqlitetriggers_wakeup_resume() starts them again (SQLITE_OK, or an error
** while it stays paused): on Linux every write of every process to a
** watched folder costs the writer the kernel's event, so a reader that
** has just woken pauses while it reads, then resumes, and looks once more
** soon after, since a commit made while paused raised nothing.  Elsewhere
** both do nothing and return SQLITE_OK.
** sqlitetriggers_wakeup_name() writes the libnotify name of a file (at
** least 44 bytes), the same in every process: it is derived from the
** resolved path.
*/
typedef struct sqlitetriggers_wakeup sqlitetriggers_wakeup;
SQLITETRIGGERS_API int sqlitetriggers_wakeup_open(const char *zDbPath,
                                                  sqlitetriggers_wakeup **ppWakeup);
SQLITETRIGGERS_API int sqlitetriggers_wakeup_fd(const sqlitetriggers_wakeup *pWakeup);
SQLITETRIGGERS_API int sqlitetriggers_wakeup_drain(sqlitetriggers_wakeup *pWakeup);
SQLITETRIGGERS_API int sqlitetriggers_wakeup_wait(sqlitetriggers_wakeup *pWakeup,
                                                  int nTimeoutMs);
SQLITETRIGGERS_API int sqlitetriggers_wakeup_pause(sqlitetriggers_wakeup *pWakeup);
SQLITETRIGGERS_API int sqlitetriggers_wakeup_resume(sqlitetriggers_wakeup *pWakeup);
SQLITETRIGGERS_API void sqlitetriggers_wakeup_close(sqlitetriggers_wakeup *pWakeup);
SQLITETRIGGERS_API int sqlitetriggers_wakeup_name(const char *zDbPath, char *zOut, int nOut);

/* The loadable-extension entry point, found by `.load libsqlitetriggers`. */
struct sqlite3_api_routines;
SQLITETRIGGERS_API int sqlite3_sqlitetriggers_init(
  sqlite3 *db,
  char **pzErrMsg,
  const struct sqlite3_api_routines *pApi
);

#ifdef __cplusplus
}
#endif
#endif /* SQLITETRIGGERS_H */
