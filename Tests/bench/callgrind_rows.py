"""make bench: instructions per row, counted by callgrind inside one function.

Shared by the *_instructions.py scripts: a program is run
twice under callgrind, with 6,000 and 2,000 rows (or the two counts given),
counting only inside the function `toggle` names; the difference over the
rows between is the cost of a row, with what is counted once (preparing,
opening) cancelled out.
"""
import os
import shutil
import subprocess
import sys

# Swift seeds its hashing per process, which moves a Swift program's counts
# by a few percent from run to run; fixed, two runs count the same.
ENVIRONMENT = dict(os.environ, SWIFT_DETERMINISTIC_HASHING="1")


def refusal(argv, argument_count, doc, what):
    """The exit status when the script cannot run (its usage, or no
    valgrind, which is said and is no failure), or None when it can."""
    if len(argv) != argument_count + 1:
        print(doc, file=sys.stderr)
        return 2
    if not shutil.which("valgrind"):
        print(f"valgrind is not installed: no {what} instruction counts", file=sys.stderr)
        return 0
    return None


def stripped_copy(binary, directory):
    """A copy of the Swift binary in directory, without its debug
    information, which valgrind cannot read."""
    copy = os.path.join(directory, "sqlitetriggers-bench-stripped")
    shutil.copyfile(binary, copy)
    os.chmod(copy, 0o755)
    subprocess.run(["strip", "--strip-debug", copy], check=True)
    return copy


def count(command, toggle):
    run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          f"--toggle-collect={toggle}"] + command, capture_output=True, text=True,
                         env=ENVIRONMENT)
    # The last count is the program's: a child it forks (to set up) ends first.
    counts = [int(line.split()[-1]) for line in run.stderr.splitlines() if "Collected" in line]
    if run.returncode == 0 and counts and counts[-1] > 0:
        return counts[-1]
    raise RuntimeError(f"callgrind counted nothing in {toggle}: {run.stderr[-800:]}")


def per_row(command, toggle, rows=(6_000, 2_000)):
    """command: the program and its arguments, less the row count, which comes last."""
    more, fewer = rows
    return (count(command + [str(more)], toggle) - count(command + [str(fewer)], toggle)) / (more - fewer)


def print_row(what, ours, ours_value, peer, peer_value, target=""):
    """One ROW line for report.py, in instructions."""
    peer_text = "" if peer_value is None else peer_value
    print(f"ROW\t{what}\t{ours}\t{ours_value}\t{peer}\t{peer_text}\tinstructions\t{target}", flush=True)
