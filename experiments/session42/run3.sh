#!/usr/bin/env bash
# Session 42, call 3 (H200): p42 (call 2's) against r42 (p42 + the merge taking its partials four at a time,
# their loads issued together; balanced schedules at the smallest part limit, by bisection; a segment
# of the fp8 transposed kernel 5 tiles in the cost model) on plan_42.txt, two
# rounds; the MLA GPU tests and memcheck (r42); Nsight Compute's durations and SM active cycles
# (min / avg / max over the SMs) of r42's fa3 kernels, fp8 random and fixed lengths.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res3; mkdir -p $R/ab
unpack_all r42
AB=$R/ab RUN_LIMIT=120 list=experiments/session42/plan_42.txt
for r in 1 2; do run_as p42 $r p42; run_as r42 $r r42; done
python3 experiments/session35/table.py $R/ab
gtests gtest_mla.log 80 '*Mla*'
sanitize memcheck r42 experiments/session42/sanitize_fp8.txt memcheck.log 70
M='--routine BatchMLAPagedAttentionWrapper --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --page_size 64 --batch_size 128 --s_kv 8192 --num_qo_heads 16 --s_qo 1 --no_cuda_graph -n 3 -d 1 --backends fa3'
for v in "fp8_random 4 --kv_dtype fp8_e4m3 --random_actual_seq_len" "fp8_fixed 1 --kv_dtype fp8_e4m3"; do
  set -- $v; name=$1; skip=$2; shift 2
  timeout 60 ncu --clock-control none --cache-control none --kernel-name "regex:mla" --launch-skip $skip --launch-count 3 \
    --metrics gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,launch__grid_size,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum \
    /tmp/b/r42 $M "$@" >$R/ncu_$name.log 2>&1
  echo "== $name ($?)"; grep -E "^  [a-z_:]+.*\(|gpu__time|dram__|grid_size|sm__cycles" $R/ncu_$name.log | sed 's/  */ /g' | head -40
done
cd $R && tar czf $OUT/res3.tgz . && echo "end: $(smi)"
