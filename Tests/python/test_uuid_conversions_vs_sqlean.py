"""uuid_str() and uuid_blob() against sqlean's, which derive from SQLite's
ext/misc/uuid.c (neither the sqlite3 CLI nor apsw ships that file).

Fuzzed near-UUIDs (digits inserted, deleted or replaced; stray '-', '{',
'}', ' ', 'g'), blobs of 0, 15, 16 and 17 bytes, numbers and NULL go to
both; every result must be identical, NULLs included.
"""
import random

import sqlean

from checks import check, library_path


def fuzzed_inputs(rng):
    alphabet = "0123456789abcdefABCDEF" * 3 + "-{} g"
    values = []
    for _ in range(20000):
        if rng.random() < 0.5:
            text = "%032x" % rng.getrandbits(128)
        else:
            text = "%08x-%04x-%04x-%04x-%012x" % tuple(
                rng.getrandbits(bits) for bits in (32, 16, 16, 16, 48))
        chars = list(text)
        for _ in range(rng.randint(0, 3)):
            at = rng.randint(0, len(chars) - 1)
            roll = rng.random()
            if roll < 0.4:
                chars.insert(at, rng.choice(alphabet))
            elif roll < 0.7:
                del chars[at]
            else:
                chars[at] = rng.choice(alphabet)
        if rng.random() < 0.2:
            chars = ["{"] + chars + ["}"]
        values.append("".join(chars))
    values += [bytes(rng.getrandbits(8) for _ in range(n))
               for n in (0, 15, 16, 17) for _ in range(50)]
    return values + [None, 42, 4.5, ""]


def run():
    sqlean.extensions.enable_all()
    peer = sqlean.connect(":memory:")
    ours = sqlean.connect(":memory:")
    ours.enable_load_extension(True)
    ours.load_extension(library_path())
    values = fuzzed_inputs(random.Random(5))
    query = "SELECT uuid_str(?), uuid_blob(?)"
    differences, parsed = [], 0
    for value in values:
        expected = peer.execute(query, (value, value)).fetchone()
        actual = ours.execute(query, (value, value)).fetchone()
        parsed += actual[0] is not None
        if expected != actual:
            differences.append(f"{value!r}: sqlean {expected}, ours {actual}")
    check("uuid_str/uuid_blob equal sqlean's (SQLite uuid.c) on fuzzed input",
          differences, len(values))
    check("the fuzzed inputs include thousands of valid UUIDs",
          [] if parsed > 5000 else [f"only {parsed} parsed"], len(values))
