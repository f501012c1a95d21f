#!/usr/bin/env bash
# Session 38, call 8 (H200): Nsight Compute (full set, SASS stall samples) on one launch of the landed
# seesaw kernel (spf = 12a022c) on the compute-bound case and on the 4-token random-length case
# (balanced schedule). Carry .ab/bin.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res8; rm -rf $R; mkdir -p $R
unpack_bins
M='--routine BatchMLAPagedAttentionWrapper --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --backends fa3 --page_size 64 --batch_size 64 --s_kv 8192 --num_qo_heads 128 --no_cuda_graph -n 3 -d 1'
profile() {  # NAME kbench-args...
  local name=$1; shift
  timeout 200 ncu --clock-control none --set full --import-source no --kernel-name regex:mla_fa3_kernel --launch-skip 2 \
    --launch-count 1 -o $R/$name /tmp/b/spf "$@" >$R/$name.log 2>&1
  echo "ncu $name exit $?"
  ncu -i $R/$name.ncu-rep --page details >$R/${name}_details.txt 2>&1
  ncu -i $R/$name.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T4 -6 >$R/${name}_source.csv.xz
  rm -f $R/$name.ncu-rep
  python3 experiments/session37/stall_top.py $R/${name}_source.csv.xz 25 | tee $R/${name}_stalls.txt
}
profile compute $M --s_qo 2
profile mtp4 $M --s_qo 4 --random_actual_seq_len
finish 8
