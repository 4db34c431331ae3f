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

Tests are compared one by one.  A test that passes (or is skipped) without
the extension and fails or errs with it is run again alone, RUNS_ALONE
times with the extension; if it fails in any of those runs, it is run
alone the same number of times without the extension, and it is counted
as ours only when it fails clearly more often with the extension than
without (judge(): a one-sided Fisher exact test, below).  Some of GRDB's
tests race and fail most runs with or without the extension
(ValueObservationTests.testCancellableInvalidation1 fails about 5 runs
of 6 alone without it on a loaded machine): one run, or runs with the
extension alone, cannot tell such a test from a failure of ours, which
fails every time with it and never without.  A test counted as ours fails
this stage unless Tests/neighbours/allowed.txt names it with the reason.
A run "with" that did not load the extension fails too (each run checks
it).  Prints each suite's counts, then "neighbours: N passed, N failed"
(N: tests compared).  Tests/neighbours/test_judging.py checks the judging
without running any suite: python3 Tests/neighbours/test_judging.py
"""
import glob
import math
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
# A test that failed with the extension in its suite's run, then was
# judged alone not to fail more often with it than without (judge_alone()).
NOT_OURS = "not ours (judged alone)"
GOOD = {"ok", "skipped", "expected failure", "passed", NOT_OURS}

# Runs of a test alone, each way.  6 and 6 is the fewest where a failure of
# ours (6 of 6 with the extension, 0 of 6 without) is told from chance at
# SIGNIFICANCE (p = 1/924), and a test that fails 4 of 6 with and never
# without still is (p = 0.03).  When the first runs leave it open (the rate
# with the extension higher, p above SIGNIFICANCE), MORE_RUNS_ALONE more
# each way, once, judged on all of them: 12 runs each tell 6 of 12 from 0
# of 12 (p = 0.007), so a race of ours that fails half the runs alone is
# still caught, while GRDB's racy tests (5 of 6 both ways) are not ours.
RUNS_ALONE = 6
MORE_RUNS_ALONE = 6
# One-sided: only "fails more often with the extension" counts against us.
# 0.05 per test: few tests reach this stage (one, in GRDB's suite, on a
# loaded machine), so the chance of blaming the extension for a race is
# about 5% for that test, and a failure of ours is caught in all but that
# many of its runs of this stage too.
SIGNIFICANCE = 0.05


def fisher_one_sided(failed_with, runs_with, failed_without, runs_without):
    """The chance, if the extension made no difference, that at least
    failed_with of the failures would fall on the runs with it: the
    one-sided Fisher exact test of the 2x2 table (runs with and without,
    failed or not), from the hypergeometric distribution."""
    failed = failed_with + failed_without
    runs = runs_with + runs_without
    total = math.comb(runs, failed)
    return sum(math.comb(runs_with, k) * math.comb(runs_without, failed - k)
               for k in range(failed_with, min(failed, runs_with) + 1)) / total


def judge(failed_with, runs_with, failed_without, runs_without):
    """'ours', 'not ours', or 'open' (the rate with the extension is
    higher, but not clearly: run more)."""
    if failed_with == 0:
        return "not ours"
    if fisher_one_sided(failed_with, runs_with, failed_without, runs_without) < SIGNIFICANCE:
        return "ours"
    if failed_with * runs_without > failed_without * runs_with:
        return "open"
    return "not ours"


def judge_alone(test, again, pattern):
    """Runs a test that failed with the extension in its suite alone, with
    and without it (again(test, loaded) gives a run's output), and returns
    (ours, the line that says why)."""
    def failures(runs, loaded):
        outcomes_seen = [outcomes(again(test, loaded), pattern).get(test, "missing") for _ in range(runs)]
        return sum(outcome not in GOOD for outcome in outcomes_seen)
    runs = RUNS_ALONE
    failed_with = failures(runs, True)
    if failed_with == 0:
        return False, f"alone: passed {runs} of {runs} runs with it"
    failed_without = failures(runs, False)
    verdict = judge(failed_with, runs, failed_without, runs)
    if verdict == "open":
        failed_with += failures(MORE_RUNS_ALONE, True)
        failed_without += failures(MORE_RUNS_ALONE, False)
        runs += MORE_RUNS_ALONE
        verdict = "ours" if judge(failed_with, runs, failed_without, runs) == "ours" else "not ours"
    p = fisher_one_sided(failed_with, runs, failed_without, runs)
    return verdict == "ours", (f"alone: failed {failed_with} of {runs} runs with it, {failed_without} of {runs} "
                               f"without (one-sided Fisher p = {p:.4f}): {verdict}")

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
import sys, unittest
import apsw.tests.__main__ as suite
unittest.main(module=suite, argv=["apsw.tests", "-v"] + sys.argv[1:], exit=False)
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
# alone, with the extension or without it (judge_alone() compares the two).

def suite_cpython(library, scratch):
    global CPYTHON
    CPYTHON = CPYTHON or find_cpython()
    print(f"cpython: {CPYTHON}")
    command = [CPYTHON, "-m", "test", "test_sqlite3", "-v"]
    without = run(command, cwd=scratch)
    proof = run([CPYTHON, "-c", CPYTHON_PROOF], env=autoload_env(library))
    with_ = run(command, env=autoload_env(library), cwd=scratch)
    def again(test, loaded):
        return run(command + ["-m", test.rsplit(".", 1)[-1]], env=autoload_env(library) if loaded else None, cwd=scratch)
    return without, with_, "NEIGHBOUR_LOADED" in proof, UNITTEST_LINE, again


def suite_apsw(library, scratch):
    without = run([VENV_PYTHON, "-c", APSW_WITHOUT], cwd=scratch)
    with_ = run([VENV_PYTHON, "-c", APSW_WITH, library], cwd=scratch)
    loaded = "NEIGHBOUR_LOADED" in with_ and "AssertionError" not in with_.split("NEIGHBOUR_LOADED")[0]
    def again(test, loaded):
        name = ".".join(test.split(".")[-2:])
        if loaded:
            return run([VENV_PYTHON, "-c", APSW_WITH, library, name], cwd=scratch)
        return run([VENV_PYTHON, "-c", APSW_WITHOUT, name], cwd=scratch)
    return without, with_, loaded, UNITTEST_LINE, again


def suite_grdb(library, scratch):
    binary = os.environ.get("GRDB_TESTS", os.path.join(ROOT, "build", "grdb", "tests"))
    if not os.path.exists(binary):
        raise SystemExit(f"grdb: {binary} is missing: make test-grdb builds it")
    without = run([binary], cwd=scratch)
    with_ = run([binary], env=autoload_env(library), cwd=scratch)
    proof = run([CPYTHON or find_cpython(), "-c", CPYTHON_PROOF], env=autoload_env(library))
    def again(test, loaded):
        # XCTest on Linux selects a test by its module too (GRDBTests.Class/test),
        # which its output leaves out: --list-tests gives the full name.
        wanted = "." + test.replace(".", "/", 1)
        names = [line.strip() for line in run([binary, "--list-tests"]).splitlines()
                 if line.strip().endswith(wanted)]
        if not names:
            return f"{test}: not in --list-tests"
        return run([binary, names[0]], env=autoload_env(library) if loaded else None, cwd=scratch)
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
                    ours, why = judge_alone(test, again, pattern)
                    print(f"{name}: {test}: {after.get(test, 'missing')} with the extension; {why}")
                    if not ours:
                        after[test] = NOT_OURS
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
