// cuBLASLt's matmul as kbench's GEMM routines call it: D = A B^T with A [m][k] and B [n][k] both
// k-contiguous ("NT", the layout every GEMM routine of the reference hands its library), D [m][n]
// row-major, optionally batched (strided) and scaled per tensor or by DeepSeek-style blocks.
//
// cuBLASLt is column-major, so the object asks it for D^T = B A^T: its A is our B (transposed,
// "T"), its B is our A ("N") -- the "TN" form FP8 requires on Hopper -- and its D is our D.
//
// No cuBLAS header leaks from here: callers build without cuBLAS's include paths. Built only where
// the toolkit's cuBLASLt is found (target kbench_cublas).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kbench/dtype.hpp"

namespace kbench::backends {

enum class CublasScaling {
  none,        // bf16 / fp16 operands
  per_tensor,  // FP8 operands, one fp32 dequantization scale each (device scalars)
  // FP8 operands with fp32 block scales (cuBLAS 12.9+, Hopper): A one per row and 128 columns,
  // B one per 128 x 128 block, in the layouts below (block_scale_floats).
  blockwise_128,
};

struct CublasGemmShape {
  int64_t batch = 1;  // matrices, each pointer advancing by its matrix per batch
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  DType a_dtype = DType::bfloat16;
  DType b_dtype = DType::bfloat16;
  DType out_dtype = DType::bfloat16;
  CublasScaling scaling = CublasScaling::none;
  bool bias = false;  // a bfloat16 [n] added to every row of D (epilogue)
};

// The block scale layouts cuBLASLt reads for blockwise_128 (K = k / 128 blocks, the layouts
// torch._scaled_mm hands it): A's scales [K][m] (a k-block's m scales contiguous), B's scales
// [n / 128][round_up(K, 4)] (an n-block's k-block scales contiguous, padded to a multiple of 4).
[[nodiscard]] int64_t a_block_scale_index(const CublasGemmShape& shape, int64_t row, int64_t k_block);
[[nodiscard]] int64_t b_block_scale_index(const CublasGemmShape& shape, int64_t n_block, int64_t k_block);
[[nodiscard]] int64_t a_block_scale_floats(const CublasGemmShape& shape);
[[nodiscard]] int64_t b_block_scale_floats(const CublasGemmShape& shape);

// Why cuBLASLt as kbench calls it cannot take this shape (dtypes, sizes, alignment), or nullopt.
// Cheap, no handle: the planner can still find no algorithm (the constructor then throws).
[[nodiscard]] std::optional<std::string> cublaslt_gemm_unsupported(const CublasGemmShape& shape);

// "cuBLASLt 13.1.0 (built against 13.1.0)".
[[nodiscard]] std::string cublaslt_version_string();
// The loaded library's version as CUBLAS_VERSION encodes it (13.1.0 -> 130100).
[[nodiscard]] int64_t cublaslt_version();

// The pointers of one call; scales as the shape's scaling wants them (null otherwise).
struct CublasGemmOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  const float* a_scale = nullptr;
  const float* b_scale = nullptr;
  const void* bias = nullptr;
};

// A planned matmul: descriptors, the heuristic's first algorithm and its workspace, made once
// (outside timing). Throws std::runtime_error with cuBLAS's status where it refuses or finds no
// algorithm, kbench::CudaError for CUDA failures.
class CublasLtGemm {
 public:
  explicit CublasLtGemm(const CublasGemmShape& shape);
  ~CublasLtGemm();
  CublasLtGemm(CublasLtGemm&&) noexcept;
  CublasLtGemm& operator=(CublasLtGemm&&) noexcept;
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  // Enqueues the matmul on `stream`: sets the call's pointers on the descriptor (host state) and
  // calls cublasLtMatmul, no allocation, no host synchronisation (capturable in a CUDA graph).
  // Throws std::runtime_error where cuBLASLt refuses the launch.
  void run(const CublasGemmOperands& operands, cudaStream_t stream);

  [[nodiscard]] const CublasGemmShape& shape() const noexcept;
  [[nodiscard]] std::size_t workspace_bytes() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kbench::backends
