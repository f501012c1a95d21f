// The LayerNorm + FP8 kernel: the RMSNorm register path's layout (rmsnorm_kernel.cuh: a row per
// threads_per_row threads, each holding kVpt 16-byte vectors t, t + tpr, ...; one pass over HBM),
// two row reductions (the mean, then the squared deviations from it, both from registers), the
// fp32 gamma and beta read through L1 (shared by every row). Private to layernorm_launch.cu and
// layernorm_<in>.cu.
#pragma once

#include "kernels/norm/layernorm.hpp"
#include "kernels/norm/rmsnorm_kernel.cuh"

namespace kbench::kernels::rmsnorm_detail {

struct LayerNormArgs {
  const void* input;
  const float* gamma;
  const float* beta;
  void* output;
  int64_t rows;
  int64_t hidden;
  float eps;
  float inv_hidden;
  float out_scale;
};

#define KBENCH_LAYERNORM_DECLARE(NAME)                                                                  \
  [[nodiscard]] cudaError_t launch_layernorm_##NAME(const LayerNormArgs& args, const Plan& plan, bool pdl, \
                                                    cudaStream_t stream)
KBENCH_LAYERNORM_DECLARE(bf16_e4m3);
KBENCH_LAYERNORM_DECLARE(bf16_e5m2);
KBENCH_LAYERNORM_DECLARE(fp16_e4m3);
KBENCH_LAYERNORM_DECLARE(fp16_e5m2);
#undef KBENCH_LAYERNORM_DECLARE

#if defined(__CUDACC__)

template <class TIn, class TOut, int kVpt>
__global__ void __launch_bounds__(512, kVpt == 4 ? 2 : 1) layernorm_quant_kernel(const LayerNormArgs a) {
  static_assert(sizeof(TIn) == 2);
  const int tpr = static_cast<int>(blockDim.x);
  const int64_t row = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
  const bool row_ok = row < a.rows;
  const int nvec = static_cast<int>(a.hidden >> 3);
  const char* in_row = static_cast<const char*>(a.input) + row * a.hidden * 2;
  char* out_row = static_cast<char*>(a.output) + row * a.hidden * static_cast<int64_t>(sizeof(TOut));

  pdl_wait();
  Pack16 x[kVpt];
  bool ok[kVpt];
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * tpr;
    ok[k] = row_ok && i < nvec;
    x[k] = ok[k] ? ld_stream16(in_row + i * 16) : Pack16{};
    if (ok[k]) {
      prefetch_l1(a.gamma + i * 8);
      prefetch_l1(a.beta + i * 8);
    }
  }
  pdl_launch_dependents();

  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    float f[8];
    unpack8<TIn>(x[k], f);
#pragma unroll
    for (int j = 0; j < 8; ++j) sum += f[j];
  }
  const float mean = row_sum(sum) * a.inv_hidden;
  float dev = 0.0f;
#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    if (!ok[k]) continue;
    float f[8];
    unpack8<TIn>(x[k], f);
#pragma unroll
    for (int j = 0; j < 8; ++j) dev = fmaf(f[j] - mean, f[j] - mean, dev);
  }
  if (blockDim.x > 32) __syncthreads();  // row_sum's shared partials are read before they are reused
  const float rstd = rsqrtf(fmaf(row_sum(dev), a.inv_hidden, a.eps));

#pragma unroll
  for (int k = 0; k < kVpt; ++k) {
    if (!ok[k]) continue;
    const int i = static_cast<int>(threadIdx.x) + k * tpr;
    const Pack16 g0 = ld_weight16(a.gamma + i * 8), g1 = ld_weight16(a.gamma + i * 8 + 4);
    const Pack16 b0 = ld_weight16(a.beta + i * 8), b1 = ld_weight16(a.beta + i * 8 + 4);
    const uint32_t g[8] = {g0.u[0], g0.u[1], g0.u[2], g0.u[3], g1.u[0], g1.u[1], g1.u[2], g1.u[3]};
    const uint32_t b[8] = {b0.u[0], b0.u[1], b0.u[2], b0.u[3], b1.u[0], b1.u[1], b1.u[2], b1.u[3]};
    float f[8], y[8];
    unpack8<TIn>(x[k], f);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      y[j] = fmaf((f[j] - mean) * rstd, __uint_as_float(g[j]), __uint_as_float(b[j])) * a.out_scale;
    }
    OutTraits<TOut>::store8(out_row + static_cast<int64_t>(i) * 8, y);
  }
}

template <class TIn, class TOut>
cudaError_t launch_layernorm_typed(const LayerNormArgs& args, const Plan& plan, bool pdl, cudaStream_t stream) {
  void (*kernel)(LayerNormArgs) = nullptr;
  if (plan.path != Path::kRegisters) return cudaErrorInvalidValue;
  switch (plan.vpt) {
    case 1: kernel = layernorm_quant_kernel<TIn, TOut, 1>; break;
    case 4: kernel = layernorm_quant_kernel<TIn, TOut, 4>; break;
    case 8: kernel = layernorm_quant_kernel<TIn, TOut, 8>; break;
    default: return cudaErrorInvalidValue;
  }
  return launch_planned(kernel, plan, pdl, args, stream);
}

#endif  // __CUDACC__

}  // namespace kbench::kernels::rmsnorm_detail
