// Session 18 experiment (issue 16, softmax 256 x 128256 fp32 >= 2.8 TB/s): softmax with the row
// held in L2 instead of a cluster's shared memory. A row is cut into chunks; pass 1 of a chunk reads
// it from HBM and publishes its (max, sum of 2^(y - max)); pass 2 of the chunk reads it again (from
// L2: the row was read a few rows earlier), waits for the row's pass-1 partials, and writes
// 2^(y - max) / sum. CTAs draw tickets in launch order (an atomic counter), and a row's pass-2
// tickets come `lag` rows after its pass-1 tickets, so a waiting CTA only waits on CTAs that
// already run and never wait (no deadlock, no co-residency assumption). Each byte comes from HBM
// once as long as the row stays in L2 between its two passes.
//
// Built and run by experiments/session18/softmax_l2.sh on the device; prints one line per variant
// (median of 30 cold-L2 launches, TB/s by the reference's bytes 2 x rows x cols x 4), the copy of
// the same bytes in the same process, and the largest relative error against a double softmax.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK(x)                                                                        \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)

constexpr int kThreads = 256;
constexpr float kLog2e = 1.4426950408889634f;

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
__device__ __forceinline__ MaxSum warp_combine(MaxSum v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    MaxSum w{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.s, o)};
    v = combine(v, w);
  }
  return v;
}

__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ float4 load_evict_last(const float4* p, uint64_t policy) {
  float4 v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p), "l"(policy));
  return v;
}

struct Work {
  bool second;
  int row;
  int chunk;
};

// Ticket t -> (pass, row, chunk): rows 0..lag-1's first passes, then for each later row its first
// pass followed by the second pass of the row `lag` before it, then the last `lag` rows' second passes.
__device__ __forceinline__ Work work_of(unsigned t, int rows, int chunks, int lag) {
  const unsigned head = static_cast<unsigned>(lag * chunks);
  if (t < head) return {false, static_cast<int>(t / chunks), static_cast<int>(t % chunks)};
  t -= head;
  const unsigned middle = static_cast<unsigned>((rows - lag) * 2 * chunks);
  if (t < middle) {
    const int u = lag + static_cast<int>(t / (2 * chunks));
    const int r = static_cast<int>(t % (2 * chunks));
    return r < chunks ? Work{false, u, r} : Work{true, u - lag, r - chunks};
  }
  t -= middle;
  return {true, rows - lag + static_cast<int>(t / chunks), static_cast<int>(t % chunks)};
}

struct Workspace {
  float2* partials;   // [rows][chunks]
  unsigned* done;     // [rows]: first passes published
  unsigned* readers;  // [rows]: second passes past their wait
  unsigned* ticket;
};

template <int kVecs, bool kEvictLast>
__global__ void __launch_bounds__(kThreads) softmax_l2(const float* __restrict__ x, float* __restrict__ y, int rows,
                                                       int cols, int chunks, int lag, float c, Workspace ws,
                                                       int mode) {
  constexpr int kChunk = kThreads * 4 * kVecs;
  __shared__ unsigned s_ticket;
  __shared__ MaxSum s_part[kThreads / 32];
  __shared__ MaxSum s_row;
  if (threadIdx.x == 0) {
    const unsigned t = atomicAdd(ws.ticket, 1u);
    if (t == gridDim.x - 1) *ws.ticket = 0;  // every ticket drawn: ready for the next launch
    s_ticket = t;
  }
  __syncthreads();
  const Work w = work_of(s_ticket, rows, chunks, lag);
  const int begin = w.chunk * kChunk;
  const int vecs = (min(kChunk, cols - begin)) / 4;
  const float4* src = reinterpret_cast<const float4*>(x + static_cast<int64_t>(w.row) * cols + begin);
  float4 v[kVecs];
  if (!w.second) {
    uint64_t policy = 0;
    if constexpr (kEvictLast) asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int i = threadIdx.x + k * kThreads;
      if (i < vecs) {
        if constexpr (kEvictLast) {
          v[k] = load_evict_last(src + i, policy);
        } else {
          v[k] = __ldg(src + i);
        }
      } else {
        v[k] = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
      }
    }
    float m = -INFINITY;
#pragma unroll
    for (int k = 0; k < kVecs; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
    m *= c;
    float s = 0.0f;
    if (m != -INFINITY) {
#pragma unroll
      for (int k = 0; k < kVecs; ++k) {
        s += ex2(fmaf(v[k].x, c, -m)) + ex2(fmaf(v[k].y, c, -m)) + ex2(fmaf(v[k].z, c, -m)) + ex2(fmaf(v[k].w, c, -m));
      }
    }
    MaxSum mine = warp_combine(MaxSum{m, s});
    if (threadIdx.x % 32 == 0) s_part[threadIdx.x / 32] = mine;
    __syncthreads();
    if (threadIdx.x < 32) {
      MaxSum p = threadIdx.x < kThreads / 32 ? s_part[threadIdx.x] : MaxSum{-INFINITY, 0.0f};
      p = warp_combine(p);
      if (threadIdx.x == 0) {
        ws.partials[w.row * chunks + w.chunk] = make_float2(p.m, p.s);
        __threadfence();
        atomicAdd(ws.done + w.row, 1u);
      }
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int i = threadIdx.x + k * kThreads;
    v[k] = i < vecs && mode != 2 ? __ldcs(src + i) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0 && mode == 0) {
      while (load_acquire(ws.done + w.row) < static_cast<unsigned>(chunks)) __nanosleep(64);
    }
    __syncwarp();
    MaxSum p{-INFINITY, 0.0f};
    for (int j = threadIdx.x; j < chunks; j += 32) {
      const float2 q = __ldcg(ws.partials + w.row * chunks + j);
      p = combine(p, MaxSum{q.x, q.y});
    }
    p = warp_combine(p);
    if (threadIdx.x == 0) {
      s_row = p;
      if (atomicAdd(ws.readers + w.row, 1u) == static_cast<unsigned>(chunks - 1)) {
        ws.done[w.row] = 0;
        ws.readers[w.row] = 0;
      }
    }
  }
  __syncthreads();
  const float m = s_row.m;
  const float inv = 1.0f / s_row.s;
  float4* dst = reinterpret_cast<float4*>(y + static_cast<int64_t>(w.row) * cols + begin);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int i = threadIdx.x + k * kThreads;
    if (i < vecs) {
      const float4 a = v[k];
      __stcs(dst + i, make_float4(ex2(fmaf(a.x, c, -m)) * inv, ex2(fmaf(a.y, c, -m)) * inv,
                                  ex2(fmaf(a.z, c, -m)) * inv, ex2(fmaf(a.w, c, -m)) * inv));
    }
  }
}

// The fused variant: one pass per chunk, the chunk held in registers while the CTA waits for its
// row's other chunks' partials (a software cluster). Tickets in row order: the CTAs of a row are
// dispatched one after another, and a waiting CTA waits only for CTAs of its own row, which all
// get slots once the rows dispatched before it finish (no co-residency assumption).
template <int kVecs>
__global__ void __launch_bounds__(kThreads) softmax_fused(const float* __restrict__ x, float* __restrict__ y, int rows,
                                                          int cols, int chunks, float c, Workspace ws) {
  constexpr int kChunk = kThreads * 4 * kVecs;
  __shared__ unsigned s_ticket;
  __shared__ MaxSum s_part[kThreads / 32];
  __shared__ MaxSum s_row;
  if (threadIdx.x == 0) {
    const unsigned t = atomicAdd(ws.ticket, 1u);
    if (t == gridDim.x - 1) *ws.ticket = 0;
    s_ticket = t;
  }
  __syncthreads();
  const int row = static_cast<int>(s_ticket / chunks);
  const int chunk = static_cast<int>(s_ticket % chunks);
  const int begin = chunk * kChunk;
  const int vecs = (min(kChunk, cols - begin)) / 4;
  const float4* src = reinterpret_cast<const float4*>(x + static_cast<int64_t>(row) * cols + begin);
  float4 v[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int i = threadIdx.x + k * kThreads;
    v[k] = i < vecs ? __ldcs(src + i) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
  }
  float m = -INFINITY;
#pragma unroll
  for (int k = 0; k < kVecs; ++k) m = fmaxf(m, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
  m *= c;
  float s = 0.0f;
  if (m != -INFINITY) {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      s += ex2(fmaf(v[k].x, c, -m)) + ex2(fmaf(v[k].y, c, -m)) + ex2(fmaf(v[k].z, c, -m)) + ex2(fmaf(v[k].w, c, -m));
    }
  }
  MaxSum mine = warp_combine(MaxSum{m, s});
  if (threadIdx.x % 32 == 0) s_part[threadIdx.x / 32] = mine;
  __syncthreads();
  if (threadIdx.x < 32) {
    MaxSum p = threadIdx.x < kThreads / 32 ? s_part[threadIdx.x] : MaxSum{-INFINITY, 0.0f};
    p = warp_combine(p);
    if (threadIdx.x == 0) {
      ws.partials[row * chunks + chunk] = make_float2(p.m, p.s);
      __threadfence();
      atomicAdd(ws.done + row, 1u);
      while (load_acquire(ws.done + row) < static_cast<unsigned>(chunks)) __nanosleep(32);
    }
    __syncwarp();
    p = MaxSum{-INFINITY, 0.0f};
    for (int j = threadIdx.x; j < chunks; j += 32) {
      const float2 q = __ldcg(ws.partials + row * chunks + j);
      p = combine(p, MaxSum{q.x, q.y});
    }
    p = warp_combine(p);
    if (threadIdx.x == 0) {
      s_row = p;
      if (atomicAdd(ws.readers + row, 1u) == static_cast<unsigned>(chunks - 1)) {
        ws.done[row] = 0;
        ws.readers[row] = 0;
      }
    }
  }
  __syncthreads();
  const float rm = s_row.m;
  const float inv = 1.0f / s_row.s;
  float4* dst = reinterpret_cast<float4*>(y + static_cast<int64_t>(row) * cols + begin);
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int i = threadIdx.x + k * kThreads;
    if (i < vecs) {
      const float4 a = v[k];
      __stcs(dst + i, make_float4(ex2(fmaf(a.x, c, -rm)) * inv, ex2(fmaf(a.y, c, -rm)) * inv,
                                  ex2(fmaf(a.z, c, -rm)) * inv, ex2(fmaf(a.w, c, -rm)) * inv));
    }
  }
}

template <int kVecs>
__global__ void __launch_bounds__(kThreads) copy_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * kThreads * kVecs + threadIdx.x;
  float4 v[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = base + k * kThreads;
    if (i < n) v[k] = __ldcs(x + i);
  }
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const int64_t i = base + k * kThreads;
    if (i < n) __stcs(y + i, v[k]);
  }
}

__global__ void flush_kernel(float4* p, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    p[i] = make_float4(1.f, 2.f, 3.f, 4.f);
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
  if (cols % 4 != 0) {
    std::fprintf(stderr, "cols must be a multiple of 4 in this experiment\n");
    return 1;
  }
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
    double m = -INFINITY, s = 0;
    for (int j = 0; j < cols; ++j) m = std::max(m, static_cast<double>(h[r * static_cast<int64_t>(cols) + j]));
    for (int j = 0; j < cols; ++j) s += std::exp(h[r * static_cast<int64_t>(cols) + j] - m);
    for (int j = 0; j < cols; ++j) want[r * static_cast<int64_t>(cols) + j] = std::exp(h[r * static_cast<int64_t>(cols) + j] - m) / s;
  }
  auto check = [&]() {
    std::vector<float> got(n);
    CHECK(cudaMemcpy(got.data(), y, n * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(got[i] - want[i]) / want[i]);
    return worst;
  };

  {
    const int64_t vecs = n / 4;
    const unsigned grid = static_cast<unsigned>((vecs + kThreads * 8 - 1) / (kThreads * 8));
    const double us = median_us([&] { copy_kernel<8><<<grid, kThreads>>>(reinterpret_cast<float4*>(x), reinterpret_cast<float4*>(y), vecs); },
                                flush, flush_n);
    std::printf("copy            %8.1f us  %.3f TB/s\n", us, bytes / us * 1e-6);
  }

  Workspace ws;
  CHECK(cudaMalloc(&ws.partials, static_cast<size_t>(rows) * 64 * sizeof(float2)));
  CHECK(cudaMalloc(&ws.done, rows * 4));
  CHECK(cudaMalloc(&ws.readers, rows * 4));
  CHECK(cudaMalloc(&ws.ticket, 4));
  CHECK(cudaMemset(ws.done, 0, rows * 4));
  CHECK(cudaMemset(ws.readers, 0, rows * 4));
  CHECK(cudaMemset(ws.ticket, 0, 4));

  auto run = [&](auto kernel, int vecs_per_thread, bool evict_last, int lag, int mode = 0) {
    const int chunk = kThreads * 4 * vecs_per_thread;
    const int chunks = (cols + chunk - 1) / chunk;
    lag = std::min(lag, rows);
    const unsigned grid = static_cast<unsigned>(2 * rows * chunks);
    auto launch = [&] { kernel<<<grid, kThreads>>>(x, y, rows, cols, chunks, lag, kLog2e, ws, mode); };
    CHECK(cudaMemset(y, 0xff, n * 4));
    launch();
    CHECK(cudaDeviceSynchronize());
    const double err = check();
    const double us = median_us(launch, flush, flush_n);
    static const char* modes[] = {"softmax", "bound: no wait", "bound: pass 2 reads nothing"};
    std::printf("l2 vecs %2d %s lag %3d chunks %2d %8.1f us  %.3f TB/s  max rel err %.2e  %s\n", vecs_per_thread,
                evict_last ? "evict_last" : "default   ", lag, chunks, us, bytes / us * 1e-6, err, modes[mode]);
  };
  auto fused = [&](auto kernel, int vecs_per_thread) {
    const int chunk = kThreads * 4 * vecs_per_thread;
    const int chunks = (cols + chunk - 1) / chunk;
    const unsigned grid = static_cast<unsigned>(rows * chunks);
    auto launch = [&] { kernel<<<grid, kThreads>>>(x, y, rows, cols, chunks, kLog2e, ws); };
    CHECK(cudaMemset(y, 0xff, n * 4));
    launch();
    CHECK(cudaDeviceSynchronize());
    const double err = check();
    const double us = median_us(launch, flush, flush_n);
    std::printf("fused vecs %2d chunks %2d %8.1f us  %.3f TB/s  max rel err %.2e\n", vecs_per_thread, chunks, us,
                bytes / us * 1e-6, err);
  };
  fused(softmax_fused<4>, 4);
  fused(softmax_fused<8>, 8);
  fused(softmax_fused<16>, 16);
  fused(softmax_fused<24>, 24);
  for (int lag : {8, 16}) run(softmax_l2<16, true>, 16, true, lag);

  {
    const int64_t vecs = n / 4;
    const unsigned grid = static_cast<unsigned>((vecs + kThreads * 8 - 1) / (kThreads * 8));
    const double us = median_us([&] { copy_kernel<8><<<grid, kThreads>>>(reinterpret_cast<float4*>(x), reinterpret_cast<float4*>(y), vecs); },
                                flush, flush_n);
    std::printf("copy (again)    %8.1f us  %.3f TB/s\n", us, bytes / us * 1e-6);
  }
  return 0;
}
