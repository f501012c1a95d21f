#!/usr/bin/env bash
# Session 39, call 6 (H200): Nsight Compute on the landed code (g2): one launch of fa3's transposed
# kernel on the memory-bound case with fp8 KV (full set, SASS stall samples), and the DRAM figures of
# the bf16 case on kbench's fa3 (lockstep) and FlashInfer's fa3 beside it. Carry .ab/bin.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res6; rm -rf $R; mkdir -p $R
unpack_bins
M='--routine BatchMLAPagedAttentionWrapper --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --page_size 64 --batch_size 128 --s_kv 8192 --num_qo_heads 16 --s_qo 1 --no_cuda_graph -n 3 -d 1'
profile() {  # NAME SET KERNEL_REGEX kbench-args...
  local name=$1 set=$2 kernel=$3; shift 3
  timeout 150 ncu --clock-control none --set $set --import-source no --kernel-name regex:$kernel --launch-skip 2 \
    --launch-count 1 -o $R/$name /tmp/b/g2 $M "$@" >$R/$name.log 2>&1
  echo "ncu $name exit $?"
  ncu -i $R/$name.ncu-rep --page details >$R/${name}_details.txt 2>&1
  if [ "$set" = full ]; then
    ncu -i $R/$name.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T4 -6 >$R/${name}_source.csv.xz
    python3 experiments/session37/stall_top.py $R/${name}_source.csv.xz 30 >$R/${name}_stalls.txt
  fi
  rm -f $R/$name.ncu-rep
  grep -E "Duration|DRAM Throughput|SM Frequency|Compute \(SM\) Throughput|L1/TEX Cache Throughput" $R/${name}_details.txt | head -5
}
profile fp8 full mla_fa3_transposed --backends fa3 --kv_dtype fp8_e4m3
profile bf16 basic mla_fa3_kernel --backends fa3
profile fi_bf16 basic 'MLA|Mla' --backends flashinfer_fa3
tar czf "$OUT/results6.tgz" -C "$R" .
echo "end: $(smi)"
