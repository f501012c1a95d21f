#include "routines/moe_comm/a2a_operation.hpp"

#include <iostream>
#include <string>

#include "core/rank_group.hpp"
#include "routines/moe_comm/a2a_case.hpp"

namespace kbench {

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
