// The cuDNN backend of bmm_fp8 (as the reference's cudnn backend): a cudnn_frontend graph holding one
// FP8 matmul, fp32 accumulation, the product multiplied by A's and B's per-tensor dequantization
// scales (pointwise, read from device memory) and written as bf16 / fp16:
//   A [batch][m][k] row-major (k contiguous), B [batch][n][k] (k contiguous: the (k, n) column-major
//   operand cuDNN's FP8 matmul wants), D [batch][m][n] row-major; e4m3 or e5m2 operands.
// No cuDNN header leaks from here. Built only where cuDNN is found (target kbench_cudnn).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kbench/dtype.hpp"

namespace kbench::backends {

struct CudnnFp8MatmulShape {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  DType a_dtype = DType::fp8_e4m3;
  DType b_dtype = DType::fp8_e4m3;
  DType out_dtype = DType::bfloat16;
};

// Why kbench's cuDNN FP8 matmul cannot take this shape on the current device (dtypes, no device,
// older than sm_89, the frontend's validation), or nullopt. Cheap: no handle, no plan.
[[nodiscard]] std::optional<std::string> cudnn_fp8_matmul_unsupported(const CudnnFp8MatmulShape& shape);

// The graph planned once (outside timing) with its handle and workspace; run() binds the pointers
// and enqueues it (no allocation, no host synchronisation).
class CudnnFp8Matmul {
 public:
  // Throws std::runtime_error with cuDNN's message where it finds no engine.
  explicit CudnnFp8Matmul(const CudnnFp8MatmulShape& shape);
  ~CudnnFp8Matmul();
  CudnnFp8Matmul(CudnnFp8Matmul&&) noexcept;
  CudnnFp8Matmul& operator=(CudnnFp8Matmul&&) noexcept;
  CudnnFp8Matmul(const CudnnFp8Matmul&) = delete;
  CudnnFp8Matmul& operator=(const CudnnFp8Matmul&) = delete;

  void run(const void* a, const void* b, const float* a_scale, const float* b_scale, void* d, cudaStream_t stream);

 private:
  struct Planned;
  std::unique_ptr<Planned> planned_;
};

}  // namespace kbench::backends
