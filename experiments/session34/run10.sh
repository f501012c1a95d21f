#!/usr/bin/env bash
# Session 34, call 10 (H200): call 9 again without its pitfall: s34dbg2 = the final build with
# segment_sums.patch (never landed): each consumer warpgroup's thread 0 prints one line per launch,
# its CTA's sums of the segments' clock64 phases (waiting for Q^T, its own tiles, waiting for the other
# warpgroup, the merge) and the CTA's whole consumer time, so that typical launches can be picked.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/s34dbg2.xz /tmp/b/dbg
B="--routine BatchMLAPagedAttentionWrapper --backends fa3 --page_size 64 --batch_size 128 --s_qo 1 --s_kv 8192 --num_qo_heads 16 --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --kv_dtype fp8_e4m3 --no_cuda_graph -n 10"
timeout 100 /tmp/b/dbg $B --random_actual_seq_len > "$OUT/sums_random.txt" 2>&1; echo "random $?"
timeout 100 /tmp/b/dbg $B > "$OUT/sums_fixed.txt" 2>&1; echo "fixed $?"
grep -c "^CTA" "$OUT/sums_random.txt" "$OUT/sums_fixed.txt"
grep "PERF" "$OUT/sums_random.txt" "$OUT/sums_fixed.txt"
xz -9 "$OUT"/sums_*.txt
echo "end: $(smi)"
