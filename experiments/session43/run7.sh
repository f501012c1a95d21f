#!/usr/bin/env bash
# Session 43, call 7 (H200): Nsight Compute on w7s's FC1 and FC2 of the NVFP4 DeepSeek-V3 MoE at 128
# tokens (weight_fp4, 64 x 128 tiles): what bounds them at ~1 TB/s of FP4 weights. Carry .ab/bin (w7s.xz).
source "$(dirname "$0")/steps.sh"
R=$OUT/res7; mkdir -p $R
unpack_bins
profile moe128 w7s 2 --routine trtllm_fp4_block_scale_moe --fp4_mode nvfp4 --num_tokens 128 --hidden_size 7168 \
  --intermediate_size 2048 --num_experts 256 --top_k 8 --n_group 8 --topk_group 4 --routed_scaling_factor 2.5 \
  --use_routing_bias --routing_method deepseek_v3
cd $R && tar czf $OUT/res7.tgz . && echo "end: $(smi)"
