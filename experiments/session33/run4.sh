#!/usr/bin/env bash
# Session 33, call 4 (H200): Nsight Compute on the transposed kernel (mla1: warpgroups alternate
# tiles, two slots; mla3: both on every tile, three slots), the memory-bound fp8 case.
source "$(dirname "$0")/../session25/common.sh"
for b in mla3 mla1; do unpack .ab/bin/$b.xz /tmp/b/$b; done
R=/tmp/res4; rm -rf $R; mkdir -p $R
L="--routine BatchMLAPagedAttentionWrapper --backends fa3 --page_size 64 --batch_size 128 --s_qo 1 --s_kv 8192 --num_qo_heads 16 --num_kv_heads 1 --head_dim_ckv 512 --head_dim_kpe 64 --kv_dtype fp8_e4m3 --no_cuda_graph -n 1 -d 0"
for b in mla1 mla3; do
  timeout 200 ncu -k regex:transposed -c 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters --section LaunchStats \
    /tmp/b/$b $L >"$R/ncu_$b.txt" 2>&1
  echo "$b ncu exit $?"
done
grep -E "Duration|Throughput|Stall|Issued|Eligible|Active Warps|No Eligible|Warp Cycles|Executed Ipc|Bank|Shared" $R/ncu_mla1.txt | head -60
tar czf "$OUT/results4.tgz" -C $R .
echo "end: $(smi)"
