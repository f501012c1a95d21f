// Split KV for kbench's MLA kernels: the plan and the merge kernel (mla_split.hpp).
#include "kernels/attention/mla/mla_split.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kbench::kernels {
namespace {

constexpr int kDc = 512;  // the output row: the latent (ckv) dim

// One 128-thread block per (request, row): out = sum_s w_s o_s / sum_s w_s, w_s = 2^(lse_s - max).
__global__ void __launch_bounds__(128) mla_merge_kernel(const float* part_o, const float* part_lse,
                                                        __nv_bfloat16* out, int rows, int num_splits) {
  const int64_t flat = blockIdx.x;  // b * rows + j
  const int b = static_cast<int>(flat / rows);
  const int j = static_cast<int>(flat % rows);
  const int64_t base = static_cast<int64_t>(b) * num_splits * rows + j;
  float mx = -INFINITY;
  for (int s = 0; s < num_splits; ++s) mx = fmaxf(mx, part_lse[base + static_cast<int64_t>(s) * rows]);
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  float wsum = 0.0f;
  const int col = static_cast<int>(threadIdx.x) * 4;
  for (int s = 0; s < num_splits; ++s) {
    const int64_t idx = base + static_cast<int64_t>(s) * rows;
    const float lse = part_lse[idx];
    if (lse == -INFINITY) continue;
    const float w = exp2f(lse - mx);
    wsum += w;
    const float4 v = *reinterpret_cast<const float4*>(part_o + idx * kDc + col);
    acc[0] += w * v.x;
    acc[1] += w * v.y;
    acc[2] += w * v.z;
    acc[3] += w * v.w;
  }
  const float inv = wsum > 0.0f ? 1.0f / wsum : 0.0f;
  __nv_bfloat162 lo = __floats2bfloat162_rn(acc[0] * inv, acc[1] * inv);
  __nv_bfloat162 hi = __floats2bfloat162_rn(acc[2] * inv, acc[3] * inv);
  uint2 packed;
  packed.x = *reinterpret_cast<uint32_t*>(&lo);
  packed.y = *reinterpret_cast<uint32_t*>(&hi);
  *reinterpret_cast<uint2*>(out + flat * kDc + col) = packed;
}

}  // namespace

std::size_t MlaPlan::workspace_bytes(const MlaParams& p) const {
  if (num_splits <= 1) return 0;
  const std::size_t slots = static_cast<std::size_t>(p.batch) * num_splits * p.s_qo * p.num_heads;
  return slots * (kDc + 1) * sizeof(float);
}

MlaPlan plan_mla_split(const MlaParams& p, int rows_per_cta, int ctas_per_sm, int tile_keys, int max_kv_len,
                       int sm_count) {
  MlaPlan plan;
  const int rows = p.s_qo * p.num_heads;
  plan.rows_per_cta = rows_per_cta;
  plan.row_blocks = (rows + rows_per_cta - 1) / rows_per_cta;
  const int64_t base = static_cast<int64_t>(std::max(p.batch, 1)) * plan.row_blocks;
  const int64_t target = static_cast<int64_t>(std::max(sm_count, 1)) * ctas_per_sm;
  const int tiles = std::max((std::max(max_kv_len, 1) + tile_keys - 1) / tile_keys, 1);
  int splits = 1;
  if (base < target) {
    constexpr int kMinTilesPerSplit = 4;  // a split shorter than that costs more in merge than it gains
    splits = static_cast<int>(std::min<int64_t>((target + base - 1) / base, std::max(tiles / kMinTilesPerSplit, 1)));
    // Waves of CTAs per unit of a request's work: splitting must save a tenth of the time at least
    // (128 one-block requests on 132 SMs: two splits make two waves of half the work, no gain).
    const double split_waves = static_cast<double>((base * splits + target - 1) / target) / splits;
    if (split_waves > 0.9) splits = 1;
  }
  const int tiles_per_split = (tiles + splits - 1) / splits;
  plan.split_keys = tiles_per_split * tile_keys;
  plan.num_splits = (tiles + tiles_per_split - 1) / tiles_per_split;
  return plan;
}

cudaError_t make_mla_kernel_args(const MlaParams& p, const MlaPlan& plan, void* out, void* workspace,
                                 MlaKernelArgs* args) {
  if (p.q_nope == nullptr || p.q_pe == nullptr || p.ckv == nullptr || p.kpe == nullptr || p.kv_indptr == nullptr ||
      p.kv_indices == nullptr || p.kv_len == nullptr || out == nullptr ||
      (plan.num_splits > 1 && workspace == nullptr)) {
    return cudaErrorInvalidValue;
  }
  constexpr float kLog2e = 1.4426950408889634f;
  MlaKernelArgs a{};
  a.q_nope = p.q_nope;
  a.q_pe = p.q_pe;
  a.ckv = p.ckv;
  a.kpe = p.kpe;
  a.kv_indptr = p.kv_indptr;
  a.kv_indices = p.kv_indices;
  a.kv_len = p.kv_len;
  a.out = static_cast<__nv_bfloat16*>(out);
  a.s_qo = p.s_qo;
  a.num_heads = p.num_heads;
  a.rows = p.s_qo * p.num_heads;
  a.page_size = p.page_size;
  a.num_splits = plan.num_splits;
  a.split_keys = plan.split_keys;
  a.scale_log2 = p.sm_scale * p.q_scale * p.ckv_scale * kLog2e;
  a.v_scale = p.ckv_scale;
  if (plan.num_splits > 1) {
    const std::size_t slots = static_cast<std::size_t>(p.batch) * plan.num_splits * a.rows;
    a.part_o = static_cast<float*>(workspace);
    a.part_lse = a.part_o + slots * kDc;
  }
  *args = a;
  return cudaSuccess;
}

cudaError_t launch_mla_merge(const MlaParams& p, const MlaPlan& plan, const void* workspace, void* out,
                             cudaStream_t stream) {
  const int rows = p.s_qo * p.num_heads;
  const int64_t merge_blocks = static_cast<int64_t>(p.batch) * rows;
  if (merge_blocks > 0x7fffffff || workspace == nullptr || out == nullptr) return cudaErrorInvalidValue;
  const std::size_t slots = static_cast<std::size_t>(p.batch) * plan.num_splits * rows;
  const float* part_o = static_cast<const float*>(workspace);
  mla_merge_kernel<<<static_cast<unsigned>(merge_blocks), 128, 0, stream>>>(
      part_o, part_o + slots * kDc, static_cast<__nv_bfloat16*>(out), rows, plan.num_splits);
  return cudaGetLastError();
}

}  // namespace kbench::kernels
