#!/usr/bin/env bash
# Session 42, call 2 (H200): n42 (call 1's) against p42 (n42 + the split merge launched with
# programmatic dependent launch, its loads never waiting on a partial's weight) on fp8_42.txt, two
# rounds; the MLA GPU tests and memcheck (p42); Nsight Compute's durations and SM active cycles
# (min / avg / max over the SMs) of p42's fa3 kernels on random lengths, fp8 and bf16.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session35/steps.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res2; mkdir -p $R/ab
unpack_all p42
AB=$R/ab RUN_LIMIT=70 list=experiments/session42/fp8_42.txt
for r in 1 2; do run_as n42 $r n42; run_as p42 $r p42; done
python3 experiments/session35/table.py $R/ab
gtests gtest_mla.log 80 '*Mla*'
sanitize memcheck p42 experiments/session42/sanitize_fp8.txt memcheck.log 70
M='--routine BatchMLAPagedAttentionWrapper --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --page_size 64 --batch_size 128 --s_kv 8192 --num_qo_heads 16 --s_qo 1 --no_cuda_graph -n 3 -d 1 --backends fa3 --random_actual_seq_len'
for v in "fp8_random --kv_dtype fp8_e4m3" "bf16_random"; do
  set -- $v; name=$1; shift
  timeout 60 ncu --clock-control none --cache-control none --kernel-name "regex:mla" --launch-skip 4 --launch-count 4 \
    --metrics gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,launch__grid_size,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum \
    /tmp/b/p42 $M "$@" >$R/ncu_$name.log 2>&1
  echo "== $name ($?)"; grep -E "^  [a-z_:]+.*\(|gpu__time|dram__|grid_size|sm__cycles" $R/ncu_$name.log | sed 's/  */ /g' | head -40
done
cd $R && tar czf $OUT/res2.tgz . && echo "end: $(smi)"
