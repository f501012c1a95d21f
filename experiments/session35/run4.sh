#!/usr/bin/env bash
# Session 35, call 4 (H200): s35c (the staged epilogue in the FP4 paths too; main's MLA kernels) -- the
# GEMM, FP4 and MoE GPU tests, compute-sanitizer on the FP4 GEMM lines and the MoE pipelines; then
# issue 18's target list (bench/gemm/gemm_targets.txt) and the NVFP4 MoE layer with main and s35c, one
# round each (s35b's FP4 paths are main's).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/steps.sh"
R=/tmp/res4; rm -rf $R; mkdir -p $R
mkdir -p /tmp/aside && mv .ab/bin/s35b.xz /tmp/aside/
unpack_all s35c
gtests gtest.log 120 '*Gemm*:*Fp4*:*Moe*:-MoeA2a*:MoeCommA2a*'
for tool in memcheck racecheck; do sanitize $tool s35c experiments/session35/sanitize_fp4.txt ${tool}_fp4.log 60; done
nvidia-smi dmon -s pc -d 1 >"$R/dmon.txt" 2>&1 & dmon=$!
ab targets bench/gemm/gemm_targets.txt 1 250
grep -v '^#' bench/moe/deepseek_v3_nvfp4.txt | head -2 > $R/moe_nvfp4.txt
ab moe $R/moe_nvfp4.txt 1 80
kill $dmon
finish 4
