"""Compares kbench's CUPTI median per call with Nsight Compute's gpu__time_duration.sum per call.

usage: cupti_vs_ncu.py NAME KBENCH_CSV NCU_CSV CALLS -> one CSV row (a header before it when NAME is
the first of a file). kbench's own launches that are not the routine's (input fill, dtype
conversion, the L2 flush) are left out; the routine's kernels, K per call, are summed per call
(CUPTI's span of a call also holds the gaps between its kernels, a few microseconds at most).
"""
import csv
import statistics
import sys

name, kbench_csv, ncu_csv, calls = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
HARNESS_KERNELS = ("l2_flush_kernel", "fill_normal_kernel", "convert_kernel", "fill_", "poison")

kbench_rows = list(csv.DictReader(open(kbench_csv)))
kbench_ms = float(kbench_rows[-1]["median_time"])
timer = kbench_rows[-1]["timer"]
clock = kbench_rows[-1].get("sm_clock_mhz", "")

durations_ns = []
kernels = set()
for row in csv.DictReader(line for line in open(ncu_csv) if line.startswith('"')):
    if row.get("Metric Name") != "gpu__time_duration.sum":
        continue
    kernel = row.get("Kernel Name", "")
    if any(h in kernel for h in HARNESS_KERNELS):
        continue
    value = float(row["Metric Value"].replace(",", ""))
    unit = row.get("Metric Unit", "nsecond")
    durations_ns.append(value * {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(unit, 1))
    kernels.add(kernel.split("(")[0][:60])
if not durations_ns or len(durations_ns) % calls:
    sys.exit(f"{name}: {len(durations_ns)} routine kernels in {ncu_csv}, not a multiple of {calls} calls")
per_call = len(durations_ns) // calls
call_ns = [sum(durations_ns[i:i + per_call]) for i in range(0, len(durations_ns), per_call)]
ncu_ms = statistics.median(call_ns) / 1e6
if name == "rmsnorm":
    print("case,kbench_timer,kbench_median_ms,kbench_sm_clock_mhz,ncu_kernels_per_call,ncu_median_ms,"
          "kbench_over_ncu,difference_percent,kernels")
print(f"{name},{timer},{kbench_ms:.6f},{clock},{per_call},{ncu_ms:.6f},{kbench_ms / ncu_ms:.4f},"
      f"{100 * (kbench_ms / ncu_ms - 1):.2f},{'|'.join(sorted(kernels))}")
