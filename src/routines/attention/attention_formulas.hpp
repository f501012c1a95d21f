// FLOP and byte counts of attention (compat.md "Formulas"), from the actual per-request lengths.
#pragma once

#include <cstdint>
#include <span>

namespace kbench {

struct AttentionSizes {
  int num_qo_heads = 0;
  int num_kv_heads = 0;
  int head_dim_qk = 0;
  int head_dim_vo = 0;
  bool causal = false;     // bottom-right aligned when q_len < kv_len
  double q_bytes = 2;      // bytes per element of q, kv and the output (0.5 for fp4)
  double kv_bytes = 2;
  double out_bytes = 2;
};

// Non-causal: 2 H_q (d_qk + d_vo) sum q_i k_i; causal: H_q (d_qk + d_vo) sum q_i (2 k_i - q_i).
[[nodiscard]] double attention_flops(const AttentionSizes& s, std::span<const int32_t> q_lens,
                                     std::span<const int32_t> kv_lens);

// sum q_i H_q d_qk b_q + sum k_i H_kv (d_qk + d_vo) b_kv + sum q_i H_q d_vo b_o.
[[nodiscard]] double attention_bytes(const AttentionSizes& s, std::span<const int32_t> q_lens,
                                     std::span<const int32_t> kv_lens);

}  // namespace kbench
