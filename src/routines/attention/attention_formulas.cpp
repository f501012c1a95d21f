#include "routines/attention/attention_formulas.hpp"

#include <stdexcept>

namespace kbench {
namespace {

void require_same_batch(std::span<const int32_t> q_lens, std::span<const int32_t> kv_lens) {
  if (q_lens.size() != kv_lens.size()) throw std::invalid_argument("attention formulas: q and kv batches differ");
}

}  // namespace

double attention_flops(const AttentionSizes& s, std::span<const int32_t> q_lens, std::span<const int32_t> kv_lens) {
  require_same_batch(q_lens, kv_lens);
  double sum = 0;
  for (std::size_t i = 0; i < q_lens.size(); ++i) {
    const double q = q_lens[i];
    const double k = kv_lens[i];
    sum += s.causal ? q * (2 * k - q) : 2 * q * k;
  }
  return static_cast<double>(s.num_qo_heads) * (s.head_dim_qk + s.head_dim_vo) * sum;
}

double attention_bytes(const AttentionSizes& s, std::span<const int32_t> q_lens, std::span<const int32_t> kv_lens) {
  require_same_batch(q_lens, kv_lens);
  double q_total = 0;
  double kv_total = 0;
  for (std::size_t i = 0; i < q_lens.size(); ++i) {
    q_total += q_lens[i];
    kv_total += kv_lens[i];
  }
  return q_total * s.num_qo_heads * s.head_dim_qk * s.q_bytes +
         kv_total * s.num_kv_heads * (s.head_dim_qk + s.head_dim_vo) * s.kv_bytes +
         q_total * s.num_qo_heads * s.head_dim_vo * s.out_bytes;
}

double mla_flops(int num_heads, int head_dim_ckv, int head_dim_kpe, int s_qo, std::span<const int32_t> kv_lens) {
  double pairs = 0;
  for (const int32_t k : kv_lens) pairs += s_qo * (2.0 * k - s_qo + 1) / 2;
  return 2.0 * num_heads * (2.0 * head_dim_ckv + head_dim_kpe) * pairs;
}

double mla_bytes(int num_heads, int head_dim_ckv, int head_dim_kpe, int s_qo, double q_bytes, double kv_bytes,
                 std::span<const int32_t> kv_lens) {
  double kv_total = 0;
  for (const int32_t k : kv_lens) kv_total += k;
  const double rows = static_cast<double>(kv_lens.size()) * s_qo * num_heads;
  return rows * (head_dim_ckv + head_dim_kpe) * q_bytes + kv_total * (head_dim_ckv + head_dim_kpe) * kv_bytes +
         rows * head_dim_ckv * 2;
}

}  // namespace kbench
