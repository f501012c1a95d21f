// A thread per (slot, pick). The histogram's atomics are few (top_k per slot, spread over the local
// experts); the stage is a small part of the expert stage.
#include <cuda_runtime.h>

#include "kernels/moe_comm/received_picks.hpp"

namespace kbench::kernels::moe_comm {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) received_picks_kernel(const __grid_constant__ ReceivedPicksParams p) {
  const A2aLayout& l = p.layout;
  const int64_t pick = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t slots = static_cast<int64_t>(l.ranks) * l.max_tokens;
  if (pick >= slots * p.top_k) return;
  const auto slot = static_cast<int>(pick / p.top_k);
  const int j = static_cast<int>(pick % p.top_k);
  const int source = slot / l.max_tokens, token = slot % l.max_tokens;
  const char* own = static_cast<const char*>(p.own_workspace);
  bool valid = token < p.tokens_per_source;
  if (p.validity == SlotValidity::stamped) {
    // Written by this rank's dispatch kernel earlier on the stream.
    const uint32_t epoch = *reinterpret_cast<const uint32_t*>(own + signal_word_offset(l, kDispatchEpochWord));
    valid = *reinterpret_cast<const uint32_t*>(own + slot_epoch_word_offset(l, source, token)) == epoch;
  }
  int32_t id = -1;
  float weight = 0.0f;
  if (valid) {
    const int32_t received = reinterpret_cast<const int32_t*>(own + payload_slot_offset(l, kExpertIdsPayload, source, token))[j];
    const int32_t local = received - p.rank * p.experts_per_rank;
    if (local >= 0 && local < p.experts_per_rank) {
      id = received;
      weight = reinterpret_cast<const float*>(own + payload_slot_offset(l, kRoutingWeightsPayload, source, token))[j];
      atomicAdd(p.local_counts + local, 1);
    }
  }
  p.expert_ids[pick] = id;
  p.weights[pick] = weight;
}

}  // namespace

cudaError_t launch_received_picks(const ReceivedPicksParams& p, cudaStream_t stream) {
  const A2aLayout& l = p.layout;
  if (l.ranks < 1 || l.max_tokens < 1 || l.num_payloads <= kRoutingWeightsPayload || p.top_k < 1 ||
      l.payload_row_bytes[kExpertIdsPayload] < p.top_k * 4 || l.payload_row_bytes[kRoutingWeightsPayload] < p.top_k * 4 ||
      p.rank < 0 || p.rank >= l.ranks || p.experts_per_rank < 1 || !p.own_workspace || !p.expert_ids || !p.weights ||
      !p.local_counts) {
    return cudaErrorInvalidValue;
  }
  if (const cudaError_t e = cudaMemsetAsync(p.local_counts, 0, sizeof(int32_t) * p.experts_per_rank, stream); e != cudaSuccess) {
    return e;
  }
  const int64_t picks = static_cast<int64_t>(l.ranks) * l.max_tokens * p.top_k;
  received_picks_kernel<<<static_cast<unsigned>((picks + kThreads - 1) / kThreads), kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace kbench::kernels::moe_comm
