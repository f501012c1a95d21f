#include "core/verify.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "core/host_tensor.hpp"
#include "core/rank_group.hpp"
#include "kbench/cuda_check.hpp"

namespace kbench {
namespace {

// Bit for bit: a repeated call writes the same values (NaN where the first did too).
Comparison compare_repeated(const std::string& name, const std::vector<float>& first, const std::vector<float>& second) {
  Comparison c;
  c.tensor = name + " (second call)";
  c.total = static_cast<int64_t>(first.size());
  c.rule = "a second call with the same inputs, seed and offset wrote other values";
  for (std::size_t i = 0; i < first.size(); ++i) {
    if (i >= second.size() || std::memcmp(&first[i], &second[i], sizeof(float)) != 0) ++c.mismatches;
  }
  return c;
}

}  // namespace

RefcheckResult Verifier::check(Operation& operation, cudaStream_t stream) {
  problem_.restore_inputs(stream);
  const std::vector<CheckedOutput> outputs = problem_.outputs();
  if (!expected_) {
    expected_ = problem_.reference(stream);
    if (expected_->size() != outputs.size()) {
      throw std::logic_error("the reference gives " + std::to_string(expected_->size()) + " tensors for " +
                             std::to_string(outputs.size()) + " outputs");
    }
  }
  // 0xFF bytes are NaN in bfloat16, float16, float32 and both fp8 formats, -1 in the index types: an
  // element the backend does not write cannot pass.
  const auto call = [&] {
    for (const CheckedOutput& out : outputs) {
      if (out.poison) KBENCH_CUDA_CHECK(cudaMemsetAsync(const_cast<void*>(out.data), 0xFF, out.count * dtype_size(out.dtype), stream));
    }
    // In a multi-process run another rank may write this rank's outputs (the all-to-all's receive
    // slots): no rank calls before every rank's poison has landed.
    if (RankGroup* group = rank_group(); group != nullptr && group->size() > 1) {
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      (void)group->all(true);
    }
    operation.launch(stream, 0);
    KBENCH_CUDA_CHECK(cudaGetLastError());
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<std::vector<float>> got;
    for (const CheckedOutput& out : outputs) got.push_back(read_as_floats(out.data, out.dtype, out.count, stream));
    return got;
  };
  const std::vector<std::vector<float>> got = call();
  RefcheckResult result;
  result.comparisons = problem_.compare(outputs, *expected_, got);
  if (std::any_of(outputs.begin(), outputs.end(), [](const CheckedOutput& o) { return o.repeatable; })) {
    problem_.restore_inputs(stream);
    const std::vector<std::vector<float>> again = call();
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].repeatable) result.comparisons.push_back(compare_repeated(outputs[i].name, got[i], again[i]));
    }
  }
  return result;
}

}  // namespace kbench
