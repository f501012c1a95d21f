#include "routines/attention/paged_kv_layout.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "core/routine.hpp"

namespace kbench {

std::vector<int32_t> make_sequence_lengths(int batch, int max_len, bool random, uint64_t seed) {
  std::vector<int32_t> lens(static_cast<std::size_t>(batch), max_len);
  if (random) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> length(1, max_len);
    for (auto& len : lens) len = length(rng);
  }
  return lens;
}

PrefillLengths make_prefill_lengths(int batch, int s_qo, int s_kv, bool random, uint64_t seed) {
  if (s_qo < 1 || s_qo > s_kv) throw std::invalid_argument("prefill lengths: need 1 <= s_qo <= s_kv");
  PrefillLengths lens;
  lens.q = make_sequence_lengths(batch, s_qo, random, seed);
  if (s_qo == s_kv) {
    lens.kv = lens.q;
    return lens;
  }
  // An independent stream for the KV lengths.
  lens.kv = make_sequence_lengths(batch, s_kv, random, seed ^ 0x9E3779B97F4A7C15ull);
  for (std::size_t b = 0; b < lens.kv.size(); ++b) lens.kv[b] = std::max(lens.kv[b], lens.q[b]);
  return lens;
}

std::vector<int32_t> token_offsets(std::span<const int32_t> lens) {
  std::vector<int32_t> offsets{0};
  int64_t total = 0;
  for (const int32_t len : lens) {
    if (len < 0) throw std::invalid_argument("token offsets: a negative length");
    total += len;
    if (total > std::numeric_limits<int32_t>::max()) throw std::invalid_argument("token offsets: over 2^31 - 1 tokens");
    offsets.push_back(static_cast<int32_t>(total));
  }
  return offsets;
}

std::string lengths_text(std::span<const int32_t> lens) {
  std::string s = "[";
  for (std::size_t i = 0; i < lens.size(); ++i) s += (i ? ", " : "") + std::to_string(lens[i]);
  return s + "]";
}

PagedKvLayout make_paged_kv_layout(std::span<const int32_t> seq_lens, int max_len, int page_size, uint64_t seed) {
  if (page_size < 1 || max_len < 0) throw std::invalid_argument("paged KV: page_size must be >= 1");
  PagedKvLayout layout;
  layout.page_size = page_size;
  const int64_t pages_per_request = (int64_t{max_len} + page_size - 1) / page_size;
  const int batch = static_cast<int>(seq_lens.size());
  const int64_t total_pages = int64_t{batch} * pages_per_request;
  // Page ids are int32 in every page table (FlashInfer's, cuDNN's, kbench's kernels').
  if (total_pages > std::numeric_limits<int32_t>::max()) {
    throw CaseError("the paged KV cache of " + std::to_string(batch) + " requests x " +
                    std::to_string(pages_per_request) + " pages is " + std::to_string(total_pages) +
                    " pages, over 2^31 - 1 (page ids are int32): use fewer requests, shorter --s_kv or larger "
                    "--page_size");
  }
  // The page table and its shuffle live on the host too: past 2^25 pages (a 128 MB table, built in
  // seconds) a case is refused rather than left to take minutes and gigabytes before it starts.
  if (total_pages > (int64_t{1} << 25)) {
    throw CaseError("the paged KV cache of " + std::to_string(batch) + " requests x " +
                    std::to_string(pages_per_request) + " pages is " + std::to_string(total_pages) +
                    " pages, over kbench's 2^25 (a page table of 128 MB): use fewer requests, shorter --s_kv or "
                    "larger --page_size");
  }
  layout.pages_per_request = static_cast<int>(pages_per_request);
  layout.total_pages = static_cast<int>(total_pages);
  layout.seq_lens.assign(seq_lens.begin(), seq_lens.end());

  // A random permutation of every page; request b owns positions [b * per, (b + 1) * per) of it.
  std::vector<int32_t> pages(static_cast<std::size_t>(layout.total_pages));
  std::iota(pages.begin(), pages.end(), 0);
  std::mt19937_64 rng(seed ^ 0x5DEECE66Dull);
  std::shuffle(pages.begin(), pages.end(), rng);

  layout.indptr.push_back(0);
  for (int b = 0; b < batch; ++b) {
    const int32_t len = seq_lens[static_cast<std::size_t>(b)];
    if (len < 0 || len > max_len) throw std::invalid_argument("paged KV: a length is outside [0, max_len]");
    const auto owned = pages.begin() + static_cast<std::ptrdiff_t>(b) * layout.pages_per_request;
    layout.block_table.insert(layout.block_table.end(), owned, owned + layout.pages_per_request);
    const int used = (len + page_size - 1) / page_size;
    layout.indices.insert(layout.indices.end(), owned, owned + used);
    layout.indptr.push_back(layout.indptr.back() + used);
    const int32_t rest = len % page_size;
    layout.last_page_len.push_back(len == 0 ? 0 : (rest == 0 ? page_size : rest));
  }
  return layout;
}

}  // namespace kbench
