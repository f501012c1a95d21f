#include "routines/sampling/sampling_checks.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <functional>
#include <map>
#include <string>

namespace kbench {
namespace {

// `v` as an index in [0, bound): an integer read back as a float (exact below 2^24).
bool as_index(float v, int64_t bound, int64_t* index) {
  if (!std::isfinite(v) || v != std::floor(v) || v < 0.0f || static_cast<double>(v) >= static_cast<double>(bound)) {
    return false;
  }
  *index = static_cast<int64_t>(v);
  return true;
}

// The k-th largest of `values` (1 <= k <= size).
float kth_largest(std::span<const float> values, int64_t k) {
  std::vector<float> copy(values.begin(), values.end());
  std::nth_element(copy.begin(), copy.begin() + (k - 1), copy.end(), std::greater<>());
  return copy[static_cast<std::size_t>(k - 1)];
}

// One element against its expected value: torch.isclose, NaN and inf in the output failing.
bool close(double out, double expected, Tolerance t, double* max_error) {
  if (!std::isfinite(out)) return false;
  const double err = std::fabs(out - expected);
  *max_error = std::max(*max_error, err);
  return err <= t.atol + t.rtol * std::fabs(expected);
}

// The rule of a filter's output: which positions may or must be kept, and the kept values within
// the tolerance. Printed instead of the tolerance, so a wrong kept set (values still within 1e-9 of
// x / kept sum) does not read as an isclose failure.
std::string filter_rule_text(const std::string& kept_set, Tolerance t, const std::string& kept_value) {
  char tolerance[96];
  std::snprintf(tolerance, sizeof tolerance, "rtol %g, atol %g", t.rtol, t.atol);
  return "a position kept outside or dropped inside " + kept_set + ", or a kept value off " + kept_value + " (" +
         tolerance + ")";
}

std::string sampler_rule_text(const SamplerRule& rule, int64_t vocab) {
  std::string kept;
  const auto add = [&](const std::string& part) { kept += (kept.empty() ? "" : "; ") + part; };
  if (rule.top_k > 0 && rule.top_k < vocab) add("top-k: fewer than k larger values");
  if (rule.min_p > 0.0 && !rule.from_logits) add("min-p: at least min_p times the largest probability");
  if (rule.top_p < 1.0) add("top-p: the mass of larger values below top_p of the reference mass");
  return "a drawn id outside [0, vocab), of probability 0" + (kept.empty() ? std::string() : ", or outside the kept set (" + kept + ")");
}

}  // namespace

Comparison check_samples(const SamplerRule& rule, int64_t rows, int64_t vocab, std::span<const float> input,
                         std::span<const float> ids) {
  Comparison c{"samples", {}, rows, 0, 0.0, sampler_rule_text(rule, vocab)};
  const bool top_k = rule.top_k > 0 && rule.top_k < vocab;
  std::vector<double> weight(static_cast<std::size_t>(vocab));
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const float> x = input.subspan(static_cast<std::size_t>(r * vocab), static_cast<std::size_t>(vocab));
    int64_t id = 0;
    if (!as_index(ids[static_cast<std::size_t>(r)], vocab, &id)) {
      ++c.mismatches;
      continue;
    }
    const double largest = *std::max_element(x.begin(), x.end());
    for (int64_t j = 0; j < vocab; ++j) weight[j] = rule.from_logits ? std::exp(x[j] - largest) : x[j];
    const float drawn = x[id];
    bool ok = weight[id] > 0.0;
    if (top_k) {
      const auto larger = std::count_if(x.begin(), x.end(), [&](float v) { return v > drawn; });
      ok = ok && larger < rule.top_k;
    }
    if (rule.min_p > 0.0 && !rule.from_logits) ok = ok && weight[id] >= rule.min_p * largest * (1.0 - 1e-6);
    if (rule.top_p < 1.0) {
      double above = 0.0, total = 0.0, top_k_mass = 0.0;
      const float kth = top_k ? kth_largest(x, rule.top_k) : 0.0f;
      for (int64_t j = 0; j < vocab; ++j) {
        total += weight[j];
        if (x[j] > drawn) above += weight[j];
        if (top_k && x[j] >= kth) top_k_mass += weight[j];  // every tie at the k-th value counts
      }
      const double reference = top_k && !rule.joint ? top_k_mass : total;
      ok = ok && above < (rule.top_p + kMassSlack) * reference;
    }
    if (!ok) ++c.mismatches;
  }
  return c;
}

std::vector<float> softmax_reference(int64_t rows, int64_t cols, double temperature, std::span<const float> logits) {
  std::vector<float> out(static_cast<std::size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = logits.data() + r * cols;
    double largest = -INFINITY;
    for (int64_t j = 0; j < cols; ++j) largest = std::max(largest, x[j] / temperature);
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j) sum += std::exp(x[j] / temperature - largest);
    for (int64_t j = 0; j < cols; ++j) out[r * cols + j] = static_cast<float>(std::exp(x[j] / temperature - largest) / sum);
  }
  return out;
}

// Shared by the top-k renorm and mask: positions (above the k-th value kept, below dropped, ties
// either, at least k kept) and the kept values against `kept_value(x, kept sum)`.
template <class IsKept, class KeptValue>
Comparison check_top_k_rows(int64_t rows, int64_t cols, int64_t k, std::span<const float> input,
                            std::span<const float> output, Tolerance tolerance, float dropped, IsKept is_kept,
                            KeptValue kept_value, const std::string& kept_text) {
  Comparison c{"output", tolerance, rows * cols, 0, 0.0,
               filter_rule_text("the top k (above the k-th value kept, ties either, at least k)", tolerance, kept_text)};
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const float> x = input.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(cols));
    const std::span<const float> o = output.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(cols));
    const float kth = kth_largest(x, k);
    int64_t kept = 0;
    double kept_sum = 0.0;
    std::vector<char> keep(static_cast<std::size_t>(cols));
    for (int64_t j = 0; j < cols; ++j) {
      keep[j] = x[j] > kth || (x[j] == kth && is_kept(o[j]));
      if (keep[j]) {
        ++kept;
        kept_sum += x[j];
      }
    }
    if (kept < k) c.mismatches += k - kept;
    for (int64_t j = 0; j < cols; ++j) {
      if (keep[j] ? !close(o[j], kept_value(x[j], kept_sum), tolerance, &c.max_abs_error) : o[j] != dropped) {
        ++c.mismatches;
      }
    }
  }
  return c;
}

Comparison check_top_k_renorm(int64_t rows, int64_t cols, int64_t k, std::span<const float> input,
                              std::span<const float> output, Tolerance tolerance) {
  return check_top_k_rows(rows, cols, k, input, output, tolerance, 0.0f, [](float o) { return o != 0.0f; },
                          [](double x, double sum) { return x / sum; }, "x / kept sum");
}

Comparison check_top_k_mask(int64_t rows, int64_t cols, int64_t k, std::span<const float> input,
                            std::span<const float> output, Tolerance tolerance) {
  return check_top_k_rows(rows, cols, k, input, output, tolerance, -INFINITY, [](float o) { return o != -INFINITY; },
                          [](double x, double) { return x; }, "x");
}

Comparison check_top_p_renorm(int64_t rows, int64_t cols, double top_p, std::span<const float> input,
                              std::span<const float> output, Tolerance tolerance) {
  Comparison c{"output", tolerance, rows * cols, 0, 0.0,
               filter_rule_text("the nucleus (mass before a value below top_p of the row's, with slack)", tolerance,
                                "x / kept sum")};
  std::vector<int64_t> order(static_cast<std::size_t>(cols));
  std::vector<double> above(static_cast<std::size_t>(cols)), at_or_above(static_cast<std::size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = input.data() + r * cols;
    const float* o = output.data() + r * cols;
    for (int64_t j = 0; j < cols; ++j) order[j] = j;
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x[a] > x[b]; });
    // Mass strictly above each value and at or above it (every tie), by groups of equal values.
    double prefix = 0.0;
    for (int64_t g = 0; g < cols;) {
      int64_t end = g;
      double group = 0.0;
      while (end < cols && x[order[end]] == x[order[g]]) group += x[order[end++]];
      for (int64_t j = g; j < end; ++j) {
        above[order[j]] = prefix;
        at_or_above[order[j]] = prefix + group;
      }
      prefix += group;
      g = end;
    }
    const double total = prefix;
    double kept_sum = 0.0;
    std::vector<char> keep(static_cast<std::size_t>(cols));
    for (int64_t j = 0; j < cols; ++j) {
      const bool may = above[j] < (top_p + kMassSlack) * total;
      const bool must = x[j] > 0.0f && (above[j] == 0.0 || at_or_above[j] - x[j] < (top_p - kMassSlack) * total);
      const bool kept = o[j] != 0.0f && x[j] != 0.0f;
      if ((kept && !may) || (!kept && must)) ++c.mismatches;
      keep[j] = kept && may;
      if (keep[j]) kept_sum += x[j];
    }
    for (int64_t j = 0; j < cols; ++j) {
      if (keep[j] && !close(o[j], x[j] / kept_sum, tolerance, &c.max_abs_error)) ++c.mismatches;
    }
  }
  return c;
}

std::vector<Comparison> check_top_k(int64_t rows, int64_t cols, int64_t k, std::span<const float> input,
                                    std::span<const float> values, std::span<const float> indices, Tolerance tolerance) {
  Comparison v{"values", tolerance, rows * k, 0, 0.0, ""};
  Comparison ix{"indices", {}, rows * k, 0, 0.0, "an index out of range, repeated, or not where its value is"};
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const float> x = input.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(cols));
    std::vector<float> expected(x.begin(), x.end());
    std::partial_sort(expected.begin(), expected.begin() + k, expected.end(), std::greater<>());
    std::vector<float> got(values.begin() + r * k, values.begin() + (r + 1) * k);
    std::sort(got.begin(), got.end(), std::greater<>());
    for (int64_t j = 0; j < k; ++j) {
      if (!close(got[j], expected[j], tolerance, &v.max_abs_error)) ++v.mismatches;
    }
    std::vector<char> seen(static_cast<std::size_t>(cols));
    for (int64_t j = 0; j < k; ++j) {
      int64_t index = 0;
      const bool ok = as_index(indices[r * k + j], cols, &index) && !seen[index] && x[index] == values[r * k + j];
      if (ok) seen[index] = 1;
      else ++ix.mismatches;
    }
  }
  return {v, ix};
}

Comparison check_transform(int64_t rows, int64_t cols, int64_t k, std::span<const float> scores,
                           std::span<const float> page_table, std::span<const int32_t> offsets,
                           std::span<const int32_t> lengths, std::span<const float> output) {
  Comparison c{"output", {}, rows * k, 0, 0.0,
               "an entry that is not the image of a top-k set (all above the k-th score, the rest equal to it)"};
  const bool paged = !page_table.empty();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t length = std::clamp<int64_t>(lengths[r], 0, cols);
    const auto map = [&](int64_t i) -> int64_t {
      return paged ? static_cast<int64_t>(page_table[r * cols + i]) : i + offsets[r];
    };
    const float* out = output.data() + r * k;
    if (length <= k) {
      for (int64_t j = 0; j < k; ++j) {
        if (out[j] != static_cast<float>(j < length ? map(j) : -1)) ++c.mismatches;
      }
      continue;
    }
    const std::span<const float> s = scores.subspan(static_cast<std::size_t>(r * cols), static_cast<std::size_t>(length));
    const float kth = kth_largest(s, k);
    std::map<int64_t, int64_t> required, optional;  // images of the values above the k-th, equal to it
    for (int64_t i = 0; i < length; ++i) {
      if (s[i] > kth) ++required[map(i)];
      else if (s[i] == kth) ++optional[map(i)];
    }
    for (int64_t j = 0; j < k; ++j) {
      const auto v = static_cast<int64_t>(out[j]);
      if (static_cast<float>(v) != out[j]) {
        ++c.mismatches;
      } else if (auto it = required.find(v); it != required.end() && it->second > 0) {
        --it->second;
      } else if (auto jt = optional.find(v); jt != optional.end() && jt->second > 0) {
        --jt->second;
      } else {
        ++c.mismatches;
      }
    }
    for (const auto& [image, missing] : required) c.mismatches += missing;
  }
  return c;
}

std::vector<Comparison> check_chain(int64_t rows, int64_t n, int64_t vocab, std::span<const float> draft_ids,
                                    std::span<const float> draft, std::span<const float> target,
                                    std::span<const float> ids, std::span<const float> accepted,
                                    std::span<const float> emitted) {
  Comparison out{"output_token_ids", {}, rows * (n + 1), 0, 0.0,
                 "not the accepted drafts, then a token of target > draft (target > 0 after all n), then -1"};
  Comparison acc{"accepted_num", {}, rows, 0, 0.0,
                 "outside [emitted + positions after it with target > draft, emitted + positions from it with target > 0]"};
  Comparison em{"emitted_num", {}, rows, 0, 0.0,
                "outside [0, n], a stop before an unacceptable draft (target 0) or at a draft with target > draft"};
  for (int64_t r = 0; r < rows; ++r) {
    const auto q = [&](int64_t i, int64_t t) { return target[((r * (n + 1)) + i) * vocab + t]; };
    const auto p = [&](int64_t i, int64_t t) { return draft[((r * n) + i) * vocab + t]; };
    const auto token = [&](int64_t i) { return static_cast<int64_t>(draft_ids[r * n + i]); };
    int64_t e = 0;
    if (!as_index(emitted[r], n + 1, &e)) {
      ++em.mismatches;
      out.mismatches += n + 1;
      ++acc.mismatches;
      continue;
    }
    bool stop_ok = e == n || q(e, token(e)) <= p(e, token(e));
    for (int64_t i = 0; i < e; ++i) stop_ok = stop_ok && q(i, token(i)) > 0.0f;
    if (!stop_ok) ++em.mismatches;
    const float* row = ids.data() + r * (n + 1);
    for (int64_t j = 0; j <= n; ++j) {
      bool ok = false;
      if (j < e) {
        ok = row[j] == static_cast<float>(token(j));
      } else if (j == e) {
        int64_t t = 0;
        ok = as_index(row[j], vocab, &t) && (e < n ? q(e, t) > p(e, t) : q(n, t) > 0.0f);
      } else {
        ok = row[j] == -1.0f;
      }
      if (!ok) ++out.mismatches;
    }
    int64_t lower = e, upper = e;
    for (int64_t i = e; i < n; ++i) {
      if (i > e && q(i, token(i)) > p(i, token(i))) ++lower;
      if (q(i, token(i)) > 0.0f) ++upper;
    }
    int64_t a = 0;
    if (!as_index(accepted[r], n + 1, &a) || a < lower || a > upper) ++acc.mismatches;
  }
  return {out, acc, em};
}

}  // namespace kbench
