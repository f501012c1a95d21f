// prefill_block_m and plan_prefill: the work list of the prefill kernels (host only, from the host
// copies of the indptr arrays and, paged, last_page_len).
//
// Every (request, query head) with q_len > 0 gets ceil(q_len / block_m) items, tile t covering rows
// [t * block_m, min(q_len, (t + 1) * block_m)). An item's cost is the keys its CTA visits (kv_len,
// or under the bottom-right causal mask the keys its last row sees, clamp(q_end + kv_len - q_len, 0,
// kv_len)) plus one block of fixed work (the Q load and the epilogue; a tile whose rows see no key
// still writes its zeros).
//
// Order, for the L2: the items of one (request, kv head) read the same keys and values, so they are
// listed together (costliest first inside, then by tile and query head), the costliest groups first.
// The CTAs running at once then work on a few groups only: with 128/128 heads of qk 192 and 8 tiles
// per head, costliest-first over the whole list had the ~132 running CTAs on 132 different heads and
// re-read every head's K/V from HBM once per tile (DRAM-bound at 257 TFLOP/s).
//
// Balance: fa3 is persistent and static (CTA i takes items i, i + grid, ...), so the list is cut
// into rounds of `width` = the CTAs that run at once, and inside each round the costliest item goes
// to the CTA with the least work so far (longest-processing-time dealing): every CTA ends within one
// item's cost of the others. fa2 (one CTA per item, dispatched in order by the hardware) gets the
// same list: the dealing only permutes items inside a round.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
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

namespace {

int ctas_per_sm(PrefillKernel kernel, const PrefillParams& params) {
  switch (kernel) {
    case PrefillKernel::fa2: return prefill_detail::fa2_ctas_per_sm(params);
    case PrefillKernel::fa3: return prefill_detail::fa3_ctas_per_sm(params);
  }
  throw std::invalid_argument("plan_prefill: unknown kernel");
}

struct CostedItem {
  PrefillWorkItem item;
  int64_t cost;
};

// The items of every (request, kv head), costliest first inside; groups costliest first.
std::vector<CostedItem> grouped_items(const PrefillParams& params, const std::vector<int32_t>& q_lens,
                                      const std::vector<int32_t>& kv_lens, int block_m) {
  const int group = params.num_qo_heads / params.num_kv_heads;
  std::vector<std::vector<CostedItem>> groups;
  for (std::size_t b = 0; b < q_lens.size(); ++b) {
    const int64_t q_len = q_lens[b];
    const int64_t kv_len = kv_lens[b];
    if (q_len == 0) continue;
    for (int kv_head = 0; kv_head < params.num_kv_heads; ++kv_head) {
      std::vector<CostedItem>& g = groups.emplace_back();
      for (int64_t q_begin = 0; q_begin < q_len; q_begin += block_m) {
        const int64_t q_end = std::min(q_len, q_begin + block_m);
        const int64_t keys = params.causal ? std::clamp(q_end + kv_len - q_len, int64_t{0}, kv_len) : kv_len;
        for (int h = kv_head * group; h < (kv_head + 1) * group; ++h) {
          g.push_back({{static_cast<int32_t>(b), h, static_cast<int32_t>(q_begin), static_cast<int32_t>(q_end)},
                       keys + block_m});
        }
      }
      // Costliest tiles first; ties keep tile, then query head order (stable).
      std::stable_sort(g.begin(), g.end(), [](const CostedItem& x, const CostedItem& y) { return x.cost > y.cost; });
    }
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& x, const auto& y) { return x.front().cost > y.front().cost; });
  std::vector<CostedItem> items;
  for (const auto& g : groups) items.insert(items.end(), g.begin(), g.end());
  return items;
}

// Per-request lengths from the host indptr arrays, checked the way the kernels will read them.
struct RequestLengths {
  std::vector<int32_t> q;
  std::vector<int32_t> kv;
};

RequestLengths request_lengths(const PrefillParams& params, const std::vector<int32_t>& qo_indptr,
                               const std::vector<int32_t>& kv_indptr, const std::vector<int32_t>& last_page_len) {
  const auto batch = static_cast<std::size_t>(params.batch);
  if (params.batch < 0 || qo_indptr.size() != batch + 1 || kv_indptr.size() != batch + 1 ||
      (params.paged && last_page_len.size() != batch)) {
    throw std::invalid_argument(
        "plan_prefill: qo_indptr and kv_indptr need batch + 1 entries (paged: last_page_len batch)");
  }
  if (params.paged && params.pages.page_size < 1) {
    throw std::invalid_argument("plan_prefill: page_size must be positive");
  }
  RequestLengths lens{std::vector<int32_t>(batch), std::vector<int32_t>(batch)};
  for (std::size_t b = 0; b < batch; ++b) {
    const int64_t q = int64_t{qo_indptr[b + 1]} - qo_indptr[b];
    const int64_t kv_entries = int64_t{kv_indptr[b + 1]} - kv_indptr[b];
    if (q < 0 || kv_entries < 0) {
      throw std::invalid_argument("plan_prefill: request " + std::to_string(b) + " has a decreasing indptr");
    }
    int64_t kv = kv_entries;
    if (params.paged && kv_entries > 0) {
      const int32_t last = last_page_len[b];
      if (last < 1 || last > params.pages.page_size) {
        throw std::invalid_argument("plan_prefill: request " + std::to_string(b) + " has last_page_len " +
                                    std::to_string(last) + " outside [1, page_size]");
      }
      kv = (kv_entries - 1) * params.pages.page_size + last;
    }
    if (kv > std::numeric_limits<int32_t>::max()) throw std::invalid_argument("plan_prefill: over 2^31 keys");
    lens.q[b] = static_cast<int32_t>(q);
    lens.kv[b] = static_cast<int32_t>(kv);
  }
  return lens;
}

}  // namespace

std::vector<PrefillWorkItem> plan_prefill(PrefillKernel kernel, const PrefillParams& params,
                                          const std::vector<int32_t>& qo_indptr, const std::vector<int32_t>& kv_indptr,
                                          const std::vector<int32_t>& last_page_len, int sm_count) {
  const RequestLengths lens = request_lengths(params, qo_indptr, kv_indptr, last_page_len);
  if (params.num_qo_heads < 1 || params.num_kv_heads < 1 || params.num_qo_heads % params.num_kv_heads != 0) {
    throw std::invalid_argument("plan_prefill: num_qo_heads must be a multiple of num_kv_heads >= 1");
  }
  if (sm_count < 1) throw std::invalid_argument("plan_prefill: sm_count must be positive");
  const int block_m = prefill_block_m(kernel, params);
  if (block_m < 1) throw std::invalid_argument("plan_prefill: the kernel's block_m must be positive");
  int64_t total = 0;
  for (int32_t q_len : lens.q) total += (int64_t{q_len} + block_m - 1) / block_m * params.num_qo_heads;
  if (total > std::numeric_limits<int32_t>::max()) throw std::invalid_argument("plan_prefill: over 2^31 work items");

  const std::vector<CostedItem> ordered = grouped_items(params, lens.q, lens.kv, block_m);
  const std::size_t width =
      std::min(ordered.size(), static_cast<std::size_t>(std::max(1, sm_count * ctas_per_sm(kernel, params))));
  // Deal each round to the CTAs by least work so far (cta_of[i]: the CTA of ordered item i). CTAs
  // are numbered only at the end, so that the CTAs of the last, partial round (slots 0..n-1 of the
  // grid) are the least busy ones.
  std::vector<int64_t> load(width, 0);
  std::vector<std::size_t> cta_of(ordered.size());
  std::vector<std::size_t> by_cost;
  const auto deal = [&](std::size_t start, std::size_t n, std::vector<std::size_t>& ctas) {
    by_cost.resize(n);
    std::iota(by_cost.begin(), by_cost.end(), start);
    std::stable_sort(by_cost.begin(), by_cost.end(),
                     [&](std::size_t x, std::size_t y) { return ordered[x].cost > ordered[y].cost; });
    std::stable_sort(ctas.begin(), ctas.end(), [&](std::size_t x, std::size_t y) { return load[x] < load[y]; });
    for (std::size_t i = 0; i < n; ++i) {
      cta_of[by_cost[i]] = ctas[i];
      load[ctas[i]] += ordered[by_cost[i]].cost;
    }
  };
  std::vector<std::size_t> ctas(width);
  std::iota(ctas.begin(), ctas.end(), std::size_t{0});
  const std::size_t full = width ? ordered.size() / width * width : 0;
  for (std::size_t start = 0; start < full; start += width) deal(start, width, ctas);
  // Slots by least work; the partial round goes to the least busy CTAs, slots 0..n-1.
  std::stable_sort(ctas.begin(), ctas.end(), [&](std::size_t x, std::size_t y) { return load[x] < load[y]; });
  std::vector<std::size_t> slot_of(width);
  for (std::size_t s = 0; s < width; ++s) slot_of[ctas[s]] = s;
  std::vector<std::size_t> last_ctas(ctas.begin(), ctas.begin() + static_cast<std::ptrdiff_t>(ordered.size() - full));
  deal(full, ordered.size() - full, last_ctas);

  std::vector<PrefillWorkItem> items(ordered.size());
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    PrefillWorkItem item = ordered[i].item;
    const auto b = static_cast<std::size_t>(item.request);
    item.q_row0 = qo_indptr[b];
    item.q_len = lens.q[b];
    item.kv_row0 = kv_indptr[b];
    item.kv_len = lens.kv[b];
    items[i / width * width + slot_of[cta_of[i]]] = item;
  }
  return items;
}

}  // namespace kbench::kernels
