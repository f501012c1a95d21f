// The host reference of the groupwise FP8 GEMMs (issue 18): the block scales by frexp, the
// operands quantized block by block, and D = dequant(A) dequant(B)^T in double, the scales read by
// their tile coordinates and explicit strides. It shares only ScaleMajor with
// kernels/gemm/groupwise_fp8.hpp (e4m3 by quant_reference's own conversion); the CPU tests check
// the two agree.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/gemm/groupwise_fp8.hpp"

namespace kbench::gemm_reference {

// One operand: e4m3 bytes [rows][k] and block scales in the layout of `major`.
struct GroupwiseOperand {
  std::vector<uint8_t> bytes;
  std::vector<float> scales;
};

[[nodiscard]] float groupwise_scale(float amax);

// A [m][k] in 1 x tile blocks; B [n][k] in tile x tile blocks (k a multiple of tile; where n is not,
// B's last block row holds the n % tile rows left and its scale covers those alone).
[[nodiscard]] GroupwiseOperand quantize_a(std::span<const float> a, int64_t m, int64_t k, int64_t tile,
                                          kernels::gemm::ScaleMajor major);
[[nodiscard]] GroupwiseOperand quantize_b(std::span<const float> b, int64_t n, int64_t k, int64_t tile,
                                          kernels::gemm::ScaleMajor major);

// D [m][n] = sum over k of dequant(A)[i][k] * dequant(B)[j][k], in double, rounded to float.
[[nodiscard]] std::vector<float> groupwise_gemm(const GroupwiseOperand& a, const GroupwiseOperand& b, int64_t m,
                                                int64_t n, int64_t k, int64_t tile, kernels::gemm::ScaleMajor major);

}  // namespace kbench::gemm_reference
