// The grouped GEMM of an MoE layer's experts on CUTLASS 3.x's sm90 FP8 blockwise ptr-array kernel,
// with the group sizes on the device only: group g's rows of A, D (and A's scales) are rows
// [row_offsets[g], row_offsets[g + 1]) of one buffer each, and row_offsets is read by the GPU, never
// by the host, so a run is one CUDA-graph-capturable sequence whatever the routing gave. Per group,
//   D[rows of g] = A[rows of g] B[g]^T, e4m3 operands, k contiguous (A [max_rows][k], B [groups][n][k]),
// with fp32 block scales (A one per row and 128 of k, B one per 128 x 128 block) promoted into the
// fp32 accumulators every 128 of k, D [max_rows][n] row-major bf16 or fp16. The scales are K-major,
// as kbench's MoE pipeline writes them (its permute-quantize and its weights): read in place.
// Instantiated for sm_90a only (fp8_blockwise_moe_gemm.cu). No CUTLASS header leaks from here:
// callers build without CUTLASS's include path.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kbench/dtype.hpp"

namespace kbench::backends {

struct CutlassMoeGemmShape {
  int groups = 0;        // experts
  int64_t max_rows = 0;  // rows A and D hold; the groups' rows end at or before it
  int64_t n = 0;
  int64_t k = 0;
  DType out_dtype = DType::bfloat16;  // bfloat16 or float16
};

// The device pointers of one input set.
struct CutlassMoeGemmOperands {
  const void* a = nullptr;          // e4m3 [max_rows][k]
  const float* a_scale = nullptr;   // [max_rows][k / 128]: (row, k-block) at row * (k / 128) + k-block
  const void* b = nullptr;          // e4m3 [groups][n][k]
  const float* b_scale = nullptr;   // [groups][n / 128][k / 128]
  void* d = nullptr;                // [max_rows][n]; rows at and past row_offsets[groups] are not written
  // int32 [groups + 1], non-decreasing, in [0, max_rows]; a group may be empty.
  const int32_t* row_offsets = nullptr;
};

// Why the kernel cannot take this shape (out dtype, n and k whole scale blocks, extents CUTLASS's
// int problem sizes and scale layouts hold), or nullopt. Cheap: CUTLASS's can_implement runs in the
// constructor.
[[nodiscard]] std::optional<std::string> cutlass_moe_gemm_unsupported(const CutlassMoeGemmShape& shape);

// A planned MoE GEMM: CUTLASS's kernel parameters (TMA descriptors, tile scheduler), its workspace,
// the per-group arrays it reads and the kernel's shared-memory attribute, all made here (outside
// timing). The per-group arrays and the workspace are shared by the input sets: the runs of one
// CutlassMoeGemm must be ordered (one stream, as a benchmark's are). Throws std::runtime_error
// where the shape or an operand cannot be taken, kbench::CudaError for CUDA failures.
class CutlassMoeGemm {
 public:
  CutlassMoeGemm(const CutlassMoeGemmShape& shape, std::span<const CutlassMoeGemmOperands> input_sets,
                 cudaStream_t stream);
  ~CutlassMoeGemm();
  CutlassMoeGemm(CutlassMoeGemm&&) noexcept;
  CutlassMoeGemm& operator=(CutlassMoeGemm&&) noexcept;
  CutlassMoeGemm(const CutlassMoeGemm&) = delete;
  CutlassMoeGemm& operator=(const CutlassMoeGemm&) = delete;

  // Enqueues the GEMM of input set `input_set` on `stream`: a small kernel that turns row_offsets
  // into every group's problem size, pointers and scale layouts, then CUTLASS's grouped kernel, its
  // persistent grid sized by the SM count. No allocation, no host synchronisation (capturable in a
  // CUDA graph). Throws std::runtime_error where a launch fails.
  void run(std::size_t input_set, cudaStream_t stream);

  [[nodiscard]] const CutlassMoeGemmShape& shape() const noexcept { return shape_; }

  // The instantiation for the out dtype (fp8_blockwise_moe_gemm.cu).
  class Kernel;

 private:
  CutlassMoeGemmShape shape_;
  std::vector<CutlassMoeGemmOperands> input_sets_;
  std::unique_ptr<Kernel> kernel_;
};

}  // namespace kbench::backends
