"""Compares kbench's CUPTI median with Nsight Compute's gpu__time_duration.sum for one kernel.

usage: cupti_vs_ncu.py KBENCH_CSV NCU_CSV  -> prints a CSV row: kbench median, ncu median, ratio.
"""
import csv
import statistics
import sys

kbench_rows = list(csv.DictReader(open(sys.argv[1])))
kbench_ms = float(kbench_rows[-1]["median_time"])
timer = kbench_rows[-1]["timer"]

durations_ns = []
for row in csv.DictReader(line for line in open(sys.argv[2]) if line.startswith('"')):
    if row.get("Metric Name") == "gpu__time_duration.sum":
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "nsecond")
        durations_ns.append(value * {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(unit, 1))
if not durations_ns:
    sys.exit("no gpu__time_duration.sum rows in " + sys.argv[2])
ncu_ms = statistics.median(durations_ns) / 1e6
print("kbench_timer,kbench_median_ms,ncu_kernels,ncu_median_ms,kbench_over_ncu,difference_percent")
print(f"{timer},{kbench_ms:.6f},{len(durations_ns)},{ncu_ms:.6f},{kbench_ms / ncu_ms:.4f},{100 * (kbench_ms / ncu_ms - 1):.2f}")
