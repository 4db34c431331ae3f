/*
** Fault injection: every allocation SQLite makes, for us or for itself,
** fails in turn.  A counting allocator (SQLITE_CONFIG_MALLOC) fails
** allocation N, for N = 1, 2, ... until a run of the scenario reaches its
** end without reaching N; once failing only that allocation ("transient"),
** once failing it and every later one until the scenario's body ends
** ("persistent").
**
** After each run, with injection off, the invariants are checked:
**   - every statement either gave exactly the result of a run without
**     failures, or failed (SQLITE_NOMEM, or an error naming memory);
**   - the events delivered to the after-commit observer, and the log, are
**     exactly the audit rows the same triggers committed: nothing lost,
**     nothing from rolled-back work;
**   - the connection is still usable, and closes.
** Built with ASan, UBSan and leak detection (make test runs it): a crash,
** a use of a NULL pointer or a leak fails the run.
**
** Prints "oom: N passed, N failed".
*/
#include "sqlitetriggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the counting allocator ------------------------------------------- */

static sqlite3_mem_methods defaultMethods;
static long nAllocations = 0;       /* since arming */
static long iFailAt = 0;            /* 0: never fail */
static int isPersistent = 0;
static int nInjected = 0;

static int shouldFail(void){
  if( iFailAt==0 ) return 0;
  nAllocations++;
  if( nAllocations==iFailAt || (isPersistent && nAllocations>iFailAt) ){
    nInjected++;
    return 1;
  }
  return 0;
}
static void *countingMalloc(int n){
  return shouldFail() ? 0 : defaultMethods.xMalloc(n);
}
static void *countingRealloc(void *p, int n){
  return shouldFail() ? 0 : defaultMethods.xRealloc(p, n);
}

static void arm(long iAt, int persistent){
  nAllocations = 0;
  nInjected = 0;
  iFailAt = iAt;
  isPersistent = persistent;
}
static void disarm(void){ iFailAt = 0; }

/* ---- checks ------------------------------------------------------------ */

/* A run passes when every expectation in it holds; each run counts once. */
static int nPassed = 0, nFailed = 0, nRunFailures = 0;

static void expect(int condition, const char *zWhat, long iAt, int persistent){
  if( condition ) return;
  nRunFailures++;
  if( nFailed + nRunFailures<=20 ){
    printf("FAIL %s (allocation %ld failing, %s)\n", zWhat, iAt,
           persistent ? "persistent" : "transient");
  }
}

static void endRun(void){
  if( nRunFailures ) nFailed++; else nPassed++;
  nRunFailures = 0;
}

/* A failure caused by memory: the code, or a message that says so. */
static int isMemoryFailure(sqlite3 *db, int rc){
  return (rc & 0xff)==SQLITE_NOMEM
      || strstr(sqlite3_errmsg(db), "out of memory")!=0;
}

/* Run zSql; its first column's rows joined by '\n' into zOut (4096). */
static int run(sqlite3 *db, const char *zSql, char *zOut){
  sqlite3_stmt *pStmt = 0;
  int rc = sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0);
  if( zOut ) zOut[0] = 0;
  if( rc==SQLITE_OK ){
    while( (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
      const char *z = (const char*)sqlite3_column_text(pStmt, 0);
      if( zOut ){
        size_t n = strlen(zOut);
        snprintf(zOut + n, 4096 - n, "%s%s", n ? "\n" : "", z ? z : "NULL");
      }
    }
    if( rc==SQLITE_DONE ) rc = SQLITE_OK;
  }
  rc = sqlite3_finalize(pStmt)==SQLITE_OK ? rc : sqlite3_errcode(db);
  return rc;
}

/* ---- scenario 1: every SQL function ------------------------------------ */

static const char *const aFunctionSql[] = {
  "SELECT quote(sqlitetriggers_seed_random(7)) || uuid() || uuid()",
  /* The instant the run already pinned: a failure here changes nothing. */
  "SELECT quote(sqlitetriggers_pin_clock('2024-01-02 03:04:05.678', '+1 day'))",
  "SELECT uuid_version(uuidv7()) || uuidv7_timestamp(uuidv7())"
  "    || uuidv7_datetime(uuidv7())",
  "SELECT quote(uuid_str(zeroblob(16))) || quote(uuid_blob('{0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B}'))"
  "    || quote(uuid_version(zeroblob(16))) || quote(uuid_str('not a uuid'))"
  "    || quote(uuid_version('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'))"
  "    || quote(uuidv7_timestamp(uuid_blob('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')))",
  "SELECT quote(datetime_subsec('2024-02-29 23:59:59.9999', '+1 day'))"
  "    || quote(unixepoch_subsec('1970-01-01 00:00:01.500'))"
  "    || quote(datetime_subsec()) || quote(datetime_subsec('now', 'start of day'))"
  "    || quote(datetime_subsec('subsec', '+1 hour'))"
  "    || quote(datetime_subsec(1700000000.5, 'unixepoch', 'subsec'))"
  "    || quote(datetime_subsec('2024-01-01', 'a', 'b', 'c', 'd', 'e', 'f', 'g',"
  "                             'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p'))",
  "SELECT sqlitetriggers_derived_uuid(zeroblob(32), 'Reminders', 5)"
  "    || sqlitetriggers_derived_uuid(zeroblob(32), 'x', -1)",
  "SELECT swift_callback_log_capacity(10) || swift_callback_log_capacity()",
  "SELECT quote(swift_callback('direct', 1, 2.5, 'three', zeroblob(4), NULL))",
  /* Table cf exists (created before the injection starts). */
  "SELECT sqlitetriggers_change_feed('cf') || sqlitetriggers_change_feed('cf', 'keys')"
  "    || sqlitetriggers_change_feed('cf', 'off')",
};
#define N_FUNCTION_SQL (int)(sizeof(aFunctionSql)/sizeof(aFunctionSql[0]))

static char azExpected[N_FUNCTION_SQL][4096];

/* A registered in-memory connection; isUtf16: its database stores text
** in UTF-16 (sqlite3_open16's default), which the capture converts. */
static sqlite3 *openRegisteredEncoded(int isUtf16){
  sqlite3 *db = 0;
  if( (isUtf16 ? sqlite3_open16(u":memory:", &db) : sqlite3_open(":memory:", &db))!=SQLITE_OK
   || sqlitetriggers_register(db)!=SQLITE_OK ){
    fprintf(stderr, "oom: cannot open a connection\n");
    exit(2);
  }
  return db;
}

static sqlite3 *openRegistered(void){ return openRegisteredEncoded(0); }

/* One run; iAt 0 records the expected results. */
static void runFunctions(long iAt, int persistent){
  sqlite3 *db = openRegistered();
  char zOut[4096];
  int i;
  sqlitetriggers_pin_clock(db, 1704164645678LL + 86400000);
  if( sqlite3_exec(db, "CREATE TABLE cf(id INTEGER PRIMARY KEY, v TEXT)", 0, 0, 0)!=SQLITE_OK ){
    fprintf(stderr, "oom: cannot create the change-feed table\n");
    exit(2);
  }
  arm(iAt, persistent);
  for(i=0; i<N_FUNCTION_SQL; i++){
    int rc = run(db, aFunctionSql[i], zOut);
    if( iAt==0 ){
      memcpy(azExpected[i], zOut, sizeof(zOut));
    }else if( rc==SQLITE_OK ){
      expect(strcmp(zOut, azExpected[i])==0,
             "a statement that succeeds gives the same result", iAt, persistent);
      if( strcmp(zOut, azExpected[i])!=0 && nFailed<=20 ){
        printf("  %s\n  gave      %s\n  expected  %s\n", aFunctionSql[i],
               zOut, azExpected[i]);
      }
    }else{
      expect(isMemoryFailure(db, rc),
             "a statement that fails says it is out of memory", iAt, persistent);
      if( !isMemoryFailure(db, rc) && nFailed<=20 ){
        printf("  %s\n  failed with %d: %s\n", aFunctionSql[i], rc,
               sqlite3_errmsg(db));
      }
    }
  }
  disarm();
  expect(run(db, "SELECT uuid_version(uuid())", zOut)==SQLITE_OK
         && strcmp(zOut, "4")==0, "the connection is usable afterwards",
         iAt, persistent);
  expect(sqlite3_close(db)==SQLITE_OK, "the connection closes", iAt,
         persistent);
  endRun();
}

/*
** Runs a scenario's statements, delivering between them as a host does.
** A constraint failure is the script's own.  After a failure for memory,
** SQLite may have rolled the transaction back, and a later ROLLBACK TO or
** COMMIT fails in turn: only the first failure must be memory.
*/
static void runScript(sqlite3 *db, const char *const *azSql, int nSql,
                      const char *zWhat, long iAt, int persistent){
  int i, hasFailed = 0;
  for(i=0; i<nSql; i++){
    int rc = run(db, azSql[i], 0);
    sqlitetriggers_deliver(db);
    if( rc!=SQLITE_OK && (rc & 0xff)!=SQLITE_CONSTRAINT && !hasFailed ){
      hasFailed = 1;
      expect(isMemoryFailure(db, rc) || iAt==0, zWhat, iAt, persistent);
      if( !isMemoryFailure(db, rc) && nFailed<=20 ){
        printf("  %s\n  failed with %d: %s\n", azSql[i], rc, sqlite3_errmsg(db));
      }
    }
  }
}

/* ---- scenario 2: swift_callback in transactions ------------------------ */

typedef struct Delivered {
  char zValues[4096];     /* the delivered 'ins' values, '\n'-separated */
  int nBadShape;
} Delivered;

static void recordDelivery(void *pArg, const sqlitetriggers_event *pEvent){
  Delivered *p = (Delivered*)pArg;
  const unsigned char *zValue;
  size_t n = strlen(p->zValues);
  if( strcmp(sqlitetriggers_event_name(pEvent), "ins")!=0 ) return;
  zValue = sqlitetriggers_event_text(pEvent, 0);
  if( sqlitetriggers_event_argc(pEvent)!=4
   || sqlitetriggers_event_type(pEvent, 1)!=SQLITE_BLOB
   || sqlitetriggers_event_bytes(pEvent, 1)!=3
   || sqlitetriggers_event_double(pEvent, 2)!=1.5
   || sqlitetriggers_event_type(pEvent, 3)!=SQLITE_NULL
   || zValue==0 ){
    p->nBadShape++;
    return;
  }
  snprintf(p->zValues + n, sizeof(p->zValues) - n, "%s%s", n ? "\n" : "",
           (const char*)zValue);
}

/* A batch observer reads its rounds with a statement of its own, which
** may fail for memory: then it must say so (nReadFailures), never deliver
** a wrong value. */
typedef struct BatchRead {
  Delivered values;
  sqlite3 *db;
  int nReadFailures;
} BatchRead;

static void readBatch(void *pArg, int nEvent){
  BatchRead *p = (BatchRead*)pArg;
  sqlite3_stmt *pStmt = 0;
  int rc, nRead = 0;
  rc = sqlite3_prepare_v2(p->db, "SELECT arg1, argc FROM swift_callback_batch",
                          -1, &pStmt, 0);
  while( rc==SQLITE_OK && (rc = sqlite3_step(pStmt))==SQLITE_ROW ){
    const unsigned char *zValue = sqlite3_column_text(pStmt, 0);
    size_t n = strlen(p->values.zValues);
    rc = SQLITE_OK;
    if( zValue==0 ){ rc = SQLITE_NOMEM; break; }
    if( sqlite3_column_int(pStmt, 1)!=4 ) p->values.nBadShape++;
    snprintf(p->values.zValues + n, sizeof(p->values.zValues) - n, "%s%s",
             n ? "\n" : "", (const char*)zValue);
    nRead++;
  }
  if( rc!=SQLITE_DONE || nRead!=nEvent ) p->nReadFailures++;
  sqlite3_finalize(pStmt);
}

static int approveImmediately(void *pArg, const sqlitetriggers_event *pEvent,
                              sqlite3_context *pResult, char **pzError){
  (void)pArg; (void)pEvent; (void)pzError;
  sqlite3_result_text(pResult, "seen", -1, SQLITE_TRANSIENT);
  return SQLITE_OK;
}

static const char *const aCallbackSql[] = {
  "INSERT INTO t(v) VALUES ('a')",
  "BEGIN",
  "INSERT INTO t(v) VALUES ('b'), ('c')",
  "SAVEPOINT s1",
  "INSERT INTO t(v) VALUES ('d')",
  "ROLLBACK TO s1",
  "INSERT INTO t(v) VALUES ('e')",
  "SAVEPOINT s2",
  "INSERT INTO t(v) VALUES ('f')",
  "RELEASE s2",
  "INSERT INTO t(v) VALUES ('b')",           /* fails: UNIQUE */
  "SELECT name, args FROM swift_callback_pending",
  "COMMIT",
  "BEGIN",
  "INSERT INTO t(v) VALUES ('g')",
  "ROLLBACK",
  "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)"
  "  INSERT INTO t(v) SELECT 'h' || i FROM n",
  "SELECT name || args FROM swift_callback_log",
  "SELECT swift_callback('direct', 'x')",
};
#define N_CALLBACK_SQL (int)(sizeof(aCallbackSql)/sizeof(aCallbackSql[0]))

static void runCallbacksEncoded(long iAt, int persistent, int isUtf16){
  sqlite3 *db = openRegisteredEncoded(isUtf16);
  Delivered delivered;
  BatchRead batch;
  char zAudit[4096], zLog[4096];
  memset(&delivered, 0, sizeof(delivered));
  memset(&batch, 0, sizeof(batch));
  batch.db = db;
  if( sqlite3_exec(db,
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE);"
        "CREATE TABLE audit(n INTEGER PRIMARY KEY, v TEXT);"
        "CREATE TEMP TRIGGER t_ai AFTER INSERT ON t BEGIN"
        "  INSERT INTO audit(v) VALUES (new.v);"
        "  SELECT swift_callback('ins', new.v, zeroblob(3), 1.5, NULL);"
        "END;", 0, 0, 0)!=SQLITE_OK
   || sqlitetriggers_observe_after_commit(db, 0, recordDelivery, &delivered,
                                          0, 0)!=SQLITE_OK
   || sqlitetriggers_observe_immediate(db, "ins", approveImmediately, 0, 0,
                                       0)!=SQLITE_OK
   || sqlitetriggers_observe_after_commit_batch(db, "ins", readBatch, &batch,
                                                0, 0)!=SQLITE_OK ){
    fprintf(stderr, "oom: cannot set up: %s\n", sqlite3_errmsg(db));
    exit(2);
  }
  arm(iAt, persistent);
  runScript(db, aCallbackSql, N_CALLBACK_SQL, "a callback statement fails only for memory",
            iAt, persistent);
  disarm();
  if( !sqlite3_get_autocommit(db) ) sqlite3_exec(db, "COMMIT", 0, 0, 0);
  sqlitetriggers_deliver(db);
  run(db, "SELECT v FROM audit ORDER BY n", zAudit);
  run(db, "SELECT json_extract(args, '$[0]') FROM swift_callback_log"
          " WHERE name = 'ins' ORDER BY seq", zLog);
  expect(strcmp(delivered.zValues, zAudit)==0,
         "delivered events equal the committed audit rows", iAt, persistent);
  if( strcmp(delivered.zValues, zAudit)!=0 && nFailed<=20 ){
    printf("  delivered: %s\n  audit:     %s\n", delivered.zValues, zAudit);
  }
  expect(strcmp(zLog, zAudit)==0, "the log equals the committed audit rows",
         iAt, persistent);
  expect(delivered.nBadShape==0 && batch.values.nBadShape==0,
         "delivered arguments are intact", iAt, persistent);
  /* Every round the batch observer read whole is the committed rows, in
  ** order: what it missed, it was told of by a failed read. */
  expect(batch.nReadFailures>0 || strcmp(batch.values.zValues, zAudit)==0,
         "a batch observer reads the committed rows, or knows it could not",
         iAt, persistent);
  expect(nInjected!=0 || batch.nReadFailures==0, "a batch observer reads every round",
         iAt, persistent);
  expect(sqlitetriggers_undelivered_count(db)==0, "nothing waits", iAt,
         persistent);
  expect(sqlite3_exec(db, "INSERT INTO t(v) VALUES ('after')", 0, 0, 0)
         ==SQLITE_OK, "the connection is usable afterwards", iAt, persistent);
  expect(sqlite3_close(db)==SQLITE_OK, "the connection closes", iAt,
         persistent);
  endRun();
}

static void runCallbacks(long iAt, int persistent){ runCallbacksEncoded(iAt, persistent, 0); }
static void runCallbacks16(long iAt, int persistent){ runCallbacksEncoded(iAt, persistent, 1); }

/* ---- scenario 3: change capture (the preupdate hook) ------------------- */

/* A replica of t(id, v), kept from delivered changes alone. */
#define REPLICA_SIZE 128
typedef struct Replica {
  char azValue[REPLICA_SIZE][16];   /* by id; "" when absent */
  int nBadShape;
} Replica;

static void applyChange(void *pArg, const sqlitetriggers_event *pEvent){
  Replica *p = (Replica*)pArg;
  const char *zKind = (const char*)sqlitetriggers_event_text(pEvent, 0);
  int nArg = sqlitetriggers_event_argc(pEvent);
  /* An update's new side starts halfway (the script adds a column). */
  int iNew = zKind && strcmp(zKind, "update")==0 ? 1 + (nArg - 1)/2 : 1;
  sqlite3_int64 iOld = sqlitetriggers_event_int64(pEvent, 2);
  sqlite3_int64 iId = sqlitetriggers_event_int64(pEvent, iNew + 1);
  const unsigned char *zValue = sqlitetriggers_event_text(pEvent, iNew + 2);
  if( zKind==0 || iOld<0 || iOld>=REPLICA_SIZE || iId<0 || iId>=REPLICA_SIZE
   || (strcmp(zKind, "delete")!=0 && zValue==0) ){
    p->nBadShape++;
    return;
  }
  if( strcmp(zKind, "insert")!=0 ) p->azValue[iOld][0] = 0;
  if( strcmp(zKind, "delete")!=0 ){
    snprintf(p->azValue[iId], sizeof(p->azValue[iId]), "%s", (const char*)zValue);
  }
}

static const char *const aCaptureSql[] = {
  "INSERT INTO t(id, v) VALUES (1, 'a'), (2, 'b')",
  "BEGIN",
  "INSERT OR REPLACE INTO t(id, v) VALUES (3, 'a')",
  "SAVEPOINT s1",
  "UPDATE t SET v = v || '!'",
  "ROLLBACK TO s1",
  "UPDATE OR REPLACE t SET v = 'b' WHERE id = 3",
  "INSERT INTO t(id, v) VALUES (4, 'b')",       /* fails: UNIQUE */
  "COMMIT",
  "BEGIN",
  "DELETE FROM t",
  "ROLLBACK",
  /* A column added after the capture's check: its default is patched in. */
  "BEGIN",
  "UPDATE t SET v = v || 'p' WHERE id = 1",
  "ALTER TABLE t ADD COLUMN extra DEFAULT 9",
  "UPDATE t SET v = v || 'q' WHERE id = 1",
  "COMMIT",
  "WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 60)"
  "  INSERT INTO t(id, v) SELECT i, 'h' || i FROM n",
  "UPDATE t SET v = v || 'x' WHERE id % 3 = 0",
};
#define N_CAPTURE_SQL (int)(sizeof(aCaptureSql)/sizeof(aCaptureSql[0]))

static const char *const aNetSql[] = {
  "INSERT INTO t(id, v) VALUES (1, 'a'), (2, 'b')",
  "BEGIN",
  "INSERT OR REPLACE INTO t(id, v) VALUES (3, 'a')",
  "SAVEPOINT s1",
  "DELETE FROM t",
  "ROLLBACK TO s1",
  "UPDATE t SET v = 'c' WHERE id = 2",
  "COMMIT",
};
#define N_NET_SQL (int)(sizeof(aNetSql)/sizeof(aNetSql[0]))

/* zMode: 'rows' (the preupdate hook) or 'net' (triggers, at commit). */
static void runCaptureEncoded(long iAt, int persistent, int isUtf16, const char *zMode){
  sqlite3 *db = openRegisteredEncoded(isUtf16);
  int isNet = strcmp(zMode, "net")==0;
  char zInstall[128];
  Replica replica;
  char zTable[4096], zReplica[4096];
  int i;
  size_t n = 0;
  memset(&replica, 0, sizeof(replica));
  /* n, with its default, makes the capture read the table's defaults. */
  if( sqlite3_exec(db, "PRAGMA recursive_triggers = OFF;"
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE, n INT DEFAULT 5);", 0, 0, 0)!=SQLITE_OK
   || sqlitetriggers_observe_after_commit(db, "sqlitetriggers.changes.t", applyChange,
                                          &replica, 0, 0)!=SQLITE_OK ){
    fprintf(stderr, "oom: cannot set up: %s\n", sqlite3_errmsg(db));
    exit(2);
  }
  snprintf(zInstall, sizeof(zInstall), "SELECT sqlitetriggers_change_feed('t', '%s')", zMode);
  arm(iAt, persistent);
  /* Installing may fail for memory too, leaving no trigger, some, or (when
  ** the statement failed after the function) all: then a write is either
  ** refused naming the cause, or seen exactly as the table has it.  Mode
  ** 'net' has five triggers, created after its state table. */
  if( run(db, zInstall, 0)!=SQLITE_OK ){
    int rc, nTrigger;
    const char *zWhole = isNet ? "5" : "3";
    disarm();
    run(db, "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'", zTable);
    nTrigger = atoi(zTable);
    rc = sqlite3_exec(db, "INSERT INTO t(id, v) VALUES (1, 'x')", 0, 0, 0);
    sqlitetriggers_deliver(db);
    if( nTrigger>0 && strcmp(zTable, zWhole)!=0 ){
      expect(rc!=SQLITE_OK && strstr(sqlite3_errmsg(db), "triggers are missing")!=0,
             "a partly installed feed refuses writes, naming the cause", iAt, persistent);
      if( rc==SQLITE_OK && nFailed<3 ) printf("  %s triggers, the write passed\n", zTable);
    }else{
      expect(rc==SQLITE_OK && strcmp(replica.azValue[1], nTrigger ? "x" : "")==0,
             "a feed installed whole sees the write, one not installed nothing", iAt, persistent);
    }
    sqlite3_close(db);
    endRun();
    return;
  }
  /* Mode 'net' compiles more SQL per statement (its triggers' bodies): a
  ** shorter script, through each of its paths, keeps its runs few. */
  runScript(db, isNet ? aNetSql : aCaptureSql, isNet ? N_NET_SQL : N_CAPTURE_SQL,
            "a captured statement fails only for memory", iAt, persistent);
  disarm();
  if( !sqlite3_get_autocommit(db) ) sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
  sqlitetriggers_deliver(db);
  run(db, "SELECT id || '=' || v FROM t ORDER BY id", zTable);
  zReplica[0] = 0;
  for(i=0; i<REPLICA_SIZE; i++){
    if( replica.azValue[i][0]==0 ) continue;
    n += snprintf(zReplica + n, sizeof(zReplica) - n, "%s%d=%s", n ? "\n" : "", i,
                  replica.azValue[i]);
  }
  expect(replica.nBadShape==0, "captured changes are intact", iAt, persistent);
  expect(strcmp(zTable, zReplica)==0, "the replica equals the table: nothing lost, "
         "nothing rolled back", iAt, persistent);
  if( strcmp(zTable, zReplica)!=0 && nFailed<=20 ){
    printf("  table:   %s\n  replica: %s\n", zTable, zReplica);
  }
  {
    int rc = sqlite3_exec(db, "INSERT INTO t(v) VALUES ('after')", 0, 0, 0);
    expect(rc==SQLITE_OK, "the connection is usable afterwards", iAt, persistent);
    if( rc!=SQLITE_OK && nFailed<3 ) printf("  %s\n", sqlite3_errmsg(db));
  }
  expect(sqlite3_close(db)==SQLITE_OK, "the connection closes", iAt, persistent);
  endRun();
}

static void runCapture(long iAt, int persistent){ runCaptureEncoded(iAt, persistent, 0, "rows"); }
static void runCapture16(long iAt, int persistent){ runCaptureEncoded(iAt, persistent, 1, "rows"); }
static void runCaptureNet(long iAt, int persistent){ runCaptureEncoded(iAt, persistent, 0, "net"); }

/* ---- scenario 4: the durable log ------------------------------------- */

static const char *const aLogSql[] = {
  "INSERT INTO sqlitetriggers_log_consumers(name) VALUES ('sync')",
  "BEGIN",
  "SELECT sqlitetriggers_log_origin('server')",
  "INSERT INTO t(id, v) VALUES (1, 'a'), (2, 'b')",
  "INSERT OR REPLACE INTO t(id, v) VALUES (3, 'a')",
  "SAVEPOINT s",
  "UPDATE t SET v = 'c' WHERE id = 2",
  "ROLLBACK TO s",
  "COMMIT",
  "UPDATE t SET v = 'd' WHERE id = 2",
  "DELETE FROM t WHERE id = 2",
  "SELECT sqlitetriggers_log_check()",
};
#define N_LOG_SQL (int)(sizeof(aLogSql)/sizeof(aLogSql[0]))

/* A count as text, from a query. */
static long queryCount(sqlite3 *db, const char *zSql){
  char zOut[4096];
  return run(db, zSql, zOut)==SQLITE_OK ? atol(zOut) : -1;
}

/* The install is all or nothing (when out of memory stops it from undoing
** its part, its transaction stays open, and the caller's ROLLBACK does); once a consumer
** exists, every row of t and every deleted key has its change in the log,
** each stamped. */

/* A complete install of one table with a UNIQUE column: the sixteen shared
** objects (durable_log.c's azShared) and its five triggers. */
#define N_LOG_OBJECTS 21

static void runLog(long iAt, int persistent){
  sqlite3 *db = openRegistered();
  char zKeys[4096], zTable[4096];
  long nObjects;
  int rc;
  if( sqlite3_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE)", 0, 0, 0)!=SQLITE_OK ){
    fprintf(stderr, "oom: cannot set up: %s\n", sqlite3_errmsg(db));
    exit(2);
  }
  arm(iAt, persistent);
  rc = run(db, "SELECT sqlitetriggers_log_install('t', 'tombstones')", 0);
  if( rc!=SQLITE_OK ){
    expect(isMemoryFailure(db, rc), "a failed install says it is out of memory", iAt, persistent);
    disarm();
    /* As after SQLite's own SQLITE_NOMEM, the caller rolls back an open
    ** transaction (sqlite3_get_autocommit() says when). */
    if( !sqlite3_get_autocommit(db) ) sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
  }else{
    runScript(db, aLogSql, N_LOG_SQL, "a logged statement fails only for memory", iAt, persistent);
  }
  disarm();
  if( !sqlite3_get_autocommit(db) ) sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
  nObjects = queryCount(db, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'sqlitetriggers%'");
  expect(nObjects==0 || nObjects==N_LOG_OBJECTS, "the install is all or nothing", iAt, persistent);
  if( nObjects!=0 && nObjects!=N_LOG_OBJECTS && nFailed<=20 ){
    run(db, "SELECT group_concat(name) FROM sqlite_schema WHERE name LIKE 'sqlitetriggers%'", zTable);
    printf("  %ld objects: %s\n", nObjects, zTable);
  }
  if( nObjects==N_LOG_OBJECTS ){
    expect(queryCount(db, "SELECT sqlitetriggers_log_check()")==1,
           "an installed log checks whole", iAt, persistent);
    if( queryCount(db, "SELECT count(*) FROM sqlitetriggers_log_consumers")==1 ){
      /* Every key in t was written after the consumer; id 1 may be gone. */
      run(db, "SELECT group_concat(id) FROM (SELECT id FROM t ORDER BY id)", zTable);
      run(db, "SELECT group_concat(rowKey) FROM (SELECT DISTINCT rowKey FROM sqlitetriggers_log"
              " WHERE rowKey IN (SELECT id FROM t) ORDER BY rowKey)", zKeys);
      expect(strcmp(zTable, zKeys)==0, "every row written has its change logged", iAt, persistent);
      expect(queryCount(db, "SELECT count(*) FROM sqlitetriggers_log WHERE tx IS NULL")==0,
             "every change is stamped", iAt, persistent);
      expect(queryCount(db, "SELECT count(*) FROM sqlitetriggers_log AS l WHERE kind <> 1 AND kind <> 2"
                            " AND NOT EXISTS (SELECT 1 FROM sqlitetriggers_log_tombstones AS d WHERE d.id = l.id)")==0,
             "every deletion has its tombstone", iAt, persistent);
      /* The mark fails for memory alone, and the script goes on: its
      ** transaction is then local; marked, it is marked once. */
      expect(queryCount(db, "SELECT count(*) FROM sqlitetriggers_log_origins WHERE origin IS NOT 'server'")==0
             && queryCount(db, "SELECT count(*) FROM sqlitetriggers_log_origins")<=1,
             "a transaction's origin is whole or absent", iAt, persistent);
      expect(queryCount(db, "SELECT count(*) FROM t WHERE id = 1")==1
             || queryCount(db, "SELECT count(*) FROM sqlitetriggers_log WHERE rowKey = 1 AND kind IN (3, 4)")>=1
             || queryCount(db, "SELECT count(*) FROM sqlitetriggers_log WHERE rowKey = 1")==0,
             "a row REPLACE deleted has its delete logged", iAt, persistent);
    }else{
      /* Without a consumer the log keeps every change. */
      run(db, "SELECT group_concat(id) FROM (SELECT id FROM t ORDER BY id)", zTable);
      run(db, "SELECT group_concat(rowKey) FROM (SELECT DISTINCT rowKey FROM sqlitetriggers_log"
              " WHERE rowKey IN (SELECT id FROM t) ORDER BY rowKey)", zKeys);
      expect(strcmp(zTable, zKeys)==0, "without a consumer every change is kept", iAt, persistent);
    }
  }
  expect(sqlite3_exec(db, "INSERT INTO t(v) VALUES ('after')", 0, 0, 0)==SQLITE_OK,
         "the connection is usable afterwards", iAt, persistent);
  expect(sqlite3_close(db)==SQLITE_OK, "the connection closes", iAt, persistent);
  endRun();
}

/* RULES' WRITES (log_rules.c): installing the log rewrites a registered
** rule with the install, or not at all, and the registry follows; a write
** the rule stamps is then one change.  A scenario of its own, short, so
** that the log's long one does not grow with it. */
static void runLogRule(long iAt, int persistent){
  sqlite3 *db = openRegistered();
  int rc, isInstalled;
  if( sqlite3_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT);"
      "CREATE TABLE sqlitetriggers_rules(triggerName TEXT PRIMARY KEY NOT NULL, rule TEXT NOT NULL,"
      " tableName TEXT NOT NULL, sql TEXT NOT NULL) WITHOUT ROWID;"
      "CREATE TRIGGER stamp AFTER INSERT ON t BEGIN UPDATE t SET s = 'x' WHERE rowid = new.rowid; END;"
      "INSERT INTO sqlitetriggers_rules SELECT name, name, tbl_name, sql FROM sqlite_schema WHERE name = 'stamp'",
      0, 0, 0)!=SQLITE_OK ){
    fprintf(stderr, "oom: cannot set up: %s\n", sqlite3_errmsg(db));
    exit(2);
  }
  arm(iAt, persistent);
  rc = run(db, "SELECT sqlitetriggers_log_install('t')", 0);
  if( rc!=SQLITE_OK ){
    expect(isMemoryFailure(db, rc), "a failed install over a rule says it is out of memory", iAt, persistent);
  }
  disarm();
  if( !sqlite3_get_autocommit(db) ) sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
  isInstalled = queryCount(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'sqlitetriggers_log_1_insert'")==1;
  expect(queryCount(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'stamp' AND sql LIKE '%sqlitetriggers_log%'")
         ==isInstalled
         && queryCount(db, "SELECT count(*) FROM sqlitetriggers_rules AS r, sqlite_schema AS s"
                           " WHERE s.name = r.triggerName AND s.sql = r.sql")==1,
         "the rules are rewritten with the install, or not at all", iAt, persistent);
  if( isInstalled ){
    expect(sqlite3_exec(db, "INSERT INTO t(id) VALUES (1)", 0, 0, 0)==SQLITE_OK
           && queryCount(db, "SELECT count(*) FROM sqlitetriggers_changes")==1,
           "a stamped insert is one change", iAt, persistent);
  }
  expect(sqlite3_close(db)==SQLITE_OK, "the connection closes", iAt, persistent);
  endRun();
}

/* ---- the runner -------------------------------------------------------- */

/* Runs xScenario with allocation 1, 2, ... failing until a run makes no
** failure happen; returns how many runs that took. */
/* Runs xScenario failing at allocation 1, 1+nStride, ... until a run
** fails none; returns the number of runs. */
static long injectEvery(void (*xScenario)(long, int), int persistent, long nStride){
  long iAt, nRun = 0;
  for(iAt=1; ; iAt+=nStride){
    xScenario(iAt, persistent);
    nRun++;
    if( nInjected==0 ) return nRun;
  }
}

static long injectEverywhere(void (*xScenario)(long, int), int persistent){
  return injectEvery(xScenario, persistent, 1);
}

int main(void){
  sqlite3_mem_methods counting;
  sqlite3_config(SQLITE_CONFIG_GETMALLOC, &defaultMethods);
  counting = defaultMethods;
  counting.xMalloc = countingMalloc;
  counting.xRealloc = countingRealloc;
  if( sqlite3_config(SQLITE_CONFIG_MALLOC, &counting)!=SQLITE_OK ){
    fprintf(stderr, "oom: SQLITE_CONFIG_MALLOC failed\n");
    return 2;
  }
  sqlite3_initialize();

  runFunctions(0, 0);     /* the expected results */
  nPassed = 0;
  {
    long nTransient = injectEverywhere(runFunctions, 0);
    long nPersistent = injectEverywhere(runFunctions, 1);
    long nCbTransient = injectEverywhere(runCallbacks, 0);
    long nCbPersistent = injectEverywhere(runCallbacks, 1);
    long nCb16Transient = injectEverywhere(runCallbacks16, 0);
    long nCb16Persistent = injectEverywhere(runCallbacks16, 1);
    long nCapTransient = injectEverywhere(runCapture, 0);
    long nCapPersistent = injectEverywhere(runCapture, 1);
    long nCap16Transient = injectEverywhere(runCapture16, 0);
    long nCap16Persistent = injectEverywhere(runCapture16, 1);
    long nNetTransient = injectEverywhere(runCaptureNet, 0);
    /* Mode 'net' installs six objects, thousands of allocations: every
    ** one fails once, and every fourth from then on. */
    long nNetPersistent = injectEvery(runCaptureNet, 1, 4);
    long nLogTransient = injectEverywhere(runLog, 0);
    long nLogPersistent = injectEverywhere(runLog, 1);
    long nRuleTransient = injectEverywhere(runLogRule, 0);
    long nRulePersistent = injectEvery(runLogRule, 1, 4);
    printf("oom: SQL functions %ld/%ld runs, swift_callback %ld/%ld runs (UTF-16 database "
           "%ld/%ld), change capture %ld/%ld runs (UTF-16 database %ld/%ld; mode 'net' %ld/%ld), durable log "
           "%ld/%ld runs, a rule's rewrite %ld/%ld (transient/persistent); each run counts as one check\n", nTransient,
           nPersistent, nCbTransient, nCbPersistent, nCb16Transient, nCb16Persistent,
           nCapTransient, nCapPersistent, nCap16Transient, nCap16Persistent, nNetTransient,
           nNetPersistent, nLogTransient,
           nLogPersistent, nRuleTransient, nRulePersistent);
  }
  printf("oom: %d passed, %d failed\n", nPassed, nFailed);
  return nFailed ? 1 : 0;
}
