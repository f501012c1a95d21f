#include "routines/moe_comm/a2a_backends.hpp"

#include <string>

#include "dist/world.hpp"

#include "routines/moe_comm/a2a_case.hpp"
#include "routines/moe_comm/a2a_operation.hpp"

namespace kbench {
namespace {

namespace a2a = kernels::moe_comm;

// kbench's kernels: dispatch writes each token into the slots of the ranks that hold its experts
// over NVLink, combine writes every result back into its source rank and sums there.
class A2aKernelsOperation final : public A2aOperation {
 public:
  A2aKernelsOperation(MoeA2aCase& c, cudaStream_t stream)
      : A2aOperation(a2a_expert_stage(c, a2a::SlotValidity::stamped, stream)), c_(c) {}

  void dispatch(cudaStream_t stream, int copy) override {
    const std::vector<const void*> sources = c_.payload_sources(copy);
    a2a::launch_dispatch(c_.layout(), c_.route(copy), sources, c_.peers(), stream);
  }
  void combine(cudaStream_t stream, int copy) override {
    a2a::launch_combine(c_.layout(), c_.route(copy), c_.peers(), c_.output(), c_.problem().input_dtype, stream);
  }
 private:
  MoeA2aCase& c_;
};

class A2aKernelsBackend final : public BackendFor<MoeA2aCase> {
 public:
  A2aKernelsBackend() : BackendFor({"moe_a2a", "kbench", "sm_90a"}) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    return device.cc_major == 9 && device.cc_minor == 0 ? Support::yes()
                                                       : Support::no("kbench's all-to-all kernels are built for sm_90a");
  }

 protected:
  [[nodiscard]] Support implements(const MoeA2aCase&) const override {
    const dist::World* world = dist::current_world();
    if (world != nullptr && !world->single_host()) {
      return Support::no("the ranks run on several hosts: kbench's kernels write over NVLink within one host (nccl "
                         "runs across hosts)");
    }
    return Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(MoeA2aCase& c, cudaStream_t stream) const override {
    return validated(std::make_unique<A2aKernelsOperation>(c, stream), c, "moe_a2a", stream);
  }
};

}  // namespace

std::unique_ptr<Backend> make_a2a_kernels_backend() { return std::make_unique<A2aKernelsBackend>(); }

}  // namespace kbench
