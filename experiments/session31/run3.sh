#!/usr/bin/env bash
# Session 31, call 3 (H200): softmax with an L2 prefetch of each CTA's slice of the row D rows ahead
# (KBENCH_SOFTMAX_PREFETCH=D; _WHEN=0 at the CTA's start, 1 before the cluster exchange), experiment
# build; every row refchecked; ncu DRAM bytes of the best.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/exp.xz /tmp/b/exp
bash bench/norm/copy_bandwidth.sh
for r in 1 2; do
  for cfg in 0:0 16:0 32:0 45:0 64:0 90:0 200:0 45:1 90:1; do
    d=${cfg%%:*}; w=${cfg##*:}
    KBENCH_SOFTMAX_PREFETCH=$d KBENCH_SOFTMAX_PREFETCH_WHEN=$w /tmp/b/exp --testlist experiments/session31/prefetch.txt --output_path "$OUT/p${d}w${w}_$r.csv" >"$OUT/p${d}w${w}_$r.log" 2>&1 || echo "p$d w$w exit $?"
  done
done
python3 - <<'PY'
import csv, glob, os
out = os.environ.get("OUT", "/tmp/out")
rows = {}
for f in sorted(glob.glob(f"{out}/p*_[12].csv")):
    e = os.path.basename(f).split("_")[0]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], e), []).append(f'{float(r["median_time"]) * 1000:.1f} {r["refcheck_status"]}')
for k in sorted(rows): print(k[0], k[1], " | ".join(rows[k]))
PY
for d in 0 45 90; do
  KBENCH_SOFTMAX_PREFETCH=$d timeout 60 ncu --clock-control none -k regex:filter_kernel -c 1 --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
    /tmp/b/exp --routine softmax --batch_size 256 --vocab_size 128256 --input_dtype float32 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0 >"$OUT/ncu_p$d.txt" 2>&1
  echo "ncu D=$d: $(grep -E 'duration|dram__bytes|hit_rate' "$OUT/ncu_p$d.txt" | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ')"
done
cd "$OUT" && tar czf results3.tgz *.csv *.log *.txt && rm -f *.csv *.log *.txt && ls
echo "end: $(smi)"
