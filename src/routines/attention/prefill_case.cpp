#include "routines/attention/prefill_case.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "backends/cudnn/cudnn_prefill.hpp"
#include "core/log.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/attention/attention_formulas.hpp"
#include "routines/device_tensors.hpp"

namespace kbench {
namespace {

// Tensor ids for tensor_seed.
enum TensorId { kQ = 32, kK = 33, kV = 34 };

std::optional<kernels::PrefillKernel> kernel_of(std::string_view backend) {
  if (backend == "fa2") return kernels::PrefillKernel::fa2;
  if (backend == "fa3") return kernels::PrefillKernel::fa3;
  return std::nullopt;
}

int64_t average(const std::vector<int32_t>& lens) {
  const int64_t total = std::accumulate(lens.begin(), lens.end(), int64_t{0});
  return lens.empty() ? 0 : total / static_cast<int64_t>(lens.size());
}

}  // namespace

PrefillCase::PrefillCase(PrefillProblem problem) : p_(std::move(problem)) {
  if (is_fp8(p_.q_dtype)) q_scale_ = 1.0f / kFp8DataScale;
  if (is_fp8(p_.kv_dtype)) kv_scale_ = 1.0f / kFp8DataScale;
}

PrefillCase::~PrefillCase() = default;

double PrefillCase::flops() const {
  return attention_flops({p_.num_qo_heads, p_.num_kv_heads, p_.head_dim_qk, p_.head_dim_vo, p_.causal}, p_.lens.q,
                         p_.lens.kv);
}

double PrefillCase::bytes() const {
  const AttentionSizes sizes{p_.num_qo_heads,
                             p_.num_kv_heads,
                             p_.head_dim_qk,
                             p_.head_dim_vo,
                             p_.causal,
                             static_cast<double>(dtype_size(p_.q_dtype)),
                             static_cast<double>(dtype_size(p_.kv_dtype)),
                             static_cast<double>(dtype_size(p_.out_dtype))};
  return attention_bytes(sizes, p_.lens.q, p_.lens.kv);
}

std::size_t PrefillCase::bytes_per_copy() const {
  return p_.q_elements() * dtype_size(p_.q_dtype) + (p_.k_elements() + p_.v_elements()) * dtype_size(p_.kv_dtype) +
         p_.out_elements() * dtype_size(p_.out_dtype);
}

std::size_t PrefillCase::reference_bytes() const { return 2 * p_.out_elements() * sizeof(float); }

std::vector<TensorInfo> PrefillCase::tensors() const {
  const int64_t b = p_.batch, hq = p_.num_qo_heads, hkv = p_.num_kv_heads;
  const int64_t dqk = p_.head_dim_qk, dvo = p_.head_dim_vo;
  const int64_t tokens_q = p_.qo_indptr.back();
  const TensorInfo q{"q", {tokens_q, hq, dqk}, {hq * dqk, dqk, 1}, p_.q_dtype};
  const TensorInfo out{"out", {tokens_q, hq, dvo}, {hq * dvo, dvo, 1}, p_.out_dtype};
  const TensorInfo qo_indptr{"qo_indptr", {b + 1}, {1}, DType::int32};
  const TensorInfo kv_indptr{"kv_indptr", {b + 1}, {1}, DType::int32};
  if (!p_.paged) {
    const int64_t tokens_kv = p_.kv_token_indptr.back();
    return {q,
            {"k", {tokens_kv, hkv, dqk}, {hkv * dqk, dqk, 1}, p_.kv_dtype},
            {"v", {tokens_kv, hkv, dvo}, {hkv * dvo, dvo, 1}, p_.kv_dtype},
            qo_indptr,
            kv_indptr,
            out};
  }
  const int64_t pages = p_.pages.total_pages, ps = p_.page_size, d = dqk;
  // Logically (pages, 2, H_kv, page_size, D), as the reference prints it; strides tell the layout.
  const std::vector<int64_t> stride = p_.layout == kernels::KvLayout::NHD
                                          ? std::vector<int64_t>{2 * ps * hkv * d, ps * hkv * d, d, hkv * d, 1}
                                          : std::vector<int64_t>{2 * hkv * ps * d, hkv * ps * d, ps * d, d, 1};
  return {q,
          {"kv_cache", {pages, 2, hkv, ps, d}, stride, p_.kv_dtype},
          {"block_tables", {b, p_.pages.pages_per_request}, {p_.pages.pages_per_request, 1}, DType::int32},
          qo_indptr,
          kv_indptr,
          {"kv_indices", {static_cast<int64_t>(p_.pages.indices.size())}, {1}, DType::int32},
          {"kv_last_page_len", {b}, {1}, DType::int32},
          out};
}

void PrefillCase::describe(const Log& log) const {
  log.vverbose(p_.s_qo == p_.s_kv ? "s_qo == s_kv, making actual_seq_lens_kv the same as actual_seq_lens_q"
                                  : "s_qo < s_kv, sampling actual_seq_lens_kv");
  log.verbose("Average actual qo seq len: " + std::to_string(average(p_.lens.q)));
  log.verbose("Average actual kv seq len: " + std::to_string(average(p_.lens.kv)));
  log.vverbose("actual_seq_lens_q.flatten() = " + lengths_text(p_.lens.q));
  log.vverbose("actual_seq_lens_kv.flatten() = " + lengths_text(p_.lens.kv));
  if (p_.paged) {
    log.vverbose("num_pages_per_seq = " + std::to_string(p_.pages.pages_per_request));
    log.vverbose("total_num_pages = " + std::to_string(p_.pages.total_pages));
  }
  log.vverbose("scale = " + python_float(1.0 / std::sqrt(static_cast<double>(p_.head_dim_qk))));
  if (is_fp8(p_.q_dtype)) log.vverbose("q_scale = " + python_float(q_scale_));
  if (is_fp8(p_.kv_dtype)) log.vverbose("k_scale = v_scale = " + python_float(kv_scale_));
  if (p_.cudnn_native_requested) {
    log.info("kbench runs cudnn-native as its cudnn backend (cuDNN's SDPA graph through cudnn_frontend; the "
             "reference's wrapper and direct calls reach the same cuDNN kernels)");
  }
}

std::string PrefillCase::resolved_backend(std::string_view backend) const {
  if (backend == "cudnn-native") return "cudnn";
  if (backend != "auto") return std::string(backend);
  // fa3 (TMA + wgmma) where its kernel takes the case on this GPU (Hopper), else fa2.
  if (!auto_choice_) {
    auto_choice_ = kernels::prefill_supported(kernels::PrefillKernel::fa3, params(Copy{})) ? "fa3" : "fa2";
  }
  return *auto_choice_;
}

BackendSupport PrefillCase::support(std::string_view backend) const {
  if (backend == "auto") return support(resolved_backend(backend));
  if (backend == "cudnn" || backend == "cudnn-native") {
    if (const auto why = backends::cudnn_prefill_unsupported(cudnn_shape())) return {false, *why};
    return {true, ""};
  }
  const auto kernel = kernel_of(backend);
  if (!kernel) return {false, "kbench has no " + std::string(backend) + " backend for this routine"};
  if (*kernel == kernels::PrefillKernel::fa2 && (is_fp8(p_.q_dtype) || is_fp8(p_.kv_dtype))) {
    return {false, "fa2 takes bfloat16 or float16 q and KV; fp8 runs on fa3"};
  }
  if (!kernels::prefill_supported(*kernel, params(Copy{}))) {
    return {false, "its kernel does not take this shape or dtype combination (q " + std::string(dtype_name(p_.q_dtype)) +
                       ", kv " + std::string(dtype_name(p_.kv_dtype)) + ", out " +
                       std::string(dtype_name(p_.out_dtype)) + ", head_dim_qk " + std::to_string(p_.head_dim_qk) +
                       ", head_dim_vo " + std::to_string(p_.head_dim_vo) + ", group " + std::to_string(p_.group()) +
                       (p_.paged ? ", page_size " + std::to_string(p_.page_size) : std::string(", ragged")) + ")"};
  }
  return {true, ""};
}

std::vector<std::pair<std::string, std::string>> PrefillCase::result_columns() const {
  // The reference's prefill rows report the average query length.
  return {{"avg_actual_seq_len", std::to_string(average(p_.lens.q))}};
}

backends::CudnnPrefillShape PrefillCase::cudnn_shape() const {
  backends::CudnnPrefillShape s;
  s.batch = p_.batch;
  s.num_qo_heads = p_.num_qo_heads;
  s.num_kv_heads = p_.num_kv_heads;
  s.head_dim_qk = p_.head_dim_qk;
  s.head_dim_vo = p_.head_dim_vo;
  s.max_q_len = p_.s_qo;
  s.max_kv_len = p_.s_kv;
  s.qo_indptr = p_.qo_indptr;
  s.kv_indptr = p_.kv_token_indptr;
  s.paged = p_.paged;
  if (p_.paged) {
    s.page_size = p_.page_size;
    s.num_pages = p_.pages.total_pages;
    s.max_pages_per_request = p_.pages.pages_per_request;
    s.layout = p_.layout;
  }
  s.causal = p_.causal;
  s.q_dtype = p_.q_dtype;
  s.kv_dtype = p_.kv_dtype;
  s.out_dtype = p_.out_dtype;
  s.sm_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p_.head_dim_qk)));
  return s;
}

kernels::PrefillParams PrefillCase::params(const Copy& copy) const {
  kernels::PrefillParams k;
  k.q = copy.q.get();
  k.q_dtype = p_.q_dtype;
  k.q_scale = q_scale_;
  k.qo_indptr = qo_indptr_.as<int32_t>();
  k.out = copy.out.get();
  k.out_dtype = p_.out_dtype;
  k.paged = p_.paged;
  if (p_.paged) {
    k.pages.data = copy.k.get();
    k.pages.layout = p_.layout;
    k.pages.page_size = p_.page_size;
    k.pages.indptr = kv_indptr_.as<int32_t>();
    k.pages.indices = kv_indices_.as<int32_t>();
    k.pages.last_page_len = last_page_len_.as<int32_t>();
  } else {
    k.ragged.k = copy.k.get();
    k.ragged.v = copy.v.get();
    k.ragged.indptr = kv_indptr_.as<int32_t>();
  }
  k.kv_dtype = p_.kv_dtype;
  k.k_scale = kv_scale_;
  k.v_scale = kv_scale_;
  k.batch = p_.batch;
  k.num_qo_heads = p_.num_qo_heads;
  k.num_kv_heads = p_.num_kv_heads;
  k.head_dim_qk = p_.head_dim_qk;
  k.head_dim_vo = p_.head_dim_vo;
  k.causal = p_.causal;
  k.sm_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p_.head_dim_qk)));
  k.enable_pdl = p_.enable_pdl;
  return k;
}

void PrefillCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  qo_indptr_ = upload(p_.qo_indptr, stream);
  if (p_.paged) {
    kv_indptr_ = upload(p_.pages.indptr, stream);
    kv_indices_ = upload(p_.pages.indices, stream);
    last_page_len_ = upload(p_.pages.last_page_len, stream);
    block_table_ = upload(p_.pages.block_table, stream);
  } else {
    kv_indptr_ = upload(p_.kv_token_indptr, stream);
  }
  reference_ = DeviceBuffer();
  const float q_std = is_fp8(p_.q_dtype) ? kFp8DataScale : 1.0f;
  const float kv_std = is_fp8(p_.kv_dtype) ? kFp8DataScale : 1.0f;
  auto filled = [&](std::size_t elements, DType dtype, uint64_t tensor_seed_value, float stddev) {
    DeviceBuffer buffer(elements * dtype_size(dtype));
    KBENCH_CUDA_CHECK(kernels::fill_normal(buffer.get(), dtype, static_cast<int64_t>(elements), tensor_seed_value, 0.0f,
                                           stddev, stream));
    return buffer;
  };
  copies_.clear();
  for (int i = 0; i < copies; ++i) {
    Copy c;
    c.q = filled(p_.q_elements(), p_.q_dtype, tensor_seed(seed, i, kQ), q_std);
    c.k = filled(p_.k_elements(), p_.kv_dtype, tensor_seed(seed, i, kK), kv_std);
    if (!p_.paged) c.v = filled(p_.v_elements(), p_.kv_dtype, tensor_seed(seed, i, kV), kv_std);
    c.out = DeviceBuffer(p_.out_elements() * dtype_size(p_.out_dtype));
    KBENCH_CUDA_CHECK(kernels::poison(c.out.get(), static_cast<int64_t>(c.out.bytes()), stream));
    copies_.push_back(std::move(c));
  }
}

void PrefillCase::prepare(std::string_view requested, cudaStream_t stream) {
  const std::string backend = resolved_backend(requested);
  if (const auto kernel = kernel_of(backend)) {
    std::optional<KernelPlan>& slot = *kernel == kernels::PrefillKernel::fa2 ? fa2_plan_ : fa3_plan_;
    if (slot) return;
    const int sms = current_device_sm_count();
    const std::vector<kernels::PrefillWorkItem> items =
        kernels::plan_prefill(*kernel, params(copies_.front()), p_.qo_indptr,
                              p_.paged ? p_.pages.indptr : p_.kv_token_indptr, p_.pages.last_page_len, sms);
    KernelPlan k{upload(items, stream), {}};
    k.view.items = k.items.as<kernels::PrefillWorkItem>();
    k.view.num_items = static_cast<int>(items.size());
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    slot = std::move(k);
  } else if (backend == "cudnn" && !cudnn_) {
    cudnn_ = make_vendor_backend<backends::CudnnPrefill>("cuDNN", cudnn_shape());
    // cuDNN loads its kernels on first use: once eagerly, so graph capture sees none of that.
    launch(backend, stream, 0);
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

void PrefillCase::launch(std::string_view requested, cudaStream_t stream, int copy) {
  const std::string backend = resolved_backend(requested);
  const Copy& c = copies_.at(static_cast<std::size_t>(copy));
  if (const auto kernel = kernel_of(backend)) {
    const std::optional<KernelPlan>& plan = *kernel == kernels::PrefillKernel::fa2 ? fa2_plan_ : fa3_plan_;
    if (!plan) throw std::logic_error("prefill: " + backend + " launched before prepare()");
    KBENCH_CUDA_CHECK(kernels::launch_prefill(*kernel, params(c), plan->view, stream));
  } else if (backend == "cudnn") {
    if (!cudnn_) throw std::logic_error("prefill: cudnn launched before prepare()");
    backends::CudnnPrefillData data;
    data.q = c.q.get();
    data.out = c.out.get();
    if (p_.paged) {
      data.kv_cache = c.k.get();
      data.block_table = block_table_.as<int32_t>();
    } else {
      data.k = c.k.get();
      data.v = c.v.get();
    }
    cudnn_->run(data, stream);
  } else {
    throw std::logic_error("prefill: no backend " + backend);
  }
}

RefcheckResult PrefillCase::check(std::string_view backend, cudaStream_t stream) {
  const Copy& c = copies_.front();
  const std::size_t n = p_.out_elements();
  if (reference_.get() == nullptr) {  // the inputs never change: one reference serves every backend
    reference_ = DeviceBuffer(n * sizeof(float));
    KBENCH_CUDA_CHECK(kernels::launch_prefill_reference(params(c), reference_.as<float>(), stream));
  }
  KBENCH_CUDA_CHECK(kernels::poison(c.out.get(), static_cast<int64_t>(c.out.bytes()), stream));
  launch(backend, stream, 0);
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  DeviceBuffer scratch(n * sizeof(float));
  const std::vector<float> expected = to_host_floats(reference_.get(), DType::float32, n, scratch.as<float>(), stream);
  const std::vector<float> got = to_host_floats(c.out.get(), p_.out_dtype, n, scratch.as<float>(), stream);
  // compat.md: attention rtol 0.2, atol 0.01; fp8 inputs 0.5, 0.1.
  const bool fp8_inputs = is_fp8(p_.q_dtype) || is_fp8(p_.kv_dtype);
  const Tolerance tolerance = fp8_inputs ? Tolerance{0.5, 0.1} : Tolerance{0.2, 0.01};
  RefcheckResult result;
  result.comparisons.push_back(compare_isclose("out", expected, got, tolerance));
  return result;
}

}  // namespace kbench
