/*
** log_wakeup.c: waking the durable log's readers when another process
** commits, instead of at their next poll.
**
** No SQL functions are defined here.  The API is in sqlitetriggers.h:
**
**   sqlitetriggers_wakeup_open(zDbPath, &pWakeup)
**       A wake-up source for the database file zDbPath (which must exist).
**   sqlitetriggers_wakeup_fd(pWakeup)
**       A descriptor that polls readable when the source has woken: hand it
**       to poll(), a run loop or a dispatch source.
**   sqlitetriggers_wakeup_drain(pWakeup)
**       Reads what woke the descriptor: 1 when a commit may have happened
**       since the last drain, 0 when nothing did (the descriptor is empty
**       again either way).
**   sqlitetriggers_wakeup_wait(pWakeup, nTimeoutMs)
**       poll() and drain in one call: 1 woken, 0 timed out, -1 error; a
**       negative timeout waits for ever.
**   sqlitetriggers_wakeup_pause(pWakeup), sqlitetriggers_wakeup_resume(pWakeup)
**       No events while paused (Linux: the watch is removed, so writers of
**       the folder pay nothing for it); after resuming, look once more.
**   sqlitetriggers_wakeup_close(pWakeup)
**   sqlitetriggers_wakeup_name(zDbPath, zOut, nOut)
**       The name the source listens to on Apple platforms.
**
** THE MECHANISMS
**   Every file name is resolved first (realpath(): /var and /private/var,
**   a symlinked folder), so every process of an app finds the same file and
**   the same name.
**
**   Linux: inotify on the database's folder, for the file, its -wal and its
**   -journal: any writer's commit writes one of them, with or without the
**   extension.  The last write of a commit can come a few microseconds
**   before other connections see it (the WAL index, in shared memory, is
**   updated after the WAL's last frame and inotify cannot see it), so a
**   connection with the extension also touches the file's times once its
**   transaction has committed (IN_ATTRIB): the wake-up its readers get
**   comes after the commit is visible.
**
**   Apple platforms: libnotify, which every process of the device shares.
**   A connection with the extension posts the file's name after each
**   transaction that wrote to the log commits; readers register a file
**   descriptor for the name (no run loop, no main thread).  Notifications
**   carry nothing and coalesce, which is all a wake-up needs: a reader
**   that wakes reads the log and finds what is new, or nothing (its own
**   posts wake it too, harmlessly).  Writers without the extension post
**   nothing; readers find their changes at their poll.
**
**   Elsewhere: no source (SQLITE_NOTFOUND); readers poll.
**
** A connection's posting is in sqlitetriggers_wakeup_post_commit(), called
** by the transaction's commit (callback_tables.c) when the transaction
** stamped log rows (log_stamp.c).
*/
#include "sqlitetriggers_internal.h"
#include "include/sqlitetriggers.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
# include <sys/inotify.h>
#elif defined(__APPLE__)
# include <notify.h>
#endif

struct sqlitetriggers_wakeup {
  int fd;                     /* inotify, or libnotify's descriptor */
#if defined(__linux__)
  char *zBase;                /* the database file's name in its folder */
  char *zFolder;              /* the folder watched, */
  int folderFd;               /* open, so that resuming finds it renamed */
  int wd;                     /* its watch, or -1 while paused */
#elif defined(__APPLE__)
  int token;                  /* libnotify's registration */
#endif
};

/* The notification name: a fixed prefix and FNV-1a of the resolved path,
** so that it fits libnotify's names and says nothing of the path. */
static void wakeupNameOfResolved(const char *zResolved, char *zOut, int nOut){
  uint64_t h = 0xcbf29ce484222325ULL;
  const unsigned char *z;
  for(z=(const unsigned char*)zResolved; *z; z++){
    h = (h ^ *z) * 0x100000001b3ULL;
  }
  snprintf(zOut, (size_t)nOut, "sqlitetriggers.durable-log.%016llx", (unsigned long long)h);
}

int sqlitetriggers_wakeup_name(const char *zDbPath, char *zOut, int nOut){
  char zResolved[PATH_MAX];
  if( zDbPath==0 || zOut==0 || nOut<44 ) return SQLITE_MISUSE;
  if( realpath(zDbPath, zResolved)==0 ) return SQLITE_CANTOPEN;
  wakeupNameOfResolved(zResolved, zOut, nOut);
  return SQLITE_OK;
}

#if defined(__linux__)

int sqlitetriggers_wakeup_open(const char *zDbPath, sqlitetriggers_wakeup **ppWakeup){
  char zResolved[PATH_MAX];
  char *zSlash;
  sqlitetriggers_wakeup *p;
  if( ppWakeup==0 ) return SQLITE_MISUSE;
  *ppWakeup = 0;
  if( zDbPath==0 ) return SQLITE_MISUSE;
  if( realpath(zDbPath, zResolved)==0 ) return SQLITE_CANTOPEN;
  zSlash = strrchr(zResolved, '/');
  if( zSlash==0 ) return SQLITE_CANTOPEN;
  /* malloc(), not sqlite3_malloc(): a process that only waits on the file
  ** calls this before any connection loaded the library, when a loadable
  ** build has no SQLite routines yet. */
  p = malloc(sizeof(*p));
  if( p==0 ) return SQLITE_NOMEM;
  p->zBase = strdup(zSlash+1);
  *zSlash = 0;
  p->zFolder = strdup(zSlash==zResolved ? "/" : zResolved);
  p->wd = -1;
  p->folderFd = p->zFolder ? open(p->zFolder, O_RDONLY|O_DIRECTORY|O_CLOEXEC) : -1;
  p->fd = inotify_init1(IN_NONBLOCK|IN_CLOEXEC);
  if( p->zBase==0 || p->zFolder==0 || p->fd<0 ){
    int rc = p->zBase==0 || p->zFolder==0 ? SQLITE_NOMEM : SQLITE_IOERR;
    sqlitetriggers_wakeup_close(p);
    return rc;
  }
  if( sqlitetriggers_wakeup_resume(p)!=SQLITE_OK ){
    sqlitetriggers_wakeup_close(p);
    return SQLITE_IOERR;
  }
  *ppWakeup = p;
  return SQLITE_OK;
}

/* Removing the watch queues IN_IGNORED, which drain passes over (it names
** no file); events queued before stay, and are drained as usual. */
int sqlitetriggers_wakeup_pause(sqlitetriggers_wakeup *p){
  if( p==0 ) return SQLITE_MISUSE;
  if( p->wd>=0 ){
    inotify_rm_watch(p->fd, p->wd);
    p->wd = -1;
  }
  return SQLITE_OK;
}

/* The watch is added through the folder's descriptor (/proc/self/fd/N
** names the folder itself), so that a folder renamed while paused is still
** the one watched, and a new folder made at the old path is not; by its
** path where that cannot be done (no /proc). */
int sqlitetriggers_wakeup_resume(sqlitetriggers_wakeup *p){
  const uint32_t mask = IN_MODIFY|IN_ATTRIB|IN_CLOSE_WRITE|IN_DELETE|IN_MOVED_TO|IN_CREATE;
  if( p==0 ) return SQLITE_MISUSE;
  if( p->wd<0 && p->folderFd>=0 ){
    char zFd[40];
    snprintf(zFd, sizeof(zFd), "/proc/self/fd/%d", p->folderFd);
    p->wd = inotify_add_watch(p->fd, zFd, mask);
    if( p->wd<0 && errno!=ENOENT ) return errno==ENOMEM || errno==ENOSPC ? SQLITE_NOMEM : SQLITE_IOERR;
  }
  if( p->wd<0 ){
    p->wd = inotify_add_watch(p->fd, p->zFolder, mask);
    if( p->wd<0 ) return errno==ENOMEM || errno==ENOSPC ? SQLITE_NOMEM : SQLITE_IOERR;
  }
  return SQLITE_OK;
}

/* zName is the database file, or its -wal or -journal. */
static int isDatabaseFile(const sqlitetriggers_wakeup *p, const char *zName){
  size_t n = strlen(p->zBase);
  if( strncmp(zName, p->zBase, n)!=0 ) return 0;
  return zName[n]==0 || strcmp(zName+n, "-wal")==0 || strcmp(zName+n, "-journal")==0;
}

int sqlitetriggers_wakeup_drain(sqlitetriggers_wakeup *p){
  /* inotify's events are aligned for struct inotify_event. */
  union { struct inotify_event ev; char a[4096]; } buf;
  int isWoken = 0;
  if( p==0 ) return 0;
  for(;;){
    ssize_t n = read(p->fd, buf.a, sizeof(buf.a));
    ssize_t i = 0;
    if( n<=0 ) break;         /* EAGAIN: drained */
    while( i+(ssize_t)sizeof(struct inotify_event)<=n ){
      const struct inotify_event *pEv = (const struct inotify_event*)(buf.a+i);
      if( (pEv->mask & IN_Q_OVERFLOW) || (pEv->len>0 && isDatabaseFile(p, pEv->name)) ){
        isWoken = 1;
      }
      i += (ssize_t)sizeof(struct inotify_event) + pEv->len;
    }
  }
  return isWoken;
}

void sqlitetriggers_wakeup_close(sqlitetriggers_wakeup *p){
  if( p==0 ) return;
  if( p->fd>=0 ) close(p->fd);
  if( p->folderFd>=0 ) close(p->folderFd);
  free(p->zBase);
  free(p->zFolder);
  free(p);
}

#elif defined(__APPLE__)

int sqlitetriggers_wakeup_open(const char *zDbPath, sqlitetriggers_wakeup **ppWakeup){
  char zName[64];
  sqlitetriggers_wakeup *p;
  int rc;
  if( ppWakeup==0 ) return SQLITE_MISUSE;
  *ppWakeup = 0;
  rc = sqlitetriggers_wakeup_name(zDbPath, zName, (int)sizeof(zName));
  if( rc!=SQLITE_OK ) return rc;
  p = malloc(sizeof(*p));     /* not sqlite3_malloc(): see the Linux one */
  if( p==0 ) return SQLITE_NOMEM;
  p->fd = -1;
  if( notify_register_file_descriptor(zName, &p->fd, 0, &p->token)!=NOTIFY_STATUS_OK ){
    free(p);
    return SQLITE_IOERR;
  }
  /* Non-blocking, so that drain stops when the descriptor is empty. */
  fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) | O_NONBLOCK);
  *ppWakeup = p;
  return SQLITE_OK;
}

int sqlitetriggers_wakeup_drain(sqlitetriggers_wakeup *p){
  int aToken[64];
  int isWoken = 0;
  if( p==0 ) return 0;
  /* Each notification writes the registration's token, 4 bytes. */
  while( read(p->fd, aToken, sizeof(aToken))>0 ) isWoken = 1;
  return isWoken;
}

/* A notification costs its poster the same whether or not anyone listens. */
int sqlitetriggers_wakeup_pause(sqlitetriggers_wakeup *p){ return p ? SQLITE_OK : SQLITE_MISUSE; }
int sqlitetriggers_wakeup_resume(sqlitetriggers_wakeup *p){ return p ? SQLITE_OK : SQLITE_MISUSE; }

void sqlitetriggers_wakeup_close(sqlitetriggers_wakeup *p){
  if( p==0 ) return;
  notify_cancel(p->token);    /* closes the descriptor too */
  free(p);
}

#else

int sqlitetriggers_wakeup_open(const char *zDbPath, sqlitetriggers_wakeup **ppWakeup){
  (void)zDbPath;
  if( ppWakeup ) *ppWakeup = 0;
  return SQLITE_NOTFOUND;
}
int sqlitetriggers_wakeup_drain(sqlitetriggers_wakeup *p){ (void)p; return 0; }
int sqlitetriggers_wakeup_pause(sqlitetriggers_wakeup *p){ return p ? SQLITE_OK : SQLITE_MISUSE; }
int sqlitetriggers_wakeup_resume(sqlitetriggers_wakeup *p){ return p ? SQLITE_OK : SQLITE_MISUSE; }
void sqlitetriggers_wakeup_close(sqlitetriggers_wakeup *p){ (void)p; }

#endif

int sqlitetriggers_wakeup_fd(const sqlitetriggers_wakeup *p){
#if defined(__linux__) || defined(__APPLE__)
  return p ? p->fd : -1;
#else
  (void)p;
  return -1;
#endif
}

static sqlite3_int64 monotonicMs(void){
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (sqlite3_int64)t.tv_sec*1000 + t.tv_nsec/1000000;
}

int sqlitetriggers_wakeup_wait(sqlitetriggers_wakeup *p, int nTimeoutMs){
  sqlite3_int64 iDeadline = monotonicMs() + (nTimeoutMs<0 ? 0 : nTimeoutMs);
  struct pollfd pfd;
  int rc;
  if( p==0 || sqlitetriggers_wakeup_fd(p)<0 ) return -1;
  if( sqlitetriggers_wakeup_drain(p) ) return 1;   /* already woken */
  for(;;){
    sqlite3_int64 iLeft = nTimeoutMs<0 ? -1 : iDeadline - monotonicMs();
    if( nTimeoutMs>=0 && iLeft<0 ) iLeft = 0;
    pfd.fd = sqlitetriggers_wakeup_fd(p);
    pfd.events = POLLIN;
    pfd.revents = 0;
    rc = poll(&pfd, 1, (int)iLeft);
    if( rc<0 && errno==EINTR ) continue;
    if( rc<=0 ) return rc<0 ? -1 : 0;
    if( sqlitetriggers_wakeup_drain(p) ) return 1;
    /* Another file of the folder changed: wait for the time left. */
  }
}

/* ---- posting ------------------------------------------------------------ */

/*
** 1 when database zDb of db is a real file: a file name, on one of SQLite's
** file-backed VFSes ("unix" and its variants, "win32").  A memdb database
** may carry the name of an unrelated real file (file:/path?vfs=memdb, as
** apps that deserialize a copy open it): never touch or post for that.
*/
static int isRealDatabaseFile(sqlite3 *db, const char *zDb, const char **pzFile){
  sqlite3_vfs *pVfs = 0;
  const char *zFile = sqlite3_db_filename(db, zDb);
  if( zFile==0 || zFile[0]==0 ) return 0;          /* in memory, or temporary */
  if( sqlite3_file_control(db, zDb, SQLITE_FCNTL_VFS_POINTER, &pVfs)!=SQLITE_OK || pVfs==0
   || pVfs->zName==0
   || (strncmp(pVfs->zName, "unix", 4)!=0 && strncmp(pVfs->zName, "win32", 5)!=0) ){
    return 0;
  }
  *pzFile = zFile;
  return 1;
}

/* 1 when database zDb holds a durable log (or cannot be read: then a
** wake-up is the safe guess). */
static int holdsDurableLog(sqlite3 *db, const char *zDb){
  sqlite3_stmt *pStmt = 0;
  char *zSql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE type = 'table'"
                               " AND name = 'sqlitetriggers_log'", zDb);
  int holds = 1;
  if( zSql && sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)==SQLITE_OK ){
    holds = sqlite3_step(pStmt)==SQLITE_ROW;
  }
  sqlite3_finalize(pStmt);
  sqlite3_free(zSql);
  return holds;
}

/*
** At xSync of a transaction that stamped log rows: which databases they
** went to.  The stamp cannot tell (the log's triggers call it without a
** name), so: the one database this transaction writes (the common case,
** with no lookup), or, when it writes several, each of them that holds a
** durable log.  A tool whose main database is another file, writing the
** app's file through ATTACH, wakes the app's readers (its own main is
** written too, by swift_callback_pending's join, but holds no log).
*/
void sqlitetriggers_wakeup_prepare_commit(Connection *p){
  const char *zDb;
  int iDb, nWritten = 0;
  memset(p->aWakeupDb, 0, sizeof(p->aWakeupDb));
  for(iDb=0; (zDb = sqlite3_db_name(p->db, iDb))!=0 && iDb<(int)(8*sizeof(p->aWakeupDb)); iDb++){
    if( iDb!=1 && sqlite3_txn_state(p->db, zDb)==SQLITE_TXN_WRITE ){
      p->aWakeupDb[iDb/8] |= (unsigned char)(1 << (iDb%8));
      nWritten++;
    }
  }
  for(iDb=0; nWritten>1 && (zDb = sqlite3_db_name(p->db, iDb))!=0
             && iDb<(int)(8*sizeof(p->aWakeupDb)); iDb++){
    if( (p->aWakeupDb[iDb/8] & (1 << (iDb%8))) && !holdsDurableLog(p->db, zDb) ){
      p->aWakeupDb[iDb/8] &= (unsigned char)~(1 << (iDb%8));
    }
  }
}

/*
** After a transaction that stamped log rows committed on p: wake the
** log's readers in every process, for each database file the rows went to
** (sqlitetriggers_wakeup_prepare_commit).  Best effort (a reader that
** misses it polls), and never an error: the transaction has committed.
*/
void sqlitetriggers_wakeup_post_commit(Connection *p){
  const char *zDb, *zFile = 0;
  int iDb;
  for(iDb=0; (zDb = sqlite3_db_name(p->db, iDb))!=0 && iDb<(int)(8*sizeof(p->aWakeupDb)); iDb++){
    if( (p->aWakeupDb[iDb/8] & (1 << (iDb%8)))==0 || !isRealDatabaseFile(p->db, zDb, &zFile) ){
      continue;
    }
#if defined(__linux__)
    utimensat(AT_FDCWD, zFile, 0, 0);
#elif defined(__APPLE__)
    {
      char zName[64];
      if( iDb==0 && p->zWakeupName ){
        notify_post(p->zWakeupName);
      }else if( sqlitetriggers_wakeup_name(zFile, zName, (int)sizeof(zName))==SQLITE_OK ){
        /* The main file's name is kept: its realpath() is the same every time. */
        if( iDb==0 ) p->zWakeupName = sqlite3_mprintf("%s", zName);
        notify_post(zName);
      }
    }
#endif
  }
  memset(p->aWakeupDb, 0, sizeof(p->aWakeupDb));
}
