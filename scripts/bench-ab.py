#!/usr/bin/env python3
"""Before/after benchmarks, side by side in one run.

    scripts/bench-ab.py OLD_BUILD NEW_BUILD [--rounds N] [--bench rewrite,algebra,...]
                        [--filter REGEX]

Runs each Google Benchmark program of bench/ (OLD_BUILD/bench/bench_NAME and
NEW_BUILD/bench/bench_NAME) alternately, old then new, N rounds (default 5),
and prints for every benchmark both medians of the per-round times, the
spread (min-max over rounds) and new/old.  Alternating rounds spread the
noise of a shared machine over both sides; the spread says how much there
was.  Build both trees the same way (e.g. -DCMAKE_BUILD_TYPE=Release).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

BENCHES = ["rewrite", "algebra", "kernel", "cache", "jit"]


def run(binary, flt):
    args = [binary, "--benchmark_format=json"]
    if flt:
        args.append("--benchmark_filter=" + flt)
    r = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, UOPC_CACHE="off"))
    if r.returncode != 0:
        sys.exit(f"{binary} failed: {r.stderr[-500:]}")
    out = {}
    for b in json.loads(r.stdout)["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        unit = b.get("time_unit", "ns")
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[unit]
        out[b["name"]] = b["real_time"] * scale
    return out


def fmt(t):
    for unit, s in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if t >= s:
            return f"{t / s:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bench", default=",".join(BENCHES))
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    print(f"# {a.rounds} alternating rounds; old {a.old}, new {a.new}")
    for name in a.bench.split(","):
        ob, nb = (os.path.join(d, "bench", "bench_" + name) for d in (a.old, a.new))
        if not (os.path.exists(ob) and os.path.exists(nb)):
            print(f"## bench_{name}: missing in one build, skipped")
            continue
        times = {}
        for _ in range(a.rounds):
            for side, b in (("old", ob), ("new", nb)):
                for k, v in run(b, a.filter).items():
                    times.setdefault(k, {"old": [], "new": []})[side].append(v)
        print(f"## bench_{name}")
        print(f"| benchmark | old median (min-max) | new median (min-max) | new/old |")
        print(f"|---|---|---|---|")
        for k, v in times.items():
            if not v["old"] or not v["new"]:
                continue
            mo, mn = statistics.median(v["old"]), statistics.median(v["new"])
            print(f"| {k} | {fmt(mo)} ({fmt(min(v['old']))}-{fmt(max(v['old']))}) | "
                  f"{fmt(mn)} ({fmt(min(v['new']))}-{fmt(max(v['new']))}) | {mn / mo:.2f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
