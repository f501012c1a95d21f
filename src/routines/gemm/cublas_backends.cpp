#include "routines/gemm/cublas_backends.hpp"

#include <optional>
#include <string>

#include "backends/cublas/cublaslt_gemm.hpp"
#include "kbench/cuda_check.hpp"
#include "routines/gemm/block_scale_layouts.hpp"

namespace kbench {
namespace {

using kernels::gemm::ScaleMajor;

backends::CublasGemmShape cublas_shape(const GemmProblem& p) {
  backends::CublasGemmShape s;
  s.batch = p.batch;
  s.m = p.m;
  s.n = p.n;
  s.k = p.k;
  s.a_dtype = p.a_dtype;
  s.b_dtype = p.b_dtype;
  s.out_dtype = p.out_dtype;
  s.scaling = p.groupwise()    ? backends::CublasScaling::blockwise_128
              : p.per_tensor() ? backends::CublasScaling::per_tensor
                               : backends::CublasScaling::none;
  s.bias = p.bias;
  return s;
}

// The current device's compute capability as 10 * major + minor (89, 90), or 0 without one.
int current_sm() {
  const std::optional<DeviceInfo> device = query_device(nullptr);
  return device ? 10 * device->cc_major + device->cc_minor : 0;
}

class CublasGemmOperation final : public Operation {
 public:
  CublasGemmOperation(const GemmCase& problem, cudaStream_t stream)
      : problem_(problem),
        gemm_(make_vendor_object<backends::CublasLtGemm>("cuBLASLt", cublas_shape(problem.problem()))) {
    if (problem.problem().groupwise()) repack_block_scales(stream);
    // The reference's trial call: cuBLASLt may refuse only the launch (an alignment it lacks).
    try {
      launch(stream, 0);
    } catch (const CudaError&) {
      throw;
    } catch (const std::runtime_error& e) {
      throw BackendUnavailable(std::string("cuBLASLt: ") + e.what());
    }
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void launch(cudaStream_t stream, int copy) override {
    const GemmOperands o = problem_.operands(copy);
    backends::CublasGemmOperands call{o.a, o.b, o.out, o.a_scale, o.b_scale, o.bias};
    if (!block_scales_.a.empty()) {
      call.a_scale = block_scales_.a[static_cast<std::size_t>(copy)].as<float>();
      call.b_scale = block_scales_.b[static_cast<std::size_t>(copy)].as<float>();
    }
    gemm_->run(call, stream);
  }

 private:
  // cuBLASLt reads A's block scales k-block-major ([k/128][m], the reference's MN layout) and B's
  // n-block-major ([n/128][k/128 padded to 4], its K layout): whatever --scale_major_mode says, one
  // of the two is in the other layout.
  void repack_block_scales(cudaStream_t stream) {
    const backends::CublasGemmShape shape = gemm_->shape();
    const BlockScaleLayout cublas_layout{
        backends::a_block_scale_floats(shape), backends::b_block_scale_floats(shape),
        [&](int64_t row, int64_t k_block) { return backends::a_block_scale_index(shape, row, k_block); },
        [&](int64_t n_block, int64_t k_block) { return backends::b_block_scale_index(shape, n_block, k_block); }};
    block_scales_ = rewrite_block_scales(problem_, cublas_layout, stream);
  }

  const GemmCase& problem_;
  std::unique_ptr<backends::CublasLtGemm> gemm_;
  RewrittenBlockScales block_scales_;  // per input set, in cuBLASLt's layouts (groupwise only)
};

}  // namespace

Support CublasGemmBackend::can_run_on(const DeviceInfo& device) const {
  if (device.cc_major < 8) return Support::no("kbench runs cuBLASLt's GEMMs on sm_80+");
  return Support::yes();
}

Support CublasGemmBackend::implements(const GemmCase& problem) const {
  const GemmProblem& p = problem.problem();
  if (p.variant == GemmVariant::group_gemm_fp8_nt_groupwise || p.variant == GemmVariant::mm_fp4) {
    return Support::no("kbench calls cuBLASLt for neither grouped nor FP4 GEMMs");
  }
  if (const auto reason = backends::cublaslt_gemm_unsupported(cublas_shape(p))) return Support::no(*reason);
  const int sm = current_sm();
  if ((p.per_tensor() || p.groupwise()) && sm < 89) return Support::no("cuBLASLt's FP8 GEMMs need sm_89+");
  if (p.groupwise() && sm != 90) {
    return Support::no("cuBLASLt's 1 x 128 / 128 x 128 block scaling runs on Hopper (sm_90) only");
  }
  return Support::yes();
}

std::unique_ptr<Operation> CublasGemmBackend::bind(GemmCase& problem, cudaStream_t stream) const {
  return std::make_unique<CublasGemmOperation>(problem, stream);
}

}  // namespace kbench
