/*
** random.c: the random bytes behind uuid() and uuidv7().
**
** No SQL functions are defined here.
**
** Why not sqlite3_randomness()?  It takes a global mutex on every call, and
** why not getentropy() per UUID?  A system call per row costs more than the
** rest of uuid() together.  Instead each connection keeps a ChaCha20
** keystream (SQLite never runs one connection on two threads at once, so
** it needs no lock):
**
**   - keyed with 32 bytes from the kernel's CSPRNG: arc4random_buf() on
**     Apple platforms (iOS SDKs have no <sys/random.h> and declare no
**     getentropy()), getentropy() elsewhere;
**   - "fast key erasure": each refill computes 16 blocks (1 KiB), the first
**     32 bytes become the next key and are wiped, and every byte handed out
**     is wiped from the buffer, so a later memory disclosure cannot reveal
**     earlier output;
**   - four blocks at a time in the lanes of a 128-bit vector (GCC and clang
**     vector extensions; SSE2 on x86-64, NEON on arm64), or eight in a
**     256-bit vector where an x86-64 CPU has AVX2 (chosen at run time).
**     The environment variable SQLITETRIGGERS_CHACHA20, read once, can
**     force "scalar", "vector" or "avx2" (where available): every kernel
**     gives the same bytes, and the tests run each against a reference;
**   - fork-safe: a pthread_atfork() child handler bumps a generation number,
**     and a kernel-keyed pool whose generation is stale rekeys before it
**     hands out a byte, so a child never repeats its parent's stream.  The
**     loadable build is linked with -z nodelete so the handler can never
**     point into an unloaded library.
**
** A seeded pool (the sqlitetriggers_seed_random() test control) uses the
** same generator with a key expanded from the 64-bit seed by SplitMix64, so
** a seed gives the same bytes on every little-endian platform (all the ones
** SQLite apps run on), with or without AVX2.
*/
#if !defined(SQLITE_CORE) && !defined(_WIN32) && !defined(_GNU_SOURCE)
# define _GNU_SOURCE          /* dladdr() and RTLD_NODELETE in glibc */
#endif
#include "sqlitetriggers_internal.h"

#if !defined(SQLITE_CORE) && !defined(_WIN32)
# include <dlfcn.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
# include <sys/random.h>     /* getentropy(); Apple's SDKs have neither */
#endif

typedef uint32_t u32x4 __attribute__((vector_size(16)));
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
# define HAVE_AVX2_PATH 1
typedef uint32_t u32x8 __attribute__((vector_size(32)));
#endif

#define ROTL(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define QUARTER_ROUND(a, b, c, d) \
  a += b; d ^= a; d = ROTL(d, 16);  \
  c += d; b ^= c; b = ROTL(b, 12);  \
  a += b; d ^= a; d = ROTL(d, 8);   \
  c += d; b ^= c; b = ROTL(b, 7);

uint32_t sqlitetriggers_load_le32(const unsigned char *p){
  return (uint32_t)p[0] | (uint32_t)p[1] << 8
       | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
** DEFINE_CHACHA20_BLOCKS(NAME, VEC, LANES) defines
**   static void NAME(const uint32_t key[8], unsigned char aOut[1024]);
** computing ChaCha20 blocks 0..15 (nonce 0) under key, LANES blocks at a
** time in the lanes of VEC.  Whatever LANES is, the output layout is the
** same: groups of four blocks, 256 bytes each, word-interleaved (word 0 of
** the group's four blocks, then word 1, ...).  That is a fixed permutation
** of the standard keystream, as random and much cheaper than transposing,
** and it makes a seeded stream identical with or without AVX2.
*/
#define DEFINE_CHACHA20_BLOCKS(NAME, VEC, LANES)                        \
static void NAME(const uint32_t key[8], unsigned char *aOut){           \
  VEC in[16], x[16];                                                    \
  const VEC zero = {0};                                                 \
  uint32_t counter;                                                     \
  int i, lane;                                                          \
  for(counter=0; counter<16; counter+=LANES){                           \
    in[0] = zero + 0x61707865;                                          \
    in[1] = zero + 0x3320646e;                                          \
    in[2] = zero + 0x79622d32;                                          \
    in[3] = zero + 0x6b206574;                                          \
    for(i=0; i<8; i++) in[4+i] = zero + key[i];                         \
    for(lane=0; lane<LANES; lane++) in[12][lane] = counter + lane;      \
    in[13] = in[14] = in[15] = zero;                                    \
    memcpy(x, in, sizeof(x));                                           \
    for(i=0; i<10; i++){                                                \
      QUARTER_ROUND(x[0], x[4], x[8],  x[12]);                          \
      QUARTER_ROUND(x[1], x[5], x[9],  x[13]);                          \
      QUARTER_ROUND(x[2], x[6], x[10], x[14]);                          \
      QUARTER_ROUND(x[3], x[7], x[11], x[15]);                          \
      QUARTER_ROUND(x[0], x[5], x[10], x[15]);                          \
      QUARTER_ROUND(x[1], x[6], x[11], x[12]);                          \
      QUARTER_ROUND(x[2], x[7], x[8],  x[13]);                          \
      QUARTER_ROUND(x[3], x[4], x[9],  x[14]);                          \
    }                                                                   \
    for(i=0; i<16; i++){                                                \
      x[i] += in[i];                                                    \
      for(lane=0; lane<LANES; lane+=4){                                 \
        memcpy(aOut + 64*(counter+lane) + 16*i,                         \
               (unsigned char*)&x[i] + 4*lane, 16);                     \
      }                                                                 \
    }                                                                   \
  }                                                                     \
}

DEFINE_CHACHA20_BLOCKS(chacha20Blocks16Vec4, u32x4, 4)

/* One ChaCha20 block in standard order: key, then words 12..15 as given
** (counter and nonce), into aOut[64].  A keyed pseudo-random function for
** sqlitetriggers_derived_uuid(). */
void sqlitetriggers_chacha20_block(const uint32_t key[8], const uint32_t input[4],
                   unsigned char *aOut){
  uint32_t in[16], x[16];
  int i;
  in[0] = 0x61707865; in[1] = 0x3320646e; in[2] = 0x79622d32; in[3] = 0x6b206574;
  for(i=0; i<8; i++) in[4+i] = key[i];
  for(i=0; i<4; i++) in[12+i] = input[i];
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
    uint32_t v = x[i] + in[i];
    aOut[4*i] = (unsigned char)v;
    aOut[4*i+1] = (unsigned char)(v >> 8);
    aOut[4*i+2] = (unsigned char)(v >> 16);
    aOut[4*i+3] = (unsigned char)(v >> 24);
  }
}

/* The scalar kernel: sixteen single blocks, written in the vector
** kernels' layout. */
static void chacha20Blocks16Scalar(const uint32_t key[8], unsigned char *aOut){
  uint32_t input[4] = {0, 0, 0, 0};
  unsigned char aBlock[64];
  int block, word;
  for(block=0; block<16; block++){
    input[0] = (uint32_t)block;
    sqlitetriggers_chacha20_block(key, input, aBlock);
    for(word=0; word<16; word++){
      memcpy(aOut + 256*(block/4) + 16*word + 4*(block%4), aBlock + 4*word, 4);
    }
  }
}

#ifdef HAVE_AVX2_PATH
__attribute__((target("avx2")))
DEFINE_CHACHA20_BLOCKS(chacha20Blocks16Avx2, u32x8, 8)
#endif

/* The kernels by name, as SQLITETRIGGERS_CHACHA20 names them; NULL where
** this build or CPU lacks one. */
static const struct {
  const char *zName;
  void (*xBlocks16)(const uint32_t key[8], unsigned char *aOut);
} aKernel[] = {
  { "scalar", chacha20Blocks16Scalar },
  { "vector", chacha20Blocks16Vec4 },   /* SSE2 on x86-64, NEON on arm64 */
#ifdef HAVE_AVX2_PATH
  { "avx2",   chacha20Blocks16Avx2 },
#endif
};
#define N_KERNEL (int)(sizeof(aKernel)/sizeof(aKernel[0]))

static int iKernel = 1;      /* set once, by sqlitetriggers_random_init_once() */

#ifdef HAVE_AVX2_PATH
/*
** 1 if the CPU has AVX2 and the OS saves the YMM registers.  Read with
** CPUID and XGETBV directly: __builtin_cpu_supports() needs __cpu_model
** from the compiler's runtime, which Apple's toolchain does not provide
** (universal macOS builds, Intel Macs and x86-64 simulators would not
** link; we could not link for Apple here).
*/
static int cpuHasAvx2(void){
  unsigned int eax, ebx, ecx, edx, xcr0Low, xcr0High;
  __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0), "c"(0));
  if( eax<7 ) return 0;
  __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(1), "c"(0));
  if( !(ecx & (1u<<27)) || !(ecx & (1u<<28)) ) return 0;   /* OSXSAVE, AVX */
  __asm__ volatile("xgetbv" : "=a"(xcr0Low), "=d"(xcr0High) : "c"(0));
  (void)xcr0High;
  if( (xcr0Low & 6)!=6 ) return 0;                          /* XMM and YMM state */
  __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(0));
  return (ebx & (1u<<5))!=0;                                /* AVX2 */
}
static int hasAvx2 = 0;      /* set once, by initializeOnce() */
#endif

static int kernelIsAvailable(int i){
#ifdef HAVE_AVX2_PATH
  if( aKernel[i].xBlocks16==chacha20Blocks16Avx2 ) return hasAvx2;
#endif
  return i>=0 && i<N_KERNEL;
}

/* For the tests: run kernel i (0 scalar, 1 vector, 2 avx2) and return 1,
** or return 0 when it is unavailable. */
int sqlitetriggers_chacha20_blocks16_kernel(int i, const uint32_t key[8],
                                            unsigned char *aOut){
  if( i<0 || i>=N_KERNEL || !kernelIsAvailable(i) ) return 0;
  aKernel[i].xBlocks16(key, aOut);
  return 1;
}

const char *sqlitetriggers_chacha20_kernel_name(void){
  return aKernel[iKernel].zName;
}

void sqlitetriggers_chacha20_blocks16(const uint32_t key[8], unsigned char *aOut){
  aKernel[iKernel].xBlocks16(key, aOut);
}

void sqlitetriggers_random_pool_refill(RandomPool *pPool){
  int i;
  sqlitetriggers_chacha20_blocks16(pPool->key, pPool->aBuf);
  for(i=0; i<8; i++) pPool->key[i] = sqlitetriggers_load_le32(pPool->aBuf + 4*i);
  memset(pPool->aBuf, 0, 32);
  pPool->iNext = 32;
}

static uint64_t splitMix64(uint64_t *pState){
  uint64_t z = (*pState += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void sqlitetriggers_random_pool_seed(RandomPool *pPool, sqlite3_int64 seed){
  uint64_t state = (uint64_t)seed;
  int i;
  for(i=0; i<8; i+=2){
    uint64_t v = splitMix64(&state);
    pPool->key[i] = (uint32_t)v;
    pPool->key[i+1] = (uint32_t)(v >> 32);
  }
  memset(pPool->aBuf, 0, sizeof(pPool->aBuf));
  pPool->iNext = (int)sizeof(pPool->aBuf);
  pPool->forkGeneration = 0;
}

/* Bumped in every child process; kernel-keyed pools compare it. */
_Atomic uint64_t sqlitetriggers_random_fork_generation = 1;
static pthread_once_t initOnce = PTHREAD_ONCE_INIT;

static void onForkChild(void){
  atomic_fetch_add(&sqlitetriggers_random_fork_generation, 1);
}

/* The fastest kernel, unless SQLITETRIGGERS_CHACHA20 names another that
** is available (the tests run every kernel this way). */
static void initializeOnce(void){
  const char *zForced = getenv("SQLITETRIGGERS_CHACHA20");
  int i;
  if( zForced && zForced[0]==0 ) zForced = 0;
#if !defined(SQLITE_CORE) && !defined(_WIN32)
  {
    /* Loaded as an extension: the atfork handler below must never outlive
    ** the library, which a host's dlclose() would otherwise unload. */
    Dl_info info;
    if( dladdr((void*)initializeOnce, &info) && info.dli_fname ){
      dlopen(info.dli_fname, RTLD_LAZY|RTLD_NOLOAD|RTLD_NODELETE);
    }
  }
#endif
  pthread_atfork(0, 0, onForkChild);
#ifdef HAVE_AVX2_PATH
  hasAvx2 = cpuHasAvx2();
#endif
  for(i=0; i<N_KERNEL; i++){
    if( !kernelIsAvailable(i) ) continue;
    if( zForced ? strcmp(zForced, aKernel[i].zName)==0 : i>iKernel ) iKernel = i;
  }
}

void sqlitetriggers_random_init_once(void){
  pthread_once(&initOnce, initializeOnce);
}

/* Fills aSeed with 32 bytes from the kernel's CSPRNG. */
static void readKernelEntropy(unsigned char aSeed[32]){
#if defined(__APPLE__)
  arc4random_buf(aSeed, 32);     /* never fails; in <stdlib.h> */
#else
  if( getentropy(aSeed, 32)!=0 ){
    /* Only on kernels without getrandom(2); SQLite seeds from the OS too. */
    sqlite3_randomness(32, aSeed);
  }
#endif
}

/* A pool keyed from the kernel at its first use, not now: a connection
** that never calls uuid() costs no entropy read (registration does no I/O).
** No fork generation is UINT64_MAX, so randomPoolBytes() keys it first. */
void sqlitetriggers_random_pool_key_later(RandomPool *pPool){
  memset(pPool, 0, sizeof(*pPool));
  pPool->iNext = (int)sizeof(pPool->aBuf);
  pPool->forkGeneration = UINT64_MAX;
}

void sqlitetriggers_random_pool_key_from_kernel(RandomPool *pPool){
  unsigned char aSeed[32];
  int i;
  readKernelEntropy(aSeed);
  for(i=0; i<8; i++) pPool->key[i] = sqlitetriggers_load_le32(aSeed + 4*i);
  memset(aSeed, 0, sizeof(aSeed));
  memset(pPool->aBuf, 0, sizeof(pPool->aBuf));
  pPool->iNext = (int)sizeof(pPool->aBuf);
  pPool->forkGeneration = atomic_load(&sqlitetriggers_random_fork_generation);
}
