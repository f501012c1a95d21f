#!/usr/bin/env bash
# Session 34 (H200): probe_call.sh BINARY NAME MARK -- a probe build (.ab/bin/BINARY.xz, a patch of this
# folder applied, never landed) on fp8 KV, 16 heads, 128 requests: random lengths (balanced), then fixed
# 8192 (the uniform grid); its printed lines (starting with MARK) into $OUT/NAME_{random,fixed}.txt.xz.
source "$(dirname "$0")/../session25/common.sh"
unpack ".ab/bin/$1.xz" /tmp/b/probe
B="--routine BatchMLAPagedAttentionWrapper --backends fa3 --page_size 64 --batch_size 128 --s_qo 1 --s_kv 8192 --num_qo_heads 16 --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --kv_dtype fp8_e4m3 --no_cuda_graph -n 10"
timeout 100 /tmp/b/probe $B --random_actual_seq_len > "$OUT/$2_random.txt" 2>&1; echo "random $?"
timeout 100 /tmp/b/probe $B > "$OUT/$2_fixed.txt" 2>&1; echo "fixed $?"
grep -c "^$3" "$OUT/$2_random.txt" "$OUT/$2_fixed.txt"
grep "PERF" "$OUT/$2_random.txt" "$OUT/$2_fixed.txt"
xz -9 "$OUT/$2"_*.txt
echo "end: $(smi)"
