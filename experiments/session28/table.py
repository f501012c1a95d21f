#!/usr/bin/env python3
"""Medians per (case, page, head dim, dtype, layout, backend) and binary over the rounds of an A/B
call whose rows.csv holds `binary_round,<kbench CSV row>` lines and header.csv the CSV header."""
import csv, statistics, sys, collections
d = sys.argv[1]
header = next(csv.reader(open(f"{d}/header.csv")))
times = collections.defaultdict(lambda: collections.defaultdict(list))
status = collections.defaultdict(set)
for line in csv.reader(open(f"{d}/rows.csv")):
    binary = line[0].rsplit("_", 1)[0]
    r = dict(zip(header, line[1:]))
    key = (r["case_tag"], r["page_size"], r["head_dim_qk"], r["q_dtype"][:8], r["kv_layout"], r["backend"])
    times[key][binary].append(float(r["median_time"]))
    status[key].add(r["refcheck_status"])
binaries = sorted({b for v in times.values() for b in v})
print("case page d q layout backend " + " ".join(f"{b}(ms)" for b in binaries) + " ratio refcheck")
for key, v in times.items():
    med = [statistics.median(v[b]) if b in v else float("nan") for b in binaries]
    print(" ".join(key), " ".join(f"{m:.3f}" for m in med), f"{med[-1] / med[0]:.3f}", ",".join(status[key]))
