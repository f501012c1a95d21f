#!/usr/bin/env bash
# Session 29, call 8 (the final code): the whole GPU test binary but the isolation tests (they need
# the fault probe, not carried), then issue 20's no-regression run: the issue-3 and issue-4
# testlists, to be `kbench compare`d here with their committed figures.
source "$(dirname "$0")/../session25/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/new.xz /work/main/build/src/app/kbench
kb=/work/main/build/src/app/kbench
timeout 330 /tmp/b/gt --gtest_filter='-Isolation.*' >"$OUT/gtest_all.log" 2>&1
echo "gtest all exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran|DISABLED' "$OUT/gtest_all.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_all.log" | head
echo "mid: $(smi)"
for list in decode/decode_h100 decode/decode_fp8_h100 prefill/prefill_h100 prefill/prefill_paged_sweep_h100; do
  name=$(basename $list)
  timeout 100 $kb --testlist bench/attention/$list.txt --output_path "$OUT/$name.csv" >>"$OUT/noreg.log" 2>&1
  echo "$name exit $?: $(grep -E 'Backends:' "$OUT/noreg.log" | tail -1)"
done
echo "end: $(smi)"
