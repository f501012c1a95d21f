#!/usr/bin/env bash
# Session 35, call 4 (H200): s35c (the staged epilogue in the FP4 paths too; main's MLA kernels) -- the
# GEMM, FP4 and MoE GPU tests, compute-sanitizer on the FP4 GEMM lines and the MoE pipelines; then
# issue 18's target list (bench/gemm/gemm_targets.txt) and the NVFP4 MoE layer with main and s35c, one
# round each (s35b's FP4 paths are main's).
source "$(dirname "$0")/../session25/common.sh"
R=/tmp/res4; rm -rf $R; mkdir -p $R
mkdir -p /tmp/aside && mv .ab/bin/s35b.xz /tmp/aside/
for packed in .ab/bin/*.xz; do unpack "$packed" "/tmp/b/$(basename "$packed" .xz)"; done
unpack build/carry/gpu_tests.xz /tmp/b/gt
cp /tmp/b/s35c /work/main/build/src/app/kbench
timeout 120 /tmp/b/gt --gtest_filter='*Gemm*:*Fp4*:*Moe*:-MoeA2a*:MoeCommA2a*' >"$R/gtest.log" 2>&1
echo "gtest exit $?: $(grep -E '^\[  (PASSED|FAILED)|tests ran' "$R/gtest.log" | tr '\n' ' ')"
grep -E '^\[  FAILED' "$R/gtest.log" | head -8
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool /tmp/b/s35c --testlist experiments/session35/sanitize_fp4.txt >"$R/${tool}_fp4.log" 2>&1
  echo "$tool fp4 exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$R/${tool}_fp4.log" | tr '\n' ' ') passed: $(grep -c ' passed$' "$R/${tool}_fp4.log")"
done
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
OUT=$R/targets timeout 250 bash scripts/ab.sh run-bin bench/gemm/gemm_targets.txt 1 >$R/targets_ab.txt 2>&1; echo "targets exit $?"
grep -v '^#' bench/moe/deepseek_v3_nvfp4.txt | head -2 > $R/moe_nvfp4.txt
OUT=$R/moe timeout 80 bash scripts/ab.sh run-bin $R/moe_nvfp4.txt 1 >$R/moe_ab.txt 2>&1; echo "moe nvfp4 exit $?"
kill $dmon
python3 experiments/session35/table.py $R/targets/ab $R/moe/ab
tar czf "$OUT/results4.tgz" -C $R .
echo "end: $(smi)"
