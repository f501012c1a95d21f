// The streamed softmax (device code): rows that fill the GPU at copy speed. Included by
// row_kernels.cuh; instantiated once per input dtype in row_kernels_<dtype>.cu.
//
// Why not the cluster kernel: there every CTA holds its slice while it waits for the cluster's
// (max, sum) exchange, so an SM's loads stall behind the slowest slice of each row (120 us on 256 x
// 128256 fp32 against a copy's 92). Here a row is cut into chunks and every chunk is two work items:
// a stats item (read the chunk from HBM, write its (max, sum of exp)) and a write item (read the
// chunk again, from L2, wait until the row's stats are all in, write the probabilities). A write
// item is handed out `lag` items after its row's stats items, by which time they are done and the
// chunk is still in L2. So HBM sees one read and one write per element, as a copy does.
//
// Persistent CTAs: a producer thread takes items and bulk-copies their chunks into a ring of
// shared-memory stages (an SM keeps ~200 KB of loads in flight, never waiting on a result); eight
// consumer warps take the stages in order, each its own share of every chunk and with no barrier
// between warps: a stats item's warp publishes its own (max, sum) and counts itself in its row's
// `arrived` (a release reduction), a write item's warp waits for the row's count and combines every
// warp's pair itself. Items are handed out in ticket order (an atomic counter): a write item waits
// only on stats items with smaller tickets, and every warp works its CTA's items in ticket order,
// so the item of the smallest unfinished ticket can always proceed: no deadlock, whatever CTAs are
// resident. Ticket order: stats items 0..lag-1, then write item i and stats item i + lag
// alternately, then the last write items. The rows' counts only grow; a launch waits for its
// epoch's share of them (the last CTA to finish advances the epoch and zeroes the ticket counter),
// so CUDA graph replays and back-to-back launches need no memset.
#pragma once

#include "kernels/common/hopper.cuh"

namespace kbench::kernels::sampling_detail {

// Values a consumer thread holds (in registers, between the stage and the write): a chunk is at
// most kStreamedConsumers * kStreamedValues elements.
inline constexpr int kStreamedValues = 32;
inline constexpr int kStreamedConsumerWarps = 8;
inline constexpr int kStreamedConsumers = 32 * kStreamedConsumerWarps;
inline constexpr int kStreamedThreads = kStreamedConsumers + 32;  // + the producer warp
inline constexpr int kStreamedMaxStages = 16;

// 0: none; 1: the write items' loads and stores evict-first; 2: 1 plus the stats items' loads
// evict-last (the chunk should survive in L2 until its write item).
enum StreamedHints { kHintsNone = 0, kHintsStreaming = 1, kHintsKeepChunks = 2 };

#if defined(KBENCH_SAMPLING_SM90)

struct Decoded {
  bool write;
  int64_t item;
};
__device__ __forceinline__ Decoded decode_ticket(int64_t t, int64_t items, int64_t lag) {
  if (t < lag) return {false, t};
  if (t < 2 * items - lag) {
    const int64_t k = t - lag;
    return (k & 1) == 0 ? Decoded{true, k >> 1} : Decoded{false, lag + (k >> 1)};
  }
  return {true, items - lag + (t - (2 * items - lag))};
}

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// (max, sum of exp2(x - max)) pairs, combined in a fixed order (deterministic sums); commutative
// bit for bit, so a butterfly leaves every lane the same pair.
__device__ __forceinline__ float2 combine_stats(float2 p, float2 q) {
  const float m = fmaxf(p.x, q.x);
  if (m == -INFINITY) return make_float2(-INFINITY, 0.0f);
  return make_float2(m, p.y * fast_exp2(p.x - m) + q.y * fast_exp2(q.x - m));
}

__device__ __forceinline__ float2 warp_combine_stats(float2 v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float2 other = make_float2(__shfl_xor_sync(0xFFFFFFFFu, v.x, o), __shfl_xor_sync(0xFFFFFFFFu, v.y, o));
    v = combine_stats(v, other);
  }
  return v;
}

__device__ __forceinline__ uint64_t l2_policy(bool keep) {
  uint64_t policy;
  if (keep) {
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  } else {
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  }
  return policy;
}

#endif  // KBENCH_SAMPLING_SM90

template <class T>
__global__ void __launch_bounds__(kStreamedThreads) streamed_softmax_kernel(StreamedSoftmaxArgs a) {
#if defined(KBENCH_SAMPLING_SM90)
  using namespace hopper;
  constexpr int kPer = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte vector
  constexpr int kVectors = kStreamedValues / kPer;
  extern __shared__ __align__(16) unsigned char ring[];
  __shared__ uint64_t full[kStreamedMaxStages];
  __shared__ uint64_t empty[kStreamedMaxStages];
  __shared__ int64_t stage_ticket[kStreamedMaxStages];
  __shared__ uint32_t epoch;
  const int warp = warp_id();
  const int64_t end = 2 * a.items;
  pdl_wait();
  if (threadIdx.x == 0) {
    for (int s = 0; s < a.stages; ++s) {
      mbar_init(smem_addr(&full[s]), 1);
      mbar_init(smem_addr(&empty[s]), kStreamedConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    epoch = *static_cast<volatile uint32_t*>(a.epoch);
  }
  __syncthreads();
  pdl_launch_dependents();

  if (warp == kStreamedConsumerWarps) {  // the producer
    if (lane_id() != 0) return;
    const uint64_t keep = l2_policy(a.hints >= kHintsKeepChunks);
    const uint64_t drop = l2_policy(false);
    int stage = 0;
    uint32_t phase = 0;
    for (;;) {
      mbar_wait(smem_addr(&empty[stage]), phase ^ 1u);
      const int64_t t = static_cast<int64_t>(atomicAdd(a.tickets, 1ull));
      stage_ticket[stage] = t;
      if (t >= end) {
        mbar_arrive(smem_addr(&full[stage]));
        break;
      }
      const Decoded d = decode_ticket(t, a.items, a.lag);
      const int64_t row = d.item / a.chunks;
      const int64_t begin = (d.item % a.chunks) * a.chunk;
      const auto bytes = static_cast<uint32_t>(min(a.chunk, a.cols - begin) * static_cast<int64_t>(sizeof(T)));
      const T* src = static_cast<const T*>(a.input) + row * a.cols + begin;
      const uint32_t dst = smem_addr(ring + static_cast<int64_t>(stage) * a.stage_bytes);
      const uint32_t bar = smem_addr(&full[stage]);
      mbar_arrive_expect_tx(bar, bytes);
      if (a.hints == kHintsNone || (!d.write && a.hints < kHintsKeepChunks)) {
        bulk_load(dst, src, bytes, bar);
      } else {
        bulk_load_hinted(dst, src, bytes, bar, d.write ? drop : keep);
      }
      if (++stage == a.stages) {
        stage = 0;
        phase ^= 1u;
      }
    }
    // Every CTA ends on one ticket past the last, having read the epoch before its first: the last
    // CTA to get its own starts the next launch's epoch.
    if (atomicAdd(a.finished, 1u) == gridDim.x - 1) {
      *a.tickets = 0ull;
      *a.finished = 0u;
      *a.epoch = epoch + 1u;
    }
    return;
  }

  const int tid = static_cast<int>(threadIdx.x);
  const uint32_t shares = static_cast<uint32_t>(a.chunks) * kStreamedConsumerWarps;  // a row's stats pairs
  const uint32_t complete = (epoch + 1u) * shares;  // a row's count once this launch's stats are in
  int stage = 0;
  uint32_t phase = 0;
  for (;; ++stage) {
    if (stage == a.stages) {
      stage = 0;
      phase ^= 1u;
    }
    mbar_wait(smem_addr(&full[stage]), phase);
    const int64_t t = stage_ticket[stage];
    if (t >= end) break;
    const Decoded d = decode_ticket(t, a.items, a.lag);
    const int64_t row = d.item / a.chunks;
    const int64_t begin = (d.item % a.chunks) * a.chunk;
    const int n = static_cast<int>(min(a.chunk, a.cols - begin));
    const auto* chunk = reinterpret_cast<const uint4*>(ring + static_cast<int64_t>(stage) * a.stage_bytes);
    float z[kStreamedValues];
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      const int at = (v * kStreamedConsumers + tid) * kPer;
      if (at < n) {
        const uint4 raw = chunk[v * kStreamedConsumers + tid];
        const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
        for (int j = 0; j < kPer; ++j) z[v * kPer + j] = Elem<T>::to_float(e[j]) * a.scale;
      } else {
#pragma unroll
        for (int j = 0; j < kPer; ++j) z[v * kPer + j] = -INFINITY;
      }
    }
    mbar_arrive(smem_addr(&empty[stage]));  // this thread's values are in registers

    if (!d.write) {
      float m = -INFINITY;
#pragma unroll
      for (int i = 0; i < kStreamedValues; ++i) m = fmaxf(m, z[i]);
      float s = 0.0f;
      if (m != -INFINITY) {
#pragma unroll
        for (int i = 0; i < kStreamedValues; ++i) s += fast_exp2(z[i] - m);
      }
      const float2 w = warp_combine_stats(make_float2(m, s));
      if (lane_id() == 0) {
        a.stats[d.item * kStreamedConsumerWarps + warp] = w;
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(a.arrived + row) : "memory");
      }
      continue;
    }

    if (lane_id() == 0) {
      for (;;) {
        uint32_t seen;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(a.arrived + row) : "memory");
        if (static_cast<int32_t>(seen - complete) >= 0) break;
        __nanosleep(32);
      }
    }
    __syncwarp();
    // The row's pairs in a fixed order: every warp of every write item gets the same bits.
    float2 all = make_float2(-INFINITY, 0.0f);
    const float2* row_stats = a.stats + row * static_cast<int64_t>(shares);
    for (uint32_t base = 0; base < shares; base += 32) {
      const uint32_t i = base + static_cast<uint32_t>(lane_id());
      float2 part = make_float2(-INFINITY, 0.0f);
      if (i < shares) part = __ldcg(row_stats + i);
      all = combine_stats(all, warp_combine_stats(part));
    }
    const float inv_sum = 1.0f / all.y;
    float* out = a.output + row * a.cols + begin;
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      const int at = (v * kStreamedConsumers + tid) * kPer;
      if (at >= n) continue;
#pragma unroll
      for (int j = 0; j < kPer; j += 4) {
        const float* q = z + v * kPer + j;
        const float4 p = make_float4(fast_exp2(q[0] - all.x) * inv_sum, fast_exp2(q[1] - all.x) * inv_sum,
                                     fast_exp2(q[2] - all.x) * inv_sum, fast_exp2(q[3] - all.x) * inv_sum);
        auto* dst = reinterpret_cast<float4*>(out + at + j);
        if (a.hints >= kHintsStreaming) {
          __stcs(dst, p);
        } else {
          *dst = p;
        }
      }
    }
  }
#endif
}

}  // namespace kbench::kernels::sampling_detail
