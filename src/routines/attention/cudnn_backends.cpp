#include "routines/attention/cudnn_backends.hpp"

#include "backends/cudnn/cudnn_paged_decode.hpp"
#include "backends/cudnn/cudnn_prefill.hpp"
#include "kbench/cuda_check.hpp"

namespace kbench {
namespace {

Support sm80_or_newer(const DeviceInfo& device) {
  if (device.cc_major < 8) return Support::no("kbench runs cuDNN's SDPA on sm_80+");
  return Support::yes();
}

backends::CudnnPagedDecodeShape decode_shape(const DecodeCase& problem) {
  const DecodeProblem& p = problem.problem();
  return {p.batch,     p.num_qo_heads, p.num_kv_heads, p.head_dim, p.page_size, p.pages.total_pages,
          p.pages.pages_per_request, p.q_dtype, p.kv_dtype, p.out_dtype, p.layout, problem.sm_scale()};
}

backends::CudnnPrefillShape prefill_shape(const PrefillCase& problem) {
  const PrefillProblem& p = problem.problem();
  backends::CudnnPrefillShape s;
  s.batch = p.batch;
  s.num_qo_heads = p.num_qo_heads;
  s.num_kv_heads = p.num_kv_heads;
  s.head_dim_qk = p.head_dim_qk;
  s.head_dim_vo = p.head_dim_vo;
  s.max_q_len = p.s_qo;
  s.max_kv_len = p.s_kv;
  s.qo_indptr = p.qo_indptr;
  s.kv_indptr = p.kv_token_indptr;
  s.paged = p.paged;
  if (p.paged) {
    s.page_size = p.page_size;
    s.num_pages = p.pages.total_pages;
    s.max_pages_per_request = p.pages.pages_per_request;
    s.layout = p.layout;
  }
  s.causal = p.causal;
  s.q_dtype = p.q_dtype;
  s.kv_dtype = p.kv_dtype;
  s.out_dtype = p.out_dtype;
  s.sm_scale = problem.sm_scale();
  return s;
}

class CudnnDecodeOperation final : public Operation {
 public:
  CudnnDecodeOperation(const DecodeCase& problem, cudaStream_t stream)
      : problem_(problem), graph_(make_vendor_object<backends::CudnnPagedDecode>("cuDNN", decode_shape(problem))) {
    // cuDNN loads its kernels on first use: once eagerly, so graph capture sees none of that.
    launch(stream, 0);
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void launch(cudaStream_t stream, int copy) override {
    const kernels::DecodeParams k = problem_.params(copy);
    const DecodeTables t = problem_.tables();
    graph_->run(k.q, k.kv.data, t.block_table, t.seq_len_kv, t.seq_len_q, k.out, stream);
  }

 private:
  const DecodeCase& problem_;
  std::unique_ptr<backends::CudnnPagedDecode> graph_;
};

class CudnnPrefillOperation final : public Operation {
 public:
  CudnnPrefillOperation(const PrefillCase& problem, cudaStream_t stream)
      : problem_(problem), graph_(make_vendor_object<backends::CudnnPrefill>("cuDNN", prefill_shape(problem))) {
    launch(stream, 0);  // cuDNN's lazy kernel loading, outside graph capture
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void launch(cudaStream_t stream, int copy) override {
    const kernels::PrefillParams k = problem_.params(copy);
    backends::CudnnPrefillData data;
    data.q = k.q;
    data.out = k.out;
    if (problem_.problem().paged) {
      data.kv_cache = k.pages.data;
      data.block_table = problem_.block_table();
    } else {
      data.k = k.ragged.k;
      data.v = k.ragged.v;
    }
    graph_->run(data, stream);
  }

 private:
  const PrefillCase& problem_;
  std::unique_ptr<backends::CudnnPrefill> graph_;
};

}  // namespace

Support CudnnDecodeBackend::can_run_on(const DeviceInfo& device) const { return sm80_or_newer(device); }

Support CudnnDecodeBackend::implements(const DecodeCase& problem) const {
  if (problem.problem().out_nvfp4) return Support::no("cuDNN's SDPA writes no nvfp4 output");
  if (const auto why = backends::cudnn_paged_decode_unsupported(decode_shape(problem))) return Support::no(*why);
  return Support::yes();
}

std::unique_ptr<Operation> CudnnDecodeBackend::bind(DecodeCase& problem, cudaStream_t stream) const {
  return std::make_unique<CudnnDecodeOperation>(problem, stream);
}

Support CudnnPrefillBackend::can_run_on(const DeviceInfo& device) const { return sm80_or_newer(device); }

Support CudnnPrefillBackend::implements(const PrefillCase& problem) const {
  if (const auto why = backends::cudnn_prefill_unsupported(prefill_shape(problem))) return Support::no(*why);
  return Support::yes();
}

std::unique_ptr<Operation> CudnnPrefillBackend::bind(PrefillCase& problem, cudaStream_t stream) const {
  return std::make_unique<CudnnPrefillOperation>(problem, stream);
}

}  // namespace kbench
