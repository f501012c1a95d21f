#!/usr/bin/env bash
# Session 42, call 7 (H200): pr42 (r42 + segment_probe.patch: clock64 stamps of the fp8 transposed
# kernel's producer staging and consumer segment ends, printed per CTA at its end) on one random-length
# and one fixed-length fp8 case, direct launches.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res7; mkdir -p $R
unpack_bins
M='--routine BatchMLAPagedAttentionWrapper --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --page_size 64 --batch_size 128 --s_kv 8192 --num_qo_heads 16 --s_qo 1 --no_cuda_graph -n 3 -d 1 --backends fa3 --kv_dtype fp8_e4m3'
timeout 60 /tmp/b/pr42 $M --random_actual_seq_len >$R/probe_random.txt 2>&1; echo "random exit $? $(wc -l <$R/probe_random.txt)"
timeout 60 /tmp/b/pr42 $M >$R/probe_fixed.txt 2>&1; echo "fixed exit $? $(wc -l <$R/probe_fixed.txt)"
grep PERF $R/probe_*.txt
cd $R && xz -T4 probe_*.txt && tar cf $OUT/res7.tar . && echo "end: $(smi)"
