// Device building blocks of the sampling family (private to kernels/sampling): element types and
// their order-preserving keys, Philox draws, deterministic block reductions and scans, and the
// sm_90 pieces of the row kernels (cluster exchanges, the shared-memory row slice, radix select).
//
// Determinism: every float sum is formed in a fixed order (a thread's own elements in its order,
// then a fixed tree over lanes and warps, then ranks in order), so the same inputs, seed and offset
// give the same bits on every call; histogram counts are integers (atomics commute).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "kernels/common/mma_sm80.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#define KBENCH_SAMPLING_SM90 1
#endif

namespace kbench::kernels::sampling_detail {

inline constexpr int kMaxThreads = 512;
inline constexpr int kMaxWarps = kMaxThreads / 32;
inline constexpr int kMinThreads = 256;  // the radix select gives every one of its 256 bins a thread
inline constexpr int kBins = 256;
inline constexpr int kMaxCluster = 16;
// Candidates of the top-k fast path (all CTAs of a row together): 16 KB per CTA.
inline constexpr int kListCapacity = 2048;

// ---------------------------------------------------------------------------------------------
// Element types. key() maps values to unsigned integers in the same order (negative floats with all
// bits flipped, the others with the sign bit set), so radix selection and exact comparisons work on
// integers; from_key() is its inverse. Key 0 (a negative NaN's) is never a real value's: it stands
// for "nothing" (a thread without elements).
template <class T>
struct Elem;

template <>
struct Elem<float> {
  static constexpr int kKeyBits = 32;
  __device__ static float to_float(float v) { return v; }
  __device__ static float from_float(float f) { return f; }
  __device__ static uint32_t key(float v) {
    const uint32_t u = __float_as_uint(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
  __device__ static float from_key(uint32_t k) { return __uint_as_float((k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k); }
};

template <class Half, class Convert>
struct Elem16 {
  static constexpr int kKeyBits = 16;
  __device__ static uint32_t key(Half v) {
    const uint32_t u = Convert::bits(v);
    return (u & 0x8000u) ? (~u & 0xFFFFu) : (u | 0x8000u);
  }
  __device__ static Half from_key(uint32_t k) {
    return Convert::from_bits(static_cast<unsigned short>((k & 0x8000u) ? (k & 0x7FFFu) : (~k & 0xFFFFu)));
  }
};
struct HalfBits {
  __device__ static uint32_t bits(__half v) { return __half_as_ushort(v); }
  __device__ static __half from_bits(unsigned short b) { return __ushort_as_half(b); }
};
struct Bf16Bits {
  __device__ static uint32_t bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
  __device__ static __nv_bfloat16 from_bits(unsigned short b) { return __ushort_as_bfloat16(b); }
};
template <>
struct Elem<__half> : Elem16<__half, HalfBits> {
  __device__ static float to_float(__half v) { return __half2float(v); }
  __device__ static __half from_float(float f) { return __float2half_rn(f); }
};
template <>
struct Elem<__nv_bfloat16> : Elem16<__nv_bfloat16, Bf16Bits> {
  __device__ static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  __device__ static __nv_bfloat16 from_float(float f) { return __float2bfloat16_rn(f); }
};

// ---------------------------------------------------------------------------------------------
// Philox4x32-10 (Salmon et al., SC'11): draw `draw` of row `row` under the seed and offset the
// device holds (rng[0], rng[1]). A uniform in [0, 1) with 24 bits.
__device__ __forceinline__ float philox_uniform(const uint64_t* rng, uint64_t row, uint32_t draw) {
  const uint64_t seed = __ldg(reinterpret_cast<const unsigned long long*>(rng));
  const uint64_t offset = __ldg(reinterpret_cast<const unsigned long long*>(rng) + 1);
  uint32_t c0 = draw, c1 = static_cast<uint32_t>(row), c2 = static_cast<uint32_t>(offset);
  uint32_t c3 = static_cast<uint32_t>(offset >> 32) ^ static_cast<uint32_t>(row >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const uint32_t hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return static_cast<float>(c0 >> 8) * 0x1p-24f;
}

// ---------------------------------------------------------------------------------------------
// Shuffles of any trivially copyable value, word by word.
template <class V>
__device__ __forceinline__ V shfl_any(V v, int src) {
  static_assert(sizeof(V) % 4 == 0, "shuffled values are whole words");
  uint32_t w[sizeof(V) / 4];
  memcpy(w, &v, sizeof(V));
#pragma unroll
  for (int i = 0; i < static_cast<int>(sizeof(V) / 4); ++i) w[i] = __shfl_sync(0xFFFFFFFFu, w[i], src);
  memcpy(&v, w, sizeof(V));
  return v;
}

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x & 31u); }
__device__ __forceinline__ int warp_id() { return static_cast<int>(threadIdx.x >> 5); }
__device__ __forceinline__ int num_warps() { return static_cast<int>(blockDim.x >> 5); }

// Block-wide reduction; every thread gets the result. `scratch` holds kMaxWarps values.
template <class V, class Op>
__device__ __forceinline__ V block_reduce(V v, Op op, V* scratch) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = op(v, shfl_any(v, lane_id() ^ o));
  if (lane_id() == 0) scratch[warp_id()] = v;
  __syncthreads();
  V r = scratch[0];
  for (int w = 1; w < num_warps(); ++w) r = op(r, scratch[w]);
  __syncthreads();
  return r;
}

template <class V>
struct Scan {
  V excl;   // sum over the threads before this one
  V incl;   // excl + this thread's value; bit for bit the next thread's excl
  V total;  // bit for bit the last thread's incl
};
// Block-wide prefix sums in thread order. `scratch` holds kMaxWarps values.
template <class V>
__device__ __forceinline__ Scan<V> block_scan(V v, V* scratch) {
  V x = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const V y = shfl_any(x, lane_id() >= o ? lane_id() - o : lane_id());
    if (lane_id() >= o) x = x + y;
  }
  if (lane_id() == 31) scratch[warp_id()] = x;
  __syncthreads();
  V offset{};
  V total{};
  for (int w = 0; w < num_warps(); ++w) {
    if (w == warp_id()) offset = total;
    total = total + scratch[w];
  }
  const V incl = offset + x;
  V excl = shfl_any(incl, lane_id() > 0 ? lane_id() - 1 : 0);
  if (lane_id() == 0) excl = offset;
  __syncthreads();
  return {excl, incl, total};
}

// ---------------------------------------------------------------------------------------------
// Row slices in shared memory.

// Copies src[0, n) to shared memory at `smem` (16-byte aligned, room for n + 16 / sizeof(T)
// elements) and returns where element 0 landed: element i sits at the same offset modulo 16 bytes
// as in global memory, so every whole 16-byte chunk of the row moves with one cp.async; the partial
// chunks at both ends move element by element (nothing outside [src, src + n) is read).
// Synchronises the block.
template <class T>
__device__ __forceinline__ const T* load_slice(const T* src, int64_t n, T* smem) {
  constexpr int kPer = 16 / static_cast<int>(sizeof(T));
  const int shift = static_cast<int>((reinterpret_cast<uintptr_t>(src) % 16) / sizeof(T));
  T* dst = smem + shift;
  const int64_t head = shift == 0 ? 0 : (n < kPer - shift ? n : kPer - shift);
  const int64_t chunks = (n - head) / kPer;
  const int64_t tail = head + chunks * kPer;
  for (int64_t i = threadIdx.x; i < head; i += blockDim.x) dst[i] = src[i];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(dst + head));
  const char* from = reinterpret_cast<const char*>(src + head);
  for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
    sm80::cp_async16<0>(base + static_cast<uint32_t>(c * 16), from + c * 16);
  }
  sm80::cp_async_commit();
  for (int64_t i = tail + threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
  sm80::cp_async_wait<0>();
  __syncthreads();
  return dst;
}

// Adds `weight` to hist[bin] for every lane (bin kBins: nothing), one atomic per distinct bin of the
// warp: lanes with the same bin sum their weights first (__match_any_sync, __reduce_add_sync), so a
// row whose values share a few bins (a flat distribution's exponents) does not serialise on them.
// Weights are below 2^51; all 32 lanes call it.
__device__ __forceinline__ void hist_add(unsigned long long* hist, uint32_t bin, uint64_t weight) {
  const unsigned peers = __match_any_sync(0xFFFFFFFFu, bin);
  const unsigned lo = __reduce_add_sync(peers, static_cast<unsigned>(weight & 0xFFFFFFu));
  const unsigned hi = __reduce_add_sync(peers, static_cast<unsigned>(weight >> 24));
  if (bin < kBins && lane_id() == __ffs(peers) - 1) {
    atomicAdd(hist + bin, (static_cast<unsigned long long>(hi) << 24) + lo);
  }
}

// Adds the number of lanes with bin `bin` to hist[bin] (bin kBins: nothing): one native 32-bit
// shared atomic per distinct bin of the warp. The count-only selects (top-k) take this one: a 64-bit
// shared atomicAdd is a CAS loop, which spins when the warps of a CTA meet in a few bins (a row's
// top elements share their leading digits). All 32 lanes call it.
__device__ __forceinline__ void hist_count(uint32_t* hist, uint32_t bin) {
  const unsigned peers = __match_any_sync(0xFFFFFFFFu, bin);
  if (bin < kBins && lane_id() == __ffs(peers) - 1) atomicAdd(hist + bin, static_cast<uint32_t>(__popc(peers)));
}

// A drawn element: its key and its index in the row.
struct Pick {
  uint32_t key = 0;
  int32_t index = -1;
  uint32_t valid = 0;
};

// One candidate of the top-k fast path.
struct ListEntry {
  uint32_t key;
  int32_t index;  // in the row
};

template <class V>
struct RankScan {
  V excl;   // over the ranks before this CTA's
  V incl;   // excl + this CTA's
  V total;  // over all ranks
};

// Static shared memory of every row kernel.
struct Shared {
  // Radix histograms: two for cluster-wide selects (alternating: other ranks read them after the
  // barrier), one for block-wide selects (only this CTA reads it).
  unsigned long long hist[3][kBins];
  unsigned long long u64[kMaxWarps];
  float f32[kMaxWarps];
  uint32_t u32[kMaxWarps];
  alignas(16) unsigned char words[kMaxWarps][16];  // block reductions and scans of small structs
  alignas(16) unsigned char slot[2][kMaxCluster][16];  // every rank's contribution to an exchange
  alignas(16) unsigned char result[48];   // an exchange's outcome, for the whole block
  uint32_t bin;
  unsigned long long bin_excl;
};

#if defined(KBENCH_SAMPLING_SM90)

// The CTAs of one row: rank, size, and the alternation of the exchange buffers (uniform across the
// cluster: every CTA makes the same sequence of exchanges).
//
// Exchanges push: each CTA writes its contribution into every CTA's shared memory, then one cluster
// barrier, then each reads its own copy. So once a CTA has passed its last barrier nobody touches
// its shared memory again and it may leave without a closing barrier (whose release would also wait
// for the CTA's output stores): finish() syncs only where a radix select pulled histograms from
// other CTAs. here() arrives on the barrier that tells every CTA the others have started (a push
// needs its target running); the first exchange waits on it, so the wait costs nothing.
struct Cluster {
  unsigned rank;
  unsigned size;
  int slot_parity = 0;
  int hist_parity = 0;
  bool start_pending = true;  // here()'s arrival not yet waited on
  bool pulled = false;        // a radix select read other CTAs' histograms

  __device__ static Cluster here() {
    const cooperative_groups::cluster_group c = cooperative_groups::this_cluster();
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
    return {c.block_rank(), c.num_blocks()};
  }
  __device__ void settle() {
    if (start_pending) asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");
    start_pending = false;
  }
  __device__ void sync() {
    settle();
    cooperative_groups::this_cluster().sync();
  }
  // Before the CTA exits.
  __device__ void finish() {
    if (pulled) {
      sync();
    } else {
      settle();
    }
  }
  template <class V>
  __device__ static V* remote(V* local, unsigned rank) {
    return cooperative_groups::this_cluster().map_shared_rank(local, rank);
  }

  // Every CTA contributes `mine` (thread 0's); each gets the fold of all contributions in rank
  // order: before its own, through its own, and over all. One cluster barrier; the exchange buffer
  // alternates so the next exchange never overwrites one a slower CTA is still reading.
  template <class V, class Op>
  __device__ RankScan<V> scan(const V& mine, V identity, Op op, Shared& sh) {
    static_assert(sizeof(V) <= 16 && 3 * sizeof(V) <= sizeof(Shared::result), "exchange values fit their buffers");
    settle();
    if (warp_id() == 0) {
      const V v0 = shfl_any(mine, 0);
      if (static_cast<unsigned>(lane_id()) < size) memcpy(remote(sh.slot[slot_parity][rank], lane_id()), &v0, sizeof(V));
    }
    cooperative_groups::this_cluster().sync();
    if (warp_id() == 0) {
      V v = identity;
      if (static_cast<unsigned>(lane_id()) < size) memcpy(&v, sh.slot[slot_parity][lane_id()], sizeof(V));
      RankScan<V> out{identity, identity, identity};
      V acc = identity;
      for (unsigned r = 0; r < size; ++r) {
        const V vr = shfl_any(v, static_cast<int>(r));
        if (r == rank) out.excl = acc;
        acc = op(acc, vr);
        if (r == rank) out.incl = acc;
      }
      out.total = acc;
      if (lane_id() == 0) memcpy(sh.result, &out, sizeof(out));
    }
    __syncthreads();
    RankScan<V> out;
    memcpy(&out, sh.result, sizeof(out));
    slot_parity ^= 1;
    return out;
  }
  template <class V, class Op>
  __device__ V all_reduce(const V& mine, V identity, Op op, Shared& sh) {
    return scan(mine, identity, op, sh).total;
  }

  // The one valid pick among the CTAs' (the first valid in rank order; invalid if none).
  __device__ Pick agree(const Pick& mine, Shared& sh) {
    return all_reduce(mine, Pick{}, [](const Pick& a, const Pick& b) { return a.valid ? a : b; }, sh);
  }
};

// Where reductions of a radix select reach: the row (all CTAs of the cluster) or this CTA alone
// (a list every CTA holds whole, or this CTA's own threads).
enum class Scope { cluster, block };

struct Selected {
  bool found = false;
  uint32_t key = 0;          // the threshold: W(keys > key) < target <= W(keys >= key)
  unsigned long long above = 0;  // W(keys > key)
  unsigned long long total = 0;  // W(all)
};

// Radix selection over 8-bit digits of the keys, most significant first: the key at which the
// weight of larger keys stops short of `target(total)`, for count weights (the k-th largest) or
// fixed-point masses (a top-p pivot). `Source` yields, for rounds 0..rounds()-1 (the same number in
// every thread of the block), one {valid, key, weight} per thread. Each pass histograms the
// elements whose higher digits match the prefix found so far, combines the histograms over `kScope`
// and picks the digit. After `passes` digits (kKeyBits / 8 for the exact key) the lower digits are
// 0: a key at or below the exact one, whose `above` counts what lies above the prefix. found =
// false when target is 0 or above the total weight. Sources whose weights are all 1 say so
// (kCounts): their histograms are 32-bit counts (hist_count); kBatch rounds are read before they
// are counted.
struct Item {
  bool valid;
  uint32_t key;
  unsigned long long weight;
};
template <int kKeyBits, Scope kScope, class Source, class Target>
__device__ Selected radix_select(const Source& source, Target target_of_total, Shared& sh, Cluster& cluster,
                                 int passes) {
  Selected s;
  uint32_t prefix = 0;
  unsigned long long target = 0;
  const int rounds = source.rounds();
  constexpr bool kCounts = Source::kCounts;
  for (int shift = kKeyBits - 8; shift >= kKeyBits - 8 * passes; shift -= 8) {
    unsigned long long* hist = sh.hist[kScope == Scope::cluster ? cluster.hist_parity : 2];
    uint32_t* counts = reinterpret_cast<uint32_t*>(hist);  // kCounts: the first half of the same buffer
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) {
      if constexpr (kCounts) {
        counts[b] = 0u;
      } else {
        hist[b] = 0ull;
      }
    }
    __syncthreads();
    for (int r = 0; r < rounds; r += Source::kBatch) {
      Item items[Source::kBatch];  // loaded together: a source in global memory is latency-bound
#pragma unroll
      for (int b = 0; b < Source::kBatch; ++b) items[b] = r + b < rounds ? source.item(r + b) : Item{false, 0u, 0ull};
#pragma unroll
      for (int b = 0; b < Source::kBatch; ++b) {
        const Item& it = items[b];
        const bool in = it.valid && (shift + 8 >= kKeyBits || (it.key >> (shift + 8)) == (prefix >> (shift + 8)));
        const uint32_t bin = in ? (it.key >> shift) & 0xFFu : static_cast<uint32_t>(kBins);
        if constexpr (kCounts) {
          hist_count(counts, bin);
        } else {
          hist_add(hist, bin, in ? it.weight : 0);
        }
      }
    }
    __syncthreads();
    // Thread t looks after bin 255 - t: a prefix sum in thread order is one from the top bin down.
    unsigned long long count = 0;
    if constexpr (kScope == Scope::cluster) {
      cluster.sync();
      cluster.pulled = true;
    }
    if (threadIdx.x < kBins) {
      const int bin = kBins - 1 - static_cast<int>(threadIdx.x);
      if constexpr (kScope == Scope::cluster) {
        for (unsigned r = 0; r < cluster.size; ++r) {
          count += kCounts ? *Cluster::remote(counts + bin, r) : *Cluster::remote(hist + bin, r);
        }
      } else {
        count = kCounts ? counts[bin] : hist[bin];
      }
    }
    if constexpr (kScope == Scope::cluster) cluster.hist_parity ^= 1;
    const Scan<unsigned long long> scan = block_scan(count, sh.u64);
    if (shift == kKeyBits - 8) {
      s.total = scan.total;
      target = target_of_total(scan.total);
      if (target == 0 || target > scan.total) return s;  // the same in every thread and CTA
    }
    const unsigned long long remaining = target - s.above;
    if (threadIdx.x < kBins && scan.excl < remaining && remaining <= scan.incl) {
      sh.bin = kBins - 1 - threadIdx.x;
      sh.bin_excl = scan.excl;
    }
    __syncthreads();
    prefix |= sh.bin << shift;
    s.above += sh.bin_excl;
    __syncthreads();
  }
  s.found = true;
  s.key = prefix;
  return s;
}

#endif  // KBENCH_SAMPLING_SM90

}  // namespace kbench::kernels::sampling_detail
