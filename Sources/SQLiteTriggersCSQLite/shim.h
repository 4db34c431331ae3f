// The system SQLite, never a vendored copy: two SQLite libraries in one
// process can corrupt databases.
#include <sqlite3.h>

// A flag that one thread sets once and any thread reads without a lock:
// Swift observers check it before every event they deliver, and Swift's own
// atomics need newer Apple platforms than the package supports.
static inline void sqlitetriggers_swift_flag_set(int *pFlag) {
  __atomic_store_n(pFlag, 1, __ATOMIC_RELEASE);
}
static inline int sqlitetriggers_swift_flag_is_set(const int *pFlag) {
  return __atomic_load_n(pFlag, __ATOMIC_ACQUIRE);
}
