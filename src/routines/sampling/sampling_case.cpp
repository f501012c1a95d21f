#include "routines/sampling/sampling_case.hpp"

#include <stdexcept>

#include "core/host_tensor.hpp"
#include "core/log.hpp"
#include "kbench/cuda_check.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/device_tensors.hpp"
#include "routines/sampling/sampling_checks.hpp"

namespace kbench {
namespace {

enum TensorId { kInput = 0, kDraftIds = 1, kTarget = 2, kPageTable = 3 };

// The reference's src_page_table holds integers in [0, 1000).
constexpr int32_t kPageIds = 1000;

namespace ks = kernels::sampling;

std::size_t count(int64_t a, int64_t b = 1, int64_t c = 1) { return static_cast<std::size_t>(a * b * c); }

}  // namespace

bool is_sampler(SamplingOp op) {
  switch (op) {
    case SamplingOp::sampling_from_probs:
    case SamplingOp::sampling_from_logits:
    case SamplingOp::top_k_sampling_from_probs:
    case SamplingOp::top_p_sampling_from_probs:
    case SamplingOp::top_k_top_p_sampling_from_probs:
    case SamplingOp::top_k_top_p_sampling_from_logits:
    case SamplingOp::min_p_sampling_from_probs: return true;
    default: return false;
  }
}

bool reads_logits(SamplingOp op) {
  return op == SamplingOp::softmax || op == SamplingOp::sampling_from_logits ||
         op == SamplingOp::top_k_top_p_sampling_from_logits || op == SamplingOp::top_k_mask_logits;
}

bool reads_probs(SamplingOp op) {
  switch (op) {
    case SamplingOp::sampling_from_probs:
    case SamplingOp::top_k_sampling_from_probs:
    case SamplingOp::top_p_sampling_from_probs:
    case SamplingOp::top_k_top_p_sampling_from_probs:
    case SamplingOp::min_p_sampling_from_probs:
    case SamplingOp::top_p_renorm_probs:
    case SamplingOp::chain_speculative_sampling: return true;
    default: return false;
  }
}

bool is_transform(SamplingOp op) {
  return op == SamplingOp::top_k_page_table_transform || op == SamplingOp::top_k_ragged_transform;
}

bool filters_by_sorting(SamplingOp op) {
  switch (op) {
    case SamplingOp::top_k_sampling_from_probs:
    case SamplingOp::top_p_sampling_from_probs:
    case SamplingOp::top_k_top_p_sampling_from_probs:
    case SamplingOp::top_k_top_p_sampling_from_logits:
    case SamplingOp::min_p_sampling_from_probs:
    case SamplingOp::top_k_renorm_probs:
    case SamplingOp::top_p_renorm_probs:
    case SamplingOp::top_k_mask_logits:
    case SamplingOp::top_k:
    case SamplingOp::top_k_page_table_transform:
    case SamplingOp::top_k_ragged_transform: return true;
    default: return false;
  }
}

ks::SamplerParams SamplingProblem::sampler_filters() const {
  ks::SamplerParams s;
  s.dtype = input_dtype;
  s.from_logits = reads_logits(op);
  s.rows = rows();
  s.vocab = cols();
  switch (op) {
    case SamplingOp::top_k_sampling_from_probs: s.top_k = top_k; break;
    case SamplingOp::top_p_sampling_from_probs: s.top_p = static_cast<float>(top_p); break;
    case SamplingOp::top_k_top_p_sampling_from_probs:
    case SamplingOp::top_k_top_p_sampling_from_logits:
      s.top_k = top_k;
      s.top_p = static_cast<float>(top_p);
      s.joint = joint;
      break;
    case SamplingOp::min_p_sampling_from_probs: s.min_p = static_cast<float>(min_p); break;
    default: break;
  }
  return s;
}

double sampling_bytes(const SamplingProblem& p) {
  const double B = static_cast<double>(p.batch_size), V = static_cast<double>(p.vocab_size);
  const double b = static_cast<double>(dtype_size(p.input_dtype));
  const double k = static_cast<double>(p.top_k), n = static_cast<double>(p.num_speculate_tokens);
  const double R = static_cast<double>(p.num_rows), L = V;
  switch (p.op) {
    case SamplingOp::softmax: return B * V * b + 4 * B * V;
    case SamplingOp::sampling_from_probs:
    case SamplingOp::top_k_sampling_from_probs:
    case SamplingOp::top_p_sampling_from_probs:
    case SamplingOp::top_k_top_p_sampling_from_probs:
    case SamplingOp::min_p_sampling_from_probs: return 4 * B * V + 4 * B;
    case SamplingOp::sampling_from_logits:
    case SamplingOp::top_k_top_p_sampling_from_logits: return B * V * b + 4 * B;
    case SamplingOp::top_k_renorm_probs:
    case SamplingOp::top_k_mask_logits: return 2 * B * V * b;
    case SamplingOp::top_p_renorm_probs: return 8 * B * V;
    case SamplingOp::chain_speculative_sampling:
      return 4 * B * n * V + 4 * B * n + 4 * B * (n + 1) * V + 4 * B * (n + 1) + 8 * B;
    case SamplingOp::top_k: return B * V * b + B * k * b + 8 * B * k;
    case SamplingOp::top_k_page_table_transform: return R * L * b + B * L * 4 + 4 * R * k;
    case SamplingOp::top_k_ragged_transform: return R * L * b + 4 * R * k;
  }
  throw std::logic_error("unknown sampling routine");
}

DType SamplingCase::output_dtype() const {
  switch (p_.op) {
    case SamplingOp::softmax:
    case SamplingOp::top_p_renorm_probs: return DType::float32;
    case SamplingOp::top_k_renorm_probs:
    case SamplingOp::top_k_mask_logits:
    case SamplingOp::top_k: return p_.input_dtype;
    default: return DType::int32;
  }
}

// Elements of Copy::output.
int64_t SamplingCase::output_count() const {
  const int64_t rows = p_.rows();
  switch (p_.op) {
    case SamplingOp::softmax:
    case SamplingOp::top_k_renorm_probs:
    case SamplingOp::top_p_renorm_probs:
    case SamplingOp::top_k_mask_logits: return rows * p_.cols();
    case SamplingOp::chain_speculative_sampling: return rows * (p_.n() + 1);
    case SamplingOp::top_k:
    case SamplingOp::top_k_page_table_transform:
    case SamplingOp::top_k_ragged_transform: return rows * p_.top_k;
    default: return rows;  // the samplers
  }
}

std::size_t SamplingCase::bytes_per_copy() const {
  const int64_t rows = p_.rows(), cols = p_.cols();
  std::size_t bytes = count(output_count()) * dtype_size(output_dtype());
  if (p_.op == SamplingOp::chain_speculative_sampling) {
    bytes += count(rows, p_.n(), cols) * 4 + count(rows, p_.n()) * 4 + count(rows, p_.n() + 1, cols) * 4 + count(rows) * 8;
  } else {
    bytes += count(rows, cols) * dtype_size(p_.input_dtype);
  }
  if (p_.op == SamplingOp::top_k) bytes += count(rows, p_.top_k) * 8;
  if (p_.op == SamplingOp::top_k_page_table_transform) bytes += count(p_.batch_size, cols) * 4;
  return bytes;
}

std::vector<TensorInfo> SamplingCase::tensors() const {
  const int64_t B = p_.batch_size, V = p_.cols(), R = p_.rows(), k = p_.top_k, n = p_.n();
  const DType in = p_.input_dtype;
  switch (p_.op) {
    case SamplingOp::softmax:
      return {{"logits", {B, V}, {V, 1}, in}, {"probs", {B, V}, {V, 1}, DType::float32}};
    case SamplingOp::sampling_from_logits:
    case SamplingOp::top_k_top_p_sampling_from_logits:
      return {{"logits", {B, V}, {V, 1}, in}, {"samples", {B}, {1}, DType::int32}};
    case SamplingOp::top_k_mask_logits:
      return {{"logits", {B, V}, {V, 1}, in}, {"masked_logits", {B, V}, {V, 1}, in}};
    case SamplingOp::top_k_renorm_probs:
    case SamplingOp::top_p_renorm_probs:
      return {{"probs", {B, V}, {V, 1}, in}, {"renorm_probs", {B, V}, {V, 1}, in}};
    case SamplingOp::chain_speculative_sampling:
      return {{"draft_probs", {B, n, V}, {n * V, V, 1}, DType::float32},
              {"draft_token_ids", {B, n}, {n, 1}, DType::int32},
              {"target_probs", {B, n + 1, V}, {(n + 1) * V, V, 1}, DType::float32},
              {"output_token_ids", {B, n + 1}, {n + 1, 1}, DType::int32},
              {"output_accepted_token_num", {B}, {1}, DType::int32},
              {"output_emitted_draft_token_num", {B}, {1}, DType::int32}};
    case SamplingOp::top_k:
      return {{"input_tensor", {B, V}, {V, 1}, in}, {"values", {B, k}, {k, 1}, in}, {"indices", {B, k}, {k, 1}, DType::int64}};
    case SamplingOp::top_k_page_table_transform:
      return {{"input_scores", {R, V}, {V, 1}, in}, {"src_page_table", {B, V}, {V, 1}, DType::int32},
              {"lengths", {R}, {1}, DType::int32}, {"output_page_table", {R, k}, {k, 1}, DType::int32}};
    case SamplingOp::top_k_ragged_transform:
      return {{"input_scores", {R, V}, {V, 1}, in}, {"offsets", {R}, {1}, DType::int32},
              {"lengths", {R}, {1}, DType::int32}, {"output_indices", {R, k}, {k, 1}, DType::int32}};
    default:  // the probability samplers
      return {{"probs", {B, V}, {V, 1}, DType::float32}, {"samples", {B}, {1}, DType::int32}};
  }
}

void SamplingCase::describe(const Log& log) const {
  for (const std::string& w : p_.warnings) log.warning(w);
  const auto value = [&](const char* name, const std::string& v) { log.vverbose(std::string(name) + " = " + v); };
  const std::string k = std::to_string(p_.top_k), top_p = python_float(p_.top_p), min_p = python_float(p_.min_p);
  const std::string order = p_.joint ? "'joint'" : "'top_k_first'";
  switch (p_.op) {
    case SamplingOp::top_k_sampling_from_probs:
    case SamplingOp::top_k_renorm_probs:
    case SamplingOp::top_k_mask_logits:
    case SamplingOp::top_k:
    case SamplingOp::top_k_page_table_transform:
    case SamplingOp::top_k_ragged_transform: value("top_k", k); break;
    case SamplingOp::top_p_sampling_from_probs:
    case SamplingOp::top_p_renorm_probs: value("top_p", top_p); break;
    case SamplingOp::top_k_top_p_sampling_from_probs:
    case SamplingOp::top_k_top_p_sampling_from_logits:
      value("top_k", k);
      value("top_p", top_p);
      value("filter_apply_order", order);
      break;
    case SamplingOp::min_p_sampling_from_probs: value("min_p", min_p); break;
    case SamplingOp::chain_speculative_sampling: value("num_speculate_tokens", std::to_string(p_.n())); break;
    default: break;
  }
  if (p_.distribution == SamplingDistribution::peaked) value("distribution", "'peaked'");
}

void SamplingCase::set_rng(uint64_t seed, uint64_t offset, cudaStream_t stream) {
  const std::vector<uint64_t> host = {seed, offset};
  KBENCH_CUDA_CHECK(cudaMemcpyAsync(rng_.get(), host.data(), sizeof(uint64_t) * 2, cudaMemcpyHostToDevice, stream));
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void SamplingCase::allocate(int copies, uint64_t seed, cudaStream_t stream) {
  const int64_t rows = p_.rows(), cols = p_.cols(), n = p_.n();
  rng_ = DeviceBuffer(sizeof(uint64_t) * 2);
  set_rng(seed, 0, stream);
  if (is_transform(p_.op)) {
    lengths_.assign(static_cast<std::size_t>(rows), static_cast<int32_t>(cols));
    offsets_.resize(static_cast<std::size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) offsets_[r] = static_cast<int32_t>(r * cols);
    lengths_device_ = upload(lengths_, stream);
    offsets_device_ = upload(offsets_, stream);
  }
  copies_.clear();
  for (int c = 0; c < copies; ++c) {
    Copy copy;
    const auto fill_seed = [&](int tensor) { return tensor_seed(seed, c, tensor); };
    if (p_.op == SamplingOp::chain_speculative_sampling) {
      copy.input = DeviceBuffer(count(rows, n, cols) * 4);
      copy.draft_ids = DeviceBuffer(count(rows, n) * 4);
      copy.target = DeviceBuffer(count(rows, n + 1, cols) * 4);
      KBENCH_CUDA_CHECK(ks::fill_probabilities(copy.input.get(), DType::float32, rows * n, cols, fill_seed(kInput),
                                               p_.distribution, stream));
      KBENCH_CUDA_CHECK(ks::fill_uniform_ints(copy.draft_ids.as<int32_t>(), rows * n, static_cast<int32_t>(cols),
                                              fill_seed(kDraftIds), stream));
      KBENCH_CUDA_CHECK(ks::fill_probabilities(copy.target.get(), DType::float32, rows * (n + 1), cols,
                                               fill_seed(kTarget), p_.distribution, stream));
      copy.indices = DeviceBuffer(count(rows) * 8);  // accepted, then emitted
    } else {
      copy.input = DeviceBuffer(count(rows, cols) * dtype_size(p_.input_dtype));
      if (reads_probs(p_.op) || p_.op == SamplingOp::top_k_renorm_probs) {
        KBENCH_CUDA_CHECK(ks::fill_probabilities(copy.input.get(), p_.input_dtype, rows, cols, fill_seed(kInput),
                                                 p_.distribution, stream));
      } else {
        KBENCH_CUDA_CHECK(ks::fill_logits(copy.input.get(), p_.input_dtype, rows, cols, fill_seed(kInput),
                                          p_.distribution, stream));
      }
    }
    if (p_.op == SamplingOp::top_k_page_table_transform) {
      copy.page_table = DeviceBuffer(count(p_.batch_size, cols) * 4);
      KBENCH_CUDA_CHECK(ks::fill_uniform_ints(copy.page_table.as<int32_t>(), p_.batch_size * cols, kPageIds,
                                              fill_seed(kPageTable), stream));
    }
    if (p_.op == SamplingOp::top_k) copy.indices = DeviceBuffer(count(rows, p_.top_k) * 8);
    copy.output = DeviceBuffer(count(output_count()) * dtype_size(output_dtype()));
    KBENCH_CUDA_CHECK(kernels::poison(copy.output.get(), static_cast<int64_t>(copy.output.bytes()), stream));
    if (copy.indices.bytes() > 0) {
      KBENCH_CUDA_CHECK(kernels::poison(copy.indices.get(), static_cast<int64_t>(copy.indices.bytes()), stream));
    }
    copies_.push_back(std::move(copy));
  }
}

const SamplingCase::Copy& SamplingCase::copy_at(int copy) const {
  static const Copy kUnallocated;
  return copy < 0 ? kUnallocated : copies_.at(static_cast<std::size_t>(copy));
}

void* SamplingCase::input(int copy) const { return copy_at(copy).input.get(); }

ks::SamplerParams SamplingCase::sampler_params(int copy) const {
  ks::SamplerParams s = p_.sampler_filters();
  s.input = copy_at(copy).input.get();
  s.rng = copy < 0 ? nullptr : rng();
  s.output = copy_at(copy).output.as<int32_t>();
  return s;
}

ks::FilterParams SamplingCase::filter_params(int copy) const {
  ks::FilterParams f;
  switch (p_.op) {
    case SamplingOp::softmax: f.op = ks::FilterOp::softmax; break;
    case SamplingOp::top_k_mask_logits: f.op = ks::FilterOp::top_k_mask; break;
    case SamplingOp::top_k_renorm_probs: f.op = ks::FilterOp::top_k_renorm; break;
    case SamplingOp::top_p_renorm_probs: f.op = ks::FilterOp::top_p_renorm; break;
    default: throw std::logic_error("filter_params: not a filter routine");
  }
  f.input = copy_at(copy).input.get();
  f.dtype = p_.input_dtype;
  f.rows = p_.rows();
  f.cols = p_.cols();
  f.temperature = static_cast<float>(p_.temperature);
  f.top_k = p_.top_k;
  f.top_p = static_cast<float>(p_.top_p);
  f.output = copy_at(copy).output.get();
  f.enable_pdl = p_.enable_pdl;
  return f;
}

ks::TopKParams SamplingCase::top_k_params(int copy) const {
  const Copy& c = copy_at(copy);
  ks::TopKParams t;
  t.input = c.input.get();
  t.dtype = p_.input_dtype;
  t.rows = p_.rows();
  t.cols = p_.cols();
  t.k = p_.top_k;
  switch (p_.op) {
    case SamplingOp::top_k:
      t.output = ks::TopKOutput::values_indices;
      t.values = c.output.get();
      t.indices = c.indices.as<int64_t>();
      break;
    case SamplingOp::top_k_page_table_transform:
      t.output = ks::TopKOutput::page_table;
      t.page_table = c.page_table.as<const int32_t>();
      t.page_table_stride = p_.cols();
      t.lengths = lengths_device_.as<const int32_t>();
      t.mapped = c.output.as<int32_t>();
      break;
    case SamplingOp::top_k_ragged_transform:
      t.output = ks::TopKOutput::ragged;
      t.offsets = offsets_device_.as<const int32_t>();
      t.lengths = lengths_device_.as<const int32_t>();
      t.mapped = c.output.as<int32_t>();
      break;
    default: throw std::logic_error("top_k_params: not a top-k routine");
  }
  return t;
}

ks::ChainParams SamplingCase::chain_params(int copy) const {
  const Copy& c = copy_at(copy);
  ks::ChainParams ch;
  ch.draft_probs = c.input.as<const float>();
  ch.draft_ids = c.draft_ids.as<const int32_t>();
  ch.target_probs = c.target.as<const float>();
  ch.rows = p_.rows();
  ch.n = p_.n();
  ch.vocab = p_.cols();
  ch.rng = copy < 0 ? nullptr : rng();
  ch.output_ids = c.output.as<int32_t>();
  ch.accepted = c.indices.as<int32_t>();
  ch.emitted = copy < 0 ? nullptr : c.indices.as<int32_t>() + p_.rows();
  return ch;
}

ks::SortBaselineParams SamplingCase::sort_params(int copy) const {
  ks::SortBaselineParams s;
  s.input = copy_at(copy).input.get();
  s.dtype = p_.input_dtype;
  s.rows = p_.rows();
  s.cols = p_.cols();
  s.top_k = p_.top_k;
  s.top_p = static_cast<float>(p_.top_p);
  if (is_sampler(p_.op)) {
    const ks::SamplerParams f = sampler_params(copy);
    s.op = ks::SortedOp::sample;
    s.from_logits = f.from_logits;
    s.top_k = f.top_k;
    s.top_p = f.top_p;
    s.min_p = f.min_p;
    s.joint = f.joint;
    s.rng = f.rng;
    s.samples = f.output;
    return s;
  }
  switch (p_.op) {
    case SamplingOp::top_k_renorm_probs: s.op = ks::SortedOp::top_k_renorm; break;
    case SamplingOp::top_p_renorm_probs:
      s.op = ks::SortedOp::top_p_renorm;
      s.top_k = 0;  // not a parameter of top_p_renorm_probs (p_.top_k holds the flag's default)
      break;
    case SamplingOp::top_k_mask_logits: s.op = ks::SortedOp::top_k_mask; break;
    default:
      s.op = ks::SortedOp::top_k;
      s.top = top_k_params(copy);
      return s;
  }
  s.output = copy_at(copy).output.get();
  return s;
}

std::vector<CheckedOutput> SamplingCase::outputs() const {
  const Copy& c = copy_at(0);
  const auto n_out = count(output_count());
  switch (p_.op) {
    case SamplingOp::softmax: return {{"output", c.output.get(), DType::float32, n_out, {1e-3, 1e-5}}};
    case SamplingOp::top_k_renorm_probs: return {{"output", c.output.get(), p_.input_dtype, n_out, {1e-2, 1e-2}}};
    case SamplingOp::top_p_renorm_probs: return {{"output", c.output.get(), DType::float32, n_out, {1e-2, 1e-3}}};
    case SamplingOp::top_k_mask_logits: return {{"output", c.output.get(), p_.input_dtype, n_out, {1e-3, 1e-5}}};
    case SamplingOp::top_k:
      return {{"values", c.output.get(), p_.input_dtype, n_out, {1e-3, 1e-5}},
              {"indices", c.indices.get(), DType::int64, n_out, {}}};
    case SamplingOp::top_k_page_table_transform:
    case SamplingOp::top_k_ragged_transform: return {{"output", c.output.get(), DType::int32, n_out, {}}};
    case SamplingOp::chain_speculative_sampling: {
      const auto rows = count(p_.rows());
      return {{"output_token_ids", c.output.get(), DType::int32, n_out, {}, true, true},
              {"accepted_num", c.indices.get(), DType::int32, rows, {}, true, true},
              {"emitted_num", c.indices.as<int32_t>() + p_.rows(), DType::int32, rows, {}, true, true}};
    }
    default: return {{"samples", c.output.get(), DType::int32, n_out, {}, true, true}};
  }
}

std::vector<std::vector<float>> SamplingCase::reference(cudaStream_t stream) {
  const Copy& c = copy_at(0);
  const int64_t rows = p_.rows(), cols = p_.cols(), n = p_.n();
  if (p_.op == SamplingOp::chain_speculative_sampling) {
    // draft ids, draft probabilities, target probabilities: what check_chain reads.
    std::vector<float> all = read_as_floats(c.draft_ids.get(), DType::int32, count(rows, n), stream);
    const std::vector<float> draft = read_as_floats(c.input.get(), DType::float32, count(rows, n, cols), stream);
    const std::vector<float> target = read_as_floats(c.target.get(), DType::float32, count(rows, n + 1, cols), stream);
    all.insert(all.end(), draft.begin(), draft.end());
    all.insert(all.end(), target.begin(), target.end());
    return {all, {}, {}};
  }
  std::vector<float> input = read_as_floats(c.input.get(), p_.input_dtype, count(rows, cols), stream);
  switch (p_.op) {
    case SamplingOp::softmax: return {softmax_reference(rows, cols, p_.temperature, input)};
    case SamplingOp::top_k: return {input, {}};
    case SamplingOp::top_k_page_table_transform: {
      // The scores, then the page table rows of the scores' rows.
      const std::vector<float> table = read_as_floats(c.page_table.get(), DType::int32, count(rows, cols), stream);
      input.insert(input.end(), table.begin(), table.end());
      return {input};
    }
    default: return {input};  // the rows every rule reads
  }
}

std::vector<Comparison> SamplingCase::compare(const std::vector<CheckedOutput>& outputs,
                                              const std::vector<std::vector<float>>& expected,
                                              const std::vector<std::vector<float>>& got) const {
  const int64_t rows = p_.rows(), cols = p_.cols(), n = p_.n(), k = p_.top_k;
  const std::span<const float> in = expected.at(0);
  switch (p_.op) {
    case SamplingOp::softmax: return Case::compare(outputs, expected, got);
    case SamplingOp::top_k_renorm_probs: return {check_top_k_renorm(rows, cols, k, in, got[0], outputs[0].tolerance)};
    case SamplingOp::top_p_renorm_probs: return {check_top_p_renorm(rows, cols, p_.top_p, in, got[0], outputs[0].tolerance)};
    case SamplingOp::top_k_mask_logits: return {check_top_k_mask(rows, cols, k, in, got[0], outputs[0].tolerance)};
    case SamplingOp::top_k: return check_top_k(rows, cols, k, in, got[0], got[1], outputs[0].tolerance);
    case SamplingOp::top_k_page_table_transform:
      return {check_transform(rows, cols, k, in.first(count(rows, cols)), in.subspan(count(rows, cols)), {}, lengths_,
                              got[0])};
    case SamplingOp::top_k_ragged_transform: return {check_transform(rows, cols, k, in, {}, offsets_, lengths_, got[0])};
    case SamplingOp::chain_speculative_sampling:
      return check_chain(rows, n, cols, in.first(count(rows, n)), in.subspan(count(rows, n), count(rows, n, cols)),
                         in.subspan(count(rows, n) + count(rows, n, cols)), got[0], got[1], got[2]);
    default: {
      const ks::SamplerParams f = p_.sampler_filters();
      const SamplerRule rule{f.from_logits, f.top_k, f.top_p, f.min_p, f.joint};
      return {check_samples(rule, rows, cols, in, got[0])};
    }
  }
}

}  // namespace kbench
