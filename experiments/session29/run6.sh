#!/usr/bin/env bash
# Session 29, call 6: the decode GPU tests, memcheck and racecheck on the merge (both block shapes)
# and the decode kernels' split paths, then issue 20's decode grid on the final decode code.
source "$(dirname "$0")/../session25/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/new.xz /work/main/build/src/app/kbench
kb=/work/main/build/src/app/kbench
timeout 200 /tmp/b/gt --gtest_filter='*Decode*:*AttentionGrid*' >"$OUT/gtest_decode.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_decode.log" | tr '\n' ' ')"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --print-limit 10 /tmp/b/gt --gtest_filter='DecodeKernels.MergeManySlots:DecodeKernels.SplitKv:DecodeKernels.HeadDimsAndGroups' >"$OUT/$tool.log" 2>&1
  echo "$tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$OUT/$tool.log" | tr '\n' ' ')"
done
echo "mid: $(smi)"
nvidia-smi dmon -s pc -d 1 >"$OUT/dmon.txt" 2>&1 &
dmon=$!
$kb --testlist bench/attention_grid/decode_grid.txt --output_path $OUT/decode_grid.csv >$OUT/decode_grid.log 2>&1; echo "grid exit $?"
kill $dmon
grep -E "Testlist summary|Backends:" $OUT/decode_grid.log
echo "end: $(smi)"
