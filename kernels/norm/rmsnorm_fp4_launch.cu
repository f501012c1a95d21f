// launch_rmsnorm_fp4: parameter checks, the RMSNorm register path's plan, dispatch to the
// per-(dtype, format) translation units. See rmsnorm_fp4_kernel.cuh for the kernel.
#include <climits>
#include <cstdint>
#include <vector>

#include "kernels/norm/rmsnorm_fp4.hpp"
#include "kernels/norm/rmsnorm_fp4_kernel.cuh"

namespace kbench::kernels {
namespace {

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// The RMSNorm parameters of the norm half (output: the codes, as a 1-byte type for the plan's
// alignment rules).
RmsNormParams norm_params(const RmsNormFp4Params& p) {
  RmsNormParams n;
  n.input = p.input;
  n.residual = p.residual;
  n.weight = p.weight;
  n.output = p.codes;
  n.rows = p.rows;
  n.hidden = p.hidden;
  n.input_stride = n.residual_stride = n.output_stride = p.hidden;
  n.eps = p.eps;
  n.in_dtype = p.in_dtype;
  n.out_dtype = DType::fp8_e4m3;
  n.enable_pdl = p.enable_pdl;
  return n;
}

// [begin, end) byte ranges of the tensors, for the no-overlap rule.
struct Range {
  uintptr_t begin;
  uintptr_t end;
};
Range range(const void* p, int64_t bytes) {
  const auto b = reinterpret_cast<uintptr_t>(p);
  return {b, b + static_cast<uintptr_t>(bytes)};
}
bool overlap(Range a, Range b) { return a.begin < b.end && b.begin < a.end; }

}  // namespace

const char* rmsnorm_fp4_unsupported(const RmsNormFp4Params& p) {
  if (p.in_dtype != DType::bfloat16 && p.in_dtype != DType::float16) return "the input must be bfloat16 or float16";
  if (p.format != quant::BlockFormat::nvfp4 && p.format != quant::BlockFormat::mxfp4) return "the format must be nvfp4 or mxfp4";
  if (p.rows < 0 || p.hidden <= 0) return "empty or negative sizes";
  if (p.hidden % p.block_size() != 0) return "hidden is not a multiple of the scale block (16 for nvfp4, 32 for mxfp4)";
  if (p.hidden > rmsnorm_detail::kRegisterPathMaxHidden) {
    return "hidden is over 32768: the fused FP4 norms run only on the RMSNorm register path (the row in registers)";
  }
  if (p.rows > INT32_MAX - 128) return "rows are indexed with 32-bit integers";
  if (quant::sf_bytes(quant::SfLayout::swizzled_128x4, p.rows, p.scale_columns()) > UINT32_MAX) {
    return "the scale tensors are indexed with 32-bit integers (over 4 GB of scales)";
  }
  return nullptr;
}

cudaError_t launch_rmsnorm_fp4(const RmsNormFp4Params& p, cudaStream_t stream) {
  using namespace rmsnorm_detail;
  if (rmsnorm_fp4_unsupported(p) != nullptr) return cudaErrorInvalidValue;
  if (p.input == nullptr || p.weight == nullptr || p.codes == nullptr) return cudaErrorInvalidValue;
  if (p.scales_linear == nullptr && p.scales_swizzled == nullptr) return cudaErrorInvalidValue;
  const bool fused = p.residual != nullptr;
  if (!aligned16(p.input) || !aligned16(p.weight) || !aligned16(p.codes) || (fused && !aligned16(p.residual))) {
    return cudaErrorInvalidValue;
  }
  if (p.rows == 0) return cudaSuccess;
  // Written tensors (codes, scales, residual) overlap nothing else.
  const int64_t in_bytes = p.rows * p.hidden * 2;
  std::vector<Range> read = {range(p.input, in_bytes), range(p.weight, p.hidden * 2)};
  std::vector<Range> written = {range(p.codes, p.rows * p.hidden / 2)};
  if (p.scales_linear != nullptr) written.push_back(range(p.scales_linear, p.rows * p.scale_columns()));
  if (p.scales_swizzled != nullptr) {
    written.push_back(range(p.scales_swizzled, quant::sf_bytes(quant::SfLayout::swizzled_128x4, p.rows, p.scale_columns())));
  }
  if (fused) written.push_back(range(p.residual, in_bytes));
  for (std::size_t i = 0; i < written.size(); ++i) {
    for (const Range& r : read) {
      if (overlap(written[i], r)) return cudaErrorInvalidValue;
    }
    for (std::size_t j = i + 1; j < written.size(); ++j) {
      if (overlap(written[i], written[j])) return cudaErrorInvalidValue;
    }
  }

  const RmsNormParams n = norm_params(p);
  const Plan plan = make_plan(n);
  if (plan.path != Path::kRegisters || plan.blocks > 0x7fffffff) return cudaErrorInvalidValue;
  Fp4Args args{};
  args.norm = make_args(n);
  args.q.codes = p.codes;
  args.q.scales_linear = p.scales_linear;
  args.q.scales_swizzled = p.scales_swizzled;
  args.q.scale_columns = static_cast<int>(p.scale_columns());
  args.q.global_scale = p.global_scale;
  const bool nvfp4 = p.format == quant::BlockFormat::nvfp4;
  const bool pdl = p.enable_pdl;
  if (p.in_dtype == DType::bfloat16) {
    return nvfp4 ? launch_fp4_bf16_nvfp4(args, plan, fused, pdl, stream) : launch_fp4_bf16_mxfp4(args, plan, fused, pdl, stream);
  }
  return nvfp4 ? launch_fp4_fp16_nvfp4(args, plan, fused, pdl, stream) : launch_fp4_fp16_mxfp4(args, plan, fused, pdl, stream);
}

}  // namespace kbench::kernels
