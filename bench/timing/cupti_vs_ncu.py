"""Compares kbench's CUPTI median per call with Nsight Compute's gpu__time_duration.sum per call.

usage: cupti_vs_ncu.py NAME KBENCH_CSV KBENCH_COOL_CSV NCU_CSV CALLS -> one CSV row (the header
first when NAME is rmsnorm, the first case). kbench's own launches that are not the routine's (input
fill, dtype conversion, the L2 flush) are left out; the routine's kernels, K per call, are summed per
call (CUPTI's span of a call also holds the gaps between its kernels, a few microseconds at most).
The timer's agreement is the cool kbench run against ncu (both at the clock of a GPU that idled);
the sustained run shows what the power cap adds.
"""
import csv
import statistics
import sys

name, kbench_csv, cool_csv, ncu_csv, calls = sys.argv[1:5] + [int(sys.argv[5])]
HARNESS_KERNELS = ("l2_flush_kernel", "fill_normal_kernel", "convert_kernel")  # kbench's own
HZ_PER_UNIT = {"cycle/second": 1, "cycle/msecond": 1e3, "cycle/usecond": 1e6, "cycle/nsecond": 1e9,
               "hz": 1, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}


def kbench_row(path):
    row = list(csv.DictReader(open(path)))[-1]
    return float(row["median_time"]), row["timer"], row.get("sm_clock_mhz", "")


sustained_ms, timer, sustained_clock = kbench_row(kbench_csv)
cool_ms, _, cool_clock = kbench_row(cool_csv)

durations_ns, clocks_hz, kernels = [], [], set()
for row in csv.DictReader(line for line in open(ncu_csv) if line.startswith('"')):
    kernel = row.get("Kernel Name", "")
    if any(h in kernel for h in HARNESS_KERNELS):
        continue
    value = float(row["Metric Value"].replace(",", ""))
    unit = row.get("Metric Unit", "")
    if row.get("Metric Name") == "gpu__time_duration.sum":
        durations_ns.append(value * {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(unit, 1))
        kernels.add(kernel.split("(")[0][:60])
    elif row.get("Metric Name") == "sm__cycles_elapsed.avg.per_second":
        clocks_hz.append(value * HZ_PER_UNIT.get(unit.lower(), 1))
if not durations_ns or len(durations_ns) % calls:
    sys.exit(f"{name}: {len(durations_ns)} routine kernels in {ncu_csv}, not a multiple of {calls} calls")
per_call = len(durations_ns) // calls
call_ns = [sum(durations_ns[i:i + per_call]) for i in range(0, len(durations_ns), per_call)]
ncu_ms = statistics.median(call_ns) / 1e6
ncu_clock = f"{statistics.median(clocks_hz) / 1e6:.0f}" if clocks_hz else ""
if name == "rmsnorm":
    print("case,kbench_timer,kbench_cool_ms,kbench_cool_sm_clock_mhz,ncu_ms,ncu_sm_clock_mhz,cool_over_ncu,"
          "cool_difference_percent,kbench_sustained_ms,kbench_sustained_sm_clock_mhz,sustained_over_ncu,"
          "ncu_kernels_per_call,kernels")
print(f"{name},{timer},{cool_ms:.6f},{cool_clock},{ncu_ms:.6f},{ncu_clock},{cool_ms / ncu_ms:.4f},"
      f"{100 * (cool_ms / ncu_ms - 1):.2f},{sustained_ms:.6f},{sustained_clock},{sustained_ms / ncu_ms:.4f},"
      f"{per_call},{'|'.join(sorted(kernels))}")
