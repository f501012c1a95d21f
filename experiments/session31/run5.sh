#!/usr/bin/env bash
# Session 31, call 5 (H200): softmax on persistent clusters (KBENCH_SOFTMAX_PERSISTENT=1: three row
# parts in shared memory per CTA, one CTA an SM, the next rows' copies in flight during a row's
# exchange and stores; KBENCH_SOFTMAX_THREADS=1024 for 1024 threads) against the one-row-a-cluster
# kernel of the same build and main (f2b2049), both orders, every row refchecked; the sampling GPU
# tests and memcheck/racecheck with the persistent kernel.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/main.xz /tmp/b/main; unpack .ab/bin/exp.xz /tmp/b/exp
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/exp /work/main/build/src/app/kbench
bash bench/norm/copy_bandwidth.sh
run() { env $2 /tmp/b/$1 --testlist experiments/session31/softmax.txt --output_path "$OUT/$3.csv" >"$OUT/$3.log" 2>&1 || echo "$3 exit $?"; }
P="KBENCH_SOFTMAX_PERSISTENT=1"
for r in 1 2; do
  if [ $r = 1 ]; then run main X=0 main_1; run exp X=0 row_1; run exp $P p512_1; run exp "$P KBENCH_SOFTMAX_THREADS=1024" p1024_1
  else run exp "$P KBENCH_SOFTMAX_THREADS=1024" p1024_2; run exp $P p512_2; run exp X=0 row_2; run main X=0 main_2; fi
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
KBENCH_SOFTMAX_PERSISTENT=1 timeout 150 /tmp/b/gt --gtest_filter='*Sampling*' >"$OUT/gtest.log" 2>&1
echo "gtest persistent exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest.log" | head
printf '%s\n' '--routine softmax --batch_size 300 --vocab_size 50257 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' \
  '--routine softmax --batch_size 40 --vocab_size 128256 --input_dtype bfloat16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' \
  '--routine softmax --batch_size 500 --vocab_size 1001 --input_dtype float16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' >/tmp/san.txt
for t in 512 1024; do for tool in memcheck racecheck; do
  KBENCH_SOFTMAX_PERSISTENT=1 KBENCH_SOFTMAX_THREADS=$t timeout 100 compute-sanitizer --tool $tool /tmp/b/exp --testlist /tmp/san.txt --refcheck >"$OUT/${tool}_$t.log" 2>&1
  echo "$tool $t exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/${tool}_$t.log" | tr '\n' ' ') refcheck: $(grep -c -i 'passed' "$OUT/${tool}_$t.log")"
done; done
cd "$OUT" && tar czf results5.tgz *.csv *.log && rm -f *.csv *.log && ls
echo "end: $(smi)"
