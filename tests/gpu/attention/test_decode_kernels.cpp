// GPU tests of kbench's decode-attention kernels: fa2 (CUDA cores) and fa2_tc (tensor cores, where
// decode_supported says so) against the fp32/double reference kernel, over head_dim, GQA group,
// page size, layout, ragged lengths (1, multiples of the page size and not, 0), batch, q / kv / out
// dtypes with scales, split and unsplit plans, PDL and CUDA-graph capture; plus plan_decode's
// structure and the parameter checks. Caches are built on the device: random data, disjoint
// shuffled pages per request, spare pages and the unused tail slots of last pages poisoned with
// NaN (a kernel that reads past a request's end produces NaN). Outputs are poisoned first, with a
// poisoned guard after them. Each test skips itself where no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
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
#include "kernels/attention/decode/decode.hpp"
#include "kernels/common/tensor_fill.hpp"

namespace {

using kbench::DeviceBuffer;
using kbench::DType;
using kbench::dtype_name;
using kbench::dtype_size;
using kbench::is_fp8;
namespace kk = kbench::kernels;
using kk::DecodeKernel;
using kk::KvLayout;

constexpr int64_t kGuardBytes = 64;

// Device buffers reused across the cases of one test (grown on demand) and a non-blocking stream.
struct WorkspaceSlots {
  enum Slot {
    kCache,
    kQ,
    kIndptr,
    kIndices,
    kLastPageLen,
    kOut,
    kOutF32,
    kRef,
    kItems,
    kMergeIndptr,
    kPartials,
    kSlots
  };
};
struct Workspace : WorkspaceSlots, kbench::testing::ScratchBuffers<WorkspaceSlots::kSlots> {};

using kbench::testing::device_sm_count;

enum class Split { kAny, kMust, kNever };

struct Case {
  int head_dim = 128;
  int num_kv_heads = 8;
  int group = 8;
  int page_size = 16;
  KvLayout layout = KvLayout::NHD;
  std::vector<int> lens = {1, 37, 160};
  DType q = DType::bfloat16;
  DType kv = DType::bfloat16;
  DType out = DType::bfloat16;
  float q_scale = 1.0f;
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  float out_scale = 1.0f;
  float sm_scale_mult = 1.0f;  // sm_scale = mult / sqrt(head_dim)
  bool pdl = false;
  int extra_pages = 3;
  Split split = Split::kAny;
  int sm_count = 0;  // 0: the device's
  uint64_t seed = 1;

  [[nodiscard]] int batch() const { return static_cast<int>(lens.size()); }
  [[nodiscard]] int num_qo_heads() const { return num_kv_heads * group; }
  [[nodiscard]] std::string describe() const {
    std::ostringstream s;
    s << "head_dim=" << head_dim << " kv_heads=" << num_kv_heads << " group=" << group << " page=" << page_size
      << (layout == KvLayout::NHD ? " NHD" : " HND") << " q=" << dtype_name(q) << " kv=" << dtype_name(kv)
      << " out=" << dtype_name(out) << " scales(q,k,v,out)=" << q_scale << "," << k_scale << "," << v_scale << ","
      << out_scale << " sm_mult=" << sm_scale_mult << (pdl ? " pdl" : "") << " lens=[";
    for (std::size_t i = 0; i < lens.size() && i < 20; ++i) s << (i ? "," : "") << lens[i];
    if (lens.size() > 20) s << ",... (" << lens.size() << ")";
    s << "]";
    return s.str();
  }
};

// The fp8 grid as kbench's refcheck knows it.
float fp8_max(DType t) { return static_cast<float>(kbench::fp8_max_finite(t)); }
double fp8_spacing(DType t, double x) { return kbench::fp8_grid_step(t, x); }

using kbench::testing::to_device;
using kbench::testing::to_host;

// The inputs of a case on the device, and the reference output.
struct Built {
  kk::DecodeParams params;
  std::vector<int32_t> indptr;
  std::vector<int32_t> last_page_len;
  std::vector<float> ref;  // [batch][num_qo_heads][head_dim]
  int64_t out_count = 0;
};

Built build(Workspace& ws, const Case& c) {
  cudaStream_t stream = ws.stream();
  Built b;
  const int batch = c.batch();
  const int ps = c.page_size;
  std::mt19937_64 rng(c.seed * 7919 + 17);

  // Page table: disjoint pages in shuffled order, spare pages left unused.
  b.indptr.assign(1, 0);
  for (int len : c.lens) {
    const int pages = (len + ps - 1) / ps;
    b.indptr.push_back(b.indptr.back() + pages);
    b.last_page_len.push_back(pages > 0 ? len - (pages - 1) * ps : 0);
  }
  const int used_pages = b.indptr.back();
  const int total_pages = used_pages + c.extra_pages;
  std::vector<int32_t> ids(static_cast<std::size_t>(total_pages));
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  std::vector<int32_t> indices(ids.begin(), ids.begin() + used_pages);

  const int64_t elem = static_cast<int64_t>(dtype_size(c.kv));
  const int64_t row = static_cast<int64_t>(c.head_dim) * elem;
  const int64_t half_page = static_cast<int64_t>(ps) * c.num_kv_heads * row;
  const int64_t cache_bytes = static_cast<int64_t>(total_pages) * 2 * half_page;
  char* cache = ws.get(Workspace::kCache, cache_bytes);
  KBENCH_CUDA_CHECK(kk::fill_normal(cache, c.kv, cache_bytes / elem, c.seed, 0.0f, 1.0f, stream));
  // Poison what no request owns: spare pages, the slots after last_page_len in last pages.
  for (int p = used_pages; p < total_pages; ++p) {
    KBENCH_CUDA_CHECK(cudaMemsetAsync(cache + ids[static_cast<std::size_t>(p)] * 2 * half_page, 0xFF,
                                      static_cast<std::size_t>(2 * half_page), stream));
  }
  for (int r = 0; r < batch; ++r) {
    const int pages = b.indptr[r + 1] - b.indptr[r];
    const int last = b.last_page_len[static_cast<std::size_t>(r)];
    if (pages == 0 || last == ps) continue;
    const int64_t page = indices[static_cast<std::size_t>(b.indptr[r + 1] - 1)];
    for (int half = 0; half < 2; ++half) {
      char* base = cache + page * 2 * half_page + half * half_page;
      if (c.layout == KvLayout::NHD) {  // [slot][head][dim]
        KBENCH_CUDA_CHECK(cudaMemsetAsync(base + last * c.num_kv_heads * row, 0xFF,
                                          static_cast<std::size_t>((ps - last) * c.num_kv_heads * row), stream));
      } else {  // [head][slot][dim]
        for (int h = 0; h < c.num_kv_heads; ++h) {
          KBENCH_CUDA_CHECK(cudaMemsetAsync(base + (static_cast<int64_t>(h) * ps + last) * row, 0xFF,
                                            static_cast<std::size_t>((ps - last) * row), stream));
        }
      }
    }
  }

  const int64_t q_count = static_cast<int64_t>(batch) * c.num_qo_heads() * c.head_dim;
  char* q = ws.get(Workspace::kQ, q_count * static_cast<int64_t>(dtype_size(c.q)));
  KBENCH_CUDA_CHECK(kk::fill_normal(q, c.q, q_count, c.seed + 1, 0.0f, 1.0f, stream));
  b.out_count = q_count;

  kk::DecodeParams& p = b.params;
  p.q = q;
  p.q_dtype = c.q;
  p.q_scale = c.q_scale;
  p.out_dtype = c.out;
  p.out_scale = c.out_scale;
  p.kv.data = cache;
  p.kv.dtype = c.kv;
  p.kv.layout = c.layout;
  p.kv.page_size = ps;
  p.kv.num_kv_heads = c.num_kv_heads;
  p.kv.head_dim = c.head_dim;
  p.kv.indptr = to_device(ws.get(Workspace::kIndptr, static_cast<int64_t>(b.indptr.size()) * 4), b.indptr, stream);
  p.kv.indices = to_device(ws.get(Workspace::kIndices, static_cast<int64_t>(indices.size()) * 4), indices, stream);
  p.kv.last_page_len =
      to_device(ws.get(Workspace::kLastPageLen, static_cast<int64_t>(batch) * 4), b.last_page_len, stream);
  p.kv.k_scale = c.k_scale;
  p.kv.v_scale = c.v_scale;
  p.batch = batch;
  p.num_qo_heads = c.num_qo_heads();
  p.sm_scale = c.sm_scale_mult / std::sqrt(static_cast<float>(c.head_dim));
  p.enable_pdl = c.pdl;

  auto* ref = reinterpret_cast<float*>(ws.get(Workspace::kRef, q_count * 4));
  KBENCH_CUDA_CHECK(kk::poison(ref, q_count * 4, stream));
  KBENCH_CUDA_CHECK(kk::launch_decode_reference(p, ref, stream));
  KBENCH_CUDA_CHECK(cudaGetLastError());
  b.ref = to_host<float>(ref, q_count, stream);
  return b;
}

// The plan's structure: every (request, kv head) range covered exactly once by its items; split
// pairs own merge_indptr's slot range, each slot used once; unsplit pairs have one final item.
testing::AssertionResult check_plan(const kk::DecodePlan& plan, const Case& c, const Built& b) {
  const int batch = c.batch();
  const int pairs = batch * c.num_kv_heads;
  std::vector<std::vector<kk::DecodeWorkItem>> per_pair(static_cast<std::size_t>(pairs));
  for (const kk::DecodeWorkItem& it : plan.items) {
    if (it.request < 0 || it.request >= batch || it.kv_head < 0 || it.kv_head >= c.num_kv_heads) {
      return testing::AssertionFailure() << "item outside the batch";
    }
    per_pair[static_cast<std::size_t>(it.request * c.num_kv_heads + it.kv_head)].push_back(it);
  }
  const bool any_split = !plan.merge_indptr.empty();
  if (any_split && static_cast<int>(plan.merge_indptr.size()) != pairs + 1) {
    return testing::AssertionFailure() << "merge_indptr has " << plan.merge_indptr.size() << " entries";
  }
  if (any_split && plan.merge_indptr.back() != plan.num_partial_slots) {
    return testing::AssertionFailure() << "merge_indptr.back() != num_partial_slots";
  }
  if (!any_split && plan.num_partial_slots != 0) return testing::AssertionFailure() << "slots without merge_indptr";
  std::vector<int> slot_uses(static_cast<std::size_t>(plan.num_partial_slots), 0);
  for (int pair = 0; pair < pairs; ++pair) {
    auto items = per_pair[static_cast<std::size_t>(pair)];
    const int r = pair / c.num_kv_heads;
    const int len = c.lens[static_cast<std::size_t>(r)];
    std::sort(items.begin(), items.end(),
              [](const auto& x, const auto& y) { return x.token_begin < y.token_begin; });
    if (items.empty()) return testing::AssertionFailure() << "pair " << pair << " has no item";
    int pos = 0;
    for (const auto& it : items) {
      if (it.token_begin != pos || it.token_end < it.token_begin) {
        return testing::AssertionFailure() << "pair " << pair << " ranges do not tile [0, " << len << ")";
      }
      pos = it.token_end;
    }
    if (pos != len) return testing::AssertionFailure() << "pair " << pair << " covers " << pos << " of " << len;
    const int lo = any_split ? plan.merge_indptr[static_cast<std::size_t>(pair)] : 0;
    const int hi = any_split ? plan.merge_indptr[static_cast<std::size_t>(pair) + 1] : 0;
    if (items.size() == 1) {
      if (items[0].partial_slot != -1 || hi != lo) {
        return testing::AssertionFailure() << "unsplit pair " << pair << " has partial slots";
      }
    } else {
      if (hi - lo != static_cast<int>(items.size())) {
        return testing::AssertionFailure() << "split pair " << pair << ": " << items.size() << " items, " << hi - lo
                                           << " slots";
      }
      for (const auto& it : items) {
        if (it.partial_slot < lo || it.partial_slot >= hi || it.token_end == it.token_begin) {
          return testing::AssertionFailure() << "split pair " << pair << ": bad slot or empty chunk";
        }
        ++slot_uses[static_cast<std::size_t>(it.partial_slot)];
      }
    }
  }
  for (int uses : slot_uses) {
    if (uses != 1) return testing::AssertionFailure() << "a partial slot is used " << uses << " times";
  }
  (void)b;
  return testing::AssertionSuccess();
}

// Device copies of a plan.
struct PlanOnDevice {
  kk::DecodeWorkspace ws;
};
PlanOnDevice upload(Workspace& ws, const kk::DecodePlan& plan, const Case& c) {
  cudaStream_t stream = ws.stream();
  PlanOnDevice d;
  d.ws.items = to_device(ws.get(Workspace::kItems, static_cast<int64_t>(plan.items.size() * sizeof(kk::DecodeWorkItem))),
                         plan.items, stream);
  d.ws.num_items = static_cast<int>(plan.items.size());
  if (!plan.merge_indptr.empty()) {
    d.ws.merge_indptr = to_device(ws.get(Workspace::kMergeIndptr, static_cast<int64_t>(plan.merge_indptr.size()) * 4),
                                  plan.merge_indptr, stream);
    const auto bytes = static_cast<int64_t>(plan.workspace_bytes(c.group, c.head_dim));
    d.ws.workspace = ws.get(Workspace::kPartials, bytes);
    d.ws.max_pair_slots = plan.max_pair_slots;
    KBENCH_CUDA_CHECK(kk::poison(d.ws.workspace, bytes, stream));
  }
  return d;
}

char* poisoned_out(Workspace& ws, const Case& c, const Built& b) {
  const int64_t bytes = b.out_count * static_cast<int64_t>(dtype_size(c.out));
  char* out = ws.get(Workspace::kOut, bytes + kGuardBytes);
  KBENCH_CUDA_CHECK(kk::poison(out, bytes + kGuardBytes, ws.stream()));
  return out;
}

// Compares the output at b.params.out with the reference; checks the guard after it.
testing::AssertionResult compare(Workspace& ws, const Case& c, const Built& b) {
  cudaStream_t stream = ws.stream();
  const int64_t n = b.out_count;
  const int64_t out_bytes = n * static_cast<int64_t>(dtype_size(c.out));
  auto* out_f32 = reinterpret_cast<float*>(ws.get(Workspace::kOutF32, n * 4));
  KBENCH_CUDA_CHECK(kk::convert_to_float(b.params.out, c.out, n, out_f32, stream));
  const std::vector<float> got = to_host<float>(out_f32, n, stream);
  const std::vector<uint8_t> guard =
      to_host<uint8_t>(static_cast<const char*>(b.params.out) + out_bytes, kGuardBytes, stream);

  int failures = 0;
  std::ostringstream msg;
  auto fail = [&](const char* what, int64_t i, double value, double expected) {
    if (failures < 8) {
      const int64_t d = i % c.head_dim;
      const int64_t h = (i / c.head_dim) % c.num_qo_heads();
      const int64_t r = i / (static_cast<int64_t>(c.head_dim) * c.num_qo_heads());
      msg << "\n  " << what << " request " << r << " head " << h << " dim " << d << ": got " << value << ", want "
          << expected;
    }
    ++failures;
  };
  const bool fp8 = is_fp8(c.out);
  for (int64_t i = 0; i < n; ++i) {
    const double y = got[static_cast<std::size_t>(i)];
    double ref = b.ref[static_cast<std::size_t>(i)];
    if (!std::isfinite(y) || !std::isfinite(ref)) {
      fail("non-finite", i, y, ref);
      continue;
    }
    double tol;
    if (fp8) {
      ref = std::clamp(ref / c.out_scale, -static_cast<double>(fp8_max(c.out)), static_cast<double>(fp8_max(c.out)));
      tol = 0.1 + 0.1 * std::fabs(ref) + fp8_spacing(c.out, ref);
    } else {
      tol = 1e-2 + 1e-2 * std::fabs(ref);
    }
    if (!(std::fabs(y - ref) <= tol)) fail("output", i, y, ref);
  }
  for (uint8_t g : guard) {
    if (g != 0xFF) {
      fail("write past the output", n, g, 0xFF);
      break;
    }
  }
  if (failures > 0) return testing::AssertionFailure() << failures << " mismatches: " << msg.str();
  return testing::AssertionSuccess();
}

// Launches and compares `kernel` on a built case with `plan`.
testing::AssertionResult run_plan(Workspace& ws, const Case& c, Built& b, DecodeKernel kernel,
                                  const kk::DecodePlan& plan) {
  const char* name = kernel == DecodeKernel::fa2 ? "fa2" : "fa2_tc";
  testing::AssertionResult plan_ok = check_plan(plan, c, b);
  if (!plan_ok) return testing::AssertionFailure() << name << " plan: " << plan_ok.message() << " in " << c.describe();
  if (c.split == Split::kMust && plan.num_partial_slots == 0) {
    return testing::AssertionFailure() << name << ": expected a split plan in " << c.describe();
  }
  if (c.split == Split::kNever && plan.num_partial_slots != 0) {
    return testing::AssertionFailure() << name << ": expected an unsplit plan in " << c.describe();
  }
  const PlanOnDevice d = upload(ws, plan, c);
  b.params.out = poisoned_out(ws, c, b);
  const cudaError_t status = kk::launch_decode(kernel, b.params, d.ws, ws.stream());
  if (status != cudaSuccess) {
    return testing::AssertionFailure() << name << " launch_decode: " << cudaGetErrorName(status) << " in "
                                       << c.describe();
  }
  KBENCH_CUDA_CHECK(cudaGetLastError());
  testing::AssertionResult ok = compare(ws, c, b);
  if (!ok) {
    return testing::AssertionFailure() << name << " (" << plan.items.size() << " items, " << plan.num_partial_slots
                                       << " partial slots) " << c.describe() << ": " << ok.message();
  }
  return testing::AssertionSuccess();
}

// Plans (for the case's KV dtype, as the routine does), launches and compares `kernel`.
testing::AssertionResult run_kernel(Workspace& ws, const Case& c, Built& b, DecodeKernel kernel) {
  const int sm_count = c.sm_count > 0 ? c.sm_count : device_sm_count();
  const kk::DecodePlan plan = kk::plan_decode(kernel, b.indptr, b.last_page_len, c.page_size, c.num_qo_heads(),
                                              c.num_kv_heads, c.head_dim, sm_count, c.kv);
  return run_plan(ws, c, b, kernel, plan);
}

// fa2, and fa2_tc where supported.
void check_case(Workspace& ws, const Case& c) {
  Built b = build(ws, c);
  EXPECT_TRUE(run_kernel(ws, c, b, DecodeKernel::fa2));
  b.params.out = poisoned_out(ws, c, b);  // decode_supported looks at the pointers
  if (kk::decode_supported(DecodeKernel::fa2_tc, b.params)) {
    EXPECT_TRUE(run_kernel(ws, c, b, DecodeKernel::fa2_tc));
  }
}

// Ragged lengths: 1, a multiple of the page size, one short of and one past a multiple, random
// ones, and (when with_empty) a 0-length request.
std::vector<int> ragged(int batch, int max_len, int page_size, uint64_t seed, bool with_empty) {
  std::mt19937_64 rng(seed);
  std::vector<int> lens;
  const int base = std::max(page_size, 1);
  const std::vector<int> special = {1, 3 * base, 2 * base - 1, 4 * base + 1};
  for (int i = 0; i < batch; ++i) {
    int len;
    if (with_empty && i == batch / 2) {
      len = 0;
    } else if (i < static_cast<int>(special.size())) {
      len = special[static_cast<std::size_t>(i)];
    } else {
      len = 1 + static_cast<int>(rng() % static_cast<uint64_t>(max_len));
    }
    lens.push_back(std::min(len, max_len));
  }
  return lens;
}

// A plan made by hand: (request r, kv head h) gets chunks[r * num_kv_heads + h] chunks (1: unsplit;
// fewer where the request is short), cut on multiples of 16 tokens, and the items are shuffled.
kk::DecodePlan hand_plan(const Case& c, const std::vector<int>& chunks, uint64_t seed) {
  kk::DecodePlan plan;
  const int pairs = c.batch() * c.num_kv_heads;
  std::vector<int32_t> slots(static_cast<std::size_t>(pairs), 0);
  for (int pair = 0; pair < pairs; ++pair) {
    const int r = pair / c.num_kv_heads;
    const int len = c.lens[static_cast<std::size_t>(r)];
    const int n = std::clamp(chunks[static_cast<std::size_t>(pair)], 1, std::max(1, len / 16));
    for (int i = 0; i < n; ++i) {
      kk::DecodeWorkItem it;
      it.request = r;
      it.kv_head = pair % c.num_kv_heads;
      it.token_begin = i * len / n / 16 * 16;
      it.token_end = i + 1 == n ? len : (i + 1) * len / n / 16 * 16;
      it.partial_slot = n > 1 ? plan.num_partial_slots + i : -1;
      plan.items.push_back(it);
    }
    if (n > 1) {
      slots[static_cast<std::size_t>(pair)] = n;
      plan.num_partial_slots += n;
      plan.max_pair_slots = std::max(plan.max_pair_slots, n);
    }
  }
  if (plan.num_partial_slots > 0) {
    plan.merge_indptr.assign(1, 0);
    for (int32_t n : slots) plan.merge_indptr.push_back(plan.merge_indptr.back() + n);
  }
  std::mt19937_64 rng(seed);
  std::shuffle(plan.items.begin(), plan.items.end(), rng);
  return plan;
}

// ------------------------------------------------------------------------------------------------

TEST(DecodeKernels, HeadDimsAndGroups) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 10;
  for (int head_dim : {64, 128, 256}) {
    for (int group : {1, 4, 5, 8, 16}) {
      Case c;
      c.head_dim = head_dim;
      c.group = group;
      c.num_kv_heads = group == 16 ? 2 : 8;
      c.layout = seed % 2 ? KvLayout::HND : KvLayout::NHD;
      c.lens = ragged(3, 700, 16, seed, false);
      c.seed = seed++;
      check_case(ws, c);
    }
  }
}

TEST(DecodeKernels, OneKvHead) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 40;
  for (int group : {1, 5, 8, 16}) {
    for (KvLayout layout : {KvLayout::NHD, KvLayout::HND}) {
      Case c;
      c.num_kv_heads = 1;
      c.group = group;
      c.layout = layout;
      c.lens = ragged(17, 900, 16, seed, true);
      c.sm_scale_mult = 3.0f;  // peaked softmax
      c.seed = seed++;
      check_case(ws, c);
    }
  }
}

TEST(DecodeKernels, PageSizesAndLayouts) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 60;
  for (int page_size : {1, 5, 16, 128}) {
    for (KvLayout layout : {KvLayout::NHD, KvLayout::HND}) {
      for (int batch : {1, 3, 17}) {
        Case c;
        c.page_size = page_size;
        c.layout = layout;
        c.num_kv_heads = 4;
        c.group = batch == 3 ? 5 : 8;
        c.head_dim = batch == 17 ? 64 : 128;
        c.lens = batch == 1 ? std::vector<int>{page_size * 7} : ragged(batch, 1000, page_size, seed, batch == 17);
        c.seed = seed++;
        check_case(ws, c);
      }
    }
  }
}

TEST(DecodeKernels, KvAndOutputDtypes) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 100;
  for (DType qo : {DType::bfloat16, DType::float16}) {
    for (DType kv : {DType::bfloat16, DType::float16, DType::fp8_e4m3, DType::fp8_e5m2}) {
      for (int head_dim : {64, 128, 256}) {
        Case c;
        c.q = qo;
        c.out = qo;
        c.kv = kv;
        c.head_dim = head_dim;
        c.k_scale = is_fp8(kv) ? 0.7f : 1.0f;
        c.v_scale = is_fp8(kv) ? 1.3f : 1.0f;
        c.layout = seed % 2 ? KvLayout::HND : KvLayout::NHD;
        c.lens = ragged(5, 600, 16, seed, true);
        c.seed = seed++;
        check_case(ws, c);
      }
    }
  }
}

TEST(DecodeKernels, Fp8QueryAndOutput) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 200;
  for (DType q : {DType::fp8_e4m3, DType::fp8_e5m2, DType::bfloat16}) {
    for (DType out : {DType::fp8_e4m3, DType::fp8_e5m2, DType::float16}) {
      for (DType kv : {DType::bfloat16, DType::fp8_e4m3}) {
        Case c;
        c.q = q;
        c.out = out;
        c.kv = kv;
        c.q_scale = is_fp8(q) ? 0.6f : 1.0f;
        c.k_scale = is_fp8(kv) ? 1.2f : 1.0f;
        c.v_scale = is_fp8(kv) ? 0.8f : 1.0f;
        c.out_scale = is_fp8(out) ? 0.02f : 1.0f;
        c.group = 4;
        c.layout = seed % 2 ? KvLayout::HND : KvLayout::NHD;
        c.lens = ragged(3, 800, 16, seed, false);
        c.seed = seed++;
        check_case(ws, c);
      }
    }
  }
}

// fp8 outputs that saturate: out_scale small enough that |o| / out_scale passes the largest finite.
TEST(DecodeKernels, Fp8OutputSaturates) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 260;
  for (DType out : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    Case c;
    c.out = out;
    c.out_scale = out == DType::fp8_e4m3 ? 1e-3f : 1e-5f;
    c.lens = {1, 2, 3};
    c.seed = seed++;
    check_case(ws, c);
  }
}

// Long sequences: the plan splits them (merge kernel), including ragged batches where some pairs
// split and some do not, fp8 caches and outputs, small pages and PDL.
TEST(DecodeKernels, SplitKv) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 300;
  struct Split_ {
    int head_dim, group, num_kv_heads, page_size;
    KvLayout layout;
    DType kv, out;
    std::vector<int> lens;
    bool pdl;
  };
  const std::vector<Split_> cases = {
      {128, 8, 8, 16, KvLayout::NHD, DType::bfloat16, DType::bfloat16, {20000}, false},
      {128, 8, 8, 16, KvLayout::HND, DType::bfloat16, DType::bfloat16, {20000}, true},
      {128, 5, 8, 1, KvLayout::HND, DType::fp8_e4m3, DType::bfloat16, {9001}, true},
      {64, 16, 2, 5, KvLayout::NHD, DType::float16, DType::fp8_e4m3, {12345, 40, 0}, false},
      {256, 4, 4, 128, KvLayout::NHD, DType::fp8_e5m2, DType::bfloat16, {30000, 1, 700}, true},
      {128, 1, 8, 16, KvLayout::HND, DType::bfloat16, DType::float16, {16384}, false},
  };
  for (const Split_& s : cases) {
    Case c;
    c.head_dim = s.head_dim;
    c.group = s.group;
    c.num_kv_heads = s.num_kv_heads;
    c.page_size = s.page_size;
    c.layout = s.layout;
    c.kv = s.kv;
    c.out = s.out;
    c.out_scale = is_fp8(s.out) ? 0.02f : 1.0f;
    c.k_scale = is_fp8(s.kv) ? 0.9f : 1.0f;
    c.v_scale = is_fp8(s.kv) ? 1.1f : 1.0f;
    c.lens = s.lens;
    c.pdl = s.pdl;
    c.sm_scale_mult = 2.0f;
    c.split = Split::kMust;
    c.seed = seed++;
    check_case(ws, c);
  }
}

// The merge over many slots of one pair (one kv head, the longest request cut into 300 chunks by
// hand: more slots than the merge block has threads, so its max pass loops), beside pairs of 1 and
// 7 slots and an unsplit one; every head_dim, both kernels, a peaked softmax.
TEST(DecodeKernels, MergeManySlots) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 450;
  for (int head_dim : {64, 128, 256}) {
    for (DecodeKernel kernel : {DecodeKernel::fa2, DecodeKernel::fa2_tc}) {
      Case c;
      c.head_dim = head_dim;
      c.num_kv_heads = 1;
      c.group = head_dim == 128 ? 16 : 5;
      c.lens = {9000, 700, 33, 2000};
      c.sm_scale_mult = 3.0f;
      c.pdl = kernel == DecodeKernel::fa2_tc;
      c.seed = seed++;
      Built b = build(ws, c);
      b.params.out = poisoned_out(ws, c, b);
      ASSERT_TRUE(kk::decode_supported(kernel, b.params));
      const kk::DecodePlan plan = hand_plan(c, {300, 7, 1, 40}, c.seed);
      ASSERT_GT(plan.merge_indptr.size(), 1u);
      ASSERT_EQ(plan.merge_indptr[1] - plan.merge_indptr[0], 300);
      EXPECT_TRUE(run_plan(ws, c, b, kernel, plan)) << (kernel == DecodeKernel::fa2 ? "fa2" : "fa2_tc");
    }
  }
}

// Many (request, kv head) pairs (512 with 8 kv heads: about two waves on an H100): no split, every
// item writes its output directly. Nearly equal lengths, so the plan has nothing to balance.
TEST(DecodeKernels, LargeBatchUnsplit) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  for (KvLayout layout : {KvLayout::NHD, KvLayout::HND}) {
    Case c;
    c.layout = layout;
    c.lens.assign(64, 500);
    c.lens[5] = 0;
    c.lens[9] = 1;
    c.lens[20] = 17;
    c.lens[33] = 499;
    c.split = Split::kNever;
    c.pdl = layout == KvLayout::HND;
    c.seed = 400 + (layout == KvLayout::HND ? 1 : 0);
    check_case(ws, c);
  }
}

// Back-to-back PDL launches (split and unsplit) on one stream: each launch's griddepcontrol.wait
// must order it after the previous kernel's writes.
TEST(DecodeKernels, PdlBackToBack) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  Case c;
  c.lens = {5000, 3, 1200};
  c.pdl = true;
  c.seed = 500;
  Built b = build(ws, c);
  const kk::DecodePlan plan =
      kk::plan_decode(DecodeKernel::fa2, b.indptr, b.last_page_len, c.page_size, c.num_qo_heads(), c.num_kv_heads,
                      c.head_dim, device_sm_count());
  const PlanOnDevice d = upload(ws, plan, c);
  b.params.out = poisoned_out(ws, c, b);
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(kk::launch_decode(DecodeKernel::fa2, b.params, d.ws, ws.stream()), cudaSuccess);
  }
  EXPECT_TRUE(compare(ws, c, b));
}

// launch_decode (decode kernel + merge) captured into a CUDA graph and replayed.
TEST(DecodeKernels, CudaGraphCapture) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  for (bool pdl : {false, true}) {
    Case c;
    c.lens = {20000, 77};
    c.pdl = pdl;
    c.seed = 600 + (pdl ? 1 : 0);
    Built b = build(ws, c);
    for (DecodeKernel kernel : {DecodeKernel::fa2, DecodeKernel::fa2_tc}) {
      b.params.out = poisoned_out(ws, c, b);
      if (!kk::decode_supported(kernel, b.params)) continue;
      const kk::DecodePlan plan = kk::plan_decode(kernel, b.indptr, b.last_page_len, c.page_size, c.num_qo_heads(),
                                                  c.num_kv_heads, c.head_dim, device_sm_count());
      ASSERT_GT(plan.num_partial_slots, 0);
      const PlanOnDevice d = upload(ws, plan, c);
      const cudaError_t status = kbench::testing::capture_and_replay(
          ws.stream(), 2, [&] { return kk::launch_decode(kernel, b.params, d.ws, ws.stream()); });
      ASSERT_EQ(status, cudaSuccess);
      EXPECT_TRUE(compare(ws, c, b)) << (kernel == DecodeKernel::fa2 ? "fa2" : "fa2_tc") << (pdl ? " pdl" : "");
    }
  }
}

// fp8 NHD caches: where head_dim is 128, num_kv_heads even and group <= 8, fa2_tc runs two work
// items per CTA (the planner makes them heads h, h + 1 of one chunk: one 256-byte read per token);
// odd kv-head counts and group 16 take the one-item path. Both fp8 formats, page sizes 1 and 16,
// ragged lengths with an empty request, unsplit and split plans (split ones mix split and unsplit
// pairs), 16-bit and fp8 outputs, PDL.
TEST(DecodeKernels, Fp8NhdHeadPairs) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 800;
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    for (int num_kv_heads : {2, 3, 8}) {
      for (int group : {1, 4, 5, 8, 16}) {
        for (int page_size : {1, 16}) {
          for (Split split : {Split::kNever, Split::kMust}) {
            Case c;
            c.kv = kv;
            c.num_kv_heads = num_kv_heads;
            c.group = group;
            c.page_size = page_size;
            c.layout = KvLayout::NHD;
            c.split = split;
            // At most 128 tokens (the shortest chunk): never split; a request of 3001 among few
            // pairs: always.
            c.lens = split == Split::kNever ? ragged(7, 128, page_size, seed, true)
                                            : std::vector<int>{3001, 1, 777, 0, 1600};
            c.q = seed % 2 ? DType::float16 : DType::bfloat16;
            c.out = seed % 3 == 0 ? DType::fp8_e4m3 : c.q;
            c.out_scale = is_fp8(c.out) ? 0.02f : 1.0f;
            c.k_scale = 0.8f;
            c.v_scale = 1.2f;
            c.pdl = seed % 4 == 1;
            c.seed = seed++;
            check_case(ws, c);
          }
        }
      }
    }
  }
}

// Head pairs run whichever two items are adjacent in the list: shuffled plans put items of
// different requests, kv heads and lengths, a split one beside an unsplit or empty one, in one CTA;
// an odd number of items leaves the last CTA one.
TEST(DecodeKernels, Fp8NhdHeadPairsAnyItems) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  uint64_t seed = 900;
  for (DType kv : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    for (bool odd : {false, true}) {
      Case c;
      c.kv = kv;
      c.num_kv_heads = 4;
      c.group = odd ? 5 : 8;
      c.lens = {900, 0, 1, 333, 2048, 47, 160};
      c.out = odd ? DType::fp8_e5m2 : DType::bfloat16;
      c.out_scale = is_fp8(c.out) ? 0.02f : 1.0f;
      c.k_scale = 1.1f;
      c.v_scale = 0.9f;
      c.sm_scale_mult = 2.0f;
      c.seed = seed++;
      Built b = build(ws, c);
      b.params.out = poisoned_out(ws, c, b);
      ASSERT_TRUE(kk::decode_supported(DecodeKernel::fa2_tc, b.params));
      std::vector<int> chunks;
      for (int pair = 0; pair < c.batch() * c.num_kv_heads; ++pair) chunks.push_back(1 + pair * 7 % 4);
      kk::DecodePlan plan = hand_plan(c, chunks, c.seed);
      // One more chunk for the longest request's first pair flips the parity.
      if (static_cast<int>(plan.items.size() % 2) != static_cast<int>(odd)) {
        ++chunks[4 * c.num_kv_heads];
        plan = hand_plan(c, chunks, c.seed);
      }
      ASSERT_EQ(static_cast<int>(plan.items.size() % 2), static_cast<int>(odd));
      ASSERT_GT(plan.num_partial_slots, 0);
      EXPECT_TRUE(run_plan(ws, c, b, DecodeKernel::fa2_tc, plan));
    }
  }
}

TEST(DecodeKernels, RejectsUnsupported) {
  KBENCH_REQUIRE_GPU();
  Workspace ws;
  Case c;
  c.lens = {10, 20};
  Built b = build(ws, c);
  b.params.out = poisoned_out(ws, c, b);
  const kk::DecodePlan plan = kk::plan_decode(DecodeKernel::fa2, b.indptr, b.last_page_len, c.page_size,
                                              c.num_qo_heads(), c.num_kv_heads, c.head_dim, device_sm_count());
  const PlanOnDevice d = upload(ws, plan, c);
  ASSERT_TRUE(kk::decode_supported(DecodeKernel::fa2, b.params));
  ASSERT_EQ(kk::launch_decode(DecodeKernel::fa2, b.params, d.ws, ws.stream()), cudaSuccess);

  // decode_supported judges shapes and dtypes (callers ask it before any buffer exists);
  // launch_decode also refuses bad pointers.
  auto expect_rejected = [&](const char* what, const kk::DecodeParams& p) {
    for (DecodeKernel kernel : {DecodeKernel::fa2, DecodeKernel::fa2_tc}) {
      EXPECT_FALSE(kk::decode_supported(kernel, p)) << what;
      EXPECT_EQ(kk::launch_decode(kernel, p, d.ws, ws.stream()), cudaErrorInvalidValue) << what;
    }
  };
  auto expect_launch_rejected = [&](const char* what, const kk::DecodeParams& p) {
    for (DecodeKernel kernel : {DecodeKernel::fa2, DecodeKernel::fa2_tc}) {
      EXPECT_EQ(kk::launch_decode(kernel, p, d.ws, ws.stream()), cudaErrorInvalidValue) << what;
    }
  };
  {
    kk::DecodeParams no_buffers = b.params;
    no_buffers.q = no_buffers.out = nullptr;
    no_buffers.kv.data = nullptr;
    EXPECT_TRUE(kk::decode_supported(DecodeKernel::fa2, no_buffers));
    EXPECT_TRUE(kk::decode_supported(DecodeKernel::fa2_tc, no_buffers));
  }
  kk::DecodeParams p = b.params;
  p.kv.head_dim = 96;
  expect_rejected("head_dim 96", p);
  p = b.params;
  p.num_qo_heads = 60;  // not a multiple of 8 kv heads
  expect_rejected("num_qo_heads % num_kv_heads", p);
  p = b.params;
  p.kv.page_size = 0;
  expect_rejected("page_size 0", p);
  p = b.params;
  p.kv.dtype = DType::float32;
  expect_rejected("float32 cache", p);
  p = b.params;
  p.out_dtype = DType::float32;
  expect_rejected("float32 output", p);
  p = b.params;
  p.q = nullptr;
  expect_launch_rejected("null q", p);
  p = b.params;
  p.kv.indices = nullptr;
  expect_launch_rejected("null indices", p);
  p = b.params;
  p.kv.data = static_cast<const char*>(p.kv.data) + 2;
  expect_launch_rejected("misaligned cache", p);
  p = b.params;
  p.q = static_cast<const char*>(p.q) + 2;
  expect_launch_rejected("misaligned q", p);
  p = b.params;
  p.out_dtype = DType::fp8_e4m3;
  p.out_scale = 0.0f;
  expect_rejected("fp8 output with out_scale 0", p);
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(ws.stream()));
}

// plan_decode on the shapes the performance targets use (132 SMs, 8 kv heads, head_dim 128) and
// its structural invariants on ragged batches. Host only.
TEST(DecodeKernels, PlanShapes) {
  KBENCH_REQUIRE_GPU();
  auto plan_for = [](int batch, int len, int page_size, int sm_count, DecodeKernel kernel) {
    std::vector<int32_t> indptr(1, 0);
    std::vector<int32_t> last;
    for (int b = 0; b < batch; ++b) {
      const int pages = (len + page_size - 1) / page_size;
      indptr.push_back(indptr.back() + pages);
      last.push_back(pages > 0 ? len - (pages - 1) * page_size : 0);
    }
    return kk::plan_decode(kernel, indptr, last, page_size, 64, 8, 128, sm_count);
  };
  for (int batch : {32, 64, 128}) {
    const kk::DecodePlan p = plan_for(batch, 8192, 16, 132, DecodeKernel::fa2);
    EXPECT_EQ(p.num_partial_slots, 0) << "batch " << batch;
    EXPECT_EQ(static_cast<int>(p.items.size()), batch * 8);
  }
  {
    const kk::DecodePlan p = plan_for(16, 8192, 16, 132, DecodeKernel::fa2);
    EXPECT_GT(p.num_partial_slots, 0);
    EXPECT_GE(static_cast<int>(p.items.size()), 256);
    EXPECT_LE(static_cast<int>(p.items.size()), 2 * 264);
  }
  {
    const kk::DecodePlan p = plan_for(1, 65536, 16, 132, DecodeKernel::fa2);
    EXPECT_GE(static_cast<int>(p.items.size()), 200);
    EXPECT_LE(static_cast<int>(p.items.size()), 2 * 264);
    for (const auto& it : p.items) {
      EXPECT_EQ(it.token_begin % 16, 0);
      EXPECT_GE(it.token_end - it.token_begin, 256);
    }
  }
  // Structure on ragged batches, both kernels, several SM counts.
  uint64_t seed = 700;
  for (DecodeKernel kernel : {DecodeKernel::fa2, DecodeKernel::fa2_tc}) {
    for (int sm_count : {1, 8, 132}) {
      for (int page_size : {1, 5, 16, 128}) {
        Case c;
        c.page_size = page_size;
        c.group = 5;
        c.num_kv_heads = 3;
        c.lens = ragged(9, 30000, page_size, seed++, true);
        Built b;
        b.indptr.assign(1, 0);
        for (int len : c.lens) {
          const int pages = (len + page_size - 1) / page_size;
          b.indptr.push_back(b.indptr.back() + pages);
          b.last_page_len.push_back(pages > 0 ? len - (pages - 1) * page_size : 0);
        }
        const kk::DecodePlan plan = kk::plan_decode(kernel, b.indptr, b.last_page_len, page_size, c.num_qo_heads(),
                                                    c.num_kv_heads, c.head_dim, sm_count);
        EXPECT_TRUE(check_plan(plan, c, b)) << "sm_count " << sm_count << " " << c.describe();
      }
    }
  }
  // fa2_tc's fp8 NHD head pairs read 256 contiguous bytes per token only where items 2x and 2x + 1
  // are heads h, h + 1 (h even) of one chunk: the plan emits each chunk's kv heads in turn and keeps
  // them together through the sort by length.
  for (int num_kv_heads : {2, 8}) {
    for (int sm_count : {1, 8, 132}) {
      for (int page_size : {1, 16}) {
        Case c;
        c.page_size = page_size;
        c.num_kv_heads = num_kv_heads;
        c.lens = ragged(13, 30000, page_size, seed++, true);
        std::vector<int32_t> indptr(1, 0);
        std::vector<int32_t> last;
        for (int len : c.lens) {
          const int pages = (len + page_size - 1) / page_size;
          indptr.push_back(indptr.back() + pages);
          last.push_back(pages > 0 ? len - (pages - 1) * page_size : 0);
        }
        const kk::DecodePlan plan = kk::plan_decode(DecodeKernel::fa2_tc, indptr, last, page_size, c.num_qo_heads(),
                                                    num_kv_heads, c.head_dim, sm_count, DType::fp8_e4m3);
        ASSERT_EQ(plan.items.size() % 2, 0u);
        for (std::size_t i = 0; i < plan.items.size(); i += 2) {
          const kk::DecodeWorkItem& x = plan.items[i];
          const kk::DecodeWorkItem& y = plan.items[i + 1];
          EXPECT_TRUE(x.kv_head % 2 == 0 && y.kv_head == x.kv_head + 1 && y.request == x.request &&
                      y.token_begin == x.token_begin && y.token_end == x.token_end)
              << "items " << i << ", " << i + 1 << " with sm_count " << sm_count << " " << c.describe();
        }
      }
    }
  }
}

}  // namespace
