// Row kernels for float32 inputs (probabilities, logits, scores) and the chain speculative sampling
// kernel (float32 probabilities only).
#include "kernels/sampling/row_kernels.cuh"

namespace kbench::kernels::sampling_detail {
namespace {

__global__ void __launch_bounds__(kMaxThreads, kCtasPerSm) chain_speculative_kernel(ChainArgs a) {
#if defined(KBENCH_SAMPLING_SM90)
  extern __shared__ __align__(16) unsigned char dyn[];
  __shared__ Shared sh;
  Cluster cluster = Cluster::here();
  const int64_t row = blockIdx.x / cluster.size;
  const int64_t n = a.n;
  // The acceptance tests, in every thread (n scalar reads, the same in every CTA): draw i decides
  // draft position i, draw n the replacement token.
  int64_t stop = n;
  int32_t accepted = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t t = a.draft_ids[row * n + i];
    bool ok = false;
    if (t >= 0 && t < a.cols) {
      const float q = a.target_probs[(row * (n + 1) + i) * a.cols + t];
      const float p = a.draft_probs[(row * n + i) * a.cols + t];
      ok = philox_uniform(a.rng, row, static_cast<uint32_t>(i)) * p < q;
    }
    accepted += ok ? 1 : 0;
    if (!ok && stop == n) stop = i;
  }
  const int64_t begin = static_cast<int64_t>(cluster.rank) * a.slice;
  const int n_slice = static_cast<int>(slice_length(a.cols, a.slice, cluster.rank));
  auto* q_buffer = reinterpret_cast<float*>(dyn);
  auto* p_buffer = reinterpret_cast<float*>(dyn + buffer_bytes(a.slice, sizeof(float)));
  const float* q = load_slice(a.target_probs + (row * (n + 1) + stop) * a.cols + begin, n_slice, q_buffer);
  const float* p = nullptr;
  if (stop < n) p = load_slice(a.draft_probs + (row * n + stop) * a.cols + begin, n_slice, p_buffer);
  const ResidualView view{q, p, n_slice, begin};
  const Draw d = draw(view, 0u, partial_mass(view, 0u), philox_uniform(a.rng, row, static_cast<uint32_t>(n)), sh,
                      cluster);
  if (cluster.rank == 0) {
    for (int64_t j = threadIdx.x; j <= n; j += blockDim.x) {
      int32_t id = -1;
      if (j < stop) id = a.draft_ids[row * n + j];
      if (j == stop) id = d.pick.valid ? d.pick.index : -1;
      a.output_ids[row * (n + 1) + j] = id;
    }
    if (threadIdx.x == 0) {
      a.accepted[row] = accepted;
      a.emitted[row] = static_cast<int32_t>(stop);
    }
  }
  cluster.finish();
#endif
}

}  // namespace

RowKernels row_kernels_f32() { return {sampler_kernel<float>, filter_kernel<float>, top_k_kernel<float>, top_k_estimate_kernel<float>, top_k_filter_kernel<float>, top_k_merge_kernel<float>, sampler_merge_kernel<float>}; }

void (*chain_kernel())(ChainArgs) { return chain_speculative_kernel; }

}  // namespace kbench::kernels::sampling_detail
