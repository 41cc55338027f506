"""Medians of the loopback pairs that scripts/lib/pair.sh left in a directory, as Markdown.

    python3 scripts/lib/pair_table.py OUT REPS NAME=LABEL... [--ratio A B]

One row per NAME: goodput (Gbit/s, median and every run), sender and receiver CPU seconds per
GiB (getrusage of each end). --ratio A B adds B's goodput over A's and the CPU-s/GiB B adds.
"""
import json
import os
import statistics
import sys


def result(path):
    """The {"event":"result"} line of a peer's output, or None."""
    if not os.path.exists(path):
        return None
    for line in open(path):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("event") == "result":
            return j
    return None


def medians(out, reps, name):
    g, sc, rc = [], [], []
    for i in range(1, reps + 1):
        s, r = result(f"{out}/{name}.{i}.send"), result(f"{out}/{name}.{i}.recv")
        if not s or not r:
            continue
        gib = s["bytes"] / 2**30
        g.append(s["bytes"] * 8 / s["seconds"] / 1e9)
        sc.append((s["cpu_user"] + s["cpu_sys"]) / gib)
        rc.append((r["cpu_user"] + r["cpu_sys"]) / gib)
    if not g:
        return None
    return statistics.median(g), g, statistics.median(sc), statistics.median(rc)


def main(argv):
    out, reps, rest = argv[1], int(argv[2]), argv[3:]
    ratio = None
    if "--ratio" in rest:
        at = rest.index("--ratio")
        ratio, rest = rest[at + 1:at + 3], rest[:at]
    rows = {}
    print("| pair | goodput Gbit/s | runs | sender CPU-s/GiB | receiver CPU-s/GiB |")
    print("|---|---|---|---|---|")
    for spec in rest:
        name, _, label = spec.partition("=")
        m = medians(out, reps, name)
        if m is None:
            continue
        rows[name] = m
        runs = ", ".join(f"{x:.2f}" for x in m[1])
        print(f"| {label or name} | {m[0]:.2f} | {runs} | {m[2]:.2f} | {m[3]:.2f} |")
    if ratio and all(n in rows for n in ratio):
        a, b = rows[ratio[0]], rows[ratio[1]]
        print(f"\n{ratio[1]} / {ratio[0]} goodput: {b[0] / a[0]:.2f}x; {ratio[1]} adds "
              f"{b[2] - a[2]:+.2f} (sender) and {b[3] - a[3]:+.2f} (receiver) CPU-s/GiB")


if __name__ == "__main__":
    main(sys.argv)
