#!/usr/bin/env bash
# Session 37, call 2 (H200): gw_ab.txt with main, sc (the landed scale copier) and three variants on it
# (rel, ho), 2 rounds in turn; moe_ab.txt with main and sc; decode_ab.txt on sc in the
# heuristic's, 128 x 128 and 64 x 128 tiles; Nsight Compute (full set, SASS stall samples) on one
# launch of sc's 128 x 256 kernel at 4096 x 7168 x 16384. Carry .ab/bin (scripts/ab.sh pack).
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res2; rm -rf $R; mkdir -p $R/gw/ab $R/moe/ab $R/decode/ab
unpack_bins
list=experiments/session37/gw_ab.txt AB=$R/gw/ab RUN_LIMIT=90
for r in 1 2; do for b in main sc rel ho; do run_as $b $r $b; done; done
list=experiments/session37/moe_ab.txt AB=$R/moe/ab RUN_LIMIT=90
run_as main 1 main; run_as sc 1 sc
list=experiments/session37/decode_ab.txt AB=$R/decode/ab RUN_LIMIT=60
run_as sc 1 sc; run_as sc128 1 sc KBENCH_WGMMA_GEMM_TILES=128x128; run_as sc64 1 sc KBENCH_WGMMA_GEMM_TILES=64x128
timeout 150 ncu --clock-control none --set full --import-source no --kernel-name regex:wgmma_gemm_kernel --launch-skip 2 \
  --launch-count 1 -o $R/sc256 /tmp/b/sc --routine gemm_fp8_nt_groupwise --m 4096 --n 7168 --k 16384 --scale_major_mode MN \
  --backends cuda --no_cuda_graph -n 3 -d 1 >$R/sc256.log 2>&1
echo "ncu exit $?"
ncu -i $R/sc256.ncu-rep --page details >$R/sc256_details.txt 2>&1
ncu -i $R/sc256.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T4 -6 >$R/sc256_source.csv.xz
rm -f $R/sc256.ncu-rep
finish 2
