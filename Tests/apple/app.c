/*
** app.c: the smallest app that links SQLiteTriggers into an Apple
** platform's binary, as an iOS or macOS app does through SwiftPM: it opens
** a connection and registers the extension on it.  Tests/apple/check.sh
** links it against each SDK's .tbd stubs; it is never run here.
*/
#include <sqlite3.h>
#include "sqlitetriggers.h"

int main(void){
  sqlite3 *db = 0;
  int rc = sqlite3_open(":memory:", &db);
  if( rc==SQLITE_OK ) rc = sqlitetriggers_register(db);
  sqlite3_close(db);
  return rc;
}
