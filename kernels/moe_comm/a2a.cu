// Dispatch and combine over NVLink (a2a.hpp). The send loops' CTAs move whole rows with 16-byte
// vectors (kUnroll loads in flight before the stores, the same registers stored to every destination
// rank), then signal with system-scope release adds of 1 on the receivers' counters for this source
// (on every rank and every step, so a call always adds exactly the fixed CTA count), and take a
// ticket whose last taker stores the CTAs' common epoch. Waits are on counters that OTHER ranks'
// grids raise: the dispatch's only after its own grid's work, the fused combine's in the middle of
// the loop (hence its cooperative launch: every CTA of every rank's grid resident).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kbench/cuda_check.hpp"
#include "kernels/moe/half_bits.hpp"
#include "kernels/moe_comm/a2a.hpp"

namespace kbench::kernels::moe_comm {
namespace {

// Launch configuration. Send and receive kernels: kThreads threads, each with kUnroll 16-byte
// vectors in flight (a CTA covers a 16 KB row in one pass: DeepSeek-V3's 7168-element bf16 rows and
// its 7168-byte fp8 rows). Send grids are a function of the layout alone, since receivers expect
// every source's fixed CTA count: one CTA per token (dispatch) or per slot of another rank (combine:
// the layout's combine_ctas), at most kMaxCtas (2 per SM of a 132-SM H100: enough stores in flight
// to fill NVLink, and the arrival adds, ranks per CTA, stay few). The dispatch wait is one CTA of kMaxRanks
// threads, one per source.
constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr int kMaxCtas = kMaxCombineCtas;
// The fused combine sums a token kSumLag signals after the one that covers the step in which the
// other ranks send it: meanwhile they reach that signal, so the CTA rarely waits.
constexpr int kSumLag = 1;

int dispatch_ctas(const A2aLayout& l) { return std::min(l.max_tokens, kMaxCtas); }
int receive_ctas(int num_tokens) { return std::clamp(num_tokens, 1, kMaxCtas); }

struct A2aParams {
  A2aLayout layout;
  int rank = 0;
  int num_tokens = 0;
  int top_k = 0;
  int experts_per_rank = 0;
  const int32_t* expert_ids = nullptr;
  void* const* peers = nullptr;         // device [ranks], or null: own_workspace alone (combine_reduce)
  const char* own_workspace = nullptr;
  const void* payload_src[kMaxPayloads] = {};
  bool payload_vector16[kMaxPayloads] = {};  // the payload moves as 16-byte vectors, else 4-byte words
  uint32_t arrivals_per_call = 0;            // dispatch: the senders' CTA count, each call's counter step
  void* out = nullptr;                       // combine's sum, [num_tokens][hidden]
  bool fp16 = false;                         // its 16-bit type: fp16, else bf16
};

__device__ __forceinline__ uint32_t load_acquire_sys(const uint32_t* address) {
  uint32_t value;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}

__device__ __forceinline__ void add_release_sys(uint32_t* address, uint32_t value) {
  asm volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

// Spins until the monotone counter reaches `target` (wrap-safe); traps after kWaitTimeoutNs.
__device__ void wait_for_arrivals(const uint32_t* counter, uint32_t target, int rank, int source, const char* what) {
  const uint64_t start = global_timer_ns();
  for (;;) {
    const uint32_t seen = load_acquire_sys(counter);
    if (static_cast<int32_t>(seen - target) >= 0) return;
    if (global_timer_ns() - start > kWaitTimeoutNs) {
      printf("kbench moe_comm: rank %d waited 10 s for %s arrivals from rank %d: counter %u, expected %u\n", rank,
             what, source, seen, target);
      __trap();
    }
  }
}

__device__ __forceinline__ uint32_t* signal_word(char* workspace, const A2aLayout& l, int word) {
  return reinterpret_cast<uint32_t*>(workspace + signal_word_offset(l, word));
}

__device__ __forceinline__ uint32_t* combine_signal_counter(char* workspace, const A2aLayout& l, int source, int signal) {
  return signal_word(workspace, l, combine_signal_word(l, source, signal));
}

// The distinct ranks of a token's valid expert ids, as a bit mask.
__device__ __forceinline__ uint64_t destination_ranks(const int32_t* ids, int top_k, int experts_per_rank, int ranks) {
  uint64_t mask = 0;
  for (int j = 0; j < top_k; ++j) {
    const int32_t expert = __ldg(ids + j);
    if (expert >= 0 && expert < ranks * experts_per_rank) mask |= 1ull << (expert / experts_per_rank);
  }
  return mask;
}

__device__ __forceinline__ int lowest_rank(uint64_t mask) { return __ffsll(static_cast<long long>(mask)) - 1; }

// The CTA copies `count` Vecs from `src` to offset `dst_offset` of every workspace in `destinations`.
template <class Vec>
__device__ __forceinline__ void copy_row(const char* src, int count, char* const* peer, int64_t dst_offset,
                                         uint64_t destinations) {
  const Vec* in = reinterpret_cast<const Vec*>(src);
  for (int base = threadIdx.x; base < count; base += kThreads * kUnroll) {
    Vec v[kUnroll] = {};
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * kThreads < count) v[u] = __ldg(in + base + u * kThreads);
    }
    for (uint64_t m = destinations; m != 0; m &= m - 1) {
      Vec* out = reinterpret_cast<Vec*>(peer[lowest_rank(m)] + dst_offset);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (base + u * kThreads < count) out[base + u * kThreads] = v[u];
      }
    }
  }
}

// Loads every rank's workspace base into shared memory; returns this rank's.
__device__ __forceinline__ char* load_peers(const A2aParams& p, char** peer) {
  if (threadIdx.x < p.layout.ranks) peer[threadIdx.x] = static_cast<char*>(p.peers[threadIdx.x]);
  __syncthreads();
  return peer[p.rank];
}

// The send kernels' end: the last CTA to take the ticket stores the call's epoch (every CTA read
// the old one before taking its ticket) and resets the ticket for the next call. True, in every
// thread, in that last CTA.
__device__ __forceinline__ bool advance_epoch(const A2aParams& p, char* own, int ticket_word, int epoch_word,
                                              uint32_t epoch) {
  __shared__ bool last;
  if (threadIdx.x == 0) {
    __threadfence();  // the epoch read precedes the ticket
    uint32_t* ticket = signal_word(own, p.layout, ticket_word);
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    if (last) {
      *ticket = 0;
      *signal_word(own, p.layout, epoch_word) = epoch;
    }
  }
  __syncthreads();
  return last;
}

// A thread per source: every source's arrivals of dispatch epoch `epoch`.
__device__ __forceinline__ void wait_for_dispatch(const A2aParams& p, const char* own, uint32_t epoch) {
  const int source = threadIdx.x;
  if (source < p.layout.ranks) {
    wait_for_arrivals(reinterpret_cast<const uint32_t*>(own + signal_word_offset(p.layout, kDispatchArrivalWord + source)),
                      epoch * p.arrivals_per_call, p.rank, source, "dispatch");
  }
}

// A CTA per token (grid-stride): every payload row to slot (rank, t) of each destination rank, then
// the slot's epoch. With kWait the last CTA, whose grid has done its own work, waits for every
// source (one launch less per call than a separate wait kernel: the latency at small batches).
template <bool kWait>
__global__ void __launch_bounds__(kThreads) dispatch_send_kernel(const __grid_constant__ A2aParams p) {
  __shared__ char* peer[kMaxRanks];
  __shared__ uint32_t epoch;
  const A2aLayout& l = p.layout;
  char* own = load_peers(p, peer);
  if (threadIdx.x == 0) epoch = *signal_word(own, l, kDispatchEpochWord) + 1;
  __syncthreads();
  for (int t = blockIdx.x; t < p.num_tokens; t += gridDim.x) {
    const uint64_t destinations =
        destination_ranks(p.expert_ids + static_cast<int64_t>(t) * p.top_k, p.top_k, p.experts_per_rank, l.ranks);
    for (int q = 0; q < l.num_payloads; ++q) {
      const char* src = static_cast<const char*>(p.payload_src[q]) + t * l.payload_row_bytes[q];
      const int64_t dst = payload_slot_offset(l, q, p.rank, t);
      if (p.payload_vector16[q]) {
        copy_row<uint4>(src, static_cast<int>(l.payload_row_bytes[q] / 16), peer, dst, destinations);
      } else {
        copy_row<uint32_t>(src, static_cast<int>(l.payload_row_bytes[q] / 4), peer, dst, destinations);
      }
    }
    if (threadIdx.x == 0) {
      for (uint64_t m = destinations; m != 0; m &= m - 1) {
        *reinterpret_cast<uint32_t*>(peer[lowest_rank(m)] + slot_epoch_word_offset(l, p.rank, t)) = epoch;
      }
    }
  }
  // The CTA's stores, released at system scope, count as one arrival from this rank on every rank.
  __syncthreads();
  if (threadIdx.x < l.ranks) add_release_sys(signal_word(peer[threadIdx.x], l, kDispatchArrivalWord + p.rank), 1);
  const bool last = advance_epoch(p, own, kDispatchTicketWord, kDispatchEpochWord, epoch);
  if (kWait && last) wait_for_dispatch(p, own, epoch);
}

// One CTA, a thread per source: every source's arrivals of the current dispatch epoch.
__global__ void __launch_bounds__(kMaxRanks) dispatch_wait_kernel(const __grid_constant__ A2aParams p) {
  const char* own = static_cast<const char*>(p.peers[p.rank]);
  wait_for_dispatch(p, own, *reinterpret_cast<const uint32_t*>(own + signal_word_offset(p.layout, kDispatchEpochWord)));
}

__device__ __forceinline__ void accumulate(float* acc, const uint4& v, bool fp16) {
  const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    acc[i] += moe::half_bits_to_float(static_cast<uint16_t>(words[i / 2] >> (16 * (i % 2))), fp16);
  }
}

// The CTA writes out[t] = the sum over `sources` (token t's destination ranks), in increasing rank,
// of their results: combine_out[d][t], this rank's own in combine_in[rank][t]. Two ranks' kUnroll
// vectors are loaded before they are added.
__device__ __forceinline__ void sum_token(const A2aParams& p, const char* own, int t, uint64_t sources) {
  const A2aLayout& l = p.layout;
  const int vectors = l.hidden / 8;
  const auto results = [&](int d) {
    return reinterpret_cast<const uint4*>(
        own + combine_row_offset(l, d == p.rank ? l.combine_in_offset : l.combine_out_offset, d, t));
  };
  auto* out = static_cast<uint4*>(p.out) + static_cast<int64_t>(t) * vectors;
  for (int base = threadIdx.x; base < vectors; base += kThreads * kUnroll) {
    float acc[kUnroll][8] = {};
    for (uint64_t m = sources; m != 0;) {
      const int first = lowest_rank(m);
      m &= m - 1;
      const int second = lowest_rank(m);  // -1 where none is left
      m &= m - 1;
      uint4 a[kUnroll] = {};
      uint4 b[kUnroll] = {};
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int i = base + u * kThreads;
        if (i < vectors) {
          // Cache-global: other GPUs wrote these rows into this GPU's L2.
          a[u] = __ldcg(results(first) + i);
          if (second >= 0) b[u] = __ldcg(results(second) + i);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        accumulate(acc[u], a[u], p.fp16);
        if (second >= 0) accumulate(acc[u], b[u], p.fp16);
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kThreads;
      if (i >= vectors) continue;
      uint32_t words[4];
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        words[w] = moe::float_to_half_bits(acc[u][2 * w], p.fp16) |
                   static_cast<uint32_t>(moe::float_to_half_bits(acc[u][2 * w + 1], p.fp16)) << 16;
      }
      out[i] = make_uint4(words[0], words[1], words[2], words[3]);
    }
  }
}

__device__ __forceinline__ uint64_t token_destinations(const A2aParams& p, int t) {
  return destination_ranks(p.expert_ids + static_cast<int64_t>(t) * p.top_k, p.top_k, p.experts_per_rank,
                           p.layout.ranks);
}

// The combine's sends in order: step j of CTA c sends slot i = c + j * combine_ctas of the
// (ranks - 1) x max_tokens slots of the OTHER ranks, token i / (ranks - 1) of source
// (rank + 1 + i % (ranks - 1)) % ranks. Every CTA sends in every step (this rank's own slots stay
// where they are, read in place by the sum), every wave of CTAs sends to all the other ranks at once,
// and no two ranks send to the same one in a step.
struct CombineSend {
  int index;   // i; >= (ranks - 1) * max_tokens past the last slot
  int source;  // the rank whose token it is
  int token;
};

__device__ __forceinline__ CombineSend combine_send(const A2aParams& p, int step) {
  const int others = p.layout.ranks - 1;
  const int i = static_cast<int>(blockIdx.x) + step * p.layout.combine_ctas;
  return {i, (p.rank + 1 + i % others) % p.layout.ranks, i / others};
}

// The step in which rank d sends token t of rank s (d != s) back to s: d's slot index for it is
// t * (ranks - 1) + (s - d - 1 mod ranks).
__device__ __forceinline__ int combine_arrival_step(const A2aLayout& l, int t, int d, int s) {
  const int offset = (s - d - 1 + l.ranks) % l.ranks;
  return (t * (l.ranks - 1) + offset) / l.combine_ctas;
}

// No other rank sends token t to this rank after this step.
__device__ __forceinline__ int combine_ready_step(const A2aLayout& l, int t) {
  return (t * (l.ranks - 1) + l.ranks - 2) / l.combine_ctas;
}

// The CTA's stores of its steps so far, released at system scope, count as one arrival on signal
// counter (rank, signal) of every other rank (all the CTA's threads' stores: the barrier orders them
// before the release, which is cumulative).
__device__ __forceinline__ void signal_steps(const A2aParams& p, char* const* peer, int signal) {
  __syncthreads();
  const int d = static_cast<int>(threadIdx.x);
  if (d < p.layout.ranks && d != p.rank) add_release_sys(combine_signal_counter(peer[d], p.layout, p.rank, signal), 1);
}

// Threads d < ranks: waits for every other rank d in `sources` to have signalled the step that sends
// token `t` here (`t` < 0: its last signal), `target` being epoch x combine_ctas; then the whole CTA
// may read their rows.
__device__ __forceinline__ void wait_for_rows(const A2aParams& p, char* own, int t, uint64_t sources, uint32_t target) {
  const A2aLayout& l = p.layout;
  const int d = static_cast<int>(threadIdx.x);
  if (d < l.ranks && d != p.rank && ((sources >> d) & 1) != 0) {
    const int signal =
        t < 0 ? l.combine_signals - 1 : combine_arrival_step(l, t, d, p.rank) / l.combine_steps_per_signal;
    wait_for_arrivals(combine_signal_counter(own, l, d, signal), target, p.rank, d, "combine");
  }
  __syncthreads();
}

// Waits for token t's rows of its other ranks, then sums it.
__device__ __forceinline__ void sum_when_arrived(const A2aParams& p, char* own, int t, uint32_t target) {
  const uint64_t sources = token_destinations(p, t);
  wait_for_rows(p, own, t, sources, target);
  sum_token(p, own, t, sources);
}

// The combine's steps (a2a.hpp): other ranks' slots stamped with the current dispatch epoch send
// this rank's combine_in row back to rank s's combine_out[rank][t]. With
// kSum (the fused combine, launched cooperative), the CTA also sums its tokens t = c + m *
// combine_ctas, each once the other ranks have signalled its step kSumLag signals ago (about one
// token every ranks - 1 steps), the rest after the loop; without, combine_receive sums after the
// whole grid. Every combine_steps_per_signal-th step and the last are signalled.
// At least 2 CTAs per SM (kMaxCtas on a 132-SM H100), which the cooperative launch needs.
template <bool kSum>
__global__ void __launch_bounds__(kThreads, kCombineCtasPerSm) combine_kernel(const __grid_constant__ A2aParams p) {
  __shared__ char* peer[kMaxRanks];
  __shared__ uint32_t dispatch_epoch;
  __shared__ uint32_t epoch;
  const A2aLayout& l = p.layout;
  char* own = load_peers(p, peer);
  if (threadIdx.x == 0) {
    dispatch_epoch = *signal_word(own, l, kDispatchEpochWord);
    epoch = *signal_word(own, l, kCombineEpochWord) + 1;
  }
  __syncthreads();
  const uint32_t target = epoch * static_cast<uint32_t>(l.combine_ctas);
  const auto* slot_epochs = reinterpret_cast<const uint32_t*>(own + l.slot_epoch_offset);
  const int sends = (l.ranks - 1) * l.max_tokens;
  const auto stamp_of = [&](int step) {
    if (step >= l.combine_steps) return 0u;
    const CombineSend slot = combine_send(p, step);
    return slot.index < sends ? slot_epochs[slot.source * l.max_tokens + slot.token] : 0u;
  };
  int next_sum = static_cast<int>(blockIdx.x);  // this CTA's next token to sum
  // The next slot's stamp is loaded before this slot's row moves (its latency hides behind the copy).
  uint32_t stamp = stamp_of(0);
  for (int j = 0; j < l.combine_steps; ++j) {
    const uint32_t next_stamp = stamp_of(j + 1);
    const CombineSend slot = combine_send(p, j);
    if (slot.index < sends && stamp == dispatch_epoch) {
      copy_row<uint4>(own + combine_row_offset(l, l.combine_in_offset, slot.source, slot.token), l.hidden / 8, peer,
                      combine_row_offset(l, l.combine_out_offset, p.rank, slot.token), 1ull << slot.source);
    }
    if ((j + 1) % l.combine_steps_per_signal == 0 || j + 1 == l.combine_steps) {
      const int signal = j / l.combine_steps_per_signal;
      signal_steps(p, peer, signal);
      if constexpr (kSum) {
        for (; next_sum < p.num_tokens &&
               combine_ready_step(l, next_sum) / l.combine_steps_per_signal + kSumLag <= signal;
             next_sum += l.combine_ctas) {
          sum_when_arrived(p, own, next_sum, target);
        }
      }
    }
    stamp = next_stamp;
  }
  if constexpr (kSum) {
    for (; next_sum < p.num_tokens; next_sum += l.combine_ctas) sum_when_arrived(p, own, next_sum, target);
  }
  (void)advance_epoch(p, own, kCombineTicketWord, kCombineEpochWord, epoch);
}

// A CTA per token (grid-stride): out[t] (sum_token). With kWait (combine_receive), first waits
// (every CTA) for every other rank's last combine step of the current combine epoch.
template <bool kWait>
__global__ void __launch_bounds__(kThreads) combine_receive_kernel(const __grid_constant__ A2aParams p) {
  const A2aLayout& l = p.layout;
  char* own = p.peers ? static_cast<char*>(p.peers[p.rank]) : const_cast<char*>(p.own_workspace);
  if constexpr (kWait) {
    const uint32_t epoch = *signal_word(own, l, kCombineEpochWord);
    wait_for_rows(p, own, -1, ~uint64_t{0}, epoch * static_cast<uint32_t>(l.combine_ctas));
  }
  for (int t = blockIdx.x; t < p.num_tokens; t += gridDim.x) sum_token(p, own, t, token_destinations(p, t));
}

void require(bool condition, const char* what) {
  if (!condition) throw std::invalid_argument(std::string("moe_comm: ") + what);
}

A2aParams route_params(const A2aLayout& l, const A2aRoute& r, void* const* peers, const void* own_workspace) {
  require(l.ranks >= 1 && l.ranks <= kMaxRanks && l.max_tokens >= 1 && l.total_bytes > 0,
          "layout not made by make_a2a_layout");
  require(r.rank >= 0 && r.rank < l.ranks, "rank out of range");
  require(r.num_tokens >= 0 && r.num_tokens <= l.max_tokens, "num_tokens outside [0, max_tokens]");
  require(r.top_k >= 1 && r.experts_per_rank >= 1, "top_k and experts_per_rank must be positive");
  require(r.num_tokens == 0 || r.expert_ids != nullptr, "expert_ids missing");
  require(peers != nullptr || own_workspace != nullptr, "workspace pointers missing");
  A2aParams p;
  p.layout = l;
  p.rank = r.rank;
  p.num_tokens = r.num_tokens;
  p.top_k = r.top_k;
  p.experts_per_rank = r.experts_per_rank;
  p.expert_ids = r.expert_ids;
  p.peers = peers;
  p.own_workspace = static_cast<const char*>(own_workspace);
  return p;
}

A2aParams with_output(A2aParams p, void* out, DType dtype) {
  require(dtype == DType::bfloat16 || dtype == DType::float16, "combine's dtype must be bfloat16 or float16");
  require(p.num_tokens == 0 || (out != nullptr && reinterpret_cast<uintptr_t>(out) % 16 == 0),
          "out missing or not 16-byte aligned");
  p.out = out;
  p.fp16 = dtype == DType::float16;
  return p;
}

void launch_reduce(const A2aParams& p, bool wait, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(receive_ctas(p.num_tokens));
  if (wait) {
    combine_receive_kernel<true><<<grid, kThreads, 0, stream>>>(p);
  } else {
    combine_receive_kernel<false><<<grid, kThreads, 0, stream>>>(p);
  }
  KBENCH_CUDA_CHECK(cudaGetLastError());
}

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

void launch_send(const A2aLayout& layout, const A2aRoute& route, std::span<const void* const> payload_src,
                 void* const* peers, bool wait, cudaStream_t stream) {
  require(peers != nullptr, "peers missing");
  A2aParams p = route_params(layout, route, peers, nullptr);
  require(payload_src.size() == static_cast<std::size_t>(layout.num_payloads), "one source pointer per payload");
  for (int q = 0; q < layout.num_payloads; ++q) {
    const void* src = payload_src[static_cast<std::size_t>(q)];
    const auto address = reinterpret_cast<uintptr_t>(src);
    require(route.num_tokens == 0 || (src != nullptr && address % 4 == 0), "payload source missing or not 4-byte aligned");
    p.payload_src[q] = src;
    p.payload_vector16[q] = layout.payload_row_bytes[q] % 16 == 0 && address % 16 == 0;
  }
  p.arrivals_per_call = static_cast<uint32_t>(dispatch_ctas(layout));
  const auto grid = static_cast<unsigned>(dispatch_ctas(layout));
  if (wait) {
    dispatch_send_kernel<true><<<grid, kThreads, 0, stream>>>(p);
  } else {
    dispatch_send_kernel<false><<<grid, kThreads, 0, stream>>>(p);
  }
  KBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

A2aLayout make_a2a_layout(int ranks, int max_tokens, std::span<const int64_t> payload_row_bytes, int hidden,
                          int max_combine_ctas) {
  require(ranks >= 1 && ranks <= kMaxRanks, "ranks must be in [1, 64]");
  require(max_tokens >= 1, "max_tokens must be positive");
  require(!payload_row_bytes.empty() && payload_row_bytes.size() <= kMaxPayloads, "1 to 6 payloads");
  require(hidden > 0 && hidden % 8 == 0, "hidden must be a positive multiple of 8");
  require(max_combine_ctas >= 1 && max_combine_ctas <= kMaxCombineCtas, "max_combine_ctas must be in [1, 264]");
  constexpr int64_t kRegionAlignment = 256;
  const int64_t slots = static_cast<int64_t>(ranks) * max_tokens;
  require(slots <= INT32_MAX, "ranks x max_tokens must fit in int32");
  A2aLayout l;
  l.ranks = ranks;
  l.max_tokens = max_tokens;
  l.num_payloads = static_cast<int>(payload_row_bytes.size());
  l.hidden = hidden;
  // Enough CTAs for every slot of another rank (or every token: one rank sends nothing).
  const int64_t sends = static_cast<int64_t>(ranks - 1) * max_tokens;
  l.combine_ctas = static_cast<int>(std::min<int64_t>(std::max<int64_t>(sends, max_tokens), max_combine_ctas));
  l.combine_steps = static_cast<int>((sends + l.combine_ctas - 1) / l.combine_ctas);
  l.combine_steps_per_signal = ranks > 2 ? kCombineStepsPerSignal : 1;
  if (const char* forced = std::getenv("KBENCH_A2A_STEPS_PER_SIGNAL")) {
    const int value = std::atoi(forced);
    require(value >= 1, "KBENCH_A2A_STEPS_PER_SIGNAL must be a positive integer");
    l.combine_steps_per_signal = value;
  }
  l.combine_signals = (l.combine_steps + l.combine_steps_per_signal - 1) / l.combine_steps_per_signal;
  int64_t offset = 0;
  for (int q = 0; q < l.num_payloads; ++q) {
    const int64_t bytes = payload_row_bytes[static_cast<std::size_t>(q)];
    require(bytes > 0 && bytes % 4 == 0, "payload row bytes must be positive multiples of 4");
    require(bytes <= int64_t{1} << 30, "payload rows too long");
    l.payload_row_bytes[q] = bytes;
    l.payload_row_stride[q] = round_up(bytes, 16);
    l.payload_offset[q] = offset;
    offset = round_up(offset + slots * l.payload_row_stride[q], kRegionAlignment);
  }
  l.slot_epoch_offset = offset;
  offset = round_up(offset + slots * 4, kRegionAlignment);
  l.combine_in_offset = offset;
  offset = round_up(offset + slots * hidden * 2, kRegionAlignment);
  l.combine_out_offset = offset;
  offset = round_up(offset + slots * hidden * 2, kRegionAlignment);
  l.signal_offset = offset;
  l.total_bytes = round_up(offset + (kSignalWords + int64_t{ranks} * l.combine_signals) * 4, kRegionAlignment);
  return l;
}

void launch_dispatch_send(const A2aLayout& layout, const A2aRoute& route, std::span<const void* const> payload_src,
                          void* const* peers, cudaStream_t stream) {
  launch_send(layout, route, payload_src, peers, false, stream);
}

void launch_dispatch_wait(const A2aLayout& layout, const A2aRoute& route, void* const* peers, cudaStream_t stream) {
  require(peers != nullptr, "peers missing");
  A2aParams p = route_params(layout, route, peers, nullptr);
  p.arrivals_per_call = static_cast<uint32_t>(dispatch_ctas(layout));
  dispatch_wait_kernel<<<1, kMaxRanks, 0, stream>>>(p);
  KBENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_dispatch(const A2aLayout& layout, const A2aRoute& route, std::span<const void* const> payload_src,
                     void* const* peers, cudaStream_t stream) {
  launch_send(layout, route, payload_src, peers, true, stream);
}

void launch_combine_send(const A2aLayout& layout, const A2aRoute& route, void* const* peers, cudaStream_t stream) {
  require(peers != nullptr, "peers missing");
  const A2aParams p = route_params(layout, route, peers, nullptr);
  combine_kernel<false><<<static_cast<unsigned>(layout.combine_ctas), kThreads, 0, stream>>>(p);
  KBENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_combine_receive(const A2aLayout& layout, const A2aRoute& route, void* const* peers, void* out,
                            DType dtype, cudaStream_t stream) {
  require(peers != nullptr, "peers missing");
  launch_reduce(with_output(route_params(layout, route, peers, nullptr), out, dtype), true, stream);
}

void launch_combine(const A2aLayout& layout, const A2aRoute& route, void* const* peers, void* out, DType dtype,
                    cudaStream_t stream) {
  require(peers != nullptr, "peers missing");
  const A2aParams p = with_output(route_params(layout, route, peers, nullptr), out, dtype);
  // Cooperative: the grid is resident as a whole (its CTAs wait for peers that wait for them), or the
  // launch fails; capturable in a CUDA graph.
  cudaLaunchAttribute cooperative = {};
  cooperative.id = cudaLaunchAttributeCooperative;
  cooperative.val.cooperative = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(layout.combine_ctas));
  config.blockDim = dim3(kThreads);
  config.stream = stream;
  config.attrs = &cooperative;
  config.numAttrs = 1;
  KBENCH_CUDA_CHECK(cudaLaunchKernelEx(&config, combine_kernel<true>, p));
}

void launch_combine_reduce(const A2aLayout& layout, const A2aRoute& route, const void* own_workspace, void* out,
                           DType dtype, cudaStream_t stream) {
  require(own_workspace != nullptr, "own_workspace missing");
  launch_reduce(with_output(route_params(layout, route, nullptr, own_workspace), out, dtype), false, stream);
}

}  // namespace kbench::kernels::moe_comm
