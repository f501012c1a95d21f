#include "routines/gemm/cutlass_backends.hpp"

#include <optional>
#include <string>
#include <vector>

#include "backends/cutlass/cutlass_gemm.hpp"
#include "routines/gemm/block_scale_layouts.hpp"

namespace kbench {
namespace {

using backends::CutlassGemmKind;

// The configuration of src/backends/cutlass that computes this routine, or nullopt.
std::optional<CutlassGemmKind> cutlass_kind(GemmVariant variant) {
  switch (variant) {
    case GemmVariant::gemm_fp8_nt_groupwise: return CutlassGemmKind::fp8_blockwise;
    case GemmVariant::group_gemm_fp8_nt_groupwise: return CutlassGemmKind::fp8_blockwise_grouped;
    case GemmVariant::bmm_fp8:
    case GemmVariant::mm_fp8: return CutlassGemmKind::fp8_per_tensor;
    case GemmVariant::mm_bf16:
    case GemmVariant::bmm_bf16: return CutlassGemmKind::bf16;
    case GemmVariant::mm_fp4: break;
  }
  return std::nullopt;
}

backends::CutlassGemmShape cutlass_shape(const GemmProblem& p, CutlassGemmKind kind) {
  return {p.batch, p.m, p.n, p.k, kind, p.out_dtype};
}

// The reference's scales where they are already in the kernel's layouts, else rewritten into them:
// MN-major, with A's k-blocks as far apart as the kernel wants them (the reference's A scales span
// every group's rows, so a grouped GEMM of several groups is rewritten; the blockwise GEMM pads m to
// a multiple of 4).
bool scales_in_cutlass_layout(const GemmProblem& p, const backends::CutlassGemmShape& shape) {
  return p.major == kernels::gemm::ScaleMajor::mn && backends::cutlass_a_scale_stride(shape) == p.batch * p.m;
}

class CutlassGemmOperation final : public Operation {
 public:
  CutlassGemmOperation(const GemmCase& problem, cudaStream_t stream) {
    const GemmProblem& p = problem.problem();
    const backends::CutlassGemmShape shape = cutlass_shape(p, *cutlass_kind(p.variant));
    if (p.groupwise() && !scales_in_cutlass_layout(p, shape)) {
      const BlockScaleLayout cutlass_layout{
          backends::cutlass_a_block_scale_floats(shape), backends::cutlass_b_block_scale_floats(shape),
          [&](int64_t row, int64_t k_block) { return backends::cutlass_a_block_scale_index(shape, row, k_block); },
          [&](int64_t n_block, int64_t k_block) { return backends::cutlass_b_block_scale_index(shape, n_block, k_block); }};
      block_scales_ = rewrite_block_scales(problem, cutlass_layout, stream);
    }
    std::vector<backends::CutlassGemmOperands> input_sets;
    for (int copy = 0; copy < problem.copies(); ++copy) {
      const GemmOperands o = problem.operands(copy);
      backends::CutlassGemmOperands set{o.a, o.b, o.out, o.a_scale, o.b_scale};
      if (!block_scales_.a.empty()) {
        set.a_scale = block_scales_.a[static_cast<std::size_t>(copy)].as<float>();
        set.b_scale = block_scales_.b[static_cast<std::size_t>(copy)].as<float>();
      }
      input_sets.push_back(set);
    }
    gemm_ = make_vendor_object<backends::CutlassGemm>("CUTLASS", shape, input_sets, stream);
  }

  void launch(cudaStream_t stream, int copy) override { gemm_->run(static_cast<std::size_t>(copy), stream); }

 private:
  RewrittenBlockScales block_scales_;  // per input set, in the kernel's layouts (groupwise, where rewritten)
  std::unique_ptr<backends::CutlassGemm> gemm_;
};

}  // namespace

Support CutlassGemmBackend::can_run_on(const DeviceInfo& device) const {
  if (device.cc_major != 9 || device.cc_minor != 0) {
    return Support::no("kbench's CUTLASS GEMMs are built for sm_90a (Hopper) only, this GPU is sm_" +
                       std::to_string(device.cc_major) + std::to_string(device.cc_minor));
  }
  return Support::yes();
}

Support CutlassGemmBackend::implements(const GemmCase& problem) const {
  const GemmProblem& p = problem.problem();
  const std::optional<CutlassGemmKind> kind = cutlass_kind(p.variant);
  if (!kind) return Support::no("kbench's CUTLASS backend has no FP4 GEMM");
  if (p.bias) return Support::no("kbench's CUTLASS BF16 GEMM adds no bias");
  if (p.per_tensor() && (p.a_dtype != DType::fp8_e4m3 || p.b_dtype != DType::fp8_e4m3)) {
    return Support::no("kbench's CUTLASS FP8 GEMM is instantiated for fp8_e4m3 operands only");
  }
  if (const auto reason = backends::cutlass_gemm_unsupported(cutlass_shape(p, *kind))) return Support::no(*reason);
  return Support::yes();
}

std::unique_ptr<Operation> CutlassGemmBackend::bind(GemmCase& problem, cudaStream_t stream) const {
  return std::make_unique<CutlassGemmOperation>(problem, stream);
}

}  // namespace kbench
