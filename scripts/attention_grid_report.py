#!/usr/bin/env python3
"""Issue 20's grid verdict from kbench CSVs (bench/attention_grid/): per grid point, kbench's best
backend (the fastest of fa2, fa2_tc, fa3 whose refcheck passed) against cuDNN and against FlashInfer's
best (flashinfer_*), and `auto` against kbench's best; then the geometric means and the points that
miss (best < 0.98x a yardstick, auto > 2% slower than the best).

    attention_grid_report.py CSV... [--plot FILE.png]   (markdown on stdout)

Speedup = the yardstick's median time / kbench's best (above 1: kbench is faster). Points where a
yardstick does not run show "-" and count in no mean. --plot also draws the grid (matplotlib): a
panel per group of points (case tag: the grid varies one or two axes around a base point in each),
kbench's best over cuDNN and over FlashInfer's best at every point, labelled by the axes that vary
in the group, with the 0.98x line of the target.
"""

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from backend_ratios import PASSED, read_cases, shown_columns  # noqa: E402

KBENCH = ("fa2", "fa2_tc", "fa3")
# The grid's axes (shown where they vary).
AXES = ("case_tag", "batch_size", "s_qo", "s_kv", "num_qo_heads", "num_kv_heads", "head_dim_qk", "head_dim_vo",
        "page_size", "kv_layout", "q_dtype", "kv_dtype", "causal", "random_actual_seq_len")


def fastest(backends, names):
    """(name, seconds) of the fastest passing backend among `names`, or None."""
    times = [(b, float(r["median_time"])) for b, r in backends.items()
             if (b in names or any(b.startswith(n) for n in names if n.endswith("_")))
             and r.get("refcheck_status", "") in PASSED and r.get("median_time")]
    return min(times, key=lambda t: t[1]) if times else None


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def plot(points, columns, path):
    """points: (values, {yardstick: speedup}) in grid order; one panel per case tag."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("--plot needs matplotlib (python3 -m pip install matplotlib)")
    groups = {}
    for values, speedups in points:
        groups.setdefault(values.get("case_tag", ""), []).append((values, speedups))
    cols = 4
    rows = (len(groups) + cols - 1) // cols
    figure, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    for ax in axes.flat[len(groups):]:
        ax.axis("off")
    for ax, (tag, members) in zip(axes.flat, groups.items()):
        varying = [c for c in columns if c != "case_tag" and len({m[0].get(c, "") for m in members}) > 1]
        labels = [" ".join(m[0].get(c, "") for c in varying) or tag for m in members]
        x = range(len(members))
        drawn = False
        for name, marker in (("cudnn", "o"), ("flashinfer", "s")):
            ys = [m[1].get(name, float("nan")) for m in members]
            if any(not math.isnan(y) for y in ys):
                ax.plot(x, ys, marker=marker, linestyle="-" if len(members) > 1 else "", label=f"vs {name}")
                drawn = True
        ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.axhline(0.98, color="red", linewidth=0.8, linestyle="--")
        ax.set_xticks(list(x))
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
        ax.set_title(tag + ("\n" + ", ".join(varying) if varying else ""), fontsize=8)
        ax.set_ylabel("kbench best / yardstick", fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
        if drawn:
            ax.legend(fontsize=6)
        else:
            ax.text(0.5, 0.5, "no yardstick ran", transform=ax.transAxes, ha="center", fontsize=8)
    figure.suptitle("kbench's best attention backend over cuDNN and FlashInfer (above 1: kbench faster; dashed: 0.98x)",
                    fontsize=10)
    figure.tight_layout(rect=(0, 0, 1, 0.98))
    figure.savefig(path, dpi=80)


def main(argv):
    plot_path = None
    if "--plot" in argv:
        i = argv.index("--plot")
        if i + 1 >= len(argv):
            sys.exit(__doc__)
        plot_path = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    paths = argv
    points = []
    cases = [c for c in read_cases(paths) if c[0].get("routine", "").startswith("Batch")]
    if not cases:
        sys.exit("no attention rows in " + " ".join(paths))
    columns = [c for c in shown_columns(cases, None) if c in AXES]
    head = columns + ["kbench best", "us", "cudnn us", "flashinfer best us", "vs cudnn", "vs flashinfer", "auto / best"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    ratios = {"cudnn": [], "flashinfer": []}
    misses = []
    for values, backends in cases:
        best = fastest(backends, KBENCH)
        cudnn = fastest(backends, ("cudnn",))
        flashinfer = fastest(backends, ("flashinfer_",))
        auto = fastest(backends, ("auto",))
        cells = [values.get(c, "") for c in columns]
        if best is None:
            print("| " + " | ".join(cells + ["none passed"] + ["-"] * 6) + " |")
            misses.append(f"{values.get('case_tag', '')}: no kbench backend passed")
            continue
        row = cells + [best[0], f"{best[1] * 1e3:.1f}"]  # median_time is in ms
        for name, yard in (("cudnn", cudnn), ("flashinfer", flashinfer)):
            row.append("-" if yard is None else f"{yard[1] * 1e3:.1f}")
        speedups = {}
        for name, yard in (("cudnn", cudnn), ("flashinfer", flashinfer)):
            if yard is None:
                row.append("-")
                continue
            r = yard[1] / best[1]
            speedups[name] = r
            ratios[name].append(r)
            row.append(f"{r:.3f}")
            if r < 0.98:
                misses.append(f"{values.get('case_tag', '')} {cells}: kbench {best[0]} {r:.3f}x {name} ({yard[0]})")
        if auto is None:
            row.append("-")
        else:
            a = auto[1] / best[1]
            row.append(f"{a:.3f}")
            if a > 1.02:
                misses.append(f"{values.get('case_tag', '')} {cells}: auto {a:.3f}x the best ({best[0]})")
        print("| " + " | ".join(row) + " |")
        points.append((values, speedups))
    print()
    for name in ("cudnn", "flashinfer"):
        print(f"- geometric mean over {len(ratios[name])} points, kbench's best vs {name}: {geomean(ratios[name]):.3f}x")
    print(f"- points that miss ({len(misses)}):")
    for m in misses:
        print(f"  - {m}")
    if plot_path:
        plot(points, columns, plot_path)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
