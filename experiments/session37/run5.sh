#!/usr/bin/env bash
# Session 37, call 5 (H200): uh (the tree to land) -- the GEMM GPU tests (the split-K plan test now
# follows the tile heuristic); bench/gemm/gemm_targets.txt and the reference's GEMM and MoE sample
# lines (experiments/session35/peer_gemm_moe.txt) for the results; Nsight Compute (full set, SASS
# stall samples) on one launch of uh's groupwise kernel forced into 128 x 128 tiles and of CUTLASS's
# blockwise kernel (128 x 128 too) at 4096 x 7168 x 16384. Carry .ab/bin and build/carry.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res5; rm -rf $R; mkdir -p $R/targets $R/peer
unpack_all uh
gtests gtest.log 120 'KbenchGemm*:-KbenchGemmFp4*'
timeout 240 /tmp/b/uh --testlist bench/gemm/gemm_targets.txt --output_path $R/targets/gemm_targets.csv >$R/targets/gemm_targets.log 2>&1
echo "targets exit $?: $(grep -c passed $R/targets/gemm_targets.csv) passed rows"
timeout 120 /tmp/b/uh --testlist experiments/session35/peer_gemm_moe.txt --output_path $R/peer/peer_gemm_moe.csv >$R/peer/peer_gemm_moe.log 2>&1
echo "peer exit $?: $(grep -c passed $R/peer/peer_gemm_moe.csv) passed rows"
G="--routine gemm_fp8_nt_groupwise --m 4096 --n 7168 --k 16384 --scale_major_mode MN --no_cuda_graph -n 3 -d 1"
prof() {  # TAG KERNEL_REGEX BACKEND [NAME=VALUE ...]
  local tag=$1 kernel=$2 backend=$3; shift 3
  env "$@" timeout 150 ncu --clock-control none --set full --import-source no --kernel-name "regex:$kernel" \
    --launch-skip 2 --launch-count 1 -o $R/$tag /tmp/b/uh $G --backends $backend >$R/$tag.log 2>&1
  echo "$tag ncu exit $?"
  ncu -i $R/$tag.ncu-rep --page details >$R/${tag}_details.txt 2>&1
  ncu -i $R/$tag.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T4 -6 >$R/${tag}_source.csv.xz
  rm -f $R/$tag.ncu-rep
}
prof uh128 wgmma_gemm_kernel cuda KBENCH_WGMMA_GEMM_TILES=128x128
prof cutlass128 device_kernel cutlass
finish 5
