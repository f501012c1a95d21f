#!/usr/bin/env bash
# Session 34, call 9 (H200): where a balanced segment's time goes. s34dbg = the final build with
# segment_clock.patch (never landed): each consumer warpgroup's thread 0 prints, in the fifth launch
# its CTA runs, every segment's SM cycles (clock64): waiting for Q^T, its own tiles, waiting for the
# other warpgroup, the merge. fp8 KV, 16 heads, 128 requests: random lengths (balanced), then fixed
# 8192 (the uniform grid: one segment of 128 tiles a CTA).
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/s34dbg.xz /tmp/b/dbg
B="--routine BatchMLAPagedAttentionWrapper --backends fa3 --page_size 64 --batch_size 128 --s_qo 1 --s_kv 8192 --num_qo_heads 16 --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --kv_dtype fp8_e4m3 --no_cuda_graph -n 10"
timeout 100 /tmp/b/dbg $B --random_actual_seq_len > "$OUT/segments_random.txt" 2>&1; echo "random $?"
timeout 100 /tmp/b/dbg $B > "$OUT/segments_fixed.txt" 2>&1; echo "fixed $?"
grep -c "^SEG" "$OUT/segments_random.txt" "$OUT/segments_fixed.txt"
grep "PERF" "$OUT/segments_random.txt" "$OUT/segments_fixed.txt"
echo "end: $(smi)"
