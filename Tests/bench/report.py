"""make bench: gathers the ROW lines the benchmarks print into one table.

A row is tab-separated: ROW, what is measured, our variant, its figure, the
peer, its figure, the unit, and the target ratio (empty when none). The
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
        ours_value, peer_value = float(ours_value), float(peer_value)
        ratio = ours_value / peer_value if peer_value else float("nan")
        met = ""
        if target:
            met = "yes" if ratio <= float(target) else "NO"
            failed += met == "NO"
        def figure(value):
            return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.2f} {unit}".replace(".00 ", " ")
        lines.append(f"| {what} | `{ours}` {figure(ours_value)} | `{peer}` {figure(peer_value)} | "
                     f"{ratio:.2f} | {'≤ ' + target if target else ''} | {met} |")
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
