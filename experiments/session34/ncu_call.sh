#!/usr/bin/env bash
# Session 34 (H200): ncu_call.sh CALL BINARY -- Nsight Compute durations and SM activity spread (min / avg /
# max active cycles) of the MLA kernels of .ab/bin/BINARY.xz: fp8 random lengths (balanced), fp8 fixed
# (uniform), bf16 random; into $OUT/resultsCALL.tgz.
source "$(dirname "$0")/../session25/common.sh"
call=$1 binary=$2
unpack ".ab/bin/$binary.xz" "/tmp/b/$binary"
R=/tmp/res$call; rm -rf $R; mkdir -p $R
B="--routine BatchMLAPagedAttentionWrapper --backends fa3 --page_size 64 --batch_size 128 --s_qo 1 --s_kv 8192 --num_qo_heads 16 --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --no_cuda_graph -n 1 -d 0"
M=gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.avg,dram__bytes_read.sum,launch__grid_size,smsp__cycles_active.avg
for case in "fp8_random --kv_dtype fp8_e4m3 --random_actual_seq_len" "fp8_fixed --kv_dtype fp8_e4m3" \
  "bf16_random --random_actual_seq_len"; do
  set -- $case
  name=$1; shift
  timeout 120 ncu -k regex:'transposed|merge|mla_fa3' -c 4 --metrics $M "/tmp/b/$binary" $B "$@" >"$R/$name.txt" 2>&1
  echo "$name $?"
done
for f in fp8_random fp8_fixed bf16_random; do echo "== $f"; grep -E "^  [a-z_]+.*\(|gpu__time|sm__cycles|dram__bytes|grid_size|smsp__cycles" $R/$f.txt | grep -v "==PROF==" | head -40; done
tar czf "$OUT/results$call.tgz" -C $R .
