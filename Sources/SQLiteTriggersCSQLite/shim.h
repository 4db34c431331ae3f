// The system SQLite, never a vendored copy: two SQLite libraries in one
// process can corrupt databases.
#include <sqlite3.h>
