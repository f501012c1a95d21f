// kbench's MoE pipeline, shared by the family's backends: routing -> permutation index -> gather
// in FC1's format (the activation's FP8 quantization fused) -> FC1 -> gated activation with the
// intermediate's re-quantization -> FC2 -> weighted top-k combine, each a stage of the operation
// (--per_stage_timing). The two grouped GEMMs over the local experts are the backend's
// (ExpertGemms): kbench's own (`cuda`) or CUTLASS's (`cutlass`); the rest is kbench's kernels. A
// backend whose FC1 writes the activation itself (its epilogue) replaces the two stages by one,
// fc1_activation. Planned outside timing, no host synchronisation (graph-captured). Where the
// routine routes outside the call (MoeProblem::routing_in_call false), the routing runs once per
// input set when the pipeline is made (on the bind stream) and the call starts at the permutation.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/backend.hpp"
#include "kbench/device_buffer.hpp"
#include "routines/moe/moe_case.hpp"

namespace kbench {

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
      : a(bytes_of(p.picks() * p.hidden, p.activation_dtype())),
        fc1(bytes_of(p.picks() * p.w1_rows(), p.input_dtype)),
        act(bytes_of(p.picks() * p.intermediate, p.activation_dtype())),
        fc2(bytes_of(p.picks() * p.hidden, p.input_dtype)) {
    for (int copy = 0; copy < copies; ++copy) index.emplace_back(p);
    if (p.format == MoeFormat::fp8_block_scale) {
      a_scale = DeviceBuffer(bytes_of(p.picks() * (p.hidden / kMoeScaleBlock), DType::float32));
      act_scale = DeviceBuffer(bytes_of(p.picks() * (p.intermediate / kMoeScaleBlock), DType::float32));
    } else if (p.format == MoeFormat::fp8_per_tensor || p.format == MoeFormat::nvfp4) {
      act_scale = DeviceBuffer(sizeof(float));
      act_amax = DeviceBuffer(sizeof(float));
    }
    if (p.format == MoeFormat::nvfp4) fc2_alpha = DeviceBuffer(bytes_of(p.local_experts(), DType::float32));
    if (p.routing_scales_on_input) row_weights = DeviceBuffer(bytes_of(p.picks(), DType::float32));
  }

  std::vector<Index> index;  // per input set
  DeviceBuffer a, fc1, act, fc2;
  DeviceBuffer a_scale, act_scale, act_amax, row_weights;  // where the format has them
  DeviceBuffer fc2_alpha;  // nvfp4: FC2's per-expert alpha, written by the activation
};

// What one grouped GEMM of an input set multiplies: A's rows `row_offsets` splits into the local
// experts' groups (the permuted rows; every pick at most), B = the experts' weights [n][k], and the
// format's scales (fp8_block_scale: A's 1x128 [row][k / 128], B's K-major 128x128 per expert;
// fp8_per_tensor: A's one, B's one per expert; nvfp4: B's scale bytes per expert and the
// per-expert alpha).
struct ExpertGemmOperands {
  int64_t n = 0;
  int64_t k = 0;
  const void* a = nullptr;
  const float* a_scale = nullptr;
  const void* b = nullptr;
  const float* b_scale = nullptr;
  void* d = nullptr;
  const int32_t* row_offsets = nullptr;
  const uint8_t* b_sf = nullptr;
  const float* group_alpha = nullptr;
  // FC1 with the activation fused: where the activation goes (FC2's A and its scales).
  void* act = nullptr;
  float* act_scale = nullptr;
};

// FC1's (x W1^T) and FC2's (act W2^T) operands of input set `copy`.
[[nodiscard]] ExpertGemmOperands fc1_operands(const MoeProblem& p, const MoeWorkspace& ws, const MoeOperands& o,
                                              int copy);
[[nodiscard]] ExpertGemmOperands fc2_operands(const MoeProblem& p, const MoeWorkspace& ws, const MoeOperands& o,
                                              int copy);

// A backend's two grouped GEMMs, planned for every input set.
class ExpertGemms {
 public:
  virtual ~ExpertGemms() = default;
  virtual void fc1(cudaStream_t stream, int copy) = 0;
  virtual void fc2(cudaStream_t stream, int copy) = 0;
  // Whether fc1 writes the gated activation in FC2's format itself (the pipeline's activation
  // kernel then does not run).
  [[nodiscard]] virtual bool fc1_writes_activation() const { return false; }
};
using ExpertGemmPlanner = std::function<std::unique_ptr<ExpertGemms>(const MoeCase&, const MoeWorkspace&)>;

// A pipeline fed from elsewhere than its case's tensors (the MoE all-to-all's expert stage: the
// tokens dispatched to this rank, read in its receive slots): x in the case's wire format
// (fp8_block_scale: e4m3 codes with fp32 1x128 scales [token][hidden / 128]; nvfp4: codes and scale
// bytes, the case's global scale), where the output goes, and the routing stage that writes, in the
// call, the picks (global ids, -1 for none), their weights and the local experts' histogram.
struct MoePipelineFeed {
  using Route = std::function<void(cudaStream_t, int32_t* expert_ids, float* weights, int32_t* local_counts)>;
  const void* hidden = nullptr;
  const float* hidden_block_scales = nullptr;
  const uint8_t* hidden_sf = nullptr;
  void* output = nullptr;
  Route route;
};

class MoePipeline final : public Operation {
 public:
  MoePipeline(const MoeCase& problem, const ExpertGemmPlanner& plan_gemms, cudaStream_t stream,
              std::optional<MoePipelineFeed> feed = std::nullopt);
  MoePipeline(const MoePipeline&) = delete;  // its stages point at it
  MoePipeline& operator=(const MoePipeline&) = delete;

  void launch(cudaStream_t stream, int copy) override;
  [[nodiscard]] std::vector<OperationStage> stages() override;

 private:
  void route(cudaStream_t stream, int copy) const;
  void permute(cudaStream_t stream, int copy) const;
  void activate(cudaStream_t stream, int copy) const;
  void combine(cudaStream_t stream, int copy) const;
  [[nodiscard]] const MoeWorkspace::Index& index(int copy) const { return ws_.index.at(static_cast<std::size_t>(copy)); }

  MoeProblem p_;
  MoeWorkspace ws_;
  std::vector<OperationStage> stages_;  // made once: launch() runs them
  std::vector<MoeOperands> operands_;   // per input set
  std::unique_ptr<ExpertGemms> gemms_;
  std::optional<MoePipelineFeed> feed_;
};

}  // namespace kbench
