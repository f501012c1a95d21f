// The groups whose sizes live on the device (WgmmaGemmArgs::row_offsets), staged in shared memory by
// kbench's sm_90a GEMM kernels (wgmma_gemm_kernel.cuh: m-blocks a group; fp4_swapped_kernel.cuh:
// units a group).
#pragma once

#include <cuda_runtime.h>

#include "kernels/gemm/sm90/wgmma_gemm_args.hpp"

namespace kbench::kernels::gemm::sm90 {

// group_rows[g] = row_offsets[g] (g <= groups) and prefix[g] = the sum of count(rows of g') over
// g' < g, prefix[groups] the total (warp 0 scans, every lane a run of groups). Every thread of the
// block (`threads` of them) calls it; each returns the total, after a block barrier.
template <class Count>
__device__ int stage_group_prefix(const WgmmaGemmArgs& args, int* group_rows, int* prefix, int threads, int tid,
                                  Count count) {
  for (int g = tid; g <= args.groups; g += threads) group_rows[g] = args.row_offsets[g];
  __syncthreads();
  if (tid < 32) {
    const int per_lane = (args.groups + 31) / 32;
    const int begin = min(tid * per_lane, args.groups);
    const int end = min(begin + per_lane, args.groups);
    int sum = 0;
    for (int g = begin; g < end; ++g) sum += count(group_rows[g + 1] - group_rows[g]);
    int inclusive = sum;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const int v = __shfl_up_sync(0xffffffffu, inclusive, offset);
      if (tid >= offset) inclusive += v;
    }
    int before = inclusive - sum;
    for (int g = begin; g < end; ++g) {
      prefix[g] = before;
      before += count(group_rows[g + 1] - group_rows[g]);
    }
    if (tid == 31) prefix[args.groups] = inclusive;
  }
  __syncthreads();
  return prefix[args.groups];
}

}  // namespace kbench::kernels::gemm::sm90
