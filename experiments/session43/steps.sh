# Session 43's device calls 1, 3-6 and 8, sourced by runN.sh: ab_call CALL CANDIDATE BASELINE TESTLIST ROUNDS
# runs the GEMM, FP4 and MoE GPU tests on CANDIDATE, TESTLIST ROUNDS rounds with BASELINE and
# CANDIDATE in turn, and compute-sanitizer memcheck and racecheck on CANDIDATE over sanitize_fp4.txt;
# results packed into $OUT/resultsCALL.tgz. Carry .ab/bin (both binaries) and build/carry/gpu_tests.xz.
source "$(dirname "${BASH_SOURCE[0]}")/../session25/common.sh"
source experiments/session35/steps.sh
source experiments/session36/steps.sh
ab_call() {
  local call=$1 candidate=$2 baseline=$3 testlist=$4 rounds=$5 r b tool
  R=/tmp/res$call; rm -rf $R; mkdir -p $R/ab/ab
  unpack_all "$candidate"
  gtests gtest_gemm.log 200 'KbenchGemm*:*Fp4*:*Moe*:GemmOperands*'
  list=experiments/session43/$testlist AB=$R/ab/ab RUN_LIMIT=120
  for r in $(seq 1 "$rounds"); do for b in "$baseline" "$candidate"; do run_as $b $r $b; done; done
  for tool in memcheck racecheck; do
    sanitize $tool "$candidate" experiments/session43/sanitize_fp4.txt ${tool}_fp4.log 150
  done
  finish "$call"
}
# profile NAME BINARY COUNT kbench-args...: Nsight Compute (full set, SASS stall samples) on COUNT
# launches of kbench's wgmma GEMM kernel after the first 2, into $R (details, source page, summary).
profile() {
  local name=$1 bin=$2 count=$3; shift 3
  timeout 200 ncu --clock-control none --set full --import-source no --kernel-name regex:wgmma_gemm_kernel --launch-skip 2 \
    --launch-count "$count" -o $R/$name /tmp/b/$bin "$@" --backends cuda --no_cuda_graph -n 3 -d 1 >$R/$name.log 2>&1
  echo "ncu $name exit $?"
  ncu -i $R/$name.ncu-rep --page details >$R/${name}_details.txt 2>&1
  ncu -i $R/$name.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T4 -6 >$R/${name}_source.csv.xz
  rm -f $R/$name.ncu-rep
  grep -E "Duration|SM Frequency|DRAM Throughput|Issue Slots Busy" $R/${name}_details.txt | head -8
}
