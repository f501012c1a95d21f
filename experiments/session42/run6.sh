#!/usr/bin/env bash
# Session 42, call 6 (H200): Nsight Compute (full set, SASS stall samples) on one launch of r42's
# (73c1f8e) fp8 transposed kernel, fixed and random lengths: where a balanced schedule's segments
# cost their ~5 tiles.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res6; mkdir -p $R
unpack_bins
M='--routine BatchMLAPagedAttentionWrapper --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --page_size 64 --batch_size 128 --s_kv 8192 --num_qo_heads 16 --s_qo 1 --no_cuda_graph -n 3 -d 1 --backends fa3 --kv_dtype fp8_e4m3'
profile() {  # NAME kbench-args...
  local name=$1; shift
  timeout 200 ncu --clock-control none --set full --import-source no --kernel-name regex:mla_fa3_transposed --launch-skip 2 \
    --launch-count 1 -o $R/$name /tmp/b/r42 $M "$@" >$R/$name.log 2>&1
  echo "ncu $name exit $?"
  ncu -i $R/$name.ncu-rep --page details >$R/${name}_details.txt 2>&1
  ncu -i $R/$name.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T4 -6 >$R/${name}_source.csv.xz
  python3 experiments/session37/stall_top.py $R/${name}_source.csv.xz 40 >$R/${name}_stalls.txt
  rm -f $R/$name.ncu-rep
  grep -E "Duration|DRAM Throughput|SM Frequency" $R/${name}_details.txt | head -4
}
profile fp8_fixed
profile fp8_random --random_actual_seq_len
cd $R && tar czf $OUT/res6.tgz . && echo "end: $(smi)"
