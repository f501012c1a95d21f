// The refcheck of a backend, written once for every routine: input set 0 restored, the fp32
// reference computed (once per case: the restored inputs never differ), the outputs poisoned
// (NaN in every float format kbench writes, -1 in the index types), one call of the backend, and
// the outputs compared by the case (Case::compare: isclose with each output's tolerance unless the
// case checks by a rule). Outputs marked repeatable are written a second time, from restored
// inputs, and must come out the same.
#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <vector>

#include "core/refcheck.hpp"
#include "core/routine.hpp"

namespace kbench {

class Verifier {
 public:
  explicit Verifier(Case& problem) : problem_(problem) {}
  [[nodiscard]] RefcheckResult check(Operation& operation, cudaStream_t stream);

 private:
  Case& problem_;
  std::optional<std::vector<std::vector<float>>> expected_;
};

}  // namespace kbench
