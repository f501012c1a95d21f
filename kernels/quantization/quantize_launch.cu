// launch_quantize: parameter checks and dispatch to the per-input-dtype translation units.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "kernels/common/kernel_image.hpp"
#include "kernels/common/launch.hpp"
#include "kernels/quantization/quantize.hpp"

namespace kbench::kernels {

namespace quantize_detail {
cudaError_t launch_bf16(const QuantizeParams& p, int sm_count, cudaStream_t stream);
cudaError_t launch_fp16(const QuantizeParams& p, int sm_count, cudaStream_t stream);
cudaError_t probe_kernel_image();
}  // namespace quantize_detail

namespace {

bool valid(const QuantizeParams& p) {
  using quant::BlockFormat;
  const bool block_ok = p.format == BlockFormat::nvfp4 ? (p.block_size == 16 || p.block_size == 32) : p.block_size == 32;
  if (!block_ok || p.batches < 1 || p.rows < 1 || p.columns < p.block_size) return false;
  if (p.columns % p.block_size != 0 || p.padded_columns < p.columns || p.padded_columns % p.block_size != 0) return false;
  // The kernel indexes rows, scale columns and a batch's scale bytes with 32-bit integers.
  if (p.rows > INT32_MAX - 128 || p.padded_columns / p.block_size > INT32_MAX - 4) return false;
  if (p.scale_bytes_per_batch() > UINT32_MAX) return false;
  if (p.input == nullptr || p.output == nullptr || p.scales == nullptr) return false;
  if (reinterpret_cast<uintptr_t>(p.input) % 16 != 0 || reinterpret_cast<uintptr_t>(p.output) % 16 != 0) return false;
  // Shuffled rows move within blocks of 32, scales into 128-row tiles.
  if (p.shuffle_rows && (p.rows % 128 != 0 || p.layout != quant::SfLayout::swizzled_128x4)) return false;
  if (p.token_scales != nullptr && (p.format != BlockFormat::nvfp4 || p.batches != 1)) return false;
  return p.in_dtype == DType::bfloat16 || p.in_dtype == DType::float16;
}


}  // namespace

cudaError_t launch_quantize(const QuantizeParams& params, cudaStream_t stream) {
  if (!valid(params)) return cudaErrorInvalidValue;
  const int sms = current_sm_count();
  return params.in_dtype == DType::bfloat16 ? quantize_detail::launch_bf16(params, sms, stream)
                                            : quantize_detail::launch_fp16(params, sms, stream);
}

cudaError_t quantize_kernel_available() {
  return kernel_image_status(quantize_detail::probe_kernel_image());
}

}  // namespace kbench::kernels
