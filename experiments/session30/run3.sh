#!/usr/bin/env bash
# Session 30, call 3: the whole GPU test binary but the isolation tests (they need the fault probe,
# not carried), built for sm_90a SASS only (no PTX), then issue 4's ragged/paged prefill testlist
# (no regression against its committed figures).
source "$(dirname "$0")/../session25/common.sh"
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/new.xz /work/main/build/src/app/kbench
kb=/work/main/build/src/app/kbench
timeout 330 /tmp/b/gt --gtest_filter='-Isolation.*' >"$OUT/gtest_all.log" 2>&1
echo "gtest all exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$OUT/gtest_all.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_all.log" | head
echo "mid: $(smi)"
timeout 220 $kb --testlist bench/attention/prefill/prefill_h100.txt --output_path "$OUT/prefill_h100.csv" >"$OUT/prefill_h100.log" 2>&1
echo "prefill_h100 exit $?: $(grep -E 'Backends' "$OUT/prefill_h100.log" | tail -1)"
echo "end: $(smi)"
