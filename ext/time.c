/*
** time.c: millisecond time for SQLite versions without the 'subsec'
** modifier (added in 3.42).
**
**   datetime_subsec()
**       The current UTC time as 'YYYY-MM-DD HH:MM:SS.SSS', read from the
**       pinned time (see sqlitetriggers_pin_clock), else the host's clock
**       (sqlitetriggers_set_clock: GRDB's transaction date, for one), else
**       the connection's VFS clock (the source of SQLite's own 'now').
**       Each call reads the clock afresh.  A host clock that fails, or
**       answers outside datetime()'s range, is an error naming the
**       function: "datetime_subsec: the connection's clock failed (...)".
**
**   datetime_subsec(TIME-VALUE, MODIFIER, ...)
**       Exactly what SQLite 3.42+ returns for
**       datetime(TIME-VALUE, MODIFIER, ..., 'subsec'):
**         datetime_subsec('2024-02-29 23:59:59.999', '+1 day')
**             -> '2024-03-01 23:59:59.999'
**         datetime_subsec(1700000000.5, 'unixepoch')
**             -> '2023-11-14 22:13:20.500'
**       Time values and modifiers are the host SQLite's own: the arguments
**       go to its julianday() and the resulting millisecond is formatted
**       here.  'now' means the same instant as datetime_subsec() above,
**       pinned or not.  'subsec' and 'subsecond' modifiers are accepted and
**       ignored; as the time value they mean 'now', as on 3.42+
**       (datetime_subsec('subsec', '+1 day') is this time tomorrow).  A fraction of a second above .999 counts as .999, as in
**       newer SQLite, where 3.40 rounds it up into the next second.  Years before 0000 print as '-YYYY'.  Anything datetime()
**       rejects (a malformed value, an unknown modifier, a NULL, a result
**       outside 4714 BC .. 9999 AD) gives NULL.
**
**   unixepoch_subsec()
**   unixepoch_subsec(TIME-VALUE, MODIFIER, ...)
**       The same instant as a REAL number of seconds since 1970-01-01 UTC,
**       with millisecond precision, as unixepoch(..., 'subsec') on 3.42+.
**       unixepoch_subsec('1970-01-01 00:00:01.500') -> 1.5
**
** Both are SQLITE_INNOCUOUS, so DEFAULT (datetime_subsec()) works in a
** schema with PRAGMA trusted_schema=OFF, and not SQLITE_DETERMINISTIC.
**
** The common calls are computed here, as SQLite 3.40's date.c computes
** them: no argument or 'now'; a number alone (a Julian day number) or with
** 'unixepoch'; and 'YYYY-MM-DD', optionally followed by ' ' or 'T' and
** 'HH:MM', ':SS', '.fff...' and 'Z'.  Every other call goes to the host
** SQLite's julianday(), on a private in-memory connection that each
** registered connection opens the first time it needs it, with its
** prepared statements cached.  Per connection, so that no lock is shared:
** the connections of a DatabasePool run in parallel.  Not the caller's own
** connection: sqlite3_close() refuses to close a connection with
** unfinalized statements.
*/
#include "sqlitetriggers_internal.h"

#include <string.h>

#define DAY_MS ((sqlite3_int64)86400000)
#define CACHED_ARITIES 16

struct TimeHelper {
  sqlite3 *db;
  sqlite3_stmt *aStmt[CACHED_ARITIES+1];   /* by argument count */
};

void sqlitetriggers_time_helper_free(TimeHelper *pHelper){
  int i;
  if( pHelper==0 ) return;
  for(i=0; i<=CACHED_ARITIES; i++) sqlite3_finalize(pHelper->aStmt[i]);
  sqlite3_close(pHelper->db);
  sqlite3_free(pHelper);
}

static const char digitPairs[] =
  "00010203040506070809101112131415161718192021222324252627282930313233"
  "34353637383940414243444546474849505152535455565758596061626364656667"
  "6869707172737475767778798081828384858687888990919293949596979899";

static void putTwoDigits(char *z, int value){
  memcpy(z, digitPairs + 2*value, 2);
}

/*
** Write iJD as 'YYYY-MM-DD HH:MM:SS.SSS' (or '-YYYY-...') into zOut, which
** has room for 32 bytes, and return its length.  Proleptic Gregorian, as
** newer SQLite prints it; the civil date from days by Hinnant's algorithm.
** Everything past the first division fits 32 bits: this runs on every
** datetime_subsec() call.
*/
int sqlitetriggers_format_jd(sqlite3_int64 iJD, char *zOut){
  sqlite3_int64 unixMs = iJD - UNIX_EPOCH_JD_MS;
  int days = (int)(unixMs / DAY_MS);
  int msOfDay = (int)(unixMs % DAY_MS);
  int era, dayOfEra, yearOfEra, dayOfYear, monthIndex, day, month, year;
  char *z = zOut;
  if( msOfDay<0 ){ msOfDay += (int)DAY_MS; days--; }
  days += 719468;                         /* now counted from 0000-03-01 */
  era = (days>=0 ? days : days-146096) / 146097;
  dayOfEra = days - era*146097;
  yearOfEra = (dayOfEra - dayOfEra/1460 + dayOfEra/36524
               - dayOfEra/146096) / 365;
  dayOfYear = dayOfEra - (365*yearOfEra + yearOfEra/4 - yearOfEra/100);
  monthIndex = (5*dayOfYear + 2)/153;
  day = dayOfYear - (153*monthIndex + 2)/5 + 1;
  month = monthIndex<10 ? monthIndex+3 : monthIndex-9;
  year = yearOfEra + era*400 + (month<=2);
  if( year<0 ){ *z++ = '-'; year = -year; }
  putTwoDigits(z, year/100);            putTwoDigits(z+2, year%100);
  z[4] = '-';  putTwoDigits(z+5, month);
  z[7] = '-';  putTwoDigits(z+8, day);
  z[10] = ' '; putTwoDigits(z+11, msOfDay/3600000);
  z[13] = ':'; putTwoDigits(z+14, msOfDay/60000%60);
  z[16] = ':'; putTwoDigits(z+17, msOfDay/1000%60);
  z[19] = '.'; putTwoDigits(z+20, msOfDay%1000/10);
  z[22] = (char)('0' + msOfDay%10);
  z[23] = 0;
  return (int)(z + 23 - zOut);
}

/* What an argument means to these functions, read once per call: SQLite
** compares these words without case. */
#define WORD_OTHER      0
#define WORD_SUBSEC     1     /* 'subsec' or 'subsecond': ignored */
#define WORD_UNIXEPOCH  2
#define WORD_NOW        3

/* z[0..n) equals zWord, a lowercase word of letters, ignoring case (a
** byte ORed with 0x20 is a lowercase letter only if it was a letter). */
static int isWordNoCase(const char *z, int n, const char *zWord, int nWord){
  int i;
  if( n!=nWord ) return 0;
  for(i=0; i<n; i++){
    if( (z[i] | 0x20)!=zWord[i] ) return 0;
  }
  return 1;
}

static int wordOf(sqlite3_value *pVal){
  const char *z;
  int n;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ) return WORD_OTHER;
  z = (const char*)sqlite3_value_text(pVal);
  n = sqlite3_value_bytes(pVal);
  if( z==0 ) return WORD_OTHER;
  if( isWordNoCase(z, n, "unixepoch", 9) ) return WORD_UNIXEPOCH;
  if( isWordNoCase(z, n, "subsec", 6) || isWordNoCase(z, n, "subsecond", 9) ){
    return WORD_SUBSEC;
  }
  return isWordNoCase(z, n, "now", 3) ? WORD_NOW : WORD_OTHER;
}

static int isIgnoredModifier(sqlite3_value *pVal){
  return wordOf(pVal)==WORD_SUBSEC;
}

static int isDigit(char c){ return c>='0' && c<='9'; }

/*
** SQLite 3.42+ parses 'HH:MM:SS.ffff' with the fraction truncated to .999
** when it exceeds it, where 3.40 rounds 23:59:59.9999 up into the next day.
** Set *pzCopy to a copy of z (free with sqlite3_free) with such a fraction
** cut to .999, or to NULL when z has none.  SQLITE_NOMEM if the copy fails.
*/
static int clampFraction(const char *z, char **pzCopy){
  const char *p, *zDigits, *zEnd;
  int isAbove999 = 0;
  *pzCopy = 0;
  for(p=z; *p; p++){
    if( p[0]=='.' && p-z>=8 && p[-3]==':' && p[-6]==':'
     && isDigit(p[-1]) && isDigit(p[-2]) && isDigit(p[-4])
     && isDigit(p[-5]) && isDigit(p[-7]) && isDigit(p[-8]) ) break;
  }
  if( *p==0 ) return SQLITE_OK;
  zDigits = p+1;
  if( zDigits[0]!='9' || zDigits[1]!='9' || zDigits[2]!='9' ) return SQLITE_OK;
  for(zEnd=zDigits+3; isDigit(*zEnd); zEnd++) isAbove999 |= *zEnd!='0';
  if( !isAbove999 ) return SQLITE_OK;
  *pzCopy = sqlite3_mprintf("%.*s%s", (int)(zDigits+3-z), z, zEnd);
  return *pzCopy ? SQLITE_OK : SQLITE_NOMEM;
}

/* Bind pVal as parameter i, with its fraction clamped where needed. */
static int bindTimeArgument(sqlite3_stmt *pStmt, int i, sqlite3_value *pVal){
  const char *z;
  char *zClamped;
  int rc;
  if( sqlite3_value_type(pVal)!=SQLITE_TEXT ){
    return sqlite3_bind_value(pStmt, i, pVal);
  }
  z = (const char*)sqlite3_value_text(pVal);
  if( z==0 ) return SQLITE_NOMEM;
  rc = clampFraction(z, &zClamped);
  if( rc!=SQLITE_OK ) return rc;
  if( zClamped==0 ) return sqlite3_bind_value(pStmt, i, pVal);
  return sqlite3_bind_text(pStmt, i, zClamped, -1, sqlite3_free);
}

/* The helper's "SELECT julianday(?1,...,?n)" on p's helper connection,
** opened on first use.  Statements beyond CACHED_ARITIES arguments are not
** cached. */
static int helperStatement(Connection *p, int nArg, sqlite3_stmt **ppStmt){
  TimeHelper *pHelper = p->pTimeHelper;
  char *zSql;
  int rc, i;
  if( pHelper && nArg<=CACHED_ARITIES && pHelper->aStmt[nArg] ){
    *ppStmt = pHelper->aStmt[nArg];
    return SQLITE_OK;
  }
  if( pHelper==0 ){
    pHelper = sqlite3_malloc(sizeof(*pHelper));
    if( pHelper==0 ) return SQLITE_NOMEM;
    memset(pHelper, 0, sizeof(*pHelper));
    rc = sqlite3_open_v2(":memory:", &pHelper->db,
                         SQLITE_OPEN_READWRITE|SQLITE_OPEN_CREATE, 0);
    if( rc!=SQLITE_OK ){
      sqlite3_close(pHelper->db);
      sqlite3_free(pHelper);
      return rc;
    }
    p->pTimeHelper = pHelper;
  }
  zSql = sqlite3_malloc(32 + 2*nArg);
  if( zSql==0 ) return SQLITE_NOMEM;
  memcpy(zSql, "SELECT julianday(?", 18);
  for(i=1; i<nArg; i++) memcpy(zSql + 16 + 2*i, ",?", 2);
  memcpy(zSql + 16 + 2*nArg, ")", 2);
  rc = sqlite3_prepare_v2(pHelper->db, zSql, -1, ppStmt, 0);
  sqlite3_free(zSql);
  if( rc==SQLITE_OK && nArg<=CACHED_ARITIES ) pHelper->aStmt[nArg] = *ppStmt;
  return rc;
}

/* ---- the native path: SQLite 3.40's date.c for the common inputs ------- */

/* n digits at z as a number from 0 to max, or -1. */
static int readDigits(const char *z, int n, int max){
  int value = 0, i;
  for(i=0; i<n; i++){
    if( !isDigit(z[i]) ) return -1;
    value = value*10 + (z[i] - '0');
  }
  return value<=max ? value : -1;
}

/* The days of month M (1 to 12) of year Y, proleptic Gregorian. */
static int daysInMonth(int Y, int M){
  static const unsigned char aDays[] = {31,28,31,30,31,30,31,31,30,31,30,31};
  return aDays[M-1] + (M==2 && Y%4==0 && (Y%100!=0 || Y%400==0));
}

/*
** 'YYYY-MM-DD', then optionally ' ' or 'T' and 'HH:MM', ':SS', '.fff...'
** and a final 'Z', as iJD exactly as 3.40's parseYyyyMmDd(),
** parseHhMmSs() and computeJD() give it (the fraction summed as a double,
** then rounded to the millisecond; a fraction above .999 counts as .999,
** as clampFraction() makes it for the exact path).  0 when z has any
** other form, or a date or hour that SQLite versions read differently
** (the 31st of a 30-day month, hour 24): the caller then takes the exact
** path, the host SQLite's own reading.
*/
static int isoTextToJD(const char *z, sqlite3_int64 *piJD){
  int Y, M, D, h = 0, m = 0, s = 0, A, B, X1, X2, hasTime = 0;
  double fraction = 0.0;
  if( (Y = readDigits(z, 4, 9999))<0 || z[4]!='-'
   || (M = readDigits(z+5, 2, 12))<1 || z[7]!='-'
   || (D = readDigits(z+8, 2, 31))<1 || D>daysInMonth(Y, M) ){
    return 0;
  }
  z += 10;
  if( *z==' ' || *z=='T' ){
    z++;
    if( (h = readDigits(z, 2, 23))<0 || z[2]!=':'
     || (m = readDigits(z+3, 2, 59))<0 ){
      return 0;
    }
    z += 5;
    if( *z==':' ){
      if( (s = readDigits(z+1, 2, 59))<0 ) return 0;
      z += 3;
      if( *z=='.' && isDigit(z[1]) ){
        /* Summed digit by digit as parseHhMmSs() sums it; .999 followed
        ** by any nonzero digit counts as .999, as clampFraction() cuts it
        ** for the exact path. */
        const char *zDigits = ++z;
        double scale = 1.0;
        int isAbove999 = 0;
        for(; isDigit(*z); z++){
          fraction = fraction*10.0 + (*z - '0');
          scale *= 10.0;
          if( z - zDigits>=3 ) isAbove999 |= *z!='0';
        }
        fraction /= scale;
        if( isAbove999 && memcmp(zDigits, "999", 3)==0 ) fraction = 999.0/1000.0;
      }
    }
    if( *z=='Z' ) z++;
    hasTime = 1;
  }
  if( *z ) return 0;
  /* computeJD() of 3.40 */
  if( M<=2 ){ Y--; M += 12; }
  A = Y/100;
  B = 2 - A + (A/4);
  X1 = 36525*(Y+4716)/100;
  X2 = 306001*(M+1)/10000;
  *piJD = (sqlite3_int64)((X1 + X2 + D + B - 1524.5) * 86400000);
  if( hasTime ){
    *piJD += h*3600000 + m*60000 + (sqlite3_int64)((s + fraction)*1000 + 0.5);
  }
  return 1;
}

/*
** The instant of the call's arguments when they take the native path: a
** time value argv[0] and, when isUnixepoch, the one modifier 'unixepoch'
** (else none).  JD_OK with *piJD, or JD_NULL when 3.40 gives NULL;
** JD_EXACT when the exact path must decide.
*/
#define JD_EXACT (-2)
static int nativeJD(sqlite3_value *pTime, int isUnixepoch, sqlite3_int64 *piJD){
  int eType = sqlite3_value_type(pTime);
  if( eType==SQLITE_INTEGER || eType==SQLITE_FLOAT ){
    double r = sqlite3_value_double(pTime);
    if( !isUnixepoch ){
      /* A Julian day number: setRawDateNumber(). */
      if( !(r>=0.0 && r<5373484.5) ) return JD_EXACT;
      *piJD = (sqlite3_int64)(r*86400000.0 + 0.5);
    }else{
      r = r*1000.0 + 210866760000000.0;
      if( !(r>=0.0 && r<464269060800000.0) ) return JD_EXACT;
      *piJD = (sqlite3_int64)(r + 0.5);
    }
  }else if( eType==SQLITE_TEXT && !isUnixepoch ){
    const char *z = (const char*)sqlite3_value_text(pTime);
    if( z==0 || !isoTextToJD(z, piJD) ) return JD_EXACT;
  }else{
    return JD_EXACT;
  }
  return *piJD>=0 && *piJD<=MAX_JD_MS ? JD_OK : JD_NULL;
}

/*
** 0 when the clock answered (rc SQLITE_OK), else 1 after setting an error
** on ctx that names the function.
*/
static int clockFailed(sqlite3_context *ctx, const char *zFunc, int rc){
  char *zMsg;
  if( rc==SQLITE_OK ) return 0;
  zMsg = sqlite3_mprintf("%s: the connection's clock failed (%s)", zFunc,
                         rc==SQLITE_RANGE ? "an instant outside the range of "
                         "datetime()" : sqlite3_errstr(rc));
  if( zMsg ){
    sqlite3_result_error(ctx, zMsg, -1);
    sqlite3_free(zMsg);
  }else{
    sqlite3_result_error_nomem(ctx);
  }
  return 1;
}

/*
** The instant named by the arguments of a datetime()-style call, as iJD.
** Returns JD_OK with *piJD set; JD_NULL where datetime() gives NULL (not
** a time, or outside -4713-11-24 12:00 .. 9999-12-31 23:59:59.999); or
** JD_ERROR after setting an error on ctx.
*/
int sqlitetriggers_compute_jd(sqlite3_context *ctx, Connection *p, const char *zFunc,
              int argc, sqlite3_value **argv, sqlite3_int64 *piJD){
  sqlite3_stmt *pStmt = 0;
  char zNow[32];
  int nKept = 0, i, rc, result = 0, lastKept = WORD_OTHER, isNowFirst = 1;
  sqlite3_int64 iNow = 0;
  for(i=1; i<argc; i++){
    int word = wordOf(argv[i]);
    if( word!=WORD_SUBSEC ){ nKept++; lastKept = word; }
  }
  if( argc>0 ){
    int word = wordOf(argv[0]);
    isNowFirst = word==WORD_NOW || word==WORD_SUBSEC;
  }
  if( isNowFirst
   && clockFailed(ctx, zFunc, sqlitetriggers_connection_now_jd(p, &iNow)) ){
    return JD_ERROR;
  }
  if( isNowFirst && nKept==0 ){
    *piJD = iNow;
    return JD_OK;
  }
  if( !isNowFirst && (nKept==0 || (nKept==1 && lastKept==WORD_UNIXEPOCH)) ){
    result = nativeJD(argv[0], nKept==1, piJD);
    if( result!=JD_EXACT ) return result;
    result = 0;
  }
  rc = helperStatement(p, 1 + nKept, &pStmt);
  if( rc==SQLITE_OK ){
    int iParam = 1;
    /* datetime('subsec') on 3.42+ means 'now', with milliseconds. */
    if( isNowFirst ){
      sqlitetriggers_format_jd(iNow, zNow);
      rc = sqlite3_bind_text(pStmt, iParam++, zNow, -1, SQLITE_TRANSIENT);
    }else{
      rc = bindTimeArgument(pStmt, iParam++, argv[0]);
    }
    for(i=1; rc==SQLITE_OK && i<argc; i++){
      if( !isIgnoredModifier(argv[i]) ){
        rc = bindTimeArgument(pStmt, iParam++, argv[i]);
      }
    }
    if( rc==SQLITE_OK ) rc = sqlite3_step(pStmt);
    if( rc==SQLITE_ROW ){
      rc = SQLITE_OK;
      if( sqlite3_column_type(pStmt, 0)!=SQLITE_NULL ){
        /* In range exactly when the truncated value is, checked before
        ** the conversion, which is undefined for a huge double. */
        double ms = sqlite3_column_double(pStmt, 0)*86400000.0 + 0.5;
        if( ms>-1.0 && ms<(double)MAX_JD_MS + 1.0 ){
          *piJD = (sqlite3_int64)ms;
          result = JD_OK;
        }
      }
    }
  }
  if( rc==SQLITE_NOMEM ){
    sqlite3_result_error_nomem(ctx);
    result = JD_ERROR;
  }else if( rc!=SQLITE_OK ){
    char *zErr = sqlite3_mprintf("%s: %s", zFunc,
                                 p->pTimeHelper ? sqlite3_errmsg(p->pTimeHelper->db)
                                                : sqlite3_errstr(rc));
    sqlite3_result_error(ctx, zErr ? zErr : zFunc, -1);
    sqlite3_free(zErr);
    result = JD_ERROR;
  }
  if( pStmt ){
    sqlite3_reset(pStmt);
    sqlite3_clear_bindings(pStmt);
    if( 1+nKept>CACHED_ARITIES ) sqlite3_finalize(pStmt);
  }
  return result;
}

static void datetimeSubsecFunc(sqlite3_context *ctx, int argc,
                               sqlite3_value **argv){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3_int64 iJD;
  char zOut[32];
  if( sqlitetriggers_compute_jd(ctx, p, "datetime_subsec", argc, argv, &iJD)!=JD_OK ){
    return;
  }
  sqlite3_result_text(ctx, zOut, sqlitetriggers_format_jd(iJD, zOut), SQLITE_TRANSIENT);
}

static void unixepochSubsecFunc(sqlite3_context *ctx, int argc,
                                sqlite3_value **argv){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  sqlite3_int64 iJD;
  if( sqlitetriggers_compute_jd(ctx, p, "unixepoch_subsec", argc, argv, &iJD)!=JD_OK ){
    return;
  }
  sqlite3_result_double(ctx, (iJD - UNIX_EPOCH_JD_MS)/1000.0);
}

int sqlitetriggers_register_time_functions(sqlite3 *db, Connection *p){
  int rc = sqlitetriggers_connection_create_function(db, "datetime_subsec", -1,
                                    SQLITE_INNOCUOUS, p, datetimeSubsecFunc);
  if( rc==SQLITE_OK ){
    rc = sqlitetriggers_connection_create_function(db, "unixepoch_subsec", -1,
                                  SQLITE_INNOCUOUS, p, unixepochSubsecFunc);
  }
  return rc;
}
