/*
** random.c: the random bytes behind uuid() and uuidv7().
**
** No SQL functions are defined here.
**
** Why not sqlite3_randomness()?  It takes a global mutex on every call, and
** why not getentropy() per UUID?  A system call per row costs more than the
** rest of uuid() together.  Instead each thread keeps a ChaCha20 keystream:
**
**   - keyed with 32 bytes from getentropy() (the kernel CSPRNG);
**   - "fast key erasure": each refill computes 16 blocks (1 KiB), the first
**     32 bytes become the next key and are wiped, and every byte handed out
**     is wiped from the buffer, so a later memory disclosure cannot reveal
**     earlier output;
**   - four blocks at a time in the lanes of a 128-bit vector (GCC and clang
**     vector extensions; SSE2 on x86-64, NEON on arm64);
**   - fork-safe: a pthread_atfork() child handler bumps a generation number,
**     and a pool whose generation is stale rekeys from the kernel before it
**     hands out a byte, so a child never repeats its parent's stream.  The
**     loadable build is linked with -z nodelete so the handler can never
**     point into an unloaded library.
**
** A seeded pool (the sqlitetriggers_seed_random() test control) uses the
** same generator with a key expanded from the 64-bit seed by SplitMix64, so
** a seed gives the same bytes on every platform.
*/
#include "sqlitetriggers_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#if defined(__APPLE__) || defined(__linux__)
# include <sys/random.h>
#endif

typedef uint32_t u32x4 __attribute__((vector_size(16)));

#define ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define QUARTER_ROUND(a, b, c, d) \
  a += b; d ^= a; d = ROTL(d, 16);  \
  c += d; b ^= c; b = ROTL(b, 12);  \
  a += b; d ^= a; d = ROTL(d, 8);   \
  c += d; b ^= c; b = ROTL(b, 7);

static void storeLittleEndian32(unsigned char *p, uint32_t v){
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

static uint32_t loadLittleEndian32(const unsigned char *p){
  return (uint32_t)p[0] | (uint32_t)p[1] << 8
       | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static u32x4 splat(uint32_t v){
  u32x4 r = {v, v, v, v};
  return r;
}

/* ChaCha20 blocks counter..counter+3 under key (nonce 0) into aOut[256]. */
static void chacha20Blocks4(const uint32_t key[8], uint32_t counter,
                            unsigned char *aOut){
  u32x4 in[16], x[16];
  int i, lane;
  in[0] = splat(0x61707865);
  in[1] = splat(0x3320646e);
  in[2] = splat(0x79622d32);
  in[3] = splat(0x6b206574);
  for(i=0; i<8; i++) in[4+i] = splat(key[i]);
  in[12] = (u32x4){counter, counter+1, counter+2, counter+3};
  in[13] = splat(0);
  in[14] = splat(0);
  in[15] = splat(0);
  memcpy(x, in, sizeof(x));
  for(i=0; i<10; i++){
    QUARTER_ROUND(x[0], x[4], x[8],  x[12]);
    QUARTER_ROUND(x[1], x[5], x[9],  x[13]);
    QUARTER_ROUND(x[2], x[6], x[10], x[14]);
    QUARTER_ROUND(x[3], x[7], x[11], x[15]);
    QUARTER_ROUND(x[0], x[5], x[10], x[15]);
    QUARTER_ROUND(x[1], x[6], x[11], x[12]);
    QUARTER_ROUND(x[2], x[7], x[8],  x[13]);
    QUARTER_ROUND(x[3], x[4], x[9],  x[14]);
  }
  for(i=0; i<16; i++){
    x[i] += in[i];
    for(lane=0; lane<4; lane++){
      storeLittleEndian32(aOut + 64*lane + 4*i, x[i][lane]);
    }
  }
}

static void randomPoolRefill(RandomPool *pPool){
  uint32_t counter;
  int i;
  for(counter=0; counter<16; counter+=4){
    chacha20Blocks4(pPool->key, counter, pPool->aBuf + 64*counter);
  }
  for(i=0; i<8; i++) pPool->key[i] = loadLittleEndian32(pPool->aBuf + 4*i);
  memset(pPool->aBuf, 0, 32);
  pPool->iNext = 32;
}

/* Copy n bytes (at most 64) of keystream into aOut. */
void randomPoolBytes(RandomPool *pPool, unsigned char *aOut, int n){
  if( pPool->iNext + n > (int)sizeof(pPool->aBuf) ) randomPoolRefill(pPool);
  memcpy(aOut, pPool->aBuf + pPool->iNext, n);
  memset(pPool->aBuf + pPool->iNext, 0, n);
  pPool->iNext += n;
}

static uint64_t splitMix64(uint64_t *pState){
  uint64_t z = (*pState += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void randomPoolSeed(RandomPool *pPool, sqlite3_int64 seed){
  uint64_t state = (uint64_t)seed;
  int i;
  for(i=0; i<8; i+=2){
    uint64_t v = splitMix64(&state);
    pPool->key[i] = (uint32_t)v;
    pPool->key[i+1] = (uint32_t)(v >> 32);
  }
  memset(pPool->aBuf, 0, sizeof(pPool->aBuf));
  pPool->iNext = (int)sizeof(pPool->aBuf);
  pPool->isKeyed = 1;
}

static _Atomic uint64_t forkGeneration = 1;
static __thread RandomPool threadPool;
static pthread_once_t initOnce = PTHREAD_ONCE_INIT;

static void onForkChild(void){
  atomic_fetch_add(&forkGeneration, 1);
}

static void installForkHandler(void){
  pthread_atfork(0, 0, onForkChild);
}

void randomInitOnce(void){
  pthread_once(&initOnce, installForkHandler);
}

static void keyFromKernel(RandomPool *pPool){
  unsigned char aSeed[32];
  int i;
  if( getentropy(aSeed, sizeof(aSeed))!=0 ){
    /* Only on kernels without getrandom(2); SQLite seeds from the OS too. */
    sqlite3_randomness(sizeof(aSeed), aSeed);
  }
  for(i=0; i<8; i++) pPool->key[i] = loadLittleEndian32(aSeed + 4*i);
  memset(aSeed, 0, sizeof(aSeed));
  memset(pPool->aBuf, 0, sizeof(pPool->aBuf));
  pPool->iNext = (int)sizeof(pPool->aBuf);
  pPool->isKeyed = 1;
}

void randomOsBytes(unsigned char *aOut, int n){
  RandomPool *pPool = &threadPool;
  uint64_t generation = atomic_load_explicit(&forkGeneration,
                                             memory_order_relaxed);
  if( !pPool->isKeyed || pPool->forkGeneration!=generation ){
    keyFromKernel(pPool);
    pPool->forkGeneration = generation;
  }
  randomPoolBytes(pPool, aOut, n);
}
