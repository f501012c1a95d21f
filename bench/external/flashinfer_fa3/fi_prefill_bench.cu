// FlashInfer's own sm90 (fa3) ragged batch prefill kernel on the prefill issue's cases (bf16: head
// 128, 16 x 4096, 64/8 heads, causal and not; qk 192 / vo 128, 16 x 1024, 128/128 heads, causal),
// timed the ways kbench times: with --no_cuda_graph --use_cuda_events (one call per sample) and
// under a CUDA graph of 10 calls (kbench's default); inputs N(0, 1), a 100 MB memset before every
// sample (cold L2), 5 dry runs, the median of 30, FLOPs counted as kbench counts them. Before
// timing, small ragged cases of both head-dim pairs are checked element by element against a
// double-precision CPU reference.
//   fi_prefill_bench [rounds]     (prints one [PERF] line per case, timing and round)
// A yardstick for kbench's fa3 on the same GPU (bench/external/flashinfer_fa3/build.sh), not kbench.
#include <curand_kernel.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "flashinfer_params.inc"
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include <flashinfer/attention/scheduler.cuh>

using flashinfer::MaskMode;

#define CHECK_CUDA(x)                                                                              \
  do {                                                                                             \
    const cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "[ERROR] %s: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

__global__ void fill_normal(nv_bfloat16* p, size_t n, unsigned long long seed) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, i, 0, &state);
  p[i] = __float2bfloat16(curand_normal(&state));
}

struct Case {
  int batch, len, qo_heads, kv_heads;
  bool causal;
  [[nodiscard]] size_t rows() const { return static_cast<size_t>(batch) * len; }
  // kbench's count (compat.md): H_q (d_qk + d_vo) sum q (2 k - q) causal, 2 H_q (d_qk + d_vo) sum q k not.
  [[nodiscard]] double flops(int head_qk, int head_vo) const {
    return static_cast<double>(qo_heads) * (head_qk + head_vo) * batch * static_cast<double>(len) * len *
           (causal ? 1 : 2);
  }
};

// One case's tensors, FlashInfer's plan (PrefillSM90Plan, as its Python plan() calls it) and launch.
template <int kHeadQk, int kHeadVo>
class FlashInferPrefill {
 public:
  explicit FlashInferPrefill(const Case& c) : c_(c) {
    q_ = alloc_normal(c.rows() * c.qo_heads * kHeadQk, 1);
    k_ = alloc_normal(c.rows() * c.kv_heads * kHeadQk, 2);
    v_ = alloc_normal(c.rows() * c.kv_heads * kHeadVo, 3);
    CHECK_CUDA(cudaMalloc(&o_, c.rows() * c.qo_heads * kHeadVo * 2));
    CHECK_CUDA(cudaMemset(o_, 0xff, c.rows() * c.qo_heads * kHeadVo * 2));  // NaN until written
    CHECK_CUDA(cudaMalloc(&int_workspace_, kWorkspaceBytes));
    CHECK_CUDA(cudaMalloc(&float_workspace_, kWorkspaceBytes));
    CHECK_CUDA(cudaMallocHost(&pinned_workspace_, kWorkspaceBytes));
    std::vector<int> indptr, kv_len(c.batch, c.len);
    for (int b = 0; b <= c.batch; ++b) indptr.push_back(b * c.len);
    flashinfer::PrefillPlanSM90Info plan;
    CHECK_CUDA(flashinfer::PrefillSM90Plan(float_workspace_, kWorkspaceBytes, int_workspace_, pinned_workspace_,
                                           kWorkspaceBytes, plan, indptr.data(), indptr.data(), kv_len.data(),
                                           c.rows(), c.batch, c.qo_heads, c.kv_heads, kHeadQk, kHeadVo,
                                           /*page_size=*/1, c.causal, /*enable_cuda_graph=*/false,
                                           /*sizeof_dtype_o=*/2, nullptr));
    if (plan.same_schedule_for_all_heads) {
      std::fprintf(stderr, "[ERROR] the plan chose same_schedule_for_all_heads, which is not instantiated here\n");
      std::exit(1);
    }
    p_ = {};
    p_.q_ptr = reinterpret_cast<DTypeQ*>(q_);
    p_.k_ptr = reinterpret_cast<DTypeKV*>(k_);
    p_.v_ptr = reinterpret_cast<DTypeKV*>(v_);
    p_.o_ptr = reinterpret_cast<DTypeO*>(o_);
    p_.q_stride_n = c.qo_heads * kHeadQk;
    p_.o_stride_n = c.qo_heads * kHeadVo;
    p_.k_stride_n = c.kv_heads * kHeadQk;
    p_.v_stride_n = c.kv_heads * kHeadVo;
    p_.q_stride_h = p_.k_stride_h = kHeadQk;
    p_.o_stride_h = p_.v_stride_h = kHeadVo;
    p_.nnz_qo = p_.nnz_kv = static_cast<int64_t>(c.rows());
    p_.head_dim = kHeadQk;
    p_.num_qo_heads = c.qo_heads;
    p_.num_kv_heads = c.kv_heads;
    p_.group_size = c.qo_heads / c.kv_heads;
    p_.window_left = -1;
    p_.causal = c.causal;
    auto at = [&](int64_t offset) { return flashinfer::GetPtrFromBaseOffset<IdType>(int_workspace_, offset); };
    p_.qo_tile_indices = at(plan.qo_tile_indices_offset);
    p_.qo_indptr = at(plan.qo_indptr_offset);
    p_.kv_indptr = at(plan.kv_indptr_offset);
    p_.qo_lens = at(plan.qo_len_offset);
    p_.kv_lens = at(plan.kv_len_offset);
    p_.head_indices = at(plan.head_indices_offset);
    p_.work_indptr = at(plan.work_indptr_offset);
    p_.batch_indices = at(plan.batch_indices_offset);
    p_.additional_params.sm_scale = 1.0 / std::sqrt(static_cast<double>(kHeadQk));
    p_.additional_params.scale_v_scalar = 1.0;
    CHECK_CUDA(cudaDeviceSynchronize());
  }
  ~FlashInferPrefill() {
    for (void* p : {q_, k_, v_, o_, int_workspace_, float_workspace_}) cudaFree(p);
    cudaFreeHost(pinned_workspace_);
  }
  FlashInferPrefill(const FlashInferPrefill&) = delete;
  FlashInferPrefill& operator=(const FlashInferPrefill&) = delete;

  void launch(cudaStream_t stream) {
    const cudaError_t status =
        c_.causal ? launch_mask<MaskMode::kCausal>(stream) : launch_mask<MaskMode::kNone>(stream);
    CHECK_CUDA(status);
  }
  [[nodiscard]] std::vector<nv_bfloat16> download(const void* src, size_t elements) const {
    std::vector<nv_bfloat16> host(elements);
    CHECK_CUDA(cudaMemcpy(host.data(), src, elements * 2, cudaMemcpyDeviceToHost));
    return host;
  }
  const void *q() const { return q_; }
  const void *k() const { return k_; }
  const void *v() const { return v_; }
  const void *o() const { return o_; }

 private:
  static constexpr size_t kWorkspaceBytes = 64 << 20;
  template <MaskMode kMask>
  cudaError_t launch_mask(cudaStream_t stream) {
    return flashinfer::BatchPrefillWithRaggedKVCacheDispatched<kHeadQk, kHeadVo, kMask, /*LEFT_SLIDING_WINDOW=*/false,
                                                               /*SAME_SCHEDULE_FOR_ALL_HEADS=*/false,
                                                               flashinfer::DefaultAttention<false>>(p_, false, stream);
  }
  static void* alloc_normal(size_t elements, unsigned long long seed) {
    void* p = nullptr;
    CHECK_CUDA(cudaMalloc(&p, elements * 2));
    fill_normal<<<static_cast<unsigned>((elements + 255) / 256), 256>>>(static_cast<nv_bfloat16*>(p), elements, seed);
    CHECK_CUDA(cudaGetLastError());
    return p;
  }
  Case c_;
  RaggedParams p_{};
  void *q_ = nullptr, *k_ = nullptr, *v_ = nullptr, *o_ = nullptr;
  void *int_workspace_ = nullptr, *float_workspace_ = nullptr, *pinned_workspace_ = nullptr;
};

// Every output element of the first and last qo head against a double-precision reference.
template <int kHeadQk, int kHeadVo>
bool check(const Case& c) {
  FlashInferPrefill<kHeadQk, kHeadVo> run(c);
  run.launch(nullptr);
  CHECK_CUDA(cudaDeviceSynchronize());
  const auto q = run.download(run.q(), c.rows() * c.qo_heads * kHeadQk);
  const auto k = run.download(run.k(), c.rows() * c.kv_heads * kHeadQk);
  const auto v = run.download(run.v(), c.rows() * c.kv_heads * kHeadVo);
  const auto o = run.download(run.o(), c.rows() * c.qo_heads * kHeadVo);
  auto at = [&](const std::vector<nv_bfloat16>& t, int dim, size_t row, int heads, int head, int d) {
    return static_cast<double>(__bfloat162float(t[(row * heads + head) * dim + d]));
  };
  double err2 = 0, ref2 = 0;
  for (int head : {0, c.qo_heads - 1}) {
    const int kv_head = head / (c.qo_heads / c.kv_heads);
    for (size_t row = 0; row < c.rows(); ++row) {
      const size_t first_key = row / c.len * c.len;
      const int keys = c.causal ? static_cast<int>(row % c.len) + 1 : c.len;
      std::vector<double> p(keys);
      double max = -INFINITY, sum = 0;
      for (int j = 0; j < keys; ++j) {
        double dot = 0;
        for (int d = 0; d < kHeadQk; ++d) {
          dot += at(q, kHeadQk, row, c.qo_heads, head, d) * at(k, kHeadQk, first_key + j, c.kv_heads, kv_head, d);
        }
        p[j] = dot / std::sqrt(static_cast<double>(kHeadQk));
        max = std::max(max, p[j]);
      }
      for (double& x : p) sum += x = std::exp(x - max);
      for (int d = 0; d < kHeadVo; ++d) {
        double ref = 0;
        for (int j = 0; j < keys; ++j) ref += p[j] * at(v, kHeadVo, first_key + j, c.kv_heads, kv_head, d);
        ref /= sum;
        const double got = at(o, kHeadVo, row, c.qo_heads, head, d);
        if (!std::isfinite(got)) {
          std::printf("[ERROR] check: non-finite output\n");
          return false;
        }
        err2 += (got - ref) * (got - ref);
        ref2 += ref * ref;
      }
    }
  }
  const double rel = std::sqrt(err2 / ref2);
  const bool ok = rel < 1e-2;
  std::printf("[INFO] check head %d/%d, %d x %d, %d/%d heads, causal %d: relative L2 error %.2e (%s)\n", kHeadQk,
              kHeadVo, c.batch, c.len, c.qo_heads, c.kv_heads, c.causal, rel, ok ? "ok" : "FAILED");
  return ok;
}

// kbench's two timings: 5 dry iterations, then the median of 30, each after a cold-L2 memset
// outside the timed window. Events: one call per iteration. Graph (kbench's default): one replay of
// a CUDA graph of 10 calls per iteration, a call's time being the replay's / 10 (the inputs of these
// cases exceed the L2 several times over, so kbench's rotating copies change nothing here).
enum class Timing { events, graph };
constexpr int kCallsPerGraph = 10;

template <int kHeadQk, int kHeadVo>
void time_case(const Case& c, Timing timing, void* flush, size_t flush_bytes) {
  FlashInferPrefill<kHeadQk, kHeadVo> run(c);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraphExec_t graph = nullptr;
  if (timing == Timing::graph) {
    cudaGraph_t captured;
    CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int call = 0; call < kCallsPerGraph; ++call) run.launch(stream);
    CHECK_CUDA(cudaStreamEndCapture(stream, &captured));
    CHECK_CUDA(cudaGraphInstantiate(&graph, captured, 0));
    CHECK_CUDA(cudaGraphDestroy(captured));
  }
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int it = 0; it < 5 + 30; ++it) {
    CHECK_CUDA(cudaMemsetAsync(flush, it & 0xff, flush_bytes, stream));
    CHECK_CUDA(cudaEventRecord(start, stream));
    if (graph != nullptr) {
      CHECK_CUDA(cudaGraphLaunch(graph, stream));
    } else {
      run.launch(stream);
    }
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    if (it >= 5) ms.push_back(graph != nullptr ? t / kCallsPerGraph : t);
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  if (graph != nullptr) CHECK_CUDA(cudaGraphExecDestroy(graph));
  CHECK_CUDA(cudaStreamDestroy(stream));
  std::sort(ms.begin(), ms.end());
  const double median = (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;  // 30 samples, as numpy
  std::printf("[PERF] flashinfer-fa3 (%s) ragged bf16 head %d/%d, %d x %d, %d/%d heads, causal %d :: median time "
              "%.3f ms (min %.3f, max %.3f); achieved tflops %.1f TFLOPs/sec\n",
              timing == Timing::graph ? "graph" : "events", kHeadQk, kHeadVo, c.batch, c.len, c.qo_heads, c.kv_heads,
              c.causal, median, ms.front(), ms.back(), c.flops(kHeadQk, kHeadVo) / median / 1e9);
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 1;
  if (!check<128, 128>({2, 333, 8, 2, true}) || !check<128, 128>({3, 200, 8, 1, false}) ||
      !check<192, 128>({2, 300, 4, 4, true})) {
    return 1;
  }
  constexpr size_t kFlushBytes = 100 << 20;  // 2x the H100's L2, as kbench
  void* flush = nullptr;
  CHECK_CUDA(cudaMalloc(&flush, kFlushBytes));
  for (int round = 0; round < rounds; ++round) {
    for (Timing timing : {Timing::events, Timing::graph}) {
      time_case<128, 128>({16, 4096, 64, 8, true}, timing, flush, kFlushBytes);
      time_case<128, 128>({16, 4096, 64, 8, false}, timing, flush, kFlushBytes);
      time_case<192, 128>({16, 1024, 128, 128, true}, timing, flush, kFlushBytes);
    }
  }
  CHECK_CUDA(cudaFree(flush));
  return 0;
}
