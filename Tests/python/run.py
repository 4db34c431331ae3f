"""Runs every test_*.py here; each defines run().  Prints "python: N passed, N failed"."""
import importlib
import pathlib
import sys
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import checks  # noqa: E402

for path in sorted(pathlib.Path(__file__).parent.glob("test_*.py")):
    try:
        importlib.import_module(path.stem).run()
    except Exception:
        checks.counts["failed"] += 1
        print(f"FAIL {path.name} raised:")
        traceback.print_exc(file=sys.stdout)

print(f"python: {checks.counts['passed']} passed, {checks.counts['failed']} failed")
sys.exit(1 if checks.counts["failed"] else 0)
