// The flashinfer sampling backend's API (flashinfer_sampling.hpp): checks, workspaces, and each
// routine as flashinfer's Python API sequences FlashInfer's kernels. No FlashInfer header: the
// kernels live in sampling_float.cu and topk_<dtype>.cu.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "backends/flashinfer/fi_internal.hpp"
#include "backends/flashinfer/fi_sampling_internal.hpp"
#include "backends/flashinfer/flashinfer_sampling.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"

namespace kbench::backends::flashinfer {
namespace {

// flashinfer.sampling's top_k_first fast path (radix top-k of k values, then top-p over them):
// k <= 256, vocabularies from 65536.
constexpr int64_t kFastPathMaxK = 256;
constexpr int64_t kFastPathMinVocab = 65536;

bool reads_probabilities(SamplingOp op) {
  switch (op) {
    case SamplingOp::sampling_from_probs:
    case SamplingOp::top_k_sampling:
    case SamplingOp::top_p_sampling:
    case SamplingOp::top_k_top_p_from_probs:
    case SamplingOp::min_p_sampling:
    case SamplingOp::top_p_renorm:
    case SamplingOp::chain_speculative: return true;
    default: return false;
  }
}

bool top_k_first_fast_path(const SamplingShape& s) {
  return (s.op == SamplingOp::top_k_top_p_from_probs || s.op == SamplingOp::top_k_top_p_from_logits) && !s.joint &&
         s.top_k > 0 && s.top_k <= kFastPathMaxK && s.cols >= kFastPathMinVocab && s.top_k < s.cols;
}

const detail::TopKKernels& typed(DType t) {
  static const detail::TopKKernels f32 = detail::topk_f32();
  static const detail::TopKKernels f16 = detail::topk_f16();
  static const detail::TopKKernels bf16 = detail::topk_bf16();
  return t == DType::float16 ? f16 : (t == DType::bfloat16 ? bf16 : f32);
}

std::size_t elements(int64_t a, int64_t b) { return static_cast<std::size_t>(a * b); }

}  // namespace

std::optional<std::string> sampling_unsupported(const SamplingShape& s) {
  if (s.dtype != DType::float32 && s.dtype != DType::float16 && s.dtype != DType::bfloat16) {
    return "FlashInfer's sampling kernels take float32, float16 or bfloat16, not " + std::string(dtype_name(s.dtype));
  }
  if (reads_probabilities(s.op) && s.dtype != DType::float32) {
    return "flashinfer's Python API runs this routine on float32 probabilities";
  }
  if (s.rows <= 0 || s.cols <= 0) return "empty problem";
  if (s.rows > 0x7FFFFFFF || s.cols > 0x7FFFFFFF || s.rows * s.cols > 0xFFFFFFFFll) {
    return "FlashInfer's sampling kernels index rows and columns with 32 bits";
  }
  if (s.op == SamplingOp::chain_speculative && s.n < 1) return "no speculative tokens";
  return detail::device_unsupported(/*need_sm90=*/false);
}

class Sampling::Impl {
 public:
  Impl(const SamplingShape& s, cudaStream_t stream) : s_(s) {
    if (auto why = sampling_unsupported(s)) throw std::runtime_error("flashinfer sampling: " + *why);
    const int64_t rows = s.rows, cols = s.cols, k = s.top_k;
    const bool logits_routine = s.op == SamplingOp::softmax || s.op == SamplingOp::sampling_from_logits ||
                                s.op == SamplingOp::top_k_top_p_from_logits;
    row_states_ = DeviceBuffer(detail::kRowStateBytes);
    KBENCH_CUDA_CHECK(cudaMemsetAsync(row_states_.get(), 0, row_states_.bytes(), stream));
    valid_ = DeviceBuffer(static_cast<std::size_t>(rows));
    if (logits_routine && s.dtype != DType::float32) float_a_ = DeviceBuffer(elements(rows, cols) * 4);
    if (s.op == SamplingOp::softmax || (s.op == SamplingOp::top_k_top_p_from_logits && !top_k_first_fast_path(s))) {
      softmax_bytes_ = detail::softmax_workspace_bytes(rows, cols);
      softmax_ws_ = DeviceBuffer(softmax_bytes_);
    }
    if (s.op == SamplingOp::top_k_top_p_from_logits && !top_k_first_fast_path(s)) {
      float_a_ = DeviceBuffer(elements(rows, cols) * 4);
      float_b_ = DeviceBuffer(elements(rows, cols) * 4);
      if (!s.joint) masked_ = DeviceBuffer(elements(rows, cols) * dtype_size(s.dtype));
    }
    if (s.op == SamplingOp::top_k_top_p_from_probs && !s.joint && !top_k_first_fast_path(s)) {
      float_a_ = DeviceBuffer(elements(rows, cols) * 4);
    }
    if (top_k_first_fast_path(s) || s.op == SamplingOp::top_k) {
      indices_ = DeviceBuffer(elements(rows, k) * 4);
      values_ = DeviceBuffer(elements(rows, k) * dtype_size(s.dtype));
      probs_k_ = DeviceBuffer(elements(rows, k) * 4);
      local_ = DeviceBuffer(elements(rows, 1) * 4);
    }
    if (s.op == SamplingOp::top_p_renorm) air_ws_ = DeviceBuffer(detail::top_p_renorm_workspace_bytes(rows, cols));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  cudaError_t run(const SamplingTensors& t, cudaStream_t stream) const {
    const int64_t rows = s_.rows, cols = s_.cols, k = s_.top_k;
    const detail::TopKKernels& kt = typed(s_.dtype);
    const auto* probs = static_cast<const float*>(t.input);
    auto* samples = static_cast<int32_t*>(t.output);
    bool* valid = valid_.as<bool>();
    void* states = row_states_.get();
    cudaError_t status = cudaSuccess;
    // logits.float(): a copy where the logits are not float32 already.
    const auto as_float = [&](const void* in) -> const float* {
      if (s_.dtype == DType::float32) return static_cast<const float*>(in);
      status = kt.to_float(in, float_a_.as<float>(), rows * cols, stream);
      return float_a_.as<const float>();
    };
    switch (s_.op) {
      case SamplingOp::softmax: {
        const float* logits = as_float(t.input);
        if (status != cudaSuccess) return status;
        return detail::softmax(logits, static_cast<float*>(t.output), rows, cols, s_.temperature, softmax_ws_.get(),
                               softmax_bytes_, s_.enable_pdl, stream);
      }
      case SamplingOp::sampling_from_probs: return detail::sampling_from_probs(probs, samples, valid, rows, cols, t.rng, stream);
      case SamplingOp::sampling_from_logits: {
        const float* logits = as_float(t.input);
        if (status != cudaSuccess) return status;
        return detail::sampling_from_logits(logits, samples, rows, cols, t.rng, stream);
      }
      case SamplingOp::top_k_sampling: return detail::top_k_sampling(probs, samples, valid, rows, cols, k, t.rng, stream);
      case SamplingOp::top_p_sampling:
        return detail::top_p_sampling(probs, samples, valid, rows, cols, s_.top_p, t.rng, stream);
      case SamplingOp::min_p_sampling:
        return detail::min_p_sampling(probs, samples, valid, rows, cols, s_.min_p, t.rng, stream);
      case SamplingOp::top_k_top_p_from_probs:
      case SamplingOp::top_k_top_p_from_logits: return top_k_top_p(t, kt, stream);
      case SamplingOp::top_k_renorm: return kt.renorm(t.input, t.output, rows, cols, k, states, stream);
      case SamplingOp::top_p_renorm:
        return detail::top_p_renorm(probs, static_cast<float*>(t.output), rows, cols, s_.top_p, air_ws_.get(), stream);
      case SamplingOp::top_k_mask: return kt.mask(t.input, t.output, rows, cols, k, states, stream);
      case SamplingOp::chain_speculative:
        // The Python API counts into fresh zeros at every call (FlashInfer's kernel adds to them).
        status = cudaMemsetAsync(t.accepted, 0, static_cast<std::size_t>(rows) * 4, stream);
        if (status == cudaSuccess) status = cudaMemsetAsync(t.emitted, 0, static_cast<std::size_t>(rows) * 4, stream);
        if (status != cudaSuccess) return status;
        return detail::chain_speculative(probs, t.draft_ids, t.target, samples, t.accepted, t.emitted, rows, s_.n, cols,
                                         t.rng, stream);
      case SamplingOp::top_k:
        status = kt.top_k(t.input, indices_.as<int32_t>(), t.output, rows, cols, k, states, false, false, stream);
        if (status != cudaSuccess) return status;
        return detail::widen_ids(indices_.as<const int32_t>(), t.indices, rows * k, stream);  // indices.long()
      case SamplingOp::page_table_transform:
        return kt.page_table(t.input, static_cast<int32_t*>(t.output), t.page_table, t.lengths, rows, cols, k, states,
                             stream);
      case SamplingOp::ragged_transform:
        return kt.ragged(t.input, static_cast<int32_t*>(t.output), t.offsets, t.lengths, rows, cols, k, states, stream);
    }
    return cudaErrorInvalidValue;
  }

 private:
  // top_k_top_p_sampling_from_probs / _from_logits, by filter_apply_order and the fast path.
  cudaError_t top_k_top_p(const SamplingTensors& t, const detail::TopKKernels& kt, cudaStream_t stream) const {
    const int64_t rows = s_.rows, cols = s_.cols, k = s_.top_k;
    const bool logits = s_.op == SamplingOp::top_k_top_p_from_logits;
    auto* samples = static_cast<int32_t*>(t.output);
    bool* valid = valid_.as<bool>();
    void* states = row_states_.get();
    cudaError_t status = cudaSuccess;
    const auto step = [&](cudaError_t s) { if (status == cudaSuccess) status = s; };
    if (top_k_first_fast_path(s_)) {
      // Sorted, deterministic radix top-k; softmax (logits) or renormalisation (probabilities) of the
      // k values; top-p sampling over them; the drawn position mapped back to its vocabulary id.
      step(kt.top_k(t.input, indices_.as<int32_t>(), values_.get(), rows, cols, k, states, true, true, stream));
      if (logits) {
        step(kt.softmax_rows(values_.get(), probs_k_.as<float>(), rows, k, stream));
      } else {
        step(detail::renormalize_rows(values_.as<const float>(), probs_k_.as<float>(), rows, k, stream));
      }
      step(detail::top_p_sampling(probs_k_.as<const float>(), local_.as<int32_t>(), valid, rows, k, s_.top_p, t.rng,
                                  stream));
      step(detail::gather_ids(local_.as<const int32_t>(), indices_.as<const int32_t>(), samples, rows, k, stream));
      return status;
    }
    if (!logits) {
      if (s_.joint) return detail::top_k_top_p_joint(static_cast<const float*>(t.input), samples, valid, rows, cols, k,
                                                     s_.top_p, t.rng, stream);
      step(kt.renorm(t.input, float_a_.get(), rows, cols, k, states, stream));
      step(detail::top_p_sampling(float_a_.as<const float>(), samples, valid, rows, cols, s_.top_p, t.rng, stream));
      return status;
    }
    // From logits: top_k_first masks the logits outside the top k; both orders then take a softmax
    // (torch.softmax in the Python API; FlashInfer's own here) and sample from it.
    const void* source = t.input;
    if (!s_.joint) {
      step(kt.mask(t.input, masked_.get(), rows, cols, k, states, stream));
      source = masked_.get();
    }
    const float* as_float = static_cast<const float*>(source);
    if (s_.dtype != DType::float32) {
      step(kt.to_float(source, float_a_.as<float>(), rows * cols, stream));
      as_float = float_a_.as<const float>();
    }
    step(detail::softmax(as_float, float_b_.as<float>(), rows, cols, 1.0f, softmax_ws_.get(), softmax_bytes_, false,
                         stream));
    if (s_.joint) {
      step(detail::top_k_top_p_joint(float_b_.as<const float>(), samples, valid, rows, cols, k, s_.top_p, t.rng, stream));
    } else {
      step(detail::top_p_sampling(float_b_.as<const float>(), samples, valid, rows, cols, s_.top_p, t.rng, stream));
    }
    return status;
  }

  SamplingShape s_;
  DeviceBuffer row_states_, valid_, softmax_ws_, air_ws_, float_a_, float_b_, masked_, indices_, values_, probs_k_,
      local_;
  std::size_t softmax_bytes_ = 0;
};

Sampling::Sampling(const SamplingShape& shape, cudaStream_t stream) : impl_(std::make_unique<Impl>(shape, stream)) {}
Sampling::~Sampling() = default;
Sampling::Sampling(Sampling&&) noexcept = default;
Sampling& Sampling::operator=(Sampling&&) noexcept = default;

cudaError_t Sampling::run(const SamplingTensors& tensors, cudaStream_t stream) const { return impl_->run(tensors, stream); }

}  // namespace kbench::backends::flashinfer
