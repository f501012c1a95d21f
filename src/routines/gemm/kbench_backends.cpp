#include "routines/gemm/kbench_backends.hpp"

#include <optional>
#include <vector>

#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/gemm/sm90/wgmma_gemm.hpp"
#include "routines/device_tensors.hpp"
#include "routines/gemm/gemm_case.hpp"

namespace kbench {
namespace {

namespace wgmma = kernels::gemm::sm90;

wgmma::GemmScaling scaling(const GemmProblem& p) {
  if (p.variant == GemmVariant::mm_fp4) return wgmma::GemmScaling::block_fp4;
  if (p.groupwise()) return wgmma::GemmScaling::groupwise;
  return p.per_tensor() ? wgmma::GemmScaling::per_tensor : wgmma::GemmScaling::none;
}

// The kernel's view of one input set. The group GEMM's groups are read on the device (the MoE
// form: row_offsets), a batch's are equal rows.
wgmma::WgmmaGemmParams kernel_params(const GemmProblem& p, const GemmOperands& o, const int32_t* row_offsets) {
  wgmma::WgmmaGemmParams k;
  k.scaling = scaling(p);
  k.groups = static_cast<int>(p.batch);
  const bool device_groups = p.variant == GemmVariant::group_gemm_fp8_nt_groupwise;
  k.rows_per_group = device_groups ? 0 : p.m;
  k.row_offsets = row_offsets;
  k.rows = p.batch * p.m;
  k.n = p.n;
  k.k = p.k;
  k.a = o.a;
  k.a_dtype = p.a_dtype;
  k.b = o.b;
  k.b_dtype = p.b_dtype;
  k.d = o.out;
  k.d_dtype = p.out_dtype;
  k.a_scale = o.a_scale;
  k.b_scale = o.b_scale;
  k.enable_pdl = p.enable_pdl;
  if (p.variant == GemmVariant::mm_fp4) {
    k.fp4_format = p.fp4_format();
    k.a_block_scales = o.a_block_scales;
    k.b_block_scales = o.b_block_scales;
    k.a_sf_layout = p.a_sf_layout();
    k.b_sf_layout = p.b_sf_layout();
    k.alpha = o.alpha;
  }
  if (p.groupwise()) {
    // The reference's layouts (groupwise_fp8.hpp's offsets, one step along each coordinate): A's
    // over all groups' rows, B's one per group.
    const int64_t k_blocks = p.k_blocks();
    const int64_t n_blocks = p.n_blocks();
    k.a_scale_row_stride = kernels::gemm::a_scale_offset(p.major, k.rows, k_blocks, 1, 0);
    k.a_scale_k_stride = kernels::gemm::a_scale_offset(p.major, k.rows, k_blocks, 0, 1);
    k.b_scale_group_stride = n_blocks * k_blocks;
    k.b_scale_n_stride = kernels::gemm::b_scale_offset(p.major, n_blocks, k_blocks, 1, 0);
    k.b_scale_k_stride = kernels::gemm::b_scale_offset(p.major, n_blocks, k_blocks, 0, 1);
  }
  return k;
}

class WgmmaGemmOperation final : public Operation {
 public:
  WgmmaGemmOperation(const GemmCase& problem, cudaStream_t stream) {
    const GemmProblem& p = problem.problem();
    if (p.variant == GemmVariant::group_gemm_fp8_nt_groupwise) {
      std::vector<int32_t> offsets(static_cast<std::size_t>(p.batch) + 1);
      for (std::size_t g = 0; g < offsets.size(); ++g) offsets[g] = static_cast<int32_t>(static_cast<int64_t>(g) * p.m);
      row_offsets_ = upload(offsets, stream);
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    for (int copy = 0; copy < problem.copies(); ++copy) {
      gemms_.emplace_back(kernel_params(p, problem.operands(copy), row_offsets_.as<int32_t>()));
    }
  }

  void launch(cudaStream_t stream, int copy) override {
    KBENCH_CUDA_CHECK(gemms_[static_cast<std::size_t>(copy)].run(stream));
  }

 private:
  DeviceBuffer row_offsets_;
  std::vector<wgmma::WgmmaGemm> gemms_;
};

class KbenchGemmBackend final : public BackendFor<GemmCase> {
 public:
  KbenchGemmBackend() : BackendFor({"cuda", "kbench", "sm_90a"}) {}

  [[nodiscard]] Support can_run_on(const DeviceInfo& device) const override {
    if (device.cc_major != 9 || device.cc_minor != 0) {
      return Support::no("kbench's GEMM kernel is Hopper's (TMA, wgmma): sm_90a only");
    }
    if (!wgmma::wgmma_gemm_built_for_sm90a()) return Support::no("this build has no sm_90a code (CMAKE_CUDA_ARCHITECTURES)");
    return Support::yes();
  }

 protected:
  [[nodiscard]] Support implements(const GemmCase& problem) const override {
    const GemmProblem& p = problem.problem();
    if (p.bias) return Support::no("kbench's GEMM kernel adds no bias yet");
    if (const auto reason = wgmma::wgmma_gemm_unsupported(kernel_params(p, {}, nullptr))) return Support::no(*reason);
    return Support::yes();
  }
  [[nodiscard]] std::unique_ptr<Operation> bind(GemmCase& problem, cudaStream_t stream) const override {
    return std::make_unique<WgmmaGemmOperation>(problem, stream);
  }
};

}  // namespace

std::unique_ptr<Backend> make_kbench_gemm_backend() { return std::make_unique<KbenchGemmBackend>(); }

}  // namespace kbench
