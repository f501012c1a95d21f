#include "routines/norm/flashinfer_backends.hpp"

#include "backends/flashinfer/flashinfer_norm.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"

namespace kbench {
namespace {

namespace fi = backends::flashinfer;

fi::NormOp norm_op(NormVariant variant) {
  switch (variant) {
    case NormVariant::rmsnorm: return fi::NormOp::rmsnorm;
    case NormVariant::fused_add_rmsnorm: return fi::NormOp::fused_add_rmsnorm;
    case NormVariant::gemma_rmsnorm: return fi::NormOp::gemma_rmsnorm;
    case NormVariant::rmsnorm_quant: return fi::NormOp::rmsnorm_quant;
    case NormVariant::fused_add_rmsnorm_quant: return fi::NormOp::fused_add_rmsnorm_quant;
    case NormVariant::gemma_fused_add_rmsnorm: return fi::NormOp::gemma_fused_add_rmsnorm;
    case NormVariant::layernorm_quant: return fi::NormOp::layernorm_quant;
    case NormVariant::fused_rmsnorm_silu:
    case NormVariant::rmsnorm_fp4quant:
    case NormVariant::add_rmsnorm_fp4quant: break;  // not in norm.cuh (implements says so)
  }
  return fi::NormOp::rmsnorm;
}

fi::NormArgs norm_args(const NormCase& problem, int copy, const float* scale) {
  const NormProblem& p = problem.problem();
  const kernels::RmsNormParams k = problem.params(copy);
  fi::NormArgs a;
  a.op = norm_op(p.variant);
  a.input = const_cast<void*>(k.input);
  a.residual = k.residual;
  a.weight = k.weight;
  a.output = k.output;
  a.rows = k.rows;
  a.hidden = k.hidden;
  a.dtype = p.input_dtype;
  a.out_dtype = p.out_dtype;
  a.eps = p.eps;
  a.scale = scale;
  a.enable_pdl = p.enable_pdl;
  if (p.layernorm()) {
    const kernels::LayerNormQuantParams l = problem.layernorm_params(copy);
    a.input = const_cast<void*>(l.input);
    a.weight = nullptr;
    a.output = l.output;
    a.gamma = l.gamma;
    a.beta = l.beta;
  }
  return a;
}

class FlashinferNormOperation final : public Operation {
 public:
  FlashinferNormOperation(const NormCase& problem, cudaStream_t stream) : problem_(problem), scale_(sizeof(float)) {
    // FlashInfer's quantizing kernels divide by their scale; kbench's --scale multiplies, as the
    // reference tool's own refcheck does (the reference passes --scale to FlashInfer unchanged, so
    // its refcheck fails for any --scale but 1). The reciprocal makes both compute the same.
    const float divisor = 1.0f / problem.problem().scale;
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(scale_.get(), &divisor, sizeof divisor, cudaMemcpyHostToDevice, stream));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void launch(cudaStream_t stream, int copy) override {
    KBENCH_CUDA_CHECK(fi::run_norm(norm_args(problem_, copy, scale_.as<float>()), stream));
  }

 private:
  const NormCase& problem_;
  DeviceBuffer scale_;
};

}  // namespace

Support FlashinferNormBackend::can_run_on(const DeviceInfo& device) const {
  if (device.cc_major < 8) return Support::no("kbench builds FlashInfer's kernels for sm_80+");
  return Support::yes();
}

Support FlashinferNormBackend::implements(const NormCase& problem) const {
  const NormProblem& p = problem.problem();
  if (p.fp4()) {
    return Support::no("FlashInfer's norm.cuh has no FP4 norm (the reference runs it as a CuTe-DSL kernel, Blackwell only)");
  }
  if (p.variant == NormVariant::fused_rmsnorm_silu) {
    return Support::no("FlashInfer's norm.cuh has no fused RMSNorm + SiLU kernel (its fused_rmsnorm_silu is another module)");
  }
  if (const auto why = fi::norm_unsupported(norm_args(problem, NormCase::kNoCopy, nullptr))) return Support::no(*why);
  return Support::yes();
}

std::unique_ptr<Operation> FlashinferNormBackend::bind(NormCase& problem, cudaStream_t stream) const {
  return std::make_unique<FlashinferNormOperation>(problem, stream);
}

}  // namespace kbench
