// Session 22 experiment (issue 16, softmax 256 x 128256 fp32 >= 2.8 TB/s): persistent clusters whose
// CTAs keep a ring of row slices in shared memory and move them with TMA bulk copies in BOTH
// directions. Session 17's persistent ring (cp.async loads, st.global stores) measured 128 us: a
// CTA's row (passes, exchange, 64 KB of stores issued by its own threads) took ~8 us against ~6 us of
// DRAM time, and one CTA an SM hid nothing. Here the stores are a bulk copy the CTA issues and leaves
// (cp.async.bulk.global.shared), and a row's exchange is waited for only after the next row's first
// pass, so a CTA's threads do the two passes and nothing else while loads and stores stream.
//
// Cluster of C CTAs (one an SM), row r of cluster c for r = c, c + clusters, ...; CTA q owns the
// slice [q S, (q + 1) S) of each row. Ring of kSlots slices, filled and emptied by a producer warp.
// Compute iteration k: wait row k's slice, pass 1 (max and sum of 2^(y - max), y = x log2 e),
// publish (max, sum) into every CTA of the cluster (st.shared::cluster + a remote mbarrier arrive),
// then finish row k - 1: wait its exchange, pass 2 in place (2^(y - M) / S), hand the slice to the
// producer, which stores it and refills the slot with row k - 1 + kSlots.
//
// Prints, per variant, the median of 30 cold-L2 launches and TB/s by the reference's bytes
// (2 x rows x cols x 4), the copy of the same bytes in the same process, the largest relative error
// against a double softmax.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(x)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (x);                                                                        \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

constexpr float kLog2e = 1.4426950408889634f;
constexpr int kExchangeRing = 4;  // > kSlots - 1 + 1: a row's partials live until every CTA read them

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

struct MaxSum {
  float m, s;
};
__device__ __forceinline__ MaxSum combine(MaxSum p, MaxSum q) {
  const float m = fmaxf(p.m, q.m);
  if (m == -INFINITY) return {m, 0.0f};
  return {m, p.s * ex2(p.m - m) + q.s * ex2(q.m - m)};
}

__device__ __forceinline__ uint32_t smem(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n .reg .pred p;\n W: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}\n" ::"r"(
          smem(bar)),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_id_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t nclusters_x() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ uint32_t map_to(uint32_t addr, uint32_t cta) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta));
  return r;
}

__device__ __forceinline__ void compute_sync(int threads) {
  asm volatile("bar.sync 1, %0;" ::"r"(threads) : "memory");
}

// kThreads compute threads (the passes) and one producer warp (its lane 0 moves every slice: bulk
// loads as slots free up, bulk stores once the compute threads have written a row's slice; it alone
// waits for a store to leave shared memory).
// kMoveOnly: the bound of the data movement alone (the compute threads hand each slice back as it
// lands: no passes, no exchange; the output is the input).
template <int kThreads, int kSlots, bool kMoveOnly = false>
__global__ void __launch_bounds__(kThreads + 32, 1) softmax_tma(const float* __restrict__ x, float* __restrict__ y,
                                                                 int rows, int cols, int slice, float c) {
  extern __shared__ __align__(128) float ring[];  // kSlots x slice
  __shared__ __align__(8) uint64_t full[kSlots];   // a row's slice has landed
  __shared__ __align__(8) uint64_t ready[kSlots];  // a row's slice holds its probabilities
  __shared__ __align__(8) uint64_t exchanged[kExchangeRing];
  __shared__ MaxSum partials[kExchangeRing][16];
  __shared__ MaxSum warp_part[kThreads / 32];
  __shared__ MaxSum row_total;
  const uint32_t q = cluster_rank();
  uint32_t cluster_size;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(cluster_size));
  const int first = static_cast<int>(cluster_id_x()), stride = static_cast<int>(nclusters_x());
  const int begin = static_cast<int>(q) * slice;
  const int count = max(0, min(slice, cols - begin));  // this CTA's elements of a row (a multiple of 4)
  const uint32_t bytes = static_cast<uint32_t>(count) * 4u;
  const int my_rows = first < rows ? (rows - first + stride - 1) / stride : 0;
  const auto slot_of = [&](int k) { return ring + static_cast<size_t>(k % kSlots) * slice; };
  const auto row_offset = [&](int k) { return static_cast<int64_t>(first + k * stride) * cols + begin; };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kSlots; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&ready[s], 1);
    }
    for (int e = 0; e < kExchangeRing; ++e) mbar_init(&exchanged[e], cluster_size);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster_sync();

  if (threadIdx.x >= kThreads) {  // the producer warp
    if (threadIdx.x == kThreads) {
      const auto store = [&](int k) {
        mbar_wait(&ready[k % kSlots], static_cast<uint32_t>((k / kSlots) & 1));
        if (bytes > 0) {
          asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(y + row_offset(k)),
                       "r"(smem(slot_of(k))), "r"(bytes)
                       : "memory");
        }
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      };
      for (int k = 0; k < my_rows; ++k) {
        if (k >= kSlots) {  // the slot's previous row leaves first
          store(k - kSlots);
          asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        }
        uint64_t* bar = &full[k % kSlots];
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)), "r"(bytes) : "memory");
        if (bytes > 0) {
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                           smem(slot_of(k))),
                       "l"(x + row_offset(k)), "r"(bytes), "r"(smem(bar))
                       : "memory");
        }
      }
      for (int k = max(0, my_rows - kSlots); k < my_rows; ++k) store(k);
      asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    cluster_sync();
    return;
  }

  const int vecs = count / 4;
  const auto block_reduce = [&](MaxSum v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      MaxSum w{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
      v = combine(v, w);
    }
    if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x / 32] = v;
    compute_sync(kThreads);
    if (threadIdx.x < 32) {
      MaxSum w = threadIdx.x < kThreads / 32 ? warp_part[threadIdx.x] : MaxSum{-INFINITY, 0.0f};
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) {
        MaxSum u{__shfl_xor_sync(0xffffffffu, w.m, o), __shfl_xor_sync(0xffffffffu, w.s, o)};
        w = combine(w, u);
      }
      if (threadIdx.x == 0) row_total = w;
    }
    compute_sync(kThreads);
    return row_total;
  };

  const auto finish = [&](int k) {  // row k: the cluster's partials, pass 2 in place, hand the slot to the producer
    const int e = k % kExchangeRing;
    mbar_wait(&exchanged[e], static_cast<uint32_t>((k / kExchangeRing) & 1));
    MaxSum total{-INFINITY, 0.0f};
    for (uint32_t j = 0; j < cluster_size; ++j) total = combine(total, partials[e][j]);
    const float inv = 1.0f / total.s;
    float4* v = reinterpret_cast<float4*>(slot_of(k));
    for (int i = threadIdx.x; i < vecs; i += kThreads) {
      float4 a = v[i];
      a.x = ex2(a.x * c - total.m) * inv;
      a.y = ex2(a.y * c - total.m) * inv;
      a.z = ex2(a.z * c - total.m) * inv;
      a.w = ex2(a.w * c - total.m) * inv;
      v[i] = a;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the bulk store reads what we wrote
    compute_sync(kThreads);
    if (threadIdx.x == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&ready[k % kSlots])) : "memory");
  };

  if constexpr (kMoveOnly) {
    for (int k = 0; k < my_rows; ++k) {
      mbar_wait(&full[k % kSlots], static_cast<uint32_t>((k / kSlots) & 1));
      compute_sync(kThreads);
      if (threadIdx.x == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&ready[k % kSlots])) : "memory");
    }
    cluster_sync();
    return;
  }
  for (int k = 0; k < my_rows; ++k) {
    mbar_wait(&full[k % kSlots], static_cast<uint32_t>((k / kSlots) & 1));
    const float4* v = reinterpret_cast<const float4*>(slot_of(k));
    float m = -INFINITY;
    for (int i = threadIdx.x; i < vecs; i += kThreads) {
      const float4 a = v[i];
      m = fmaxf(m, fmaxf(fmaxf(a.x, a.y), fmaxf(a.z, a.w)));
    }
    m *= c;
    float s = 0.0f;
    if (m != -INFINITY) {
      for (int i = threadIdx.x; i < vecs; i += kThreads) {
        const float4 a = v[i];
        s += ex2(a.x * c - m) + ex2(a.y * c - m) + ex2(a.z * c - m) + ex2(a.w * c - m);
      }
    }
    const MaxSum part = block_reduce({m, s});
    if (threadIdx.x < cluster_size) {  // publish into CTA threadIdx.x's partials[e][q]
      const int e = k % kExchangeRing;
      const uint32_t remote = map_to(smem(&partials[e][q]), threadIdx.x);
      asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(remote), "f"(part.m), "f"(part.s) : "memory");
      const uint32_t bar = map_to(smem(&exchanged[e]), threadIdx.x);
      asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(bar) : "memory");
    }
    if (k > 0) finish(k - 1);
  }
  if (my_rows > 0) finish(my_rows - 1);
  cluster_sync();  // no CTA leaves while others may still publish into it
}

// The same ring and producer warp without clusters: one CTA an SM on every SM (a cluster of 8 fits
// only 15 of an H100's 16.5 GPC eighths: 120 SMs), work items (row, slice) taken in order, item
// i = j x grid + CTA, and the row's partials exchanged through global memory: each slice's
// (max, sum) then a release add on the row's counter; a CTA waits for the row's counter to reach
// epoch x kSlices only when it finishes that row, one item later. Waits only reach items of the same
// or an earlier step, published before any wait of that step: no deadlock with every CTA resident.
template <int kThreads, int kSlots, int kSlices>
__global__ void __launch_bounds__(kThreads + 32, 1) softmax_tma_flat(const float* __restrict__ x, float* __restrict__ y,
                                                                      int rows, int cols, int slice, float c,
                                                                      float2* partials, unsigned* counters,
                                                                      unsigned epoch) {
  extern __shared__ __align__(128) float ring[];
  __shared__ __align__(8) uint64_t full[kSlots];
  __shared__ __align__(8) uint64_t ready[kSlots];
  __shared__ MaxSum warp_part[kThreads / 32];
  __shared__ MaxSum row_total;
  const int items = (rows * kSlices - static_cast<int>(blockIdx.x) + static_cast<int>(gridDim.x) - 1) /
                    static_cast<int>(gridDim.x);
  const auto item_of = [&](int k) { return static_cast<int>(blockIdx.x) + k * static_cast<int>(gridDim.x); };
  const auto count_of = [&](int k) { return max(0, min(slice, cols - (item_of(k) % kSlices) * slice)); };
  const auto offset_of = [&](int k) {
    const int item = item_of(k);
    return static_cast<int64_t>(item / kSlices) * cols + static_cast<int64_t>(item % kSlices) * slice;
  };
  const auto slot_of = [&](int k) { return ring + static_cast<size_t>(k % kSlots) * slice; };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kSlots; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&ready[s], 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (threadIdx.x >= kThreads) {
    if (threadIdx.x == kThreads) {
      const auto store = [&](int k) {
        mbar_wait(&ready[k % kSlots], static_cast<uint32_t>((k / kSlots) & 1));
        const uint32_t bytes = static_cast<uint32_t>(count_of(k)) * 4u;
        if (bytes > 0) {
          asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(y + offset_of(k)),
                       "r"(smem(slot_of(k))), "r"(bytes)
                       : "memory");
        }
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      };
      for (int k = 0; k < items; ++k) {
        if (k >= kSlots) {
          store(k - kSlots);
          asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        }
        const uint32_t bytes = static_cast<uint32_t>(count_of(k)) * 4u;
        uint64_t* bar = &full[k % kSlots];
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(bar)), "r"(bytes) : "memory");
        if (bytes > 0) {
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                           smem(slot_of(k))),
                       "l"(x + offset_of(k)), "r"(bytes), "r"(smem(bar))
                       : "memory");
        }
      }
      for (int k = max(0, items - kSlots); k < items; ++k) store(k);
      asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    return;
  }

  const auto block_reduce = [&](MaxSum v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      MaxSum w{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
      v = combine(v, w);
    }
    if ((threadIdx.x & 31) == 0) warp_part[threadIdx.x / 32] = v;
    compute_sync(kThreads);
    if (threadIdx.x < 32) {
      MaxSum w = threadIdx.x < kThreads / 32 ? warp_part[threadIdx.x] : MaxSum{-INFINITY, 0.0f};
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) {
        MaxSum u{__shfl_xor_sync(0xffffffffu, w.m, o), __shfl_xor_sync(0xffffffffu, w.s, o)};
        w = combine(w, u);
      }
      if (threadIdx.x == 0) row_total = w;
    }
    compute_sync(kThreads);
    return row_total;
  };

  const auto finish = [&](int k) {
    const int row = item_of(k) / kSlices;
    if (threadIdx.x == 0) {
      unsigned seen;
      do {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(counters + row) : "memory");
      } while (static_cast<int>(seen - epoch * kSlices) < 0);
    }
    compute_sync(kThreads);
    MaxSum total{-INFINITY, 0.0f};
#pragma unroll
    for (int j = 0; j < kSlices; ++j) {
      const float2 p = __ldcg(partials + row * kSlices + j);
      total = combine(total, {p.x, p.y});
    }
    const float inv = 1.0f / total.s;
    float4* v = reinterpret_cast<float4*>(slot_of(k));
    const int vecs = count_of(k) / 4;
    for (int i = threadIdx.x; i < vecs; i += kThreads) {
      float4 a = v[i];
      a.x = ex2(a.x * c - total.m) * inv;
      a.y = ex2(a.y * c - total.m) * inv;
      a.z = ex2(a.z * c - total.m) * inv;
      a.w = ex2(a.w * c - total.m) * inv;
      v[i] = a;
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    compute_sync(kThreads);
    if (threadIdx.x == 0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&ready[k % kSlots])) : "memory");
  };

  for (int k = 0; k < items; ++k) {
    mbar_wait(&full[k % kSlots], static_cast<uint32_t>((k / kSlots) & 1));
    const float4* v = reinterpret_cast<const float4*>(slot_of(k));
    const int vecs = count_of(k) / 4;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < vecs; i += kThreads) {
      const float4 a = v[i];
      m = fmaxf(m, fmaxf(fmaxf(a.x, a.y), fmaxf(a.z, a.w)));
    }
    m *= c;
    float s = 0.0f;
    if (m != -INFINITY) {
      for (int i = threadIdx.x; i < vecs; i += kThreads) {
        const float4 a = v[i];
        s += ex2(a.x * c - m) + ex2(a.y * c - m) + ex2(a.z * c - m) + ex2(a.w * c - m);
      }
    }
    const MaxSum part = block_reduce({m, s});
    if (threadIdx.x == 0) {
      __stcg(partials + item_of(k), make_float2(part.m, part.s));
      asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counters + item_of(k) / kSlices) : "memory");
    }
    if (k > 0) finish(k - 1);
  }
  if (items > 0) finish(items - 1);
}

__global__ void copy_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n) {
  constexpr int kVecs = 8;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * 256 * kVecs + threadIdx.x;
  float4 v[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    if (base + k * 256 < n) v[k] = __ldcs(x + base + k * 256);
  }
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    if (base + k * 256 < n) __stcs(y + base + k * 256, v[k]);
  }
}

__global__ void flush_kernel(float4* p, int64_t n) {
  for (int64_t i = blockIdx.x * 256 + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * 256) {
    p[i].x += 1.0f;
  }
}

template <class Launch>
double median_us(Launch launch, float4* flush, int64_t flush_n, int reps = 30) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> t;
  for (int r = 0; r < reps + 3; ++r) {
    flush_kernel<<<528, 256>>>(flush, flush_n);
    CHECK(cudaEventRecord(a));
    launch();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (r >= 3) t.push_back(ms * 1000.f);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const int rows = argc > 1 ? std::atoi(argv[1]) : 256;
  const int cols = argc > 2 ? std::atoi(argv[2]) : 128256;
  if (cols % 4 != 0) return 1;
  const int64_t n = static_cast<int64_t>(rows) * cols;
  std::vector<float> h(n);
  std::mt19937 gen(42);
  std::normal_distribution<float> normal(0.f, 1.f);
  for (auto& v : h) v = normal(gen);
  float *x, *y;
  CHECK(cudaMalloc(&x, n * 4));
  CHECK(cudaMalloc(&y, n * 4));
  CHECK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
  const int64_t flush_n = (256 << 20) / 16;
  float4* flush;
  CHECK(cudaMalloc(&flush, flush_n * 16));
  const double bytes = 2.0 * n * 4;
  std::vector<double> want(n);
  for (int r = 0; r < rows; ++r) {
    const float* row = h.data() + static_cast<int64_t>(r) * cols;
    double m = -INFINITY, s = 0;
    for (int j = 0; j < cols; ++j) m = std::max(m, static_cast<double>(row[j]));
    for (int j = 0; j < cols; ++j) s += std::exp(row[j] - m);
    for (int j = 0; j < cols; ++j) want[static_cast<int64_t>(r) * cols + j] = std::exp(row[j] - m) / s;
  }
  const auto check = [&]() {
    std::vector<float> got(n);
    CHECK(cudaMemcpy(got.data(), y, n * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(got[i] - want[i]) / want[i]);
    return worst;
  };
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  {
    const int64_t vecs = n / 4;
    const unsigned grid = static_cast<unsigned>((vecs + 256 * 8 - 1) / (256 * 8));
    const double us =
        median_us([&] { copy_kernel<<<grid, 256>>>(reinterpret_cast<float4*>(x), reinterpret_cast<float4*>(y), vecs); },
                  flush, flush_n);
    std::printf("copy                          %8.1f us  %.3f TB/s\n", us, bytes / us * 1e-6);
  }
  const auto variant = [&](auto kernel, int cluster, int threads, int slots) {
    int slice = (cols + cluster - 1) / cluster;
    slice = (slice + 3) / 4 * 4;
    const size_t shmem = static_cast<size_t>(slots) * slice * 4;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shmem)));
    if (cluster > 8) CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = static_cast<unsigned>(cluster);
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>(sms / cluster * cluster));
    config.blockDim = dim3(static_cast<unsigned>(threads + 32));
    config.dynamicSmemBytes = shmem;
    config.attrs = &attr;
    config.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess || clusters == 0) {
      std::printf("tma cluster %2d threads %d slots %d: does not fit (%zu B)\n", cluster, threads, slots, shmem);
      (void)cudaGetLastError();
      return;
    }
    config.gridDim = dim3(static_cast<unsigned>(std::min(clusters, sms / cluster) * cluster));
    const auto launch = [&] { CHECK(cudaLaunchKernelEx(&config, kernel, x, y, rows, cols, slice, kLog2e)); };
    CHECK(cudaMemset(y, 0xff, n * 4));
    launch();
    CHECK(cudaDeviceSynchronize());
    const double err = check();
    const double us = median_us(launch, flush, flush_n);
    std::printf("tma cluster %2d threads %d slots %d grid %3u %8.1f us  %.3f TB/s  max rel err %.2e%s\n", cluster,
                threads, slots, config.gridDim.x, us, bytes / us * 1e-6, err, err > 1e-3 ? " (bound: moves only)" : "");
  };
  float2* partials;
  unsigned* counters;
  CHECK(cudaMalloc(&partials, static_cast<size_t>(rows) * 16 * sizeof(float2)));
  CHECK(cudaMalloc(&counters, static_cast<size_t>(rows) * sizeof(unsigned)));
  CHECK(cudaMemset(counters, 0, static_cast<size_t>(rows) * sizeof(unsigned)));
  unsigned epoch = 0;
  const auto flat = [&](auto kernel, int slices, int threads, int slots) {
    int slice = (cols + slices - 1) / slices;
    slice = (slice + 3) / 4 * 4;
    const size_t shmem = static_cast<size_t>(slots) * slice * 4;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shmem)));
    CHECK(cudaMemset(counters, 0, static_cast<size_t>(rows) * sizeof(unsigned)));  // epochs restart per variant
    epoch = 0;
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeCooperative;
    attr.val.cooperative = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(static_cast<unsigned>(sms));
    config.blockDim = dim3(static_cast<unsigned>(threads + 32));
    config.dynamicSmemBytes = shmem;
    config.attrs = &attr;
    config.numAttrs = 1;
    const auto launch = [&] {
      ++epoch;
      CHECK(cudaLaunchKernelEx(&config, kernel, x, y, rows, cols, slice, kLog2e, partials, counters, epoch));
    };
    CHECK(cudaMemset(y, 0xff, n * 4));
    launch();
    CHECK(cudaDeviceSynchronize());
    const double err = check();
    const double us = median_us(launch, flush, flush_n);
    std::printf("flat slices %2d threads %d slots %d grid %3u %8.1f us  %.3f TB/s  max rel err %.2e\n", slices, threads,
                slots, config.gridDim.x, us, bytes / us * 1e-6, err);
  };
  flat(softmax_tma_flat<512, 3, 8>, 8, 512, 3);
  flat(softmax_tma_flat<256, 3, 8>, 8, 256, 3);
  flat(softmax_tma_flat<512, 6, 16>, 16, 512, 6);
  flat(softmax_tma_flat<512, 4, 16>, 16, 512, 4);
  flat(softmax_tma_flat<512, 5, 12>, 12, 512, 5);
  variant(softmax_tma<512, 3>, 8, 512, 3);
  variant(softmax_tma<512, 3, true>, 8, 512, 3);

  return 0;
}
