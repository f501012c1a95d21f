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

// One of the two grouped GEMMs in the format's scaling: `rows` = every pick (the permuted row count
// is known only on the device; row_offsets bound each local expert's group), B = the local experts'
// weights [n][k]. fp8_block_scale: A's 1x128 scales [row][k / 128], B's K-major 128x128 per expert;
// fp8_per_tensor: A's one scale, B's one per expert; unquantized: 16-bit operands.
wgmma::WgmmaGemmParams grouped_gemm(const MoeProblem& p, int64_t n, int64_t k, const void* a, const float* a_scale,
                                    const void* b, const float* b_scale, void* d, const int32_t* row_offsets) {
  wgmma::WgmmaGemmParams g;
  g.groups = static_cast<int>(p.local_experts());
  g.rows_per_group = 0;
  g.row_offsets = row_offsets;
  g.rows = p.picks();
  g.n = n;
  g.k = k;
  g.a = a;
  g.b = b;
  g.d = d;
  g.a_dtype = g.b_dtype = p.operand_dtype();
  g.d_dtype = p.input_dtype;
  g.a_scale = a_scale;
  g.b_scale = b_scale;
  switch (p.format) {
    case MoeFormat::fp8_block_scale: {
      g.scaling = wgmma::GemmScaling::groupwise;
      const int64_t k_blocks = k / kMoeScaleBlock, n_blocks = n / kMoeScaleBlock;
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
    case MoeFormat::nvfp4: break;  // refused by implements()
  }
  return g;
}

// The pipeline's workspace, sized for every pick (tokens x top_k rows). The routing's counts and the
// permutation's index belong to one input set each, so a stage run alone for a set (per-stage
// timing) finds that set's expert groups; the activations' buffers are shared by the sets (their
// calls are ordered on one stream, and every stage rewrites the rows it reads downstream).
struct MoeWorkspace {
  struct Index {
    explicit Index(const MoeProblem& p)
        : local_counts(static_cast<std::size_t>(p.local_experts()) * sizeof(int32_t)),
          row_offsets(static_cast<std::size_t>(p.local_experts() + 1) * sizeof(int32_t)),
          permuted_rows(static_cast<std::size_t>(p.picks()) * sizeof(int32_t)) {}
    DeviceBuffer local_counts, row_offsets, permuted_rows;
  };
  MoeWorkspace(const MoeProblem& p, int copies)
      : a(bytes(p.picks() * p.hidden, p.operand_dtype())),
        fc1(bytes(p.picks() * p.w1_rows(), p.input_dtype)),
        act(bytes(p.picks() * p.intermediate, p.operand_dtype())),
        fc2(bytes(p.picks() * p.hidden, p.input_dtype)) {
    for (int copy = 0; copy < copies; ++copy) index.emplace_back(p);
    if (p.format == MoeFormat::fp8_block_scale) {
      a_scale = DeviceBuffer(bytes(p.picks() * (p.hidden / kMoeScaleBlock), DType::float32));
      act_scale = DeviceBuffer(bytes(p.picks() * (p.intermediate / kMoeScaleBlock), DType::float32));
    } else if (p.format == MoeFormat::fp8_per_tensor) {
      act_scale = DeviceBuffer(sizeof(float));
      act_amax = DeviceBuffer(sizeof(float));
    }
    if (p.routing_scales_on_input) row_weights = DeviceBuffer(bytes(p.picks(), DType::float32));
  }
  static std::size_t bytes(int64_t elements, DType dtype) { return static_cast<std::size_t>(elements) * dtype_size(dtype); }

  std::vector<Index> index;  // per input set
  DeviceBuffer a, fc1, act, fc2;
  DeviceBuffer a_scale, act_scale, act_amax, row_weights;  // where the format has them
};

class MoePipeline final : public Operation {
 public:
  explicit MoePipeline(const MoeCase& problem) : p_(problem.problem()), ws_(p_, problem.copies()) {
    for (int copy = 0; copy < problem.copies(); ++copy) {
      const MoeOperands o = problem.operands(copy);
      const int32_t* row_offsets = ws_.index[static_cast<std::size_t>(copy)].row_offsets.as<int32_t>();
      const float* a_scale = p_.format == MoeFormat::fp8_block_scale ? ws_.a_scale.as<float>() : o.hidden_scale;
      calls_.push_back(Call{o,
                            wgmma::WgmmaGemm(grouped_gemm(p_, p_.w1_rows(), p_.hidden, ws_.a.get(), a_scale, o.w1,
                                                          o.w1_scale, ws_.fc1.get(), row_offsets)),
                            wgmma::WgmmaGemm(grouped_gemm(p_, p_.hidden, p_.intermediate, ws_.act.get(),
                                                          ws_.act_scale.as<float>(), o.w2, o.w2_scale, ws_.fc2.get(),
                                                          row_offsets))});
    }
  }

  void launch(cudaStream_t stream, int copy) override {
    for (const OperationStage& stage : stages()) stage.launch(stream, copy);
  }

  [[nodiscard]] std::vector<OperationStage> stages() override {
    return {{"routing", [this](cudaStream_t s, int copy) { route(s, copy); }},
            {"permutation", [this](cudaStream_t s, int copy) { permute(s, copy); }},
            {"fc1", [this](cudaStream_t s, int copy) { KBENCH_CUDA_CHECK(call(copy).fc1.run(s)); }},
            {"activation", [this](cudaStream_t s, int copy) { activate(s, copy); }},
            {"fc2", [this](cudaStream_t s, int copy) { KBENCH_CUDA_CHECK(call(copy).fc2.run(s)); }},
            {"combine", [this](cudaStream_t s, int copy) { combine(s, copy); }}};
  }

 private:
  struct Call {
    MoeOperands operands;
    wgmma::WgmmaGemm fc1;
    wgmma::WgmmaGemm fc2;
  };

  [[nodiscard]] const Call& call(int copy) const { return calls_.at(static_cast<std::size_t>(copy)); }
  [[nodiscard]] const MoeWorkspace::Index& index(int copy) const {
    return ws_.index.at(static_cast<std::size_t>(copy));
  }

  void route(cudaStream_t stream, int copy) const {
    const MoeOperands& o = call(copy).operands;
    moe::RoutingParams routing;
    routing.config = p_.routing;
    routing.logits = o.logits;
    routing.logits_dtype = p_.logits_dtype;
    routing.bias = o.bias;
    routing.bias_dtype = DType::bfloat16;
    routing.tokens = p_.tokens;
    routing.expert_ids = o.expert_ids;
    routing.weights = o.expert_weights;
    routing.local_counts = index(copy).local_counts.as<int32_t>();
    KBENCH_CUDA_CHECK(moe::launch_routing(routing, stream));
  }

  // The expert-contiguous index, then the picked rows gathered in its order in FC1's format.
  void permute(cudaStream_t stream, int copy) const {
    const MoeWorkspace::Index& ix = index(copy);
    moe::PermutationIndexParams order;
    order.expert_ids = call(copy).operands.expert_ids;
    order.local_counts = ix.local_counts.as<int32_t>();
    order.tokens = p_.tokens;
    order.top_k = static_cast<int>(p_.top_k());
    order.local_expert_offset = p_.routing.local_expert_offset;
    order.local_num_experts = static_cast<int>(p_.local_experts());
    order.row_offsets = ix.row_offsets.as<int32_t>();
    order.permuted_rows = ix.permuted_rows.as<int32_t>();
    KBENCH_CUDA_CHECK(moe::launch_permutation_index(order, stream));

    const MoeOperands& o = call(copy).operands;
    moe::PermuteQuantizeParams gather;
    gather.format = p_.format == MoeFormat::fp8_block_scale                       ? moe::GatherFormat::fp8_block
                    : p_.format == MoeFormat::fp8_per_tensor && !p_.hidden_in_fp8 ? moe::GatherFormat::fp8_per_tensor
                                                                                  : moe::GatherFormat::copy;
    gather.hidden = o.hidden;
    gather.hidden_dtype = p_.hidden_in_fp8 ? DType::fp8_e4m3 : p_.input_dtype;
    gather.permuted_rows = ix.permuted_rows.as<int32_t>();
    gather.tokens = p_.tokens;
    gather.top_k = static_cast<int>(p_.top_k());
    gather.hidden_size = p_.hidden;
    gather.tensor_scale = o.hidden_scale;
    gather.out = ws_.a.get();
    gather.out_scale = ws_.a_scale.as<float>();
    if (p_.routing_scales_on_input) {
      gather.pick_weights = o.expert_weights;
      gather.row_weights = ws_.row_weights.as<float>();
    }
    KBENCH_CUDA_CHECK(moe::launch_permute_quantize(gather, stream));
  }

  void activate(cudaStream_t stream, int copy) const {
    moe::GatedActivationParams activation;
    activation.activation = p_.activation;
    activation.output = p_.format == MoeFormat::fp8_block_scale  ? moe::ActivationOutput::fp8_block
                        : p_.format == MoeFormat::fp8_per_tensor ? moe::ActivationOutput::fp8_per_tensor
                                                                 : moe::ActivationOutput::half;
    activation.fc1 = ws_.fc1.as<uint16_t>();
    activation.fc1_dtype = p_.input_dtype;
    activation.row_weights = ws_.row_weights.as<float>();
    activation.row_count = index(copy).row_offsets.as<int32_t>() + p_.local_experts();
    activation.max_rows = p_.picks();
    activation.intermediate = p_.intermediate;
    activation.out = ws_.act.get();
    activation.out_scale = ws_.act_scale.as<float>();
    activation.amax = ws_.act_amax.as<float>();
    KBENCH_CUDA_CHECK(moe::launch_gated_activation(activation, stream));
  }

  void combine(cudaStream_t stream, int copy) const {
    const MoeOperands& o = call(copy).operands;
    moe::CombineParams sum;
    sum.expert_rows = ws_.fc2.as<uint16_t>();
    sum.fp16 = p_.input_dtype == DType::float16;
    sum.permuted_rows = index(copy).permuted_rows.as<int32_t>();
    sum.weights = p_.routing_scales_on_input ? nullptr : o.expert_weights;
    sum.tokens = p_.tokens;
    sum.top_k = static_cast<int>(p_.top_k());
    sum.hidden = p_.hidden;
    sum.output = static_cast<uint16_t*>(o.output);
    KBENCH_CUDA_CHECK(moe::launch_combine(sum, stream));
  }

  MoeProblem p_;
  MoeWorkspace ws_;
  std::vector<Call> calls_;
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
    const MoeProblem& p = problem.problem();
    if (p.format == MoeFormat::nvfp4) {
      return Support::no("kbench's MoE pipeline has no FP4 weights yet (its grouped GEMM with FP4 weights expanded in "
                         "the pipeline is being built)");
    }
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

std::unique_ptr<Backend> make_moe_cuda_backend(const std::string& reference_label) {
  return std::make_unique<MoeCudaBackend>(reference_label);
}

}  // namespace kbench
