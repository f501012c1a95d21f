#include "routines/moe_comm/a2a_operation.hpp"

#include <iostream>
#include <string>

#include "core/rank_group.hpp"
#include "kbench/cuda_check.hpp"
#include "routines/moe/kbench_backends.hpp"
#include "routines/moe/moe_pipeline.hpp"
#include "routines/moe_comm/a2a_case.hpp"

namespace kbench {

namespace a2a = kernels::moe_comm;

std::unique_ptr<Operation> a2a_expert_stage(const MoeA2aCase& c, a2a::SlotValidity validity, cudaStream_t stream) {
  const A2aProblem& p = c.problem();
  if (!p.real_math) return nullptr;
  const a2a::A2aLayout& l = c.layout();
  auto* own = static_cast<char*>(c.workspace());
  MoePipelineFeed feed;
  feed.hidden = own + l.payload_offset[a2a::kHiddenPayload];
  if (p.quant == A2aQuant::nvfp4) {
    feed.hidden_sf = reinterpret_cast<const uint8_t*>(own + l.payload_offset[a2a::kBlockScalePayload]);
  } else {
    feed.hidden_block_scales = reinterpret_cast<const float*>(own + l.payload_offset[a2a::kBlockScalePayload]);
  }
  feed.output = own + l.combine_in_offset;
  a2a::ReceivedPicksParams picks;
  picks.layout = l;
  picks.rank = p.rank;
  picks.experts_per_rank = static_cast<int>(p.experts_per_rank());
  picks.top_k = static_cast<int>(p.top_k);
  picks.validity = validity;
  picks.tokens_per_source = static_cast<int>(p.tokens);
  picks.own_workspace = own;
  feed.route = [picks](cudaStream_t s, int32_t* expert_ids, float* weights, int32_t* local_counts) mutable {
    picks.expert_ids = expert_ids;
    picks.weights = weights;
    picks.local_counts = local_counts;
    KBENCH_CUDA_CHECK(a2a::launch_received_picks(picks, s));
  };
  return std::make_unique<MoePipeline>(c.expert_case(), kbench_expert_gemms(), stream, std::move(feed));
}

std::unique_ptr<Operation> validated(std::unique_ptr<A2aOperation> operation, MoeA2aCase& c,
                                     std::string_view backend, cudaStream_t stream) {
  if (!c.problem().validate) return operation;
  A2aOperation& op = *operation;
  const int64_t mismatches =
      c.validate([&](cudaStream_t s) { op.dispatch(s, 0); }, [&](cudaStream_t s) { op.combine(s, 0); }, stream);
  RankGroup* group = rank_group();
  const double mine = static_cast<double>(mismatches);
  const double worst = group != nullptr ? group->max_over_ranks(std::span(&mine, 1)).front() : mine;
  const std::string what = std::string(backend) + ", quant_dtype " + std::string(a2a_quant_name(c.problem().quant));
  if (worst > 0) {
    throw CaseError("[VALIDATE] FAILED (" + what + "): up to " + std::to_string(static_cast<int64_t>(worst)) +
                    " elements of a rank's combined output off the fake expert stage's sum beyond the reference's "
                    "tolerance" +
                    (mismatches > 0 ? " (this rank: " + std::to_string(mismatches) + ")" : ""));
  }
  if (c.problem().rank == 0) {
    std::cout << "[VALIDATE] PASSED (" << what << "): every rank's tokens reached the ranks of their experts and "
              << "came back summed" << std::endl;
  }
  return operation;
}

}  // namespace kbench
