# SQLiteTriggers: see README.md.  `make help` lists the targets.

CC      ?= cc
SQLITE3 ?= sqlite3
BUILD   := build
EXT_SRC := $(wildcard ext/*.c)
EXT_HDR := $(wildcard ext/*.h ext/include/*.h)
WARN    := -Wall -Wextra -Werror
# -z nodelete: the library registers a pthread_atfork() handler, which must
# never outlive an unloaded library (sqlite3_close() dlclose()s extensions).
SO_FLAGS := -shared -fPIC -fvisibility=hidden -Wl,-z,nodelete
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
             -fno-omit-frame-pointer -g -O1
VENV    := $(BUILD)/venv
PYTHON  := $(VENV)/bin/python

.PHONY: all test test-shell test-c test-swift sanitize bench demo clean help

all: $(BUILD)/libsqlitetriggers.so

help:
	@echo "make            build $(BUILD)/libsqlitetriggers.so (.load $(BUILD)/libsqlitetriggers)"
	@echo "make test       shell tests through the sqlite3 CLI, C tests, then swift test"
	@echo "make sanitize   shell and C tests against an ASan+UBSan build"
	@echo "make bench      benchmark table against peers (needs PyPI for sqlean.py)"
	@echo "make demo       the functions at work in the sqlite3 shell"

$(BUILD)/libsqlitetriggers.so: $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	$(CC) -O2 $(WARN) $(SO_FLAGS) -o $@ $(EXT_SRC) -lpthread

$(BUILD)/sanitize/libsqlitetriggers.so: $(EXT_SRC) $(EXT_HDR) | $(BUILD)
	@mkdir -p $(@D)
	$(CC) $(SAN_FLAGS) $(WARN) $(SO_FLAGS) -o $@ $(EXT_SRC) -lpthread

$(BUILD):
	@mkdir -p $@

clean:
	rm -rf $(BUILD) .build
