"""Other projects' test suites, without and with the extension on every
connection: a good neighbour fails exactly what the suite fails without it.

    suites.py LIBRARY SUITE...      SUITE: cpython, apsw, grdb

Each suite runs twice, the same way, once as it is and once with the
extension registered on every connection its code opens:
- cpython: CPython's own test_sqlite3 (in the standard library's tests of
  a Python built from source, as pyenv's here; Debian's Python leaves them
  out), with build/autoload.so preloaded: sqlite3_auto_extension() of the
  system libsqlite3, which CPython's _sqlite3 links.
- apsw: apsw's own suite (`python -m apsw.tests`, in the wheel make
  installs into build/venv).  apsw links its own SQLite with hidden
  symbols, so the extension is loaded by apsw.connection_hooks, put back
  after every setUp (which empties the list) and loaded into the
  connections setUp opened.
- grdb: GRDB's own XCTest suite, built by `make test-grdb` into build/grdb,
  with build/autoload.so preloaded (GRDB links the system libsqlite3).

Tests are compared one by one: a test that passes (or is skipped) without
the extension and fails or errs with it is run again alone with it, up to
RETRIES times (some of GRDB's tests race, and fail most runs with or
without the extension: a failure of ours fails every time), and fails this
stage unless one of those runs passes, or Tests/neighbours/allowed.txt
names it with the reason.  A run "with" that
did not load the extension fails too (each run checks it).  Prints each
suite's counts, then "neighbours: N passed, N failed" (N: tests compared).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
def find_cpython():
    """A Python whose standard library carries test_sqlite3 (one built from
    source: pyenv's here; NEIGHBOUR_CPYTHON names another)."""
    candidates = [os.environ.get("NEIGHBOUR_CPYTHON"), shutil.which("python3")]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[1-9]*/bin/python3")))
    for candidate in filter(None, candidates):
        found = subprocess.run([candidate, "-c", "import sys, test.test_sqlite3; print(sys.executable)"],
                               capture_output=True, text=True)
        if found.returncode == 0:
            return found.stdout.strip().splitlines()[-1]
    raise SystemExit("cpython: no Python here has test.test_sqlite3 (Debian's leaves it out); "
                     "set NEIGHBOUR_CPYTHON to one built from source")


CPYTHON = None
VENV_PYTHON = os.path.join(ROOT, "build", "venv", "bin", "python")
AUTOLOAD = os.path.join(ROOT, "build", "autoload.so")

# unittest -v: "test_name (module.Class.test_name) ... ok"; XCTest:
# "Test Case 'Class.testName' passed (0.001 seconds)".
UNITTEST_LINE = re.compile(r"^(\w+) \(([\w.]+)\)")
UNITTEST_OUTCOME = re.compile(r"\.\.\. (ok|FAIL|ERROR|skipped|expected failure|unexpected success)")
XCTEST_LINE = re.compile(r"^Test Case '([\w.]+)' (passed|failed|skipped)")
GOOD = {"ok", "skipped", "expected failure", "passed"}
RETRIES = 5

APSW_WITH = r"""
import sys, unittest, apsw
import apsw.tests.__main__ as suite
library = sys.argv[1]
def load(connection):
    connection.enable_load_extension(True)
    connection.load_extension(library, "sqlite3_sqlitetriggers_init")
# Proof that the hook loads it, on a connection of its own: a query on the
# suite's connections would read their schema, which loading must not.
apsw.connection_hooks = [load]
assert apsw.Connection(":memory:").execute("SELECT uuid_version(uuid())").fetchone()[0] == 4
apsw.connection_hooks = []
original = suite.APSW.setUp
def setUp(self):
    original(self)
    apsw.connection_hooks = [load]
    for connection in apsw.connections():
        load(connection)
suite.APSW.setUp = setUp
print("NEIGHBOUR_LOADED", flush=True)
unittest.main(module=suite, argv=["apsw.tests", "-v"] + sys.argv[2:], exit=False)
"""

APSW_WITHOUT = r"""
import unittest
import apsw.tests.__main__ as suite
unittest.main(module=suite, argv=["apsw.tests", "-v"], exit=False)
"""

CPYTHON_PROOF = ("import sqlite3; c = sqlite3.connect(':memory:'); "
                 "print('NEIGHBOUR_LOADED' if c.execute('SELECT uuid_version(uuid())').fetchone()[0] == 4 else '')")


def allowed():
    names = {}
    path = os.path.join(HERE, "allowed.txt")
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, reason = line.partition(" ")
            names[name] = reason
    return names


def outcomes(text, pattern):
    """{test: outcome} from a suite's verbose output."""
    found = {}
    pending = None     # a unittest test whose outcome follows its docstring
    for line in text.splitlines():
        if pattern is XCTEST_LINE:
            match = pattern.match(line)
            if match:
                found[match.group(1)] = match.group(2)
            continue
        match = pattern.match(line)
        if match:
            pending = match.group(2)
        result = UNITTEST_OUTCOME.search(line)
        if pending and result:
            found[pending] = result.group(1)
            pending = None
    return found


def run(command, env=None, cwd=None):
    done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, **(env or {})), cwd=cwd)
    return done.stdout + done.stderr


def autoload_env(library):
    return {"SQLITETRIGGERS_AUTOLOAD": library, "LD_PRELOAD": AUTOLOAD}


# Each suite: its runs without and with the extension, whether the second
# loaded it, the pattern of its output, and how to run one test again
# with the extension (a test of timing that fails once, on a loaded
# machine, gets one more try, alone; the report says so).

def suite_cpython(library, scratch):
    global CPYTHON
    CPYTHON = CPYTHON or find_cpython()
    print(f"cpython: {CPYTHON}")
    command = [CPYTHON, "-m", "test", "test_sqlite3", "-v"]
    without = run(command, cwd=scratch)
    proof = run([CPYTHON, "-c", CPYTHON_PROOF], env=autoload_env(library))
    with_ = run(command, env=autoload_env(library), cwd=scratch)
    def again(test):
        return run(command + ["-m", test.rsplit(".", 1)[-1]], env=autoload_env(library), cwd=scratch)
    return without, with_, "NEIGHBOUR_LOADED" in proof, UNITTEST_LINE, again


def suite_apsw(library, scratch):
    without = run([VENV_PYTHON, "-c", APSW_WITHOUT], cwd=scratch)
    with_ = run([VENV_PYTHON, "-c", APSW_WITH, library], cwd=scratch)
    loaded = "NEIGHBOUR_LOADED" in with_ and "AssertionError" not in with_.split("NEIGHBOUR_LOADED")[0]
    def again(test):
        return run([VENV_PYTHON, "-c", APSW_WITH, library, ".".join(test.split(".")[-2:])], cwd=scratch)
    return without, with_, loaded, UNITTEST_LINE, again


def suite_grdb(library, scratch):
    binary = os.environ.get("GRDB_TESTS", os.path.join(ROOT, "build", "grdb", "tests"))
    if not os.path.exists(binary):
        raise SystemExit(f"grdb: {binary} is missing: make test-grdb builds it")
    without = run([binary], cwd=scratch)
    with_ = run([binary], env=autoload_env(library), cwd=scratch)
    proof = run([CPYTHON or find_cpython(), "-c", CPYTHON_PROOF], env=autoload_env(library))
    def again(test):
        # XCTest on Linux selects a test by its module too (GRDBTests.Class/test),
        # which its output leaves out: --list-tests gives the full name.
        wanted = "." + test.replace(".", "/", 1)
        names = [line.strip() for line in run([binary, "--list-tests"]).splitlines()
                 if line.strip().endswith(wanted)]
        if not names:
            return f"{test}: not in --list-tests"
        return run([binary, names[0]], env=autoload_env(library), cwd=scratch)
    return without, with_, "NEIGHBOUR_LOADED" in proof, XCTEST_LINE, again


SUITES = {"cpython": suite_cpython, "apsw": suite_apsw, "grdb": suite_grdb}


def main():
    library = os.path.abspath(sys.argv[1])
    accepted = allowed()
    total_passed = total_failed = 0
    for name in sys.argv[2:]:
        with tempfile.TemporaryDirectory() as scratch:
            without, with_, loaded, pattern, again = SUITES[name](library, scratch)
            before, after = outcomes(without, pattern), outcomes(with_, pattern)
            for test, outcome in before.items():
                if outcome in GOOD and after.get(test, "missing") not in GOOD:
                    tries = []
                    while len(tries) < RETRIES and (not tries or tries[-1] not in GOOD):
                        tries.append(outcomes(again(test), pattern).get(test, "missing"))
                    print(f"{name}: {test}: {after.get(test, 'missing')} with the extension; "
                          f"alone, again: {', '.join(tries)}")
                    if tries[-1] in GOOD:
                        after[test] = tries[-1]
        failures = []
        if not loaded:
            failures.append(f"{name}: the run with the extension did not load it")
        if len(before) < 10:
            failures.append(f"{name}: the suite ran {len(before)} tests without the extension:\n{without[-1500:]}")
        for test, outcome in sorted(before.items()):
            got = after.get(test, "missing")
            if outcome in GOOD and got not in GOOD and f"{name}:{test}" not in accepted:
                failures.append(f"{name}: {test}: {outcome} without the extension, {got} with it")
        newly_failing = [line for line in failures if line.startswith(f"{name}: ") and " with it" in line]
        print(f"{name}: {len(before)} tests; failing without the extension: "
              f"{sum(o not in GOOD for o in before.values())}; with it: {sum(o not in GOOD for o in after.values())}; "
              f"only with it: {len(newly_failing)}")
        for line in failures[:40]:
            print("FAIL", line)
        total_failed += len(failures)
        total_passed += max(len(before) - len(newly_failing), 0)
    print(f"neighbours: {total_passed} passed, {total_failed} failed")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
