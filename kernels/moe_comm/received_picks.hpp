// The MoE all-to-all's expert stage (--real_math) reads its tokens where dispatch left them: slot
// (s, t) of this rank's receive regions (a2a.hpp) holds source s's token t, its picks (payload
// kExpertIdsPayload: int32 global expert ids [top_k]) and their routing weights (payload
// kRoutingWeightsPayload: fp32 [top_k]). This kernel turns the slots into the MoE pipeline's routing
// outputs over ranks x max_tokens "tokens": the picks of this rank's experts, -1 for the others and for
// every slot that holds no token of this call, and the local experts' histogram.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/moe_comm/a2a.hpp"

namespace kbench::kernels::moe_comm {

inline constexpr int kRoutingWeightsPayload = 2;

// Which slots hold a token of this call.
enum class SlotValidity : uint8_t {
  stamped,       // those stamped with the current dispatch epoch (kbench's dispatch writes routed slots only)
  first_tokens,  // t < tokens_per_source (a transport that moves every token to every rank: nccl)
};

struct ReceivedPicksParams {
  A2aLayout layout;
  int rank = 0;
  int experts_per_rank = 0;
  int top_k = 0;
  SlotValidity validity = SlotValidity::stamped;
  int tokens_per_source = 0;       // first_tokens
  const void* own_workspace = nullptr;
  int32_t* expert_ids = nullptr;   // [ranks * max_tokens][top_k]: the global id of a local pick, else -1
  float* weights = nullptr;        // [ranks * max_tokens][top_k]: its routing weight (0 where -1)
  int32_t* local_counts = nullptr;  // [experts_per_rank], zeroed by the launch (a memset: graph-safe)
};

// cudaErrorInvalidValue on a missing pointer, a layout without the two routing payloads or a bad size.
cudaError_t launch_received_picks(const ReceivedPicksParams& params, cudaStream_t stream);

}  // namespace kbench::kernels::moe_comm
