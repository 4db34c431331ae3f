/* The shared helpers of the C tests; harness.c has main(). */
#ifndef HARNESS_H
#define HARNESS_H
#include "sqlitetriggers.h"

void expect(int condition, const char *zWhat);
sqlite3 *openRegistered(const char *zVfs);
void queryText(sqlite3 *db, const char *zSql, char *zOut);   /* zOut[128] */
int exec(sqlite3 *db, const char *zSql);   /* sqlite3_exec, no callback */

void runExtensionTests(void);
void runCallbackTests(void);
void runCaptureTests(void);
void runWakeupTests(void);
#endif
