// The permutation index: CTA e (a local expert) sums the histogram below e for its first row, then
// walks every pick in (token, pick) order, 256 at a time, numbering its expert's picks with a CTA
// scan of ballots. Every CTA reads all picks (T * k int32, from L2 after the first): simple and
// deterministic; a single-pass version is a later optimisation. The last CTA marks non-local
// picks -1 and writes the total row count.
#include <cstdint>

#include "kernels/moe/permutation.hpp"

namespace kbench::kernels::moe {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__global__ void __launch_bounds__(kThreads) permutation_index_kernel(PermutationIndexParams p) {
  __shared__ int32_t warp_totals[kWarps];
  __shared__ int32_t first_row;
  const int expert = static_cast<int>(blockIdx.x);  // local_num_experts: the non-local CTA
  const bool non_local_cta = expert == p.local_num_experts;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) / 32;

  if (threadIdx.x == 0) {
    int32_t below = 0;
    for (int e = 0; e < expert; ++e) below += p.local_counts[e];
    first_row = below;
    p.row_offsets[expert] = below;  // the non-local CTA writes the total
  }
  __syncthreads();
  int32_t next_row = first_row;
  const int64_t picks = p.tokens * p.top_k;
  for (int64_t base = 0; base < picks; base += kThreads) {
    const int64_t i = base + threadIdx.x;
    const int local = i < picks ? p.expert_ids[i] - p.local_expert_offset : -1;
    const bool is_local = local >= 0 && local < p.local_num_experts;
    if (non_local_cta) {
      if (i < picks && !is_local) p.permuted_rows[i] = -1;
      continue;
    }
    const bool mine = is_local && local == expert;
    const unsigned ballot = __ballot_sync(0xffffffffu, mine);
    if (lane == 0) warp_totals[warp] = __popc(ballot);
    __syncthreads();
    int32_t before = 0;
    int32_t chunk = 0;
    for (int w = 0; w < kWarps; ++w) {
      before += w < warp ? warp_totals[w] : 0;
      chunk += warp_totals[w];
    }
    if (mine) p.permuted_rows[i] = next_row + before + __popc(ballot & ((1u << lane) - 1u));
    next_row += chunk;
    __syncthreads();  // warp_totals is rewritten by the next chunk
  }
}

}  // namespace

cudaError_t launch_permutation_index(const PermutationIndexParams& p, cudaStream_t stream) {
  if (p.tokens < 0 || p.top_k < 1 || p.local_num_experts < 0 || !p.row_offsets ||
      (p.tokens > 0 && (!p.expert_ids || !p.permuted_rows)) || (p.local_num_experts > 0 && !p.local_counts)) {
    return cudaErrorInvalidValue;
  }
  permutation_index_kernel<<<static_cast<unsigned>(p.local_num_experts) + 1, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::moe
