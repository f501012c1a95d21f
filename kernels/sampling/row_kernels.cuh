// kbench's sampling row kernels (device code) and their private interface with sampling_launch.cu
// (validation, plans, launches) and the per-dtype translation units row_kernels_<dtype>.cu. Not
// part of the public API: include "kernels/sampling/sampling.hpp" instead.
//
// The design every kernel shares: a row is split into `slice`-element parts, one per CTA of a
// thread-block cluster (1 to 16 CTAs, one row per cluster, enough clusters to fill the GPU); each CTA
// copies its part into shared memory once (16-byte cp.async, sampling_common.cuh), and everything
// after is passes over shared memory with the cluster's CTAs exchanging a few words through
// distributed shared memory. So a routine costs one read of its input from HBM (and one write of
// its output) however many passes its maths needs, a small batch spreads each row over 16 SMs, and
// nothing is sorted:
//  * sampler: inverse-CDF draws. A pass sums each thread's weights (probabilities, or exp(x - max)
//    for logits) over the kept set; a block scan and a scan over the cluster's ranks place a Philox
//    uniform in one thread's interval, and that thread walks its elements. Top-p is rejection
//    sampling without a sort: draw from {x > pivot}, accept when the mass above the drawn token is
//    below top_p (one pass), else raise the pivot to it and draw again (each round accepts with
//    probability >= top_p: ~1.1 rounds). Top-k and min-p are thresholds (below) known before the
//    first draw.
//  * the k-th largest (top-k sampling, masks, renorms, top_k, the transforms): the per-thread maxima
//    of the row (threads x CTAs) bound it from below (3 digits of a radix select over them); the few elements
//    at or above the bound (~k) are written to a candidate list every CTA holds, and an exact radix
//    select over the list gives the k-th largest. A row where that list would overflow (k above the
//    threads, many ties) takes an exact radix select over the whole row instead (8-bit digits,
//    warp-aggregated histograms combined over the cluster). Batches that fill the GPU take the
//    two-pass plan instead (top_k and the top-k samplers: a threshold per row estimated from a
//    sample, a filter over chunks at HBM speed, a merge per row; described above its kernels).
//  * top_p_renorm: the exact pivot by a radix select over fixed-point masses (integers: the same sum
//    in any order), then one pass for the kept mass and one to write.
//  * softmax: two passes for each thread's (max, sum of 2^(y - max)), combined over the block and the
//    cluster, one pass to write.
//  * chain speculative sampling: the acceptance tests are n scalar reads per request; only the
//    target and draft rows at the first rejection are loaded, for one draw from max(q - p, 0).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/common/mma_sm80.cuh"
#include "kernels/common/pdl.cuh"
#include "kernels/sampling/sampling.hpp"
#include "kernels/sampling/sampling_common.cuh"
#include "kernels/sampling/two_pass_sample.hpp"

namespace kbench::kernels::sampling_detail {

// Resident CTAs per SM the kernels are compiled for (__launch_bounds__: at most 40 registers per
// thread for 3 CTAs of kMaxThreads, no spills; the top-k kernel keeps 2, its emission needs more): a
// 64 KB slice per CTA leaves room for 3 in shared memory, so one CTA's loads overlap another's passes.
inline constexpr int kCtasPerSm = 3;
inline constexpr int kTopKCtasPerSm = 2;
inline constexpr int kMaxChunks = 64;  // chunks of a row in the two-pass top_k

// Bytes of one slice buffer: the slice plus one 16-byte chunk of shift (load_slice), rounded to 16.
__host__ __device__ constexpr int64_t buffer_bytes(int64_t slice, int elem_bytes) {
  return ((slice + 16 / elem_bytes) * elem_bytes + 15) / 16 * 16;
}

// The two-pass plans' candidates: each row's pool (the filter's runs, reserved with an atomic
// cursor) and where each chunk's run sits in it and how long it is (-1: the pool overflowed); the
// merge gathers the runs in chunk order into its shared memory, or, where they do not fit there,
// into one of `ordered_rows` rows of `ordered` it claims (a row that finds none left takes the
// whole-row path).
struct CandidatePool {
  ListEntry* entries;         // [rows][capacity]
  ListEntry* ordered;         // [ordered_rows][capacity]
  int32_t* chunk_offsets;     // [rows][chunks]
  int32_t* chunk_counts;      // [rows][chunks]
  uint32_t* ordered_claimed;  // one counter, zeroed by the estimate
  int capacity;
  int chunks;
  int ordered_rows;
};

struct SamplerArgs {
  const void* input;
  int64_t cols;
  int64_t slice;
  int list_capacity;  // 0: no candidate list
  bool from_logits;
  int64_t top_k;
  float top_p;
  float min_p;
  bool joint;
  const uint64_t* rng;
  int32_t* output;
  CandidatePool pool;  // the two-pass samplers' merge (pool.chunks > 0; list_capacity: its shared memory)
};

struct FilterArgs {
  sampling::FilterOp op;
  const void* input;
  int64_t cols;
  int64_t slice;
  int list_capacity;
  float inv_temperature;
  int64_t top_k;
  float top_p;
  void* output;
};

struct TopKArgs {
  sampling::TopKOutput output;
  const void* input;
  int64_t cols;
  int64_t slice;
  int list_capacity;
  int64_t k;
  const int32_t* lengths;
  void* values;
  int64_t* indices;
  const int32_t* page_table;
  int64_t page_table_stride;
  const int32_t* offsets;
  int32_t* mapped;
  // The two-pass kernels (pool.chunks > 0; list_capacity: the merge's shared memory): each row's
  // threshold (the sample_rank-th largest of the sample's thread maxima), its candidates and the
  // cursor of its pool.
  CandidatePool pool;
  int sample_rank;
  uint32_t* thresholds;  // [rows]
  uint32_t* cursors;     // [rows]
};

struct ChainArgs {
  const float* draft_probs;
  const int32_t* draft_ids;
  const float* target_probs;
  int64_t n;
  int64_t cols;
  int64_t slice;
  const uint64_t* rng;
  int32_t* output_ids;
  int32_t* accepted;
  int32_t* emitted;
};

// The kernels of one input dtype (row_kernels_<dtype>.cu).
struct RowKernels {
  void (*sampler)(SamplerArgs);
  void (*filter)(FilterArgs);
  void (*top_k)(TopKArgs);
  void (*top_k_estimate)(TopKArgs);
  void (*top_k_filter)(TopKArgs);
  void (*top_k_merge)(TopKArgs);
  void (*sampler_merge)(SamplerArgs);
};
RowKernels row_kernels_f32();
RowKernels row_kernels_f16();
RowKernels row_kernels_bf16();
void (*chain_kernel())(ChainArgs);

#if defined(KBENCH_SAMPLING_SM90)

struct Plus {
  template <class V>
  __device__ V operator()(V a, V b) const { return a + b; }
};
struct Max {
  template <class V>
  __device__ V operator()(V a, V b) const { return a > b ? a : b; }
};

// This CTA's part of a row in shared memory: element i (< n) is the row's element begin + i.
// weight() is what the draws sum: the value (probabilities) or exp(value - max) (logits).
template <class T>
struct RowView {
  const T* x;
  int n;
  int64_t begin;
  bool from_logits;
  float max_logit;
  __device__ uint32_t key(int i) const { return Elem<T>::key(x[i]); }
  __device__ float value(int i) const { return Elem<T>::to_float(x[i]); }
  __device__ float weight(int i) const { return from_logits ? __expf(value(i) - max_logit) : value(i); }
  __device__ int64_t index(int i) const { return begin + i; }
};

// Exponentials are 2^x on the MUFU unit (sm80::ex2, ex2.approx.ftz) without __expf's fix-up for
// denormal results: they flush to 0, and weights below 2^-126 do not move a float sum near 1.
using sm80::ex2;
inline constexpr float kLog2e = 1.4426950408889634f;

// This CTA's slice in shared memory (load_slice's layout: element i at its global offset modulo 16
// bytes) read in 16-byte vectors: thread t owns vectors t, t + blockDim.x, ... of the aligned
// buffer, their elements in order. One LDS.128 per 4 (float) or 8 (16-bit) elements: the passes of
// the sampler and of softmax issued ~4x the instructions with a load per element. partial_mass and
// the draw's walk take this order for it (their overloads below); logits weigh 2^(x log2e - max log2e).
template <class T>
struct SliceView : RowView<T> {
  static constexpr int kPer = 16 / static_cast<int>(sizeof(T));
  // f(i0, e, whole) for each of this thread's vectors, in order, until f returns true: e holds the
  // elements i0 .. i0 + kPer - 1 of the slice (only those in [0, n) are real; whole: all of them).
  template <class F>
  __device__ __forceinline__ bool for_each_vector(F&& f) const {
    const int shift = static_cast<int>((reinterpret_cast<uintptr_t>(this->x) % 16) / sizeof(T));
    const uint4* base = reinterpret_cast<const uint4*>(this->x - shift);
    const int vectors = (shift + this->n + kPer - 1) / kPer;
    for (int v = static_cast<int>(threadIdx.x); v < vectors; v += static_cast<int>(blockDim.x)) {
      const uint4 raw = base[v];
      T e[kPer];
      memcpy(e, &raw, sizeof(raw));
      const int i0 = v * kPer - shift;
      if (f(i0, e, i0 >= 0 && i0 + kPer <= this->n)) return true;
    }
    return false;
  }
  // f(i, value) for each of this thread's elements, in order, until f returns true.
  template <class F>
  __device__ __forceinline__ bool for_each(F&& f) const {
    return for_each_vector([&](int i0, const T* e, bool whole) {
      if (whole) {
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
          if (f(i0 + j, e[j])) return true;
        }
      } else {
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
          if (i0 + j >= 0 && i0 + j < this->n && f(i0 + j, e[j])) return true;
        }
      }
      return false;
    });
  }
  template <bool kLogits>
  __device__ __forceinline__ float weight_of(T e, float scaled_max) const {
    const float f = Elem<T>::to_float(e);
    if constexpr (kLogits) {
      return ex2(fmaf(f, kLog2e, -scaled_max));
    } else {
      return f;
    }
  }
};

// The candidates of the two-pass sampler (a list in shared memory) as a row.
template <class T>
struct ListView {
  const ListEntry* list;
  int n;
  bool from_logits;
  float max_logit;
  __device__ uint32_t key(int i) const { return list[i].key; }
  __device__ float value(int i) const { return Elem<T>::to_float(Elem<T>::from_key(list[i].key)); }
  __device__ float weight(int i) const { return from_logits ? __expf(value(i) - max_logit) : value(i); }
  __device__ int64_t index(int i) const { return list[i].index; }
};

// The draw's weights for chain speculative sampling: max(q - p, 0), or q for the bonus token.
struct ResidualView {
  const float* q;
  const float* p;  // nullptr: the bonus token
  int n;
  int64_t begin;
  __device__ uint32_t key(int) const { return 0; }
  __device__ float weight(int i) const { return p == nullptr ? q[i] : fmaxf(q[i] - p[i], 0.0f); }
  __device__ int64_t index(int i) const { return begin + i; }
};

// The sum of this thread's positive weights over the elements with key >= lo, in its order (the
// walk of draw() repeats it element by element).
template <class View>
__device__ __forceinline__ float partial_mass(const View& v, uint32_t lo) {
  float acc = 0.0f;
  for (int i = threadIdx.x; i < v.n; i += blockDim.x) {
    if (v.key(i) < lo) continue;
    const float w = v.weight(i);
    if (w > 0.0f) acc += w;
  }
  return acc;
}
template <bool kLogits, class T>
__device__ __forceinline__ float slice_partial_mass(const SliceView<T>& v, uint32_t lo) {
  const float scaled_max = v.max_logit * kLog2e;
  float acc = 0.0f;
  v.for_each([&](int, T e) {
    const float w = v.template weight_of<kLogits>(e, scaled_max);
    if (Elem<T>::key(e) >= lo && w > 0.0f) acc += w;
    return false;
  });
  return acc;
}
template <class T>
__device__ __forceinline__ float partial_mass(const SliceView<T>& v, uint32_t lo) {
  return v.from_logits ? slice_partial_mass<true>(v, lo) : slice_partial_mass<false>(v, lo);
}

// The owner's walk of draw(): the first of this thread's elements (key >= lo, positive weight, in
// partial_mass's order) where the running sum passes `local`, else the last of them (float rounding
// can leave `local` past the walk's sum); -1 if it has none.
template <class View>
__device__ int walk(const View& v, uint32_t lo, float local) {
  float acc = 0.0f;
  int last = -1;
  for (int i = threadIdx.x; i < v.n; i += blockDim.x) {
    if (v.key(i) < lo) continue;
    const float w = v.weight(i);
    if (!(w > 0.0f)) continue;
    acc += w;
    last = i;
    if (acc > local) return i;
  }
  return last;
}
template <bool kLogits, class T>
__device__ int slice_walk(const SliceView<T>& v, uint32_t lo, float local) {
  const float scaled_max = v.max_logit * kLog2e;
  float acc = 0.0f;
  int last = -1;
  v.for_each([&](int i, T e) {
    const float w = v.template weight_of<kLogits>(e, scaled_max);
    if (Elem<T>::key(e) < lo || !(w > 0.0f)) return false;
    acc += w;
    last = i;
    return acc > local;
  });
  return last;
}
template <class T>
__device__ int walk(const SliceView<T>& v, uint32_t lo, float local) {
  return v.from_logits ? slice_walk<true>(v, lo, local) : slice_walk<false>(v, lo, local);
}

struct Draw {
  Pick pick;    // the same in every CTA; invalid when the kept set has no mass
  float total;  // the kept mass the draw was taken from
};

// One inverse-CDF draw from the elements with key >= lo, in proportion to their weights, with the
// uniform u. `partial` is this thread's partial_mass(v, lo). The threads' intervals
// [rank prefix + thread prefix, + own mass) tile [0, total) exactly (Scan: a thread's incl is bit for
// bit the next one's excl; the rank fold likewise), so exactly one thread owns u * total; it walks
// its elements to the one whose running sum passes the target (float rounding can leave the target
// past the walk's sum: then its last positive element).
template <class View>
__device__ Draw draw(const View& v, uint32_t lo, float partial, float u, Shared& sh, Cluster& cluster) {
  // The block's pick, gathered in shared memory: the owner is any thread of one CTA, and
  // Cluster::agree exchanges thread 0's value only. Cleared here, before the barriers of the scans
  // below; a CTA holds at most one owner (the intervals are disjoint), so one write, no race.
  Pick* block_pick = reinterpret_cast<Pick*>(sh.words[0]);
  if (threadIdx.x == 0) *block_pick = Pick{};
  const Scan<float> s = block_scan(partial, sh.f32);
  const RankScan<float> r = cluster.scan(s.total, 0.0f, Plus{}, sh);
  Pick mine;
  if (r.total > 0.0f) {
    float target = u * r.total;
    if (!(target < r.total)) target = nextafterf(r.total, 0.0f);
    const float lower = r.excl + s.excl;
    const float upper = r.excl + s.incl;
    if (lower <= target && target < upper) {
      const int chosen = walk(v, lo, target - lower);
      if (chosen >= 0) mine = {v.key(chosen), static_cast<int32_t>(v.index(chosen)), 1u};
    }
  }
  if (mine.valid) *block_pick = mine;
  __syncthreads();
  return {cluster.agree(*block_pick, sh), r.total};
}

// Sources of radix_select.
struct OneItemSource {  // one key per thread (its maximum)
  static constexpr bool kCounts = true;
  static constexpr int kBatch = 1;
  bool valid;
  uint32_t key;
  __device__ int rounds() const { return 1; }
  __device__ Item item(int) const { return {valid, key, 1ull}; }
};
template <int kLoads = 1>
struct ListSource {  // the candidate list (in global memory: kLoads in flight)
  static constexpr bool kCounts = true;
  static constexpr int kBatch = kLoads;
  const ListEntry* list;
  int len;
  __device__ int rounds() const { return (len + static_cast<int>(blockDim.x) - 1) / static_cast<int>(blockDim.x); }
  __device__ Item item(int r) const {
    const int i = r * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x);
    return i < len ? Item{true, list[i].key, 1ull} : Item{false, 0u, 0ull};
  }
};
template <class T, bool kMass, int kLoads = 1>
struct SliceSource {  // this CTA's slice, or a row in global memory (kLoads in flight); weights 1 or
                     // fixed-point masses (value * scale)
  static constexpr bool kCounts = !kMass;
  static constexpr int kBatch = kLoads;
  const T* x;
  int n;
  float scale;
  __device__ int rounds() const { return (n + static_cast<int>(blockDim.x) - 1) / static_cast<int>(blockDim.x); }
  __device__ Item item(int r) const {
    const int i = r * static_cast<int>(blockDim.x) + static_cast<int>(threadIdx.x);
    if (i >= n) return {false, 0u, 0ull};
    unsigned long long w = 1ull;
    if constexpr (kMass) {
      const float m = Elem<T>::to_float(x[i]) * scale;
      w = m > 0.0f ? static_cast<unsigned long long>(m) : 0ull;
    }
    return {true, Elem<T>::key(x[i]), w};
  }
};

template <class T>
__device__ __forceinline__ uint32_t thread_max_key(const T* x, int n) {
  uint32_t m = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const uint32_t k = Elem<T>::key(x[i]);
    m = k > m ? k : m;
  }
  return m;
}

struct TopKSelection {
  uint32_t tau = 0;               // key of the k-th largest
  unsigned long long above = 0;   // elements of the row with a larger key (< k)
  int list_len = 0;
  bool listed = false;            // every element >= tau is in the list (the same in every CTA)
};

// The k-th largest of the row (1 <= k < the row's length). Fast path: a lower bound from the
// threads' maxima (the k-th largest of them: k of them, hence k elements, are at least that), cut to
// its top 24 bits (3 of 4 digits: the bound only has to be low and close), then every element at or
// above it into the list of every CTA (positions by scans: the list's order is the same on every
// call) and the exact k-th largest of the list. The list holds the whole tail when it fits.
template <class T>
__device__ TopKSelection select_top_k(const T* x, int n, int64_t begin, int64_t k, ListEntry* list, int capacity,
                                      Shared& sh, Cluster& cluster) {
  constexpr int kKeyBits = Elem<T>::kKeyBits;
  const auto target_k = [k](unsigned long long) { return static_cast<unsigned long long>(k); };
  TopKSelection out;
  if (capacity > 0 && k <= static_cast<int64_t>(blockDim.x)) {
    const uint32_t thread_max = thread_max_key(x, n);
    const Selected bound = radix_select<kKeyBits, Scope::cluster>(
        OneItemSource{static_cast<int>(threadIdx.x) < n, thread_max}, target_k, sh, cluster,
        kKeyBits == 32 ? 3 : 2);
    const uint32_t lo = bound.found ? bound.key : 0u;
    uint32_t count = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) count += Elem<T>::key(x[i]) >= lo ? 1u : 0u;
    const Scan<uint32_t> local = block_scan(count, sh.u32);
    const RankScan<uint32_t> ranks = cluster.scan(local.total, 0u, Plus{}, sh);
    if (ranks.total <= static_cast<uint32_t>(capacity)) {
      uint32_t pos = ranks.excl + local.excl;
      for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const uint32_t key = Elem<T>::key(x[i]);
        if (key < lo) continue;
        const ListEntry e{key, static_cast<int32_t>(begin + i)};
        for (unsigned r = 0; r < cluster.size; ++r) Cluster::remote(list, r)[pos] = e;
        ++pos;
      }
      cluster.sync();
      const Selected exact = radix_select<kKeyBits, Scope::block>(ListSource<>{list, static_cast<int>(ranks.total)},
                                                                  target_k, sh, cluster, kKeyBits / 8);
      out.tau = exact.key;
      out.above = exact.above;
      out.list_len = static_cast<int>(ranks.total);
      out.listed = true;
      return out;
    }
  }
  const Selected exact = radix_select<kKeyBits, Scope::cluster>(SliceSource<T, false>{x, n, 0.0f}, target_k, sh,
                                                                cluster, kKeyBits / 8);
  out.tau = exact.key;
  out.above = exact.above;
  return out;
}

__device__ __forceinline__ int64_t slice_length(int64_t cols, int64_t slice, unsigned rank) {
  const int64_t begin = static_cast<int64_t>(rank) * slice;
  const int64_t rest = cols - begin;
  return rest <= 0 ? 0 : (rest < slice ? rest : slice);
}

#endif  // KBENCH_SAMPLING_SM90

// ---------------------------------------------------------------------------------------------
// The kernels.

#if defined(KBENCH_SAMPLING_SM90)
// The draw from the kept set {key >= lo} of `view` with the top-p filter of `a`: rejection rounds
// (one without top-p): draw; accept when the mass strictly above the drawn token is below top_p
// times the reference mass (`row_mass`, or the kept set's when negative), else keep only what is
// above it.
template <class View>
__device__ Pick draw_kept(const View& view, uint32_t lo, const SamplerArgs& a, int64_t row, float row_mass, Shared& sh,
                          Cluster& cluster) {
  const bool top_p = a.top_p < 1.0f;
  float partial = partial_mass(view, lo);
  float reference_mass = 0.0f;
  Pick pick;
  for (uint32_t round = 0;; ++round) {
    const Draw d = draw(view, lo, partial, philox_uniform(a.rng, row, round), sh, cluster);
    pick = d.pick;
    if (round == 0) reference_mass = row_mass >= 0.0f ? row_mass : d.total;
    if (!top_p || !pick.valid) break;
    partial = partial_mass(view, pick.key + 1);
    const float above = cluster.all_reduce(block_reduce(partial, Plus{}, sh.f32), 0.0f, Plus{}, sh);
    if (above < a.top_p * reference_mass) break;
    lo = pick.key + 1;
  }
  return pick;
}
#endif

template <class T>
__global__ void __launch_bounds__(kMaxThreads, kCtasPerSm) sampler_kernel(SamplerArgs a) {
#if defined(KBENCH_SAMPLING_SM90)
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ Shared sh;
  Cluster cluster = Cluster::here();
  const int64_t row = blockIdx.x / cluster.size;
  const int64_t begin = static_cast<int64_t>(cluster.rank) * a.slice;
  const int n = static_cast<int>(slice_length(a.cols, a.slice, cluster.rank));
  const T* x = load_slice(static_cast<const T*>(a.input) + row * a.cols + begin, n, reinterpret_cast<T*>(dyn));
  auto* list = reinterpret_cast<ListEntry*>(dyn + buffer_bytes(a.slice, sizeof(T)));
  SliceView<T> view{{x, n, begin, a.from_logits, 0.0f}};

  const bool top_k = a.top_k > 0 && a.top_k < a.cols;
  const bool top_p = a.top_p < 1.0f;
  const bool min_p = a.min_p > 0.0f && !a.from_logits;
  const bool whole_row_mass = top_p && top_k && a.joint;  // top-p measured against the whole row
  if (a.from_logits || min_p) {
    const uint32_t row_max = cluster.all_reduce(block_reduce(thread_max_key(x, n), Max{}, sh.u32), 0u, Max{}, sh);
    view.max_logit = Elem<T>::to_float(Elem<T>::from_key(row_max));
  }
  uint32_t lo = 0;  // the kept set: keys >= lo
  if (top_k) lo = select_top_k(x, n, begin, a.top_k, list, a.list_capacity, sh, cluster).tau;
  if (min_p) {
    const uint32_t floor_key = Elem<float>::key(a.min_p * view.max_logit);  // max_logit holds the largest probability
    lo = lo > floor_key ? lo : floor_key;
  }
  float row_mass = 0.0f;
  if (whole_row_mass) row_mass = cluster.all_reduce(block_reduce(partial_mass(view, 0u), Plus{}, sh.f32), 0.0f, Plus{}, sh);
  const Pick pick = draw_kept(view, lo, a, row, whole_row_mass ? row_mass : -1.0f, sh, cluster);
  if (cluster.rank == 0 && threadIdx.x == 0) a.output[row] = pick.valid ? pick.index : 0;
  cluster.finish();
#endif
}

#if defined(KBENCH_SAMPLING_SM90)
// Softmax, in base 2: y = x * inv_temperature * log2(e). This CTA's part of one row (the row's
// elements begin .. begin + n - 1, at `src`) in a shared-memory buffer. Each thread touches only its
// own 16-byte vectors of the part's aligned span (t, t + blockDim.x, ...; lanes outside the part
// hold -inf), from the copy to the stores, so no block barrier orders the passes: its copies, its
// max, its sum of 2^(y - max); the (max, sum) pairs are then combined over the block and the cluster
// in a fixed order, and one pass writes 2^(y - max) / sum, 16 bytes a store. Against the generic
// slice view's passes: 8% fewer instructions, 3% faster (session 31). What still separates it from a
// copy is the exchange, each CTA waiting for its cluster's slowest (without it: copy speed;
// experiments/session31/README.md).
struct MaxSum {
  float m;
  float s;
};
__device__ __forceinline__ MaxSum combine_max_sum(MaxSum p, MaxSum q) {
  if (p.m == -INFINITY) return q;
  if (q.m == -INFINITY) return p;
  const float m = fmaxf(p.m, q.m);
  return MaxSum{m, p.s * ex2(p.m - m) + q.s * ex2(q.m - m)};
}

template <class T>
struct SoftmaxPart {
  static constexpr int kPer = 16 / static_cast<int>(sizeof(T));
  const T* src;
  int n;
  int shift;    // src's offset in elements from the 16-byte boundary below it
  int vectors;  // of the aligned span: vector v holds the part's elements v * kPer - shift + 0 .. kPer - 1
  uint4* vec;

  __device__ SoftmaxPart(const T* part, int length, T* buffer)
      : src(part),
        n(length),
        shift(static_cast<int>((reinterpret_cast<uintptr_t>(part) % 16) / sizeof(T))),
        vectors((shift + length + kPer - 1) / kPer),
        vec(reinterpret_cast<uint4*>(buffer)) {}
  __device__ bool whole(int v) const { return v * kPer - shift >= 0 && v * kPer - shift + kPer <= n; }
  __device__ void elements(int v, T (&e)[kPer]) const {
    const uint4 raw = vec[v];
    memcpy(e, &raw, sizeof(raw));
  }
  // Issues this thread's copies (the caller commits and waits).
  __device__ void copy() const {
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(vec));
    for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
      if (whole(v)) {
        sm80::cp_async16<0>(base + static_cast<uint32_t>(v) * 16u, src - shift + v * kPer);
      } else {
        T e[kPer];
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
          const int i = v * kPer - shift + j;
          e[j] = i >= 0 && i < n ? src[i] : Elem<T>::from_float(-INFINITY);
        }
        memcpy(&vec[v], e, sizeof(e));
      }
    }
  }
  // This thread's (max y, sum of 2^(y - max)); c > 0, so max(x) * c is max(x * c).
  __device__ MaxSum stats(float c) const {
    float x_max = -INFINITY;
#pragma unroll 4
    for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
      T e[kPer];
      elements(v, e);
#pragma unroll
      for (int j = 0; j < kPer; ++j) x_max = fmaxf(x_max, Elem<T>::to_float(e[j]));
    }
    MaxSum mine{x_max * c, 0.0f};
    if (mine.m == -INFINITY) return mine;
#pragma unroll 4
    for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
      T e[kPer];
      elements(v, e);
#pragma unroll
      for (int j = 0; j < kPer; ++j) mine.s += ex2(fmaf(Elem<T>::to_float(e[j]), c, -mine.m));
    }
    return mine;
  }
  // out: the part's first output. Vector v's outputs start 16-byte aligned where `aligned` (both
  // tensors 16-byte aligned: the input's vectors are).
  __device__ void write(float* out, MaxSum all, float c, bool aligned) const {
    const float inv_sum = 1.0f / all.s;
#pragma unroll 2
    for (int v = threadIdx.x; v < vectors; v += blockDim.x) {
      T e[kPer];
      elements(v, e);
      float y[kPer];
#pragma unroll
      for (int j = 0; j < kPer; ++j) y[j] = ex2(fmaf(Elem<T>::to_float(e[j]), c, -all.m)) * inv_sum;
      const int i0 = v * kPer - shift;
      if (aligned && whole(v)) {
#pragma unroll
        for (int q = 0; q < kPer / 4; ++q) {
          __stcs(reinterpret_cast<float4*>(out + i0) + q, make_float4(y[4 * q], y[4 * q + 1], y[4 * q + 2], y[4 * q + 3]));
        }
      } else {
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
          if (i0 + j >= 0 && i0 + j < n) out[i0 + j] = y[j];
        }
      }
    }
  }
};

// The softmax of this CTA's part of row `row`.
template <class T>
__device__ __forceinline__ void softmax_row(const FilterArgs& a, int64_t row, int64_t begin, int n, T* buffer,
                                            Shared& sh, Cluster& cluster) {
  const SoftmaxPart<T> part(static_cast<const T*>(a.input) + row * a.cols + begin, n, buffer);
  part.copy();
  sm80::cp_async_commit();
  sm80::cp_async_wait<0>();  // this thread's own copies: all its passes read
  pdl_launch_dependents();
  const float c = a.inv_temperature * kLog2e;
  const MaxSum block = block_reduce(part.stats(c), combine_max_sum, reinterpret_cast<MaxSum*>(sh.words));
  const MaxSum all = cluster.all_reduce(block, MaxSum{-INFINITY, 0.0f}, combine_max_sum, sh);
  const bool aligned = (reinterpret_cast<uintptr_t>(a.input) | reinterpret_cast<uintptr_t>(a.output)) % 16 == 0;
  part.write(static_cast<float*>(a.output) + row * a.cols + begin, all, c, aligned);
}
#endif

template <class T>
__global__ void __launch_bounds__(kMaxThreads, kCtasPerSm) filter_kernel(FilterArgs a) {
#if defined(KBENCH_SAMPLING_SM90)
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ Shared sh;
  if (a.op == sampling::FilterOp::softmax) pdl_wait();
  Cluster cluster = Cluster::here();
  const int64_t row = blockIdx.x / cluster.size;
  const int64_t begin = static_cast<int64_t>(cluster.rank) * a.slice;
  const int n = static_cast<int>(slice_length(a.cols, a.slice, cluster.rank));
  if (a.op == sampling::FilterOp::softmax) {
    softmax_row(a, row, begin, n, reinterpret_cast<T*>(dyn), sh, cluster);
    cluster.finish();
    return;
  }
  const T* x = load_slice(static_cast<const T*>(a.input) + row * a.cols + begin, n, reinterpret_cast<T*>(dyn));
  auto* list = reinterpret_cast<ListEntry*>(dyn + buffer_bytes(a.slice, sizeof(T)));

  switch (a.op) {
    case sampling::FilterOp::softmax:  // returned above
      break;
    case sampling::FilterOp::top_k_mask:
    case sampling::FilterOp::top_k_renorm: {
      const TopKSelection sel = select_top_k(x, n, begin, a.top_k, list, a.list_capacity, sh, cluster);
      T* out = static_cast<T*>(a.output) + row * a.cols + begin;
      if (a.op == sampling::FilterOp::top_k_mask) {
        const T masked = Elem<T>::from_float(-INFINITY);
        for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = Elem<T>::key(x[i]) >= sel.tau ? x[i] : masked;
        break;
      }
      float kept = 0.0f;
      if (sel.listed) {  // every CTA holds the same list: the same sum, no exchange
        for (int i = threadIdx.x; i < sel.list_len; i += blockDim.x) {
          if (list[i].key >= sel.tau) kept += Elem<T>::to_float(Elem<T>::from_key(list[i].key));
        }
        kept = block_reduce(kept, Plus{}, sh.f32);
      } else {
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
          if (Elem<T>::key(x[i]) >= sel.tau) kept += Elem<T>::to_float(x[i]);
        }
        kept = cluster.all_reduce(block_reduce(kept, Plus{}, sh.f32), 0.0f, Plus{}, sh);
      }
      const float inv_kept = 1.0f / kept;
      const T zero = Elem<T>::from_float(0.0f);
      for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[i] = Elem<T>::key(x[i]) >= sel.tau ? Elem<T>::from_float(Elem<T>::to_float(x[i]) * inv_kept) : zero;
      }
      break;
    }
    case sampling::FilterOp::top_p_renorm: {
      // Fixed-point masses (the row's total scaled to 2^40): the pivot is exact and the same on every
      // call, whatever order the histograms were summed in.
      float total = 0.0f;
      for (int i = threadIdx.x; i < n; i += blockDim.x) total += Elem<T>::to_float(x[i]);
      total = cluster.all_reduce(block_reduce(total, Plus{}, sh.f32), 0.0f, Plus{}, sh);
      const float scale = total > 0.0f ? 0x1p40f / total : 0.0f;
      const float top_p = a.top_p;
      const Selected pivot = radix_select<Elem<T>::kKeyBits, Scope::cluster>(
          SliceSource<T, true>{x, n, scale},
          [top_p](unsigned long long all) {
            const double t = ceil(static_cast<double>(top_p) * static_cast<double>(all));
            return t < 1.0 ? 1ull : static_cast<unsigned long long>(t);
          },
          sh, cluster, Elem<T>::kKeyBits / 8);
      const uint32_t tau = pivot.found ? pivot.key : 0u;
      float kept = 0.0f;
      for (int i = threadIdx.x; i < n; i += blockDim.x) {
        if (Elem<T>::key(x[i]) >= tau) kept += Elem<T>::to_float(x[i]);
      }
      kept = cluster.all_reduce(block_reduce(kept, Plus{}, sh.f32), 0.0f, Plus{}, sh);
      const float inv_kept = kept > 0.0f ? 1.0f / kept : 0.0f;
      T* out = static_cast<T*>(a.output) + row * a.cols + begin;
      for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[i] = Elem<T>::from_float(Elem<T>::key(x[i]) >= tau ? Elem<T>::to_float(x[i]) * inv_kept : 0.0f);
      }
      break;
    }
  }
  cluster.finish();
#endif
}

#if defined(KBENCH_SAMPLING_SM90)
// Writes output position `pos` of row `row`: element `index` of the row (-1: padding) with value `v`.
template <class T>
__device__ __forceinline__ void emit(const TopKArgs& a, int64_t row, int64_t pos, int64_t index, T v) {
  const int64_t at = row * a.k + pos;
  switch (a.output) {
    case sampling::TopKOutput::values_indices:
      if (index >= 0) static_cast<T*>(a.values)[at] = v;
      a.indices[at] = index;
      break;
    case sampling::TopKOutput::page_table:
      a.mapped[at] = index < 0 ? -1 : a.page_table[row * a.page_table_stride + index];
      break;
    case sampling::TopKOutput::ragged:
      a.mapped[at] = index < 0 ? -1 : static_cast<int32_t>(index + a.offsets[row]);
      break;
  }
}

// The k kept elements of a list every thread of the block holds (sel from select_top_k or an exact
// radix select over it): everything above the k-th largest, then as many equal to it as fit, in
// list order; positions by scans, so the same on every call. place(pos, entry) writes one.
template <class Place>
__device__ void place_listed(const ListEntry* list, int len, const TopKSelection& sel, int64_t k, Shared& sh,
                             Place place) {
  uint32_t above_base = 0;
  uint32_t tie_base = 0;
  for (int base = 0; base < len; base += blockDim.x) {
    const int i = base + static_cast<int>(threadIdx.x);
    const uint32_t key = i < len ? list[i].key : 0u;
    const bool above = i < len && key > sel.tau;
    const bool tie = i < len && key == sel.tau;
    const Scan<uint32_t> sa = block_scan(above ? 1u : 0u, sh.u32);
    const Scan<uint32_t> st = block_scan(tie ? 1u : 0u, sh.u32);
    const uint64_t tie_pos = sel.above + tie_base + st.excl;
    if (above) place(static_cast<int64_t>(above_base + sa.excl), list[i]);
    if (tie && tie_pos < static_cast<uint64_t>(k)) place(static_cast<int64_t>(tie_pos), list[i]);
    above_base += sa.total;
    tie_base += st.total;
  }
}

// The same for the row's slices in the CTAs of a cluster (row order: ranks, then threads, then each
// thread's elements). Returns how many were placed: min(k, elements >= the k-th largest).
template <class T, class Place>
__device__ int64_t place_sliced(const T* x, int n, int64_t begin, const TopKSelection& sel, int64_t k, Shared& sh,
                                Cluster& cluster, Place place) {
  struct Counts {
    uint32_t above;
    uint32_t tie;
    __device__ Counts operator+(const Counts& o) const { return {above + o.above, tie + o.tie}; }
  };
  Counts mine{0u, 0u};
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const uint32_t key = Elem<T>::key(x[i]);
    mine.above += key > sel.tau ? 1u : 0u;
    mine.tie += key == sel.tau ? 1u : 0u;
  }
  const Scan<Counts> local = block_scan(mine, reinterpret_cast<Counts*>(sh.words));
  const RankScan<Counts> ranks = cluster.scan(local.total, Counts{0u, 0u}, Plus{}, sh);
  uint64_t above_pos = ranks.excl.above + local.excl.above;
  uint64_t tie_pos = sel.above + ranks.excl.tie + local.excl.tie;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const uint32_t key = Elem<T>::key(x[i]);
    if (key > sel.tau) {
      place(static_cast<int64_t>(above_pos++), ListEntry{key, static_cast<int32_t>(begin + i)});
    } else if (key == sel.tau && tie_pos < static_cast<uint64_t>(k)) {
      place(static_cast<int64_t>(tie_pos++), ListEntry{key, static_cast<int32_t>(begin + i)});
    }
  }
  const uint64_t all = sel.above + ranks.total.tie;
  return static_cast<int64_t>(all < static_cast<uint64_t>(k) ? all : static_cast<uint64_t>(k));
}
#endif

template <class T>
__global__ void __launch_bounds__(kMaxThreads, kTopKCtasPerSm) top_k_kernel(TopKArgs a) {
#if defined(KBENCH_SAMPLING_SM90)
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ Shared sh;
  Cluster cluster = Cluster::here();
  const int64_t row = blockIdx.x / cluster.size;
  int64_t length = a.cols;
  if (a.lengths != nullptr) {
    const int64_t l = a.lengths[row];
    length = l < 0 ? 0 : (l < a.cols ? l : a.cols);
  }
  const int64_t begin = static_cast<int64_t>(cluster.rank) * a.slice;
  const int n = static_cast<int>(slice_length(length, a.slice, cluster.rank));
  const T* x = load_slice(static_cast<const T*>(a.input) + row * a.cols + begin, n, reinterpret_cast<T*>(dyn));
  auto* list = reinterpret_cast<ListEntry*>(dyn + buffer_bytes(a.slice, sizeof(T)));
  const auto to_output = [&](int64_t pos, const ListEntry& e) { emit(a, row, pos, e.index, Elem<T>::from_key(e.key)); };

  if (length <= a.k) {  // everything, in order, then padding
    for (int i = threadIdx.x; i < n; i += blockDim.x) emit(a, row, begin + i, begin + i, x[i]);
    if (cluster.rank == 0) {
      for (int64_t j = length + threadIdx.x; j < a.k; j += blockDim.x) emit(a, row, j, -1, T{});
    }
  } else {
    const TopKSelection sel = select_top_k(x, n, begin, a.k, list, a.list_capacity, sh, cluster);
    if (sel.listed) {
      if (cluster.rank == 0) place_listed(list, sel.list_len, sel, a.k, sh, to_output);
    } else {
      place_sliced(x, n, begin, sel, a.k, sh, cluster, to_output);
    }
  }
  cluster.finish();
#endif
}

// The two-pass plans (top_k, and the top-k samplers, where the batch fills the GPU). The one-pass
// kernels' clusters spend their time in cluster barriers, and a per-chunk bound (session 11: the
// k-th largest of each chunk's thread maxima) costs a radix select per chunk and leaves ~1.4 k
// candidates per chunk. Here one threshold per row, estimated from a sample, filters every chunk:
//  1. estimate: a CTA per row takes a sample of the row and sets the row's threshold;
//  2. filter: a CTA per chunk of a row holds its chunk in registers (one read of the input, 16-byte
//     loads issued before it waits for the estimate) and writes the elements at or above the
//     threshold to a run of the row's pool it reserves with one atomic (chunks whose candidates
//     cluster need no room of their own), positions in the run by a block scan;
//  3. merge: a CTA per row gathers the runs in chunk order (the same list on every call, whatever
//     order the runs were reserved in) and selects (top_k) or draws (the samplers) from them. Every
//     element at or above the row's k-th largest is a candidate when at least k are; a row where
//     fewer are, or whose pool overflowed, is selected from the whole row in global memory
//     instead: exact, slow, and rare on rows that are not built against the sample.

// The sample (two_pass_sample.hpp): evenly spaced runs, so a row whose values drift along it still
// gives a fair sample.
using sampling::kSampleSegments;
using sampling::kSamplePerThread;
using sampling::kSampleSize;
using sampling::kSegmentThreads;
static_assert(sampling::kSampleThreads == kMaxThreads, "the estimate's CTA takes the sample");
// Elements a thread of the filter holds, in 16-byte vectors, whatever the type (64 16-bit ones
// spilled: their keys are unpacked), and the resident CTAs its 64 registers a thread allow.
inline constexpr int kFilterElements = 32;
inline constexpr int kFilterCtasPerSm = 2;
// Loads in flight per thread in the merges' whole-row selects (a row in global memory).
inline constexpr int kGlobalLoads = 8;
template <class T>
inline constexpr int kFilterVectors = kFilterElements * static_cast<int>(sizeof(T)) / 16;
// Elements of a chunk: all the vectors of a CTA less one (the chunk need not start aligned).
__host__ __device__ constexpr int64_t filter_slice(int elem_bytes) {
  return (static_cast<int64_t>(kFilterElements) * kMaxThreads * elem_bytes / 16 - 1) * (16 / elem_bytes);
}

#if defined(KBENCH_SAMPLING_SM90)
// Elements [begin, end) of a row (at most filter_slice) in the registers of a CTA of kMaxThreads:
// vector s of thread t holds the kPer elements from offset(s, 0) = lane0 + s * kMaxThreads * kPer
// (from begin; lane0 = t * kPer less begin's misalignment), 16-byte aligned, loaded by one
// streaming 16-byte load each; the partial vectors at both ends are read element by element
// (nothing outside [begin, end)) and their other lanes hold key 0.
template <class T>
struct RegisterChunk {
  static constexpr int kPer = 16 / static_cast<int>(sizeof(T));
  static constexpr int kVectors = kFilterVectors<T>;
  uint4 raw[kVectors];
  int64_t begin;
  int lane0;  // element offset from begin of this thread's first lane (negative in a partial head)
  int n;      // end - begin

  __device__ __forceinline__ RegisterChunk(const T* row, int64_t begin_, int64_t end_)
      : begin(begin_), n(static_cast<int>(end_ - begin_)) {
    lane0 = static_cast<int>(threadIdx.x) * kPer -
            static_cast<int>((reinterpret_cast<uintptr_t>(row + begin) % 16) / sizeof(T));
#pragma unroll
    for (int s = 0; s < kVectors; ++s) {
      const int e = offset(s, 0);
      if (whole(s)) {
        raw[s] = __ldcs(reinterpret_cast<const uint4*>(row + begin + e));
      } else {
        T* v = reinterpret_cast<T*>(&raw[s]);
#pragma unroll
        for (int j = 0; j < kPer; ++j) v[j] = e + j >= 0 && e + j < n ? row[begin + e + j] : Elem<T>::from_key(0u);
      }
    }
  }
  // Element (s, j)'s offset from begin, and its index in the row.
  __device__ __forceinline__ int offset(int s, int j) const { return lane0 + s * kMaxThreads * kPer + j; }
  __device__ __forceinline__ int64_t index(int s, int j) const { return begin + offset(s, j); }
  __device__ __forceinline__ bool whole(int s) const { return offset(s, 0) >= 0 && offset(s, 0) + kPer <= n; }
  __device__ __forceinline__ bool in(int s, int j) const { return offset(s, j) >= 0 && offset(s, j) < n; }
  __device__ __forceinline__ T value(int s, int j) const { return reinterpret_cast<const T*>(&raw[s])[j]; }
  __device__ __forceinline__ uint32_t key(int s, int j) const { return Elem<T>::key(value(s, j)); }
};
#endif

template <class T>
__global__ void __launch_bounds__(kMaxThreads, 2) top_k_estimate_kernel(TopKArgs a) {
#if defined(KBENCH_SAMPLING_SM90)
  __shared__ Shared sh;
  pdl_launch_dependents();  // the filter's loads do not depend on this grid
  Cluster cluster = Cluster::here();  // one CTA
  constexpr int kKeyBits = Elem<T>::kKeyBits;
  const int64_t row = blockIdx.x;
  const T* x = static_cast<const T*>(a.input) + row * a.cols;
  const int64_t begin = static_cast<int64_t>(threadIdx.x / kSegmentThreads) * a.cols / kSampleSegments +
                        static_cast<int64_t>(threadIdx.x % kSegmentThreads);
  uint32_t thread_max = 0;
#pragma unroll
  for (int i = 0; i < kSamplePerThread; ++i) thread_max = max(thread_max, Elem<T>::key(x[begin + i * kSegmentThreads]));
  // The rank-th largest of the threads' maxima (cut to 24 bits: lower, so still a lower bound):
  // rank of them, hence rank sample elements, are at least that.
  const Selected bound = radix_select<kKeyBits, Scope::block>(
      OneItemSource{true, thread_max}, [r = a.sample_rank](unsigned long long) { return static_cast<unsigned long long>(r); },
      sh, cluster, kKeyBits == 32 ? 3 : 2);
  // Key 0 is nobody's (the filter's padding): the threshold is at least 1.
  if (threadIdx.x == 0) {
    a.thresholds[row] = bound.found && bound.key > 0u ? bound.key : 1u;
    a.cursors[row] = 0u;
    if (row == 0) *a.pool.ordered_claimed = 0u;
  }
  cluster.finish();
#endif
}

template <class T>
__global__ void __launch_bounds__(kMaxThreads, kFilterCtasPerSm) top_k_filter_kernel(TopKArgs a) {
#if defined(KBENCH_SAMPLING_SM90)
  __shared__ uint32_t scratch[kMaxWarps];
  __shared__ uint32_t run_begin;
  const CandidatePool& pool = a.pool;
  const int64_t row = blockIdx.x / pool.chunks;
  const int chunk = static_cast<int>(blockIdx.x - row * pool.chunks);
  const int64_t begin = static_cast<int64_t>(chunk) * a.slice;
  const RegisterChunk<T> c(static_cast<const T*>(a.input) + row * a.cols, begin,
                           begin + a.slice < a.cols ? begin + a.slice : a.cols);
  pdl_wait();  // the estimate's threshold
  const uint32_t lo = a.thresholds[row];  // >= 1: the padding's key 0 never counts
  uint32_t count = 0;
#pragma unroll
  for (int s = 0; s < c.kVectors; ++s) {
#pragma unroll
    for (int j = 0; j < c.kPer; ++j) count += c.key(s, j) >= lo ? 1u : 0u;
  }
  const Scan<uint32_t> local = block_scan(count, scratch);
  if (threadIdx.x == 0) {
    const uint32_t begin_run = local.total > 0 ? atomicAdd(a.cursors + row, local.total) : 0u;
    const bool fits = static_cast<uint64_t>(begin_run) + local.total <= static_cast<uint64_t>(pool.capacity);
    pool.chunk_offsets[row * pool.chunks + chunk] = static_cast<int32_t>(begin_run);
    pool.chunk_counts[row * pool.chunks + chunk] = fits ? static_cast<int32_t>(local.total) : -1;
    run_begin = fits ? begin_run : static_cast<uint32_t>(pool.capacity);
  }
  __syncthreads();
  if (count > 0 && run_begin < static_cast<uint32_t>(pool.capacity)) {
    ListEntry* out = pool.entries + row * static_cast<int64_t>(pool.capacity) + run_begin;
    uint32_t pos = local.excl;
#pragma unroll
    for (int s = 0; s < c.kVectors; ++s) {
#pragma unroll
      for (int j = 0; j < c.kPer; ++j) {
        if (c.key(s, j) >= lo) out[pos++] = ListEntry{c.key(s, j), static_cast<int32_t>(c.index(s, j))};
      }
    }
  }
#endif
}

#if defined(KBENCH_SAMPLING_SM90)
// The merge's candidates: row `row`'s runs gathered in chunk order (the same list on every call)
// into `shared` (room for `room`) or, longer, into a claimed row of the pool's `ordered`. len -1:
// the pool overflowed or no ordered row was left. `offsets` and `runs_at` hold kMaxChunks + 1
// ints of shared memory: the list position and the pool position of each chunk's run.
struct Gathered {
  const ListEntry* list;
  int len;
};
__device__ __forceinline__ Gathered gather_candidates(const CandidatePool& pool, int64_t row, ListEntry* shared,
                                                      int room, int32_t* offsets, int32_t* runs_at) {
  if (warp_id() == 0) {  // a chunk per lane: the counts' latencies overlap
    int32_t total = 0;
    bool complete = true;
    for (int base = 0; base < pool.chunks; base += 32) {
      const int c = base + lane_id();
      const int32_t count = c < pool.chunks ? pool.chunk_counts[row * pool.chunks + c] : 0;
      complete = __all_sync(0xFFFFFFFFu, count >= 0) && complete;
      int32_t incl = count > 0 ? count : 0;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const int32_t y = __shfl_up_sync(0xFFFFFFFFu, incl, o);
        if (lane_id() >= o) incl += y;
      }
      if (c < pool.chunks) {
        offsets[c] = total + incl - (count > 0 ? count : 0);
        runs_at[c] = pool.chunk_offsets[row * pool.chunks + c];
      }
      total += __shfl_sync(0xFFFFFFFFu, incl, 31);
    }
    if (lane_id() == 0) {
      int32_t len = complete ? total : -1;
      runs_at[pool.chunks] = -1;  // the list in shared memory
      if (len > room) {
        const uint32_t slot = atomicAdd(pool.ordered_claimed, 1u);
        if (slot < static_cast<uint32_t>(pool.ordered_rows)) {
          runs_at[pool.chunks] = static_cast<int32_t>(slot);
        } else {
          len = -1;
        }
      }
      offsets[pool.chunks] = len;
    }
  }
  __syncthreads();
  const int len = offsets[pool.chunks];
  if (len < 0) return {nullptr, -1};
  const int slot = runs_at[pool.chunks];
  ListEntry* list = slot < 0 ? shared : pool.ordered + slot * static_cast<int64_t>(pool.capacity);
  const ListEntry* entries = pool.entries + row * static_cast<int64_t>(pool.capacity);
  for (int j = threadIdx.x; j < len; j += blockDim.x) {
    int lo = 0;  // the chunk holding list position j: the last with offsets[c] <= j
    int hi = pool.chunks - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (offsets[mid] <= j) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    list[j] = entries[runs_at[lo] + (j - offsets[lo])];
  }
  __syncthreads();
  return {list, len};
}
#endif

#if defined(KBENCH_SAMPLING_SM90)
// A gathered list longer than the merge's shared memory (in global memory: every pass over it
// waits on loads), cut to its entries at or above a lower bound of its k-th largest (the k-th
// largest of the threads' maxima, as select_top_k's fast path) in `shared` when they fit there:
// every entry at or above the k-th largest stays, in a fixed order (threads, then each thread's).
template <int kKeyBits>
__device__ Gathered narrow_candidates(Gathered g, int64_t k, ListEntry* shared, int room, Shared& sh,
                                      Cluster& cluster) {
  if (g.len <= room || k > static_cast<int64_t>(blockDim.x)) return g;
  uint32_t thread_max = 0;
  for (int i = threadIdx.x; i < g.len; i += blockDim.x) thread_max = max(thread_max, g.list[i].key);
  const Selected bound = radix_select<kKeyBits, Scope::block>(
      OneItemSource{true, thread_max}, [k](unsigned long long) { return static_cast<unsigned long long>(k); }, sh,
      cluster, kKeyBits == 32 ? 3 : 2);
  const uint32_t lo = bound.found ? bound.key : 0u;
  uint32_t count = 0;
  for (int i = threadIdx.x; i < g.len; i += blockDim.x) count += g.list[i].key >= lo ? 1u : 0u;
  const Scan<uint32_t> at = block_scan(count, sh.u32);
  if (at.total > static_cast<uint32_t>(room)) return g;
  uint32_t pos = at.excl;
  for (int i = threadIdx.x; i < g.len; i += blockDim.x) {
    if (g.list[i].key >= lo) shared[pos++] = g.list[i];
  }
  __syncthreads();
  return {shared, static_cast<int>(at.total)};
}
#endif

#if defined(KBENCH_SAMPLING_SM90)
// The merges' list: row `row`'s candidates gathered, then narrowed for k, in `shared` (room for
// `room`) or, longer, in a claimed ordered row.
template <int kKeyBits>
__device__ __forceinline__ Gathered merge_list(const CandidatePool& pool, int64_t row, int64_t k, ListEntry* shared,
                                               int room, Shared& sh, Cluster& cluster) {
  __shared__ int32_t offsets[kMaxChunks + 1];
  __shared__ int32_t runs_at[kMaxChunks + 1];
  return narrow_candidates<kKeyBits>(gather_candidates(pool, row, shared, room, offsets, runs_at), k, shared, room, sh,
                                     cluster);
}
#endif

// The merge of top_k: the exact top k of the candidates, or of the whole row where they are not
// all (see above).
template <class T>
__global__ void __launch_bounds__(kMaxThreads, 1) top_k_merge_kernel(TopKArgs a) {
#if defined(KBENCH_SAMPLING_SM90)
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ Shared sh;
  Cluster cluster = Cluster::here();  // one CTA
  constexpr int kKeyBits = Elem<T>::kKeyBits;
  const int64_t row = blockIdx.x;
  const auto [list, len] =
      merge_list<kKeyBits>(a.pool, row, a.k, reinterpret_cast<ListEntry*>(dyn), a.list_capacity, sh, cluster);
  const auto target_k = [k = a.k](unsigned long long) { return static_cast<unsigned long long>(k); };
  const auto to_output = [&](int64_t pos, const ListEntry& e) { emit(a, row, pos, e.index, Elem<T>::from_key(e.key)); };
  if (len >= a.k) {
    const Selected exact =
        radix_select<kKeyBits, Scope::block>(ListSource<kGlobalLoads>{list, len}, target_k, sh, cluster, kKeyBits / 8);
    place_listed(list, len, TopKSelection{exact.key, exact.above, len, true}, a.k, sh, to_output);
  } else {
    const T* x = static_cast<const T*>(a.input) + row * a.cols;
    const int n = static_cast<int>(a.cols);
    const Selected exact = radix_select<kKeyBits, Scope::block>(SliceSource<T, false, kGlobalLoads>{x, n, 0.0f},
                                                                target_k, sh, cluster, kKeyBits / 8);
    place_sliced(x, n, 0, TopKSelection{exact.key, exact.above, 0, false}, a.k, sh, cluster, to_output);
  }
  cluster.finish();
#endif
}

// The merge of the two-pass samplers (top-k with or without top-p and min-p, top_k_first): the
// row's k-th largest among the candidates (every element at or above it is one), then the draw
// from the kept set there; from the whole row in global memory where the candidates are not all.
template <class T>
__global__ void __launch_bounds__(kMaxThreads, 1) sampler_merge_kernel(SamplerArgs a) {
#if defined(KBENCH_SAMPLING_SM90)
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ Shared sh;
  Cluster cluster = Cluster::here();  // one CTA
  constexpr int kKeyBits = Elem<T>::kKeyBits;
  const int64_t row = blockIdx.x;
  const auto [list, len] =
      merge_list<kKeyBits>(a.pool, row, a.top_k, reinterpret_cast<ListEntry*>(dyn), a.list_capacity, sh, cluster);
  const bool min_p = a.min_p > 0.0f && !a.from_logits;
  const auto target_k = [k = a.top_k](unsigned long long) { return static_cast<unsigned long long>(k); };
  const auto sample = [&](auto view, const auto& source) {
    uint32_t max_key = 0;
    for (int i = threadIdx.x; i < view.n; i += blockDim.x) max_key = max(max_key, view.key(i));
    view.max_logit = Elem<T>::to_float(Elem<T>::from_key(block_reduce(max_key, Max{}, sh.u32)));
    const Selected tau = radix_select<kKeyBits, Scope::block>(source, target_k, sh, cluster, kKeyBits / 8);
    uint32_t lo = tau.key;
    if (min_p) {
      const uint32_t floor_key = Elem<float>::key(a.min_p * view.max_logit);  // the largest probability
      lo = lo > floor_key ? lo : floor_key;
    }
    return draw_kept(view, lo, a, row, -1.0f, sh, cluster);
  };
  Pick pick;
  if (len >= a.top_k) {
    pick = sample(ListView<T>{list, len, a.from_logits, 0.0f}, ListSource<kGlobalLoads>{list, len});
  } else {
    const T* x = static_cast<const T*>(a.input) + row * a.cols;
    const int n = static_cast<int>(a.cols);
    pick = sample(RowView<T>{x, n, 0, a.from_logits, 0.0f}, SliceSource<T, false, kGlobalLoads>{x, n, 0.0f});
  }
  if (threadIdx.x == 0) a.output[row] = pick.valid ? pick.index : 0;
  cluster.finish();
#endif
}

}  // namespace kbench::kernels::sampling_detail
