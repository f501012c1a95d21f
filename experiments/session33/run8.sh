#!/usr/bin/env bash
# Session 33, call 8 (H200): where the transposed kernel's warps stall (Nsight Compute's warp stall
# sampling per SASS instruction, mla5), the memory-bound fp8 case.
source "$(dirname "$0")/../session25/common.sh"
unpack .ab/bin/mla5.xz /tmp/b/mla5
R=/tmp/res8; rm -rf $R; mkdir -p $R
L="--routine BatchMLAPagedAttentionWrapper --backends fa3 --page_size 64 --batch_size 128 --s_qo 1 --s_kv 8192 --num_qo_heads 16 --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --kv_dtype fp8_e4m3 --no_cuda_graph -n 1 -d 0"
timeout 200 ncu -k regex:transposed -c 1 --section WarpStateStats --section SourceCounters --print-details all /tmp/b/mla5 $L >"$R/ncu_details.txt" 2>&1
timeout 200 ncu -k regex:transposed -c 1 --section WarpStateStats --section SourceCounters --page source --csv --print-source sass /tmp/b/mla5 $L >"$R/ncu_source.csv" 2>&1
echo "ncu exit $?"; wc -l $R/ncu_source.csv
grep -iE "stall|smsp__pcsamp" $R/ncu_details.txt | head -40
tar czf "$OUT/results8.tgz" -C $R .
echo "end: $(smi)"
