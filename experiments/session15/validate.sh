#!/usr/bin/env bash
# Session 15's first validation call (FlashInfer built): the merged rope, nvfp4 and GEMM split-K
# work's GPU tests, then the RoPE, quantization and GEMM benchmark sets; summaries on stdout.
#   experiments/session15/validate.sh OUT_DIR
set -uo pipefail
out=$1
GTEST_TIMEOUT=240 GTEST_FILTER='RopeKernels.*:RopeEndToEnd.*:QuantizeKernels.*:KbenchGemmSplitK.*:KbenchGemm.*:SamplingKernels.*' \
  OUT=$out/t scripts/device.sh info build gtest 2>&1 | grep -E '^\[device\]|FAILED|Failure' | head -30
grep -q 'build: ok' "$out/t/work/build.log" 2>/dev/null || ls build-device/src/app/kbench >/dev/null || exit 1
for set in rope quantization gemm; do
  OUT=$out/b_$set BENCH_TIMEOUT=200 scripts/device.sh bench:$set 2>&1 | grep -E '^\[device\]'
done
python3 experiments/session15/summarize.py "$out"/b_rope "$out"/b_quantization "$out"/b_gemm
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader
