// FlashInfer's radix top-k family for float16 inputs (topk_typed.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/flashinfer/topk_typed.cuh"

namespace kbench::backends::flashinfer::detail {

TopKKernels topk_f16() { return topk_typed::kernels<half>(); }

}  // namespace kbench::backends::flashinfer::detail
