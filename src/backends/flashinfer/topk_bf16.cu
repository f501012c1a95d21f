// FlashInfer's radix top-k family for bfloat16 inputs (topk_typed.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/flashinfer/topk_typed.cuh"

namespace kbench::backends::flashinfer::detail {

TopKKernels topk_bf16() { return topk_typed::kernels<nv_bfloat16>(); }

}  // namespace kbench::backends::flashinfer::detail
