#!/usr/bin/env bash
# Session 36, call 8 (H200): Nsight Compute --set full (SASS stall samples) on one launch of
# kbench's groupwise kernel in 128 x 128 tiles (t128b, clusters of 2) at 4096 x 7168 x 16384.
source "$(dirname "$0")/../session25/common.sh"
R=/tmp/res8; rm -rf $R; mkdir -p $R
unpack .ab/bin/t128b.xz /tmp/b/t128b
KBENCH_WGMMA_GEMM_TILES=128x128 KBENCH_WGMMA_GEMM_CLUSTER=2 timeout 120 ncu --clock-control none --set full \
  --import-source no --kernel-name regex:wgmma_gemm_kernel --launch-skip 2 --launch-count 1 -o $R/k128 \
  /tmp/b/t128b --routine gemm_fp8_nt_groupwise --m 4096 --n 7168 --k 16384 --scale_major_mode MN --backends cuda \
  --no_cuda_graph -n 3 -d 1 >$R/k128.log 2>&1
echo "ncu exit $?"
ncu -i $R/k128.ncu-rep --page details >$R/k128_details.txt 2>&1
ncu -i $R/k128.ncu-rep --page source --csv --print-source sass >$R/k128_source.csv 2>&1
rm -f $R/k128.ncu-rep
tar czf "$OUT/results8.tgz" -C $R .
echo "end: $(smi)"
