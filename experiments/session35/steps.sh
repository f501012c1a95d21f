# Session 35's device steps, sourced by runN.sh after ../session25/common.sh, with $R the call's
# result folder (packed into $OUT/resultsN.tgz at the end).
# unpack_all CANDIDATE: every carried .ab/bin/*.xz into /tmp/b/NAME, the GPU tests into /tmp/b/gt,
# CANDIDATE's kbench where the GPU tests look for it.
unpack_all() {
  for packed in .ab/bin/*.xz; do unpack "$packed" "/tmp/b/$(basename "$packed" .xz)"; done
  unpack build/carry/gpu_tests.xz /tmp/b/gt
  cp "/tmp/b/$1" /work/main/build/src/app/kbench
}
# gtests LOG LIMIT [FILTER]: the GPU test binary (all of it without FILTER).
gtests() {
  timeout "$2" /tmp/b/gt ${3:+--gtest_filter="$3"} >"$R/$1" 2>&1
  echo "$1 exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED)|tests ran' "$R/$1" | tr '\n' ' ')"
  grep -E '^\[  FAILED' "$R/$1" | head -8
}
# sanitize TOOL BINARY TESTLIST LOG LIMIT [NAME=VALUE ...]: compute-sanitizer on BINARY's run of
# TESTLIST, with the environment variables given.
sanitize() {
  local tool=$1 binary=$2 list=$3 log=$4 limit=$5
  shift 5
  env "$@" timeout "$limit" compute-sanitizer --tool "$tool" "/tmp/b/$binary" --testlist "$list" >"$R/$log" 2>&1
  echo "$log exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/$log" | tr '\n' ' ') passed: $(grep -c ' passed$' "$R/$log")"
}
# gemm_sanitizers BINARY: memcheck and racecheck on sanitize_cases.txt in 128 x 256 tiles (clusters
# of 2) and 64 x 128 tiles.
gemm_sanitizers() {
  local tool
  for tool in memcheck racecheck; do
    sanitize $tool "$1" experiments/session35/sanitize_cases.txt ${tool}_128x256.log 100 KBENCH_WGMMA_GEMM_TILES=128x256 KBENCH_WGMMA_GEMM_CLUSTER=2
    sanitize $tool "$1" experiments/session35/sanitize_cases.txt ${tool}_64x128.log 100 KBENCH_WGMMA_GEMM_TILES=64x128 KBENCH_WGMMA_GEMM_CLUSTER=1
  done
}
# ab NAME TESTLIST ROUNDS LIMIT: every carried binary on TESTLIST, ROUNDS rounds in turn, into $R/NAME.
ab() {
  OUT=$R/$1 timeout "$4" bash scripts/ab.sh run-bin "$2" "$3" >"$R/$1_ab.txt" 2>&1
  echo "$1 ab exit $?"
}
# finish CALL: the medians of every ab folder, and the results packed.
finish() {
  python3 experiments/session35/table.py "$R"/*/ab
  tar czf "$OUT/results$1.tgz" -C "$R" .
  echo "end: $(smi)"
}
