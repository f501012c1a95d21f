#!/usr/bin/env bash
# Session 31, call 2 (H200): where the softmax's time goes. KBENCH_SOFTMAX_EXPERIMENT (a build of the
# experiment patch only, never landed; wrong outputs, no refcheck): 1 no cluster exchange, 2 no
# arithmetic (loads, exchange, stores of x), 4 no stores, and their sums; copy bandwidth beside; ncu
# warp states of the normal kernel.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/exp.xz /tmp/b/exp
bash bench/norm/copy_bandwidth.sh
for r in 1 2; do
  for e in 0 1 2 3 4 5 6 7; do
    KBENCH_SOFTMAX_EXPERIMENT=$e /tmp/b/exp --testlist experiments/session31/bounds.txt --output_path "$OUT/e${e}_$r.csv" >"$OUT/e${e}_$r.log" 2>&1 || echo "e$e exit $?"
  done
done
python3 - <<'PY'
import csv, glob, os
out = os.environ.get("OUT", "/tmp/out")
rows = {}
for f in sorted(glob.glob(f"{out}/e*_[12].csv")):
    e = os.path.basename(f).split("_")[0]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], e), []).append(float(r["median_time"]) * 1000)
for k in sorted(rows): print(k[0], k[1], " ".join(f"{t:.1f}" for t in rows[k]), "us")
PY
timeout 120 ncu --clock-control none -k regex:filter_kernel -c 1 --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats \
  /tmp/b/exp --routine softmax --batch_size 256 --vocab_size 128256 --input_dtype float32 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0 >"$OUT/ncu_warp_states.txt" 2>&1
grep -E "Stall|Warp Cycles|Eligible|Issued Warp|No Eligible|Active Warps|Theoretical|Achieved|Registers|Waves" "$OUT/ncu_warp_states.txt" | head -40
cd "$OUT" && tar czf results2.tgz *.csv *.log *.txt && rm -f *.csv *.log *.txt && ls
echo "end: $(smi)"
