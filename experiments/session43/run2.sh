#!/usr/bin/env bash
# Session 43, call 2 (H200): Nsight Compute on one launch of fra's mm_fp4 kernel (nvfp4, 4096 x 7168 x
# 16384, 128 x 256 tiles): what bounds it at ~2000 cycles a slice. Carry .ab/bin (fra.xz).
source "$(dirname "$0")/steps.sh"
R=$OUT/res2; mkdir -p $R
unpack_bins
profile fra_nvfp4 fra 1 --routine mm_fp4 --m 4096 --n 7168 --k 16384 --use_128x4_sf_layout --use_nvfp4
python3 experiments/session37/stall_top.py $R/fra_nvfp4_source.csv.xz 40 >$R/fra_nvfp4_stalls.txt
cd $R && tar czf $OUT/res2.tgz . && echo "end: $(smi)"
