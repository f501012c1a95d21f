#!/usr/bin/env bash
# Session 31, call 6 (H200): the sampling GPU tests on the one-row-a-cluster softmax; then the
# persistent softmax (KBENCH_SOFTMAX_PERSISTENT=1, 512 threads, three row parts a CTA) against it,
# both orders, every row refchecked; its GPU tests and memcheck/racecheck.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/exp.xz /tmp/b/exp
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/exp /work/main/build/src/app/kbench
timeout 150 /tmp/b/gt --gtest_filter='*Sampling*' >"$OUT/gtest_row.log" 2>&1
echo "gtest row exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_row.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_row.log" | head -5
bash bench/norm/copy_bandwidth.sh
run() { env $1 /tmp/b/exp --testlist experiments/session31/softmax.txt --output_path "$OUT/$2.csv" >"$OUT/$2.log" 2>&1 || echo "$2 exit $?"; }
run X=0 row_1; run KBENCH_SOFTMAX_PERSISTENT=1 p_1; run KBENCH_SOFTMAX_PERSISTENT=1 p_2; run X=0 row_2
python3 - <<'PY'
import csv, glob, os
out = os.environ.get("OUT", "/tmp/out")
rows = {}
for f in sorted(glob.glob(f"{out}/*_[12].csv")):
    e = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f} {r["refcheck_status"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
PY
grep -i -m3 "error\|not supported" "$OUT/p_1.log"
KBENCH_SOFTMAX_PERSISTENT=1 timeout 150 /tmp/b/gt --gtest_filter='*Sampling*' >"$OUT/gtest_p.log" 2>&1
echo "gtest persistent exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_p.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_p.log" | head -5
printf '%s\n' '--routine softmax --batch_size 300 --vocab_size 50257 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' \
  '--routine softmax --batch_size 40 --vocab_size 128256 --input_dtype bfloat16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' \
  '--routine softmax --batch_size 500 --vocab_size 1001 --input_dtype float16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' >/tmp/san.txt
for tool in memcheck racecheck; do
  KBENCH_SOFTMAX_PERSISTENT=1 timeout 100 compute-sanitizer --tool $tool /tmp/b/exp --testlist /tmp/san.txt --refcheck >"$OUT/${tool}.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/${tool}.log" | tr '\n' ' ') refcheck passed: $(grep -c 'passed' "$OUT/${tool}.log")"
done
cd "$OUT" && tar czf results6.tgz *.csv *.log && rm -f *.csv *.log && ls
echo "end: $(smi)"
