#include "routines/moe/kbench_backends.hpp"

#include <vector>

#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/gemm/sm90/wgmma_gemm.hpp"
#include "kernels/moe/combine.hpp"
#include "kernels/moe/gated_activation.hpp"
#include "kernels/moe/permutation.hpp"
#include "kernels/moe/permute_quantize.hpp"
#include "kernels/moe/routing.hpp"
#include "routines/moe/moe_case.hpp"

namespace kbench {
namespace {

namespace moe = kernels::moe;
namespace wgmma = kernels::gemm::sm90;

// One of the two grouped GEMMs: `rows` = every pick (the permuted row count is known only on the
// device; row_offsets bound each local expert's group), B = the local experts' weights [n][k] with
// K-major 128x128 scales, A's 1x128 scales [row][k / 128].
wgmma::WgmmaGemmParams grouped_gemm(const MoeProblem& p, int64_t n, int64_t k, const void* a, const float* a_scale,
                                    const void* b, const float* b_scale, void* d, const int32_t* row_offsets) {
  wgmma::WgmmaGemmParams g;
  g.scaling = wgmma::GemmScaling::groupwise;
  g.groups = static_cast<int>(p.local_experts());
  g.rows_per_group = 0;
  g.row_offsets = row_offsets;
  g.rows = p.picks();
  g.n = n;
  g.k = k;
  g.a = a;
  g.b = b;
  g.d = d;
  g.a_scale = a_scale;
  g.b_scale = b_scale;
  const int64_t k_blocks = k / kMoeScaleBlock, n_blocks = n / kMoeScaleBlock;
  g.a_scale_row_stride = k_blocks;
  g.a_scale_k_stride = 1;
  g.b_scale_group_stride = n_blocks * k_blocks;
  g.b_scale_n_stride = k_blocks;
  g.b_scale_k_stride = 1;
  return g;
}

// The pipeline's workspace (the routing writes into the case's outputs), sized for every pick
// (tokens x top_k rows), shared by the input sets (their calls are ordered on one stream).
struct MoeWorkspace {
  explicit MoeWorkspace(const MoeProblem& p)
      : local_counts(static_cast<std::size_t>(p.local_experts()) * sizeof(int32_t)),
        row_offsets(static_cast<std::size_t>(p.local_experts() + 1) * sizeof(int32_t)),
        permuted_rows(static_cast<std::size_t>(p.picks()) * sizeof(int32_t)),
        a(static_cast<std::size_t>(p.picks() * p.hidden)),
        a_scale(static_cast<std::size_t>(p.picks() * (p.hidden / kMoeScaleBlock)) * sizeof(float)),
        fc1(static_cast<std::size_t>(p.picks() * p.w1_rows()) * sizeof(uint16_t)),
        act(static_cast<std::size_t>(p.picks() * p.intermediate)),
        act_scale(static_cast<std::size_t>(p.picks() * (p.intermediate / kMoeScaleBlock)) * sizeof(float)),
        fc2(static_cast<std::size_t>(p.picks() * p.hidden) * sizeof(uint16_t)) {}
  DeviceBuffer local_counts, row_offsets, permuted_rows;
  DeviceBuffer a, a_scale, fc1, act, act_scale, fc2;
};

class MoePipeline final : public Operation {
 public:
  explicit MoePipeline(const MoeCase& problem) : p_(problem.problem()), ws_(p_) {
    for (int copy = 0; copy < problem.copies(); ++copy) {
      const MoeOperands o = problem.operands(copy);
      calls_.push_back(
          Call{o,
               wgmma::WgmmaGemm(grouped_gemm(p_, p_.w1_rows(), p_.hidden, ws_.a.get(), ws_.a_scale.as<float>(), o.w1,
                                             o.w1_scale, ws_.fc1.get(), ws_.row_offsets.as<int32_t>())),
               wgmma::WgmmaGemm(grouped_gemm(p_, p_.hidden, p_.intermediate, ws_.act.get(), ws_.act_scale.as<float>(),
                                             o.w2, o.w2_scale, ws_.fc2.get(), ws_.row_offsets.as<int32_t>()))});
    }
  }

  void launch(cudaStream_t stream, int copy) override {
    const Call& c = calls_.at(static_cast<std::size_t>(copy));
    moe::RoutingParams routing;
    routing.config = p_.routing;
    routing.logits = c.operands.logits;
    routing.logits_dtype = p_.logits_dtype();
    routing.bias = c.operands.bias;
    routing.bias_dtype = DType::bfloat16;
    routing.tokens = p_.tokens;
    routing.expert_ids = c.operands.expert_ids;
    routing.weights = c.operands.expert_weights;
    routing.local_counts = ws_.local_counts.as<int32_t>();
    KBENCH_CUDA_CHECK(moe::launch_routing(routing, stream));

    moe::PermutationIndexParams index;
    index.expert_ids = c.operands.expert_ids;
    index.local_counts = ws_.local_counts.as<int32_t>();
    index.tokens = p_.tokens;
    index.top_k = static_cast<int>(p_.top_k());
    index.local_expert_offset = p_.routing.local_expert_offset;
    index.local_num_experts = static_cast<int>(p_.local_experts());
    index.row_offsets = ws_.row_offsets.as<int32_t>();
    index.permuted_rows = ws_.permuted_rows.as<int32_t>();
    KBENCH_CUDA_CHECK(moe::launch_permutation_index(index, stream));

    moe::PermuteQuantizeParams gather;
    gather.hidden = c.operands.hidden;
    gather.permuted_rows = ws_.permuted_rows.as<int32_t>();
    gather.tokens = p_.tokens;
    gather.top_k = static_cast<int>(p_.top_k());
    gather.hidden_size = p_.hidden;
    gather.out = ws_.a.as<uint8_t>();
    gather.out_scale = ws_.a_scale.as<float>();
    KBENCH_CUDA_CHECK(moe::launch_permute_quantize(gather, stream));

    KBENCH_CUDA_CHECK(c.fc1.run(stream));

    moe::GatedActivationParams activation;
    activation.activation = p_.activation;
    activation.fc1 = ws_.fc1.as<uint16_t>();
    activation.row_count = ws_.row_offsets.as<int32_t>() + p_.local_experts();
    activation.max_rows = p_.picks();
    activation.intermediate = p_.intermediate;
    activation.out = ws_.act.as<uint8_t>();
    activation.out_scale = ws_.act_scale.as<float>();
    KBENCH_CUDA_CHECK(moe::launch_gated_activation(activation, stream));

    KBENCH_CUDA_CHECK(c.fc2.run(stream));

    moe::CombineParams combine;
    combine.expert_rows = ws_.fc2.as<uint16_t>();
    combine.permuted_rows = ws_.permuted_rows.as<int32_t>();
    combine.weights = c.operands.expert_weights;
    combine.tokens = p_.tokens;
    combine.top_k = static_cast<int>(p_.top_k());
    combine.hidden = p_.hidden;
    combine.output = c.operands.output;
    KBENCH_CUDA_CHECK(moe::launch_combine(combine, stream));
  }

 private:
  struct Call {
    MoeOperands operands;
    wgmma::WgmmaGemm fc1;
    wgmma::WgmmaGemm fc2;
  };
  MoeProblem p_;
  MoeWorkspace ws_;
  std::vector<Call> calls_;
};

class MoeCudaBackend final : public BackendFor<MoeCase> {
 public:
  MoeCudaBackend()
      : BackendFor({"cuda",
                    "kbench",
                    "sm_90a",
                    {{"trtllm",
                      "trtllm is the reference's backend of this routine (Blackwell cubins); kbench runs its own "
                      "Hopper pipeline, cuda"}}}) {}

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
    const MoeProblem& p = problem.problem();
    if (p.local_experts() > wgmma::kMaxDeviceGroups)
      return Support::no("the grouped GEMM takes at most 256 local experts");
    for (const auto& g :
         {grouped_gemm(p, p.w1_rows(), p.hidden, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
          grouped_gemm(p, p.hidden, p.intermediate, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr)}) {
      if (const auto reason = wgmma::wgmma_gemm_unsupported(g)) return Support::no(*reason);
    }
    return Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(MoeCase& problem, cudaStream_t /*stream*/) const override {
    return std::make_unique<MoePipeline>(problem);
  }
};

}  // namespace

std::unique_ptr<Backend> make_moe_cuda_backend() { return std::make_unique<MoeCudaBackend>(); }

}  // namespace kbench
