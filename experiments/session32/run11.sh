#!/usr/bin/env bash
# Session 32, call 11 (H200): the sampling plans' occupancy query and cluster attribute from
# kernels/common/launch.hpp (no behaviour change intended): the sampling GPU tests and issue 16's
# target list on that build (.ab/bin/new4.xz).
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/new4.xz /tmp/b/new4
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/new4 /work/main/build/src/app/kbench
R=/tmp/res11; mkdir -p $R
timeout 150 /tmp/b/gt --gtest_filter='*Sampling*' >"$R/gtest_sampling.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest_sampling.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$R/gtest_sampling.log" | head -5
/tmp/b/new4 --testlist bench/sampling/sampling_targets.txt --output_path "$R/sampling_targets.csv" >"$R/sampling_targets.log" 2>&1 || echo "targets exit $?"
grep -c passed "$R/sampling_targets.csv"; grep -v passed "$R/sampling_targets.csv" | cut -c1-80 | head -3
tar czf "$OUT/results11.tgz" -C $R .
echo "end: $(smi)"
