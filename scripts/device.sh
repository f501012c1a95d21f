#!/usr/bin/env bash
# Everything kbench does on a GPU machine, in one call: build with every core, run the GPU tests,
# compute-sanitizer on the kernels, and the benchmarks. Logs and CSVs go to $OUT (default
# /tmp/kbench-device), packed into results.tar.gz; the last lines printed are a short summary.
#   scripts/device.sh [stage...]     stages: info build test gtest sanitize bench bench_decode
#                                    bench_decode_fp8 bench_prefill (default: all but gtest and
#                                    bench_decode_fp8)
# gtest runs the GPU test binary with GTEST_FILTER (quick iterations on a few kernels);
# SANITIZE_FILTER picks the kernel tests compute-sanitizer runs.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-/tmp/kbench-device}
work=$out/work
mkdir -p "$work"
export KBENCH_BUILD_DIR=${KBENCH_BUILD_DIR:-$root/build-device}
export KBENCH_JOBS=${KBENCH_JOBS:-$(nproc)}
export PATH=/usr/local/cuda/bin:$PATH
stages=${*:-info build test sanitize bench bench_decode bench_prefill}
summary=()
note() { summary+=("$1"); echo "[device] $1"; }

for stage in $stages; do
  start=$(date +%s)
  case $stage in
    info)
      { nvidia-smi; nvcc --version; cmake --version; ninja --version; g++ --version | head -1
        command -v ncu compute-sanitizer; ls /usr/include/x86_64-linux-gnu/cudnn*.h 2>/dev/null | head -3; } >"$work/info.log" 2>&1
      note "info: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1)" ;;
    build)
      if scripts/build.sh >"$work/build.log" 2>&1; then note "build: ok"; else note "build: FAILED"; tail -30 "$work/build.log"; break; fi ;;
    test)
      ctest --test-dir "$KBENCH_BUILD_DIR" --output-on-failure --timeout 120 -j1 >"$work/ctest.log" 2>&1
      note "ctest: $(grep -E 'tests passed|tests failed' "$work/ctest.log" | tail -1)"
      grep -E '\(Failed\)|\(SEGFAULT\)|\(Timeout\)|Not Run' "$work/ctest.log" | head -20 ;;
    gtest)
      timeout 400 "$KBENCH_BUILD_DIR/tests/kbench_gpu_tests" --gtest_filter="${GTEST_FILTER:-*}" >"$work/gtest.log" 2>&1
      note "gtest ${GTEST_FILTER:-*}: exit $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]' "$work/gtest.log" | tr '\n' ' ')"
      grep -E '^\[  FAILED  \]|Failure|error' "$work/gtest.log" | head -30 ;;
    sanitize)
      for tool in memcheck racecheck; do
        timeout 200 compute-sanitizer --tool $tool --error-exitcode 99 "$KBENCH_BUILD_DIR/tests/kbench_gpu_tests" \
          --gtest_filter="${SANITIZE_FILTER:-RmsNormKernels.*:TensorFill.*:*RmsNormMatrix*:DecodeKernels.*:PrefillKernels.*:PrefillReference.*}" >"$work/sanitize_$tool.log" 2>&1
        note "compute-sanitizer $tool (kernel tests): exit $? $(grep -E 'ERROR SUMMARY' "$work/sanitize_$tool.log" | tail -1)"
      done
      timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 "$KBENCH_BUILD_DIR/src/app/kbench" --testlist bench/sanitize_cases.txt \
        >"$work/sanitize_kbench.log" 2>&1
      note "compute-sanitizer memcheck (kbench testlist): exit $? $(grep -E 'ERROR SUMMARY' "$work/sanitize_kbench.log" | tail -1)" ;;
    bench)
      KBENCH="$KBENCH_BUILD_DIR/src/app/kbench" timeout 300 bash bench/norm_h100.sh "$work/bench" >"$work/bench.log" 2>&1
      note "bench: exit $?"
      grep -E '^\[PERF\]|^\[ERROR\]|^\[WARNING\]|^# ' "$work/bench.log" | tail -60 ;;
    bench_decode)
      KBENCH="$KBENCH_BUILD_DIR/src/app/kbench" timeout 400 bash bench/decode_h100.sh "$work/bench_decode" >"$work/bench_decode.log" 2>&1
      note "bench_decode: exit $?"
      grep -E '^\[PERF\]|^\[ERROR\]|^\[WARNING\]|speedup' "$work/bench_decode.log" | tail -60 ;;
    bench_decode_fp8)
      timeout 200 "$KBENCH_BUILD_DIR/src/app/kbench" --testlist bench/decode_fp8_h100.txt \
        --output_path "$work/decode_fp8_h100.csv" >"$work/decode_fp8_h100.log" 2>&1
      note "bench_decode_fp8: exit $?"
      grep -E '^\[PERF\]|^\[ERROR\]|^\[WARNING\]' "$work/decode_fp8_h100.log" ;;
    bench_prefill)
      KBENCH="$KBENCH_BUILD_DIR/src/app/kbench" timeout 500 bash bench/prefill_h100.sh "$work/bench_prefill" >"$work/bench_prefill.log" 2>&1
      note "bench_prefill: exit $?"
      grep -E '^\[PERF\]|^\[ERROR\]|^\[WARNING\]|refcheck' "$work/bench_prefill.log" | tail -60 ;;
    *) note "unknown stage $stage" ;;
  esac
  note "$stage took $(( $(date +%s) - start )) s"
done
tar -C "$work" -czf "$out/results.tar.gz" . && rm -rf "$work"
printf '%s\n' "${summary[@]}"
