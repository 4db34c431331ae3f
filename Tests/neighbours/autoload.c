/*
** LD_PRELOAD shim for the neighbour suites (Tests/neighbours/suites.py):
** registers the loadable library's entry point with sqlite3_auto_extension()
** of the process's libsqlite3 before the program runs, so that every
** connection any code of that process opens (CPython's sqlite3 module,
** GRDB) has the extension, as an app that links it would.
**
**   SQLITETRIGGERS_AUTOLOAD=/path/to/libsqlitetriggers.so LD_PRELOAD=build/autoload.so PROGRAM
**
** A shim that cannot do its job stops the program, naming the cause:
** a suite run "with the extension" must never silently run without it.
*/
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void sqlitetriggersAutoload(void){
  const char *zLibrary = getenv("SQLITETRIGGERS_AUTOLOAD");
  void *pLibrary, *pEntry;
  if( zLibrary==0 || zLibrary[0]==0 ) return;
  pLibrary = dlopen(zLibrary, RTLD_NOW|RTLD_LOCAL);
  pEntry = pLibrary ? dlsym(pLibrary, "sqlite3_sqlitetriggers_init") : 0;
  if( pEntry==0 || sqlite3_auto_extension((void(*)(void))pEntry)!=SQLITE_OK ){
    fprintf(stderr, "autoload: cannot register %s: %s\n", zLibrary, pLibrary ? "no entry point" : dlerror());
    exit(70);
  }
}
