// Session 44 experiment (never landed): where do fa3's balanced schedules lose time on random
// lengths? Issue 19's random-length case (128 requests, lengths uniform in [1, 8192], 16 heads x 1
// token, page 64; bf16 or fp8 e4m3 KV) and its fixed-length control (8192 keys each), launched N times
// back to back with trace_balanced.patch's per-CTA trace: its SM, start and end, and each segment's
// open (its Q^T there) and close (its rows stored) on the global timer, by consumer warpgroup 0.
// Prints, per case, the medians over launches of: the launch (events), the span of the CTAs, their
// mean and latest busy time, the time after the first CTA ends, the ns a KV tile inside segments,
// and the gaps between a segment's close and the next one's open. Writes ctas_<case>.csv into argv[1].
// Build (repository root, kernels built with trace_balanced.patch in build/):
//   nvcc -std=c++20 -O2 -arch=sm_90a -I include -I . -isystem .deps/cutlass/include \
//     experiments/session44/mla_balanced_trace.cu build/kernels/libkbench_kernels.a -lcuda -o mla_balanced_trace
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/attention/mla/mla_fa3.hpp"
#include "kernels/common/tensor_fill.hpp"

namespace kbench::kernels {
extern unsigned long long* g_mla_trace;
}

#define CHECK(x)                                                                                 \
  do {                                                                                           \
    const cudaError_t err_ = (x);                                                                \
    if (err_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

using kbench::DType;
namespace k = kbench::kernels;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

void run_case(const char* dir, const char* name, DType kv, bool random, int launches) {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  constexpr int kBatch = 128, kMaxLen = 8192, kHeads = 16, kPage = 64, kTile = 64;
  std::vector<int32_t> lens(kBatch, kMaxLen);
  std::mt19937 rng(7);
  if (random) {
    for (auto& len : lens) len = 1 + static_cast<int32_t>(rng() % kMaxLen);
  }
  std::vector<int32_t> indptr(kBatch + 1, 0);
  for (int b = 0; b < kBatch; ++b) indptr[b + 1] = indptr[b] + (lens[b] + kPage - 1) / kPage;
  std::vector<int32_t> indices(indptr[kBatch]);
  std::iota(indices.begin(), indices.end(), 0);
  std::shuffle(indices.begin(), indices.end(), rng);
  const int elem = kv == DType::fp8_e4m3 ? 1 : 2;
  const size_t rows = static_cast<size_t>(indices.size()) * kPage;
  void *q_nope, *q_pe, *ckv, *kpe, *out, *workspace;
  int32_t *d_indptr, *d_indices, *d_lens;
  CHECK(cudaMalloc(&q_nope, size_t{kBatch} * kHeads * 512 * 2));
  CHECK(cudaMalloc(&q_pe, size_t{kBatch} * kHeads * 64 * 2));
  CHECK(cudaMalloc(&ckv, rows * 512 * elem));
  CHECK(cudaMalloc(&kpe, rows * 64 * elem));
  CHECK(cudaMalloc(&out, size_t{kBatch} * kHeads * 512 * 2));
  CHECK(k::fill_uniform(q_nope, DType::bfloat16, int64_t{kBatch} * kHeads * 512, 1, -1.0f, 1.0f, nullptr));
  CHECK(k::fill_uniform(q_pe, DType::bfloat16, int64_t{kBatch} * kHeads * 64, 2, -1.0f, 1.0f, nullptr));
  CHECK(k::fill_uniform(ckv, kv, static_cast<int64_t>(rows) * 512, 3, -1.0f, 1.0f, nullptr));
  CHECK(k::fill_uniform(kpe, kv, static_cast<int64_t>(rows) * 64, 4, -1.0f, 1.0f, nullptr));
  const auto upload = [](int32_t** d, const std::vector<int32_t>& h) {
    CHECK(cudaMalloc(d, sizeof(int32_t) * h.size()));
    CHECK(cudaMemcpy(*d, h.data(), sizeof(int32_t) * h.size(), cudaMemcpyHostToDevice));
  };
  upload(&d_indptr, indptr);
  upload(&d_indices, indices);
  upload(&d_lens, lens);
  k::MlaParams p;
  p.q_nope = q_nope;
  p.q_pe = q_pe;
  p.ckv = ckv;
  p.kpe = kpe;
  p.kv_dtype = kv;
  p.kv_indptr = d_indptr;
  p.kv_indices = d_indices;
  p.kv_len = d_lens;
  p.batch = kBatch;
  p.num_heads = kHeads;
  p.page_size = kPage;
  p.sm_scale = 0.0721688f;
  const k::MlaPlan plan = k::plan_mla_fa3(p, std::span<const int32_t>(lens), sms);
  CHECK(cudaMalloc(&workspace, std::max<size_t>(plan.workspace_bytes(p), 256)));
  CHECK(k::upload_mla_schedule(p, plan, workspace));
  const int ctas = plan.balanced() ? static_cast<int>(plan.part_begin.size()) - 1
                                   : kBatch * plan.num_splits * plan.row_blocks;
  // Each CTA's segments' tiles (the uniform grid: one segment of its split).
  std::vector<std::vector<int>> seg_tiles(ctas);
  for (int c = 0; c < ctas; ++c) {
    if (plan.balanced()) {
      for (int i = plan.part_begin[c]; i < plan.part_begin[c + 1]; ++i) {
        seg_tiles[c].push_back((plan.segments[i].k_end - plan.segments[i].k_begin + kTile - 1) / kTile);
      }
    } else {
      seg_tiles[c].push_back(plan.split_keys / kTile);
    }
  }
  unsigned long long* trace;
  const size_t per_launch = size_t{64} * ctas;
  CHECK(cudaMalloc(&trace, sizeof(unsigned long long) * per_launch * launches));
  CHECK(cudaMemset(trace, 0, sizeof(unsigned long long) * per_launch * launches));
  std::vector<cudaEvent_t> events(launches + 1);
  for (auto& e : events) CHECK(cudaEventCreate(&e));
  for (int w = 0; w < 5; ++w) CHECK(k::launch_mla_fa3(p, plan, out, workspace, nullptr));
  CHECK(cudaEventRecord(events[0]));
  for (int l = 0; l < launches; ++l) {
    k::g_mla_trace = trace + per_launch * l;
    CHECK(k::launch_mla_fa3(p, plan, out, workspace, nullptr));
    CHECK(cudaEventRecord(events[l + 1]));
  }
  CHECK(cudaDeviceSynchronize());
  k::g_mla_trace = nullptr;
  std::vector<unsigned long long> h(per_launch * launches);
  CHECK(cudaMemcpy(h.data(), trace, sizeof(unsigned long long) * h.size(), cudaMemcpyDeviceToHost));

  std::vector<double> launch_us, span_us, busy_mean_us, busy_max_us, tail_us, tile_ns, gap_ns, first_open_ns;
  FILE* f = std::fopen((std::string(dir) + "/ctas_" + name + ".csv").c_str(), "w");
  std::fprintf(f, "launch,cta,smid,start_ns,end_ns,segment,tiles,open_ns,close_ns\n");
  for (int l = 0; l < launches; ++l) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, events[l], events[l + 1]));
    launch_us.push_back(ms * 1000.0);
    const unsigned long long* t = &h[per_launch * l];
    unsigned long long t0 = ~0ull, t1 = 0, first_end = ~0ull;
    double busy = 0, busy_max = 0;
    for (int c = 0; c < ctas; ++c) {
      t0 = std::min(t0, t[64 * c + 1]);
      t1 = std::max(t1, t[64 * c + 2]);
      first_end = std::min(first_end, t[64 * c + 2]);
      const double b = static_cast<double>(t[64 * c + 2] - t[64 * c + 1]);
      busy += b;
      busy_max = std::max(busy_max, b);
    }
    span_us.push_back((t1 - t0) / 1000.0);
    busy_mean_us.push_back(busy / ctas / 1000.0);
    busy_max_us.push_back(busy_max / 1000.0);
    tail_us.push_back((t1 - first_end) / 1000.0);
    for (int c = 0; c < ctas; ++c) {
      const unsigned long long* r = &t[64 * c];
      unsigned long long last_close = 0;
      for (int s = 0; s < static_cast<int>(seg_tiles[c].size()) && s < 30; ++s) {
        const unsigned long long open = r[4 + 2 * s], close = r[5 + 2 * s];
        if (open == 0) continue;  // a segment without keys
        std::fprintf(f, "%d,%d,%llu,%llu,%llu,%d,%d,%llu,%llu\n", l, c, r[0], r[1] - t0, r[2] - t0, s,
                     seg_tiles[c][s], open - t0, close - t0);
        if (seg_tiles[c][s] >= 8) tile_ns.push_back(static_cast<double>(close - open) / seg_tiles[c][s]);
        if (last_close != 0) gap_ns.push_back(static_cast<double>(open - last_close));
        if (last_close == 0) first_open_ns.push_back(static_cast<double>(open - r[1]));
        last_close = close;
      }
    }
  }
  std::fclose(f);
  std::printf(
      "%-12s %4d CTAs: launch %.1f us, span %.1f, CTA busy mean %.1f max %.1f, after the first CTA ends %.1f; "
      "a tile %.0f ns (segments of 8+), a CTA's first open %.0f ns after its start, close -> next open %.0f ns "
      "(%zu gaps; p90 %.0f)\n",
      name, ctas, median(launch_us), median(span_us), median(busy_mean_us), median(busy_max_us), median(tail_us),
      median(tile_ns), median(first_open_ns), median(gap_ns), gap_ns.size() / launches,
      [&] {
        std::vector<double> g = gap_ns;
        std::sort(g.begin(), g.end());
        return g.empty() ? 0.0 : g[g.size() * 9 / 10];
      }());
  for (void* ptr : {q_nope, q_pe, ckv, kpe, out, workspace}) CHECK(cudaFree(ptr));
  CHECK(cudaFree(d_indptr));
  CHECK(cudaFree(d_indices));
  CHECK(cudaFree(d_lens));
  CHECK(cudaFree(trace));
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : ".";
  const int launches = argc > 2 ? std::atoi(argv[2]) : 50;
  run_case(dir, "bf16_fixed", DType::bfloat16, false, launches);
  run_case(dir, "bf16_random", DType::bfloat16, true, launches);
  run_case(dir, "fp8_fixed", DType::fp8_e4m3, false, launches);
  run_case(dir, "fp8_random", DType::fp8_e4m3, true, launches);
  return 0;
}
