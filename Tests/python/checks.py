"""The tiny harness shared by the Python comparison tests (run.py runs them)."""
import os

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
