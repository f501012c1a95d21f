#!/usr/bin/env bash
# Session 12's device call (run from the repository root): build (FlashInfer off), the GPU tests of
# the quantizers and the FP4 norms, the quantizer and fused-norm testlists with the SM clock and
# power sampled, the copy bandwidth, then compute-sanitizer memcheck and racecheck on the kernel
# tests (SANITIZE=1).
# Logs and CSVs under $OUT.
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
build=${KBENCH_BUILD_DIR:-/tmp/build-quant}
dir=bench/results/h100/quantization/session12
norm=bench/results/h100/norm/fp4_session12
filter='Quant*:*Fp4*:FusedNorm*'
final=$OUT
OUT=$(mktemp -d)  # every log here, packed into $final/logs.tar.gz at the end (the CSVs and bench logs also beside it)
trap 'cp "$OUT"/*.csv "$OUT"/quant_targets.log "$OUT"/fp4_norms.log "$final"/ 2>/dev/null; tar -C "$OUT" -czf "$final/logs.tar.gz" .' EXIT
KBENCH_BUILD_DIR=$build KBENCH_CMAKE_ARGS=-DKBENCH_WITH_FLASHINFER=OFF scripts/build.sh >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "build ok"
timeout 200 "$build/tests/kbench_gpu_tests" --gtest_filter="$filter" >"$OUT/gtest.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$OUT/gtest.log" | tr '\n' ' ')"
grep -E 'Failure|Expected|first mismatching|FAILED' "$OUT/gtest.log" | head -20
nvidia-smi dmon -s pc -d 1 >"$OUT/dmon.txt" 2>&1 &
dmon=$!
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv >"$OUT/clocks_before.txt" 2>&1
for list in $dir/quant_targets.txt $norm/fp4_norms.txt; do
  name=$(basename "$list" .txt)
  echo "\$ kbench --testlist $list --output_path $name.csv"
  timeout 150 "$build/src/app/kbench" --testlist "$list" --output_path "$OUT/$name.csv" >"$OUT/$name.log" 2>&1
  echo "exit $?"
  grep -E '^\[PERF\]|^\[ERROR\]|Testlist summary' "$OUT/$name.log"
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv >"$OUT/clocks_after.txt" 2>&1
source bench/norm/copy_bandwidth.sh >/dev/null 2>&1; cat "$OUT/copy_bandwidth.log" 2>/dev/null | tail -1
kill $dmon
if [ "${SANITIZE:-0}" = 1 ]; then
  for tool in memcheck racecheck; do
    timeout ${SANITIZE_TIMEOUT:-100} compute-sanitizer --tool $tool --error-exitcode 99 "$build/tests/kbench_gpu_tests" \
      --gtest_filter='QuantizeKernels.*:FusedNormKernels.Fp4*' >"$OUT/sanitize_$tool.log" 2>&1
    echo "sanitize $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize_$tool.log" | tail -1) $(grep -E '^\[  PASSED|^\[  FAILED' "$OUT/sanitize_$tool.log" | tr '\n' ' ')"
  done
fi
