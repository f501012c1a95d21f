#include "routines/rope/flashinfer_backends.hpp"

#include "backends/flashinfer/flashinfer_rope.hpp"
#include "kbench/cuda_check.hpp"

namespace kbench {
namespace {

namespace fi = backends::flashinfer;

class FlashinferRopeQuantizeOperation final : public Operation {
 public:
  explicit FlashinferRopeQuantizeOperation(const RopeQuantizeCase& problem) : problem_(problem) {}
  void launch(cudaStream_t stream, int copy) override { KBENCH_CUDA_CHECK(fi::run_rope_quantize(problem_.params(copy), stream)); }

 private:
  const RopeQuantizeCase& problem_;
};

}  // namespace

Support FlashinferRopeQuantizeBackend::can_run_on(const DeviceInfo& device) const {
  if (device.cc_major < 8) return Support::no("kbench builds FlashInfer's kernels for sm_80+");
  return Support::yes();
}

Support FlashinferRopeQuantizeBackend::implements(const RopeQuantizeCase& problem) const {
  if (const auto why = fi::rope_quantize_unsupported(problem.shape(), problem.paged())) return Support::no(*why);
  return Support::yes();
}

std::unique_ptr<Operation> FlashinferRopeQuantizeBackend::bind(RopeQuantizeCase& problem, cudaStream_t) const {
  return std::make_unique<FlashinferRopeQuantizeOperation>(problem);
}

}  // namespace kbench
