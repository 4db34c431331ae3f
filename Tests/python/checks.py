"""The tiny harness shared by the Python comparison tests (run.py runs them)."""
import json
import os
import subprocess
import sys

EXT = os.environ.get("EXT", "build/libsqlitetriggers")
SQLITE3 = os.environ.get("SQLITE3", "sqlite3")
counts = {"passed": 0, "failed": 0}


def check(name, mismatches, total):
    """One check: it passes when there are cases and none of them differ."""
    if total > 0 and not mismatches:
        counts["passed"] += 1
        return
    counts["failed"] += 1
    print(f"FAIL {name}: {len(mismatches)} of {total} cases differ")
    for line in mismatches[:20]:
        print("  ", line)


def library_path():
    return os.path.abspath(EXT) + ".so"


# The SQLite versions Apple ships, through apsw's wheels of exactly those
# versions, which make installs into build/apple-apsw/VERSION.0 (one apsw
# per process: each runs in a child whose PYTHONPATH is that folder).
APPLE_VERSIONS = ["3.39.4", "3.43.2", "3.51.0"]


def apple_apsw_environments(name_of):
    """(version, environment) of each Apple version installed; a missing
    one fails the check name_of(version)."""
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "build", "apple-apsw")
    for version in APPLE_VERSIONS:
        target = os.path.join(root, version + ".0")
        if not os.path.isdir(target):
            check(name_of(version), [f"{target} is missing: make installs it"], 1)
            continue
        yield version, dict(os.environ, PYTHONPATH=target)


def apple_apsw_children(script, name_of, *arguments):
    """(version, name, seen) for each Apple version installed: script run
    as "script --child ARGUMENTS" in that version's own process, seen the
    JSON it printed.  A child that fails fails the check name_of(version)."""
    for version, environment in apple_apsw_environments(name_of):
        name = name_of(version)
        result = subprocess.run([sys.executable, script, "--child", *arguments],
                                capture_output=True, text=True, env=environment)
        if result.returncode != 0:
            check(name, [result.stderr.strip()[-600:]], 1)
            continue
        yield version, name, json.loads(result.stdout)
