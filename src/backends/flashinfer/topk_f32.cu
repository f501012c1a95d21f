// FlashInfer's radix top-k family for float32 inputs (topk_typed.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/flashinfer/topk_typed.cuh"

namespace kbench::backends::flashinfer::detail {

TopKKernels topk_f32() { return topk_typed::kernels<float>(); }

}  // namespace kbench::backends::flashinfer::detail
