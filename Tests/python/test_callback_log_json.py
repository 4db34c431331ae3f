"""swift_callback_log.args is valid JSON for every argument, in the real
sqlite3 CLI: random bytes as text (invalid UTF-8, overlong forms,
surrogates, NUL and control characters), every kind of double (-0.0, the
largest, the smallest subnormal, infinities) and integers at the limits.

Valid UTF-8 text must read back as the same string, and numbers as the same
value; a byte outside well-formed UTF-8 reads back as U+FFFD.
"""
import json
import math
import random
import struct
import subprocess

from checks import EXT, SQLITE3, check


def random_text_bytes(rng):
    roll = rng.random()
    if roll < 0.3:
        return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 12)))
    if roll < 0.6:
        return "".join(chr(rng.choice([rng.randint(1, 0x7f), rng.randint(0x80, 0xd7ff),
                                       rng.randint(0xe000, 0x10ffff)]))
                       for _ in range(rng.randint(0, 8))).encode()
    # Near-valid sequences: truncated, overlong, surrogate, past U+10FFFF.
    return rng.choice([b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
                       b"\xe2\x82", b"a\x00b", b"\x7f\x1f\"\\", "é".encode()[:1]])


def expected_text(raw):
    return raw.decode("utf-8", errors="replace")


def random_double(rng):
    return rng.choice([0.0, -0.0, 1.7976931348623157e308, -1.7976931348623157e308,
                       5e-324, -5e-324, math.inf, -math.inf, 0.1, 1 / 3,
                       struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]])


def run():
    rng = random.Random(20261122)
    texts = [random_text_bytes(rng) for _ in range(2000)]
    doubles = [random_double(rng) for _ in range(500)]
    doubles = [d for d in doubles if not math.isnan(d)]  # SQLite stores NaN as NULL
    integers = [-(2**63), 2**63 - 1, 0, -1] + [rng.randint(-(2**63), 2**63 - 1) for _ in range(100)]

    def real_literal(d):
        if math.isinf(d):
            return "9e999" if d > 0 else "-9e999"
        return repr(d)

    script = [f".load {EXT}", f"SELECT swift_callback_log_capacity({len(texts) + len(doubles) + 10});"]
    script += [f"SELECT swift_callback('t', CAST(x'{t.hex()}' AS TEXT));" for t in texts]
    script += [f"SELECT swift_callback('d', {real_literal(d)});" for d in doubles]
    script += ["SELECT swift_callback('i', %s);" % ", ".join(str(i) for i in integers[:100])]
    script += ["SELECT swift_callback('n', NULL, x'00ff', 0.0 / 0.0);",
               ".mode list", "SELECT name, args FROM swift_callback_log ORDER BY seq;"]
    out = subprocess.run([SQLITE3, "-batch", ":memory:"], input="\n".join(script).encode(),
                         capture_output=True, check=False)
    try:
        lines = out.stdout.decode("utf-8").splitlines()
    except UnicodeDecodeError as error:
        check("the log's args are UTF-8", [str(error)], 1)
        return
    rows = [line.split("|", 1) for line in lines if "|" in line]
    invalid, text_mismatch, double_mismatch, other = [], [], [], []
    parsed = []
    for name, args in rows:
        try:
            parsed.append((name, json.loads(args)))
        except ValueError as error:
            invalid.append(f"{args!r}: {error}")
    check("every args value is valid JSON", invalid, len(rows))
    by_name = {}
    for name, values in parsed:
        by_name.setdefault(name, []).append(values)
    for raw, values in zip(texts, by_name.get("t", [])):
        if values != [expected_text(raw)]:
            text_mismatch.append(f"{raw!r} -> {values!r}")
    check("text reads back exactly, invalid bytes as U+FFFD", text_mismatch, len(texts))
    if len(by_name.get("t", [])) != len(texts):
        check("every text event is logged", [f"{len(by_name.get('t', []))} of {len(texts)}"], 1)
    for d, values in zip(doubles, by_name.get("d", [])):
        got = values[0]
        if not (got == d and math.copysign(1, got) == math.copysign(1, d)):
            double_mismatch.append(f"{d!r} -> {got!r}")
    check("doubles read back as the same value, -0.0 and infinities included",
          double_mismatch, len(doubles))
    if by_name.get("i") != [integers[:100]]:
        other.append(f"integers: {by_name.get('i')!r:.200}")
    if by_name.get("n") != [[None, {"blob": "00ff"}, None]]:
        other.append(f"NULL, blob, NaN: {by_name.get('n')!r}")
    check("integers at the limits, NULL, blobs and NaN", other, 2)
