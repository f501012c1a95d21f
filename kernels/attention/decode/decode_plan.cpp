// plan_decode: the split-KV schedule (host only, from the host copy of the page table).
//
// Work: every (request, kv head) pair is one work item, or, when the pairs alone cannot keep the
// GPU busy, several items over consecutive token chunks whose partial results the merge kernel
// combines. A kernel model gives the CTAs one item launches (fa2: ceil(group / heads per CTA);
// fa2_tc: ceil(group / 16)) and the CTAs resident per SM (fa2: 2, i.e. 8 warps; fa2_tc: 4 / 2 / 1 at
// head_dim 64 / 128 / 256, one more for fp8 at 128 and 256), hence `slots` = sm_count x CTAs per SM.
//
// Cost model, in units of "one token of one kv head through one slot" (at the 16-bit cache's
// 4 * head_dim bytes per token and 3 TB/s shared by all slots): a CTA costs its chunk's tokens plus
// a fixed overhead (1.5 us: launch, q load, pipeline fill, epilogue); the GPU is simulated as
// `slots` identical servers taking CTAs in launch order (greedy list scheduling, as the block
// scheduler does), except that under one wave fa2_tc's CTAs of equal-length batches stream faster
// than their share: each up to ~27 GB/s (16-bit, head_dim >= 128), the CTAs dealt round-robin to
// one SM together up to ~40 GB/s, all together at most the HBM rate; a split adds the merge (4 us,
// 8 ns per partial of the most split pair, plus its partial traffic). Candidates: no split, and
// chunk sizes ceil(max_len / k) rounded up to the alignment for k = 2, 3, ... while the chunk is
// at least 128 tokens and the split adds at most 8 x slots CTAs. Each request longer than the
// chunk size is cut into ceil(len / chunk) nearly equal chunks whose boundaries are multiples of
// the alignment (the page size, or the smallest multiple of it >= 16 tokens for pages under 16
// tokens), so chunks start on page boundaries. The cheapest candidate wins (a split must beat the
// unsplit cost by 0.5%).
//
// Examples (132 SMs, fa2, 8 kv heads, head_dim 128, equal lengths): batch 32 x 8192 -> 256 items,
// no split (one wave of 264 slots); batch 16 x 8192 -> 2 chunks of 4096 (256 items); batch 1 x 65536
// -> 33 chunks of ~1986 tokens (264 items); batch 64 and 128 x 8192 -> no split. fa2_tc, bf16: batch
// 16 x 8192 -> no split (128 items); batch 1 x 65536 -> 14 chunks of ~4688 (112 items); batch 1 x
// 512 -> 4 chunks of 128 (32 items); one kv head of 131072 tokens -> 113 chunks of ~1160 (33.9 us,
// cuDNN 37.6 in the same run).
//
// Items are emitted longest first (stable), so long items start early; partial slots are numbered
// consecutively per (request, kv head) in request-major order, merge_indptr covering every pair
// (empty ranges for unsplit pairs) whenever any pair is split.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention/decode/decode.hpp"
#include "kernels/attention/decode/decode_common.cuh"

namespace kbench::kernels {

namespace {

struct KernelModel {
  int ctas_per_sm = 2;
  int ctas_per_item = 1;
  double cta_bytes_per_second = 0.0;  // what one CTA streams when the GPU is not full (0: its share)
  double sm_bytes_per_second = 0.0;   // what one SM streams, however many CTAs it holds
};

KernelModel model_for(DecodeKernel kernel, int group, int head_dim, DType kv_dtype) {
  KernelModel m;
  if (kernel == DecodeKernel::fa2) {
    const int heads = decode_detail::fa2::fa2_heads_per_cta(group);
    m.ctas_per_sm = 2;
    m.ctas_per_item = (group + heads - 1) / heads;
  } else {
    // fp8 tiles take half the shared memory: one more CTA fits per SM at head_dim 128 and 256; head_dim
    // 64 fits four either way (decode_fa2_tc.cuh's table).
    const int extra = is_fp8(kv_dtype) ? 1 : 0;
    m.ctas_per_sm = head_dim <= 64 ? 4 : ((head_dim <= 128 ? 2 : 1) + extra);
    m.ctas_per_item = (group + 15) / 16;
    // What one CTA streams when the GPU is not full: 27 GB/s of a 16-bit cache (100 CTAs of 2.7 MB
    // each, experiments/session29), 20 GB/s at head_dim 64, whose CTA keeps half the bytes in
    // flight (two 16 KB stages ahead, not 32 KB ones; 32 requests of 8192 tokens: 256 chunks ran
    // 29.6 us, 128 31.1); fp8 at the token rate of the first calibration (30 GB/s of a 16-bit
    // cache: a 2 MB chunk of a lone request took 68-72 us, 1 MB 34-38 us, experiments/session16/
    // decode_chunk_sweep.csv), as fp8 tokens come no faster (sixteen 8192-token requests ran 37%
    // slower when planned with a byte rate). One SM streams ~40 GB/s of a 16-bit cache however many
    // CTAs share it (four requests of one KV head at 131072 tokens: 128 chunks, one an SM, 99.9 us;
    // 140, eight SMs with two, 104.5; 256 99.4). fa2 keeps its share (it ran up to 1.5x slower with
    // fewer, longer chunks).
    if (is_fp8(kv_dtype)) {
      m.cta_bytes_per_second = 15.0e9;
      m.sm_bytes_per_second = m.ctas_per_sm * m.cta_bytes_per_second;  // no SM limit measured
    } else {
      m.cta_bytes_per_second = head_dim <= 64 ? 20.0e9 : 27.0e9;
      m.sm_bytes_per_second = 40.0e9;
    }
  }
  return m;
}

constexpr double kHbmBytesPerSecond = 3.0e12;
constexpr double kCtaOverheadSeconds = 1.5e-6;
// The merge: fixed (its launch after the decode kernel), plus per partial of a (request, kv head)
// pair (its blocks take eight partials a thread at once: 100 and 256 partials of one pair took 4.4
// and 5.6 us).
constexpr double kMergeSeconds = 4.0e-6;
constexpr double kMergeSecondsPerPartial = 8.0e-9;
constexpr int64_t kMinChunkTokens = 128;
constexpr double kSplitMargin = 0.995;
constexpr int64_t kMaxTokens = int64_t{1} << 30;

// KBENCH_DECODE_CHUNK=<tokens> overrides the cost model's chunk size, for calibrating it (rounded up
// to the alignment; 0, or the longest request or more: no split); nullopt when unset or malformed.
std::optional<int64_t> forced_chunk_tokens() {
  const char* forced = std::getenv("KBENCH_DECODE_CHUNK");
  if (forced == nullptr) return std::nullopt;
  char* end = nullptr;
  const long long tokens = std::strtoll(forced, &end, 10);
  if (end == forced || *end != '\0' || tokens < 0) return std::nullopt;
  return static_cast<int64_t>(tokens);
}

// Chunk boundaries of a request of `len` tokens for chunk size `chunk`: [0, b1, ..., len].
std::vector<int64_t> chunk_bounds(int64_t len, int64_t chunk, int64_t align) {
  std::vector<int64_t> bounds{0};
  if (len <= chunk) {
    bounds.push_back(len);
    return bounds;
  }
  const int64_t n = (len + chunk - 1) / chunk;
  for (int64_t i = 1; i < n; ++i) {
    const int64_t b = (i * len / n) / align * align;
    if (b > bounds.back() && b < len) bounds.push_back(b);
  }
  bounds.push_back(len);
  return bounds;
}

// Makespan of CTAs on `slots` identical servers (`sms` SMs of slots / sms each); `runs` are
// (cost, count) pairs, longest first, in launch order. Up to 16 waves: greedy list scheduling, as
// the block scheduler does; beyond, the list-scheduling bound max(longest, total / slots) + mean
// cost (the last wave's quantization is then a small part of the whole).
double makespan(const std::vector<std::pair<double, int64_t>>& runs, int64_t slots, int64_t sms, double cta_speedup,
                double sm_speedup) {
  double worst = 0.0;
  double total = 0.0;
  int64_t n = 0;
  for (const auto& [c, count] : runs) {
    worst = std::max(worst, c);
    total += c * static_cast<double>(count);
    n += count;
  }
  // Under one wave the CTAs share the HBM bandwidth among fewer than `slots`: each streams up to
  // cta_speedup times its full-GPU share, the CTAs of one SM (dealt round-robin) together up to
  // sm_speedup times, and all together at most the HBM rate.
  if (n <= slots) {
    if (cta_speedup <= 1.0) return std::max(worst, total / static_cast<double>(slots));
    std::vector<double> load(static_cast<std::size_t>(sms), 0.0);
    std::vector<int> ctas(static_cast<std::size_t>(sms), 0);
    int64_t i = 0;
    for (const auto& [c, count] : runs) {
      for (int64_t k = 0; k < count; ++k, ++i) {
        load[static_cast<std::size_t>(i % sms)] += c;
        ++ctas[static_cast<std::size_t>(i % sms)];
      }
    }
    double end = total / static_cast<double>(slots);
    for (std::size_t s = 0; s < load.size(); ++s) {
      if (ctas[s] > 0) end = std::max(end, load[s] / std::min(ctas[s] * cta_speedup, sm_speedup));
    }
    return end;
  }
  if (n > 16 * slots) return std::max(worst, total / static_cast<double>(slots)) + total / static_cast<double>(n);
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int64_t s = 0; s < slots; ++s) free_at.push(0.0);
  double end = 0.0;
  for (const auto& [c, count] : runs) {
    for (int64_t i = 0; i < count; ++i) {
      const double t = free_at.top() + c;
      free_at.pop();
      free_at.push(t);
      end = std::max(end, t);
    }
  }
  return end;
}

}  // namespace

DecodePlan plan_decode(DecodeKernel kernel, const std::vector<int32_t>& indptr,
                       const std::vector<int32_t>& last_page_len, int page_size, int num_qo_heads, int num_kv_heads,
                       int head_dim, int sm_count, DType kv_dtype) {
  const int64_t batch = static_cast<int64_t>(last_page_len.size());
  if (static_cast<int64_t>(indptr.size()) != batch + 1) {
    throw std::invalid_argument("plan_decode: indptr must have batch + 1 entries");
  }
  if (page_size < 1 || num_kv_heads < 1 || num_qo_heads < 1 || num_qo_heads % num_kv_heads != 0) {
    throw std::invalid_argument("plan_decode: need page_size >= 1 and num_qo_heads a multiple of num_kv_heads >= 1");
  }
  if (head_dim < 1) throw std::invalid_argument("plan_decode: head_dim must be positive");

  std::vector<int64_t> lens(static_cast<std::size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t pages = static_cast<int64_t>(indptr[b + 1]) - indptr[b];
    const int64_t last = last_page_len[b];
    if (indptr[b] < 0 || pages < 0) throw std::invalid_argument("plan_decode: indptr must be non-decreasing from 0");
    if (last < 0 || last > page_size) {
      throw std::invalid_argument("plan_decode: last_page_len[" + std::to_string(b) + "] outside [0, page_size]");
    }
    const int64_t len = pages > 0 ? (pages - 1) * page_size + last : 0;
    if (len >= kMaxTokens) throw std::invalid_argument("plan_decode: a request longer than 2^30 tokens");
    lens[static_cast<std::size_t>(b)] = len;
  }

  const int group = num_qo_heads / num_kv_heads;
  const KernelModel model = model_for(kernel, group, head_dim, kv_dtype);
  const int64_t slots = static_cast<int64_t>(std::max(sm_count, 1)) * model.ctas_per_sm;
  const int64_t ctas_per_chunk = static_cast<int64_t>(num_kv_heads) * model.ctas_per_item;
  // Seconds per token of one kv head on one slot, when all slots share the HBM bandwidth.
  const double token_bytes = 2.0 * head_dim * static_cast<double>(dtype_size(kv_dtype));  // K and V
  const double token_seconds = token_bytes * static_cast<double>(slots) / kHbmBytesPerSecond;
  const double cta_overhead = kCtaOverheadSeconds / token_seconds;  // in tokens
  // Ragged batches keep the full-GPU share: their long chunks share the bandwidth with the short
  // ones while those run (sixteen random-length requests ran 5-12% slower planned with the cap).
  const bool equal_lengths = std::adjacent_find(lens.begin(), lens.end(), std::not_equal_to<>()) == lens.end();
  const double cta_speedup =
      equal_lengths ? std::max(1.0, model.cta_bytes_per_second * static_cast<double>(slots) / kHbmBytesPerSecond) : 1.0;
  const double sm_speedup = model.sm_bytes_per_second * static_cast<double>(slots) / kHbmBytesPerSecond;
  const int64_t sms = std::max(sm_count, 1);
  const int64_t align = page_size >= 16 ? page_size : page_size * ((16 + page_size - 1) / page_size);

  int64_t max_len = 0;
  for (int64_t len : lens) max_len = std::max(max_len, len);

  // Requests by length (longest first): the cost model only needs the distinct lengths.
  std::vector<std::pair<int64_t, int64_t>> by_len;  // (length, requests)
  {
    std::vector<int64_t> sorted = lens;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    for (int64_t len : sorted) {
      if (by_len.empty() || by_len.back().first != len) by_len.emplace_back(len, 0);
      ++by_len.back().second;
    }
  }

  // Cost of splitting at `chunk` (no split when chunk >= max_len); also returns the CTA count.
  auto evaluate = [&](int64_t chunk, int64_t* ctas) {
    std::vector<std::pair<double, int64_t>> runs;  // (CTA cost, CTAs)
    int64_t split_slots = 0;
    int64_t most_partials = 0;  // of one pair
    for (const auto& [len, requests] : by_len) {
      const std::vector<int64_t> bounds = chunk_bounds(len, chunk, align);
      const int64_t n = static_cast<int64_t>(bounds.size()) - 1;
      if (n > 1) {
        split_slots += n * num_kv_heads * requests;
        most_partials = std::max(most_partials, n);
      }
      for (int64_t i = 0; i < n; ++i) {
        runs.emplace_back(static_cast<double>(bounds[i + 1] - bounds[i]) + cta_overhead, requests * ctas_per_chunk);
      }
    }
    std::stable_sort(runs.begin(), runs.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    *ctas = 0;
    for (const auto& run : runs) *ctas += run.second;
    double cost = makespan(runs, slots, sms, cta_speedup, sm_speedup);
    if (split_slots > 0) {
      const double merge_bytes = 2.0 * static_cast<double>(split_slots) * group * (head_dim + 1) * 4.0;
      const double merge_seconds = kMergeSeconds + kMergeSecondsPerPartial * static_cast<double>(most_partials);
      cost += (merge_seconds + merge_bytes / kHbmBytesPerSecond) / token_seconds;
    }
    return cost;
  };

  // The cheapest chunk size (the unsplit max_len when no split pays).
  auto cheapest_chunk = [&] {
    int64_t best_chunk = std::max<int64_t>(max_len, 1);  // no split
    int64_t unsplit_ctas = 0;
    const double unsplit_cost = evaluate(best_chunk, &unsplit_ctas);
    double best_cost = unsplit_cost * kSplitMargin;
    const int64_t min_chunk = (std::max(kMinChunkTokens, align) + align - 1) / align * align;
    int64_t previous = best_chunk;
    for (int64_t k = 2; max_len > min_chunk && k <= 4096; ++k) {
      const int64_t chunk = ((max_len + k - 1) / k + align - 1) / align * align;
      if (chunk < min_chunk) break;
      if (chunk >= previous) continue;
      previous = chunk;
      int64_t ctas = 0;
      const double cost = evaluate(chunk, &ctas);
      if (cost < best_cost) {
        best_cost = cost;
        best_chunk = chunk;
      }
      if (ctas > unsplit_ctas + 8 * slots) break;  // finer chunks cannot balance better
    }
    return best_chunk;
  };
  const int64_t unsplit = std::max<int64_t>(max_len, 1);
  const std::optional<int64_t> forced = forced_chunk_tokens();
  const int64_t best_chunk =
      !forced ? cheapest_chunk() : *forced == 0 ? unsplit : std::min(unsplit, (*forced + align - 1) / align * align);

  // Emit the plan for best_chunk.
  DecodePlan plan;
  struct Pending {
    DecodeWorkItem item;
    int64_t len;
  };
  std::vector<Pending> pending;
  std::vector<int32_t> pair_slots(static_cast<std::size_t>(batch * num_kv_heads), 0);
  int64_t next_slot = 0;
  bool any_split = false;
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<int64_t> bounds = chunk_bounds(lens[static_cast<std::size_t>(b)], best_chunk, align);
    const int64_t n = static_cast<int64_t>(bounds.size()) - 1;
    const bool split = n > 1;
    any_split = any_split || split;
    // Slots stay contiguous per (request, kv head) for the merge; the items of one chunk are
    // emitted for every kv head in turn, so the CTAs that share a chunk's pages (NHD interleaves
    // the heads within a page) run side by side. The stable sort below keeps them so: a length
    // class holds whole chunks, so every chunk's items stay consecutive from a multiple of
    // num_kv_heads, and fa2_tc's fp8 NHD head pairs (items 2x, 2x + 1 in one CTA) are heads h, h + 1
    // of one chunk.
    const int64_t first_slot = next_slot;
    if (split) next_slot += n * num_kv_heads;
    for (int64_t h = 0; h < num_kv_heads; ++h) {
      pair_slots[static_cast<std::size_t>(b * num_kv_heads + h)] = static_cast<int32_t>(split ? n : 0);
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t h = 0; h < num_kv_heads; ++h) {
        Pending p;
        p.item.request = static_cast<int32_t>(b);
        p.item.kv_head = static_cast<int32_t>(h);
        p.item.token_begin = static_cast<int32_t>(bounds[i]);
        p.item.token_end = static_cast<int32_t>(bounds[i + 1]);
        p.item.partial_slot = split ? static_cast<int32_t>(first_slot + h * n + i) : -1;
        p.len = bounds[i + 1] - bounds[i];
        pending.push_back(p);
      }
    }
  }
  if (next_slot > std::numeric_limits<int32_t>::max()) throw std::invalid_argument("plan_decode: too many chunks");
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& x, const Pending& y) { return x.len > y.len; });
  plan.items.reserve(pending.size());
  for (const Pending& p : pending) plan.items.push_back(p.item);
  plan.num_partial_slots = static_cast<int>(next_slot);
  plan.max_pair_slots = *std::max_element(pair_slots.begin(), pair_slots.end());
  if (any_split) {
    plan.merge_indptr.resize(pair_slots.size() + 1);
    plan.merge_indptr[0] = 0;
    for (std::size_t i = 0; i < pair_slots.size(); ++i) plan.merge_indptr[i + 1] = plan.merge_indptr[i] + pair_slots[i];
  }
  return plan;
}

}  // namespace kbench::kernels
