#!/usr/bin/env bash
# Session 45, call 3 (H200): the landed code (k45f: the swapped kernel with four consumer warpgroups,
# MXFP4's integer factor, the plan's 16-row rule). The FP4 layer against the tiled FP4 GEMM and
# beside FP8 (two rounds), compute-sanitizer on the FP4 MoE, the whole GPU test binary and
# FlashInfer's sample testlist unchanged; where the swapped kernel spills (ptxas: 16 bytes).
source "$(dirname "$0")/steps.sh"
R=$OUT/r3
mkdir -p "$R"
unpack_all k45f
RUN_LIMIT=200 final_rounds 2
for tool in memcheck racecheck; do sanitize $tool k45f experiments/session45/sanitize_swapped.txt ${tool}_moe.log 100; done
cuobjdump -sass -fun _ZN6kbench7kernels4gemm4sm9011fp4_swapped18fp4_swapped_kernelILNS_5DTypeE0EEEvNS2_13WgmmaGemmArgsE \
  /tmp/b/k45f > "$R/swapped_bf16.sass" 2>&1
grep -nE "STL|LDL" "$R/swapped_bf16.sass" | head -20
python3 experiments/session35/table.py "$R"/ab
verify k45f
finish 3
