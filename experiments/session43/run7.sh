#!/usr/bin/env bash
# Session 43, call 7 (H200): Nsight Compute (full set, SASS stall samples) on w7s's FC1 and FC2 of the
# NVFP4 DeepSeek-V3 MoE at 128 tokens (weight_fp4, 64 x 128 tiles): what bounds them at ~1 TB/s of
# FP4 weights.
source "$(dirname "$0")/../session25/common.sh"
source "$(dirname "$0")/../session36/steps.sh"
R=$OUT/res7; mkdir -p $R
unpack_bins
timeout 200 ncu --clock-control none --set full --import-source no --kernel-name regex:wgmma_gemm_kernel --launch-skip 2 \
  --launch-count 2 -o $R/moe128 /tmp/b/w7s --routine trtllm_fp4_block_scale_moe --fp4_mode nvfp4 --num_tokens 128 \
  --hidden_size 7168 --intermediate_size 2048 --num_experts 256 --top_k 8 --n_group 8 --topk_group 4 \
  --routed_scaling_factor 2.5 --use_routing_bias --routing_method deepseek_v3 --backends cuda --no_cuda_graph -n 3 -d 1 \
  >$R/moe128.log 2>&1
echo "ncu exit $?"
ncu -i $R/moe128.ncu-rep --page details >$R/moe128_details.txt 2>&1
ncu -i $R/moe128.ncu-rep --page source --csv --print-source sass 2>&1 | xz -T4 -6 >$R/moe128_source.csv.xz
rm -f $R/moe128.ncu-rep
grep -E "Duration|SM Frequency|DRAM Throughput|Issue Slots Busy|Registers Per|Grid Size|Block Size" $R/moe128_details.txt | head -16
cd $R && tar czf $OUT/res7.tgz . && echo "end: $(smi)"
