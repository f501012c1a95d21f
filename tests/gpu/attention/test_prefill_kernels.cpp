// GPU tests of kbench's prefill attention: the fp32 reference against a double-precision CPU
// computation, then fa2 and fa3 (through plan_prefill + launch_prefill) against the reference over
// head dims (64, 128, 256, 192/128), GQA groups (1, 4, 5, 8), causal or not, ragged lengths (1, odd
// sizes, q < kv, q > kv under the causal mask, kv 0), paged caches (pages of 1 to 128 rows, powers
// of two or not, NHD and HND), bf16 / fp16 and fa3's fp8_e4m3; CUDA-graph capture; the parameter
// checks.
//
// Inputs are random (never zeros). Ragged K/V carry NaN rows after the last request; paged caches
// carry NaN in their spare pages and in the unused slots of last pages, so a kernel reading past a
// request's keys produces NaN. Outputs are poisoned (NaN) with a poisoned guard after them: every
// element must be written, finite, within ||out - ref|| / ||ref|| < 2e-2 (fp8 inputs 6e-2) and
// within compat.md's isclose tolerances (rtol 0.2, atol 0.01; fp8 inputs 0.5, 0.1).
//
// fa2 must take every bf16/fp16 configuration of its contract on sm_80+, fa3 every bf16/fp16 one on
// sm_90 (fp8_e4m3 where fa3_supported says so; the test prints which). fa3 tests skip off sm_90.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/refcheck.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kbench/dtype.hpp"
#include "kernels/attention/prefill/prefill.hpp"
#include "kernels/common/tensor_fill.hpp"

namespace {

using kbench::DType;
using kbench::dtype_name;
using kbench::dtype_size;
using kbench::is_fp8;
using kbench::testing::device_sm_count;
namespace kk = kbench::kernels;
using kk::KvLayout;
using kk::PrefillKernel;

constexpr int64_t kGuardBytes = 64;
constexpr int kGuardRows = 4;  // NaN K/V rows after a ragged batch

struct Slots {
  enum Slot { kQ, kK, kV, kQoIndptr, kKvIndptr, kIndices, kLastPageLen, kOut, kOutF32, kRef, kItems, kEager, kCount };
};
struct Workspace : Slots, kbench::testing::ScratchBuffers<Slots::kCount> {};

struct Case {
  std::vector<int32_t> q_lens = {1, 37, 129, 300};
  std::vector<int32_t> kv_lens = {1, 100, 129, 300};
  int num_kv_heads = 2;
  int group = 4;
  int head_dim_qk = 128;
  int head_dim_vo = 128;
  bool causal = false;
  bool paged = false;
  int page_size = 16;
  KvLayout layout = KvLayout::NHD;
  DType q = DType::bfloat16;
  DType kv = DType::bfloat16;
  DType out = DType::bfloat16;
  float q_scale = 1.0f;
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  float sm_scale_mult = 1.0f;  // sm_scale = mult / sqrt(head_dim_qk)
  bool pdl = false;
  uint64_t seed = 1;

  [[nodiscard]] int batch() const { return static_cast<int>(q_lens.size()); }
  [[nodiscard]] int num_qo_heads() const { return num_kv_heads * group; }
  [[nodiscard]] bool fp8_inputs() const { return is_fp8(q) || is_fp8(kv); }
  [[nodiscard]] std::string describe() const {
    std::ostringstream s;
    s << (paged ? "paged" : "ragged") << " dims=" << head_dim_qk << "/" << head_dim_vo << " heads=" << num_qo_heads()
      << "/" << num_kv_heads << (causal ? " causal" : "");
    if (paged) s << " page=" << page_size << (layout == KvLayout::NHD ? " NHD" : " HND");
    s << " q=" << dtype_name(q) << " kv=" << dtype_name(kv) << " out=" << dtype_name(out) << " scales(q,k,v)="
      << q_scale << "," << k_scale << "," << v_scale << " sm_mult=" << sm_scale_mult << (pdl ? " pdl" : "")
      << " lens(q/kv)=[";
    for (std::size_t i = 0; i < q_lens.size(); ++i) s << (i ? "," : "") << q_lens[i] << "/" << kv_lens[i];
    s << "]";
    return s.str();
  }
};

using kbench::testing::to_device;
using kbench::testing::to_host;
std::vector<float> floats_of(Workspace& ws, const void* data, DType dtype, int64_t count) {
  auto* f32 = reinterpret_cast<float*>(ws.get(Workspace::kOutF32, std::max<int64_t>(count, 1) * 4));
  KBENCH_CUDA_CHECK(kk::convert_to_float(data, dtype, count, f32, ws.stream()));
  return to_host<float>(f32, count, ws.stream());
}

std::vector<int32_t> offsets(const std::vector<int32_t>& lens) {
  std::vector<int32_t> o(1, 0);
  for (int32_t len : lens) o.push_back(o.back() + len);
  return o;
}

bool sm90() {
  int device = 0, major = 0, minor = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return major == 9 && minor == 0;
}

// A case's inputs on the device and its fp32 reference output.
struct Built {
  kk::PrefillParams params;
  int64_t q_rows = 0;
  int64_t out_count = 0;
  int64_t k_count = 0;  // elements of ragged K, or of the whole paged cache
  int64_t v_count = 0;  // ragged V
  std::vector<int32_t> qo_indptr;
  std::vector<int32_t> kv_indptr;  // ragged: tokens; paged: pages
  std::vector<int32_t> indices;
  std::vector<int32_t> last_page_len;
  std::vector<float> ref;
};

Built build(Workspace& ws, const Case& c) {
  cudaStream_t stream = ws.stream();
  Built b;
  std::mt19937_64 rng(c.seed * 7919 + 3);
  const int hq = c.num_qo_heads(), hkv = c.num_kv_heads;
  const int64_t kv_elem = static_cast<int64_t>(dtype_size(c.kv));
  const float q_std = is_fp8(c.q) ? 4.0f : 1.0f;  // fp8: values well inside the format's range
  const float kv_std = is_fp8(c.kv) ? 4.0f : 1.0f;

  b.qo_indptr = offsets(c.q_lens);
  const std::vector<int32_t>& qo_indptr = b.qo_indptr;
  b.q_rows = qo_indptr.back();
  const int64_t q_count = b.q_rows * hq * c.head_dim_qk;
  b.out_count = b.q_rows * hq * c.head_dim_vo;
  char* q = ws.get(Workspace::kQ, std::max<int64_t>(q_count, 1) * static_cast<int64_t>(dtype_size(c.q)));
  KBENCH_CUDA_CHECK(kk::fill_normal(q, c.q, q_count, c.seed, 0.0f, q_std, stream));

  kk::PrefillParams& p = b.params;
  if (!c.paged) {
    b.kv_indptr = offsets(c.kv_lens);
    const int64_t rows = b.kv_indptr.back();
    b.k_count = rows * hkv * c.head_dim_qk;
    b.v_count = rows * hkv * c.head_dim_vo;
    const int64_t k_guard = static_cast<int64_t>(kGuardRows) * hkv * c.head_dim_qk;
    const int64_t v_guard = static_cast<int64_t>(kGuardRows) * hkv * c.head_dim_vo;
    char* k = ws.get(Workspace::kK, (b.k_count + k_guard) * kv_elem);
    char* v = ws.get(Workspace::kV, (b.v_count + v_guard) * kv_elem);
    KBENCH_CUDA_CHECK(kk::fill_normal(k, c.kv, b.k_count, c.seed + 1, 0.0f, kv_std, stream));
    KBENCH_CUDA_CHECK(kk::fill_normal(v, c.kv, b.v_count, c.seed + 2, 0.0f, kv_std, stream));
    KBENCH_CUDA_CHECK(kk::poison(k + b.k_count * kv_elem, k_guard * kv_elem, stream));
    KBENCH_CUDA_CHECK(kk::poison(v + b.v_count * kv_elem, v_guard * kv_elem, stream));
    p.ragged.k = k;
    p.ragged.v = v;
    p.ragged.indptr =
        to_device(ws.get(Workspace::kKvIndptr, static_cast<int64_t>(b.kv_indptr.size()) * 4), b.kv_indptr, stream);
  } else {
    // Disjoint pages in shuffled order; spare pages and the slots past each last page's length NaN.
    const int ps = c.page_size;
    b.kv_indptr.assign(1, 0);
    for (int32_t len : c.kv_lens) {
      const int pages = (len + ps - 1) / ps;
      b.kv_indptr.push_back(b.kv_indptr.back() + pages);
      b.last_page_len.push_back(pages > 0 ? len - (pages - 1) * ps : 0);
    }
    const int used = b.kv_indptr.back();
    const int total_pages = used + 3;
    std::vector<int32_t> ids(static_cast<std::size_t>(total_pages));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    b.indices.assign(ids.begin(), ids.begin() + used);
    const int64_t row = static_cast<int64_t>(c.head_dim_qk) * kv_elem;
    const int64_t half_page = static_cast<int64_t>(ps) * hkv * row;
    b.k_count = static_cast<int64_t>(total_pages) * 2 * half_page / kv_elem;
    char* cache = ws.get(Workspace::kK, b.k_count * kv_elem);
    KBENCH_CUDA_CHECK(kk::fill_normal(cache, c.kv, b.k_count, c.seed + 1, 0.0f, kv_std, stream));
    for (int i = used; i < total_pages; ++i) {
      KBENCH_CUDA_CHECK(kk::poison(cache + ids[static_cast<std::size_t>(i)] * 2 * half_page, 2 * half_page, stream));
    }
    for (int r = 0; r < c.batch(); ++r) {
      const int pages = b.kv_indptr[r + 1] - b.kv_indptr[r];
      const int last = b.last_page_len[static_cast<std::size_t>(r)];
      if (pages == 0 || last == ps) continue;
      const int64_t page = b.indices[static_cast<std::size_t>(b.kv_indptr[r + 1] - 1)];
      for (int half = 0; half < 2; ++half) {
        char* base = cache + page * 2 * half_page + half * half_page;
        if (c.layout == KvLayout::NHD) {  // [slot][head][dim]
          KBENCH_CUDA_CHECK(kk::poison(base + last * hkv * row, (ps - last) * hkv * row, stream));
        } else {  // [head][slot][dim]
          for (int h = 0; h < hkv; ++h) {
            KBENCH_CUDA_CHECK(kk::poison(base + (static_cast<int64_t>(h) * ps + last) * row, (ps - last) * row, stream));
          }
        }
      }
    }
    p.paged = true;
    p.pages.data = cache;
    p.pages.layout = c.layout;
    p.pages.page_size = ps;
    p.pages.indptr =
        to_device(ws.get(Workspace::kKvIndptr, static_cast<int64_t>(b.kv_indptr.size()) * 4), b.kv_indptr, stream);
    p.pages.indices =
        to_device(ws.get(Workspace::kIndices, std::max<int64_t>(used, 1) * 4), b.indices, stream);
    p.pages.last_page_len =
        to_device(ws.get(Workspace::kLastPageLen, static_cast<int64_t>(c.batch()) * 4), b.last_page_len, stream);
  }

  p.q = q;
  p.q_dtype = c.q;
  p.q_scale = c.q_scale;
  p.qo_indptr = to_device(ws.get(Workspace::kQoIndptr, static_cast<int64_t>(qo_indptr.size()) * 4), qo_indptr, stream);
  p.out_dtype = c.out;
  p.kv_dtype = c.kv;
  p.k_scale = c.k_scale;
  p.v_scale = c.v_scale;
  p.batch = c.batch();
  p.num_qo_heads = hq;
  p.num_kv_heads = hkv;
  p.head_dim_qk = c.head_dim_qk;
  p.head_dim_vo = c.head_dim_vo;
  p.causal = c.causal;
  p.sm_scale = c.sm_scale_mult / std::sqrt(static_cast<float>(c.head_dim_qk));
  p.enable_pdl = c.pdl;

  auto* ref = reinterpret_cast<float*>(ws.get(Workspace::kRef, std::max<int64_t>(b.out_count, 1) * 4));
  KBENCH_CUDA_CHECK(kk::poison(ref, b.out_count * 4, stream));
  KBENCH_CUDA_CHECK(kk::launch_prefill_reference(p, ref, stream));
  KBENCH_CUDA_CHECK(cudaGetLastError());
  b.ref = to_host<float>(ref, b.out_count, stream);
  return b;
}

// The attention in double on the host, from the device inputs (prefill.hpp's formula).
std::vector<double> cpu_attention(Workspace& ws, const Case& c, const Built& b) {
  const kk::PrefillParams& p = b.params;
  const int hq = c.num_qo_heads(), hkv = c.num_kv_heads, dqk = c.head_dim_qk, dvo = c.head_dim_vo;
  const std::vector<float> q = floats_of(ws, p.q, c.q, b.q_rows * hq * dqk);
  const std::vector<float> k = floats_of(ws, c.paged ? p.pages.data : p.ragged.k, c.kv, b.k_count);
  const std::vector<float> v = c.paged ? std::vector<float>() : floats_of(ws, p.ragged.v, c.kv, b.v_count);
  // Element offsets of key j's K and V rows (kv head h) of request r.
  auto k_row = [&](int r, int64_t j, int h) -> int64_t {
    if (!c.paged) return ((b.kv_indptr[r] + j) * hkv + h) * dqk;
    const int64_t ps = c.page_size, d = dqk;
    const int64_t page = b.indices[static_cast<std::size_t>(b.kv_indptr[r] + j / ps)];
    const int64_t slot = j % ps;
    return page * 2 * ps * hkv * d +
           (c.layout == KvLayout::NHD ? slot * hkv * d + h * d : h * ps * d + slot * d);
  };
  auto v_value = [&](int r, int64_t j, int h, int d) -> double {
    if (!c.paged) return v[static_cast<std::size_t>(((b.kv_indptr[r] + j) * hkv + h) * dvo + d)];
    return k[static_cast<std::size_t>(k_row(r, j, h) + static_cast<int64_t>(c.page_size) * hkv * dqk + d)];
  };
  const double logit_scale = static_cast<double>(p.sm_scale) * p.q_scale * p.k_scale;
  std::vector<double> out(static_cast<std::size_t>(b.out_count), 0.0);
  int64_t q0 = 0;
  for (int r = 0; r < c.batch(); ++r) {
    const int64_t q_len = c.q_lens[static_cast<std::size_t>(r)];
    const int64_t kv_len = c.kv_lens[static_cast<std::size_t>(r)];
    for (int64_t i = 0; i < q_len; ++i) {
      const int64_t visible = c.causal ? std::clamp<int64_t>(i + kv_len - q_len + 1, 0, kv_len) : kv_len;
      for (int h = 0; h < hq; ++h) {
        const int kvh = h / c.group;
        const float* qi = q.data() + ((q0 + i) * hq + h) * dqk;
        std::vector<double> s(static_cast<std::size_t>(visible));
        double m = -INFINITY;
        for (int64_t j = 0; j < visible; ++j) {
          const float* kj = k.data() + k_row(r, j, kvh);
          double dot = 0;
          for (int d = 0; d < dqk; ++d) dot += static_cast<double>(qi[d]) * kj[d];
          s[static_cast<std::size_t>(j)] = logit_scale * dot;
          m = std::max(m, s[static_cast<std::size_t>(j)]);
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - m));
        for (int d = 0; d < dvo && visible > 0; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < visible; ++j) acc += s[static_cast<std::size_t>(j)] * v_value(r, j, kvh, d);
          out[static_cast<std::size_t>(((q0 + i) * hq + h) * dvo + d)] = p.v_scale * acc / sum;
        }
      }
    }
    q0 += q_len;
  }
  return out;
}

// Compares the output at b.params.out with the reference; checks the guard after it.
testing::AssertionResult compare(Workspace& ws, const Case& c, const Built& b) {
  const std::vector<float> got = floats_of(ws, b.params.out, c.out, b.out_count);
  const std::vector<uint8_t> guard = to_host<uint8_t>(
      static_cast<const char*>(b.params.out) + b.out_count * static_cast<int64_t>(dtype_size(c.out)), kGuardBytes,
      ws.stream());
  if (std::any_of(guard.begin(), guard.end(), [](uint8_t g) { return g != 0xFF; })) {
    return testing::AssertionFailure() << "a write past the output";
  }
  int64_t unwritten = 0;
  double err2 = 0, ref2 = 0;
  int64_t first_bad = -1;
  for (int64_t i = 0; i < b.out_count; ++i) {
    const double y = got[static_cast<std::size_t>(i)], r = b.ref[static_cast<std::size_t>(i)];
    if (!std::isfinite(y)) {
      if (first_bad < 0) first_bad = i;
      ++unwritten;
      continue;
    }
    err2 += (y - r) * (y - r);
    ref2 += r * r;
  }
  auto where = [&](int64_t i) {
    const int64_t hq = c.num_qo_heads();
    std::ostringstream s;
    s << "row " << i / (hq * c.head_dim_vo) << " head " << (i / c.head_dim_vo) % hq << " dim " << i % c.head_dim_vo;
    return s.str();
  };
  if (unwritten > 0) {
    return testing::AssertionFailure() << unwritten << " of " << b.out_count
                                       << " outputs unwritten or not finite (first at " << where(first_bad) << ")";
  }
  const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  const double rel_limit = c.fp8_inputs() ? 6e-2 : 2e-2;
  const kbench::Tolerance tolerance = c.fp8_inputs() ? kbench::Tolerance{0.5, 0.1} : kbench::Tolerance{0.2, 0.01};
  const kbench::Comparison cmp = kbench::compare_isclose("out", b.ref, got, tolerance);
  if (rel >= rel_limit || cmp.mismatches > 0) {
    return testing::AssertionFailure() << "||out - ref|| / ||ref|| = " << rel << " (limit " << rel_limit << "), "
                                       << cmp.mismatches << " of " << cmp.total << " elements outside rtol "
                                       << tolerance.rtol << " atol " << tolerance.atol << " (max abs error "
                                       << cmp.max_abs_error << ")";
  }
  return testing::AssertionSuccess();
}

char* poisoned_out(Workspace& ws, Built& b, const Case& c, int slot = Workspace::kOut) {
  const int64_t bytes = b.out_count * static_cast<int64_t>(dtype_size(c.out));
  char* out = ws.get(slot, bytes + kGuardBytes);
  KBENCH_CUDA_CHECK(kk::poison(out, bytes + kGuardBytes, ws.stream()));
  b.params.out = out;
  return out;
}

kk::PrefillWorkspace upload_plan(Workspace& ws, const std::vector<kk::PrefillWorkItem>& items) {
  kk::PrefillWorkspace w;
  w.items = to_device(
      ws.get(Workspace::kItems, std::max<int64_t>(static_cast<int64_t>(items.size()), 1) * sizeof(kk::PrefillWorkItem)),
      items, ws.stream());
  w.num_items = static_cast<int>(items.size());
  return w;
}

const char* name_of(PrefillKernel kernel) { return kernel == PrefillKernel::fa2 ? "fa2" : "fa3"; }

// The work list of a built case, from its host indptr arrays.
std::vector<kk::PrefillWorkItem> plan(PrefillKernel kernel, const Built& b) {
  return kk::plan_prefill(kernel, b.params, b.qo_indptr, b.kv_indptr, b.last_page_len, device_sm_count());
}

// Plans, launches and compares `kernel` on a built case.
testing::AssertionResult run_kernel(Workspace& ws, const Case& c, Built& b, PrefillKernel kernel) {
  const auto items = plan(kernel, b);
  const kk::PrefillWorkspace w = upload_plan(ws, items);
  poisoned_out(ws, b, c);
  const cudaError_t status = kk::launch_prefill(kernel, b.params, w, ws.stream());
  if (status != cudaSuccess) {
    return testing::AssertionFailure() << name_of(kernel) << " launch_prefill: " << cudaGetErrorName(status) << " in "
                                       << c.describe();
  }
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(ws.stream()));
  testing::AssertionResult ok = compare(ws, c, b);
  if (!ok) {
    return testing::AssertionFailure() << name_of(kernel) << " (" << items.size() << " items) " << c.describe() << ": "
                                       << ok.message();
  }
  return testing::AssertionSuccess();
}

// fa2 always (sm_80+); fa3 on sm_90. bf16/fp16 configurations must be supported; fp8 ones by fa3
// where it says so (fa2 must refuse them).
void check_case(Workspace& ws, const Case& c) {
  Built b = build(ws, c);
  poisoned_out(ws, b, c);
  if (c.fp8_inputs()) {
    EXPECT_FALSE(kk::prefill_supported(PrefillKernel::fa2, b.params)) << "fa2 took fp8 inputs: " << c.describe();
  } else {
    EXPECT_TRUE(kk::prefill_supported(PrefillKernel::fa2, b.params)) << "fa2 refused " << c.describe();
    EXPECT_TRUE(run_kernel(ws, c, b, PrefillKernel::fa2));
  }
  if (!sm90()) return;
  const bool fa3 = kk::prefill_supported(PrefillKernel::fa3, b.params);
  if (c.fp8_inputs()) {
    std::cout << "[ INFO     ] fa3 " << (fa3 ? "supports" : "does not support") << " " << c.describe() << "\n";
  } else {
    EXPECT_TRUE(fa3) << "fa3 refused " << c.describe();
  }
  if (fa3) {
    EXPECT_TRUE(run_kernel(ws, c, b, PrefillKernel::fa3));
  }
}

// Lengths with every edge the contract names: 1, odd sizes, q < kv, q > kv (causal: rows that see
// no key), kv 0, and an empty request.
const std::vector<int32_t> kEdgeQ = {1, 37, 129, 1000, 0, 50, 7, 64};
const std::vector<int32_t> kEdgeKv = {1, 100, 129, 1000, 3, 20, 0, 64};

// ------------------------------------------------------------------------------------------------

TEST(PrefillReference, MatchesDoublePrecisionOnTheCpu) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  std::vector<Case> cases;
  {
    Case c;  // ragged, causal, q < kv, q > kv, kv 0, GQA 5, head 64
    c.q_lens = {5, 37, 0, 20, 9, 1};
    c.kv_lens = {40, 37, 4, 6, 0, 70};
    c.num_kv_heads = 2;
    c.group = 5;
    c.head_dim_qk = c.head_dim_vo = 64;
    c.causal = true;
    c.seed = 11;
    cases.push_back(c);
  }
  {
    Case c;  // ragged 192/128, not causal
    c.q_lens = {17, 3};
    c.kv_lens = {33, 64};
    c.num_kv_heads = 3;
    c.group = 1;
    c.head_dim_qk = 192;
    c.head_dim_vo = 128;
    c.sm_scale_mult = 2.0f;
    c.seed = 12;
    cases.push_back(c);
  }
  for (KvLayout layout : {KvLayout::NHD, KvLayout::HND}) {
    Case c;  // paged, causal, GQA 5, head 64, pages of 16 and of 3
    c.paged = true;
    c.page_size = layout == KvLayout::NHD ? 16 : 3;
    c.layout = layout;
    c.q_lens = {5, 40, 1, 12};
    c.kv_lens = {40, 40, 33, 0};
    c.num_kv_heads = 2;
    c.group = 5;
    c.head_dim_qk = c.head_dim_vo = 64;
    c.causal = true;
    c.seed = 13 + (layout == KvLayout::HND ? 1 : 0);
    cases.push_back(c);
  }
  {
    Case c;  // paged HND fp8 q and KV with scales, head 128
    c.paged = true;
    c.page_size = 5;
    c.layout = KvLayout::HND;
    c.q_lens = {9, 30};
    c.kv_lens = {21, 30};
    c.group = 4;
    c.q = c.kv = DType::fp8_e4m3;
    c.q_scale = 0.25f;
    c.k_scale = 0.3f;
    c.v_scale = 0.5f;
    c.seed = 15;
    cases.push_back(c);
  }
  {
    Case c;  // ragged fp16, head 256, causal, fp8_e5m2 KV
    c.q_lens = {7, 19};
    c.kv_lens = {7, 40};
    c.num_kv_heads = 1;
    c.group = 8;
    c.head_dim_qk = c.head_dim_vo = 256;
    c.q = c.out = DType::float16;
    c.kv = DType::fp8_e5m2;
    c.k_scale = 0.5f;
    c.causal = true;
    c.seed = 16;
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    const Built b = build(ws, c);
    const std::vector<double> want = cpu_attention(ws, c, b);
    int bad = 0;
    std::ostringstream msg;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double got = b.ref[i];
      if (!(std::fabs(got - want[i]) <= 1e-4 + 1e-4 * std::fabs(want[i]))) {
        if (bad++ < 5) msg << "\n  element " << i << ": reference " << got << ", double " << want[i];
      }
    }
    EXPECT_EQ(bad, 0) << c.describe() << msg.str();
  }
}

TEST(PrefillKernels, RaggedHeadDimsGroupsDtypes) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 100;
  const int groups[] = {1, 4, 5, 8};
  int i = 0;
  for (const auto& [dqk, dvo] : {std::pair{64, 64}, std::pair{128, 128}, std::pair{256, 256}, std::pair{192, 128}}) {
    for (DType dtype : {DType::bfloat16, DType::float16}) {
      for (bool causal : {false, true}) {
        Case c;
        c.head_dim_qk = dqk;
        c.head_dim_vo = dvo;
        c.q = c.kv = c.out = dtype;
        c.causal = causal;
        c.group = groups[i % 4];
        c.num_kv_heads = c.group == 8 ? 1 : 2;
        c.q_lens = kEdgeQ;
        c.kv_lens = kEdgeKv;
        c.sm_scale_mult = i % 3 == 0 ? 2.0f : 1.0f;  // sometimes a peaked softmax
        c.pdl = i % 2 == 1;
        c.seed = seed++;
        ++i;
        check_case(ws, c);
      }
    }
  }
}

TEST(PrefillKernels, PagedPageSizesAndLayouts) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 200;
  int i = 0;
  for (int head_dim : {64, 128, 256}) {
    for (int page_size : {1, 8, 12, 16, 24, 48, 64, 128, 256}) {
      for (KvLayout layout : {KvLayout::NHD, KvLayout::HND}) {
        Case c;
        c.paged = true;
        c.head_dim_qk = c.head_dim_vo = head_dim;
        c.page_size = page_size;
        c.layout = layout;
        c.q = c.kv = c.out = i % 2 == 0 ? DType::bfloat16 : DType::float16;
        c.causal = i % 3 != 2;
        c.group = (i / 2) % 4 == 0 ? 1 : (i / 2) % 4 == 1 ? 4 : (i / 2) % 4 == 2 ? 5 : 8;
        c.num_kv_heads = c.group == 8 ? 1 : 2;
        c.q_lens = kEdgeQ;
        c.kv_lens = kEdgeKv;
        c.pdl = i % 4 == 3;
        c.seed = seed++;
        ++i;
        check_case(ws, c);
      }
    }
  }
}

// Long causal requests with q < kv (bottom-right alignment across many tiles) and many heads.
TEST(PrefillKernels, LongCausalRequests) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 300;
  for (bool paged : {false, true}) {
    Case c;
    c.paged = paged;
    c.q_lens = {2048, 511, 300};
    c.kv_lens = {2048, 3000, 301};
    c.num_kv_heads = 4;
    c.group = 4;
    c.causal = true;
    c.layout = KvLayout::HND;
    c.seed = seed++;
    check_case(ws, c);
  }
}

// Mask edges at the tile grid: causal diagonals aligned with the 128-key tiles and shifted by half
// a tile (a consumer warpgroup's 64 rows see none of the first tile's upper half), and paged
// non-causal requests whose last page-aligned tile holds 40, 64 or 65 keys; head dims 128 and
// 192 / 128; ragged non-causal head 128 with key counts around its wide tiles (192 keys).
TEST(PrefillKernels, MaskEdgesAtTheTileGrid) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 400;
  for (const auto& [dqk, dvo] : {std::pair{128, 128}, std::pair{192, 128}}) {
    for (bool paged : {false, true}) {
      if (paged && dqk != dvo) continue;  // paged caches have one head dim
      Case c;
      c.paged = paged;
      c.page_size = 16;
      c.head_dim_qk = dqk;
      c.head_dim_vo = dvo;
      c.q_lens = {512, 512, 256, 1};
      c.kv_lens = {512, 576, 320, 64};
      c.num_kv_heads = 2;
      c.group = 2;
      c.causal = true;
      c.seed = seed++;
      check_case(ws, c);
    }
  }
  for (DType dtype : {DType::bfloat16, DType::float16}) {
    Case c;  // ragged, non-causal head 128 (kWideBlockN-key tiles): key counts around that grid
    c.q = c.kv = c.out = dtype;
    c.q_lens = {192, 5, 300, 385, 130, 1};
    c.kv_lens = {192, 191, 193, 385, 576, 577};
    c.num_kv_heads = 2;
    c.group = 8;
    c.seed = seed++;
    check_case(ws, c);
  }
  Case c;  // paged, non-causal: last tiles of 40, 64 and 65 keys
  c.paged = true;
  c.page_size = 8;
  c.q_lens = {100, 130, 7};
  c.kv_lens = {168, 192, 65};
  c.group = 4;
  c.seed = seed++;
  check_case(ws, c);
}

TEST(PrefillKernels, Fa3Fp8E4m3) {
  KBENCH_REQUIRE_GPU();
  if (!sm90()) GTEST_SKIP() << "fa3 runs on sm_90 only";
  Workspace ws;
  uint64_t seed = 400;
  struct Fp8Case {
    int dqk, dvo;
    bool paged, causal;
    KvLayout layout;
    DType out;
    int page_size;  // (paged)
  };
  for (const Fp8Case& f : {Fp8Case{128, 128, false, true, KvLayout::NHD, DType::bfloat16, 0},
                           Fp8Case{128, 128, true, false, KvLayout::HND, DType::float16, 16},
                           Fp8Case{128, 128, true, true, KvLayout::NHD, DType::bfloat16, 48},
                           Fp8Case{64, 64, true, true, KvLayout::NHD, DType::bfloat16, 16},
                           Fp8Case{256, 256, false, false, KvLayout::NHD, DType::bfloat16, 0},
                           Fp8Case{192, 128, false, true, KvLayout::NHD, DType::bfloat16, 0}}) {
    Case c;
    c.head_dim_qk = f.dqk;
    c.head_dim_vo = f.dvo;
    c.paged = f.paged;
    if (f.paged) c.page_size = f.page_size;
    c.causal = f.causal;
    c.layout = f.layout;
    c.q = c.kv = DType::fp8_e4m3;
    c.out = f.out;
    c.q_scale = 0.25f;
    c.k_scale = 0.3f;
    c.v_scale = 0.2f;
    c.group = 4;
    c.q_lens = kEdgeQ;
    c.kv_lens = kEdgeKv;
    c.seed = seed++;
    check_case(ws, c);
  }
}

// launch_prefill captured into a CUDA graph and replayed: the same bytes as an eager launch.
TEST(PrefillKernels, CudaGraphCapture) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  for (PrefillKernel kernel : {PrefillKernel::fa2, PrefillKernel::fa3}) {
    if (kernel == PrefillKernel::fa3 && !sm90()) continue;
    for (bool paged : {false, true}) {
      Case c;
      c.paged = paged;
      c.causal = true;
      c.group = 5;
      c.q_lens = kEdgeQ;
      c.kv_lens = kEdgeKv;
      c.pdl = paged;
      c.seed = 500 + (paged ? 1 : 0);
      Built b = build(ws, c);
      const auto items = plan(kernel, b);
      const kk::PrefillWorkspace w = upload_plan(ws, items);
      const int64_t bytes = b.out_count * static_cast<int64_t>(dtype_size(c.out));
      char* eager = poisoned_out(ws, b, c, Workspace::kEager);
      ASSERT_EQ(kk::launch_prefill(kernel, b.params, w, ws.stream()), cudaSuccess) << name_of(kernel);
      const std::vector<uint8_t> eager_bytes = to_host<uint8_t>(eager, bytes, ws.stream());

      char* out = poisoned_out(ws, b, c);
      const cudaError_t status = kbench::testing::capture_and_replay(
          ws.stream(), 2, [&] { return kk::launch_prefill(kernel, b.params, w, ws.stream()); });
      ASSERT_EQ(status, cudaSuccess) << name_of(kernel);
      EXPECT_TRUE(compare(ws, c, b)) << name_of(kernel) << " graph " << c.describe();
      EXPECT_EQ(to_host<uint8_t>(out, bytes, ws.stream()), eager_bytes) << name_of(kernel) << " graph != eager";
    }
  }
}

TEST(PrefillKernels, RejectsUnsupported) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  Case c;
  Built b = build(ws, c);
  poisoned_out(ws, b, c);
  const auto items = plan(PrefillKernel::fa2, b);
  const kk::PrefillWorkspace w = upload_plan(ws, items);
  ASSERT_EQ(kk::launch_prefill(PrefillKernel::fa2, b.params, w, ws.stream()), cudaSuccess);

  const std::vector<PrefillKernel> kernels = {PrefillKernel::fa2, PrefillKernel::fa3};
  auto expect_rejected = [&](const char* what, const kk::PrefillParams& p) {
    for (PrefillKernel kernel : kernels) {
      EXPECT_FALSE(kk::prefill_supported(kernel, p)) << name_of(kernel) << " " << what;
      EXPECT_EQ(kk::launch_prefill(kernel, p, w, ws.stream()), cudaErrorInvalidValue) << name_of(kernel) << " " << what;
    }
  };
  auto expect_launch_rejected = [&](const char* what, const kk::PrefillParams& p, const kk::PrefillWorkspace& work) {
    EXPECT_EQ(kk::launch_prefill(PrefillKernel::fa2, p, work, ws.stream()), cudaErrorInvalidValue) << what;
  };
  {
    kk::PrefillParams no_buffers = b.params;  // prefill_supported judges shapes and dtypes only
    no_buffers.q = no_buffers.out = nullptr;
    no_buffers.ragged = {};
    EXPECT_TRUE(kk::prefill_supported(PrefillKernel::fa2, no_buffers));
  }
  kk::PrefillParams p = b.params;
  p.head_dim_qk = p.head_dim_vo = 96;
  expect_rejected("head dims 96", p);
  p = b.params;
  p.head_dim_vo = 64;
  expect_rejected("head dims 128/64", p);
  p = b.params;
  p.num_qo_heads = 7;
  expect_rejected("num_qo_heads % num_kv_heads", p);
  p = b.params;
  p.out_dtype = DType::fp8_e4m3;
  expect_rejected("fp8 output", p);
  p = b.params;
  p.kv_dtype = DType::float32;
  expect_rejected("float32 KV", p);
  p = b.params;
  p.sm_scale = NAN;
  expect_rejected("NaN sm_scale", p);
  p = b.params;
  p.paged = true;
  p.head_dim_qk = 192;
  p.pages.page_size = 16;
  expect_rejected("paged 192/128", p);
  p = b.params;
  p.q = nullptr;
  expect_launch_rejected("null q", p, w);
  p = b.params;
  p.ragged.v = nullptr;
  expect_launch_rejected("null v", p, w);
  p = b.params;
  p.q = static_cast<const char*>(p.q) + 2;
  expect_launch_rejected("misaligned q", p, w);
  kk::PrefillWorkspace no_items = w;
  no_items.items = nullptr;
  expect_launch_rejected("items null", b.params, no_items);
  // Nothing to do: a batch of 0, or only empty requests (an empty plan).
  p = b.params;
  p.batch = 0;
  EXPECT_EQ(kk::launch_prefill(PrefillKernel::fa2, p, w, ws.stream()), cudaSuccess);
  const auto empty = kk::plan_prefill(PrefillKernel::fa2, b.params, {0, 0, 0, 0, 0}, {0, 3, 3, 12, 13},
                                        b.last_page_len, device_sm_count());
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(kk::launch_prefill(PrefillKernel::fa2, b.params, kk::PrefillWorkspace{}, ws.stream()), cudaSuccess);
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(ws.stream()));
}

TEST(PrefillKernels, AvailabilityIsReported) {
  KBENCH_REQUIRE_GPU();
  EXPECT_EQ(kk::prefill_kernels_available(PrefillKernel::fa2), cudaSuccess);
  EXPECT_EQ(kk::prefill_kernels_available(PrefillKernel::fa3) == cudaSuccess, sm90());
}

}  // namespace
