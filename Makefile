# SQLiteTriggers: see README.md.  `make help` lists the targets.

CC      ?= cc
UNAME_S ?= $(shell uname -s)
BUILD   := build
EXT_SRC := $(wildcard ext/*.c)
EXT_HDR := $(wildcard ext/*.h ext/include/*.h)
WARN    := -Wall -Wextra -Werror
# The library registers a pthread_atfork() handler, which must never
# outlive an unloaded library (sqlite3_close() dlclose()s extensions):
# random.c pins the loaded library with RTLD_NODELETE, and on Linux the
# linker's -z nodelete says so too.  Apple's linker has no -z option, so a
# macOS build relies on the pin alone (we could not build for macOS here).
#
# macOS: Apple's SQLite cannot load extensions (its sqlite3ext.h defines
# SQLITE_OMIT_LOAD_EXTENSION), so the loadable library is built against
# another SQLite's headers, Homebrew's by default or SQLITE_PREFIX=DIR, and
# is loaded by that SQLite's sqlite3 ($(SQLITE_PREFIX)/bin/sqlite3).  It is
# also written as .dylib, the suffix SQLite's .load adds there.
ifeq ($(UNAME_S),Darwin)
SQLITE_PREFIX ?= $(shell brew --prefix sqlite 2>/dev/null)
SO_FLAGS := -dynamiclib -fPIC -fvisibility=hidden -I$(SQLITE_PREFIX)/include
SQLITE3 ?= $(SQLITE_PREFIX)/bin/sqlite3
define CHECK_LOADABLE_SQLITE
@test -n "$(SQLITE_PREFIX)" && test -e "$(SQLITE_PREFIX)/include/sqlite3ext.h" || { \
  echo "make: Apple's SQLite cannot load extensions; build against one that can:" >&2; \
  echo "  brew install sqlite && make    (or make SQLITE_PREFIX=DIR, DIR/include/sqlite3ext.h)" >&2; \
  echo "  then .load it from \$$(brew --prefix sqlite)/bin/sqlite3, not /usr/bin/sqlite3" >&2; exit 1; }
endef
else
SO_FLAGS := -shared -fPIC -fvisibility=hidden -Wl,-z,nodelete
endif
SQLITE3 ?= sqlite3
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
             -fno-omit-frame-pointer -g -O1
VENV    := $(BUILD)/venv
PYTHON  := $(VENV)/bin/python

.PHONY: all test test-apple test-grdb test-stages test-arm64 test-32bit sanitize bench demo fuzz install uninstall clean help

PREFIX  ?= /usr/local
LIBDIR  := $(PREFIX)/lib
INCDIR  := $(PREFIX)/include
PCDIR   := $(LIBDIR)/pkgconfig
VERSION := 0.1.0

all: $(BUILD)/libsqlitetriggers.so

help:
	@echo "make            build $(BUILD)/libsqlitetriggers.so (.load $(BUILD)/libsqlitetriggers)"
	@echo "make test       shell tests through the sqlite3 CLI, C tests, fault injection, then swift test"
	@echo "make sanitize   shell and C tests against an ASan+UBSan build, the CLI under LSan (make test runs it)"
	@echo "make test-arm64 the C tests cross-compiled for arm64, under qemu (make test runs it)"
	@echo "make test-32bit the C tests built for 32-bit x86 (make test runs it)"
	@echo "make test-apple APPLE_SDKS=DIR  ext/ compiled and linked for iOS and macOS (make test runs it when APPLE_SDKS is set)"
	@echo "make test-grdb  GRDB's own suite without and with the extension on every connection (about 10 minutes)"
	@echo "make bench      benchmark table against peers (needs PyPI for sqlean.py)"
	@echo "make demo       the main job: the Reminders demo in Swift, then in the sqlite3 shell"
	@echo "make fuzz       every libFuzzer harness for FUZZ_SECONDS each (default 600)"
	@echo "make install    install the library, header and pkg-config file under PREFIX"
	@echo "make uninstall  remove what make install put under PREFIX"

# assert()s on the event queue and savepoint marks are compiled in the
# sanitizer and test builds, and out of the library users load.
$(BUILD)/libsqlitetriggers.so: $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	$(CHECK_LOADABLE_SQLITE)
	$(CC) -O2 -DNDEBUG $(WARN) $(SO_FLAGS) -o $@ $(EXT_SRC) -lpthread -ldl
ifeq ($(UNAME_S),Darwin)
	ln -sf libsqlitetriggers.so $(BUILD)/libsqlitetriggers.dylib
endif

$(BUILD)/sanitize/libsqlitetriggers.so: $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) $(WARN) $(SO_FLAGS) -o $@ $(EXT_SRC) -lpthread -ldl

# The C tests link the sources as an application does: -DSQLITE_CORE
# against the system libsqlite3.
C_TEST_SRC := $(wildcard Tests/c/*.c)
C_TEST_FLAGS := -DSQLITE_CORE -Iext/include $(WARN) -Wno-unused-result

$(BUILD)/test_c: $(C_TEST_SRC) $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	$(CC) -O2 $(C_TEST_FLAGS) -o $@ $(C_TEST_SRC) $(EXT_SRC) -lsqlite3 -lpthread -ldl

$(BUILD)/sanitize/test_c: $(C_TEST_SRC) $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) $(C_TEST_FLAGS) -o $@ $(C_TEST_SRC) $(EXT_SRC) -lsqlite3 -lpthread -ldl

# arm64: the C tests cross-compiled and run under qemu-user (Debian:
# gcc-aarch64-linux-gnu, qemu-user, libsqlite3-dev:arm64; make test installs
# them).
ARM64_CC  ?= aarch64-linux-gnu-gcc
ARM64_LIB ?= /usr/lib/aarch64-linux-gnu
ARM64_BUILT := $(BUILD)/arm64/test_c $(BUILD)/arm64/seeded_stream $(BUILD)/seeded_stream

$(BUILD)/arm64/test_c: $(C_TEST_SRC) $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	@mkdir -p $(@D)
	$(ARM64_CC) -O2 $(C_TEST_FLAGS) -o $@ $(C_TEST_SRC) $(EXT_SRC) \
	  -L$(ARM64_LIB) -lsqlite3 -lpthread -ldl

$(BUILD)/arm64/seeded_stream: Tests/c/arm64/seeded_stream.c $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	@mkdir -p $(@D)
	$(ARM64_CC) -O2 $(C_TEST_FLAGS) -o $@ $< $(EXT_SRC) -L$(ARM64_LIB) -lsqlite3 -lpthread -ldl

$(BUILD)/seeded_stream: Tests/c/arm64/seeded_stream.c $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	$(CC) -O2 $(C_TEST_FLAGS) -o $@ $< $(EXT_SRC) -lsqlite3 -lpthread -ldl

test-arm64: $(ARM64_BUILT)
	@bash Tests/c/arm64/run.sh

# 32-bit x86: size_t is 32 bits there, as on watchOS's arm64_32. The C
# tests with gcc -m32 (Debian: gcc-12-multilib) against Debian's i386
# libsqlite3, unpacked into build/i386 by Tests/c/i386/fetch-sqlite.sh.
I386_LIB := $(BUILD)/i386/usr/lib/i386-linux-gnu

$(BUILD)/i386/test_c: $(C_TEST_SRC) $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	@mkdir -p $(@D)
	$(CC) -m32 -O2 $(C_TEST_FLAGS) -isystem $(BUILD)/i386/usr/include/i386-linux-gnu \
	  -o $@ $(C_TEST_SRC) $(EXT_SRC) -L$(I386_LIB) -lsqlite3 -lpthread -ldl

test-32bit: $(BUILD)/i386/test_c
	@LD_LIBRARY_PATH=$(I386_LIB) $(BUILD)/i386/test_c

# libFuzzer harnesses (Tests/fuzz/): make test runs each for 60 seconds,
# make fuzz for FUZZ_SECONDS each.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_HARNESSES := $(patsubst Tests/fuzz/%.c,$(BUILD)/%,$(wildcard Tests/fuzz/fuzz_*.c))

$(BUILD)/fuzz_%: Tests/fuzz/fuzz_%.c $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -fuse-ld=lld -DSQLITE_CORE -Iext/include -o $@ $< $(EXT_SRC) -lsqlite3 -lpthread -ldl

fuzz: $(FUZZ_HARNESSES)
	bash Tests/fuzz/run.sh $(FUZZ_SECONDS)

# Fault injection: its own program, since the counting allocator must be
# configured before SQLite initializes; always with the sanitizers.
$(BUILD)/test_oom: Tests/c/oom/test_oom.c $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	$(CC) $(SAN_FLAGS) $(C_TEST_FLAGS) -o $@ Tests/c/oom/test_oom.c $(EXT_SRC) \
	  -lsqlite3 -lpthread -ldl

$(BUILD):
	@mkdir -p $@

# Peers and a newer SQLite for comparisons, in a venv of our own; and
# apsw with each SQLite version Apple ships, one folder each (one apsw per
# process; Tests/python/test_apple_sqlite_versions.py).
APPLE_APSW := 3.39.4.0 3.43.2.0 3.51.0.0
$(VENV)/.ready: | $(BUILD)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check \
	  'apsw==3.54.1.0' 'sqlean.py==3.50.4.5' 'sqlcipher3-binary==0.6.0'
	for version in $(APPLE_APSW); do \
	  $(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps \
	    --target $(BUILD)/apple-apsw/$$version "apsw==$$version" || exit 1; \
	done
	touch $@

$(BUILD)/bench_callback: Tests/bench/callback.c $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	$(CC) -O2 -DNDEBUG -DSQLITE_CORE -Iext/include $(WARN) -o $@ Tests/bench/callback.c \
	  $(EXT_SRC) -lsqlite3 -lpthread -ldl

# Stamping the durable log's transactions, counted by callgrind
# (Tests/bench/stamp_instructions.py).
$(BUILD)/bench_stamp: Tests/bench/stamp.c $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	$(CC) -O2 -DNDEBUG -DSQLITE_CORE -Iext/include $(WARN) -o $@ Tests/bench/stamp.c \
	  $(EXT_SRC) -lsqlite3 -lpthread -ldl

bench: $(BUILD)/libsqlitetriggers.so $(BUILD)/bench_callback $(BUILD)/bench_stamp $(VENV)/.ready
	@swift build -c release --product sqlitetriggers-bench 2>&1 | tail -n 1
	@{ $(PYTHON) Tests/bench/functions.py $(BUILD)/libsqlitetriggers.so; \
	   $(BUILD)/bench_callback; \
	   $(PYTHON) Tests/bench/callback_instructions.py $(BUILD)/bench_callback; \
	   BENCH_PYTHON=$(PYTHON) BENCH_EXTENSION=$(BUILD)/libsqlitetriggers .build/release/sqlitetriggers-bench; \
	   $(PYTHON) Tests/bench/feed_instructions.py .build/release/sqlitetriggers-bench $(BUILD); \
	   $(PYTHON) Tests/bench/observer_instructions.py .build/release/sqlitetriggers-bench $(BUILD); \
	   $(PYTHON) Tests/bench/migration_instructions.py .build/release/sqlitetriggers-bench $(BUILD); \
	   $(PYTHON) Tests/bench/stamp_instructions.py $(BUILD)/bench_stamp; \
	   $(PYTHON) Tests/bench/apple_versions_instructions.py $(BUILD)/bench_stamp $(BUILD)/apple-apsw; \
	   $(PYTHON) Tests/bench/server_instructions.py .build/release/sqlitetriggers-bench $(BUILD); \
	   bash Tests/sync/run.sh --bench 10000; \
	 } | $(PYTHON) Tests/bench/report.py --markdown $(BUILD)/bench.md
	@echo; echo "(also written to $(BUILD)/bench.md)"

# The main job: the Swift demo on a real file, then the same file in the
# sqlite3 shell.  The demo exits non-zero if any step misbehaves; .bail
# makes the shell part fail on any error too.
DEMO_DB := $(BUILD)/demo/reminders.sqlite
define DEMO_SQL
.bail on
.print
.print ▸ The same database in the sqlite3 shell, after .load $(BUILD)/libsqlitetriggers
.load $(BUILD)/libsqlitetriggers
.mode box
SELECT title, position, uuid_version(id) AS "uuid_version(id)" FROM remindersLists;
INSERT INTO reminders(remindersListID, title) SELECT id, 'Water the plants' FROM remindersLists;
SELECT title, id, uuid_version(id) AS "uuid_version(id)", uuidv7_datetime(id) AS "created (from the key)" FROM reminders;
.print  This connection gets its own TEMP trigger; the log shows what an after-commit observer receives.
CREATE TEMP TRIGGER reminderCompleted AFTER UPDATE OF status ON reminders
  WHEN new.status = 1 AND old.status <> 1
  BEGIN SELECT swift_callback('reminderCompleted', new.id, new.title); END;
BEGIN;
UPDATE reminders SET status = 1;
SELECT name, args FROM swift_callback_pending;
ROLLBACK;
SELECT count(*) AS "logged after ROLLBACK" FROM swift_callback_log;
UPDATE reminders SET status = 1;
SELECT seq, name, args FROM swift_callback_log;
.print  The durable log: its consumers, where they are, and what waits for them.
SELECT name, position FROM sqlitetriggers_log_consumers;
INSERT INTO reminders(remindersListID, title) SELECT id, 'Water the plants again' FROM remindersLists LIMIT 1;
SELECT id, tableName, kind, rowKey, tx FROM sqlitetriggers_changes;
endef
export DEMO_SQL

demo: $(BUILD)/libsqlitetriggers.so
	@swift build --product reminders-demo 2>&1 | tail -n 1
	@.build/debug/reminders-demo $(DEMO_DB)
	@echo "$$DEMO_SQL" | $(SQLITE3) -batch $(DEMO_DB)

# make test first installs the Debian packages it needs (as root), or stops
# naming the command to run: Tests/prerequisites.sh.
test:
	@bash Tests/prerequisites.sh
	@$(MAKE) --no-print-directory test-stages

# Apple platforms, checked from Linux: ext/ compiled for iOS and macOS against
# each SDK in APPLE_SDKS (a folder of iPhoneOS*.sdk, MacOSX*.sdk), and an app
# linked against their .tbd stubs (Tests/apple/check.sh).  make test runs it
# when APPLE_SDKS is set.
test-apple:
	@bash Tests/apple/check.sh "$(APPLE_SDKS)"

# Other projects' suites with the extension on every connection: a shim
# that registers it with sqlite3_auto_extension() when preloaded
# (Tests/neighbours/).  make test runs CPython's and apsw's; GRDB's, whose
# build takes about ten minutes, runs by itself.
$(BUILD)/autoload.so: Tests/neighbours/autoload.c | $(BUILD)
	$(CC) -O2 $(WARN) -shared -fPIC -o $@ $< -lsqlite3 -ldl

test-grdb: $(BUILD)/libsqlitetriggers.so $(BUILD)/autoload.so $(VENV)/.ready
	@PYTHON=$(PYTHON) bash Tests/neighbours/grdb.sh

test-stages: $(BUILD)/libsqlitetriggers.so $(BUILD)/test_c $(BUILD)/test_oom $(FUZZ_HARNESSES) $(VENV)/.ready \
      $(BUILD)/sanitize/libsqlitetriggers.so $(BUILD)/sanitize/test_c $(BUILD)/autoload.so
	@PYTHON=$(PYTHON) ASAN_RUNTIME=$(ASAN_RUNTIME) APPLE_SDKS=$(APPLE_SDKS) bash Tests/run_all.sh

# The sqlite3 CLI is not instrumented, so the ASan runtime is preloaded for
# the instrumented library it loads.
ASAN_RUNTIME = $(shell $(CC) -print-file-name=libasan.so)
sanitize: $(BUILD)/sanitize/libsqlitetriggers.so $(BUILD)/sanitize/test_c
	@ASAN_RUNTIME=$(ASAN_RUNTIME) bash Tests/sanitize.sh

# C hosts link the -DSQLITE_CORE build, which calls the host's libsqlite3
# directly (the .so calls SQLite through the table that .load hands it):
#   cc app.c $$(pkg-config --cflags --libs sqlitetriggers)
# then sqlitetriggers_register(db) on each connection.
$(BUILD)/core/%.o: ext/%.c $(EXT_HDR)
	@mkdir -p $(@D)
	$(CC) -O2 -fPIC -DSQLITE_CORE $(WARN) -c -o $@ $<

$(BUILD)/libsqlitetriggers_core.a: $(patsubst ext/%.c,$(BUILD)/core/%.o,$(EXT_SRC))
	$(AR) rcs $@ $^

# The pkg-config file names PREFIX, so it is written anew by each install.
install: $(BUILD)/libsqlitetriggers.so $(BUILD)/libsqlitetriggers_core.a
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(PCDIR)
	install -m 755 $(BUILD)/libsqlitetriggers.so $(DESTDIR)$(LIBDIR)/libsqlitetriggers.so
	install -m 644 $(BUILD)/libsqlitetriggers_core.a $(DESTDIR)$(LIBDIR)/libsqlitetriggers_core.a
	install -m 644 ext/include/sqlitetriggers.h $(DESTDIR)$(INCDIR)/sqlitetriggers.h
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	  'Name: sqlitetriggers' \
	  'Description: SQLite functions for trigger-driven apps: UUIDs, millisecond time, swift_callback' \
	  'Version: $(VERSION)' 'Requires: sqlite3' \
	  'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -lsqlitetriggers_core -lpthread' \
	  > $(DESTDIR)$(PCDIR)/sqlitetriggers.pc

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libsqlitetriggers.so $(DESTDIR)$(LIBDIR)/libsqlitetriggers_core.a \
	  $(DESTDIR)$(INCDIR)/sqlitetriggers.h \
	  $(DESTDIR)$(PCDIR)/sqlitetriggers.pc

clean:
	rm -rf $(BUILD) .build
