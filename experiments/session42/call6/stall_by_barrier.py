# Warp-stall samples of an Nsight Compute source page (ncu --page source --csv --print-source sass)
# summed by the mbarrier or named barrier each wait loop polls (the fp8 transposed kernel's layout as
# of 73c1f8e: raw_full from 0x36720, raw_empty 0x367c0.., merge 0x367e0, q_full, q_empty, q_rows_full).
# python3 stall_by_barrier.py SOURCE.csv.xz
import csv, io, lzma, re, sys
lines = lzma.open(sys.argv[1], "rt").read().splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"Address"'))
rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
key = "Warp Stall Sampling (All Samples)"
total = sum(int(r[key] or 0) for r in rows)
names = {0x367c0: "raw_empty", 0x367c8: "raw_empty", 0x367d0: "raw_empty", 0x367d8: "raw_empty", 0x367e0: "merge",
         0x367e8: "q_full", 0x367f0: "q_empty", 0x367f8: "q_rows_full"}
by = {}
for i, r in enumerate(rows):
    samples = int(r[key] or 0)
    if not samples:
        continue
    for j in range(i, max(i - 3, -1), -1):  # the wait loop's TRYWAIT and the branches after it
        m = re.search(r"TRYWAIT P\d, \[[^\]]*\+(0x[0-9a-f]+)\]", rows[j]["Source"])
        if m:
            v = int(m.group(1), 16)
            label = names.get(v, "raw_full" if 0x36720 <= v < 0x367c0 else hex(v))
            by[label] = by.get(label, 0) + samples
            break
        if "BAR.SYNC" in rows[j]["Source"]:
            by["named barrier"] = by.get("named barrier", 0) + samples
            break
print(f"samples {total}")
for label, samples in sorted(by.items(), key=lambda kv: -kv[1]):
    print(f"  {label:14s} {100 * samples / total:6.2f}%")
