#!/usr/bin/env python3
"""Issue 20's grid verdict from kbench CSVs (bench/attention_grid/): per grid point, kbench's best
backend (the fastest of fa2, fa2_tc, fa3 whose refcheck passed) against cuDNN and against FlashInfer's
best (flashinfer_*), and `auto` against kbench's best; then the geometric means and the points that
miss (best < 0.98x a yardstick, auto > 2% slower than the best).

    attention_grid_report.py CSV...   (markdown on stdout)

Speedup = the yardstick's median time / kbench's best (above 1: kbench is faster). Points where a
yardstick does not run show "-" and count in no mean.
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


def main(paths):
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
        for name, yard in (("cudnn", cudnn), ("flashinfer", flashinfer)):
            if yard is None:
                row.append("-")
                continue
            r = yard[1] / best[1]
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
    print()
    for name in ("cudnn", "flashinfer"):
        print(f"- geometric mean over {len(ratios[name])} points, kbench's best vs {name}: {geomean(ratios[name]):.3f}x")
    print(f"- points that miss ({len(misses)}):")
    for m in misses:
        print(f"  - {m}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
