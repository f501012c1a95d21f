// kbench with one more routine, `fault_probe`, whose backends misbehave on purpose: the GPU test of
// --isolate runs testlists through this executable. Never part of the kbench binary.
//   ok               y = 2x, refchecked like any routine
//   trap             a kernel executes a trap instruction
//   illegal_address  a kernel stores through a wild pointer
//   hang             a kernel spins until its process is killed (--case_timeout)
//   abort            the host process aborts while launching
#include <cuda_runtime.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "core/routine.hpp"
#include "core/runner.hpp"
#include "kbench/device_buffer.hpp"
#include "routines/builtin_routines.hpp"

namespace kbench {
namespace {

__global__ void twice(const float* x, float* y, int64_t n) {
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

__global__ void trap_kernel() { __trap(); }

__global__ void store_through_wild_pointer(float* wild) { wild[threadIdx.x] = 1.0f; }

__global__ void spin_forever(const volatile int* never_set) {
  while (*never_set == 0) {
  }
}

class FaultProbeCase final : public Case {
 public:
  explicit FaultProbeCase(int64_t size) : size_(size) {}
  [[nodiscard]] double flops() const override { return static_cast<double>(size_); }
  [[nodiscard]] double bytes() const override { return 8.0 * static_cast<double>(size_); }
  [[nodiscard]] std::size_t bytes_per_copy() const override { return 8 * static_cast<std::size_t>(size_); }
  [[nodiscard]] std::size_t reference_bytes() const override { return 0; }
  [[nodiscard]] std::vector<TensorInfo> tensors() const override {
    return {{"x", {size_}, {1}, DType::float32}, {"y", {size_}, {1}, DType::float32}};
  }
  void describe(const Log&) const override {}
  void allocate(int copies, uint64_t seed, cudaStream_t stream) override {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal;
    host_x_.resize(static_cast<std::size_t>(size_));
    for (float& v : host_x_) v = normal(rng);
    for (int c = 0; c < copies; ++c) {
      copies_.push_back({DeviceBuffer(size_ * sizeof(float)), DeviceBuffer(size_ * sizeof(float))});
      KBENCH_CUDA_CHECK(cudaMemcpyAsync(copies_.back().x.get(), host_x_.data(), copies_.back().x.bytes(),
                                        cudaMemcpyHostToDevice, stream));
    }
    never_set_ = DeviceBuffer(sizeof(int));
    KBENCH_CUDA_CHECK(cudaMemsetAsync(never_set_.get(), 0, sizeof(int), stream));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  [[nodiscard]] std::vector<CheckedOutput> outputs() const override {
    return {{"y", copies_.at(0).y.get(), DType::float32, static_cast<std::size_t>(size_), {1e-6, 1e-6}}};
  }
  [[nodiscard]] std::vector<std::vector<float>> reference(cudaStream_t) override {
    std::vector<float> y(host_x_);
    for (float& v : y) v *= 2.0f;
    return {y};
  }

  [[nodiscard]] int64_t size() const { return size_; }
  [[nodiscard]] const float* x(int copy) const { return static_cast<const float*>(copies_.at(copy).x.get()); }
  [[nodiscard]] float* y(int copy) const { return static_cast<float*>(copies_.at(copy).y.get()); }
  [[nodiscard]] const int* never_set() const { return static_cast<const int*>(never_set_.get()); }

 private:
  struct Copy {
    DeviceBuffer x, y;
  };
  int64_t size_;
  std::vector<float> host_x_;
  std::vector<Copy> copies_;
  DeviceBuffer never_set_;
};

enum class Misbehaviour { none, trap, illegal_address, hang, abort };

class ProbeOperation final : public Operation {
 public:
  ProbeOperation(const FaultProbeCase& problem, Misbehaviour how) : problem_(problem), how_(how) {}
  void launch(cudaStream_t stream, int copy) override {
    switch (how_) {
      case Misbehaviour::none: {
        const auto blocks = static_cast<unsigned>((problem_.size() + 255) / 256);
        twice<<<blocks, 256, 0, stream>>>(problem_.x(copy), problem_.y(copy), problem_.size());
        break;
      }
      case Misbehaviour::trap: trap_kernel<<<1, 1, 0, stream>>>(); break;
      case Misbehaviour::illegal_address:
        store_through_wild_pointer<<<1, 32, 0, stream>>>(reinterpret_cast<float*>(0x10));
        break;
      case Misbehaviour::hang: spin_forever<<<1, 1, 0, stream>>>(problem_.never_set()); break;
      case Misbehaviour::abort: std::abort();
    }
    KBENCH_CUDA_CHECK(cudaGetLastError());
  }

 private:
  const FaultProbeCase& problem_;
  Misbehaviour how_;
};

class ProbeBackend final : public BackendFor<FaultProbeCase> {
 public:
  ProbeBackend(std::string name, Misbehaviour how) : BackendFor({std::move(name), "test", "any"}), how_(how) {}
  [[nodiscard]] Support can_run_on(const DeviceInfo&) const override { return Support::yes(); }

 protected:
  [[nodiscard]] Support implements(const FaultProbeCase&) const override { return Support::yes(); }
  [[nodiscard]] std::unique_ptr<Operation> bind(FaultProbeCase& problem, cudaStream_t) const override {
    return std::make_unique<ProbeOperation>(problem, how_);
  }

 private:
  Misbehaviour how_;
};

class FaultProbeRoutine final : public Routine {
 public:
  FaultProbeRoutine() {
    add_backend(std::make_unique<ProbeBackend>("ok", Misbehaviour::none));
    add_backend(std::make_unique<ProbeBackend>("trap", Misbehaviour::trap));
    add_backend(std::make_unique<ProbeBackend>("illegal_address", Misbehaviour::illegal_address));
    add_backend(std::make_unique<ProbeBackend>("hang", Misbehaviour::hang));
    add_backend(std::make_unique<ProbeBackend>("abort", Misbehaviour::abort));
  }
  [[nodiscard]] std::string_view name() const override { return "fault_probe"; }
  [[nodiscard]] std::string_view family() const override { return "test"; }
  [[nodiscard]] std::string_view description() const override { return "Backends that fault on purpose (tests only)"; }
  [[nodiscard]] std::string_view test_name() const override { return "testFaultProbe"; }
  [[nodiscard]] std::vector<FlagSpec> flags() const override {
    return {{"size", FlagKind::integer, "4096", "Elements of x and y.", {}, false, ""}};
  }
  [[nodiscard]] std::vector<std::string> default_backends() const override { return {"ok"}; }
  [[nodiscard]] std::unique_ptr<Case> make_case(const CaseArgs& args) const override {
    if (args.integer("size") < 1) throw CaseError("--size: must be positive");
    return std::make_unique<FaultProbeCase>(args.integer("size"));
  }
};

}  // namespace
}  // namespace kbench

int main(int argc, char** argv) {
  kbench::RoutineRegistry registry = kbench::make_builtin_registry();
  registry.add(std::make_unique<kbench::FaultProbeRoutine>());
  const std::vector<std::string> tokens(argv + 1, argv + argc);
  return kbench::kbench_main(tokens, registry, std::cout);
}
