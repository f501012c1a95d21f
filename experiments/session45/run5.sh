#!/usr/bin/env bash
# Session 45, call 5 (H200): the swapped kernel with 64 rows of A a unit (k45h, forced by
# KBENCH_WGMMA_GEMM_TILES=swapped64) against the 16-row one and the tiled FP4 GEMM at 512 to 4096
# tokens, beside FP8; the GEMM tests (every plan forced, the 64-row one included) and the FP4 MoE tests.
source "$(dirname "$0")/steps.sh"
R=$OUT/r5
mkdir -p "$R"
unpack_all k45h
gtests gtest_fp4.log 200 'KbenchGemmGroups.WeightFp4*:MoeEndToEnd.Fp4*:MoeEndToEnd.B12x*:MoeEndToEnd.CutlassFusedMoeNvfp4:MoeEndToEnd.CuteDsl*'
rounds 2 "tiled k45h fp4_mid.txt $tiled" "s16 k45h fp4_mid.txt $swapped" "s64 k45h fp4_mid.txt KBENCH_WGMMA_GEMM_TILES=swapped64" \
  "fp8 k45h fp8_mid.txt"
for tool in memcheck racecheck; do
  sanitize $tool k45h experiments/session45/sanitize_swapped.txt ${tool}_moe64.log 100 KBENCH_WGMMA_GEMM_TILES=swapped64
done
finish 5
