"""make bench: gathers the ROW lines the benchmarks print into one table.

A row is tab-separated: ROW, what is measured, our variant, its figure, the
peer, its figure, the unit, and the target ratio (empty when none). A row
with no peer figure (nothing to compare with) reports our figure alone. The
table goes to standard output and, with --markdown FILE, to FILE.
"""
import os
import platform
import sys


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    rows = [line.rstrip("\n").split("\t") for line in sys.stdin if line.startswith("ROW\t")]
    lines = [
        f"Measured in one run on {cpu_model()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}; smaller is better; ratio = ours / peer.",
        "",
        "| benchmark | ours | peer | ratio | target | met |",
        "|---|---|---|---:|---:|---|",
    ]
    failed = 0
    for _, what, ours, ours_value, peer, peer_value, unit, target in rows:
        ours_value = float(ours_value)
        peer_value = float(peer_value) if peer_value else None
        ratio = ours_value / peer_value if peer_value else float("nan")
        met = ""
        if target:
            met = "yes" if ratio <= float(target) else "NO"
            failed += met == "NO"
        def figure(value):
            return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.2f} {unit}".replace(".00 ", " ")
        peer_text = f"`{peer}` {figure(peer_value)}" if peer_value is not None else peer
        ratio_text = f"{ratio:.2f}" if peer_value is not None else "—"
        lines.append(f"| {what} | `{ours}` {figure(ours_value)} | {peer_text} | "
                     f"{ratio_text} | {'≤ ' + target if target else ''} | {met} |")
    text = "\n".join(lines)
    print(text)
    if len(sys.argv) == 3 and sys.argv[1] == "--markdown":
        with open(sys.argv[2], "w") as out:
            out.write(text + "\n")
    if not rows:
        print("no benchmark rows", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
