"""Session 44: call 8's per-CTA trace (mla_balanced_trace.cu) against the plan. For each random-length
case: every CTA's median busy time over the launches, its KV tiles at the fixed-length case's time a
tile, and what a segment costs beyond them (a least-squares fit, and the CTAs grouped by segments).
Usage: python3 trace_fit.py call8"""
import csv
import gzip
import statistics as st
import sys
from collections import defaultdict

import numpy as np


def ctas(folder, case):
    per = defaultdict(dict)
    with gzip.open(f"{folder}/ctas_{case}.csv.gz", "rt") as f:
        for r in csv.DictReader(f):
            per[int(r["cta"])].setdefault(int(r["launch"]), []).append(r)
    return per


def busy(rows_by_launch):
    return st.median((int(v[0]["end_ns"]) - int(v[0]["start_ns"])) / 1000 for v in rows_by_launch.values())


folder = sys.argv[1] if len(sys.argv) > 1 else "call8"
for kv in ("bf16", "fp8"):
    fixed = ctas(folder, f"{kv}_fixed")
    tile_us = st.mean(busy(d) for d in fixed.values()) / 128  # 128 tiles a CTA, one segment
    per = ctas(folder, f"{kv}_random")
    tiles = np.array([sum(int(r["tiles"]) for r in d[0]) for d in per.values()], float)
    segs = np.array([len(d[0]) for d in per.values()], float)
    extra = np.array([busy(d) for d in per.values()]) - tile_us * tiles
    (per_segment, base), *_ = np.linalg.lstsq(np.c_[segs, np.ones(len(segs))], extra, rcond=None)
    print(f"{kv}: a tile {tile_us:.3f} us (fixed lengths); a segment {per_segment:.2f} us = "
          f"{per_segment / tile_us:.2f} tiles (+ {base:.2f} us a CTA)")
    for s in sorted(set(segs)):
        m = segs == s
        print(f"  {int(s)} segments: {m.sum()} CTAs, busy beyond their tiles {extra[m].mean():.1f} us")
