#!/usr/bin/env python3
"""The ratios of a bench_throughput run as an SVG bar chart (stdlib only).

    plot_ratios.py BENCH_TSV OUT_SVG

Reads the TSV that bench_throughput writes (lines starting with '#' are the
run's facts: date, CPU, OpenBLAS core) and draws one horizontal bar per row
that has a ratio (reference median / uopc median; rows of the machine's
limits, which have no uopc side, are listed under the chart with their
rates).  The x axis is logarithmic, with a line at 1 (uopc as fast as the
reference); a row's target, when it has one, is a black tick on its bar;
the bar is green when the row passes its target, red when it falls short,
grey without a target.
"""
import html
import math
import sys


def read_tsv(path):
    meta, rows, header = [], [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("#"):
                meta.append(line[1:].strip().replace("\t", ": ", 1))
            elif header is None:
                header = line.split("\t")
            else:
                rows.append(dict(zip(header, line.split("\t"))))
    if header is None:
        raise SystemExit(f"plot_ratios: {path}: no header line (is it bench_throughput's TSV?)")
    return meta, rows


def num(s):
    try:
        v = float(s)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def svg(meta, rows):
    bars = [r for r in rows if num(r.get("ratio")) is not None]
    limits = [r for r in rows if r.get("uopc_med_ms") == "-" and num(r.get("ref_rate")) is not None]
    values = [num(r["ratio"]) for r in bars] + [num(r.get("need_ratio")) for r in bars if num(r.get("need_ratio"))]
    lo = min([0.5] + values)
    hi = max([2.0] + values)
    lo10, hi10 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if hi10 == lo10:
        hi10 += 1
    label_w, plot_w, bar_h, gap, top = 430, 560, 16, 6, 70 + 16 * len(meta)
    width = label_w + plot_w + 300
    height = top + len(bars) * (bar_h + gap) + 60 + 16 * (len(limits) + 1)

    def x(v):
        return label_w + (math.log10(v) - lo10) / (hi10 - lo10) * plot_w

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        '<text x="10" y="22" font-size="16" font-weight="bold">uopc throughput: reference time / uopc time '
        "(&gt;= 1: uopc as fast)</text>",
    ]
    for i, m in enumerate(meta):
        out.append(f'<text x="10" y="{42 + 16 * i}" fill="#444">{html.escape(m[:190])}</text>')
    # decade and 2x/5x grid lines
    y0, y1 = top - 8, top + len(bars) * (bar_h + gap)
    for d in range(lo10, hi10 + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** d
            if v < 10.0 ** lo10 or v > 10.0 ** hi10:
                continue
            xv = x(v)
            out.append(f'<line x1="{xv:.1f}" y1="{y0}" x2="{xv:.1f}" y2="{y1}" stroke="#ddd"/>')
            out.append(f'<text x="{xv:.1f}" y="{y1 + 14}" text-anchor="middle" fill="#666">{v:g}</text>')
    out.append(f'<line x1="{x(1):.1f}" y1="{y0}" x2="{x(1):.1f}" y2="{y1}" stroke="#000" stroke-width="1.5"/>')
    for i, r in enumerate(bars):
        y = top + i * (bar_h + gap)
        ratio = num(r["ratio"])
        status = r.get("status", "-")
        color = {"PASS": "#3a9a3a", "short": "#d04040", "WRONG": "#800000"}.get(status, "#999")
        label = f'{r["workload"]} {r["variant"]} vs {r["reference"]}'
        out.append(f'<text x="{label_w - 8}" y="{y + bar_h - 4}" text-anchor="end">{html.escape(label)}</text>')
        x1, x2 = sorted((x(1), x(ratio)))
        out.append(f'<rect x="{x1:.1f}" y="{y}" width="{max(x2 - x1, 1):.1f}" height="{bar_h}" fill="{color}"/>')
        need = num(r.get("need_ratio"))
        if need:
            xn = x(need)
            out.append(f'<line x1="{xn:.1f}" y1="{y - 2}" x2="{xn:.1f}" y2="{y + bar_h + 2}" stroke="#000" '
                       'stroke-width="2"/>')
        text = f"{ratio:.3g}x" + (f' {status} ({r["target"]})' if status not in ("-", "") else "")
        out.append(f'<text x="{x(10.0 ** hi10) + 6:.1f}" y="{y + bar_h - 4}">{html.escape(text)}</text>')
    y = y1 + 40
    out.append(f'<text x="10" y="{y}" font-weight="bold">The machine\'s limits (references only)</text>')
    for i, r in enumerate(limits):
        rate = num(r["ref_rate"])
        out.append(f'<text x="10" y="{y + 16 * (i + 1)}">{html.escape(r["workload"] + " " + r["variant"])}: '
                   f'{rate:.3g} {html.escape(r["unit"])} ({html.escape(r["reference"])}, '
                   f'median {html.escape(r["ref_med_ms"])} ms)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 3:
        raise SystemExit("usage: plot_ratios.py BENCH_TSV OUT_SVG")
    meta, rows = read_tsv(argv[1])
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write(svg(meta, rows))


if __name__ == "__main__":
    main(sys.argv)
