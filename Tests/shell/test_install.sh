# make install / make uninstall, and a C host linking through pkg-config.

prefix="$SCRATCH/prefix"
make -s install PREFIX="$prefix" >/dev/null 2>&1
installed=$(cd "$prefix" && find . -type f | sort | tr '\n' ' ')
check_same "make install puts the library, the header and the pkg-config file under PREFIX" \
  "$installed" "./include/sqlitetriggers.h ./lib/libsqlitetriggers.so ./lib/libsqlitetriggers_core.a ./lib/pkgconfig/sqlitetriggers.pc "

cat > "$SCRATCH/host.c" <<'C'
#include <sqlitetriggers.h>
#include <stdio.h>
int main(void){
  sqlite3 *db; sqlite3_stmt *stmt;
  sqlite3_open(":memory:", &db);
  if( sqlitetriggers_register(db)!=SQLITE_OK ) return 1;
  sqlitetriggers_pin_clock(db, 1700000000500LL);
  sqlite3_prepare_v2(db, "SELECT uuid_version(uuidv7()) || ' ' || datetime_subsec()", -1, &stmt, 0);
  if( sqlite3_step(stmt)!=SQLITE_ROW ) return 1;
  printf("%s\n", sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  return sqlite3_close(db);
}
C
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs sqlitetriggers)
if ${CC:-cc} -o "$SCRATCH/host" "$SCRATCH/host.c" $flags 2>"$SCRATCH/cc.log"; then
  check_same "a C host links the installed library through pkg-config" "$("$SCRATCH/host")" "7 2023-11-14 22:13:20.500"
else
  fail "a C host links the installed library through pkg-config" "it compiles" "$(cat "$SCRATCH/cc.log")"
fi

EXT_SAVED=$EXT
EXT="$prefix/lib/libsqlitetriggers"
check "the installed loadable library works with .load" "SELECT uuid_version(uuid());" "4"
EXT=$EXT_SAVED

make -s uninstall PREFIX="$prefix" >/dev/null 2>&1
check_same "make uninstall removes everything make install put there" \
  "$(find "$prefix" -type f | wc -l)" "0"

# A host that closes the connection unloads the extension (sqlite3_close()
# dlclose()s it), while the pthread_atfork() handler it registered stays:
# random.c pins the library with RTLD_NODELETE.  Built here without the
# linker's -z nodelete, as Apple's linker builds it, so that the pin alone
# is tested.
cat > "$SCRATCH/unload.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv){
  sqlite3 *db; char *zErr = 0; int status = -1; pid_t pid;
  (void)argc;
  sqlite3_open(":memory:", &db);
  sqlite3_enable_load_extension(db, 1);
  if( sqlite3_load_extension(db, argv[1], "sqlite3_sqlitetriggers_init", &zErr) ){ printf("%s\n", zErr); return 1; }
  sqlite3_close(db);
  pid = fork();
  if( pid==0 ) _exit(0);
  waitpid(pid, &status, 0);
  printf("%s %d\n", dlopen(argv[1], RTLD_LAZY|RTLD_NOLOAD) ? "loaded" : "unloaded", WIFEXITED(status));
  return 0;
}
C
if ${CC:-cc} -O1 -shared -fPIC -fvisibility=hidden -o "$SCRATCH/unpinned.so" ext/*.c -lpthread -ldl 2>"$SCRATCH/cc.log" &&
   ${CC:-cc} -o "$SCRATCH/unload" "$SCRATCH/unload.c" -lsqlite3 -ldl 2>>"$SCRATCH/cc.log"; then
  check_same "closing the connection leaves the loaded library (and its fork handler) in place, without -z nodelete" \
    "$("$SCRATCH/unload" "$SCRATCH/unpinned.so")" "loaded 1"
else
  fail "closing the connection leaves the loaded library in place" "it compiles" "$(cat "$SCRATCH/cc.log")"
fi

# make test's first step on a machine that lacks packages, run by a user who
# cannot install them: it stops at once, naming the command, and installs
# nothing.  dpkg and apt-get are stand-ins that report every package missing
# and record any call.
fake="$SCRATCH/fake-bin"
mkdir -p "$fake"
printf '#!/bin/sh\necho "$0 $*" >> %s/apt-calls\nexit 1\n' "$SCRATCH" > "$fake/apt-get"
printf '#!/bin/sh\ncase "$1" in --print-architecture) echo amd64;; esac\n[ "$1" = -s ] && exit 1\nexit 0\n' > "$fake/dpkg"
chmod +x "$fake/apt-get" "$fake/dpkg"
chmod o+rx "$SCRATCH" "$fake"
prereq_out=$(cd "$SCRATCH" && setpriv --reuid=65534 --regid=65534 --clear-groups \
  env PATH="$fake:/usr/bin:/bin" bash "$OLDPWD/Tests/prerequisites.sh" 2>&1)
prereq_status=$?
check_same "make test without root stops at once when packages are missing" "$prereq_status" "1"
case "$prereq_out" in
  *"run as root:  dpkg --add-architecture arm64 && apt-get update && apt-get install -y "*"libsqlite3-dev:arm64"*"gcc-12-multilib"*)
    pass "make test without root names the command that installs what is missing" ;;
  *) fail "make test without root names the command that installs what is missing" "the apt-get command" "$prereq_out" ;;
esac
check_same "make test without root installs nothing" "$([ -e "$SCRATCH/apt-calls" ] && echo called || echo none)" "none"

# A host whose SQLite is older than the code needs: the loadable library is
# handed the host's routines with its version faked to 3.38.5 (taken through
# an auto-extension, as .load would hand them over).  Registration fails,
# naming both versions, and registers nothing.
cat > "$SCRATCH/old_host.c" <<'C'
#define SQLITE_CORE 1         /* a host: its own SQLite, called directly */
#include <sqlite3ext.h>
#include <dlfcn.h>
#include <stdio.h>
static sqlite3_api_routines routines;
static int takeRoutines(sqlite3 *db, char **pzErr, const sqlite3_api_routines *pApi){
  (void)db; (void)pzErr; routines = *pApi; return SQLITE_OK;
}
static int oldVersionNumber(void){ return 3038005; }
static const char *oldVersion(void){ return "3.38.5"; }
int main(int argc, char **argv){
  sqlite3 *db; char *zErr = 0; sqlite3_stmt *pStmt = 0; int rc;
  int (*xInit)(sqlite3*, char**, const sqlite3_api_routines*);
  void *pLib = dlopen(argv[1], RTLD_NOW);
  (void)argc;
  if( pLib==0 ) return 2;
  *(void**)&xInit = dlsym(pLib, "sqlite3_sqlitetriggers_init");
  sqlite3_auto_extension((void(*)(void))takeRoutines);
  sqlite3_open(":memory:", &db);
  sqlite3_cancel_auto_extension((void(*)(void))takeRoutines);
  routines.libversion_number = oldVersionNumber;
  routines.libversion = oldVersion;
  rc = xInit(db, &zErr, &routines);
  printf("%d %s\n", rc, zErr ? zErr : "(no message)");
  printf("%s\n", sqlite3_prepare_v2(db, "SELECT uuid()", -1, &pStmt, 0)==SQLITE_OK ? "uuid() registered" : sqlite3_errmsg(db));
  sqlite3_finalize(pStmt);
  sqlite3_free(zErr);
  return sqlite3_close(db);
}
C
if ${CC:-cc} -o "$SCRATCH/old_host" "$SCRATCH/old_host.c" -lsqlite3 -ldl 2>"$SCRATCH/cc.log"; then
  check_same "on a SQLite older than 3.39.0, registration fails naming both versions, and registers nothing" \
    "$("$SCRATCH/old_host" "$PWD/$EXT.so")" \
    "1 sqlitetriggers: needs SQLite 3.39.0 or later, and this is SQLite 3.38.5
no such function: uuid"
else
  fail "a host with an old SQLite builds" "it compiles" "$(cat "$SCRATCH/cc.log")"
fi

# The linked build (-DSQLITE_CORE, as SwiftPM compiles ext/) needs sqlite3.h
# only: Apple's SDKs have no sqlite3ext.h.
ext_headers=$(for source in ext/*.c; do ${CC:-cc} -DSQLITE_CORE -Iext/include -H -fsyntax-only "$source" 2>&1; done |
  grep -c 'sqlite3ext\.h')
check_same "the SQLITE_CORE build includes no sqlite3ext.h" "$ext_headers" "0"
