// launch_layernorm_quant: parameter checks, the RMSNorm register path's plan, dispatch to the
// per-input-dtype translation units. See layernorm_kernel.cuh for the kernel.
#include <cstdint>

#include "kernels/norm/layernorm.hpp"
#include "kernels/norm/layernorm_kernel.cuh"

namespace kbench::kernels {
namespace {

bool aligned(const void* p, uintptr_t bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }
bool overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + static_cast<uintptr_t>(b_bytes) && y < x + static_cast<uintptr_t>(a_bytes);
}

}  // namespace

const char* layernorm_quant_unsupported(const LayerNormQuantParams& p) {
  if (p.in_dtype != DType::bfloat16 && p.in_dtype != DType::float16) return "the input must be bfloat16 or float16";
  if (p.out_dtype != DType::fp8_e4m3 && p.out_dtype != DType::fp8_e5m2) return "the output must be fp8_e4m3 or fp8_e5m2";
  if (p.rows < 0 || p.hidden <= 0) return "empty or negative sizes";
  if (p.hidden % 8 != 0 || p.hidden > rmsnorm_detail::kRegisterPathMaxHidden) {
    return "kbench's LayerNorm holds the row in registers as 16-byte vectors: hidden must be a multiple of 8, at most "
           "32768";
  }
  return nullptr;
}

cudaError_t launch_layernorm_quant(const LayerNormQuantParams& p, cudaStream_t stream) {
  using namespace rmsnorm_detail;
  if (layernorm_quant_unsupported(p) != nullptr) return cudaErrorInvalidValue;
  if (p.input == nullptr || p.gamma == nullptr || p.beta == nullptr || p.output == nullptr) return cudaErrorInvalidValue;
  if (!aligned(p.input, 16) || !aligned(p.gamma, 16) || !aligned(p.beta, 16) || !aligned(p.output, 8)) {
    return cudaErrorInvalidValue;
  }
  if (p.rows == 0) return cudaSuccess;
  const int64_t out_bytes = p.rows * p.hidden;
  if (overlap(p.output, out_bytes, p.input, out_bytes * 2) || overlap(p.output, out_bytes, p.gamma, p.hidden * 4) ||
      overlap(p.output, out_bytes, p.beta, p.hidden * 4)) {
    return cudaErrorInvalidValue;
  }
  // The plan of an RMSNorm of the same shape (16-bit input, 1-byte output).
  RmsNormParams shape;
  shape.input = p.input;
  shape.weight = p.input;
  shape.output = p.output;
  shape.rows = p.rows;
  shape.hidden = p.hidden;
  shape.input_stride = shape.output_stride = p.hidden;
  shape.in_dtype = p.in_dtype;
  shape.out_dtype = p.out_dtype;
  const Plan plan = make_plan(shape);
  if (plan.path != Path::kRegisters || plan.blocks > 0x7fffffff) return cudaErrorInvalidValue;
  LayerNormArgs args{p.input, p.gamma, p.beta, p.output, p.rows, p.hidden, p.eps, 1.0f / static_cast<float>(p.hidden),
                     p.out_scale};
  const bool e4m3 = p.out_dtype == DType::fp8_e4m3;
  if (p.in_dtype == DType::bfloat16) {
    return e4m3 ? launch_layernorm_bf16_e4m3(args, plan, p.enable_pdl, stream)
                : launch_layernorm_bf16_e5m2(args, plan, p.enable_pdl, stream);
  }
  return e4m3 ? launch_layernorm_fp16_e4m3(args, plan, p.enable_pdl, stream)
              : launch_layernorm_fp16_e5m2(args, plan, p.enable_pdl, stream);
}

}  // namespace kbench::kernels
