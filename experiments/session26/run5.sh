#!/usr/bin/env bash
# Session 26, call 6: the final code. A/B of the balanced schedule with a request's row blocks side
# by side ("side") against main (p0), two rounds; issue 19's MLA lines with FlashInfer built (fi:
# the final code with KBENCH_WITH_FLASHINFER=ON), one run; the whole GPU test binary (what ctest -L
# gpu runs) with the side kbench and the fault probe at their build paths.
source "$(dirname "$0")/../session25/common.sh"
mv .ab/bin/fi.xz /tmp/fi.xz 2>/dev/null
scripts/ab.sh run-bin experiments/session26/ab_balanced.txt 2
grep -h "INFO\] line" "$OUT"/ab/*.log | grep -v "passed" | head -5
tar -C "$OUT" -cJf "$OUT/ab_balanced.tar.xz" ab && rm -rf "$OUT/ab"
echo "after ab: $(smi)"
if [ -f /tmp/fi.xz ]; then
  unpack /tmp/fi.xz /tmp/b/fi
  /tmp/b/fi --testlist bench/attention/mla/mla_targets.txt --output_path "$OUT/mla_targets.csv" >"$OUT/mla_targets.log" 2>&1
  echo "targets exit $?"; grep -E '^\[PERF\]|Backends' "$OUT/mla_targets.log" | head -60
  echo "after targets: $(smi)"
fi
unpack build/carry/gpu_tests.xz /tmp/b/gt
unpack .ab/bin/side.xz /work/main/build/src/app/kbench
unpack build/carry_keep/fault_probe.xz /work/main/build/tests/kbench_fault_probe
timeout 420 /tmp/b/gt >"$OUT/gtest_all.log" 2>&1
echo "gtest all exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran|DISABLED' "$OUT/gtest_all.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$OUT/gtest_all.log" | head
xz -T0 "$OUT/gtest_all.log"
echo "end: $(smi)"
