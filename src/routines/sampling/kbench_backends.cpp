#include "routines/sampling/kbench_backends.hpp"

#include <string>

#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/sampling/sampling.hpp"
#include "routines/sampling/sampling_case.hpp"

namespace kbench {
namespace {

namespace ks = kernels::sampling;

enum class Kernel { sampler, filter, top_k, chain };

Kernel kernel_of(SamplingOp op) {
  if (is_sampler(op)) return Kernel::sampler;
  if (op == SamplingOp::chain_speculative_sampling) return Kernel::chain;
  if (op == SamplingOp::top_k || is_transform(op)) return Kernel::top_k;
  return Kernel::filter;
}

cudaError_t plan(const SamplingCase& c, ks::RowPlan* plan) {
  switch (kernel_of(c.problem().op)) {
    case Kernel::sampler: return ks::plan_sampler(c.sampler_params(SamplingCase::kNoCopy), plan);
    case Kernel::filter: return ks::plan_filter(c.filter_params(SamplingCase::kNoCopy), plan);
    case Kernel::top_k: return ks::plan_top_k(c.top_k_params(SamplingCase::kNoCopy), plan);
    case Kernel::chain: return ks::plan_chain(c.chain_params(SamplingCase::kNoCopy), plan);
  }
  return cudaErrorInvalidValue;
}

// The plan's workspace (the two-pass kernels' candidates) allocated here, outside timing.
class CudaSamplingOperation final : public Operation {
 public:
  CudaSamplingOperation(const SamplingCase& problem, ks::RowPlan plan)
      : problem_(problem), plan_(plan), workspace_(plan.workspace_bytes) {}
  void launch(cudaStream_t stream, int copy) override {
    switch (kernel_of(problem_.problem().op)) {
      case Kernel::sampler: {
        ks::SamplerParams params = problem_.sampler_params(copy);
        params.workspace = workspace_.get();
        KBENCH_CUDA_CHECK(ks::launch_sampler(params, plan_, stream));
        break;
      }
      case Kernel::filter: KBENCH_CUDA_CHECK(ks::launch_filter(problem_.filter_params(copy), plan_, stream)); break;
      case Kernel::top_k: {
        ks::TopKParams params = problem_.top_k_params(copy);
        params.workspace = workspace_.get();
        KBENCH_CUDA_CHECK(ks::launch_top_k(params, plan_, stream));
        break;
      }
      case Kernel::chain: KBENCH_CUDA_CHECK(ks::launch_chain(problem_.chain_params(copy), plan_, stream)); break;
    }
  }

 private:
  const SamplingCase& problem_;
  ks::RowPlan plan_;
  DeviceBuffer workspace_;
};

std::string no_image(const DeviceInfo& device) {
  return "this build has no kernel image for sm_" + std::to_string(device.cc_major * 10 + device.cc_minor) +
         "; rebuild with CMAKE_CUDA_ARCHITECTURES including it";
}

class CudaSamplingBackend final : public BackendFor<SamplingCase> {
 public:
  CudaSamplingBackend() : BackendFor({"cuda", "kbench", "sm_90a (thread-block clusters)"}) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (device.cc_major < 9) return Support::no("kbench's sampling kernels use thread-block clusters (sm_90+)");
    if (ks::sampling_kernels_available() != cudaSuccess) {
      (void)cudaGetLastError();
      return Support::no(no_image(device));
    }
    return Support::yes();
  }

 protected:
  [[nodiscard]] Support implements(const SamplingCase& problem) const override {
    ks::RowPlan unused;
    const cudaError_t status = plan(problem, &unused);
    (void)cudaGetLastError();
    if (status == cudaErrorNotSupported) {
      return Support::no("a row of " + std::to_string(problem.problem().cols()) + " " +
                         std::string(dtype_name(problem.problem().input_dtype)) +
                         " values is more than 16 CTAs' shared memory holds");
    }
    if (status != cudaSuccess) return Support::no(std::string("no plan for this case: ") + cudaGetErrorString(status));
    return Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(SamplingCase& problem, cudaStream_t) const override {
    ks::RowPlan row_plan;
    KBENCH_CUDA_CHECK(plan(problem, &row_plan));
    return std::make_unique<CudaSamplingOperation>(problem, row_plan);
  }
};

// CUB's segmented sort and a walk of the sorted rows; the workspace (sorted copies, CUB's
// temporary storage) allocated and its constant parts filled here, outside timing.
class CubSamplingOperation final : public Operation {
 public:
  CubSamplingOperation(const SamplingCase& problem, cudaStream_t stream) : problem_(problem) {
    const ks::SortBaselineParams params = problem.sort_params(0);
    KBENCH_CUDA_CHECK(ks::sort_baseline_workspace(params, &bytes_));
    workspace_ = DeviceBuffer(bytes_);
    KBENCH_CUDA_CHECK(ks::prepare_sort_baseline(params, workspace_.get(), bytes_, stream));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void launch(cudaStream_t stream, int copy) override {
    KBENCH_CUDA_CHECK(ks::launch_sort_baseline(problem_.sort_params(copy), workspace_.get(), bytes_, stream));
  }

 private:
  const SamplingCase& problem_;
  std::size_t bytes_ = 0;
  DeviceBuffer workspace_;
};

class CubSamplingBackend final : public BackendFor<SamplingCase> {
 public:
  CubSamplingBackend()
      : BackendFor({"cub", "CUB", "sm_75+ (the built architectures; default sm_90a)"}) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (ks::sampling_kernels_available() != cudaSuccess) {
      (void)cudaGetLastError();
      return Support::no(no_image(device));
    }
    return Support::yes();
  }

 protected:
  [[nodiscard]] Support implements(const SamplingCase& problem) const override {
    const SamplingProblem& p = problem.problem();
    if (!filters_by_sorting(p.op)) return Support::no("the sort-based baseline serves the filtering routines only");
    if (p.rows() * p.cols() > 0x7FFFFFFF) return Support::no("more than 2^31 - 1 elements (CUB's int32 offsets here)");
    return Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(SamplingCase& problem, cudaStream_t stream) const override {
    return std::make_unique<CubSamplingOperation>(problem, stream);
  }
};

}  // namespace

std::unique_ptr<Backend> make_sampling_cuda_backend() { return std::make_unique<CudaSamplingBackend>(); }
std::unique_ptr<Backend> make_sampling_cub_backend() { return std::make_unique<CubSamplingBackend>(); }

}  // namespace kbench
