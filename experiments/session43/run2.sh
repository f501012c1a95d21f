#!/usr/bin/env bash
# Session 43, call 2 (H200): Nsight Compute (full set, SASS stall samples) on one launch of fra's
# mm_fp4 kernel (nvfp4, 4096 x 7168 x 16384, 128 x 256 tiles): what bounds it at ~2000 cycles a slice.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res2; mkdir -p $R
unpack_bins
profile() {  # NAME BINARY kbench-args...
  local name=$1 bin=$2; shift 2
  timeout 200 ncu --clock-control none --set full --import-source no --kernel-name regex:wgmma_gemm_kernel --launch-skip 2 \
    --launch-count 1 -o $R/$name /tmp/b/$bin "$@" --backends cuda --no_cuda_graph -n 3 -d 1 >$R/$name.log 2>&1
  echo "ncu $name exit $?"
  ncu -i $R/$name.ncu-rep --page details >$R/${name}_details.txt 2>&1
  ncu -i $R/$name.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T4 -6 >$R/${name}_source.csv.xz
  python3 experiments/session37/stall_top.py $R/${name}_source.csv.xz 40 >$R/${name}_stalls.txt
  rm -f $R/$name.ncu-rep
  grep -E "Duration|SM Frequency|Issue Slots Busy|Shared Memory" $R/${name}_details.txt | head -8
}
profile fra_nvfp4 fra --routine mm_fp4 --m 4096 --n 7168 --k 16384 --use_128x4_sf_layout --use_nvfp4
cd $R && tar czf $OUT/res2.tgz . && echo "end: $(smi)"
