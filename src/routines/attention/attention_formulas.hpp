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

// MLA decode (compat.md, mla.md), from the actual KV lengths k_i, s_q query tokens per request:
// F = 2 H (2 d_ckv + d_kpe) sum_i s_q (2 k_i - s_q + 1) / 2 (QK over d_ckv + d_kpe, PV over d_ckv, the
// pairs a bottom-right causal mask keeps).
[[nodiscard]] double mla_flops(int num_heads, int head_dim_ckv, int head_dim_kpe, int s_qo,
                               std::span<const int32_t> kv_lens);

// Bytes = B s_q H (d_ckv + d_kpe) b_q + sum_i k_i (d_ckv + d_kpe) b_kv + B s_q H d_ckv 2: the output
// always counted as 2 bytes (bf16), as the reference does whatever the backend writes.
[[nodiscard]] double mla_bytes(int num_heads, int head_dim_ckv, int head_dim_kpe, int s_qo, double q_bytes,
                               double kv_bytes, std::span<const int32_t> kv_lens);

}  // namespace kbench
