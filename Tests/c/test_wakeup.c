/*
** The durable log's wake-ups (ext/log_wakeup.c), across real processes:
** a child process commits, and the parent's source wakes.  Linux only:
** the Apple build of the same file is compiled and linked by
** Tests/apple/check.sh, never run here.
*/
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__)

/* A scratch folder and the database path in it. */
static void scratchDatabase(char *zDir, char *zDb){
  strcpy(zDir, "/tmp/sqlitetriggers-wakeup-XXXXXX");
  if( mkdtemp(zDir)==0 ){ perror("mkdtemp"); exit(2); }
  snprintf(zDb, 512, "%s/app.sqlite", zDir);
}

/* Runs zSql on zDb in a child process, with the extension or without,
** and waits for it to exit. */
static void commitInChild(const char *zDb, const char *zSql, int withExtension){
  pid_t pid = fork();
  if( pid==0 ){
    sqlite3 *db = 0;
    int rc = sqlite3_open(zDb, &db);
    if( rc==SQLITE_OK && withExtension ) rc = sqlitetriggers_register(db);
    if( rc==SQLITE_OK ) rc = sqlite3_exec(db, zSql, 0, 0, 0);
    sqlite3_close(db);
    _exit(rc==SQLITE_OK ? 0 : 1);
  }
  if( pid>0 ){
    int status = 0;
    waitpid(pid, &status, 0);
    expect(WIFEXITED(status) && WEXITSTATUS(status)==0, "the child process committed");
  }
}

static void testWakeupOnCommitsOfOtherProcesses(void){
  char zDir[64], zDb[512], zLink[600], zOther[600], zName1[64], zName2[64];
  sqlitetriggers_wakeup *pWakeup = 0;
  sqlite3 *db = 0;
  FILE *pOther;
  int mode;

  scratchDatabase(zDir, zDb);
  expect(sqlitetriggers_wakeup_open(zDb, &pWakeup)==SQLITE_CANTOPEN && pWakeup==0,
         "wakeup_open: a file that does not exist is SQLITE_CANTOPEN");
  sqlite3_open(zDb, &db);
  sqlitetriggers_register(db);
  exec(db, "CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT);"
           "SELECT sqlitetriggers_log_install('lists');");
  sqlite3_close(db);

  /* The name is the same through a symlinked folder. */
  snprintf(zLink, sizeof(zLink), "%s-link", zDir);
  expect(symlink(zDir, zLink)==0, "a symlink to the folder");
  snprintf(zLink + strlen(zLink), sizeof(zLink) - strlen(zLink), "/app.sqlite");
  expect(sqlitetriggers_wakeup_name(zDb, zName1, sizeof(zName1))==SQLITE_OK
      && sqlitetriggers_wakeup_name(zLink, zName2, sizeof(zName2))==SQLITE_OK
      && strcmp(zName1, zName2)==0
      && strncmp(zName1, "sqlitetriggers.durable-log.", 27)==0,
         "wakeup_name: one name for a file, whatever path reaches it");
  expect(sqlitetriggers_wakeup_name(zDb, zName1, 8)==SQLITE_MISUSE, "wakeup_name: a short buffer is SQLITE_MISUSE");

  expect(sqlitetriggers_wakeup_open(zLink, &pWakeup)==SQLITE_OK && pWakeup!=0
      && sqlitetriggers_wakeup_fd(pWakeup)>=0, "wakeup_open through the symlink");
  expect(sqlitetriggers_wakeup_wait(pWakeup, 50)==0, "no commit: the wait times out");

  /* Another file of the folder is not a commit. */
  snprintf(zOther, sizeof(zOther), "%s/notes.txt", zDir);
  pOther = fopen(zOther, "w");
  if( pOther ){ fputs("x", pOther); fclose(pOther); }
  expect(sqlitetriggers_wakeup_wait(pWakeup, 50)==0, "a write to another file of the folder wakes nothing");

  for(mode=0; mode<2; mode++){
    const char *zJournal = mode ? "PRAGMA journal_mode=WAL;" : "PRAGMA journal_mode=DELETE;";
    char zSql[200];
    commitInChild(zDb, zJournal, 0);
    sqlitetriggers_wakeup_drain(pWakeup);
    snprintf(zSql, sizeof(zSql), "INSERT INTO lists(title) VALUES ('from a child with the extension')");
    commitInChild(zDb, zSql, 1);
    expect(sqlitetriggers_wakeup_wait(pWakeup, 2000)==1,
           mode ? "WAL: a commit of another process with the extension wakes the source"
                : "rollback journal: a commit of another process with the extension wakes the source");
    sqlitetriggers_wakeup_drain(pWakeup);
    expect(sqlitetriggers_wakeup_wait(pWakeup, 50)==0, "drained: the next wait times out");
    commitInChild(zDb, "INSERT INTO lists(title) VALUES ('from a child without it')", 0);
    expect(sqlitetriggers_wakeup_wait(pWakeup, 2000)==1,
           mode ? "WAL: a commit of a writer without the extension wakes the source too"
                : "rollback journal: a commit of a writer without the extension wakes the source too");
  }
  /* Paused, no commit raises an event (the writer pays for none); resumed,
  ** commits wake it again. */
  sqlitetriggers_wakeup_drain(pWakeup);
  expect(sqlitetriggers_wakeup_pause(pWakeup)==SQLITE_OK && sqlitetriggers_wakeup_pause(pWakeup)==SQLITE_OK,
         "wakeup_pause, twice");
  commitInChild(zDb, "INSERT INTO lists(title) VALUES ('while paused')", 0);
  expect(sqlitetriggers_wakeup_wait(pWakeup, 100)==0, "paused: another process's commit raises no event");
  expect(sqlitetriggers_wakeup_resume(pWakeup)==SQLITE_OK && sqlitetriggers_wakeup_resume(pWakeup)==SQLITE_OK,
         "wakeup_resume, twice");
  expect(sqlitetriggers_wakeup_wait(pWakeup, 50)==0, "resumed: nothing queued from the pause");
  commitInChild(zDb, "INSERT INTO lists(title) VALUES ('after resuming')", 0);
  expect(sqlitetriggers_wakeup_wait(pWakeup, 2000)==1, "resumed: another process's commit wakes the source again");
  /* The folder renamed while paused, and a new one made at its old path:
  ** resuming watches the folder itself, where the file now is (found by
  ** an attacker: by its path, the watch went to the new folder). */
  {
    char zMoved[80], zMovedDb[600];
    snprintf(zMoved, sizeof(zMoved), "%s-moved", zDir);
    snprintf(zMovedDb, sizeof(zMovedDb), "%s/app.sqlite", zMoved);
    sqlitetriggers_wakeup_drain(pWakeup);
    sqlitetriggers_wakeup_pause(pWakeup);
    expect(rename(zDir, zMoved)==0 && mkdir(zDir, 0700)==0, "the folder renamed, a new one at its path");
    expect(sqlitetriggers_wakeup_resume(pWakeup)==SQLITE_OK, "wakeup_resume after the folder was renamed");
    commitInChild(zMovedDb, "INSERT INTO lists(title) VALUES ('in the renamed folder')", 0);
    expect(sqlitetriggers_wakeup_wait(pWakeup, 2000)==1, "resumed: a commit in the renamed folder wakes the source");
    expect(rmdir(zDir)==0 && rename(zMoved, zDir)==0, "the folder put back");
    sqlitetriggers_wakeup_drain(pWakeup);
  }
  expect(sqlitetriggers_wakeup_pause(0)==SQLITE_MISUSE && sqlitetriggers_wakeup_resume(0)==SQLITE_MISUSE,
         "wakeup_pause and _resume of NULL are SQLITE_MISUSE");
  sqlitetriggers_wakeup_close(pWakeup);
  sqlitetriggers_wakeup_close(0);
  expect(sqlitetriggers_wakeup_wait(0, 0)==-1, "wakeup_wait(NULL) is -1");

  unlink(zLink);
  zLink[strlen(zLink) - strlen("/app.sqlite")] = 0;
  unlink(zLink);
  {
    char zCmd[600];
    snprintf(zCmd, sizeof(zCmd), "rm -rf '%s'", zDir);
    if( system(zCmd)!=0 ) fprintf(stderr, "could not remove %s\n", zDir);
  }
}

/* The database file's modification time, in nanoseconds. */
static long long fileTimeNs(const char *zPath){
  struct stat st;
  if( stat(zPath, &st)!=0 ) return -1;
  return (long long)st.st_mtim.tv_sec*1000000000LL + st.st_mtim.tv_nsec;
}

/* The post itself (the file's times touched after the commit): in WAL
** mode a commit never writes the database file, so its time moves only by
** the post.  Only a committed transaction that wrote log rows posts. */
static void testOnlyCommitsToTheLogPost(void){
  char zDir[64], zDb[512];
  sqlite3 *db = 0;
  long long t0;
  scratchDatabase(zDir, zDb);
  sqlite3_open(zDb, &db);
  sqlitetriggers_register(db);
  exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT);"
           "CREATE TABLE other(id INTEGER PRIMARY KEY); SELECT sqlitetriggers_log_install('lists');"
           "PRAGMA wal_autocheckpoint=0; PRAGMA wal_checkpoint(TRUNCATE);");
  t0 = fileTimeNs(zDb);
  usleep(20000);
  exec(db, "BEGIN; INSERT INTO lists(title) VALUES ('a'); ROLLBACK;");
  exec(db, "INSERT INTO other DEFAULT VALUES; SELECT count(*) FROM lists;");
  expect(fileTimeNs(zDb)==t0, "a rollback, a commit to an unlogged table and a read post nothing");
  exec(db, "INSERT INTO lists(title) VALUES ('b')");
  expect(fileTimeNs(zDb)>t0, "a commit that wrote log rows posts (touches the file)");
  sqlite3_close(db);
  {
    char zCmd[600];
    snprintf(zCmd, sizeof(zCmd), "rm -rf '%s'", zDir);
    if( system(zCmd)!=0 ) fprintf(stderr, "could not remove %s\n", zDir);
  }
}

/* A post goes to the file the log rows went to: through ATTACH, the
** attached file, not the main one; and never to a real file whose name an
** in-memory database carries (file:PATH?vfs=memdb). */
static void testPostsGoWhereTheLogRowsWent(void){
  char zDir[64], zApp[512], zTool[600], zText[600], zUri[700];
  sqlite3 *db = 0;
  long long tApp, tTool, tText;
  FILE *pText;
  scratchDatabase(zDir, zApp);
  snprintf(zTool, sizeof(zTool), "%s/tool.sqlite", zDir);
  snprintf(zText, sizeof(zText), "%s/notes.txt", zDir);
  sqlite3_open(zApp, &db);
  sqlitetriggers_register(db);
  exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT);"
           "SELECT sqlitetriggers_log_install('lists'); PRAGMA wal_checkpoint(TRUNCATE);");
  sqlite3_close(db);
  sqlite3_open(zTool, &db);
  sqlitetriggers_register(db);
  exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE scratch(x); PRAGMA wal_checkpoint(TRUNCATE);");
  {
    char *zAttach = sqlite3_mprintf("ATTACH %Q AS app", zApp);
    exec(db, zAttach);
    sqlite3_free(zAttach);
  }
  tApp = fileTimeNs(zApp);
  tTool = fileTimeNs(zTool);
  usleep(20000);
  exec(db, "INSERT INTO app.lists(title) VALUES ('from the tool')");
  expect(fileTimeNs(zApp)>tApp && fileTimeNs(zTool)==tTool,
         "a write through ATTACH posts for the attached file the log rows went to, not the main one");
  sqlite3_close(db);

  pText = fopen(zText, "w");
  if( pText ){ fputs("not a database\n", pText); fclose(pText); }
  tText = fileTimeNs(zText);
  snprintf(zUri, sizeof(zUri), "file:%s?vfs=memdb", zText);
  usleep(20000);
  expect(sqlite3_open_v2(zUri, &db, SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE|SQLITE_OPEN_URI, 0)==SQLITE_OK
         && sqlitetriggers_register(db)==SQLITE_OK, "an in-memory database named like a file opens");
  exec(db, "CREATE TABLE lists(id INTEGER PRIMARY KEY, title TEXT); SELECT sqlitetriggers_log_install('lists');"
           "INSERT INTO lists(title) VALUES ('in memory');");
  expect(fileTimeNs(zText)==tText, "a memdb database never touches the real file whose name it carries");
  sqlite3_close(db);
  {
    char zCmd[600];
    snprintf(zCmd, sizeof(zCmd), "rm -rf '%s'", zDir);
    if( system(zCmd)!=0 ) fprintf(stderr, "could not remove %s\n", zDir);
  }
}

void runWakeupTests(void){
  testWakeupOnCommitsOfOtherProcesses();
  testOnlyCommitsToTheLogPost();
  testPostsGoWhereTheLogRowsWent();
}

#else
void runWakeupTests(void){}
#endif
