"""Every SQL, Python and C example of README.md and of the DocC articles
(Sources/*/Documentation.docc), executed, so it cannot rot.

SQL blocks run through the real sqlite3 CLI with the library, one
statement at a time; where a statement has a trailing `-- comment` and
prints something, the comment is what it must print. Generated values
(UUIDs, current times) are matched by shape, everything else exactly.
Blocks that show a schema before and after (containing "-- becomes") are
not runnable. Python blocks are executed and their `# output` comment
compared the same way.
"""
import contextlib
import glob
import io
import os
import re
import subprocess
import tempfile

from checks import EXT, SQLITE3, check

README = "README.md"


def documentation():
    """The README, then every DocC article, in a stable order."""
    articles = sorted(glob.glob("Sources/*/Documentation.docc/*.md"))
    return [README] + articles


UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
DATETIME = r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}"


def blocks(language):
    text = "\n".join(open(path, encoding="utf-8").read() for path in documentation())
    return re.findall(r"```" + language + r"\n(.*?)```", text, re.S)


def pattern(expected):
    """The comment as a regex: UUIDs and datetimes stand for any such value."""
    expected = expected.strip()
    if len(expected) >= 2 and expected[0] == expected[-1] == "'":
        expected = expected[1:-1]
    parts = re.split(f"({UUID}|{DATETIME})", expected)
    regex = ""
    for part in parts:
        if re.fullmatch(UUID, part):
            regex += UUID
        elif re.fullmatch(DATETIME, part):
            regex += DATETIME
        else:
            regex += re.escape(part)
    return regex


def statements(block):
    """(statement, expected comment or None) pairs, SQL lines joined."""
    result, current, just_read_output = [], "", False
    for line in block.splitlines():
        code, _, comment = line.partition("--") if not line.lstrip().startswith("--") else ("", "", "")
        # A comment line right after a statement that has none shows what
        # it prints (later comment lines are prose).
        if line.lstrip().startswith("--") and not current and result and result[-1][1] is None \
                and not result[-1][0].startswith(".") and not just_read_output:
            result[-1] = (result[-1][0], line.lstrip()[2:].strip())
            just_read_output = True
            continue
        just_read_output = line.lstrip().startswith("--") and just_read_output
        if line.startswith("."):
            result.append((line, None))
            continue
        current += code + "\n"
        if code.rstrip().endswith(";"):
            result.append((current.strip(), comment.strip() or None))
            current = ""
    return result


def run_sql_block(shell, block, mismatches, change=None):
    """Runs a README SQL block in shell, one statement at a time, adding a
    mismatch per comment its output differs from (change maps an expected
    comment to another); returns how many comments it compared."""
    total = 0
    pairs = statements(block)
    # Every block gets the library, whether or not it shows the .load.
    pairs = [(s, e) for s, e in pairs if not s.startswith(".load")]
    script = f".load {EXT}\n" + "\n".join(s + "\n.print @@END@@" for s, _ in pairs)
    run = subprocess.run([shell, "-batch", ":memory:"], input=script, capture_output=True, text=True)
    outputs = run.stdout.split("@@END@@\n")
    if run.stderr:
        mismatches.append(f"errors running a README block: {run.stderr.strip()}")
    for (statement, expected), output in zip(pairs, outputs):
        output = output.strip()
        if expected is None or not output or expected.startswith("..."):
            continue
        expected = (change or {}).get(expected, expected)
        total += 1
        if not re.fullmatch(pattern(expected), output):
            mismatches.append(f"{statement!r}: README says {expected!r}, {shell} printed {output!r}")
    return total


# Debian 14's sqlite3 shell, which embeds SQLite and hides its preupdate
# hook (Tests/versions/fetch.sh unpacks it).
FORKY_SHELL = "build/sqlite-versions/3.53.4/sqlite3"


def run():
    sql_blocks = [b for b in blocks("sql") if "-- becomes" not in b]
    mismatches, total = [], 0
    for block in sql_blocks:
        total += run_sql_block(SQLITE3, block, mismatches)
    check("every README SQL example prints what its comment says", mismatches, total)

    # The shell quick start, in a shell that hides the hook, with the one
    # change the README states: the feed's install prints net.
    quick_start = next(b for b in sql_blocks if "sqlitetriggers_change_feed('reminders')" in b)
    mismatches = []
    if not os.path.exists(FORKY_SHELL):
        mismatches.append(f"{FORKY_SHELL} is missing: Tests/versions/fetch.sh unpacks it")
        total = 1
    else:
        total = run_sql_block(FORKY_SHELL, quick_start, mismatches, change={"rows": "net"})
    check("the shell quick start works in Debian 14's shell (no preupdate hook), its feed in mode net",
          mismatches, total)

    python_mismatches, python_total = [], 0
    for block in blocks("python"):
        python_total += 1
        expected = [line[2:] for line in block.splitlines() if line.startswith("# ")]
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(block.replace('"build/libsqlitetriggers.so"', repr(EXT + ".so")), {})
        except Exception as error:
            python_mismatches.append(f"the README Python example raised {error!r}")
            continue
        printed = out.getvalue().strip().splitlines()
        if len(printed) != len(expected) or not all(
                re.fullmatch(pattern(e), p) for e, p in zip(expected, printed)):
            python_mismatches.append(f"README says {expected}, it printed {printed}")
    check("the README Python example runs through apsw and prints what it says",
          python_mismatches, python_total)
    run_c_examples()


C_HOST = """#include "sqlitetriggers.h"
#include <stdio.h>
{functions}
int main(void){{
  sqlite3 *db;
  sqlite3_open(":memory:", &db);
  {statements}
  /* One more completion, which every observer registered by now hears. */
  sqlite3_exec(db, "UPDATE reminders SET isCompleted = 0; UPDATE reminders SET isCompleted = 1", 0, 0, 0);
  sqlitetriggers_deliver(db);
  return sqlite3_close(db);
}}
"""

C_SETUP = """
  sqlite3_exec(db, "CREATE TABLE reminders(id INTEGER PRIMARY KEY, title TEXT, isCompleted INTEGER DEFAULT 0);"
    "INSERT INTO reminders(title) VALUES ('Buy milk');"
    "CREATE TEMP TRIGGER done AFTER UPDATE OF isCompleted ON reminders WHEN new.isCompleted"
    " BEGIN SELECT swift_callback('reminderCompleted', new.id, new.title); END;", 0, 0, 0);
"""

C_EXPECTED = """#1 reminderCompleted Buy milk
#2 reminderCompleted Buy milk
#2 Buy milk (one of 1)
"""


def run_c_examples():
    """The C blocks, in README order, as one program: their functions at
    file scope, their statements in main(), on a table with the trigger
    they imply (set up right after registration)."""
    functions, statements = [], []
    for block in blocks("c"):
        in_function = False
        for line in block.splitlines():
            in_function = in_function or line.startswith("static ")
            (functions if in_function else statements).append(line)
            in_function = in_function and line != "}"
    body = "\n  ".join(statements).replace("sqlitetriggers_register(db);", "sqlitetriggers_register(db);" + C_SETUP, 1)
    source = C_HOST.format(functions="\n".join(functions), statements=body)
    mismatches = []
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "readme.c")
        open(path, "w").write(source)
        sources = [os.path.join("ext", name) for name in os.listdir("ext") if name.endswith(".c")]
        build = subprocess.run(["cc", "-Wall", "-Werror", "-DSQLITE_CORE", "-Iext/include", "-o", path + ".out", path]
                               + sources + ["-lsqlite3", "-lpthread"], capture_output=True, text=True)
        if build.returncode != 0:
            mismatches.append(f"the README C examples do not compile: {build.stderr[:800]}")
        else:
            run = subprocess.run([path + ".out"], capture_output=True, text=True)
            if run.stdout != C_EXPECTED or run.returncode != 0:
                mismatches.append(f"the README C examples printed {run.stdout!r}, exit {run.returncode}")
    check("the README C examples compile, run and deliver after commit, event by event and in batches",
          mismatches, len(blocks("c")))
