#!/usr/bin/env bash
# Session 36, call 6 (H200): t128b (main plus the groupwise 128 x 128 tile in the heuristic, clusters
# of 2) -- the GEMM and MoE GPU tests; tiles_ab.txt with main and t128b, 2 rounds in turn; Nsight
# Compute (speed of light, warp states) on one launch of kbench's 128 x 128 groupwise kernel and of
# CUTLASS's blockwise kernel (also 128 x 128) at 4096 x 7168 x 16384.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
R=/tmp/res6; rm -rf $R; mkdir -p $R
unpack_all t128b
gtests gtest.log 150 '*Gemm*:*Moe*:-MoeA2a*:MoeCommA2a*:KbenchGemmFp4*'
ab tiles experiments/session36/tiles_ab.txt 2 120
G="--routine gemm_fp8_nt_groupwise --m 4096 --n 7168 --k 16384 --scale_major_mode MN --no_cuda_graph -n 3 -d 1"
prof() {  # TAG KERNEL_REGEX BACKEND [NAME=VALUE ...]
  local tag=$1 kernel=$2 backend=$3; shift 3
  env "$@" timeout 100 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section LaunchStats --kernel-name "regex:$kernel" --launch-skip 2 --launch-count 1 \
    /tmp/b/t128b $G --backends $backend >"$R/ncu_$tag.txt" 2>&1
  echo "$tag exit $?: $(grep -E 'Duration|SM Frequency|Compute \(SM\) Throughput' "$R/ncu_$tag.txt" | tr -s ' ' | tr '\n' ';')"
}
prof kbench128 wgmma_gemm_kernel cuda KBENCH_WGMMA_GEMM_TILES=128x128 KBENCH_WGMMA_GEMM_CLUSTER=2
prof cutlass128 device_kernel cutlass
prof kbench256 wgmma_gemm_kernel cuda
finish 6
