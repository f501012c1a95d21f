#!/usr/bin/env bash
# Session 35, call 2 (H200): s35b (call 1's staged epilogue, and FC1's GLU epilogue staged too): the
# whole GPU test binary, then compute-sanitizer memcheck and racecheck on the GEMM routines (both tile
# shapes) and the MoE pipelines.
source "$(dirname "$0")/../session25/common.sh"
R=/tmp/res2; rm -rf $R; mkdir -p $R
unpack .ab/bin/s35b.xz /tmp/b/s35b; unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/s35b /work/main/build/src/app/kbench
timeout 330 /tmp/b/gt >"$R/gtest_all.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran' "$R/gtest_all.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$R/gtest_all.log" | head -8
for tool in memcheck racecheck; do
  for tiles in 128x256 64x128; do
    KBENCH_WGMMA_GEMM_TILES=$tiles KBENCH_WGMMA_GEMM_CLUSTER=$([ $tiles = 128x256 ] && echo 2 || echo 1) timeout 60 \
      compute-sanitizer --tool $tool /tmp/b/s35b --testlist experiments/session35/sanitize_cases.txt >"$R/${tool}_$tiles.log" 2>&1
    echo "$tool $tiles exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/${tool}_$tiles.log" | tr '\n' ' ') passed: $(grep -c 'passed' "$R/${tool}_$tiles.log")"
  done
  timeout 90 compute-sanitizer --tool $tool /tmp/b/s35b --testlist experiments/session35/sanitize_moe.txt >"$R/${tool}_moe.log" 2>&1
  echo "$tool moe exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/${tool}_moe.log" | tr '\n' ' ') passed: $(grep -c 'passed' "$R/${tool}_moe.log")"
done
xz -T0 -6 "$R/gtest_all.log"
tar czf "$OUT/results2.tgz" -C $R .
echo "end: $(smi)"
