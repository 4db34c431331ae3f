/*
** swift_callback() observers through the C API: immediate observers that
** answer and refuse, after-commit delivery, observers that remove or add
** observers or write to the database while being called, and closing a
** connection with events still waiting.
*/
#include "harness.h"

#include <stdio.h>
#include <string.h>

/* What observers saw, as one line per call: "name:seq:arg0". */
typedef struct Recorder {
  char zSeen[2048];
  int nCalls;
  int nDestroyed;
} Recorder;

static void record(Recorder *pRec, const char *zTag,
                   const sqlitetriggers_event *pEvent){
  char zLine[160];
  const unsigned char *zArg = sqlitetriggers_event_text(pEvent, 0);
  snprintf(zLine, sizeof(zLine), "%s%s:%lld:%s", zTag,
           sqlitetriggers_event_name(pEvent),
           (long long)sqlitetriggers_event_seq(pEvent),
           zArg ? (const char*)zArg : "-");
  if( pRec->zSeen[0] ) strncat(pRec->zSeen, " ", sizeof(pRec->zSeen) - strlen(pRec->zSeen) - 1);
  strncat(pRec->zSeen, zLine, sizeof(pRec->zSeen) - strlen(pRec->zSeen) - 1);
  pRec->nCalls++;
}

static void countDestroy(void *pArg){
  ((Recorder*)pArg)->nDestroyed++;
}

static void recordAfterCommit(void *pArg, const sqlitetriggers_event *pEvent){
  record((Recorder*)pArg, "", pEvent);
}

static const char *schema =
  "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE);"
  "CREATE TEMP TRIGGER t_ai AFTER INSERT ON t"
  "  BEGIN SELECT swift_callback('inserted', new.v); END;";

/* ---- immediate observers ----------------------------------------------- */

static int answerA(void *pArg, const sqlitetriggers_event *pEvent,
                   sqlite3_context *pResult, char **pzError){
  (void)pzError;
  record((Recorder*)pArg, "A", pEvent);
  sqlite3_result_text(pResult, "from A", -1, SQLITE_STATIC);
  return SQLITE_OK;
}

static int answerB(void *pArg, const sqlitetriggers_event *pEvent,
                   sqlite3_context *pResult, char **pzError){
  (void)pzError;
  record((Recorder*)pArg, "B", pEvent);
  sqlite3_result_int(pResult, 42);
  return SQLITE_OK;
}

static void testImmediateObserversAnswerInOrder(void){
  sqlite3 *db = openRegistered(0);
  Recorder rec = {{0}, 0, 0};
  char zOut[128];
  sqlite3_int64 idA, idB;
  queryText(db, "SELECT quote(swift_callback('ask'))", zOut);
  expect(strcmp(zOut, "NULL")==0, "without observers swift_callback() is NULL");
  sqlitetriggers_observe_immediate(db, "ask", answerA, &rec, countDestroy, &idA);
  queryText(db, "SELECT swift_callback('ask', 'x')", zOut);
  expect(strcmp(zOut, "from A")==0, "an immediate observer's value is the result");
  sqlitetriggers_observe_immediate(db, 0, answerB, &rec, countDestroy, &idB);
  rec.zSeen[0] = 0;
  queryText(db, "SELECT swift_callback('ask', 'y')", zOut);
  expect(strcmp(rec.zSeen, "Aask:0:y Bask:0:y")==0,
         "immediate observers run in registration order, seq 0");
  expect(strcmp(zOut, "42")==0, "the last observer to answer sets the result");
  rec.zSeen[0] = 0;
  queryText(db, "SELECT swift_callback('other', 'z')", zOut);
  expect(strcmp(rec.zSeen, "Bother:0:z")==0,
         "a named observer ignores other names; an every-name one does not");
  expect(sqlitetriggers_unobserve(db, idA)==SQLITE_OK && rec.nDestroyed==1,
         "unobserve destroys the observer's argument");
  expect(sqlitetriggers_unobserve(db, idA)==SQLITE_NOTFOUND,
         "unobserving twice is SQLITE_NOTFOUND");
  sqlite3_close(db);
  expect(rec.nDestroyed==2, "closing the connection destroys the others");
}

typedef struct ArgCheck { char zTypes[64]; int isValueOk; } ArgCheck;

static int inspectArguments(void *pArg, const sqlitetriggers_event *pEvent,
                            sqlite3_context *pResult, char **pzError){
  ArgCheck *pCheck = (ArgCheck*)pArg;
  int i;
  (void)pResult; (void)pzError;
  for(i=0; i<sqlitetriggers_event_argc(pEvent); i++){
    pCheck->zTypes[i] = "?iftbn"[sqlitetriggers_event_type(pEvent, i)];
  }
  pCheck->zTypes[i] = 0;
  pCheck->isValueOk =
       sqlitetriggers_event_int64(pEvent, 0)==7
    && sqlitetriggers_event_double(pEvent, 1)==2.5
    && sqlitetriggers_event_double(pEvent, 0)==7.0      /* the numbers convert */
    && sqlitetriggers_event_int64(pEvent, 1)==2
    && strcmp((const char*)sqlitetriggers_event_text(pEvent, 2), "hé")==0
    && sqlitetriggers_event_bytes(pEvent, 2)==3
    && sqlitetriggers_event_bytes(pEvent, 3)==2
    && memcmp(sqlitetriggers_event_blob(pEvent, 3), "\x01\xff", 2)==0
    && sqlitetriggers_event_text(pEvent, 0)==0
    && sqlitetriggers_event_blob(pEvent, 2)==0
    && sqlitetriggers_event_type(pEvent, 99)==SQLITE_NULL;
  return SQLITE_OK;
}

static void testEventAccessors(void){
  sqlite3 *db = openRegistered(0);
  ArgCheck check = {{0}, 0};
  sqlitetriggers_observe_immediate(db, "typed", inspectArguments, &check, 0, 0);
  exec(db, "SELECT swift_callback('typed', 7, 2.5, 'hé', x'01ff', NULL)");
  expect(strcmp(check.zTypes, "iftbn")==0, "argument types reach the observer");
  expect(check.isValueOk, "argument values reach the observer, strictly typed");
  sqlite3_close(db);
}

/* Refuses v = 'bad', the way RAISE(ABORT) would. */
static int refuseBad(void *pArg, const sqlitetriggers_event *pEvent,
                     sqlite3_context *pResult, char **pzError){
  const unsigned char *zValue = sqlitetriggers_event_text(pEvent, 0);
  (void)pArg; (void)pResult;
  if( zValue && strcmp((const char*)zValue, "bad")==0 ){
    *pzError = sqlite3_mprintf("'%s' is not allowed", zValue);
    return SQLITE_CONSTRAINT;
  }
  return SQLITE_OK;
}

static void testRefusalBehavesLikeRaiseAbort(void){
  sqlite3 *db = openRegistered(0);
  Recorder rec = {{0}, 0, 0};
  char zOut[128], zRaise[128];
  int rc;
  exec(db, schema);
  exec(db, "CREATE TABLE r(v TEXT);"
           "CREATE TEMP TRIGGER r_bi BEFORE INSERT ON r WHEN new.v = 'bad'"
           "  BEGIN SELECT RAISE(ABORT, 'raised'); END;"
           "CREATE TEMP TRIGGER t_bi BEFORE INSERT ON t"
           "  BEGIN SELECT swift_callback('check', new.v); END;");
  sqlitetriggers_observe_immediate(db, "check", refuseBad, 0, 0, 0);
  sqlitetriggers_observe_after_commit(db, 0, recordAfterCommit, &rec, 0, 0);
  exec(db, "BEGIN");
  exec(db, "INSERT INTO t(v) VALUES ('ok1'); INSERT INTO r VALUES ('ok1')");
  rc = exec(db, "INSERT INTO t(v) VALUES ('ok2'), ('bad')");
  expect(rc==SQLITE_CONSTRAINT
         && sqlite3_extended_errcode(db)==SQLITE_CONSTRAINT_FUNCTION,
         "a refusal fails the statement with SQLITE_CONSTRAINT_FUNCTION");
  expect(strcmp(sqlite3_errmsg(db), "'bad' is not allowed")==0,
         "a refusal carries the observer's message");
  expect(exec(db, "INSERT INTO r VALUES ('ok2'), ('bad')")==SQLITE_CONSTRAINT,
         "RAISE(ABORT) refuses the same row of the twin table");
  expect(sqlite3_get_autocommit(db)==0,
         "the transaction stays open after a refusal, as after RAISE(ABORT)");
  queryText(db, "SELECT group_concat(v) FROM t", zOut);
  queryText(db, "SELECT group_concat(v) FROM r", zRaise);
  expect(strcmp(zOut, "ok1")==0 && strcmp(zRaise, "ok1")==0,
         "a refusal undoes its statement's rows exactly as RAISE(ABORT) does");
  exec(db, "COMMIT");
  sqlitetriggers_deliver(db);
  expect(strcmp(rec.zSeen, "check:1:ok1 inserted:2:ok1")==0,
         "the refused statement's events are never delivered");
  sqlite3_close(db);
}

static int countRows(void *pArg, const sqlitetriggers_event *pEvent,
                     sqlite3_context *pResult, char **pzError){
  sqlite3 *db = (sqlite3*)pArg;
  char zCount[128];
  (void)pEvent; (void)pzError;
  queryText(db, "SELECT count(*) FROM t", zCount);
  sqlite3_result_text(pResult, zCount, -1, SQLITE_TRANSIENT);
  return SQLITE_OK;
}

static void testImmediateObserverReadsTheDatabase(void){
  sqlite3 *db = openRegistered(0);
  char zOut[128];
  exec(db, schema);
  exec(db, "INSERT INTO t(v) VALUES ('a'), ('b')");
  sqlitetriggers_observe_immediate(db, "count", countRows, db, 0, 0);
  queryText(db, "SELECT swift_callback('count')", zOut);
  expect(strcmp(zOut, "2")==0, "an immediate observer can query the database");
  sqlite3_close(db);
}

/* ---- after-commit delivery --------------------------------------------- */

static void testAfterCommitDelivery(void){
  sqlite3 *db = openRegistered(0);
  Recorder rec = {{0}, 0, 0};
  exec(db, schema);
  sqlitetriggers_observe_after_commit(db, "inserted", recordAfterCommit, &rec,
                                      0, 0);
  exec(db, "INSERT INTO t(v) VALUES ('a')");
  expect(rec.nCalls==0 && sqlitetriggers_undelivered_count(db)==1,
         "committed events wait for sqlitetriggers_deliver()");
  sqlitetriggers_deliver(db);
  expect(strcmp(rec.zSeen, "inserted:1:a")==0,
         "an autocommit statement's event is delivered with seq 1");
  exec(db, "BEGIN; INSERT INTO t(v) VALUES ('b'); INSERT INTO t(v) VALUES ('c')");
  sqlitetriggers_deliver(db);
  expect(rec.nCalls==1, "nothing is delivered before COMMIT");
  exec(db, "ROLLBACK");
  exec(db, "BEGIN; INSERT INTO t(v) VALUES ('d'), ('e'); COMMIT");
  sqlitetriggers_deliver(db);
  sqlitetriggers_deliver(db);
  expect(strcmp(rec.zSeen, "inserted:1:a inserted:2:d inserted:3:e")==0,
         "committed events arrive once, in order; rolled-back ones never");
  expect(sqlitetriggers_undelivered_count(db)==0, "nothing waits after delivery");
  sqlite3_close(db);
}

typedef struct SelfRemover {
  Recorder rec;
  sqlite3 *db;
  sqlite3_int64 id;
} SelfRemover;

static void removeSelfAfterFirst(void *pArg, const sqlitetriggers_event *pEvent){
  SelfRemover *p = (SelfRemover*)pArg;
  record(&p->rec, "", pEvent);
  sqlitetriggers_unobserve(p->db, p->id);
}

static void testObserverRemovesItself(void){
  sqlite3 *db = openRegistered(0);
  SelfRemover remover;
  Recorder other = {{0}, 0, 0};
  memset(&remover, 0, sizeof(remover));
  remover.db = db;
  exec(db, schema);
  sqlitetriggers_observe_after_commit(db, 0, removeSelfAfterFirst, &remover,
                                      countDestroy, &remover.id);
  sqlitetriggers_observe_after_commit(db, 0, recordAfterCommit, &other, 0, 0);
  exec(db, "INSERT INTO t(v) VALUES ('a'), ('b'), ('c')");
  sqlitetriggers_deliver(db);
  expect(remover.rec.nCalls==1 && remover.rec.nDestroyed==1,
         "an observer that removes itself is called once, then destroyed");
  expect(other.nCalls==3, "the other observers still get every event");
  sqlite3_close(db);
}

typedef struct Adder {
  Recorder rec;
  Recorder added;
  sqlite3 *db;
} Adder;

static void addObserverOnFirst(void *pArg, const sqlitetriggers_event *pEvent){
  Adder *p = (Adder*)pArg;
  record(&p->rec, "", pEvent);
  if( p->rec.nCalls==1 ){
    sqlitetriggers_observe_after_commit(p->db, 0, recordAfterCommit, &p->added,
                                        0, 0);
  }
}

static void testObserverAddsAnObserver(void){
  sqlite3 *db = openRegistered(0);
  Adder adder;
  memset(&adder, 0, sizeof(adder));
  adder.db = db;
  exec(db, schema);
  sqlitetriggers_observe_after_commit(db, 0, addObserverOnFirst, &adder, 0, 0);
  exec(db, "INSERT INTO t(v) VALUES ('a'), ('b'), ('c')");
  sqlitetriggers_deliver(db);
  expect(adder.rec.nCalls==3 && strcmp(adder.added.zSeen,
         "inserted:2:b inserted:3:c")==0,
         "an observer added during delivery gets the events after it");
  sqlite3_close(db);
}

typedef struct Writer { Recorder rec; sqlite3 *db; } Writer;

static void writeOnFirst(void *pArg, const sqlitetriggers_event *pEvent){
  Writer *p = (Writer*)pArg;
  record(&p->rec, "", pEvent);
  if( strcmp((const char*)sqlitetriggers_event_text(pEvent, 0), "first")==0 ){
    exec(p->db, "INSERT INTO t(v) VALUES ('second')");
    sqlitetriggers_deliver(p->db);    /* re-entered: the outer call goes on */
    exec(p->db, "INSERT INTO t(v) VALUES ('third')");
  }
}

static void testObserverWritesDuringDelivery(void){
  sqlite3 *db = openRegistered(0);
  Writer writer;
  char zOut[128];
  memset(&writer, 0, sizeof(writer));
  writer.db = db;
  exec(db, schema);
  sqlitetriggers_observe_after_commit(db, 0, writeOnFirst, &writer, 0, 0);
  exec(db, "INSERT INTO t(v) VALUES ('first')");
  sqlitetriggers_deliver(db);
  queryText(db, "SELECT group_concat(v) FROM t", zOut);
  expect(strcmp(zOut, "first,second,third")==0,
         "an after-commit observer can write to the database");
  expect(strcmp(writer.rec.zSeen,
                "inserted:1:first inserted:2:second inserted:3:third")==0,
         "its own writes' events follow, in order, in the same delivery");
  sqlite3_close(db);
}

/*
** Every delivery rule, as the shell tests check it through the log, here
** through an after-commit observer.  Statements are separated by ';' and
** run one at a time, each followed by delivery, as an app would run them;
** failures are expected and ignored.
*/
static const struct { const char *zRule, *zScript, *zDelivered; } aRule[] = {
  { "autocommit", "INSERT INTO t(v) VALUES ('a')", "a" },
  { "BEGIN/COMMIT",
    "BEGIN;INSERT INTO t(v) VALUES ('a'), ('b');COMMIT", "a,b" },
  { "ROLLBACK", "BEGIN;INSERT INTO t(v) VALUES ('a');ROLLBACK", "" },
  { "a multi-row failure mid-transaction",
    "BEGIN;INSERT INTO t(v) VALUES ('a');"
    "INSERT INTO t(v) VALUES ('b'), ('c'), ('a');"
    "INSERT INTO t(v) VALUES ('d');COMMIT", "a,d" },
  { "RAISE(ABORT) after the callback",
    "INSERT INTO t(v) VALUES ('abort');BEGIN;INSERT INTO t(v) VALUES ('a');"
    "INSERT INTO t(v) VALUES ('abort');COMMIT", "a" },
  { "nested savepoints",
    "BEGIN;INSERT INTO t(v) VALUES ('1');SAVEPOINT a;"
    "INSERT INTO t(v) VALUES ('2');SAVEPOINT b;INSERT INTO t(v) VALUES ('3');"
    "ROLLBACK TO b;INSERT INTO t(v) VALUES ('4');RELEASE b;ROLLBACK TO a;"
    "INSERT INTO t(v) VALUES ('5');RELEASE a;COMMIT", "1,5" },
  { "an outermost SAVEPOINT as the transaction",
    "SAVEPOINT s;INSERT INTO t(v) VALUES ('1');ROLLBACK TO s;"
    "INSERT INTO t(v) VALUES ('2');RELEASE s", "2" },
  { "RAISE(ROLLBACK)",
    "BEGIN;INSERT INTO t(v) VALUES ('a');INSERT INTO t(v) VALUES ('rollback');"
    "COMMIT;INSERT INTO t(v) VALUES ('b')", "b" },
  { "a failed COMMIT, then ROLLBACK",
    "BEGIN;INSERT INTO child VALUES (1, 7);COMMIT;ROLLBACK", "" },
  { "a failed COMMIT, then a successful one",
    "BEGIN;INSERT INTO child VALUES (1, 7);COMMIT;"
    "INSERT INTO parent VALUES (7);COMMIT", "child1" },
};

static const char *ruleSchema =
  "PRAGMA foreign_keys = ON;"
  "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE);"
  "CREATE TEMP TRIGGER t_ai AFTER INSERT ON t"
  "  BEGIN SELECT swift_callback('inserted', new.v); END;"
  "CREATE TEMP TRIGGER t_abort AFTER INSERT ON t WHEN new.v = 'abort'"
  "  BEGIN SELECT RAISE(ABORT, 'no'); END;"
  "CREATE TEMP TRIGGER t_rollback AFTER INSERT ON t WHEN new.v = 'rollback'"
  "  BEGIN SELECT RAISE(ROLLBACK, 'no'); END;"
  "CREATE TABLE parent(id INTEGER PRIMARY KEY);"
  "CREATE TABLE child(id INTEGER PRIMARY KEY, parentID INTEGER"
  "  REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED);"
  "CREATE TEMP TRIGGER child_ai AFTER INSERT ON child"
  "  BEGIN SELECT swift_callback('child', 'child' || new.id); END;";

static void joinDelivered(void *pArg, const sqlitetriggers_event *pEvent){
  char *zOut = (char*)pArg;
  if( zOut[0] ) strcat(zOut, ",");
  strncat(zOut, (const char*)sqlitetriggers_event_text(pEvent, 0), 16);
}

static void testEveryDeliveryRule(void){
  size_t i;
  for(i=0; i<sizeof(aRule)/sizeof(aRule[0]); i++){
    sqlite3 *db = openRegistered(0);
    char zDelivered[256] = "", zWhat[160];
    char *zScript = sqlite3_mprintf("%s", aRule[i].zScript), *zStatement;
    exec(db, ruleSchema);
    sqlitetriggers_observe_after_commit(db, 0, joinDelivered, zDelivered, 0, 0);
    for(zStatement=strtok(zScript, ";"); zStatement; zStatement=strtok(0, ";")){
      exec(db, zStatement);
      sqlitetriggers_deliver(db);
    }
    snprintf(zWhat, sizeof(zWhat), "delivery rule: %s", aRule[i].zRule);
    expect(strcmp(zDelivered, aRule[i].zDelivered)==0, zWhat);
    if( strcmp(zDelivered, aRule[i].zDelivered)!=0 ){
      printf("  delivered '%s', expected '%s'\n", zDelivered, aRule[i].zDelivered);
    }
    sqlite3_free(zScript);
    sqlite3_close(db);
  }
}

static void testCloseWithEventsWaiting(void){
  sqlite3 *db = openRegistered(0);
  Recorder rec = {{0}, 0, 0};
  exec(db, schema);
  sqlitetriggers_observe_after_commit(db, 0, recordAfterCommit, &rec,
                                      countDestroy, 0);
  exec(db, "INSERT INTO t(v) VALUES ('committed')");
  exec(db, "BEGIN; INSERT INTO t(v) VALUES ('open')");
  expect(sqlite3_close(db)==SQLITE_OK,
         "a connection with events waiting and a transaction open closes");
  expect(rec.nCalls==0 && rec.nDestroyed==1,
         "closing delivers nothing and destroys the observers");
}

static void testRemovingTheLastObserverFreesWaitingEvents(void){
  sqlite3 *db = openRegistered(0);
  Recorder rec = {{0}, 0, 0};
  sqlite3_int64 id;
  exec(db, schema);
  sqlitetriggers_observe_after_commit(db, 0, recordAfterCommit, &rec, 0, &id);
  exec(db, "INSERT INTO t(v) VALUES ('a'), ('b')");
  expect(sqlitetriggers_undelivered_count(db)==2, "two events wait");
  sqlitetriggers_unobserve(db, id);
  expect(sqlitetriggers_undelivered_count(db)==0,
         "removing the last after-commit observer frees the waiting events");
  exec(db, "INSERT INTO t(v) VALUES ('c')");
  expect(sqlitetriggers_undelivered_count(db)==0,
         "with no after-commit observer, nothing is queued");
  sqlitetriggers_deliver(db);
  expect(rec.nCalls==0, "a removed observer is never called");
  sqlite3_close(db);
}

static void testMisuse(void){
  sqlite3 *plain = 0;
  Recorder rec = {{0}, 0, 0};
  sqlite3_open(":memory:", &plain);
  expect(sqlitetriggers_observe_after_commit(plain, 0, recordAfterCommit, &rec,
                                             countDestroy, 0)==SQLITE_MISUSE
         && rec.nDestroyed==1,
         "observing an unregistered connection is SQLITE_MISUSE, and destroys");
  expect(sqlitetriggers_deliver(plain)==SQLITE_MISUSE,
         "delivering on an unregistered connection is SQLITE_MISUSE");
  sqlite3_close(plain);
}

/* ---- an observer that ends its own connection -------------------------- */

typedef struct Ender {
  Recorder rec;           /* first: countDestroy() takes an Ender too */
  sqlite3 *db;
  int isReregistering;    /* else it closes the connection */
} Ender;

static void endConnection(void *pArg, const sqlitetriggers_event *pEvent){
  Ender *pEnder = (Ender*)pArg;
  record(&pEnder->rec, "", pEvent);
  if( pEnder->isReregistering ){
    sqlitetriggers_register(pEnder->db);
  }else{
    expect(sqlite3_close(pEnder->db)==SQLITE_OK,
           "an after-commit observer may close its connection");
  }
}

static void testObserverEndsItsConnection(void){
  int isReregistering;
  for(isReregistering=0; isReregistering<2; isReregistering++){
    Ender ender;
    Recorder later = {{0}, 0, 0};
    memset(&ender, 0, sizeof(ender));
    ender.db = openRegistered(0);
    ender.isReregistering = isReregistering;
    exec(ender.db, schema);
    sqlitetriggers_observe_after_commit(ender.db, 0, endConnection, &ender,
                                        countDestroy, 0);
    sqlitetriggers_observe_after_commit(ender.db, 0, recordAfterCommit,
                                        &later, countDestroy, 0);
    exec(ender.db, "INSERT INTO t(v) VALUES ('a'), ('b')");
    if( isReregistering ){
      char zOut[128];
      /* Registering again keeps the state: delivery goes on. */
      expect(sqlitetriggers_deliver(ender.db)==SQLITE_OK,
             "registering again inside delivery lets it go on");
      expect(ender.rec.nCalls==2 && later.nCalls==2 && ender.rec.nDestroyed==0,
             "registering again keeps the observers");
      exec(ender.db, "INSERT INTO t(v) VALUES ('c')");
      queryText(ender.db, "SELECT group_concat(args) FROM swift_callback_log",
                zOut);
      expect(strcmp(zOut, "[\"a\"],[\"b\"],[\"c\"]")==0,
             "registering again keeps the events logged");
      sqlite3_close(ender.db);
      expect(ender.rec.nDestroyed==1 && later.nDestroyed==1,
             "the kept observers are destroyed once, at close");
    }else{
      expect(sqlitetriggers_deliver(ender.db)==SQLITE_ABORT,
             "closing inside delivery ends it with SQLITE_ABORT");
      expect(ender.rec.nCalls==1 && later.nCalls==0,
             "after the connection ends, no observer is called again");
      expect(ender.rec.nDestroyed==1 && later.nDestroyed==1,
             "the ended state's observers are destroyed once");
    }
  }
}

static void testReadOnlyConnectionRefuses(void){
  const char *zPath = "build/test_c_readonly.sqlite";
  sqlite3 *db = 0;
  char zOut[128];
  int rc;
  sqlite3_stmt *pStmt = 0;
  remove(zPath);
  sqlite3_open(zPath, &db);
  exec(db, "CREATE TABLE t(a)");
  sqlite3_close(db);
  sqlite3_open_v2(zPath, &db, SQLITE_OPEN_READONLY, 0);
  expect(sqlitetriggers_register(db)==SQLITE_OK,
         "a read-only connection can be registered");
  queryText(db, "SELECT uuid_version(uuid())", zOut);
  expect(strcmp(zOut, "4")==0, "the other functions work read-only");
  sqlite3_prepare_v2(db, "SELECT swift_callback('x')", -1, &pStmt, 0);
  rc = sqlite3_step(pStmt);
  expect(rc==SQLITE_ERROR || rc==SQLITE_READONLY, "swift_callback() fails read-only");
  expect(strstr(sqlite3_errmsg(db), "read-only connection")!=0,
         "and says the connection is read-only");
  sqlite3_finalize(pStmt);
  expect(sqlite3_extended_errcode(db)==SQLITE_READONLY,
         "with SQLITE_READONLY");
  sqlite3_close(db);
  remove(zPath);
}

/* Sizes computed in 64 bits: on a 32-bit target (watchOS is arm64_32;
** make test-32bit runs this) 0x40000001 pointers would wrap size_t around
** to 4 bytes, and the log would write past them. */
/* A huge capacity costs nothing until the log fills: the ring grows as
** events commit, on an empty log as on a full one. */
static void testHugeLogCapacityWorks(void){
  sqlite3 *db = openRegistered(0);
  char zOut[128];
  exec(db, "SELECT swift_callback('kept')");
  expect(sqlitetriggers_set_callback_log_capacity(db, 0x7fffffff)==SQLITE_OK,
         "a log of INT_MAX events holding one is accepted");
  exec(db, "SELECT swift_callback('more'); CREATE TABLE t(v);"
           "CREATE TEMP TRIGGER t_ai AFTER INSERT ON t BEGIN SELECT swift_callback('row', new.v); END;"
           "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)"
           " INSERT INTO t SELECT i FROM n;");
  queryText(db, "SELECT count(*) || ' ' || min(seq) || ' ' || max(seq) FROM swift_callback_log", zOut);
  expect(strcmp(zOut, "102 1 102")==0, "it keeps every event as it grows");
  sqlite3_close(db);

  db = openRegistered(0);
  expect(sqlitetriggers_set_callback_log_capacity(db, 1<<30)==SQLITE_OK,
         "a log of 2^30 events on an empty log is accepted");
  exec(db, "SELECT swift_callback('a')");
  exec(db, "SELECT swift_callback_log_capacity(100000000)");
  exec(db, "SELECT swift_callback('b')");
  queryText(db, "SELECT group_concat(name) || ' ' || swift_callback_log_capacity() FROM swift_callback_log", zOut);
  expect(strcmp(zOut, "a,b 100000000")==0,
         "and events still reach it, through the C API and the SQL function (no connection bricked)");
  sqlitetriggers_set_callback_log_capacity(db, 2);
  exec(db, "SELECT swift_callback('c'); SELECT swift_callback('d');");
  queryText(db, "SELECT group_concat(name) FROM swift_callback_log", zOut);
  expect(strcmp(zOut, "c,d")==0, "a small capacity keeps the newest events");
  sqlite3_close(db);
}

/* ---- batch observers ---------------------------------------------------- */

typedef struct BatchReader {
  Recorder rec;               /* per-event observer of the same events */
  sqlite3 *db;
  char zRows[1024];           /* what the batch calls read, call by call */
  int nCalls, nEventsTold;
  const char *zWrite;         /* SQL the first call runs, if any */
  sqlite3_stmt *pKept;        /* a statement left open after the call */
} BatchReader;

/* A registered connection, and an empty reader of its batches. */
static sqlite3 *openWithBatchReader(BatchReader *pReader){
  memset(pReader, 0, sizeof(*pReader));
  pReader->db = openRegistered(0);
  return pReader->db;
}

static void readBatch(void *pArg, int nEvent){
  BatchReader *p = (BatchReader*)pArg;
  sqlite3_stmt *pStmt = 0;
  char zLine[200];
  p->nCalls++;
  p->nEventsTold += nEvent;
  sqlite3_prepare_v2(p->db, "SELECT seq, name, argc, quote(arg1), typeof(arg2), "
                     "quote(arg3), quote(arg126) FROM swift_callback_batch",
                     -1, &pStmt, 0);
  strncat(p->zRows, "[", sizeof(p->zRows) - strlen(p->zRows) - 1);
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    snprintf(zLine, sizeof(zLine), "(%s %s %s %s %s %s %s)",
             sqlite3_column_text(pStmt, 0), sqlite3_column_text(pStmt, 1),
             sqlite3_column_text(pStmt, 2), sqlite3_column_text(pStmt, 3),
             sqlite3_column_text(pStmt, 4), sqlite3_column_text(pStmt, 5),
             sqlite3_column_text(pStmt, 6));
    strncat(p->zRows, zLine, sizeof(p->zRows) - strlen(p->zRows) - 1);
  }
  strncat(p->zRows, "]", sizeof(p->zRows) - strlen(p->zRows) - 1);
  sqlite3_finalize(pStmt);
  /* Record where the per-event observer stood: batches come after it. */
  snprintf(zLine, sizeof(zLine), "@%d", p->rec.nCalls);
  strncat(p->zRows, zLine, sizeof(p->zRows) - strlen(p->zRows) - 1);
  if( p->zWrite && p->nCalls==1 ) exec(p->db, p->zWrite);
  if( p->pKept==0 && p->nCalls==1 ){
    sqlite3_prepare_v2(p->db, "SELECT arg1 FROM swift_callback_batch", -1,
                       &p->pKept, 0);
    sqlite3_step(p->pKept);
  }
}

static void testBatchObserverReadsItsRound(void){
  BatchReader reader;
  sqlite3 *db = openWithBatchReader(&reader);
  char zOut[128];
  exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE);"
           "CREATE TEMP TRIGGER t_ai AFTER INSERT ON t BEGIN"
           "  SELECT swift_callback('inserted', new.v, new.id, x'00ff', 1.5);"
           "  SELECT swift_callback('other', new.v);"
           "END;");
  sqlitetriggers_observe_after_commit(db, "inserted", recordAfterCommit,
                                      &reader.rec, 0, 0);
  sqlitetriggers_observe_after_commit_batch(db, "inserted", readBatch, &reader,
                                            0, 0);
  queryText(db, "SELECT count(*) FROM swift_callback_batch", zOut);
  expect(strcmp(zOut, "0")==0, "swift_callback_batch is empty outside a batch call");
  exec(db, "BEGIN; INSERT INTO t(v) VALUES ('a'), ('b'); COMMIT");
  exec(db, "INSERT INTO t(v) VALUES ('c')");
  expect(reader.nCalls==0, "a batch observer waits for sqlitetriggers_deliver()");
  sqlitetriggers_deliver(db);
  expect(strcmp(reader.zRows,
         "[(1 inserted 4 'a' integer X'00FF' NULL)(3 inserted 4 'b' integer X'00FF' NULL)"
         "(5 inserted 4 'c' integer X'00FF' NULL)]@3")==0,
         "one batch call reads the round's events it observes, in commit order, "
         "each argument with its type, NULL past the last");
  expect(reader.nCalls==1 && reader.nEventsTold==3, "the call is told how many events it holds");
  expect(sqlite3_column_type(reader.pKept, 0)==SQLITE_TEXT
         && strcmp((const char*)sqlite3_column_text(reader.pKept, 0), "a")==0,
         "a row read during the call stays readable after it");
  expect(sqlite3_step(reader.pKept)==SQLITE_DONE,
         "a statement still open after the call reads no further rows");
  sqlite3_finalize(reader.pKept);
  sqlitetriggers_deliver(db);
  expect(reader.nCalls==1, "each event reaches a batch observer once");
  sqlite3_close(db);
}

/* Reads the text of each event's first argument as a C string and by length. */
static void readBatchText(void *pArg, int nEvent){
  BatchReader *p = (BatchReader*)pArg;
  sqlite3_stmt *pStmt = 0;
  char zLine[200];
  (void)nEvent;
  sqlite3_prepare_v2(p->db, "SELECT arg1, hex(arg1) FROM swift_callback_batch", -1, &pStmt, 0);
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(pStmt, 0);
    snprintf(zLine, sizeof(zLine), "(%s %d %s)", z, sqlite3_column_bytes(pStmt, 0),
             sqlite3_column_text(pStmt, 1));
    strncat(p->zRows, zLine, sizeof(p->zRows) - strlen(p->zRows) - 1);
  }
  sqlite3_finalize(pStmt);
}

static void testBatchTextKeepsItsLength(void){
  BatchReader reader;
  sqlite3 *db = openWithBatchReader(&reader);
  sqlitetriggers_observe_after_commit_batch(db, "t", readBatchText, &reader, 0, 0);
  exec(db, "SELECT swift_callback('t', 'plain'), swift_callback('t', 'a' || char(0) || 'b'),"
           " swift_callback('t', '')");
  sqlitetriggers_deliver(db);
  expect(strcmp(reader.zRows, "(plain 5 706C61696E)(a 3 610062)( 0 )")==0,
         "batch text reads as a C string, and text with a NUL inside keeps its length");
  sqlite3_close(db);
}

static void testBatchObserverWritesMakeTheNextRound(void){
  BatchReader reader;
  sqlite3 *db = openWithBatchReader(&reader);
  reader.zWrite = "INSERT INTO t(v) VALUES ('from the observer')";
  exec(db, schema);
  sqlitetriggers_observe_after_commit_batch(db, "inserted", readBatch, &reader,
                                            countDestroy, 0);
  exec(db, "INSERT INTO t(v) VALUES ('a')");
  sqlitetriggers_deliver(db);
  expect(reader.nCalls==2 && strstr(reader.zRows, "]@0[(2 inserted 1 'from the observer'")!=0,
         "events a batch observer's write commits come in the next round of the same delivery");
  sqlite3_close(db);
}

static void testBatchObserverMisuse(void){
  sqlite3 *db = openRegistered(0);
  Recorder rec = {{0}, 0, 0};
  char zOut[128];
  expect(sqlitetriggers_observe_after_commit_batch(db, "x", 0, 0, 0, 0)==SQLITE_MISUSE,
         "a batch observer needs a callback");
  exec(db, "CREATE TABLE t(x)");
  expect(exec(db, "CREATE VIEW v AS SELECT * FROM swift_callback_batch")==SQLITE_OK,
         "a view of swift_callback_batch can be created");
  queryText(db, "SELECT count(*) FROM v", zOut);
  expect(zOut[0]==0, "but swift_callback_batch cannot be read through a view in the schema");
  expect(exec(db, "INSERT INTO swift_callback_batch(seq) VALUES (1)")!=SQLITE_OK,
         "swift_callback_batch is read-only");
  sqlite3_close(db);
  db = openRegistered(0);
  exec(db, schema);
  sqlitetriggers_observe_after_commit_batch(db, 0, readBatch, &rec, countDestroy, 0);
  sqlite3_close(db);
  expect(rec.nDestroyed==1, "closing the connection destroys a batch observer");
}

/* A refused DROP leaves the table working (Tests/sanitize.sh checks, in
** the CLI under LeakSanitizer, that it leaves nothing allocated). */
static void testRefusedDropLeaksNothing(void){
  sqlite3 *db = openRegistered(0);
  char zLog[128];
  int i, nRefused = 0;
  exec(db, "CREATE TABLE t(v); CREATE TEMP TRIGGER t_ai AFTER INSERT ON t"
           " BEGIN SELECT swift_callback('ins', new.v); END;");
  for(i=0; i<3; i++){
    nRefused += exec(db, "DROP TABLE swift_callback_pending")==SQLITE_ERROR;
  }
  exec(db, "INSERT INTO t VALUES ('after')");
  queryText(db, "SELECT group_concat(args) FROM swift_callback_log", zLog);
  expect(nRefused==3 && strcmp(zLog, "[\"after\"]")==0,
         "a refused DROP of swift_callback_pending leaves the table working");
  sqlite3_close(db);
}

/* A connection whose inserts into t record an event (a TEMP trigger),
** after zFirst when not NULL. */
static sqlite3 *openWithEvents(const char *zFirst){
  sqlite3 *db = openRegistered(0);
  if( zFirst ) exec(db, zFirst);
  exec(db, "CREATE TABLE t(v)");
  exec(db, "CREATE TEMP TRIGGER ti AFTER INSERT ON t BEGIN SELECT swift_callback('ins', new.v); END");
  return db;
}

/* The joining INSERT stays prepared between transactions
** (swift_callback_keeper finalizes it at close): sqlite3_close() still
** closes; a host that finalizes every statement first, as some do, leaves
** nothing behind to finalize twice (the sanitizers' run would see it); a
** file table of the keeper's name hides it, and each join then prepares
** its own; a table of the file hiding swift_callback_pending is still
** named by the join after the INSERT was kept. */
static void testTheJoinStaysPreparedAndCloses(void){
  sqlite3 *db = openWithEvents(0);
  sqlite3_stmt *pStmt;
  char zOut[128];
  int nStatements = 0, i;
  for(i=0; i<3; i++) exec(db, "INSERT INTO t VALUES (1)");
  for(pStmt=sqlite3_next_stmt(db, 0); pStmt; pStmt=sqlite3_next_stmt(db, pStmt)) nStatements++;
  expect(nStatements==1, "the join's INSERT is kept prepared between transactions");
  queryText(db, "SELECT count(*) FROM swift_callback_log", zOut);
  expect(strcmp(zOut, "3")==0, "each transaction joined with it");
  expect(sqlite3_close(db)==SQLITE_OK, "sqlite3_close() closes a connection with the join kept");

  db = openWithEvents(0);
  exec(db, "INSERT INTO t VALUES (1)");
  while( (pStmt = sqlite3_next_stmt(db, 0))!=0 ) sqlite3_finalize(pStmt);
  exec(db, "INSERT INTO t VALUES (2)");
  queryText(db, "SELECT count(*) FROM swift_callback_log", zOut);
  expect(strcmp(zOut, "2")==0, "a join the host finalized is prepared again");
  while( (pStmt = sqlite3_next_stmt(db, 0))!=0 ) sqlite3_finalize(pStmt);
  expect(sqlite3_close(db)==SQLITE_OK, "a host that finalizes every statement before closing closes");

  /* No statement may read the keeper (one holding it would keep it
  ** connected past the close, and its finalize would finalize the kept
  ** INSERT inside the host's); the kept INSERT, sunk under the host's
  ** statements, is prepared again at the head rather than looked for. */
  db = openWithEvents(0);
  exec(db, "INSERT INTO t VALUES (1)");
  pStmt = 0;
  expect(sqlite3_prepare_v2(db, "SELECT * FROM swift_callback_keeper", -1, &pStmt, 0)==SQLITE_ERROR && pStmt==0
         && strstr(sqlite3_errmsg(db), "internal to SQLiteTriggers")!=0, "no statement can read swift_callback_keeper");
  {
    sqlite3_stmt *aHost[40];
    int nEnlist = 0;
    for(i=0; i<40; i++) sqlite3_prepare_v2(db, "SELECT 1", -1, &aHost[i], 0);
    exec(db, "INSERT INTO t VALUES (2)");
    pStmt = sqlite3_next_stmt(db, 0);
    expect(pStmt && strcmp(sqlite3_sql(pStmt), "INSERT OR IGNORE INTO main.swift_callback_pending(name) VALUES (NULL)")==0,
           "the join's INSERT sunk under 40 host statements is prepared again, first in the list");
    for(; pStmt; pStmt=sqlite3_next_stmt(db, pStmt)){
      nEnlist += strcmp(sqlite3_sql(pStmt), "INSERT OR IGNORE INTO main.swift_callback_pending(name) VALUES (NULL)")==0;
    }
    expect(nEnlist==1, "and the sunk one is finalized");
    for(i=0; i<40; i++) sqlite3_finalize(aHost[i]);
  }
  queryText(db, "SELECT count(*) FROM swift_callback_log", zOut);
  expect(strcmp(zOut, "2")==0, "both transactions joined");
  expect(sqlite3_close(db)==SQLITE_OK, "and the connection closes");

  db = openWithEvents("CREATE TABLE swift_callback_keeper(x)");
  for(i=0; i<2; i++) exec(db, "INSERT INTO t VALUES (1)");
  nStatements = 0;
  for(pStmt=sqlite3_next_stmt(db, 0); pStmt; pStmt=sqlite3_next_stmt(db, pStmt)) nStatements++;
  queryText(db, "SELECT count(*) FROM swift_callback_log", zOut);
  expect(nStatements==0 && strcmp(zOut, "2")==0, "a file table hiding the keeper: each join prepares its own");
  expect(sqlite3_close(db)==SQLITE_OK, "and the connection closes");

  db = openWithEvents(0);
  exec(db, "INSERT INTO t VALUES (1)");
  expect(exec(db, "CREATE TABLE main.swift_callback_pending(name)")==SQLITE_OK, "a table hiding the pending one");
  expect(exec(db, "INSERT INTO t VALUES (2)")!=SQLITE_OK, "the join the kept INSERT makes into it fails");
  expect(strstr(sqlite3_errmsg(db), "swift_callback_pending")!=0, "naming the table");
  expect(sqlite3_close(db)==SQLITE_OK, "and the connection closes");
}

void runCallbackTests(void){
  testTheJoinStaysPreparedAndCloses();
  testRefusedDropLeaksNothing();
  testImmediateObserversAnswerInOrder();
  testEventAccessors();
  testRefusalBehavesLikeRaiseAbort();
  testImmediateObserverReadsTheDatabase();
  testAfterCommitDelivery();
  testEveryDeliveryRule();
  testObserverRemovesItself();
  testObserverAddsAnObserver();
  testObserverWritesDuringDelivery();
  testCloseWithEventsWaiting();
  testRemovingTheLastObserverFreesWaitingEvents();
  testMisuse();
  testObserverEndsItsConnection();
  testReadOnlyConnectionRefuses();
  testHugeLogCapacityWorks();
  testBatchObserverReadsItsRound();
  testBatchObserverWritesMakeTheNextRound();
  testBatchTextKeepsItsLength();
  testBatchObserverMisuse();
}
