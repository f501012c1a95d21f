#include "routines/reference_names.hpp"

namespace kbench {

void register_reference_names(RoutineRegistry& registry) {
  // The seed README's routines, then the newer ones at the reference's HEAD (head_extras.md,
  // gemm.md, moe.md). Names kbench has built are dropped by the registry.
  registry.add_foreign_routine_names({
      // attention
      "BatchMLAPagedAttentionWrapper",
      // GEMM
      "gemm_fp8_nt_groupwise", "group_gemm_fp8_nt_groupwise", "bmm_fp8", "mm_fp4", "mm_fp8", "mm_bf16", "bmm_bf16",
      "bmm_mxfp8", "mm_mxfp8", "mm_bf16_fp4", "tinygemm_bf16",
      // MoE and communication
      "trtllm_fp4_block_scale_moe", "trtllm_fp8_block_scale_moe", "trtllm_fp8_per_tensor_scale_moe",
      "cutlass_fused_moe", "cute_dsl_fp4_block_scale_moe", "b12x_fused_moe", "unified_nvfp4_moe", "bgmv_moe",
      "moe_a2a_dispatch_combine", "allreduce_fusion", "mixed_comm",
      // norm and quantization
      "fused_dit_layernorm", "fused_qk_rmsnorm_rope",
      // top-k
      "top_k_varlen",
      // state-space, linear and sparse attention
      "selective_state_update", "gated_delta_rule_decode", "gated_delta_rule_mtp", "chunk_gated_delta_rule",
      "recurrent_kda_prefill", "MSAProxyScore", "MSASparseAttention", "MSASparseDecode", "MSAPipeline",
  });
  // Every backend name of the reference's routines that kbench has no backend for (yet).
  registry.add_foreign_backend_names({
      "cutlass", "trtllm", "trtllm-gen", "trtllm-native", "trtllm-gen-native", "trtllm-fmha-v2", "prims-ts",
      "cublas", "cublaslt", "cute-dsl", "cutile", "tgv", "b12x", "tinygemm", "trtllm_low_latency", "moe_a2a",
      "triton", "fla", "flashinfer-decomp", "flashinfer-fused", "cutekda", "flash-kda", "cudsl", "radix", "gvr",
      "radix_cutlass",
  });
}

}  // namespace kbench
