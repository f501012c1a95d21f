// Host-side construction of the attention routines' lengths and a paged KV cache's bookkeeping, as
// the reference tool builds them (compat.md "Inputs"): per-request lengths (prefill: query and KV),
// each request owning a disjoint, shuffled range of ceil(max_len / page_size) pages, and the
// FlashInfer page table (indptr, indices, last-page lengths) plus the dense block table that cuDNN
// and vLLM use.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kbench {

// Every length is max_len, or (random) uniform in [1, max_len], from `seed`.
[[nodiscard]] std::vector<int32_t> make_sequence_lengths(int batch, int max_len, bool random, uint64_t seed);

// Prefill's lengths: q uniform in [1, s_qo] (random) or s_qo; kv the same as q when s_qo == s_kv,
// else uniform in [1, s_kv] (or s_kv) raised to at least q, elementwise. Needs 1 <= s_qo <= s_kv.
struct PrefillLengths {
  std::vector<int32_t> q;
  std::vector<int32_t> kv;
};
[[nodiscard]] PrefillLengths make_prefill_lengths(int batch, int s_qo, int s_kv, bool random, uint64_t seed);

// Offsets of requests stored back to back: [0, l0, l0 + l1, ...]; throws past 2^31 - 1 in total.
[[nodiscard]] std::vector<int32_t> token_offsets(std::span<const int32_t> lens);

// "[1, 2, 3]": lengths as the [VVERBOSE] lines print them.
[[nodiscard]] std::string lengths_text(std::span<const int32_t> lens);

struct PagedKvLayout {
  int page_size = 0;
  int pages_per_request = 0;  // ceil(max_len / page_size): the pages each request owns
  int total_pages = 0;        // batch * pages_per_request: the pages allocated
  std::vector<int32_t> seq_lens;       // [batch]
  std::vector<int32_t> indptr;         // [batch + 1]: prefix sums of ceil(len / page_size)
  std::vector<int32_t> indices;        // [indptr.back()]: the pages each request uses, in order
  std::vector<int32_t> last_page_len;  // [batch]: len mod page_size, or page_size when 0
  std::vector<int32_t> block_table;    // [batch][pages_per_request]: every owned page, in order
};

[[nodiscard]] PagedKvLayout make_paged_kv_layout(std::span<const int32_t> seq_lens, int max_len, int page_size,
                                                 uint64_t seed);

}  // namespace kbench
