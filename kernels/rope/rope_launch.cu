// launch_rope: parameter checks and dispatch to the per-dtype translation units.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/common/kernel_image.hpp"
#include "kernels/rope/rope.hpp"

namespace kbench::kernels {

namespace rope_detail {
cudaError_t launch_bf16(const RopeParams& p, cudaStream_t stream);
cudaError_t launch_fp16(const RopeParams& p, cudaStream_t stream);
cudaError_t probe_kernel_image();
cudaError_t launch_quantize_bf16(const RopeQuantizeParams& p, cudaStream_t stream);
cudaError_t launch_quantize_fp16(const RopeQuantizeParams& p, cudaStream_t stream);
cudaError_t probe_quantize_kernel_image();
}  // namespace rope_detail

namespace {

bool aligned16(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer) % 16 == 0; }

bool positions_given(const RopeParams& p) {
  switch (p.position_source) {
    case RopePositions::request_offsets: return p.indptr != nullptr && p.offsets != nullptr && p.requests >= 1;
    case RopePositions::pos_ids: return p.pos_ids != nullptr;
    case RopePositions::positions_i64: return p.positions != nullptr;
  }
  return false;
}

bool valid(const RopeParams& p) {
  if (p.dtype != DType::float16 && p.dtype != DType::bfloat16) return false;
  if (p.tokens < 1 || p.q_heads < 1 || p.k_heads < 1) return false;
  // 16-byte vectors: whole vectors per head, per rotated half (NeoX) and per unrotated tail.
  // rotary_dim / 2 fp32 frequencies in shared memory: at most 32 KB.
  if (p.head_dim < 16 || p.head_dim % 8 != 0 || p.rotary_dim < 16 || p.rotary_dim % 16 != 0 ||
      p.rotary_dim > p.head_dim || p.rotary_dim > 16384) {
    return false;
  }
  for (const void* tensor : {p.q, p.k, static_cast<const void*>(p.q_out), static_cast<const void*>(p.k_out)}) {
    if (tensor == nullptr || !aligned16(tensor)) return false;
  }
  if (p.cos_sin_cache != nullptr && p.cache_rows < 1) return false;
  if (p.cos_sin_cache == nullptr && !(p.rope_theta > 0.0f && p.rope_scale > 0.0f)) return false;
  return positions_given(p);
}

bool valid(const RopeQuantizeParams& p) {
  if (p.dtype != DType::float16 && p.dtype != DType::bfloat16) return false;
  if (p.quant_dtype != DType::fp8_e4m3 && p.quant_dtype != DType::fp8_e5m2) return false;
  if (p.tokens < 1 || p.q_heads < 1 || p.k_heads < 1) return false;
  // 16-element units: whole units per rotated half (NeoX) or rotated part, and per unrotated part.
  if (p.rope_dim < 16 || p.rope_dim % (p.interleave ? 16 : 32) != 0 || p.no_rope_dim < 0 || p.no_rope_dim % 16 != 0) {
    return false;
  }
  if (p.cos_sin_cache == nullptr || p.cache_rows < 1 || p.pos_ids == nullptr) return false;
  std::vector<const void*> tensors = {p.q_rope, p.k_rope, p.q_rope_out, p.cos_sin_cache};
  if (p.no_rope_dim > 0) tensors.insert(tensors.end(), {p.q_nope, p.k_nope, p.q_nope_out});
  if (p.k_cache != nullptr) {
    if (p.page_size < 1 || p.pages < 1 || p.kv_indices == nullptr || p.kv_indptr == nullptr ||
        p.batch_indices == nullptr || p.positions == nullptr) {
      return false;
    }
    tensors.insert(tensors.end(), {p.v, p.k_cache, p.v_cache});
  } else {
    tensors.push_back(p.k_rope_out);
    if (p.no_rope_dim > 0) tensors.push_back(p.k_nope_out);
  }
  for (const void* tensor : tensors) {
    if (tensor == nullptr || !aligned16(tensor)) return false;
  }
  return true;
}

}  // namespace

cudaError_t launch_rope(const RopeParams& params, cudaStream_t stream) {
  if (!valid(params)) return cudaErrorInvalidValue;
  return params.dtype == DType::bfloat16 ? rope_detail::launch_bf16(params, stream)
                                         : rope_detail::launch_fp16(params, stream);
}

cudaError_t rope_kernel_available() { return kernel_image_status(rope_detail::probe_kernel_image()); }

cudaError_t launch_rope_quantize(const RopeQuantizeParams& params, cudaStream_t stream) {
  if (!valid(params)) return cudaErrorInvalidValue;
  return params.dtype == DType::bfloat16 ? rope_detail::launch_quantize_bf16(params, stream)
                                         : rope_detail::launch_quantize_fp16(params, stream);
}

cudaError_t rope_quantize_kernel_available() { return kernel_image_status(rope_detail::probe_quantize_kernel_image()); }

}  // namespace kbench::kernels
