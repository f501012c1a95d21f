#!/usr/bin/env bash
# Session 35, call 5 (H200): s35d (the staged epilogue everywhere but weight_fp4) -- the GEMM, FP4 and
# MoE GPU tests, compute-sanitizer on the FP4 lines; then fp4_ab.txt on main, s35c and s35d, 2 rounds.
source "$(dirname "$0")/../session25/common.sh"
R=/tmp/res5; rm -rf $R; mkdir -p $R
for packed in .ab/bin/*.xz; do unpack "$packed" "/tmp/b/$(basename "$packed" .xz)"; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/s35d /work/main/build/src/app/kbench
timeout 100 /tmp/b/gt --gtest_filter='*Gemm*:*Fp4*:*Moe*:-MoeA2a*:MoeCommA2a*' >"$R/gtest.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$R/gtest.log" | head -8
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool /tmp/b/s35d --testlist experiments/session35/sanitize_fp4.txt >"$R/${tool}_fp4.log" 2>&1
  echo "$tool fp4 exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/${tool}_fp4.log" | tr '\n' ' ') passed: $(grep -c ' passed$' "$R/${tool}_fp4.log")"
done
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
OUT=$R/fp4 timeout 240 bash scripts/ab.sh run-bin experiments/session35/fp4_ab.txt 2 >$R/fp4_ab.txt 2>&1; echo "fp4 ab exit $?"
kill $dmon
python3 experiments/session35/table.py $R/fp4/ab
tar czf "$OUT/results5.tgz" -C $R .
echo "end: $(smi)"
