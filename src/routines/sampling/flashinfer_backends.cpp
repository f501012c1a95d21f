#include "routines/sampling/flashinfer_backends.hpp"

#include "backends/flashinfer/flashinfer_sampling.hpp"
#include "kbench/cuda_check.hpp"

namespace kbench {
namespace {

namespace fi = backends::flashinfer;

fi::SamplingOp fi_op(SamplingOp op) {
  switch (op) {
    case SamplingOp::softmax: return fi::SamplingOp::softmax;
    case SamplingOp::sampling_from_probs: return fi::SamplingOp::sampling_from_probs;
    case SamplingOp::sampling_from_logits: return fi::SamplingOp::sampling_from_logits;
    case SamplingOp::top_k_sampling_from_probs: return fi::SamplingOp::top_k_sampling;
    case SamplingOp::top_p_sampling_from_probs: return fi::SamplingOp::top_p_sampling;
    case SamplingOp::top_k_top_p_sampling_from_probs: return fi::SamplingOp::top_k_top_p_from_probs;
    case SamplingOp::top_k_top_p_sampling_from_logits: return fi::SamplingOp::top_k_top_p_from_logits;
    case SamplingOp::min_p_sampling_from_probs: return fi::SamplingOp::min_p_sampling;
    case SamplingOp::top_k_renorm_probs: return fi::SamplingOp::top_k_renorm;
    case SamplingOp::top_p_renorm_probs: return fi::SamplingOp::top_p_renorm;
    case SamplingOp::top_k_mask_logits: return fi::SamplingOp::top_k_mask;
    case SamplingOp::chain_speculative_sampling: return fi::SamplingOp::chain_speculative;
    case SamplingOp::top_k: return fi::SamplingOp::top_k;
    case SamplingOp::top_k_page_table_transform: return fi::SamplingOp::page_table_transform;
    case SamplingOp::top_k_ragged_transform: return fi::SamplingOp::ragged_transform;
  }
  return fi::SamplingOp::softmax;
}

fi::SamplingShape shape_of(const SamplingProblem& p) {
  fi::SamplingShape s;
  s.op = fi_op(p.op);
  s.dtype = p.input_dtype;
  s.rows = p.rows();
  s.cols = p.cols();
  s.top_k = p.top_k;
  s.top_p = static_cast<float>(p.top_p);
  s.min_p = static_cast<float>(p.min_p);
  s.temperature = static_cast<float>(p.temperature);
  s.joint = p.joint;
  s.n = p.n();
  s.enable_pdl = p.enable_pdl;
  return s;
}

// Input set `copy` as FlashInfer's kernels take it (from the kernels' parameters of the case).
fi::SamplingTensors tensors_of(const SamplingCase& c, int copy) {
  const SamplingOp op = c.problem().op;
  fi::SamplingTensors t;
  t.rng = c.rng();
  if (is_sampler(op)) {
    const auto s = c.sampler_params(copy);
    t.input = s.input;
    t.output = s.output;
  } else if (op == SamplingOp::chain_speculative_sampling) {
    const auto ch = c.chain_params(copy);
    t.input = ch.draft_probs;
    t.draft_ids = ch.draft_ids;
    t.target = ch.target_probs;
    t.output = ch.output_ids;
    t.accepted = ch.accepted;
    t.emitted = ch.emitted;
  } else if (op == SamplingOp::top_k || is_transform(op)) {
    const auto k = c.top_k_params(copy);
    t.input = k.input;
    t.output = op == SamplingOp::top_k ? k.values : static_cast<void*>(k.mapped);
    t.indices = k.indices;
    t.page_table = k.page_table;
    t.lengths = k.lengths;
    t.offsets = k.offsets;
  } else {
    const auto f = c.filter_params(copy);
    t.input = f.input;
    t.output = f.output;
  }
  return t;
}

class FlashinferSamplingOperation final : public Operation {
 public:
  FlashinferSamplingOperation(const SamplingCase& problem, cudaStream_t stream)
      : problem_(problem), sampling_(make_vendor_object<fi::Sampling>("FlashInfer", shape_of(problem.problem()), stream)) {}
  void launch(cudaStream_t stream, int copy) override {
    KBENCH_CUDA_CHECK(sampling_->run(tensors_of(problem_, copy), stream));
  }

 private:
  const SamplingCase& problem_;
  std::unique_ptr<fi::Sampling> sampling_;
};

}  // namespace

Support FlashinferSamplingBackend::can_run_on(const DeviceInfo& device) const {
  if (device.cc_major < 8) return Support::no("kbench builds FlashInfer's kernels for sm_80+");
  return Support::yes();
}

Support FlashinferSamplingBackend::implements(const SamplingCase& problem) const {
  if (const auto why = fi::sampling_unsupported(shape_of(problem.problem()))) return Support::no(*why);
  return Support::yes();
}

std::unique_ptr<Operation> FlashinferSamplingBackend::bind(SamplingCase& problem, cudaStream_t stream) const {
  return std::make_unique<FlashinferSamplingOperation>(problem, stream);
}

}  // namespace kbench
