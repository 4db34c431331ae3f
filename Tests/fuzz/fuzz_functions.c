/*
** libFuzzer harness for the SQL functions' inputs (make fuzz).
**
** The input is split at 0xff bytes into up to 8 fields; the first byte of
** each field says how it is bound (text, blob, integer, real or NULL), the
** rest is its content.  Every function is called with those values:
** the UUID conversions and accessors, datetime_subsec() and
** unixepoch_subsec() with the fields as time value and modifiers,
** sqlitetriggers_derived_uuid(), and swift_callback() with the fields as
** arguments.  Besides ASan and UBSan, the results must keep their
** promises; any broken one aborts:
**   - uuid_str() is NULL or 36 canonical lowercase characters, and
**     uuid_blob() of it is uuid_blob() of the input;
**   - datetime_subsec() is NULL or 'YYYY-MM-DD HH:MM:SS.SSS' (with an
**     optional leading '-'), and reading it back gives it again;
**   - every swift_callback_log.args is valid JSON: json_valid(), and
**     well-formed UTF-8.
*/
#include "sqlitetriggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 8

static sqlite3 *db = 0;

static void fail(const char *zWhat, const char *zDetail){
  fprintf(stderr, "fuzz_functions: %s: %s\n", zWhat, zDetail ? zDetail : "");
  abort();
}

/* Bind the fields as parameters 1..nField. */
static void bindFields(sqlite3_stmt *pStmt, const unsigned char **aField,
                       const size_t *anField, int nField){
  int i;
  for(i=0; i<nField; i++){
    const unsigned char *z = aField[i] + 1;
    size_t n = anField[i] ? anField[i] - 1 : 0;
    sqlite3_int64 v = 0;
    double r = 0;
    switch( anField[i] ? aField[i][0] % 5 : 4 ){
      case 0: sqlite3_bind_text(pStmt, i+1, (const char*)z, (int)n, SQLITE_TRANSIENT); break;
      case 1: sqlite3_bind_blob(pStmt, i+1, z, (int)n, SQLITE_TRANSIENT); break;
      case 2:
        memcpy(&v, z, n<sizeof(v) ? n : sizeof(v));
        sqlite3_bind_int64(pStmt, i+1, v);
        break;
      case 3:
        memcpy(&r, z, n<sizeof(r) ? n : sizeof(r));
        sqlite3_bind_double(pStmt, i+1, r);
        break;
      default: sqlite3_bind_null(pStmt, i+1);
    }
  }
}

/* "?1, ?2, ..." for n parameters, into zOut. */
static void parameterList(int n, char *zOut){
  int i;
  zOut[0] = 0;
  for(i=1; i<=n; i++) sprintf(zOut + strlen(zOut), "%s?%d", i>1 ? ", " : "", i);
}

static int isDigitAt(const char *z, int i){ return z[i]>='0' && z[i]<='9'; }

static int isSubsecText(const char *z){
  static const char shape[] = "dddd-dd-dd dd:dd:dd.ddd";
  int i;
  if( z[0]=='-' ) z++;
  for(i=0; shape[i]; i++){
    if( shape[i]=='d' ? !isDigitAt(z, i) : z[i]!=shape[i] ) return 0;
  }
  return z[i]==0;
}

static void checkUuid(const unsigned char **aField, const size_t *anField){
  sqlite3_stmt *pStmt = 0;
  if( sqlite3_prepare_v2(db,
        "SELECT uuid_str(?1), uuid_blob(?1) IS uuid_blob(uuid_str(?1)),"
        "       uuid_version(?1), uuidv7_timestamp(?1), uuidv7_datetime(?1)",
        -1, &pStmt, 0)!=SQLITE_OK ) fail("prepare", sqlite3_errmsg(db));
  bindFields(pStmt, aField, anField, 1);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(pStmt, 0);
    if( z ){
      int i;
      if( strlen(z)!=36 ) fail("uuid_str length", z);
      for(i=0; i<36; i++){
        int isDash = i==8 || i==13 || i==18 || i==23;
        if( isDash ? z[i]!='-' : !((z[i]>='0' && z[i]<='9') || (z[i]>='a' && z[i]<='f')) ){
          fail("uuid_str shape", z);
        }
      }
      if( sqlite3_column_int(pStmt, 1)!=1 ) fail("uuid_blob round trip", z);
    }
    z = (const char*)sqlite3_column_text(pStmt, 4);
    if( z && !isSubsecText(z) ) fail("uuidv7_datetime shape", z);
  }
  sqlite3_finalize(pStmt);
}

static void checkTime(const unsigned char **aField, const size_t *anField,
                      int nField){
  char zSql[300], zParams[100];
  sqlite3_stmt *pStmt = 0;
  parameterList(nField, zParams);
  snprintf(zSql, sizeof(zSql),
           "SELECT datetime_subsec(%s), unixepoch_subsec(%s)", zParams, zParams);
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ){
    fail("prepare", sqlite3_errmsg(db));
  }
  bindFields(pStmt, aField, anField, nField);
  if( sqlite3_step(pStmt)==SQLITE_ROW ){
    const char *z = (const char*)sqlite3_column_text(pStmt, 0);
    if( z ){
      char zBack[40];
      sqlite3_stmt *pBack = 0;
      if( !isSubsecText(z) ) fail("datetime_subsec shape", z);
      if( z[0]!='-' ){
        /* Years before 0000 have no text form datetime() reads. */
        sqlite3_prepare_v2(db, "SELECT datetime_subsec(?1)", -1, &pBack, 0);
        sqlite3_bind_text(pBack, 1, z, -1, SQLITE_TRANSIENT);
        zBack[0] = 0;
        if( sqlite3_step(pBack)==SQLITE_ROW && sqlite3_column_text(pBack, 0) ){
          snprintf(zBack, sizeof(zBack), "%s", sqlite3_column_text(pBack, 0));
        }
        sqlite3_finalize(pBack);
        if( strcmp(zBack, z)!=0 ) fail("datetime_subsec reads back", z);
      }
    }
  }
  sqlite3_finalize(pStmt);
}

/* Strict UTF-8 (JSON text must be Unicode); SQLite's json_valid() does
** not check it. */
static int isWellFormedUtf8(const unsigned char *z){
  while( *z ){
    unsigned char c = *z;
    int n = c<0x80 ? 1 : c>=0xc2 && c<=0xdf ? 2 : c>=0xe0 && c<=0xef ? 3
          : c>=0xf0 && c<=0xf4 ? 4 : 0;
    unsigned char lo = c==0xe0 ? 0xa0 : c==0xf0 ? 0x90 : 0x80;
    unsigned char hi = c==0xed ? 0x9f : c==0xf4 ? 0x8f : 0xbf;
    int i;
    if( n==0 ) return 0;
    for(i=1; i<n; i++){
      if( z[i]<lo || z[i]>hi ) return 0;
      lo = 0x80; hi = 0xbf;
    }
    z += n;
  }
  return 1;
}

static void checkCallbackAndDerived(const unsigned char **aField,
                                    const size_t *anField, int nField){
  char zSql[300], zParams[100];
  sqlite3_stmt *pStmt = 0;
  parameterList(nField, zParams);
  snprintf(zSql, sizeof(zSql), "SELECT swift_callback('fuzz'%s%s),"
           " sqlitetriggers_derived_uuid(?1, ?2, ?3)",
           nField ? ", " : "", zParams);
  if( nField<3 ) snprintf(zSql, sizeof(zSql), "SELECT swift_callback('fuzz'%s%s)",
                          nField ? ", " : "", zParams);
  if( sqlite3_prepare_v2(db, zSql, -1, &pStmt, 0)!=SQLITE_OK ){
    fail("prepare", sqlite3_errmsg(db));
  }
  bindFields(pStmt, aField, anField, nField);
  sqlite3_step(pStmt);
  sqlite3_finalize(pStmt);
  if( sqlite3_prepare_v2(db, "SELECT count(*) FROM swift_callback_log"
                             " WHERE NOT json_valid(args)", -1, &pStmt, 0)!=SQLITE_OK
   || sqlite3_step(pStmt)!=SQLITE_ROW ) fail("log", sqlite3_errmsg(db));
  if( sqlite3_column_int(pStmt, 0)!=0 ){
    sqlite3_finalize(pStmt);
    sqlite3_prepare_v2(db, "SELECT args FROM swift_callback_log WHERE NOT json_valid(args)",
                       -1, &pStmt, 0);
    sqlite3_step(pStmt);
    fail("args is not valid JSON", (const char*)sqlite3_column_text(pStmt, 0));
  }
  sqlite3_finalize(pStmt);
  sqlite3_prepare_v2(db, "SELECT args FROM swift_callback_log", -1, &pStmt, 0);
  while( sqlite3_step(pStmt)==SQLITE_ROW ){
    const unsigned char *z = sqlite3_column_text(pStmt, 0);
    if( z && !isWellFormedUtf8(z) ) fail("args is not UTF-8", (const char*)z);
  }
  sqlite3_finalize(pStmt);
}

int LLVMFuzzerTestOneInput(const unsigned char *aData, size_t nData){
  const unsigned char *aField[MAX_FIELDS];
  size_t anField[MAX_FIELDS], i, iStart = 0;
  int nField = 0;
  if( db==0 ){
    if( sqlite3_open(":memory:", &db)!=SQLITE_OK
     || sqlitetriggers_register(db)!=SQLITE_OK ) fail("open", 0);
    sqlite3_exec(db, "SELECT swift_callback_log_capacity(4)", 0, 0, 0);
  }
  for(i=0; i<=nData && nField<MAX_FIELDS; i++){
    if( i==nData || aData[i]==0xff ){
      aField[nField] = aData + iStart;
      anField[nField] = i - iStart;
      nField++;
      iStart = i + 1;
    }
  }
  checkUuid(aField, anField);
  checkTime(aField, anField, nField);
  checkCallbackAndDerived(aField, anField, nField);
  return 0;
}
