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
