#!/usr/bin/env bash
# make test-grdb: GRDB's own test suite, without and with the extension on
# every connection (Tests/neighbours/suites.py).  GRDB comes from the
# machine's copy of its repository at the version the package resolves
# (7.10.0), into build/grdb; its tests take about ten minutes to build here.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=${GRDB_VERSION:-7.10.0}
source=build/grdb/GRDB.swift
if [ ! -d "$source" ]; then
  mkdir -p build/grdb
  git -c advice.detachedHead=false clone --quiet --branch "$version" https://github.com/groue/GRDB.swift "$source"
fi
swift build --build-tests --package-path "$source" 2>&1 | tail -n 2
tests="$(swift build --show-bin-path --package-path "$source")/GRDBPackageTests.xctest"
ln -sf "$(cd "$(dirname "$tests")" && pwd)/$(basename "$tests")" build/grdb/tests
"${PYTHON:-build/venv/bin/python}" Tests/neighbours/suites.py build/libsqlitetriggers.so grdb
