#!/usr/bin/env bash
# Session 41, call 9 (H200): where fp8 KV's random-length time goes (0.69x of its fixed lengths'
# TB/s against bf16's 0.87x): Nsight Compute's duration, DRAM bytes and grid of every kernel of one
# fa3 call (the MLA kernel, the split merge), fp8 and bf16, random and fixed lengths, fc41.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res9; mkdir -p $R
unpack_bins
M='--routine BatchMLAPagedAttentionWrapper --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --page_size 64 --batch_size 128 --s_kv 8192 --num_qo_heads 16 --s_qo 1 --no_cuda_graph -n 3 -d 1 --backends fa3'
for v in "fp8_random --kv_dtype fp8_e4m3 --random_actual_seq_len" "fp8_fixed --kv_dtype fp8_e4m3" "bf16_random --random_actual_seq_len" "bf16_fixed"; do
  set -- $v; name=$1; shift
  timeout 60 ncu --clock-control none --kernel-name "regex:mla" --launch-skip 4 --launch-count 4 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,sm__cycles_elapsed.avg.per_second \
    /tmp/b/fc41 $M "$@" >$R/ncu_$name.log 2>&1
  echo "== $name ($?)"; grep -E "^  [a-z_:]+.*\(|gpu__time|dram__|grid_size|sm__cycles" $R/ncu_$name.log | sed 's/  */ /g' | head -40
done
echo "end: $(smi)"
