#!/usr/bin/env bash
# Everything kbench does on a GPU machine, in one call: build with every core, run the GPU tests,
# compute-sanitizer on the kernels, and the benchmarks. Logs and CSVs go to $OUT (default
# /tmp/kbench-device), packed into results.tar.gz; the last lines printed are a short summary.
#   scripts/device.sh [stage...]     stages: info build test gtest sanitize sanitize_kbench racecheck_fa3
#                                    peer (FlashInfer's sample testlist, refchecked) racecheck_sampling
#                                    racecheck:NAME (bench/racecheck_NAME_cases.txt: gemm, quant_rope)
#                                    bench:SET (bench/run.sh SET: norm, attention/decode, attention/prefill,
#                                    flashinfer, timing, clocks, sweep, multigpu, sampling, sampling/grid)
#                                    ncu (NCU_LIST lines) ncu_prefill (default: info build test sanitize sanitize_kbench racecheck_fa3
#                                    racecheck_sampling racecheck:gemm bench:norm bench:attention/decode bench:attention/prefill
#                                    bench:flashinfer bench:sampling; bench:sampling/grid takes ~30 minutes:
#                                    BENCH_TIMEOUT=3000)
# The build turns on FlashInfer's kernels (backend flashinfer*: KBENCH_WITH_FLASHINFER=ON, headers
# from .deps/flashinfer-*.tar.xz, made here by KBENCH_WITH_FLASHINFER=1 scripts/deps.sh; carry .deps).
# test runs ctest (CTEST_LABEL: only the tests of that label, e.g. gpu); gtest runs the GPU test binary with GTEST_FILTER (quick iterations on a few kernels);
# SANITIZE_FILTER picks the kernel tests compute-sanitizer runs, SANITIZE_TOOLS its tools (memcheck
# racecheck), SANITIZE_TIMEOUT the seconds each may take (200); NCU_CASES the ncu_prefill cases
# (ragged_causal ragged_full paged_causal, the default, and deepseek).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-/tmp/kbench-device}
work=$out/work
mkdir -p "$work"
export KBENCH_BUILD_DIR=${KBENCH_BUILD_DIR:-$root/build-device}
export KBENCH_JOBS=${KBENCH_JOBS:-$(nproc)}
export PATH=/usr/local/cuda/bin:$PATH
export KBENCH_CMAKE_ARGS=${KBENCH_CMAKE_ARGS:--DKBENCH_WITH_FLASHINFER=ON}
export KBENCH_WITH_FLASHINFER=1
stages=${*:-info build test sanitize sanitize_kbench racecheck_fa3 racecheck_sampling racecheck:gemm bench:norm bench:attention/decode bench:attention/prefill bench:flashinfer bench:sampling}
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
      # Without GTEST_FILTER: the build's test discovery honours it, and ctest would then hold only
      # the filtered tests.
      if env -u GTEST_FILTER scripts/build.sh >"$work/build.log" 2>&1; then note "build: ok"; else note "build: FAILED"; tail -30 "$work/build.log"; break; fi ;;
    test)
      ctest --test-dir "$KBENCH_BUILD_DIR" --output-on-failure --timeout 120 -j1 ${CTEST_LABEL:+-L "$CTEST_LABEL"} >"$work/ctest.log" 2>&1
      note "ctest: $(grep -E 'tests passed|tests failed' "$work/ctest.log" | tail -1)"
      grep -E '\(Failed\)|\(SEGFAULT\)|\(Timeout\)|Not Run' "$work/ctest.log" | head -20 ;;
    gtest)
      timeout "${GTEST_TIMEOUT:-400}" "$KBENCH_BUILD_DIR/tests/kbench_gpu_tests" --gtest_filter="${GTEST_FILTER:-*}" >"$work/gtest.log" 2>&1
      note "gtest ${GTEST_FILTER:-*}: exit $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]' "$work/gtest.log" | tr '\n' ' ')"
      grep -E '^\[  FAILED  \]|Failure|error' "$work/gtest.log" | head -30 ;;
    sanitize)
      for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
        timeout "${SANITIZE_TIMEOUT:-200}" compute-sanitizer --tool $tool --error-exitcode 99 "$KBENCH_BUILD_DIR/tests/kbench_gpu_tests" \
          --gtest_filter="${SANITIZE_FILTER:-RmsNormKernels.*:TensorFill.*:*RmsNormMatrix*:DecodeKernels.*:PrefillKernels.*:PrefillReference.*}" >"$work/sanitize_$tool.log" 2>&1
        note "compute-sanitizer $tool (kernel tests): exit $? $(grep -E 'ERROR SUMMARY' "$work/sanitize_$tool.log" | tail -1)"
      done ;;
    sanitize_kbench)
      timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 "$KBENCH_BUILD_DIR/src/app/kbench" --testlist bench/sanitize_cases.txt \
        >"$work/sanitize_kbench.log" 2>&1
      note "compute-sanitizer memcheck (kbench testlist): exit $? $(grep -E 'ERROR SUMMARY' "$work/sanitize_kbench.log" | tail -1)" ;;
    racecheck_fa3|racecheck_sampling|racecheck:*)
      # racecheck on kbench itself over bench/racecheck_<name>_cases.txt (fa3, sampling, gemm): one
      # launch of each kernel and path (the kernel tests run every backend and the reference under
      # it and take minutes).
      name=${stage#racecheck_}; name=${name#racecheck:}
      timeout "${SANITIZE_TIMEOUT:-200}" compute-sanitizer --tool racecheck --racecheck-report all --error-exitcode 99 \
        "$KBENCH_BUILD_DIR/src/app/kbench" --testlist "bench/racecheck_${name}_cases.txt" >"$work/racecheck_$name.log" 2>&1
      note "compute-sanitizer racecheck ($name cases): exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$work/racecheck_$name.log" | tr '\n' ' ')" ;;
    peer)
      # FlashInfer's own sample testlist, unchanged, with every case refchecked (PEER_TESTLIST: a
      # copy of ../shared/peer/flashinfer_sample_testlist.txt, carried in .deps/peer by default).
      testlist=${PEER_TESTLIST:-.deps/peer/flashinfer_sample_testlist.txt}
      rm -f "$work/peer.csv"
      timeout "${BENCH_TIMEOUT:-500}" "$KBENCH_BUILD_DIR/src/app/kbench" --testlist "$testlist" --refcheck \
        --output_path "$work/peer.csv" >"$work/peer.log" 2>&1
      note "peer: exit $? $(grep -E 'Testlist summary|\] Backends:' "$work/peer.log" | tr '\n' ' ')"
      grep -E '^\[ERROR\]' "$work/peer.log" | head -20 ;;
    bench:*)
      set_name=${stage#bench:}
      log=$work/bench_${set_name//\//_}.log
      KBENCH="$KBENCH_BUILD_DIR/src/app/kbench" timeout "${BENCH_TIMEOUT:-500}" bash bench/run.sh "$set_name" \
        "$work/bench_${set_name//\//_}" >"$log" 2>&1
      note "$stage: exit $?"
      grep -E '^\[PERF\]|^\[ERROR\]|^\[WARNING\]|^\[INFO\] Backends|speedup' "$log" | tail -60 ;;
    ncu)
      # Nsight Compute on one launch of each line of NCU_LIST (scripts/ncu_cases.txt): "tag|kernel regex|kbench
      # arguments" (details + per-instruction stall samples), for kernels under tuning.
      kb="$KBENCH_BUILD_DIR/src/app/kbench"
      while IFS='|' read -r tag kernel args; do
        [[ -z "$tag" || "$tag" == \#* ]] && continue
        read -ra extra <<<"$args"
        timeout 120 ncu --clock-control none --set full --import-source no --kernel-name "regex:$kernel" --launch-skip 2 \
          --launch-count 1 -o "$work/ncu_$tag" "$kb" "${extra[@]}" --no_cuda_graph -n 3 -d 1 >"$work/ncu_$tag.log" 2>&1
        ncu -i "$work/ncu_$tag.ncu-rep" --page details >"$work/ncu_${tag}_details.txt" 2>&1
        ncu -i "$work/ncu_$tag.ncu-rep" --page source --csv --print-source sass >"$work/ncu_${tag}_source.csv" 2>&1
        rm -f "$work/ncu_$tag.ncu-rep"
        note "ncu $tag: $(grep -E 'Duration|Memory Throughput|Compute \(SM\) Throughput' "$work/ncu_${tag}_details.txt" | head -3 | tr -s ' ' | tr '\n' ';')"
      done <"${NCU_LIST:-scripts/ncu_cases.txt}" ;;
    ncu_prefill)
      # Nsight Compute on one fa3 launch of each issue case (details + per-instruction stall samples).
      kb="$KBENCH_BUILD_DIR/src/app/kbench"
      base=(--backends fa3 --no_cuda_graph --use_cuda_events -n 2 -d 1)
      head128="--batch_size 16 --s_qo 4096 --s_kv 4096 --num_qo_heads 64 --num_kv_heads 8 --head_dim_qk 128 --head_dim_vo 128"
      deepseek="--batch_size 16 --s_qo 1024 --s_kv 1024 --num_qo_heads 128 --num_kv_heads 128 --head_dim_qk 192 --head_dim_vo 128"
      for c in "ragged_causal:--routine BatchPrefillWithRaggedKVCacheWrapper --causal $head128" \
               "ragged_full:--routine BatchPrefillWithRaggedKVCacheWrapper $head128" \
               "paged_causal:--routine BatchPrefillWithPagedKVCacheWrapper --page_size 16 --causal $head128" \
               "deepseek:--routine BatchPrefillWithRaggedKVCacheWrapper --causal $deepseek"; do
        tag=${c%%:*}; read -ra extra <<<"${c#*:}"
        [[ " ${NCU_CASES:-ragged_causal ragged_full paged_causal} " == *" $tag "* ]] || continue
        timeout 150 ncu --clock-control none --set full --import-source no --kernel-name regex:fa3_prefill --launch-skip 1 \
          --launch-count 1 -o "$work/ncu_$tag" "$kb" "${extra[@]}" "${base[@]}" >"$work/ncu_$tag.log" 2>&1
        ncu -i "$work/ncu_$tag.ncu-rep" --page details >"$work/ncu_${tag}_details.txt" 2>&1
        ncu -i "$work/ncu_$tag.ncu-rep" --page source --csv --print-source sass >"$work/ncu_${tag}_source.csv" 2>&1
        note "ncu $tag: $(grep -E 'Duration|Compute \(SM\) Throughput' "$work/ncu_${tag}_details.txt" | head -2 | tr -s ' ' | tr '\n' ';')"
      done ;;
    *) note "unknown stage $stage" ;;
  esac
  note "$stage took $(( $(date +%s) - start )) s"
done
tar -C "$work" -czf "$out/results.tar.gz" . && rm -rf "$work"
printf '%s\n' "${summary[@]}"
