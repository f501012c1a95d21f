#!/usr/bin/env bash
# Session 34, call 2 (H200): Nsight Compute durations and SM activity spread (min / avg / max active
# cycles) of the MLA kernels on s34a: fp8 random lengths (balanced), fp8 fixed (uniform), bf16 random.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/s34a.xz /tmp/b/s34a
R=/tmp/res2; rm -rf $R; mkdir -p $R
B="--routine BatchMLAPagedAttentionWrapper --backends fa3 --page_size 64 --batch_size 128 --s_qo 1 --s_kv 8192 --num_qo_heads 16 --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --no_cuda_graph -n 1 -d 0"
M=gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_elapsed.avg,dram__bytes_read.sum,launch__grid_size,smsp__cycles_active.avg
run() {
  timeout 120 ncu -k regex:'transposed|merge|mla_fa3' -c 4 --metrics $M /tmp/b/s34a $B "$@" >"$R/ncu_$1_$#.txt" 2>&1
  echo "ncu $* exit $?"
}
timeout 120 ncu -k regex:'transposed|merge|mla_fa3' -c 4 --metrics $M /tmp/b/s34a $B --kv_dtype fp8_e4m3 --random_actual_seq_len > $R/fp8_random.txt 2>&1; echo "fp8 random $?"
timeout 120 ncu -k regex:'transposed|merge|mla_fa3' -c 4 --metrics $M /tmp/b/s34a $B --kv_dtype fp8_e4m3 > $R/fp8_fixed.txt 2>&1; echo "fp8 fixed $?"
timeout 120 ncu -k regex:'transposed|merge|mla_fa3' -c 4 --metrics $M /tmp/b/s34a $B --random_actual_seq_len > $R/bf16_random.txt 2>&1; echo "bf16 random $?"
for f in fp8_random fp8_fixed bf16_random; do echo "== $f"; grep -E "^  [a-z_]+.*\(|gpu__time|sm__cycles|dram__bytes|grid_size|smsp__cycles" $R/$f.txt | grep -v "==PROF==" | head -40; done
tar czf "$OUT/results2.tgz" -C $R .
