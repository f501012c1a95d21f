#!/usr/bin/env python3
"""Medians per case (tag, batch, s_kv, heads, head dim, layout, backend) and binary over the rounds of
an A/B call (rows.csv: `binary_round,<kbench CSV row>`; header.csv: the CSV header), with each
backend's ratio new/main and kbench's fa2_tc against cudnn and flashinfer in each binary."""
import csv, statistics, sys, collections
d = sys.argv[1]
header = next(csv.reader(open(f"{d}/header.csv")))
times = collections.defaultdict(lambda: collections.defaultdict(list))
status = collections.defaultdict(set)
for line in csv.reader(open(f"{d}/rows.csv")):
    binary = line[0].rsplit("_", 1)[0]
    r = dict(zip(header, line[1:]))
    case = (r["case_tag"], r["batch_size"], r["s_kv"], r["num_qo_heads"], r["num_kv_heads"], r["head_dim_qk"],
            r["kv_layout"], r["page_size"])
    times[case, r["backend"]][binary].append(float(r["median_time"]) * 1000)
    status[case, r["backend"]].add(r["refcheck_status"])
binaries = sorted({b for v in times.values() for b in v})
print("case backend " + " ".join(f"{b}(us)" for b in binaries) + " new/main refcheck")
cases = list(dict.fromkeys(c for c, _ in times))
for case in cases:
    med = {}
    for (c, be), v in times.items():
        if c != case: continue
        m = [statistics.median(v[b]) if b in v else float("nan") for b in binaries]
        med[be] = m
        print(" ".join(case), be, " ".join(f"{x:.1f}" for x in m), f"{m[-1] / m[0]:.3f}", ",".join(status[c, be]))
    kb = [be for be in med if not be.startswith(("cudnn", "flashinfer"))]
    for ref in [be for be in med if be.startswith(("cudnn", "flashinfer"))]:
        for i, b in enumerate(binaries):
            best = min(med[k][i] for k in kb)
            print(f"    {b}: kbench best / {ref} = {med[ref][i] / best:.3f}")
