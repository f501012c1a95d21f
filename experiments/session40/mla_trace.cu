// Session 40 experiment (never landed): why does fa3's bf16 memory-bound MLA launch take either ~288
// or ~335 us (session 40 call 1: within one kbench row, noise 5-8%)? Runs the case (128 requests x
// 8192 keys, 16 heads, page 64, bf16) N times back to back with the experiment build's per-CTA trace
// (SM id, start / end on the global timer, SM cycles) and maps SMs to GPCs first (clusters never span
// a GPC: SMs seen in one cluster share it). Writes gpc.csv, launches.csv, ctas.csv into argv[1].
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/attention/mla/mla_fa3.hpp"

namespace kbench::kernels {
extern unsigned long long* g_mla_trace;
}

#define CHECK(x)                                                                       \
  do {                                                                                 \
    cudaError_t err_ = (x);                                                               \
    if (err_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

__global__ void fill_bf16(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = __float2bfloat16((h & 0xffff) / 32768.0f - 1.0f);
  }
}

__global__ void record_smid(int* out) {
  extern __shared__ int pad[];
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int>(smid) + 0 * pad[0];
}

__global__ void read_all(const float* p, size_t n, float* sink) {
  float acc = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) acc += p[i];
  if (acc == 12345.0f) *sink = acc;
}

int find(std::vector<int>& parent, int x) { return parent[x] == x ? x : parent[x] = find(parent, parent[x]); }

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : ".";
  const int launches = argc > 2 ? std::atoi(argv[2]) : 200;
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

  // GPCs: clusters of 8, one CTA an SM (200 KB of shared memory each), many waves.
  std::vector<int> parent(256);
  std::iota(parent.begin(), parent.end(), 0);
  {
    const int cluster = 8, clusters = 256;
    int* d = nullptr;
    CHECK(cudaMalloc(&d, sizeof(int) * cluster * clusters));
    CHECK(cudaFuncSetAttribute(record_smid, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    std::vector<int> h(cluster * clusters);
    for (int rep = 0; rep < 30; ++rep) {
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(cluster * clusters);
      config.blockDim = dim3(32);
      config.dynamicSmemBytes = 200 * 1024;
      cudaLaunchAttribute attribute;
      attribute.id = cudaLaunchAttributeClusterDimension;
      attribute.val.clusterDim.x = cluster;
      attribute.val.clusterDim.y = 1;
      attribute.val.clusterDim.z = 1;
      config.attrs = &attribute;
      config.numAttrs = 1;
      CHECK(cudaLaunchKernelEx(&config, record_smid, d));
      CHECK(cudaMemcpy(h.data(), d, sizeof(int) * h.size(), cudaMemcpyDeviceToHost));
      for (int c = 0; c < clusters; ++c) {
        for (int r = 1; r < cluster; ++r) {
          parent[find(parent, h[c * cluster + r])] = find(parent, h[c * cluster]);
        }
      }
    }
    FILE* f = std::fopen((std::string(dir) + "/gpc.csv").c_str(), "w");
    std::fprintf(f, "smid,group\n");
    for (int s = 0; s < sms; ++s) std::fprintf(f, "%d,%d\n", s, find(parent, s));
    std::fclose(f);
    CHECK(cudaFree(d));
  }

  // The case.
  const int batch = 128, s_kv = 8192, heads = 16, page = 64, pages_per = s_kv / page, pages = batch * pages_per;
  kbench::kernels::MlaParams p;
  p.batch = batch;
  p.s_qo = 1;
  p.num_heads = heads;
  p.page_size = page;
  p.sm_scale = 0.0721688f;
  __nv_bfloat16 *q_nope, *q_pe, *ckv, *kpe, *out;
  const size_t n_qn = size_t{batch} * heads * 512, n_qp = size_t{batch} * heads * 64;
  const size_t n_ckv = size_t{pages} * page * 512, n_kpe = size_t{pages} * page * 64;
  CHECK(cudaMalloc(&q_nope, n_qn * 2));
  CHECK(cudaMalloc(&q_pe, n_qp * 2));
  CHECK(cudaMalloc(&ckv, n_ckv * 2));
  CHECK(cudaMalloc(&kpe, n_kpe * 2));
  CHECK(cudaMalloc(&out, n_qn * 2));
  fill_bf16<<<1024, 256>>>(q_nope, n_qn, 1);
  fill_bf16<<<1024, 256>>>(q_pe, n_qp, 2);
  fill_bf16<<<4096, 256>>>(ckv, n_ckv, 3);
  fill_bf16<<<1024, 256>>>(kpe, n_kpe, 4);
  std::vector<int32_t> indptr(batch + 1), indices(pages), lens(batch, s_kv);
  std::iota(indices.begin(), indices.end(), 0);
  std::mt19937_64 rng(42);
  std::shuffle(indices.begin(), indices.end(), rng);
  for (int b = 0; b <= batch; ++b) indptr[b] = b * pages_per;
  int32_t *d_indptr, *d_indices, *d_lens;
  CHECK(cudaMalloc(&d_indptr, sizeof(int32_t) * indptr.size()));
  CHECK(cudaMalloc(&d_indices, sizeof(int32_t) * indices.size()));
  CHECK(cudaMalloc(&d_lens, sizeof(int32_t) * lens.size()));
  CHECK(cudaMemcpy(d_indptr, indptr.data(), sizeof(int32_t) * indptr.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_indices, indices.data(), sizeof(int32_t) * indices.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_lens, lens.data(), sizeof(int32_t) * lens.size(), cudaMemcpyHostToDevice));
  p.q_nope = q_nope;
  p.q_pe = q_pe;
  p.ckv = ckv;
  p.kpe = kpe;
  p.kv_indptr = d_indptr;
  p.kv_indices = d_indices;
  p.kv_len = d_lens;
  const kbench::kernels::MlaPlan plan = kbench::kernels::plan_mla_fa3(p, std::span<const int32_t>(lens), sms);
  std::printf("plan: splits %d, balanced %d, row_blocks %d\n", plan.num_splits, plan.balanced() ? 1 : 0,
              plan.row_blocks);
  void* workspace = nullptr;
  CHECK(cudaMalloc(&workspace, std::max<size_t>(plan.workspace_bytes(p), 256)));
  const int ctas = batch * plan.num_splits * plan.row_blocks;
  unsigned long long* trace;
  CHECK(cudaMalloc(&trace, sizeof(unsigned long long) * 4 * ctas * launches));
  CHECK(cudaMemset(trace, 0, sizeof(unsigned long long) * 4 * ctas * launches));
  std::vector<cudaEvent_t> events(launches + 1);
  for (auto& e : events) CHECK(cudaEventCreate(&e));
  for (int w = 0; w < 5; ++w) CHECK(kbench::kernels::launch_mla_fa3(p, plan, out, workspace, nullptr));
  // mode "stream": launches back to back; "graph": graphs of 10 launches (kbench's default), each
  // replay one event interval (launches / 10 replays); "graphflush": as graph, a 100 MB read between
  // replays (kbench's cold L2).
  const std::string mode = argc > 3 ? argv[3] : "stream";
  const bool graph = mode != "stream";
  const size_t flush_elems = 100u << 20 >> 2;
  float* flush = nullptr;
  float* flush_sink = nullptr;
  CHECK(cudaMalloc(&flush, flush_elems * 4));
  CHECK(cudaMalloc(&flush_sink, 4));
  CHECK(cudaMemset(flush, 0, flush_elems * 4));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int per_graph = 10;
  std::vector<cudaGraphExec_t> execs;
  if (graph) {
    for (int g = 0; g < launches / per_graph; ++g) {
      cudaGraph_t graph_handle;
      CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
      for (int c = 0; c < per_graph; ++c) {
        kbench::kernels::g_mla_trace = trace + size_t{4} * ctas * static_cast<size_t>(g * per_graph + c);
        CHECK(kbench::kernels::launch_mla_fa3(p, plan, out, workspace, stream));
      }
      CHECK(cudaStreamEndCapture(stream, &graph_handle));
      cudaGraphExec_t exec;
      CHECK(cudaGraphInstantiate(&exec, graph_handle, 0));
      execs.push_back(exec);
    }
  }
  CHECK(cudaEventRecord(events[0], stream));
  for (int l = 0; l < launches; ++l) {
    if (graph) {
      if (l % per_graph != 0) continue;
      if (mode == "graphflush") read_all<<<1024, 256, 0, stream>>>(flush, flush_elems, flush_sink);
      CHECK(cudaEventRecord(events[l], stream));
      CHECK(cudaGraphLaunch(execs[l / per_graph], stream));
      CHECK(cudaEventRecord(events[l + per_graph], stream));
      continue;
    }
    kbench::kernels::g_mla_trace = trace + size_t{4} * ctas * static_cast<size_t>(l);
    CHECK(kbench::kernels::launch_mla_fa3(p, plan, out, workspace, stream));
    CHECK(cudaEventRecord(events[l + 1], stream));
  }
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned long long> h(size_t{4} * ctas * static_cast<size_t>(launches));
  CHECK(cudaMemcpy(h.data(), trace, sizeof(unsigned long long) * h.size(), cudaMemcpyDeviceToHost));
  FILE* fl = std::fopen((std::string(dir) + "/launches.csv").c_str(), "w");
  FILE* fc = std::fopen((std::string(dir) + "/ctas.csv").c_str(), "w");
  std::fprintf(fl, "launch,event_us\n");
  std::fprintf(fc, "launch,cta,smid,start_ns,end_ns,cycles\n");
  for (int l = 0; l < launches; ++l) {
    float ms = 0;
    if (graph) {
      const int g0 = l / per_graph * per_graph;
      CHECK(cudaEventElapsedTime(&ms, events[g0], events[g0 + per_graph]));
      ms /= per_graph;
    } else {
      CHECK(cudaEventElapsedTime(&ms, events[l], events[l + 1]));
    }
    std::fprintf(fl, "%d,%.2f\n", l, ms * 1000);
    unsigned long long t0 = ~0ull;
    for (int c = 0; c < ctas; ++c) t0 = std::min(t0, h[(static_cast<size_t>(l) * ctas + c) * 4 + 1]);
    for (int c = 0; c < ctas; ++c) {
      const unsigned long long* r = &h[(static_cast<size_t>(l) * ctas + c) * 4];
      std::fprintf(fc, "%d,%d,%llu,%llu,%llu,%llu\n", l, c, r[0], r[1] - t0, r[2] - t0, r[3]);
    }
  }
  std::fclose(fl);
  std::fclose(fc);
  std::printf("done: %d launches of %d CTAs\n", launches, ctas);
  return 0;
}
