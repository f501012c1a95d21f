// Host-side construction of a paged KV cache's bookkeeping, as the reference tool builds it
// (compat.md "Inputs"): per-request lengths, each request owning a disjoint, shuffled range of
// ceil(max_len / page_size) pages, and the FlashInfer page table (indptr, indices, last-page
// lengths) plus the dense block table that cuDNN and vLLM use.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kbench {

// Every length is max_len, or (random) uniform in [1, max_len], from `seed`.
[[nodiscard]] std::vector<int32_t> make_sequence_lengths(int batch, int max_len, bool random, uint64_t seed);

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
