#include "routines/moe/cutlass_backends.hpp"

#include <memory>
#include <string>
#include <vector>

#include "backends/cutlass/cutlass_moe_gemm.hpp"
#include "routines/moe/moe_pipeline.hpp"

namespace kbench {
namespace {

backends::CutlassMoeGemmShape gemm_shape(const MoeProblem& p, int64_t n, int64_t k) {
  return {static_cast<int>(p.local_experts()), p.picks(), n, k, p.input_dtype};
}

// FC1 and FC2 of every input set, each one CUTLASS grouped GEMM planned over the input sets.
class CutlassExpertGemms final : public ExpertGemms {
 public:
  CutlassExpertGemms(const MoeCase& problem, const MoeWorkspace& ws, cudaStream_t stream)
      : fc1_(plan(problem, ws, fc1_operands, stream)), fc2_(plan(problem, ws, fc2_operands, stream)) {}

  void fc1(cudaStream_t stream, int copy) override { fc1_->run(static_cast<std::size_t>(copy), stream); }
  void fc2(cudaStream_t stream, int copy) override { fc2_->run(static_cast<std::size_t>(copy), stream); }

 private:
  using OperandsOf = ExpertGemmOperands (*)(const MoeProblem&, const MoeWorkspace&, const MoeOperands&, int);
  static std::unique_ptr<backends::CutlassMoeGemm> plan(const MoeCase& problem, const MoeWorkspace& ws, OperandsOf operands_of,
                                       cudaStream_t stream) {
    const MoeProblem& p = problem.problem();
    std::vector<backends::CutlassMoeGemmOperands> sets;
    ExpertGemmOperands g;
    for (int copy = 0; copy < problem.copies(); ++copy) {
      g = operands_of(p, ws, problem.operands(copy), copy);
      sets.push_back({g.a, g.a_scale, g.b, g.b_scale, g.d, g.row_offsets});
    }
    return make_vendor_object<backends::CutlassMoeGemm>("CUTLASS", gemm_shape(p, g.n, g.k), sets, stream);
  }

  std::unique_ptr<backends::CutlassMoeGemm> fc1_, fc2_;
};

}  // namespace

Support MoeCutlassBackend::can_run_on(const DeviceInfo& device) const {
  if (device.cc_major != 9 || device.cc_minor != 0) {
    return Support::no("kbench's CUTLASS MoE GEMM is built for sm_90a (Hopper) only, this GPU is sm_" +
                       std::to_string(device.cc_major) + std::to_string(device.cc_minor));
  }
  return Support::yes();
}

Support MoeCutlassBackend::implements(const MoeCase& problem) const {
  const MoeProblem& p = problem.problem();
  if (p.format != MoeFormat::fp8_block_scale) {
    return Support::no("kbench's CUTLASS MoE baseline runs the DeepSeek FP8 block-scale layer only");
  }
  for (const auto& shape : {gemm_shape(p, p.w1_rows(), p.hidden), gemm_shape(p, p.hidden, p.intermediate)}) {
    if (const auto reason = backends::cutlass_moe_gemm_unsupported(shape)) return Support::no(*reason);
  }
  return Support::yes();
}

std::unique_ptr<Operation> MoeCutlassBackend::bind(MoeCase& problem, cudaStream_t stream) const {
  return std::make_unique<MoePipeline>(
      problem,
      [stream](const MoeCase& c, const MoeWorkspace& ws) { return std::make_unique<CutlassExpertGemms>(c, ws, stream); },
      stream);
}

}  // namespace kbench
