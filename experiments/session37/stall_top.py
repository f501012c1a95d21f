# The top warp-stall locations of an Nsight Compute source page (ncu --page source --csv
# --print-source sass): python3 stall_top.py SOURCE.csv[.xz] [N]
import csv, io, lzma, sys
path = sys.argv[1]
text = (lzma.open(path, "rt") if path.endswith(".xz") else open(path)).read()
lines = text.splitlines()
start = next(i for i, l in enumerate(lines) if l.startswith('"Address"'))
rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
key = "Warp Stall Sampling (All Samples)"
total = sum(int(r[key] or 0) for r in rows)
reasons = [c for c in rows[0] if c.startswith("stall_") and "Not Issued" not in c]
print(f"warp stall samples {total}")
print("share of all samples, offset, instruction, top 2 reasons (share of all samples)")
base = int(rows[0]["Address"], 16)
for r in sorted(rows, key=lambda r: -int(r[key] or 0))[: int(sys.argv[2]) if len(sys.argv) > 2 else 30]:
    top = sorted(reasons, key=lambda c: -int(r[c] or 0))[:2]
    why = " ".join(f"{c[6:]}={100 * int(r[c] or 0) / total:.1f}" for c in top)
    print(f"{100 * int(r[key] or 0) / total:5.1f}%  {int(r['Address'], 16) - base:5x}  {r['Source'].strip()[:64]:64s} {why}")
totals = {c[6:]: sum(int(r[c] or 0) for r in rows) for c in reasons}
print("all instructions:", " ".join(f"{k}={100 * v / total:.1f}" for k, v in sorted(totals.items(), key=lambda kv: -kv[1])[:10]))
