// DeepSeek-style groupwise FP8 operands as the reference builds them for gemm_fp8_nt_groupwise and
// group_gemm_fp8_nt_groupwise (../shared/spec/gemm.md), the rules kbench's quantizing fill kernels
// and GEMM kernels share with the host (issue 18; the CPU tests check them):
//   per block, s = the power of two at or above max(amax, 1e-4) / 448 (fp32 quotient), stored fp32;
//   q = e4m3(x / (s + 1e-8)) (the reference's epsilon, in fp32); x ~ e4m3_value(q) * s.
//   A's blocks are 1 x tile (a row's tile of k), B's tile x tile; D = A B^T (both k-contiguous).
//   Scale layouts, t = tile, N = ceil(n/t): MN-major a_scale [k/t][m] and b_scale [k/t][N]; K-major
//   a_scale [m][k/t] and b_scale [N][k/t]; a grouped B adds a leading group dimension.
// k is a multiple of t. n need not be (kbench's extension, as DeepGEMM does for DeepSeek-V3's n
// 2112): B's last block row then holds n % t rows and its scale covers those rows only. The
// reference sizes b_scale with n/t (floor) and cannot run such n.
// The reference takes the power of two as 2^ceil(log2(v)) in fp32, where log2 can round a quotient
// a few ulps above a power of two down onto it and halve the scale (the block's largest element then
// saturates at 448); kbench's is exact. Both are valid scales of the block.
#pragma once

#include <cstdint>

#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::gemm {

#if defined(__CUDACC__)
#define KBENCH_GEMM_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define KBENCH_GEMM_HOST_DEVICE inline
#endif

inline constexpr float kGroupwiseAmaxFloor = 1e-4f;
inline constexpr float kGroupwiseScaleEpsilon = 1e-8f;  // added to the scale before the division
inline constexpr float kE4m3Max = 448.0f;

enum class ScaleMajor { mn, k };

// Scale blocks of `tile` along `extent`, the last one partial where `tile` does not divide it.
KBENCH_GEMM_HOST_DEVICE int64_t scale_blocks(int64_t extent, int64_t tile) { return (extent + tile - 1) / tile; }

// The block's scale: the smallest power of two at or above max(amax, 1e-4) / 448.
KBENCH_GEMM_HOST_DEVICE float groupwise_scale(float amax) {
  const float v = (amax > kGroupwiseAmaxFloor ? amax : kGroupwiseAmaxFloor) / kE4m3Max;
  const uint32_t bits = quant::float_bits(v);  // v is a normal positive float (>= 2.2e-7)
  const uint32_t power = (bits & 0x7FFFFFu) == 0 ? bits : (bits & 0x7F800000u) + 0x800000u;
  return quant::bits_float(power);
}

KBENCH_GEMM_HOST_DEVICE uint8_t groupwise_quantize(float x, float scale) {
  return quant::float_to_e4m3(x / (scale + kGroupwiseScaleEpsilon));
}

// Offsets of A's scale for (row, k-block) and B's for (n-block, k-block) within one group; n_blocks
// is scale_blocks(n, tile).
KBENCH_GEMM_HOST_DEVICE int64_t a_scale_offset(ScaleMajor major, int64_t rows, int64_t k_blocks, int64_t row,
                                               int64_t k_block) {
  return major == ScaleMajor::mn ? k_block * rows + row : row * k_blocks + k_block;
}
KBENCH_GEMM_HOST_DEVICE int64_t b_scale_offset(ScaleMajor major, int64_t n_blocks, int64_t k_blocks, int64_t n_block,
                                               int64_t k_block) {
  return major == ScaleMajor::mn ? k_block * n_blocks + n_block : n_block * k_blocks + k_block;
}

#undef KBENCH_GEMM_HOST_DEVICE

}  // namespace kbench::kernels::gemm
