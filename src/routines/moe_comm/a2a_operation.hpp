// What both backends of moe_a2a_dispatch_combine share: one call is dispatch, (--real_math) the
// expert stage, then combine, each a stage of its own (--per_phase_timing), and --validate, as the reference runs it before timing:
// dispatch, a fake expert stage, combine, checked on every rank; rank 0 prints the verdict and a
// failure stops the case.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "kernels/moe_comm/received_picks.hpp"

namespace kbench {

class MoeA2aCase;

class A2aOperation : public Operation {
 public:
  // experts: --real_math's expert stage, run between dispatch and combine (a stage of its own,
  // moe_kernel, as the reference names it); null: combine sends what combine_in holds.
  explicit A2aOperation(std::unique_ptr<Operation> experts) : experts_(std::move(experts)) {}

  virtual void dispatch(cudaStream_t stream, int copy) = 0;
  virtual void combine(cudaStream_t stream, int copy) = 0;

  void launch(cudaStream_t stream, int copy) final {
    dispatch(stream, copy);
    if (experts_) experts_->launch(stream, copy);
    combine(stream, copy);
  }
  [[nodiscard]] std::vector<OperationStage> stages() final {
    std::vector<OperationStage> out = {{"dispatch", [this](cudaStream_t s, int copy) { dispatch(s, copy); }}};
    if (experts_) out.push_back({"moe_kernel", [this](cudaStream_t s, int copy) { experts_->launch(s, copy); }});
    out.push_back({"combine", [this](cudaStream_t s, int copy) { combine(s, copy); }});
    return out;
  }

 private:
  std::unique_ptr<Operation> experts_;
};

// --real_math's expert stage for `c` (null without it): kbench's MoE pipeline (the MoE family's
// `cuda`) over this rank's experts, reading the tokens in the receive slots that `validity` names
// and writing combine_in.
[[nodiscard]] std::unique_ptr<Operation> a2a_expert_stage(const MoeA2aCase& c, kernels::moe_comm::SlotValidity validity,
                                                          cudaStream_t stream);

// With --validate: the check above (throws CaseError "[VALIDATE] FAILED ..." where any rank's output
// is off). Returns `operation`.
[[nodiscard]] std::unique_ptr<Operation> validated(std::unique_ptr<A2aOperation> operation, MoeA2aCase& c,
                                                   std::string_view backend, cudaStream_t stream);

}  // namespace kbench
