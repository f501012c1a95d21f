#!/usr/bin/env bash
# Session 31, call 7 (H200): the landed softmax (.ab/bin/new.xz) against main (f2b2049), both orders,
# every row refchecked; issue 16's targets (bench/sampling/sampling_targets.txt) on the landed build;
# the sampling GPU tests; memcheck/racecheck on softmax lines (cluster of 1, 2, 8; 16-bit and
# unaligned rows).
source "$(dirname "$0")/../session25/common.sh"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
unpack .ab/bin/main.xz /tmp/b/main; unpack .ab/bin/new.xz /tmp/b/new
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/new /work/main/build/src/app/kbench
R=/tmp/res; mkdir -p $R
bash bench/norm/copy_bandwidth.sh; mv "$OUT/copy_bandwidth.log" $R/
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
run() { /tmp/b/$1 --testlist experiments/session31/softmax.txt --output_path "$R/softmax_$1_$2.csv" >"$R/softmax_$1_$2.log" 2>&1 || echo "$1 $2 exit $?"; }
run main 1; run new 1; run new 2; run main 2
/tmp/b/new --testlist bench/sampling/sampling_targets.txt --output_path "$R/sampling_targets.csv" >"$R/sampling_targets.log" 2>&1 || echo "targets exit $?"
kill $dmon
python3 - <<'PY'
import csv, glob, os
rows = {}
for f in sorted(glob.glob("/tmp/res/softmax_*_[12].csv")):
    e = os.path.basename(f)[8:-4]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["case_tag"], r["backend"]), []).append(f'{e} {float(r["median_time"]) * 1000:.1f} {float(r["tb_per_sec"]):.3f} {r["refcheck_status"]} {r["sm_clock_mhz"]}')
for k in sorted(rows): print(*k, " | ".join(rows[k]))
for r in csv.DictReader(open("/tmp/res/sampling_targets.csv")):
    print("target", r["case_tag"], r["backend"], f'{float(r["median_time"]) * 1000:.1f}', f'{float(r["tb_per_sec"]):.3f}', r["refcheck_status"], r["sm_clock_mhz"])
PY
timeout 150 /tmp/b/gt --gtest_filter='*Sampling*' >"$R/gtest_sampling.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_sampling.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$R/gtest_sampling.log" | head -5
grep softmax bench/racecheck_sampling_cases.txt >/tmp/san.txt
printf '%s\n' '--routine softmax --batch_size 3 --vocab_size 128256 --input_dtype bfloat16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' \
  '--routine softmax --batch_size 300 --vocab_size 50257 --input_dtype float32 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' \
  '--routine softmax --batch_size 7 --vocab_size 1001 --input_dtype float16 --backends cuda --no_cuda_graph --use_cuda_events -n 1 -d 0' >>/tmp/san.txt
cp /tmp/san.txt $R/sanitize_cases.txt
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool /tmp/b/new --testlist /tmp/san.txt --refcheck >"$R/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$tool.log" | tr '\n' ' ') refcheck passed: $(grep -c 'passed' "$R/$tool.log")"
done
tar czf "$OUT/results7.tgz" -C $R .
echo "end: $(smi)"
