// The MoE permutation's index: where each (token, pick) routed to a local expert goes in the
// expert-contiguous row order the grouped GEMMs read (rows of local expert e are
// [row_offsets[e], row_offsets[e + 1]); row_offsets is the device-side group offsets of
// WgmmaGemmParams). Within an expert the rows follow (token, pick) order, so the layout is
// deterministic. Picks of non-local experts get row -1 and contribute nothing.
//
// Not yet here: the gather of the activation rows into this order with the FP8 1x128 quantization
// fused (the next step of the pipeline); this kernel computes only the index it will use.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace kbench::kernels::moe {

struct PermutationIndexParams {
  const int32_t* expert_ids = nullptr;    // [tokens][top_k], the routing's output
  const int32_t* local_counts = nullptr;  // [local_num_experts], the routing's histogram
  int64_t tokens = 0;
  int top_k = 0;
  int local_expert_offset = 0;
  int local_num_experts = 0;
  int32_t* row_offsets = nullptr;    // [local_num_experts + 1]
  int32_t* permuted_rows = nullptr;  // [tokens][top_k]: the pick's row, or -1 (non-local expert)
};

// One CTA per local expert, plus one that marks the non-local picks and writes the total. No host
// synchronisation. cudaErrorInvalidValue on a negative size or a missing pointer.
cudaError_t launch_permutation_index(const PermutationIndexParams& params, cudaStream_t stream);

// The host reference (a stable counting sort).
struct PermutationIndex {
  std::vector<int32_t> row_offsets;
  std::vector<int32_t> permuted_rows;
};
inline PermutationIndex permutation_index_reference(const std::vector<int32_t>& expert_ids, int local_expert_offset,
                                                    int local_num_experts) {
  PermutationIndex out;
  out.row_offsets.assign(static_cast<std::size_t>(local_num_experts) + 1, 0);
  for (int32_t id : expert_ids) {
    const int local = id - local_expert_offset;
    if (local >= 0 && local < local_num_experts) ++out.row_offsets[static_cast<std::size_t>(local) + 1];
  }
  for (int e = 0; e < local_num_experts; ++e) {
    out.row_offsets[static_cast<std::size_t>(e) + 1] += out.row_offsets[static_cast<std::size_t>(e)];
  }
  std::vector<int32_t> next(out.row_offsets.begin(), out.row_offsets.end() - 1);
  out.permuted_rows.assign(expert_ids.size(), -1);
  for (std::size_t i = 0; i < expert_ids.size(); ++i) {
    const int local = expert_ids[i] - local_expert_offset;
    if (local >= 0 && local < local_num_experts) out.permuted_rows[i] = next[static_cast<std::size_t>(local)]++;
  }
  return out;
}

}  // namespace kbench::kernels::moe
