"""datetime_subsec() and unixepoch_subsec() against a newer SQLite.

SQLite 3.42 added the 'subsec' modifier; the system SQLite here is 3.40.
apsw ships a current SQLite, so each case is computed three ways:

  1. datetime_subsec(args) in the real sqlite3 3.40 CLI with `.load`;
  2. datetime(args, 'subsec') in apsw's SQLite, the reference;
  3. datetime_subsec(args) with our library loaded into apsw's SQLite.

All three must agree, and the same for unixepoch_subsec / unixepoch.
"""
import random
import subprocess

import apsw

from checks import EXT, SQLITE3, check, library_path


def literal(value):
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def cases():
    rng = random.Random(20241122)
    times = [
        "2024-02-29 23:59:59.999", "2024-02-29 23:59:59.9999", "12:34:56.7891",
        "2000-01-01", "2000-01-01 12:00", "0000-01-01 00:00:00", "1582-10-10",
        "9999-12-31 23:59:59.999", "2024-02-29T23:59:59.123Z",
        "2024-02-29 23:59:59.123+05:30", "0300-02-28", "bad", "2024-13-01",
        2460000.5, 0, 5373484.49, 1700000000.5, 1700000000, -1,
        "1700000000.123", None,
    ]
    for _ in range(400):
        times.append(rng.choice([
            rng.uniform(1721059.5, 5373484.0),            # Julian day numbers
            rng.randint(-62_000_000_000_000, 253_000_000_000_000) / 1000.0,
            "%04d-%02d-%02d %02d:%02d:%02d.%s" % (
                rng.randint(0, 9999), rng.randint(1, 12), rng.randint(1, 28),
                rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59),
                str(rng.randint(0, 999999)).zfill(6)[: rng.choice([1, 2, 3, 4, 6])]),
        ]))
    modifiers = [
        (), ("+1 day",), ("unixepoch",), ("start of month",), ("weekday 0",),
        ("+1 month",), ("-1 year", "start of year"), ("+0.0005 seconds",),
        ("+1.5 hours",), ("julianday",), ("auto",), ("subsec",), ("+12:30",),
        ("-0.9999 seconds",), ("start of day", "+86399.9999 seconds"),
    ]
    result = [(0,), (0, "+1 day")]                 # 4714 BC, printed '-4713'
    for t in times:
        for m in rng.sample(modifiers, 5):
            result.append((t,) + m)
    return result


def run():
    all_cases = cases()
    args = [", ".join(literal(a) for a in c) for c in all_cases]

    # 1. The real sqlite3 3.40 CLI.  '%!.17g' prints doubles exactly.
    script = f".load {EXT}\n" + "\n".join(
        f"SELECT quote(datetime_subsec({a})), "
        f"(SELECT iif(e IS NULL, 'NULL', printf('%!.17g', e)) "
        f"FROM (SELECT unixepoch_subsec({a}) AS e));" for a in args)
    run = subprocess.run([SQLITE3, "-batch", ":memory:"], input=script,
                         capture_output=True, text=True)
    cli = [line.split("|") for line in run.stdout.splitlines()]
    if run.stderr or len(cli) != len(all_cases):
        check("the sqlite3 CLI runs every case", [run.stderr[:500]], len(all_cases))
        return

    # 2 and 3. apsw's newer SQLite, with our library loaded into it too.
    db = apsw.Connection(":memory:")
    db.enable_load_extension(True)
    db.load_extension(library_path())
    version = db.execute("SELECT sqlite_version()").fetchone()[0]

    def as_float(text):
        return None if text == "NULL" else float(text)

    versus_cli, versus_loaded = [], []
    for c, a, (cli_text, cli_epoch) in zip(all_cases, args, cli):
        ref_text, ref_epoch, our_text, our_epoch = db.execute(
            f"SELECT quote(datetime({a}, 'subsec')), unixepoch({a}, 'subsec'),"
            f"       quote(datetime_subsec({a})), unixepoch_subsec({a})").fetchone()
        if (cli_text, as_float(cli_epoch)) != (ref_text, ref_epoch):
            versus_cli.append(f"{c}: 3.40+ours {cli_text} {cli_epoch}, "
                              f"{version} {ref_text} {ref_epoch}")
        if (our_text, our_epoch) != (ref_text, ref_epoch):
            versus_loaded.append(f"{c}: ours {our_text} {our_epoch}, "
                                 f"{version} {ref_text} {ref_epoch}")
    check(f"3.40 + datetime_subsec equals {version}'s datetime(..., 'subsec')",
          versus_cli, len(all_cases))
    check(f"loaded into {version}, datetime_subsec equals its own 'subsec'",
          versus_loaded, len(all_cases))

    non_null = sum(1 for c in cli if c[0] != "NULL")
    check("most cases are valid times, not NULL on both sides", [] if non_null > len(cli) // 2
          else [f"only {non_null} non-NULL"], len(cli))
    run_native_path()


def native_inputs(rng, count):
    """Inputs of the forms datetime_subsec() computes itself (numbers alone
    or with 'unixepoch', ISO-8601 text), at and around every boundary."""
    for _ in range(count):
        form = rng.randrange(4)
        if form == 0:
            yield (rng.choice([rng.uniform(0, 5373484.6), rng.uniform(-1, 1), 5373484.5,
                               rng.randint(0, 5373485)]),)
        elif form == 1:
            yield (rng.choice([rng.randint(-210866760000, 253402300800), rng.uniform(-2.2e11, 2.6e11),
                               rng.randint(-2**63, 2**63 - 1), -210866760000.0005, 253402300799.9995]), "unixepoch")
        else:
            fraction = "".join(rng.choice("09" if rng.random() < 0.3 else "0123456789")
                               for _ in range(rng.choice([0, 1, 2, 3, 4, 5, 9])))
            text = "%04d-%02d-%02d" % (rng.choice([0, 1, 1582, 1970, 2024, 9999, rng.randint(0, 9999)]),
                                       rng.randint(0, 13), rng.randint(0, 32))
            if form == 3:
                text += rng.choice([" ", "T"]) + "%02d:%02d" % (rng.randint(0, 25), rng.randint(0, 60))
                if rng.random() < 0.8:
                    text += ":%02d" % rng.randint(0, 60) + ("." + fraction if fraction else "")
                text += rng.choice(["", "", "Z"])
            yield (text,)


def is_calendar_date(value):
    """False for text whose day does not exist in its month."""
    if not isinstance(value, str):
        return True
    try:
        year, month, day = int(value[0:4]), int(value[5:7]), int(value[8:10])
    except ValueError:
        return True
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return not 1 <= month <= 12 or day <= days[month - 1]


def run_native_path():
    """datetime_subsec() computes the common inputs itself: on many random
    ones it must equal its exact path (the same call with a '+0 seconds'
    modifier, which goes through julianday()) and apsw's 'subsec'."""
    rng = random.Random(7)
    inputs = list(native_inputs(rng, 20000))
    db = apsw.Connection(":memory:")
    db.enable_load_extension(True)
    db.load_extension(library_path())
    version = db.execute("SELECT sqlite_version()").fetchone()[0]
    versus_exact, versus_reference, non_null = [], [], 0
    for args in inputs:
        a = ", ".join(literal(v) for v in args)
        native, exact, reference = db.execute(
            f"SELECT datetime_subsec({a}), datetime_subsec({a}, '+0 seconds'), datetime({a}, 'subsec')").fetchone()
        non_null += native is not None
        if native != exact:
            versus_exact.append(f"{args}: native {native}, exact {exact}")
        if native != reference and is_calendar_date(args[0]):
            versus_reference.append(f"{args}: native {native}, {version} {reference}")
    check(f"loaded into {version}, the native path equals the exact path on 20,000 random inputs of its forms",
          versus_exact, len(inputs))
    # The 31st of a 30-day month (February 30th, ...) is read differently by
    # SQLite versions: 3.40 rolls it into the next month, where 3.54 prints
    # it back as written. Such text takes the exact path, the host's reading
    # of julianday(), and is left out of this comparison.
    check(f"the native path equals {version}'s 'subsec' on them, real calendar dates",
          versus_reference, len(inputs))
    check("most random inputs are valid times", [] if non_null > len(inputs) // 2 else [f"only {non_null}"], 1)
