#include "core/verify.hpp"

#include <stdexcept>

#include "core/host_tensor.hpp"
#include "kbench/cuda_check.hpp"

namespace kbench {

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
  for (const CheckedOutput& out : outputs) {
    // 0xFF bytes are NaN in bfloat16, float16, float32 and both fp8 formats: an element the backend
    // does not write cannot pass.
    if (out.poison) KBENCH_CUDA_CHECK(cudaMemsetAsync(const_cast<void*>(out.data), 0xFF, out.count * dtype_size(out.dtype), stream));
  }
  operation.launch(stream, 0);
  KBENCH_CUDA_CHECK(cudaGetLastError());
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  RefcheckResult result;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const CheckedOutput& out = outputs[i];
    const std::vector<float> got = read_as_floats(out.data, out.dtype, out.count, stream);
    result.comparisons.push_back(is_fp8(out.dtype)
                                     ? compare_quantized(out.name, (*expected_)[i], got, out.tolerance, out.dtype)
                                     : compare_isclose(out.name, (*expected_)[i], got, out.tolerance));
  }
  return result;
}

}  // namespace kbench
