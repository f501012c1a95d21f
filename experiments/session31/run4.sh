#!/usr/bin/env bash
# Session 31, call 4 (H200): softmax with two rows a cluster (KBENCH_SOFTMAX_ROWS=2: every CTA's copies
# of both rows issued first, one row's exchange overlapping the other's traffic) against one
# (the default) and main (f2b2049), both orders, every row refchecked; sampling GPU tests and
# memcheck/racecheck with two rows.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/main.xz /tmp/b/main; unpack .ab/bin/exp.xz /tmp/b/exp
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/exp /work/main/build/src/app/kbench
bash bench/norm/copy_bandwidth.sh
run() { KBENCH_SOFTMAX_ROWS=$2 /tmp/b/$1 --testlist experiments/session31/softmax.txt --output_path "$OUT/$3.csv" >"$OUT/$3.log" 2>&1 || echo "$3 exit $?"; }
for r in 1 2; do
  if [ $r = 1 ]; then run main 1 main_1; run exp 1 r1_1; run exp 2 r2_1; else run exp 2 r2_2; run exp 1 r1_2; run main 1 main_2; fi
done
python3 - <<'PY'
import csv, glob, os
out = os.environ.get("OUT", "/tmp/out")
rows = {}
for f in sorted(glob.glob(f"{out}/*_[12].csv")):
    e = os.path.basename(f)[:-6]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"], e), []).append(f'{float(r["median_time"]) * 1000:.1f} {float(r["tb_per_sec"]):.3f} {r["refcheck_status"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
KBENCH_SOFTMAX_ROWS=2 timeout 150 /tmp/b/gt --gtest_filter='*Sampling*' >"$OUT/gtest_sampling_r2.log" 2>&1
echo "gtest rows 2 exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_sampling_r2.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_sampling_r2.log" | head
printf '%s\n' '--routine softmax --batch_size 5 --vocab_size 50257 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' \
  '--routine softmax --batch_size 3 --vocab_size 128256 --input_dtype bfloat16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' \
  '--routine softmax --batch_size 7 --vocab_size 1001 --input_dtype float16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' >/tmp/san.txt
for tool in memcheck racecheck; do
  KBENCH_SOFTMAX_ROWS=2 timeout 120 compute-sanitizer --tool $tool /tmp/b/exp --testlist /tmp/san.txt --refcheck >"$OUT/$tool.log" 2>&1
  echo "$tool rows 2 exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tr '\n' ' ')"
done
cd "$OUT" && tar czf results4.tgz *.csv *.log *.txt && rm -f *.csv *.log *.txt && ls
echo "end: $(smi)"
