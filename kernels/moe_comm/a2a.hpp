// MoE expert parallelism across `ranks` GPUs, one process per GPU, over NVLink: `dispatch` sends each
// token's payload rows to every distinct rank that owns one of its top-k experts (expert e lives on
// rank e / experts_per_rank; this rank included), `combine` returns to each token the sum of the
// partial results those ranks computed for it. The kernels store straight into the peers' workspaces
// (mapped by CUDA IPC outside this code) and count arrivals in the receiver's signal words (DeepEP's
// intranode technique). No host synchronisation and no host resets between calls: epochs and
// monotone counters live in the workspaces, so the launches can be captured in a CUDA graph.
//
// Order of calls: dispatch, (experts), combine, dispatch, ... keeps every rank's data consistent.
// Dispatch alone or combine alone may also be repeated (timing): the counters stay consistent, but
// a fast rank may then overwrite a slower rank's receive rows while it still reads them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>

#include "kbench/dtype.hpp"
#include "kernels/quantization/block_formats.hpp"

namespace kbench::kernels::moe_comm {

#if defined(__CUDACC__)
#define KBENCH_A2A_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define KBENCH_A2A_HOST_DEVICE inline
#endif

inline constexpr int kMaxPayloads = 6;
inline constexpr int kMaxRanks = 64;  // destination sets are 64-bit masks

// A spin wait that sees no progress for this long prints what it waited for and traps (a dead or
// missing peer becomes a CUDA error on the host instead of a hang).
inline constexpr uint64_t kWaitTimeoutNs = 10'000'000'000ull;  // 10 s

// Signal words (uint32) at signal_offset: dispatch arrival counters by source rank (each call adds
// the source's fixed CTA count), this rank's epochs (calls completed) and the send kernels' tickets,
// then the combine's signal counters (combine_signal_word): [source][signal], each call of every
// other rank s adds combine_ctas to each of its words (this rank's own stay 0), so word (s, g) =
// epoch x combine_ctas once every CTA of rank s has sent its rows of steps 0 .. (g + 1) x
// combine_steps_per_signal - 1 here (see launch_combine).
inline constexpr int kDispatchArrivalWord = 0;  // [kMaxRanks]
inline constexpr int kDispatchEpochWord = kMaxRanks;
inline constexpr int kDispatchTicketWord = kDispatchEpochWord + 1;
inline constexpr int kCombineEpochWord = kDispatchEpochWord + 2;
inline constexpr int kCombineTicketWord = kDispatchEpochWord + 3;
inline constexpr int kSignalWords = kDispatchEpochWord + 4;  // then the signal counters

// The combine's grid: min(max((ranks - 1) x max_tokens, max_tokens), the layout's cap), at most
// kCombineCtasPerSm CTAs per SM (every CTA must be resident at once, see launch_combine):
// kMaxCombineCtas on a 132-SM H100; a GPU with fewer SMs needs a smaller cap (max_combine_ctas).
inline constexpr int kCombineCtasPerSm = 2;
inline constexpr int kMaxCombineCtas = 132 * kCombineCtasPerSm;
// Beyond 2 ranks a combine CTA signals its progress every this many steps (and after its last): each
// signal is a system-scope release to every other rank, which waits for the CTA's stores over NVLink
// to land, so fewer signals keep more stores in flight while the sums lag a little more. On four
// H100s (DeepSeek-V3, 4096 tokens a rank, bench/results/h100x4/moe_comm/session22/): EP 4 829 us
// at a signal every step, 760 us every 4th. 2 ranks (16 steps a call) keep a signal every step, the
// path their recorded figures ran. KBENCH_A2A_STEPS_PER_SIGNAL=<n> (n >= 1) overrides it when the
// layout is made, for tuning (every rank must see the same value).
inline constexpr int kCombineStepsPerSignal = 4;

// Byte offsets into one rank's workspace (the same layout on every rank; zero-filled once).
// Payload p's receive region: [ranks][max_tokens] rows of payload_row_bytes[p] bytes, row stride
// payload_row_stride[p] (16-byte aligned); slot (s, t) holds token t of source rank s.
// slot_epoch [ranks][max_tokens] u32: the dispatch epoch that last wrote slot (s, t) (0: never).
// combine_in [ranks][max_tokens][hidden] (bf16 or fp16): this rank's expert results for source s's
// token t, to be sent back. combine_out [ranks][max_tokens][hidden]: rank d's results for this rank's
// token t. Then the signal words. combine_ctas (min(max((ranks - 1) x max_tokens, max_tokens), the
// cap)), combine_steps (= ceil((ranks - 1) x max_tokens / combine_ctas)) and its signals size the combine: every
// rank's grid must be the same, so they live in the layout.
struct A2aLayout {
  int ranks = 0;
  int max_tokens = 0;
  int num_payloads = 0;
  int64_t payload_row_bytes[kMaxPayloads] = {};
  int64_t payload_row_stride[kMaxPayloads] = {};
  int64_t payload_offset[kMaxPayloads] = {};
  int64_t slot_epoch_offset = 0;
  int hidden = 0;
  int64_t combine_in_offset = 0;
  int64_t combine_out_offset = 0;
  int64_t signal_offset = 0;
  int combine_ctas = 0;
  int combine_steps = 0;
  int combine_steps_per_signal = 1;
  int combine_signals = 0;  // ceil(combine_steps / combine_steps_per_signal)
  int64_t total_bytes = 0;
};

// Throws std::invalid_argument unless 1 <= ranks <= kMaxRanks, max_tokens >= 1, 1 to kMaxPayloads
// payloads whose row bytes are positive multiples of 4, hidden a positive multiple of 8 (combine
// moves 16-byte vectors) and 1 <= max_combine_ctas <= kMaxCombineCtas (less: ranks simulated on one
// GPU, whose combines must all be resident together).
[[nodiscard]] A2aLayout make_a2a_layout(int ranks, int max_tokens, std::span<const int64_t> payload_row_bytes,
                                        int hidden, int max_combine_ctas = kMaxCombineCtas);

KBENCH_A2A_HOST_DEVICE int64_t payload_slot_offset(const A2aLayout& l, int payload, int source, int token) {
  return l.payload_offset[payload] +
         (static_cast<int64_t>(source) * l.max_tokens + token) * l.payload_row_stride[payload];
}
KBENCH_A2A_HOST_DEVICE int64_t slot_epoch_word_offset(const A2aLayout& l, int source, int token) {
  return l.slot_epoch_offset + (static_cast<int64_t>(source) * l.max_tokens + token) * 4;
}
// Row (rank, token) of combine_in or combine_out (region_offset: either's offset).
KBENCH_A2A_HOST_DEVICE int64_t combine_row_offset(const A2aLayout& l, int64_t region_offset, int rank, int token) {
  return region_offset + (static_cast<int64_t>(rank) * l.max_tokens + token) * l.hidden * 2;
}
KBENCH_A2A_HOST_DEVICE int64_t signal_word_offset(const A2aLayout& l, int word) { return l.signal_offset + word * 4; }
KBENCH_A2A_HOST_DEVICE int combine_signal_word(const A2aLayout& l, int source, int signal) {
  return kSignalWords + source * l.combine_signals + signal;
}

// This rank's tokens and their routing. Expert ids outside [0, ranks * experts_per_rank) (e.g. -1 for
// a dropped pick) route nowhere.
struct A2aRoute {
  int rank = 0;
  int num_tokens = 0;  // <= max_tokens
  int top_k = 0;
  int experts_per_rank = 0;
  const int32_t* expert_ids = nullptr;  // device, [num_tokens][top_k] global expert ids
};

// peers: a DEVICE array [ranks] of every rank's workspace base as mapped in this process (this
// rank's own base at [rank]). Bad arguments throw std::invalid_argument; launch failures
// kbench::CudaError.
//
// dispatch: one kernel whose last CTA waits for every source; dispatch_send then dispatch_wait do
// the same in two launches, for callers that launch every rank's sends before any wait (ranks
// simulated on one GPU). payload_src: num_payloads device pointers, row p of token t at
// payload_src[p] + t * payload_row_bytes[p] (4-byte aligned; 16-byte rows and pointers move as
// 16-byte vectors). Once the stream passes the wait, this rank's receive regions hold every token
// that every source routed here, stamped with the current dispatch epoch.
void launch_dispatch(const A2aLayout& layout, const A2aRoute& route, std::span<const void* const> payload_src,
                     void* const* peers, cudaStream_t stream);
void launch_dispatch_send(const A2aLayout& layout, const A2aRoute& route, std::span<const void* const> payload_src,
                          void* const* peers, cudaStream_t stream);
void launch_dispatch_wait(const A2aLayout& layout, const A2aRoute& route, void* const* peers, cudaStream_t stream);

// combine: out[t] (16-bit `dtype`: bfloat16 or float16, [num_tokens][hidden], 16-byte aligned) =
// the sum over the distinct ranks d of token t's experts, in increasing d, of rank d's results for it
// (combine_out[d][t], this rank's own read in place: combine_in[rank][t]), accumulated in fp32 and
// rounded once (a token with no valid expert gets zeros). One cooperative kernel of combine_ctas
// CTAs. In step j = 0, 1, ... CTA c sends slot i = c + j x combine_ctas of the (ranks - 1) x
// max_tokens slots of the other ranks (token i / (ranks - 1) of source (rank + 1 + i % (ranks - 1))
// % ranks): combine_in[s][t] to rank s's combine_out[rank][t] where the slot is stamped with the
// current dispatch epoch; after every combine_steps_per_signal-th step (and the last) it adds 1
// (system-scope release) to signal counter (rank, j / combine_steps_per_signal) on every other rank.
// Each CTA also sums its tokens t = c + m x combine_ctas: once every other rank d of token t has
// signalled the step in which it sends t here ((t x (ranks - 1) + (rank - d - 1 mod ranks)) /
// combine_ctas; a counter's release covers its CTA's earlier steps), one signal later than that in
// the loop, the rest after it. So the sums run while later rows are still in flight, and every CTA
// sends. A CTA waits for the other ranks' CTAs, which may wait for its own grid's: the launch is
// cooperative, and fails (a CudaError) instead of hanging where the grid can't be resident. Ranks
// simulated on one GPU launch every rank's combine on its own stream, with a layout whose grids fit
// on the GPU together, or use the split path: combine_send (the same sends and counters, nothing
// waited for) on every rank, then combine_receive (waits for every other rank's last step, then
// sums) on every rank.
void launch_combine(const A2aLayout& layout, const A2aRoute& route, void* const* peers, void* out, DType dtype,
                    cudaStream_t stream);
void launch_combine_send(const A2aLayout& layout, const A2aRoute& route, void* const* peers, cudaStream_t stream);
void launch_combine_receive(const A2aLayout& layout, const A2aRoute& route, void* const* peers, void* out,
                            DType dtype, cudaStream_t stream);
// combine_receive's sum alone, without waiting (for a transport that fills combine_out itself).
void launch_combine_reduce(const A2aLayout& layout, const A2aRoute& route, const void* own_workspace, void* out,
                           DType dtype, cudaStream_t stream);

// ---- The reference's fake expert (--validate) -------------------------------------------------
// Payload roles: 0 the hidden row, 1 the expert ids (int32 [top_k]), 3 the block scales.
inline constexpr int kHiddenPayload = 0;
inline constexpr int kExpertIdsPayload = 1;
inline constexpr int kBlockScalePayload = 3;
inline constexpr int kFp8ScaleBlock = 128;  // fp8_block_scale: one fp32 scale per 128 elements

// The hidden payload's format and its element value x:
//   none:            bf16 / fp16 [hidden] (the `dtype`).
//   fp8:             e4m3 [hidden], x = code * scale.
//   fp8_block_scale: e4m3 [hidden] + fp32 [ceil(hidden / 128)] scales, x = code * scale[i / 128].
//   nvfp4:           e2m1 pairs [hidden / 2] (element 2i in the low nibble) + e4m3 [hidden / 16]
//                    scales, x = e2m1(code) * e4m3(sf) / scale (the global scale), IEEE division.
enum class HiddenFormat : uint8_t { none, fp8, fp8_block_scale, nvfp4 };

struct FakeExpertArgs {
  int rank = 0;
  int top_k = 0;
  int experts_per_rank = 0;
  HiddenFormat format = HiddenFormat::none;
  DType dtype = DType::bfloat16;  // combine_in's type (and the hidden payload's under `none`)
  float scale = 1.0f;             // fp8: the dequantization scale; nvfp4: the global scale
};

// Expert e's factor: (e + 1) / num_experts + 0.5, each operation rounded once.
KBENCH_A2A_HOST_DEVICE float fake_expert_factor(int expert, int num_experts) {
  return quant::ieee_div(static_cast<float>(expert + 1), static_cast<float>(num_experts)) + 0.5f;
}

// For every slot (s, t) (stale ones too: combine never sends them), combine_in[s][t][i] = the sum,
// in pick order, over the slot's experts e that live on this rank of x_i * factor(e) (one fused
// multiply-add each, fp32), rounded to `dtype`. Throws std::invalid_argument where the payloads'
// row bytes do not fit the format.
void launch_fake_expert(const A2aLayout& layout, const FakeExpertArgs& args, void* own_workspace,
                        cudaStream_t stream);

#undef KBENCH_A2A_HOST_DEVICE

}  // namespace kbench::kernels::moe_comm
