#include "routines/attention/flashinfer_backends.hpp"

#include "backends/flashinfer/flashinfer_decode.hpp"
#include "backends/flashinfer/flashinfer_mla.hpp"
#include "backends/flashinfer/flashinfer_prefill.hpp"
#include "kbench/cuda_check.hpp"

namespace kbench {
namespace {

namespace fi = backends::flashinfer;

Support sm90(const DeviceInfo& device) {
  // kbench builds FlashInfer's kernels for sm_90a alone (cmake/KbenchFlashinfer.cmake).
  if (device.cc_major != 9 || device.cc_minor != 0) return Support::no("kbench builds FlashInfer's kernels for sm_90a only");
  return Support::yes();
}

fi::DecodePath decode_path(bool tensor_cores) {
  return tensor_cores ? fi::DecodePath::tensor_cores : fi::DecodePath::cuda_cores;
}

fi::DecodeShape decode_shape(const DecodeCase& problem) {
  const DecodeProblem& p = problem.problem();
  fi::DecodeShape s;
  s.batch = p.batch;
  s.num_qo_heads = p.num_qo_heads;
  s.num_kv_heads = p.num_kv_heads;
  s.head_dim = p.head_dim;
  s.page_size = p.page_size;
  s.num_pages = p.pages.total_pages;
  s.layout = p.layout;
  s.q_dtype = p.q_dtype;
  s.kv_dtype = p.kv_dtype;
  s.out_dtype = p.out_dtype;
  s.sm_scale = problem.sm_scale();
  s.indptr = p.pages.indptr;
  s.last_page_len = p.pages.last_page_len;
  s.enable_pdl = p.enable_pdl;
  return s;
}

fi::PrefillPath prefill_path(bool fa3) { return fa3 ? fi::PrefillPath::fa3 : fi::PrefillPath::fa2; }

fi::PrefillShape prefill_shape(const PrefillCase& problem) {
  const PrefillProblem& p = problem.problem();
  fi::PrefillShape s;
  s.batch = p.batch;
  s.num_qo_heads = p.num_qo_heads;
  s.num_kv_heads = p.num_kv_heads;
  s.head_dim_qk = p.head_dim_qk;
  s.head_dim_vo = p.head_dim_vo;
  s.paged = p.paged;
  s.page_size = p.page_size;
  s.num_pages = p.pages.total_pages;
  s.layout = p.layout;
  s.causal = p.causal;
  s.q_dtype = p.q_dtype;
  s.kv_dtype = p.kv_dtype;
  s.out_dtype = p.out_dtype;
  s.sm_scale = problem.sm_scale();
  s.qo_indptr = p.qo_indptr;
  s.kv_indptr = p.paged ? p.pages.indptr : p.kv_token_indptr;
  s.kv_lens = p.lens.kv;
  s.last_page_len = p.pages.last_page_len;
  s.enable_pdl = p.enable_pdl;
  return s;
}

fi::MlaPath mla_path(bool fa3) { return fa3 ? fi::MlaPath::fa3 : fi::MlaPath::fa2; }

fi::MlaShape mla_shape(const MlaCase& problem) {
  const MlaProblem& p = problem.problem();
  fi::MlaShape s;
  s.batch = p.batch;
  s.s_qo = p.s_qo;
  s.num_heads = p.num_heads;
  s.head_dim_ckv = p.head_dim_ckv;
  s.head_dim_kpe = p.head_dim_kpe;
  s.page_size = p.page_size;
  s.num_pages = p.pages.total_pages;
  s.q_dtype = p.q_dtype;
  s.kv_dtype = p.kv_dtype;
  s.out_dtype = p.out_dtype;
  s.sm_scale = MlaCase::sm_scale();
  s.qo_indptr = p.qo_indptr;
  s.kv_indptr = p.pages.indptr;
  s.kv_len = p.pages.seq_lens;
  return s;
}

class FlashinferDecodeOperation final : public Operation {
 public:
  FlashinferDecodeOperation(bool tensor_cores, const DecodeCase& problem, cudaStream_t stream)
      : problem_(problem),
        decode_(make_vendor_object<fi::Decode>("FlashInfer", decode_path(tensor_cores), decode_shape(problem), stream)) {}
  void launch(cudaStream_t stream, int copy) override {
    const kernels::DecodeParams k = problem_.params(copy);
    const DecodeTables t = problem_.tables();
    KBENCH_CUDA_CHECK(decode_->run({k.q, k.kv.data, t.indptr, t.indices, t.last_page_len, k.out}, stream));
  }

 private:
  const DecodeCase& problem_;
  std::unique_ptr<fi::Decode> decode_;
};

class FlashinferPrefillOperation final : public Operation {
 public:
  FlashinferPrefillOperation(bool fa3, const PrefillCase& problem, cudaStream_t stream)
      : problem_(problem),
        prefill_(make_vendor_object<fi::Prefill>("FlashInfer", prefill_path(fa3), prefill_shape(problem), stream)) {}
  void launch(cudaStream_t stream, int copy) override {
    const kernels::PrefillParams k = problem_.params(copy);
    fi::PrefillTensors t;
    t.q = k.q;
    t.qo_indptr = k.qo_indptr;
    t.out = k.out;
    if (problem_.problem().paged) {
      t.kv_cache = k.pages.data;
      t.kv_indptr = k.pages.indptr;
      t.kv_indices = k.pages.indices;
      t.last_page_len = k.pages.last_page_len;
    } else {
      t.k = k.ragged.k;
      t.v = k.ragged.v;
      t.kv_indptr = k.ragged.indptr;
    }
    KBENCH_CUDA_CHECK(prefill_->run(t, stream));
  }

 private:
  const PrefillCase& problem_;
  std::unique_ptr<fi::Prefill> prefill_;
};

class FlashinferMlaOperation final : public Operation {
 public:
  FlashinferMlaOperation(bool fa3, const MlaCase& problem, cudaStream_t stream)
      : problem_(problem), mla_(make_vendor_object<fi::Mla>("FlashInfer", mla_path(fa3), mla_shape(problem), stream)) {}
  void launch(cudaStream_t stream, int copy) override {
    const kernels::MlaParams k = problem_.params(copy);
    KBENCH_CUDA_CHECK(mla_->run({k.q_nope, k.q_pe, k.ckv, k.kpe, k.kv_indices, problem_.out(copy)}, stream));
  }

 private:
  const MlaCase& problem_;
  std::unique_ptr<fi::Mla> mla_;
};

}  // namespace

FlashinferDecodeBackend::FlashinferDecodeBackend(BackendInfo info)
    : BackendFor(std::move(info)), tensor_cores_(name() == "flashinfer_fa2_tc") {}

Support FlashinferDecodeBackend::can_run_on(const DeviceInfo& device) const { return sm90(device); }

Support FlashinferDecodeBackend::implements(const DecodeCase& problem) const {
  if (problem.problem().out_nvfp4) return Support::no("FlashInfer's sm_90 decode writes no nvfp4 output");
  if (const auto why = fi::decode_unsupported(decode_path(tensor_cores_), decode_shape(problem))) return Support::no(*why);
  return Support::yes();
}

std::unique_ptr<Operation> FlashinferDecodeBackend::bind(DecodeCase& problem, cudaStream_t stream) const {
  return std::make_unique<FlashinferDecodeOperation>(tensor_cores_, problem, stream);
}

FlashinferPrefillBackend::FlashinferPrefillBackend(BackendInfo info)
    : BackendFor(std::move(info)), fa3_(name() == "flashinfer_fa3") {}

Support FlashinferPrefillBackend::can_run_on(const DeviceInfo& device) const { return sm90(device); }

Support FlashinferPrefillBackend::implements(const PrefillCase& problem) const {
  if (const auto why = fi::prefill_unsupported(prefill_path(fa3_), prefill_shape(problem))) return Support::no(*why);
  return Support::yes();
}

std::unique_ptr<Operation> FlashinferPrefillBackend::bind(PrefillCase& problem, cudaStream_t stream) const {
  return std::make_unique<FlashinferPrefillOperation>(fa3_, problem, stream);
}

FlashinferMlaBackend::FlashinferMlaBackend(BackendInfo info)
    : BackendFor(std::move(info)), fa3_(name() == "flashinfer_fa3") {}

Support FlashinferMlaBackend::can_run_on(const DeviceInfo& device) const { return sm90(device); }

Support FlashinferMlaBackend::implements(const MlaCase& problem) const {
  if (const auto why = fi::mla_unsupported(mla_path(fa3_), mla_shape(problem))) return Support::no(*why);
  return Support::yes();
}

std::unique_ptr<Operation> FlashinferMlaBackend::bind(MlaCase& problem, cudaStream_t stream) const {
  return std::make_unique<FlashinferMlaOperation>(fa3_, problem, stream);
}

}  // namespace kbench
