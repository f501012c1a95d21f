// FlashInfer's FP8 RoPE kernels (flashinfer/pos_enc.cuh): bf16 and fp16 inputs, fp8 e4m3/e5m2
// outputs, the plain / MLA form (RopeQuantize) and the paged append (RopeQuantizeAppendPagedKVCache).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <flashinfer/page.cuh>
#include <flashinfer/pos_enc.cuh>

#include <exception>
#include <limits>

#include "backends/flashinfer/flashinfer_rope.hpp"

namespace {

using kbench::DType;
using kbench::kernels::RopeQuantizeParams;

template <class T>
T* mutable_of(const void* p) {
  return static_cast<T*>(const_cast<void*>(p));
}

template <typename In, typename Out>
cudaError_t launch(const RopeQuantizeParams& p, cudaStream_t stream) {
  const auto tokens = static_cast<uint32_t>(p.tokens);
  const auto hq = static_cast<uint32_t>(p.q_heads), hk = static_cast<uint32_t>(p.k_heads);
  const auto rd = static_cast<uint32_t>(p.rope_dim), nd = static_cast<uint32_t>(p.no_rope_dim);
  // Contiguous tensors: (token, head) strides of [tokens][heads][dim].
  const std::size_t q_rope_n = std::size_t{hq} * rd, q_nope_n = std::size_t{hq} * nd;
  const std::size_t k_rope_n = std::size_t{hk} * rd, k_nope_n = std::size_t{hk} * nd;
  auto* cache = const_cast<float*>(p.cos_sin_cache);
  auto* pos_ids = const_cast<int32_t*>(p.pos_ids);
  if (p.k_cache == nullptr) {
    return ::flashinfer::RopeQuantize<In, int32_t, Out>(
        mutable_of<In>(p.q_rope), mutable_of<In>(p.k_rope), mutable_of<In>(p.q_nope), mutable_of<In>(p.k_nope),
        static_cast<Out*>(p.q_rope_out), static_cast<Out*>(p.k_rope_out), static_cast<Out*>(p.q_nope_out),
        static_cast<Out*>(p.k_nope_out), cache, pos_ids, tokens, hq, hk, rd, nd, q_rope_n, rd, q_nope_n, nd, q_rope_n, rd,
        q_nope_n, nd, k_rope_n, rd, k_nope_n, nd, k_rope_n, rd, k_nope_n, nd, p.quant_scale_q, p.quant_scale_kv,
        p.interleave, p.enable_pdl, stream);
  }
  const uint32_t head_dim = rd + nd;
  const uint32_t requests = 0;  // not read by the append kernel
  ::flashinfer::paged_kv_t<Out, int32_t> paged(
      hk, static_cast<uint32_t>(p.page_size), head_dim, requests,
      p.hnd ? ::flashinfer::QKVLayout::kHND : ::flashinfer::QKVLayout::kNHD, static_cast<Out*>(p.k_cache),
      static_cast<Out*>(p.v_cache), const_cast<int32_t*>(p.kv_indices), const_cast<int32_t*>(p.kv_indptr),
      /*last_page_len=*/nullptr);
  return ::flashinfer::RopeQuantizeAppendPagedKVCache<In, int32_t, int32_t, Out>(
      mutable_of<In>(p.q_rope), mutable_of<In>(p.k_rope), mutable_of<In>(p.q_nope), mutable_of<In>(p.k_nope),
      mutable_of<In>(p.v), static_cast<Out*>(p.q_rope_out), static_cast<Out*>(p.q_nope_out), paged,
      const_cast<int32_t*>(p.batch_indices), const_cast<int32_t*>(p.positions), cache, pos_ids, tokens, hq, hk, rd, nd,
      q_rope_n, rd, q_nope_n, nd, q_rope_n, rd, q_nope_n, nd, k_rope_n, rd, k_nope_n, nd, std::size_t{hk} * head_dim,
      head_dim, p.quant_scale_q, p.quant_scale_kv, p.interleave, p.enable_pdl, stream);
}

template <typename In>
cudaError_t launch_in(const RopeQuantizeParams& p, cudaStream_t stream) {
  if (p.quant_dtype == DType::fp8_e4m3) return launch<In, __nv_fp8_e4m3>(p, stream);
  if (p.quant_dtype == DType::fp8_e5m2) return launch<In, __nv_fp8_e5m2>(p, stream);
  return cudaErrorInvalidValue;
}

}  // namespace

namespace kbench::backends::flashinfer {

std::optional<std::string> rope_quantize_unsupported(const RopeQuantizeParams& p, bool paged) {
  if (p.dtype != DType::bfloat16 && p.dtype != DType::float16) {
    return "FlashInfer's RoPE kernels are instantiated here for bfloat16 and float16 inputs only";
  }
  if (p.quant_dtype != DType::fp8_e4m3 && p.quant_dtype != DType::fp8_e5m2) return "the outputs are fp8_e4m3 or fp8_e5m2";
  // 16-element vectors (32 bytes of bf16/fp16) per thread; NeoX halves of whole vectors.
  if (p.rope_dim % (p.interleave ? 16 : 32) != 0) {
    return "rope dim " + std::to_string(p.rope_dim) + " is not a multiple of " + (p.interleave ? "16" : "32") +
           " (FlashInfer's 16-element vectors)";
  }
  // The paged kernel copies the nope parts in whole rope_dim-sized chunks without a tail guard.
  if (paged && p.no_rope_dim % p.rope_dim != 0) {
    return "no_rope_dim " + std::to_string(p.no_rope_dim) + " is not a multiple of the rope dim " +
           std::to_string(p.rope_dim) + ": FlashInfer's paged append copies nope parts in whole rope-dim chunks";
  }
  // One CTA row per (token group), blocks in y per head chunk: 32-bit sizes and grid.y <= 65535.
  const int64_t chunks = (p.no_rope_dim + p.rope_dim - 1) / p.rope_dim;
  const int64_t blocks_y = static_cast<int64_t>(p.q_heads + p.k_heads) * (1 + chunks) + (paged ? p.k_heads : 0);
  if (blocks_y > 65535) return "too many heads for FlashInfer's grid (" + std::to_string(blocks_y) + " blocks in y)";
  if (p.tokens > std::numeric_limits<uint32_t>::max()) return "more than 2^32 - 1 tokens";
  return std::nullopt;
}

cudaError_t run_rope_quantize(const RopeQuantizeParams& p, cudaStream_t stream) {
  try {
    if (p.dtype == DType::bfloat16) return launch_in<__nv_bfloat16>(p, stream);
    if (p.dtype == DType::float16) return launch_in<__half>(p, stream);
    return cudaErrorInvalidValue;
  } catch (const std::exception&) {  // FlashInfer's dispatch macros throw on values they cannot take
    return cudaErrorInvalidValue;
  }
}

}  // namespace kbench::backends::flashinfer
