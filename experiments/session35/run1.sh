#!/usr/bin/env bash
# Session 35, call 1 (H200): the staged GEMM epilogue (.ab/bin/new.xz; with it the MLA consumers'
# keyless-segment marking through is_empty_split, session 34's empty_split_dedupe.patch) against main
# (.ab/bin/main.xz): the GEMM and MLA GPU tests, compute-sanitizer on the GEMM routines (both tile
# shapes, clusters of 2) and the MLA cases, then gemm_ab.txt (3 rounds) and session 34's mla_ab.txt
# (2 rounds), the binaries in turn.
source "$(dirname "$0")/../session25/common.sh"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv,noheader
R=/tmp/res1; rm -rf $R; mkdir -p $R
for packed in .ab/bin/*.xz; do unpack "$packed" "/tmp/b/$(basename "$packed" .xz)"; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/new /work/main/build/src/app/kbench
timeout 300 /tmp/b/gt --gtest_filter='KbenchGemm*:CutlassGemm.KbenchRefchecksEndToEnd:*Mla*' >"$R/gtest.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$R/gtest.log" | head -8
for tool in memcheck racecheck; do
  for tiles in 128x256 64x128; do
    KBENCH_WGMMA_GEMM_TILES=$tiles KBENCH_WGMMA_GEMM_CLUSTER=$([ $tiles = 128x256 ] && echo 2 || echo 1) timeout 100 \
      compute-sanitizer --tool $tool /tmp/b/new --testlist experiments/session35/sanitize_cases.txt >"$R/${tool}_$tiles.log" 2>&1
    echo "$tool $tiles exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/${tool}_$tiles.log" | tr '\n' ' ') passed: $(grep -c 'passed' "$R/${tool}_$tiles.log")"
  done
  timeout 120 compute-sanitizer --tool $tool /tmp/b/new --testlist experiments/session33/sanitize_mla.txt >"$R/${tool}_mla.log" 2>&1
  echo "$tool mla exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/${tool}_mla.log" | tr '\n' ' ')"
done
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
OUT=$R/gemm timeout 420 bash scripts/ab.sh run-bin experiments/session35/gemm_ab.txt 3 >$R/gemm_ab.txt 2>&1; echo "gemm ab exit $?"
OUT=$R/mla timeout 200 bash scripts/ab.sh run-bin experiments/session34/mla_ab.txt 2 >$R/mla_ab.txt 2>&1; echo "mla ab exit $?"
kill $dmon
python3 experiments/session35/table.py $R/gemm/ab $R/mla/ab
tar czf "$OUT/results1.tgz" -C $R .
echo "end: $(smi)"
