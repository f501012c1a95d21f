#!/usr/bin/env bash
# Session 40, call 7 (H200): r40's memory-bound row (300 us) by ring depth: 24 chunk slots (r40),
# 18 (two tiles), 12, against main and FlashInfer, three rounds; then Nsight Compute's DRAM and L2
# figures of one launch each of r40, main's lockstep and FlashInfer's kernel.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=/tmp/res7; rm -rf $R; mkdir -p $R/mla/ab
unpack_bins
AB=$R/mla/ab RUN_LIMIT=60
list=experiments/session40/mb.txt
for r in 1 2 3; do
  run_as r40 $r r40; run_as slots18 $r slots18; run_as slots12 $r slots12; run_as main $r main
done
M='--routine BatchMLAPagedAttentionWrapper --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --page_size 64 --batch_size 128 --s_kv 8192 --num_qo_heads 16 --s_qo 1 --no_cuda_graph -n 3 -d 1'
for v in "r40 fa3 mla_fa3_transposed_bf16" "main fa3 mla_fa3_kernel" "r40 flashinfer_fa3 MLA|Mla"; do
  set -- $v
  timeout 120 ncu --clock-control none --kernel-name "regex:$3" --launch-skip 2 --launch-count 1 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,sm__cycles_elapsed.avg.per_second,launch__grid_size \
    /tmp/b/$1 $M --backends $2 >$R/ncu_$1_$2.log 2>&1
  echo "== ncu $1 $2"; grep -E "gpu__time|dram__|lts__|sm__cycles|grid_size" $R/ncu_$1_$2.log
done
finish 7
