#include "backends/cutlass/cutlass_gemm.hpp"

#include <stdexcept>

#include "backends/cutlass/cutlass_gemm_kernels.hpp"

namespace kbench::backends {

namespace {

// B's scale blocks along n, the last one partial where 128 does not divide n (the kernel's
// tile_atom_to_shape_SFB takes ceil(n / 128) and loads the scales with bounds checks).
int64_t b_scale_blocks(const CutlassGemmShape& shape) { return (shape.n + kCutlassScaleBlock - 1) / kCutlassScaleBlock; }

}  // namespace

int64_t cutlass_a_scale_stride(const CutlassGemmShape& shape) {
  return shape.kind == CutlassGemmKind::fp8_blockwise_grouped ? shape.m : (shape.m + 3) / 4 * 4;
}

int64_t cutlass_a_block_scale_index(const CutlassGemmShape& shape, int64_t row, int64_t k_block) {
  return k_block * cutlass_a_scale_stride(shape) + row;
}

int64_t cutlass_b_block_scale_index(const CutlassGemmShape& shape, int64_t n_block, int64_t k_block) {
  return k_block * b_scale_blocks(shape) + n_block;
}

int64_t cutlass_a_block_scale_floats(const CutlassGemmShape& shape) {
  return shape.k / kCutlassScaleBlock * cutlass_a_scale_stride(shape);
}

int64_t cutlass_b_block_scale_floats(const CutlassGemmShape& shape) {
  return shape.k / kCutlassScaleBlock * b_scale_blocks(shape);
}

std::optional<std::string> cutlass_gemm_unsupported(const CutlassGemmShape& s) {
  const bool fp8 = s.kind != CutlassGemmKind::bf16;
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return "empty GEMM";
  // CUTLASS's problem shape holds int extents.
  constexpr int64_t kIntMax = 2147483647;
  if (s.m > kIntMax || s.n > kIntMax || s.k > kIntMax || s.batch > kIntMax) return "an extent over 2^31 - 1";
  if (fp8 && s.out_dtype != DType::bfloat16 && s.out_dtype != DType::float16) {
    return "kbench's CUTLASS FP8 GEMMs write bfloat16 or float16, not " + std::string(dtype_name(s.out_dtype));
  }
  if (!fp8 && s.out_dtype != DType::bfloat16) {
    return "kbench's CUTLASS BF16 GEMM writes bfloat16 only, not " + std::string(dtype_name(s.out_dtype));
  }
  // TMA moves rows of 16-byte multiples: k elements of A and B, n of D.
  const int64_t k_multiple = fp8 ? 16 : 8;
  if (s.k % k_multiple != 0) {
    return "k " + std::to_string(s.k) + " is not a multiple of " + std::to_string(k_multiple) +
           " (CUTLASS's TMA loads need 16-byte rows)";
  }
  if (s.n % 8 != 0) return "n " + std::to_string(s.n) + " is not a multiple of 8 (CUTLASS's TMA stores need 16-byte rows)";
  if (s.kind == CutlassGemmKind::fp8_blockwise && s.batch != 1) {
    return "kbench's CUTLASS blockwise FP8 GEMM takes one matrix at a time";
  }
  if (s.kind == CutlassGemmKind::fp8_blockwise && s.k % kCutlassScaleBlock != 0) {
    return "k must be a multiple of the 128 scale block";
  }
  if (s.kind == CutlassGemmKind::fp8_blockwise_grouped) {
    if (s.n % kCutlassScaleBlock != 0 || s.k % kCutlassScaleBlock != 0) {
      return "n and k must be multiples of the 128 scale block (kbench's grouped CUTLASS GEMM)";
    }
  }
  return std::nullopt;
}

CutlassGemm::CutlassGemm(const CutlassGemmShape& shape, std::span<const CutlassGemmOperands> input_sets,
                         cudaStream_t stream)
    : shape_(shape) {
  if (const auto reason = cutlass_gemm_unsupported(shape)) throw std::runtime_error(*reason);
  switch (shape.kind) {
    case CutlassGemmKind::fp8_blockwise: kernel_ = cutlass_kernels::plan_fp8_blockwise(shape, input_sets, stream); break;
    case CutlassGemmKind::fp8_blockwise_grouped:
      kernel_ = cutlass_kernels::plan_fp8_blockwise_grouped(shape, input_sets, stream);
      break;
    case CutlassGemmKind::fp8_per_tensor: kernel_ = cutlass_kernels::plan_fp8_per_tensor(shape, input_sets, stream); break;
    case CutlassGemmKind::bf16: kernel_ = cutlass_kernels::plan_bf16(shape, input_sets, stream); break;
  }
}

CutlassGemm::~CutlassGemm() = default;
CutlassGemm::CutlassGemm(CutlassGemm&&) noexcept = default;
CutlassGemm& CutlassGemm::operator=(CutlassGemm&&) noexcept = default;

void CutlassGemm::run(std::size_t input_set, cudaStream_t stream) { kernel_->run(input_set, stream); }

}  // namespace kbench::backends
