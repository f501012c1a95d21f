// GPU tests of the cuDNN prefill backend: cuDNN SDPA on ragged Q/O with ragged K/V or a paged cache
// (NHD and HND, page 16 and 64), causal (bottom-right: q_len < kv_len, and rows that see no key) or
// not, GQA ratios 1 and 8, head dims 64, 128 and 192/128, bf16 and fp16, random ragged lengths and
// padded max lengths, against kernels::launch_prefill_reference (fp32); a CUDA-graph replay of
// run(); and shapes cuDNN refuses, which must come with a reason. The GPU tests skip where no CUDA
// device is present. A configuration this cuDNN cannot run is never skipped silently: the test
// prints it with the reason ("[ cuDNN NOT RUN ]", also a test property), and fails where kbench
// relies on it (every case but head dim 96, on Hopper). On an H100 with cuDNN 9.14 and 9.19 every case runs.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/cudnn/cudnn_paged_decode.hpp"  // cudnn_version_string
#include "backends/cudnn/cudnn_prefill.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kbench/dtype.hpp"
#include "kernels/attention/prefill/prefill.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "routines/attention/paged_kv_layout.hpp"
#include "routines/device_tensors.hpp"

namespace {

using kbench::DeviceBuffer;
using kbench::DType;
using kbench::backends::cudnn_prefill_unsupported;
using kbench::backends::CudnnPrefill;
using kbench::backends::CudnnPrefillData;
using kbench::backends::CudnnPrefillShape;
namespace kk = kbench::kernels;

struct Case {
  bool paged = false;
  kk::KvLayout layout = kk::KvLayout::NHD;
  int page_size = 16;
  bool causal = false;
  int num_qo_heads = 8;
  int num_kv_heads = 8;
  int head_dim_qk = 128;
  int head_dim_vo = 128;
  DType dtype = DType::bfloat16;
  int batch = 5;
  int max_q = 97;    // q lengths: random in [1, max_q] (one request 1, one max_q)
  int max_kv = 300;  // kv lengths: random in [1, max_kv] (causal: at least q); equal_lengths: kv = q
  bool equal_lengths = false;
  bool kv_below_q = false;    // causal: kv lengths below q too, so some rows see no key (they write zeros)
  int empty_kv_request = -1;  // this request gets kv_len 0 (cuDNN writes NaN there: refused)
  int pad = 0;                // max_q_len / max_kv_len = the longest request + pad
  uint64_t seed = 1;

  [[nodiscard]] std::string describe() const {
    std::ostringstream s;
    s << kbench::dtype_name(dtype);
    if (paged) {
      s << " paged " << (layout == kk::KvLayout::HND ? "HND" : "NHD") << " page " << page_size;
    } else {
      s << " ragged";
    }
    s << (causal ? " causal" : " non-causal") << (equal_lengths ? " q_len == kv_len" : "")
      << (kv_below_q ? " kv_len < q_len" : "") << (empty_kv_request >= 0 ? " a request without keys" : "") << " heads "
      << num_qo_heads << "/" << num_kv_heads << " d" << head_dim_qk;
    if (head_dim_vo != head_dim_qk) s << "/" << head_dim_vo;
    if (pad > 0) s << " padded +" << pad;
    return s.str();
  }
};

struct Lengths {
  std::vector<int32_t> q;
  std::vector<int32_t> kv;
};

Lengths lengths_of(const Case& c) {
  std::mt19937 rng(static_cast<uint32_t>(c.seed));
  Lengths lens;
  for (int b = 0; b < c.batch; ++b) {
    const int q = b == 0 ? 1 : b == 1 ? c.max_q : std::uniform_int_distribution<int>(1, c.max_q)(rng);
    const int kv_min = c.causal && !c.kv_below_q ? q : 1;
    const int kv = b == c.empty_kv_request ? 0
                   : c.equal_lengths       ? q
                                     : std::uniform_int_distribution<int>(kv_min, std::max(kv_min, c.max_kv))(rng);
    lens.q.push_back(q);
    lens.kv.push_back(kv);
  }
  return lens;
}

// The backend's shape of a case, with its paged layout (paged cases only).
struct CaseSetup {
  CudnnPrefillShape shape;
  kbench::PagedKvLayout pages;
};

CaseSetup setup_of(const Case& c) {
  const Lengths lens = lengths_of(c);
  CaseSetup set;
  CudnnPrefillShape& s = set.shape;
  s.batch = c.batch;
  s.num_qo_heads = c.num_qo_heads;
  s.num_kv_heads = c.num_kv_heads;
  s.head_dim_qk = c.head_dim_qk;
  s.head_dim_vo = c.head_dim_vo;
  s.max_q_len = *std::max_element(lens.q.begin(), lens.q.end()) + c.pad;
  s.max_kv_len = *std::max_element(lens.kv.begin(), lens.kv.end()) + c.pad;
  s.qo_indptr = kbench::token_offsets(lens.q);
  s.kv_indptr = kbench::token_offsets(lens.kv);
  s.paged = c.paged;
  s.causal = c.causal;
  s.q_dtype = s.kv_dtype = s.out_dtype = c.dtype;
  s.sm_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim_qk));
  if (c.paged) {
    set.pages = kbench::make_paged_kv_layout(lens.kv, s.max_kv_len, c.page_size, c.seed + 100);
    s.page_size = c.page_size;
    s.num_pages = set.pages.total_pages;
    s.max_pages_per_request = set.pages.pages_per_request;
    s.layout = c.layout;
  }
  return set;
}

// The device tensors of one case.
struct Problem {
  CaseSetup set;
  int64_t q_count = 0;
  int64_t out_count = 0;
  DeviceBuffer q, k, v, cache, block_table, out, out_ref, scratch;
  DeviceBuffer qo_indptr, kv_indptr, page_indptr, page_indices, last_page_len;  // the reference's

  [[nodiscard]] CudnnPrefillData data() const {
    CudnnPrefillData d;
    d.q = q.get();
    d.out = out.get();
    if (set.shape.paged) {
      d.kv_cache = cache.get();
      d.block_table = block_table.as<int32_t>();
    } else {
      d.k = k.get();
      d.v = v.get();
    }
    return d;
  }

  [[nodiscard]] std::size_t out_bytes() const {
    return static_cast<std::size_t>(out_count) * kbench::dtype_size(set.shape.out_dtype);
  }
};

Problem make_problem(const Case& c, cudaStream_t stream) {
  Problem p;
  p.set = setup_of(c);
  const CudnnPrefillShape& s = p.set.shape;
  const int64_t total_q = s.qo_indptr.back();
  const int64_t total_kv = s.kv_indptr.back();
  const std::size_t elem = kbench::dtype_size(c.dtype);
  p.q_count = total_q * s.num_qo_heads * s.head_dim_qk;
  p.out_count = total_q * s.num_qo_heads * s.head_dim_vo;
  p.q = DeviceBuffer(static_cast<std::size_t>(p.q_count) * elem);
  p.out = DeviceBuffer(static_cast<std::size_t>(p.out_count) * elem);
  p.out_ref = DeviceBuffer(static_cast<std::size_t>(p.out_count) * sizeof(float));
  p.scratch = DeviceBuffer(static_cast<std::size_t>(p.out_count) * sizeof(float));
  KBENCH_CUDA_CHECK(kk::fill_normal(p.q.get(), c.dtype, p.q_count, c.seed * 16 + 1, 0.0f, 1.0f, stream));
  p.qo_indptr = kbench::upload(s.qo_indptr, stream);
  if (s.paged) {
    const int64_t cache_count = int64_t{s.num_pages} * 2 * s.num_kv_heads * s.page_size * s.head_dim_qk;
    p.cache = DeviceBuffer(static_cast<std::size_t>(cache_count) * elem);
    KBENCH_CUDA_CHECK(kk::fill_normal(p.cache.get(), c.dtype, cache_count, c.seed * 16 + 2, 0.0f, 1.0f, stream));
    p.block_table = kbench::upload(p.set.pages.block_table, stream);
    p.page_indptr = kbench::upload(p.set.pages.indptr, stream);
    p.page_indices = kbench::upload(p.set.pages.indices, stream);
    p.last_page_len = kbench::upload(p.set.pages.last_page_len, stream);
  } else {
    const int64_t k_count = total_kv * s.num_kv_heads * s.head_dim_qk;
    const int64_t v_count = total_kv * s.num_kv_heads * s.head_dim_vo;
    p.k = DeviceBuffer(static_cast<std::size_t>(k_count) * elem);
    p.v = DeviceBuffer(static_cast<std::size_t>(v_count) * elem);
    KBENCH_CUDA_CHECK(kk::fill_normal(p.k.get(), c.dtype, k_count, c.seed * 16 + 3, 0.0f, 1.0f, stream));
    KBENCH_CUDA_CHECK(kk::fill_normal(p.v.get(), c.dtype, v_count, c.seed * 16 + 4, 0.0f, 1.0f, stream));
    p.kv_indptr = kbench::upload(s.kv_indptr, stream);
  }
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return p;
}

// The fp32 reference of the problem, on the host.
std::vector<float> reference(const Problem& p, cudaStream_t stream) {
  const CudnnPrefillShape& s = p.set.shape;
  kk::PrefillParams r;
  r.q = p.q.get();
  r.q_dtype = s.q_dtype;
  r.qo_indptr = p.qo_indptr.as<int32_t>();
  r.out_dtype = s.out_dtype;
  r.paged = s.paged;
  if (s.paged) {
    r.pages.data = p.cache.get();
    r.pages.layout = s.layout;
    r.pages.page_size = s.page_size;
    r.pages.indptr = p.page_indptr.as<int32_t>();
    r.pages.indices = p.page_indices.as<int32_t>();
    r.pages.last_page_len = p.last_page_len.as<int32_t>();
  } else {
    r.ragged.k = p.k.get();
    r.ragged.v = p.v.get();
    r.ragged.indptr = p.kv_indptr.as<int32_t>();
  }
  r.kv_dtype = s.kv_dtype;
  r.batch = s.batch;
  r.num_qo_heads = s.num_qo_heads;
  r.num_kv_heads = s.num_kv_heads;
  r.head_dim_qk = s.head_dim_qk;
  r.head_dim_vo = s.head_dim_vo;
  r.causal = s.causal;
  r.sm_scale = s.sm_scale;
  KBENCH_CUDA_CHECK(kk::poison(p.out_ref.get(), p.out_count * static_cast<int64_t>(sizeof(float)), stream));
  KBENCH_CUDA_CHECK(kk::launch_prefill_reference(r, p.out_ref.as<float>(), stream));
  std::vector<float> host(static_cast<std::size_t>(p.out_count));
  KBENCH_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), p.out_ref.get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

// ||got - ref|| / ||ref|| < 2e-2 and every element within atol 0.01 + rtol 0.2 * |ref| (compat.md's
// attention tolerances); NaN (a poisoned element left unwritten) fails both.
void expect_close(const std::vector<float>& got, const std::vector<float>& ref, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size());
  double diff2 = 0.0;
  double ref2 = 0.0;
  int64_t bad = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double g = got[i];
    const double r = ref[i];
    diff2 += (g - r) * (g - r);
    ref2 += r * r;
    if (!(std::abs(g - r) <= 0.01 + 0.2 * std::abs(r))) {
      if (bad < 5) ADD_FAILURE() << what << ": element " << i << " got " << g << " want " << r;
      ++bad;
    }
  }
  const double rel = std::sqrt(diff2 / ref2);
  EXPECT_EQ(bad, 0) << what << ": elements outside rtol 0.2 / atol 0.01";
  EXPECT_LT(rel, 2e-2) << what << ": relative L2 error";  // NaN fails too
}

std::vector<float> output_of(const Problem& p, cudaStream_t stream) {
  return kbench::to_host_floats(p.out.get(), p.set.shape.out_dtype, static_cast<std::size_t>(p.out_count),
                                p.scratch.as<float>(), stream);
}

// Where the device is Hopper (kbench's target), cuDNN must run the ragged cases: a refusal there
// fails the test; other refusals are printed with cuDNN's reason.
bool is_hopper() {
  int device = 0;
  int major = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major == 9;
}

void report_not_run(const std::string& what, const std::string& why) {
  std::cout << "[ cuDNN NOT RUN ] " << what << ": " << why << "\n";
  ::testing::Test::RecordProperty("cudnn_not_run", what + ": " + why);
}

class CudnnPrefillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KBENCH_REQUIRE_GPU();  // a skip here skips the test body too
    KBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    std::cout << "[ cuDNN    ] " << kbench::backends::cudnn_version_string() << "\n";
  }
  void TearDown() override {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // Runs the case eagerly against the reference; false (with the reason printed) where cuDNN
  // refuses it, a failure too where the case is `required` and the device is Hopper.
  bool check_case(const Case& c, bool required) {
    SCOPED_TRACE(c.describe());
    const CaseSetup set = setup_of(c);
    if (auto why = cudnn_prefill_unsupported(set.shape)) {
      report_not_run(c.describe(), *why);
      if (required && is_hopper()) ADD_FAILURE() << "cuDNN refuses a case kbench relies on, on Hopper: " << *why;
      return false;
    }
    Problem p = make_problem(c, stream_);
    CudnnPrefill prefill(p.set.shape);
    KBENCH_CUDA_CHECK(kk::poison(p.out.get(), static_cast<int64_t>(p.out_bytes()), stream_));
    prefill.run(p.data(), stream_);
    KBENCH_CUDA_CHECK(cudaGetLastError());
    expect_close(output_of(p, stream_), reference(p, stream_), c.describe());
    return true;
  }

  cudaStream_t stream_ = nullptr;
};

Case ragged(DType dtype, bool causal, int hq, int hk, int dqk, int dvo, uint64_t seed) {
  Case c;
  c.dtype = dtype;
  c.causal = causal;
  c.num_qo_heads = hq;
  c.num_kv_heads = hk;
  c.head_dim_qk = dqk;
  c.head_dim_vo = dvo;
  c.seed = seed;
  return c;
}

Case paged(DType dtype, kk::KvLayout layout, int page_size, bool causal, int hq, int hk, uint64_t seed) {
  Case c = ragged(dtype, causal, hq, hk, 128, 128, seed);
  c.paged = true;
  c.layout = layout;
  c.page_size = page_size;
  return c;
}

TEST_F(CudnnPrefillTest, RaggedKvMatchesReference) {
  std::vector<Case> cases{
      ragged(DType::bfloat16, false, 8, 8, 128, 128, 11),  // q_len may exceed kv_len
      ragged(DType::float16, false, 32, 4, 128, 128, 12),
      ragged(DType::bfloat16, true, 32, 4, 128, 128, 13),  // causal, q_len <= kv_len: bottom-right
      ragged(DType::float16, true, 8, 8, 128, 128, 14),
      ragged(DType::bfloat16, true, 16, 16, 192, 128, 15),  // qk 192 / vo 128
      ragged(DType::float16, false, 16, 2, 192, 128, 16),
      ragged(DType::bfloat16, true, 16, 2, 64, 64, 17),
  };
  Case self_attention = ragged(DType::bfloat16, true, 32, 4, 128, 128, 18);
  self_attention.equal_lengths = true;
  cases.push_back(self_attention);
  Case padded = ragged(DType::float16, true, 16, 2, 128, 128, 19);  // max lengths past the longest request
  padded.pad = 37;
  cases.push_back(padded);
  Case keyless_rows = ragged(DType::bfloat16, true, 8, 2, 128, 128, 20);  // causal rows that see no key
  keyless_rows.kv_below_q = true;
  keyless_rows.max_kv = 60;
  cases.push_back(keyless_rows);
  for (const Case& c : cases) check_case(c, /*required=*/true);
}

TEST_F(CudnnPrefillTest, PagedKvMatchesReference) {
  using kk::KvLayout;
  std::vector<Case> cases{
      paged(DType::bfloat16, KvLayout::NHD, 16, false, 32, 4, 21),
      paged(DType::float16, KvLayout::HND, 16, false, 8, 8, 22),
      paged(DType::bfloat16, KvLayout::HND, 64, false, 8, 8, 23),
      paged(DType::float16, KvLayout::NHD, 64, false, 32, 4, 24),
      paged(DType::bfloat16, KvLayout::NHD, 16, true, 32, 4, 25),  // causal, q_len <= kv_len: bottom-right
      paged(DType::float16, KvLayout::HND, 16, true, 8, 8, 26),
      paged(DType::bfloat16, KvLayout::HND, 64, true, 32, 4, 27),
  };
  Case self_attention = paged(DType::bfloat16, KvLayout::NHD, 16, true, 32, 4, 28);
  self_attention.equal_lengths = true;
  cases.push_back(self_attention);
  Case padded = paged(DType::float16, KvLayout::HND, 16, false, 16, 2, 29);
  padded.pad = 40;  // max_kv_len past the longest request: spare block-table columns
  cases.push_back(padded);
  Case keyless_rows = paged(DType::bfloat16, KvLayout::NHD, 16, true, 8, 2, 30);  // rows that see no key
  keyless_rows.kv_below_q = true;
  keyless_rows.max_kv = 60;
  cases.push_back(keyless_rows);
  int ran = 0;
  for (const Case& c : cases) ran += check_case(c, /*required=*/true) ? 1 : 0;
  if (ran == 0) GTEST_SKIP() << "cuDNN runs no paged case here (reasons printed above)";
}

TEST_F(CudnnPrefillTest, CudaGraphReplayMatchesEagerRun) {
  for (const Case& c : {ragged(DType::bfloat16, true, 32, 4, 128, 128, 31),
                        paged(DType::bfloat16, kk::KvLayout::NHD, 16, false, 32, 4, 32)}) {
    SCOPED_TRACE(c.describe());
    if (auto why = cudnn_prefill_unsupported(setup_of(c).shape)) {
      report_not_run(c.describe() + " (graph replay)", *why);
      continue;
    }
    Problem p = make_problem(c, stream_);
    CudnnPrefill prefill(p.set.shape);
    const std::size_t bytes = p.out_bytes();

    // Eager first: cuDNN loads its kernels on first use, which a capture must not see.
    prefill.run(p.data(), stream_);
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::vector<unsigned char> eager(bytes);
    KBENCH_CUDA_CHECK(cudaMemcpy(eager.data(), p.out.get(), bytes, cudaMemcpyDeviceToHost));

    KBENCH_CUDA_CHECK(kk::poison(p.out.get(), static_cast<int64_t>(bytes), stream_));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
    KBENCH_CUDA_CHECK(kbench::testing::capture_and_replay(stream_, 3, [&] {
      prefill.run(p.data(), stream_);
      return cudaSuccess;
    }));
    std::vector<unsigned char> replayed(bytes);
    KBENCH_CUDA_CHECK(cudaMemcpy(replayed.data(), p.out.get(), bytes, cudaMemcpyDeviceToHost));

    // cuDNN's SDPA forward is deterministic: the replay writes the eager run's bytes.
    EXPECT_EQ(std::memcmp(eager.data(), replayed.data(), bytes), 0);
    expect_close(output_of(p, stream_), reference(p, stream_), c.describe() + " (graph replay)");
  }
}

// Shapes cuDNN (or kbench's wiring of it) refuses get a reason, never a crash. These checks come
// before any device query, so they hold on any machine.
TEST(CudnnPrefillSupport, RefusedShapesHaveReasons) {
  auto expect_reason = [](CudnnPrefillShape s, const char* expected, const std::string& what) {
    const auto why = cudnn_prefill_unsupported(s);
    ASSERT_TRUE(why.has_value()) << what;
    EXPECT_NE(why->find(expected), std::string::npos) << what << ": " << *why;
    std::cout << "[ cuDNN    ] " << what << ": " << *why << "\n";
  };
  const CudnnPrefillShape base = setup_of(ragged(DType::bfloat16, true, 8, 8, 128, 128, 41)).shape;

  CudnnPrefillShape fp8 = base;
  fp8.q_dtype = fp8.kv_dtype = DType::fp8_e4m3;
  expect_reason(fp8, "fp8", "fp8 q and kv");
  CudnnPrefillShape fp8_kv = base;
  fp8_kv.kv_dtype = DType::fp8_e4m3;
  expect_reason(fp8_kv, "fp8", "fp8 kv");
  CudnnPrefillShape head_100 = base;
  head_100.head_dim_qk = head_100.head_dim_vo = 100;
  expect_reason(head_100, "multiples of 8", "head dim 100");
  CudnnPrefillShape paged_192 = setup_of(paged(DType::bfloat16, kk::KvLayout::NHD, 16, true, 8, 8, 42)).shape;
  paged_192.head_dim_qk = 192;
  expect_reason(paged_192, "one head dim", "paged qk 192 / vo 128");
  for (const bool is_paged : {false, true}) {
    Case keyless = is_paged ? paged(DType::bfloat16, kk::KvLayout::HND, 16, false, 8, 8, 43)
                            : ragged(DType::bfloat16, false, 8, 8, 128, 128, 43);
    keyless.empty_kv_request = 2;
    expect_reason(setup_of(keyless).shape, "no keys", keyless.describe());
  }
  CudnnPrefillShape too_long = base;
  too_long.max_q_len = 1;  // shorter than the longest request
  expect_reason(too_long, "qo_indptr", "max_q_len below a request's length");
}

// Head dim 96 is not a case cuDNN refuses by rule on Hopper (multiples of 8 up to 256): report what
// this cuDNN says, and where it accepts, check the result.
TEST_F(CudnnPrefillTest, HeadDim96IsRunOrRefusedWithAReason) {
  Case c = ragged(DType::bfloat16, true, 8, 2, 96, 96, 51);
  if (!check_case(c, /*required=*/false)) SUCCEED() << "refused with the reason printed above";
}

}  // namespace
