/*
** uuid.c: RFC 9562 UUIDs.
**
** Text UUIDs are always 36 lowercase characters,
** xxxxxxxx-xxxx-Vxxx-Nxxx-xxxxxxxxxxxx, and blobs 16 bytes in network
** (big-endian) order.  Where SQLite's ext/misc/uuid.c defines a function of
** the same name, this one behaves identically.
**
**   uuid()
**       A random (version 4) UUID as text.  SQLITE_INNOCUOUS and not
**       SQLITE_DETERMINISTIC, so a schema may say
**       "id" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid())
**       even with PRAGMA trusted_schema=OFF.
**
**   uuidv7()
**       A time-ordered (version 7) UUID as text: the 48-bit Unix millisecond
**       of the connection's clock (pinnable), then a 16-bit counter (the 12
**       bits of rand_a and the first 4 bits of rand_b, RFC 9562 section 6.2
**       method 1), then 58 random bits.  Values are strictly increasing, as
**       text and as blobs, across every call in the process: all
**       connections, all threads, any number of calls per millisecond, and
**       a clock that steps backwards.  The counter starts at a random value
**       below 32768 in each new millisecond; when it is exhausted, or the
**       clock goes backwards, it carries into the timestamp, which then runs
**       ahead of the clock until the clock catches up.
**       On a connection whose clock is pinned or whose randomness is seeded
**       the order is kept per connection instead, so that the timestamp is
**       the pinned one and a seeded run is reproducible.  A clock before
**       1970 (pinned there) is an error, "timestamp out of range", as in
**       PostgreSQL: a v7 timestamp cannot hold it.
**
**   uuid_str(X)    X as canonical lowercase text.
**   uuid_blob(X)   X as a 16-byte blob.
**       X is a 16-byte blob, or text of 32 hex digits in either case, with
**       an optional '-' before any pair of digits and optional '{' and '}'
**       around it all.  NULL, other blob sizes, numbers and malformed text
**       all give NULL, exactly as in SQLite's uuid.c: these two never raise
**       an error.
**
**   uuid_version(X)
**       The version (the M digit) of an RFC 9562 UUID X, in any form that
**       uuid_blob() accepts, as an integer.  NULL when X is not a UUID or its
**       variant is not 10 (the nil and max UUIDs among them).
**
**   uuidv7_timestamp(X)
**       The Unix-millisecond timestamp of a version 7 UUID, as an integer.
**   uuidv7_datetime(X)
**       The same as 'YYYY-MM-DD HH:MM:SS.SSS' UTC; NULL after 9999-12-31.
**       Both give NULL when X is not a variant-10, version-7 UUID.
**
**   sqlitetriggers_derived_uuid(SALT, TABLE, ID)
**       The version 8 UUID that the primary-key migration gives row ID of
**       TABLE: the first 16 bytes of a ChaCha20 block keyed by SALT (a
**       32-byte blob) over ID (an integer) and the 64-bit FNV-1a hash of
**       TABLE in lowercase, with version 8 and variant 10 set.  The same
**       inputs always give the same UUID, so keys and the foreign keys that
**       point at them stay consistent; another salt gives unrelated UUIDs.
**       A NULL ID gives NULL; a salt that is not a 32-byte blob, a TABLE
**       that is not text, or an ID that is not an integer is an error.
**       Deterministic and innocuous.
*/
#include "sqlitetriggers_internal.h"

#include "include/sqlitetriggers.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

/* Two lowercase hex digits for each byte value. */
static const char hexPairs[] =
  "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
  "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
  "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
  "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
  "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
  "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
  "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
  "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* Byte i's two digits at offset iOut of the text.  Written out for each
** byte, with constant offsets, this compiles to a load and a two-byte
** store per byte: uuid() spends more time here than drawing its bytes. */
#define PUT_HEX_PAIR(i, iOut) memcpy(zOut + (iOut), hexPairs + 2*aBlob[i], 2)

static void uuidToText(const unsigned char *aBlob, char *zOut){
  PUT_HEX_PAIR(0, 0);   PUT_HEX_PAIR(1, 2);   PUT_HEX_PAIR(2, 4);
  PUT_HEX_PAIR(3, 6);   zOut[8] = '-';
  PUT_HEX_PAIR(4, 9);   PUT_HEX_PAIR(5, 11);  zOut[13] = '-';
  PUT_HEX_PAIR(6, 14);  PUT_HEX_PAIR(7, 16);  zOut[18] = '-';
  PUT_HEX_PAIR(8, 19);  PUT_HEX_PAIR(9, 21);  zOut[23] = '-';
  PUT_HEX_PAIR(10, 24); PUT_HEX_PAIR(11, 26); PUT_HEX_PAIR(12, 28);
  PUT_HEX_PAIR(13, 30); PUT_HEX_PAIR(14, 32); PUT_HEX_PAIR(15, 34);
}

static int hexValue(unsigned char c){
  if( c>='0' && c<='9' ) return c - '0';
  if( c>='a' && c<='f' ) return c - 'a' + 10;
  if( c>='A' && c<='F' ) return c - 'A' + 10;
  return -1;
}

/* Parse text as uuid.c accepts it; 1 on success. */
static int uuidFromText(const unsigned char *z, unsigned char *aBlob){
  int i;
  if( z[0]=='{' ) z++;
  for(i=0; i<16; i++){
    int hi, lo;
    if( z[0]=='-' ) z++;
    hi = hexValue(z[0]);
    lo = hi<0 ? -1 : hexValue(z[1]);
    if( lo<0 ) return 0;
    aBlob[i] = (unsigned char)(hi<<4 | lo);
    z += 2;
  }
  if( z[0]=='}' ) z++;
  return z[0]==0;
}

/* The 16 bytes of a UUID argument, or NULL when it is not one.  Reading a
** text or a zeroblob can run out of memory: then NULL too, with the error
** set on ctx, so that it is never mistaken for "not a UUID". */
static const unsigned char *uuidArgument(sqlite3_context *ctx,
                                         sqlite3_value *pVal,
                                         unsigned char *aBuf){
  const unsigned char *z;
  switch( sqlite3_value_type(pVal) ){
    case SQLITE_TEXT:
      z = sqlite3_value_text(pVal);
      if( z==0 ) sqlite3_result_error_nomem(ctx);
      return z && uuidFromText(z, aBuf) ? aBuf : 0;
    case SQLITE_BLOB:
      if( sqlite3_value_bytes(pVal)!=16 ) return 0;
      z = sqlite3_value_blob(pVal);
      if( z==0 ) sqlite3_result_error_nomem(ctx);
      return z;
    default:
      return 0;
  }
}

static int isRfcVariant(const unsigned char *aBlob){
  return (aBlob[8] & 0xc0)==0x80;
}

static void resultUuidText(sqlite3_context *ctx, const unsigned char *aBlob){
  char zText[36];
  uuidToText(aBlob, zText);
  sqlite3_result_text(ctx, zText, 36, SQLITE_TRANSIENT);
}

static void uuidFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aBlob[16];
  (void)argc; (void)argv;
  randomPoolBytes(&((Connection*)sqlite3_user_data(ctx))->random, aBlob, 16);
  aBlob[6] = (aBlob[6] & 0x0f) | 0x40;
  aBlob[8] = (aBlob[8] & 0x3f) | 0x80;
  resultUuidText(ctx, aBlob);
}

/*
** A uuidv7 "tick" is the 48-bit millisecond shifted left 16, plus the
** counter: the 64 leading bits of the UUID that are not version or
** variant, so ticks order UUIDs exactly as their bytes do.
*/
static _Atomic uint64_t lastProcessTick = 0;

static uint64_t nextTick(uint64_t last, uint64_t unixMs, uint16_t randomStart){
  if( unixMs > (last>>16) ) return unixMs<<16 | (randomStart & 0x7fff);
  return last + 1;
}

/* The next process-wide tick for unixMs (see nextTick). */
static uint64_t nextProcessTick(uint64_t unixMs, uint16_t randomStart){
  uint64_t last = atomic_load_explicit(&lastProcessTick, memory_order_relaxed), tick;
  do{
    tick = nextTick(last, unixMs, randomStart);
  }while( !atomic_compare_exchange_weak(&lastProcessTick, &last, tick) );
  return tick;
}

/* A v7 UUID of tick, its other bits from aRandom (8 bytes). */
static void uuidv7FromTick(uint64_t tick, const unsigned char *aRandom, unsigned char *aBlob){
  int i;
  memcpy(aBlob+8, aRandom, 8);
  for(i=0; i<6; i++) aBlob[i] = (unsigned char)(tick >> (56 - 8*i));
  aBlob[6] = (unsigned char)(0x70 | ((tick>>12) & 0x0f));
  aBlob[7] = (unsigned char)(tick>>4);
  aBlob[8] = (unsigned char)(0x80 | (tick & 0x0f)<<2 | (aBlob[8] & 0x03));
}

/*
** sqlitetriggers_uuidv7(): a v7 UUID for the host (a Swift record's key), in
** the same process-wide order as SQL's uuidv7() on connections whose clock
** is not pinned, so that keys made in Swift and in SQL sort together.  The
** real clock (as the default VFS reads it) and a per-thread kernel-keyed
** pool; no SQLite call, so a host may use it before any connection.
*/
static _Thread_local RandomPool threadPool;
static _Thread_local int isThreadPoolKeyed = 0;

int sqlitetriggers_uuidv7(unsigned char *aOut){
  unsigned char aRandom[10];
  struct timespec now;
  sqlite3_int64 unixMs;
  sqlitetriggers_random_init_once();
  if( !isThreadPoolKeyed ){
    sqlitetriggers_random_pool_key_from_kernel(&threadPool);
    isThreadPoolKeyed = 1;
  }
  if( clock_gettime(CLOCK_REALTIME, &now)!=0 ) return SQLITE_ERROR;
  unixMs = (sqlite3_int64)now.tv_sec*1000 + now.tv_nsec/1000000;
  if( unixMs<0 ) return SQLITE_RANGE;                /* before 1970 */
  randomPoolBytes(&threadPool, aRandom, 10);
  uuidv7FromTick(nextProcessTick((uint64_t)unixMs, (uint16_t)(aRandom[8]<<8 | aRandom[9])),
                 aRandom, aOut);
  return SQLITE_OK;
}

static void uuidv7Func(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  Connection *p = (Connection*)sqlite3_user_data(ctx);
  unsigned char aBlob[16], aRandom[10];
  uint64_t unixMs, tick;
  uint16_t randomStart;
  sqlite3_int64 iJD = 0;
  int rc;
  (void)argc; (void)argv;
  randomPoolBytes(&p->random, aRandom, 10);
  randomStart = (uint16_t)(aRandom[8]<<8 | aRandom[9]);
  rc = sqlitetriggers_connection_now_jd(p, &iJD);
  if( rc!=SQLITE_OK ){
    sqlite3_result_error(ctx, rc==SQLITE_RANGE
        ? "uuidv7: the connection's clock failed (an instant outside the range of datetime())"
        : "uuidv7: the connection's clock failed", -1);
    return;
  }
  if( iJD<UNIX_EPOCH_JD_MS ){
    /* As PostgreSQL's uuidv7() does: a v7 timestamp cannot hold it. */
    sqlite3_result_error(ctx, "uuidv7: timestamp out of range: the connection's "
                              "clock is before 1970-01-01 00:00:00 UTC (pinned?), "
                              "which a version 7 UUID cannot hold", -1);
    return;
  }
  unixMs = (uint64_t)(iJD - UNIX_EPOCH_JD_MS);    /* below 2^48 until 10889 */
  if( p->isClockPinned || p->isSeeded ){
    tick = p->lastLocalV7Tick = nextTick(p->lastLocalV7Tick, unixMs,
                                         randomStart);
  }else{
    tick = nextProcessTick(unixMs, randomStart);
  }
  uuidv7FromTick(tick, aRandom, aBlob);
  resultUuidText(ctx, aBlob);
}

static void uuidStrFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aBuf[16];
  const unsigned char *aBlob = uuidArgument(ctx, argv[0], aBuf);
  (void)argc;
  if( aBlob ) resultUuidText(ctx, aBlob);
}

static void uuidBlobFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  unsigned char aBuf[16];
  const unsigned char *aBlob = uuidArgument(ctx, argv[0], aBuf);
  (void)argc;
  if( aBlob ) sqlite3_result_blob(ctx, aBlob, 16, SQLITE_TRANSIENT);
}

static void uuidVersionFunc(sqlite3_context *ctx, int argc,
                            sqlite3_value **argv){
  unsigned char aBuf[16];
  const unsigned char *aBlob = uuidArgument(ctx, argv[0], aBuf);
  (void)argc;
  if( aBlob && isRfcVariant(aBlob) ) sqlite3_result_int(ctx, aBlob[6]>>4);
}

/* The millisecond of a v7 UUID argument, or -1 when it is not one. */
static sqlite3_int64 uuidv7Millis(sqlite3_context *ctx, sqlite3_value *pVal){
  unsigned char aBuf[16];
  const unsigned char *aBlob = uuidArgument(ctx, pVal, aBuf);
  sqlite3_int64 ms = 0;
  int i;
  if( aBlob==0 || !isRfcVariant(aBlob) || (aBlob[6]>>4)!=7 ) return -1;
  for(i=0; i<6; i++) ms = ms<<8 | aBlob[i];
  return ms;
}

static void uuidv7TimestampFunc(sqlite3_context *ctx, int argc,
                                sqlite3_value **argv){
  sqlite3_int64 ms = uuidv7Millis(ctx, argv[0]);
  (void)argc;
  if( ms>=0 ) sqlite3_result_int64(ctx, ms);
}

static void uuidv7DatetimeFunc(sqlite3_context *ctx, int argc,
                               sqlite3_value **argv){
  sqlite3_int64 ms = uuidv7Millis(ctx, argv[0]);
  char zOut[32];
  (void)argc;
  if( ms<0 || ms + UNIX_EPOCH_JD_MS > MAX_JD_MS ) return;
  sqlite3_result_text(ctx, zOut, sqlitetriggers_format_jd(ms + UNIX_EPOCH_JD_MS, zOut),
                      SQLITE_TRANSIENT);
}

static void derivedUuidFunc(sqlite3_context *ctx, int argc, sqlite3_value **argv){
  uint32_t key[8], input[4];
  unsigned char aBlock[64];
  const unsigned char *aSalt, *zTable;
  uint64_t hash = 0xcbf29ce484222325ULL;
  sqlite3_int64 id;
  int i;
  (void)argc;
  if( sqlite3_value_type(argv[2])==SQLITE_NULL ) return;
  if( sqlite3_value_type(argv[0])!=SQLITE_BLOB || sqlite3_value_bytes(argv[0])!=32
   || sqlite3_value_type(argv[1])!=SQLITE_TEXT
   || sqlite3_value_type(argv[2])!=SQLITE_INTEGER ){
    sqlite3_result_error(ctx, "sqlitetriggers_derived_uuid: expects a 32-byte "
                              "salt blob, a table name and an integer id", -1);
    return;
  }
  aSalt = sqlite3_value_blob(argv[0]);
  zTable = sqlite3_value_text(argv[1]);
  if( aSalt==0 || zTable==0 ){
    sqlite3_result_error_nomem(ctx);
    return;
  }
  id = sqlite3_value_int64(argv[2]);
  for(i=0; i<8; i++) key[i] = sqlitetriggers_load_le32(aSalt + 4*i);
  for(i=0; zTable[i]; i++){
    unsigned char c = zTable[i];
    if( c>='A' && c<='Z' ) c += 'a' - 'A';
    hash = (hash ^ c) * 0x100000001b3ULL;
  }
  input[0] = (uint32_t)id;
  input[1] = (uint32_t)((uint64_t)id >> 32);
  input[2] = (uint32_t)hash;
  input[3] = (uint32_t)(hash >> 32);
  sqlitetriggers_chacha20_block(key, input, aBlock);
  aBlock[6] = (aBlock[6] & 0x0f) | 0x80;
  aBlock[8] = (aBlock[8] & 0x3f) | 0x80;
  resultUuidText(ctx, aBlock);
}

int sqlitetriggers_register_uuid_functions(sqlite3 *db, Connection *p){
  static const struct {
    const char *zName;
    int nArg;
    int isPure;     /* depends on its argument only */
    void (*xFunc)(sqlite3_context*,int,sqlite3_value**);
  } aFunc[] = {
    { "uuid",             0, 0, uuidFunc },
    { "uuidv7",           0, 0, uuidv7Func },
    { "uuid_str",         1, 1, uuidStrFunc },
    { "uuid_blob",        1, 1, uuidBlobFunc },
    { "uuid_version",     1, 1, uuidVersionFunc },
    { "uuidv7_timestamp", 1, 1, uuidv7TimestampFunc },
    { "uuidv7_datetime",  1, 1, uuidv7DatetimeFunc },
    { "sqlitetriggers_derived_uuid", 3, 1, derivedUuidFunc },
  };
  int rc = SQLITE_OK;
  size_t i;
  for(i=0; rc==SQLITE_OK && i<sizeof(aFunc)/sizeof(aFunc[0]); i++){
    rc = sqlitetriggers_connection_create_function(
        db, aFunc[i].zName, aFunc[i].nArg,
        SQLITE_INNOCUOUS | (aFunc[i].isPure ? SQLITE_DETERMINISTIC : 0),
        aFunc[i].isPure ? 0 : p, aFunc[i].xFunc);
  }
  return rc;
}
