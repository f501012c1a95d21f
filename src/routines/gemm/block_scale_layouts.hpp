// The groupwise FP8 scales of a case rewritten into a vendor library's layouts, once per input set
// at bind (outside timing, as a library's weight preparation would be): the cuBLASLt and CUTLASS
// backends each read A's and B's block scales in a layout of their own, which --scale_major_mode's
// reference layouts (kernels/gemm/groupwise_fp8.hpp) need not match.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "kbench/device_buffer.hpp"
#include "routines/gemm/gemm_case.hpp"

namespace kbench {

// Where a library wants each scale of one matrix: offsets of A's (row, k-block) and B's (n-block,
// k-block; GemmProblem::n_blocks of them, a partial last one included) scales in arrays of a_floats
// and b_floats (B's padding filled with 1). A grouped GEMM's groups follow one another, group g's
// scales at g * a_floats and g * b_floats.
struct BlockScaleLayout {
  int64_t a_floats = 0;
  int64_t b_floats = 0;
  std::function<int64_t(int64_t row, int64_t k_block)> a_index;
  std::function<int64_t(int64_t n_block, int64_t k_block)> b_index;
};

// Every input set's scales in `layout`, uploaded: a[copy] and b[copy].
struct RewrittenBlockScales {
  std::vector<DeviceBuffer> a;
  std::vector<DeviceBuffer> b;
};

[[nodiscard]] RewrittenBlockScales rewrite_block_scales(const GemmCase& problem, const BlockScaleLayout& layout,
                                                        cudaStream_t stream);

}  // namespace kbench
