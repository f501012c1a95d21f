#include "routines/moe/kbench_backends.hpp"

#include <string>
#include <vector>

#include "kbench/cuda_check.hpp"
#include "kernels/gemm/sm90/wgmma_gemm.hpp"
#include "routines/moe/moe_case.hpp"
#include "routines/moe/moe_pipeline.hpp"

namespace kbench {
namespace {

namespace wgmma = kernels::gemm::sm90;

// One of the two grouped GEMMs on kbench's GEMM in the format's scaling: `rows` = every pick (the
// permuted row count is known only on the device; row_offsets bound each local expert's group).
wgmma::WgmmaGemmParams grouped_gemm(const MoeProblem& p, const ExpertGemmOperands& o) {
  wgmma::WgmmaGemmParams g;
  g.groups = static_cast<int>(p.local_experts());
  g.rows_per_group = 0;
  g.row_offsets = o.row_offsets;
  g.rows = p.picks();
  g.n = o.n;
  g.k = o.k;
  g.a = o.a;
  g.b = o.b;
  g.d = o.d;
  g.a_dtype = p.activation_dtype();
  g.b_dtype = p.weight_dtype();
  g.d_dtype = p.input_dtype;
  g.a_scale = o.a_scale;
  g.b_scale = o.b_scale;
  switch (p.format) {
    case MoeFormat::fp8_block_scale: {
      g.scaling = wgmma::GemmScaling::groupwise;
      const int64_t k_blocks = o.k / kMoeScaleBlock, n_blocks = o.n / kMoeScaleBlock;
      g.a_scale_row_stride = k_blocks;
      g.a_scale_k_stride = 1;
      g.b_scale_group_stride = n_blocks * k_blocks;
      g.b_scale_n_stride = k_blocks;
      g.b_scale_k_stride = 1;
      break;
    }
    case MoeFormat::fp8_per_tensor:
      g.scaling = wgmma::GemmScaling::per_tensor;
      g.b_scale_group_stride = 1;
      break;
    case MoeFormat::unquantized:
      g.scaling = wgmma::GemmScaling::none;
      break;
    case MoeFormat::nvfp4:
    case MoeFormat::mxfp4_mxfp8:
    case MoeFormat::mxfp4_bf16:
    case MoeFormat::nvfp4_w4a16:
      // 16-bit A (the activations' values, NVFP4's times its global scale), the experts' FP4
      // weights; NVFP4's global scales (the weights' and A's) in each expert's alpha, MXFP4 none.
      g.scaling = wgmma::GemmScaling::weight_fp4;
      g.fp4_format = p.weight_block_format();
      g.b_block_scales = o.b_sf;
      g.b_sf_layout = kernels::quant::SfLayout::swizzled_128x4;
      g.b_sf_group_stride = kernels::quant::sf_bytes(g.b_sf_layout, o.n, o.k / p.weight_block());
      g.group_alpha = o.group_alpha;
      break;
  }
  return g;
}

// DeepSeek FP8's FC1 writes the activation from its epilogue (the GEMM's GLU epilogue: the gated unit
// from the fp32 accumulators, quantized in 1x128 blocks as the activation kernel does), unless
// Llama 4's row weights must scale FC1's rows first (the GLU epilogue computes SwiGLU and GeGLU).
bool fc1_fuses_activation(const MoeProblem& p) {
  return p.format == MoeFormat::fp8_block_scale && !p.routing_scales_on_input &&
         (p.activation == kernels::moe::GatedActivation::swiglu || p.activation == kernels::moe::GatedActivation::geglu);
}

wgmma::WgmmaGemmParams fc1_gemm(const MoeProblem& p, const ExpertGemmOperands& o) {
  wgmma::WgmmaGemmParams g = grouped_gemm(p, o);
  if (fc1_fuses_activation(p)) {
    g.d = nullptr;
    g.glu = p.activation == kernels::moe::GatedActivation::swiglu ? kernels::GatedLinearUnit::swiglu
                                                                   : kernels::GatedLinearUnit::geglu;
    g.glu_codes = o.act;
    g.glu_scales = o.act_scale;
  }
  return g;
}


// Both GEMMs of every input set, planned on kbench's wgmma GEMM.
class WgmmaExpertGemms final : public ExpertGemms {
 public:
  WgmmaExpertGemms(const MoeCase& problem, const MoeWorkspace& ws) : fuses_(fc1_fuses_activation(problem.problem())) {
    const MoeProblem& p = problem.problem();
    for (int copy = 0; copy < problem.copies(); ++copy) {
      const MoeOperands o = problem.operands(copy);
      fc1_.emplace_back(fc1_gemm(p, fc1_operands(p, ws, o, copy)));
      fc2_.emplace_back(grouped_gemm(p, fc2_operands(p, ws, o, copy)));
    }
  }
  void fc1(cudaStream_t stream, int copy) override { KBENCH_CUDA_CHECK(fc1_.at(static_cast<std::size_t>(copy)).run(stream)); }
  void fc2(cudaStream_t stream, int copy) override { KBENCH_CUDA_CHECK(fc2_.at(static_cast<std::size_t>(copy)).run(stream)); }
  [[nodiscard]] bool fc1_writes_activation() const override { return fuses_; }

 private:
  std::vector<wgmma::WgmmaGemm> fc1_, fc2_;
  bool fuses_ = false;
};

class MoeCudaBackend final : public BackendFor<MoeCase> {
 public:
  explicit MoeCudaBackend(const std::string& reference_label)
      : BackendFor({"cuda",
                    "kbench",
                    "sm_90a",
                    {{reference_label, reference_label +
                                           " is the reference's backend of this routine (Blackwell kernels); kbench "
                                           "runs its own Hopper pipeline, cuda"}}}) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (device.cc_major != 9 || device.cc_minor != 0) {
      return Support::no("kbench's MoE runs on its Hopper grouped GEMM (TMA, wgmma): sm_90a only");
    }
    if (!wgmma::wgmma_gemm_built_for_sm90a())
      return Support::no("this build has no sm_90a code (CMAKE_CUDA_ARCHITECTURES)");
    return Support::yes();
  }

 protected:
  [[nodiscard]] Support implements(const MoeCase& problem) const override {
    const auto reason = kbench_expert_gemms_unsupported(problem.problem());
    return reason ? Support::no(*reason) : Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(MoeCase& problem, cudaStream_t stream) const override {
    return std::make_unique<MoePipeline>(problem, kbench_expert_gemms(), stream);
  }
};

}  // namespace

ExpertGemmPlanner kbench_expert_gemms() {
  return [](const MoeCase& c, const MoeWorkspace& ws) { return std::make_unique<WgmmaExpertGemms>(c, ws); };
}

std::optional<std::string> kbench_expert_gemms_unsupported(const MoeProblem& p) {
  if (p.local_experts() > wgmma::kMaxDeviceGroups) {
    return "the grouped GEMM takes at most " + std::to_string(wgmma::kMaxDeviceGroups) + " local experts";
  }
  for (const auto& g : {fc1_gemm(p, ExpertGemmOperands{p.w1_rows(), p.hidden}),
                        grouped_gemm(p, ExpertGemmOperands{p.hidden, p.intermediate})}) {
    if (auto reason = wgmma::wgmma_gemm_unsupported(g)) return reason;
  }
  return std::nullopt;
}

std::unique_ptr<Backend> make_moe_cuda_backend(const std::string& reference_label) {
  return std::make_unique<MoeCudaBackend>(reference_label);
}

}  // namespace kbench
