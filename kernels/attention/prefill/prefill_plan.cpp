// prefill_block_m and plan_prefill: the work list of the prefill kernels (host only, from the host
// copies of the per-request lengths).
//
// Every (request, query head) with q_len > 0 gets ceil(q_len / block_m) items, tile t covering rows
// [t * block_m, min(q_len, (t + 1) * block_m)). An item's cost is the keys its CTA visits: kv_len,
// or under the bottom-right causal mask the keys its last row sees,
// clamp(q_end + kv_len - q_len, 0, kv_len) (a tile whose rows see no key still writes its zeros, so
// it stays in the list, last). Items are emitted costliest first (longest-processing-time order: the
// CTAs taking items in order finish together); among equal costs by request, kv head, tile, then
// query head, so the items that read the same keys and values (the query heads of one kv head, the
// tiles of one request) run side by side and share them through the L2.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention/prefill/prefill.hpp"
#include "kernels/attention/prefill/prefill_internal.hpp"

namespace kbench::kernels {

int prefill_block_m(PrefillKernel kernel, const PrefillParams& params) {
  switch (kernel) {
    case PrefillKernel::fa2: return prefill_detail::fa2_block_m(params);
    case PrefillKernel::fa3: return prefill_detail::fa3_block_m(params);
  }
  throw std::invalid_argument("prefill_block_m: unknown kernel");
}

std::vector<PrefillWorkItem> plan_prefill(PrefillKernel kernel, const PrefillParams& params,
                                          const std::vector<int32_t>& q_lens, const std::vector<int32_t>& kv_lens) {
  if (params.batch < 0 || static_cast<std::size_t>(params.batch) != q_lens.size() || q_lens.size() != kv_lens.size()) {
    throw std::invalid_argument("plan_prefill: q_lens and kv_lens must have params.batch entries");
  }
  if (params.num_qo_heads < 1 || params.num_kv_heads < 1 || params.num_qo_heads % params.num_kv_heads != 0) {
    throw std::invalid_argument("plan_prefill: num_qo_heads must be a multiple of num_kv_heads >= 1");
  }
  const int block_m = prefill_block_m(kernel, params);
  if (block_m < 1) throw std::invalid_argument("plan_prefill: the kernel's block_m must be positive");
  const int group = params.num_qo_heads / params.num_kv_heads;

  struct Pending {
    PrefillWorkItem item;
    int64_t keys;
  };
  std::vector<Pending> pending;
  int64_t total = 0;
  for (std::size_t b = 0; b < q_lens.size(); ++b) {
    const int64_t q_len = q_lens[b];
    const int64_t kv_len = kv_lens[b];
    if (q_len < 0 || kv_len < 0) {
      throw std::invalid_argument("plan_prefill: request " + std::to_string(b) + " has a negative length");
    }
    total += (q_len + block_m - 1) / block_m * params.num_qo_heads;
  }
  if (total > std::numeric_limits<int32_t>::max()) throw std::invalid_argument("plan_prefill: over 2^31 work items");
  pending.reserve(static_cast<std::size_t>(total));

  for (std::size_t b = 0; b < q_lens.size(); ++b) {
    const int64_t q_len = q_lens[b];
    const int64_t kv_len = kv_lens[b];
    for (int64_t q_begin = 0; q_begin < q_len; q_begin += block_m) {
      const int64_t q_end = std::min(q_len, q_begin + block_m);
      const int64_t keys = params.causal ? std::clamp(q_end + kv_len - q_len, int64_t{0}, kv_len) : kv_len;
      for (int h = 0; h < params.num_qo_heads; ++h) {
        pending.push_back({{static_cast<int32_t>(b), h, static_cast<int32_t>(q_begin), static_cast<int32_t>(q_end)},
                           keys});
      }
    }
  }

  std::sort(pending.begin(), pending.end(), [group](const Pending& x, const Pending& y) {
    if (x.keys != y.keys) return x.keys > y.keys;
    if (x.item.request != y.item.request) return x.item.request < y.item.request;
    const int x_kv = x.item.qo_head / group;
    const int y_kv = y.item.qo_head / group;
    if (x_kv != y_kv) return x_kv < y_kv;
    if (x.item.q_begin != y.item.q_begin) return x.item.q_begin < y.item.q_begin;
    return x.item.qo_head < y.item.qo_head;
  });

  std::vector<PrefillWorkItem> items;
  items.reserve(pending.size());
  for (const Pending& p : pending) items.push_back(p.item);
  return items;
}

}  // namespace kbench::kernels
