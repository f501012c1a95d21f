// GPU tests of split-K in kbench's own GEMM kernel (backend `cuda`, kernels/gemm/sm90): decode-sized
// m (1 to 128) at the n and k (n 2112 and 7168, k 7168 and 16384; and n 1000, a partial last
// tile), for the groupwise, per-tensor and BF16 scalings. Each case is bound with 1 split and split
// (the heuristic's count and a forced uneven one), every plan refchecked against the fp32 reference,
// the split outputs as close to it as the unsplit one (and within one rounding of it where the sums
// are fp32), and a second launch of a split plan bit-identical to its first (the tiles' counters
// reset by the first). Then the 128 x 256 tiles (two consumer warpgroups) forced to split, CUDA-graph
// replays of split plans, and the plan the heuristic makes for the shapes. Each test skips
// itself without a CUDA device; off Hopper the backend says why and the lines are not run.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/host_tensor.hpp"
#include "core/verify.hpp"
#include "gemm/gemm_backend_check.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/gemm/sm90/wgmma_gemm.hpp"
#include "routines/builtin_routines.hpp"
#include "routines/gemm/gemm_case.hpp"

#include "case_from_line.hpp"

namespace {

using kbench::testing::GemmLine;
using kbench::testing::ScopedEnv;
namespace wg = kbench::kernels::gemm::sm90;

constexpr const char* kSplits = "KBENCH_WGMMA_GEMM_SPLITS";

void expect_refcheck_passes(kbench::Verifier& verifier, kbench::Operation& operation, cudaStream_t stream) {
  const kbench::RefcheckResult result = verifier.check(operation, stream);
  for (const kbench::Comparison& c : result.comparisons) {
    EXPECT_EQ(c.mismatches, 0) << c.tensor << ": " << c.mismatches << "/" << c.total << " max abs error "
                               << c.max_abs_error;
  }
  EXPECT_TRUE(result.passed());
}

// sqrt(sum (a - b)^2).
double l2_distance(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
  return std::sqrt(sum);
}

// The line's case (one input set) bound by backend `cuda` with 1 split, then with each of `splits`
// (KBENCH_WGMMA_GEMM_SPLITS's value; nullptr: the heuristic's count): every plan refchecked; each
// split plan launched twice, bit-identical; its output no farther from the fp32 reference (L2) than
// the unsplit one's, give or take a quarter (a split lost or counted twice is far off; per-tensor
// FP8 splits come out closer, wgmma's fp8 accumulator summing fewer products); and, where the sums
// are fp32 throughout (groupwise: promoted every 128 of k; BF16), within one output rounding of the
// unsplit output (plus 1e-3 of its largest magnitude, for sums that cancel): the two differ only in
// the order of the fp32 additions.
void expect_splits_agree(const GemmLine& line, std::initializer_list<const char*> splits) {
  SCOPED_TRACE(std::string(line.routine) + " " + line.flags);
  const kbench::RoutineRegistry registry = kbench::make_builtin_registry();
  std::unique_ptr<kbench::Case> problem =
      kbench::testing::case_from_line(registry, std::string("-R ") + line.routine + " " + line.flags);
  const kbench::Backend* backend = registry.find(line.routine)->find_backend("cuda");
  ASSERT_NE(backend, nullptr);
  const kbench::Support support = backend->can_implement(*problem);
  if (!support) {
    std::cout << "[ cuda NOT RUN ] " << line.routine << " " << line.flags << ": " << support.reason << "\n";
    return;
  }
  kbench::CudaStream stream;
  problem->allocate(1, 42, stream.get());
  const auto& gemm = static_cast<const kbench::GemmCase&>(*problem);
  void* const out = gemm.operands(0).out;
  const auto count = static_cast<std::size_t>(gemm.problem().out_elements());
  const kbench::DType dtype = gemm.problem().out_dtype;
  const bool fp32_sums = !gemm.problem().per_tensor();
  const auto launch = [&](kbench::Operation& operation) {
    KBENCH_CUDA_CHECK(cudaMemsetAsync(out, 0xFF, count * kbench::dtype_size(dtype), stream.get()));  // NaN
    operation.launch(stream.get(), 0);
    KBENCH_CUDA_CHECK(cudaGetLastError());
    return kbench::read_as_floats(out, dtype, count, stream.get());
  };
  kbench::Verifier verifier(*problem);
  std::vector<float> unsplit;
  {
    const ScopedEnv one(kSplits, "1");
    const std::unique_ptr<kbench::Operation> operation = backend->prepare(*problem, stream.get());
    expect_refcheck_passes(verifier, *operation, stream.get());
    unsplit = launch(*operation);
  }
  const std::vector<float> reference = problem->reference(stream.get()).at(0);
  const std::vector<float> zeros(count, 0.0f);
  const double unsplit_error = l2_distance(unsplit, reference), reference_norm = l2_distance(reference, zeros);
  float largest = 0.0f;
  for (const float v : unsplit) largest = std::max(largest, std::fabs(v));
  for (const char* split : splits) {
    SCOPED_TRACE(std::string("splits ") + (split != nullptr ? split : "by the heuristic"));
    const ScopedEnv forced(kSplits, split);
    const std::unique_ptr<kbench::Operation> operation = backend->prepare(*problem, stream.get());
    expect_refcheck_passes(verifier, *operation, stream.get());
    const std::vector<float> first = launch(*operation);
    const std::vector<float> second = launch(*operation);
    EXPECT_EQ(std::memcmp(first.data(), second.data(), count * sizeof(float)), 0)
        << "a second launch differs from the first: a tile's counter was not reset";
    const double split_error = l2_distance(first, reference);
    EXPECT_LE(split_error, 1.25 * unsplit_error + 1e-6 * reference_norm)
        << "L2 distance from the fp32 reference: split " << split_error << ", unsplit " << unsplit_error
        << ", the reference's norm " << reference_norm;
    if (!fp32_sums) continue;
    int64_t far = 0;
    std::size_t first_far = count;
    for (std::size_t i = 0; i < count; ++i) {
      const float a = first[i], b = unsplit[i];
      if (!(std::fabs(a - b) <= 0x1p-7f * std::max(std::fabs(a), std::fabs(b)) + 1e-3f * largest)) {
        if (far++ == 0) first_far = i;
      }
    }
    EXPECT_EQ(far, 0) << "split and unsplit outputs apart at " << far << " of " << count << " elements, the first "
                      << first_far << ": " << (first_far < count ? first[first_far] : 0.0f) << " against "
                      << (first_far < count ? unsplit[first_far] : 0.0f);
  }
}

// The lines of one routine at m 1, 7, 64, 100 and 128 (one or two 64-row m-blocks, partial ones
// included) for the two decode shapes, then n 1000 (a partial last tile and B scale block)
// at m 100.
std::vector<std::string> decode_flags(const char* extra) {
  std::vector<std::string> flags;
  for (const char* nk : {"--n 2112 --k 7168", "--n 7168 --k 16384"}) {
    for (const int m : {1, 7, 64, 100, 128}) flags.push_back("--m " + std::to_string(m) + " " + nk + extra);
  }
  flags.push_back(std::string("--m 100 --n 1000 --k 7168") + extra);
  return flags;
}

void expect_decode_splits_agree(const char* routine, const char* extra) {
  for (const std::string& flags : decode_flags(extra)) expect_splits_agree({routine, flags.c_str()}, {nullptr, "3"});
}

TEST(KbenchGemmSplitK, GroupwiseFp8MatchesOneSplitAndTheReference) {
  KBENCH_REQUIRE_GPU();
  expect_decode_splits_agree("gemm_fp8_nt_groupwise", "");
  expect_decode_splits_agree("gemm_fp8_nt_groupwise", " --scale_major_mode K --out_dtype float16");
}

TEST(KbenchGemmSplitK, PerTensorFp8MatchesOneSplitAndTheReference) {
  KBENCH_REQUIRE_GPU();
  expect_decode_splits_agree("mm_fp8", "");
}

TEST(KbenchGemmSplitK, Bf16MatchesOneSplitAndTheReference) {
  KBENCH_REQUIRE_GPU();
  expect_decode_splits_agree("mm_bf16", "");
}

// Many splits of few k-blocks (uneven), and as many splits as k-blocks.
TEST(KbenchGemmSplitK, ManySplits) {
  KBENCH_REQUIRE_GPU();
  expect_splits_agree({"gemm_fp8_nt_groupwise", "--m 64 --n 2112 --k 7168"}, {"16", "56"});
  expect_splits_agree({"mm_fp8", "--m 7 --n 2112 --k 7168"}, {"13", "1000"});  // 1000: clamped to 56
  expect_splits_agree({"mm_bf16", "--m 100 --n 520 --k 264"}, {"2", "5"});   // 5 k-slices, the last partial
}

// The 128 x 256 tiles (two consumer warpgroups, each its own part of a slot; groupwise, taking
// turns at the wgmmas) are chosen only where they fill the SMs, so unsplit by the heuristic: forced.
TEST(KbenchGemmSplitK, TwoConsumerWarpgroupTiles) {
  KBENCH_REQUIRE_GPU();
  const ScopedEnv tiles("KBENCH_WGMMA_GEMM_TILES", "128x256");
  for (const GemmLine& line : {
           GemmLine{"gemm_fp8_nt_groupwise", "--m 100 --n 2112 --k 7168"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 300 --n 896 --k 1024 --scale_major_mode K"},
           GemmLine{"mm_fp8", "--m 129 --n 2112 --k 7168"},
           GemmLine{"mm_bf16", "--m 128 --n 1000 --k 7168"},
       }) {
    expect_splits_agree(line, {"3", "8"});
  }
}

// kbench's refcheck, the second input set and a CUDA-graph replay of both sets' plans (each its own
// workspace) writing what the eager call wrote, on split plans.
TEST(KbenchGemmSplitK, GraphReplay) {
  KBENCH_REQUIRE_GPU();
  for (const char* split : {static_cast<const char*>(nullptr), "4"}) {
    const ScopedEnv forced(kSplits, split);
    for (const GemmLine& line : {
             GemmLine{"gemm_fp8_nt_groupwise", "--m 64 --n 2112 --k 7168"},
             GemmLine{"gemm_fp8_nt_groupwise", "--m 128 --n 7168 --k 16384 --scale_major_mode K"},
             GemmLine{"mm_fp8", "--m 128 --n 2112 --k 7168"},
             GemmLine{"bmm_fp8", "--batch_size 3 --m 5 --n 1024 --k 7168"},
             GemmLine{"mm_bf16", "--m 7 --n 2112 --k 7168"},
             GemmLine{"group_gemm_fp8_nt_groupwise", "--m 70 --n 1152 --k 1024 --group_size 3"},
         }) {
      kbench::testing::expect_gemm_backend_passes("cuda", line);
    }
  }
}

// The plan for the decode shapes: the heuristic's tiles (wgmma_gemm_tile_shape: 64 x 128,
// but 128 x 128 at m 128, n 7168) and splits (3, 3, 1 and 1 on an H100's 132 SMs; 5, 3, 2 and 2 on an
// H200's) and the workspace they take; KBENCH_WGMMA_GEMM_SPLITS overriding it, clamped to the k-blocks.
TEST(KbenchGemmSplitK, PlanOfTheDecodeShapes) {
  KBENCH_REQUIRE_GPU();
  if (!wg::wgmma_gemm_built_for_sm90a()) GTEST_SKIP() << "this build has no sm_90a code";
  const int sms = kbench::testing::device_sm_count();
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape s : {Shape{64, 2112, 7168}, Shape{128, 2112, 7168}, Shape{64, 7168, 16384}, Shape{128, 7168, 16384}}) {
    SCOPED_TRACE("m " + std::to_string(s.m) + " n " + std::to_string(s.n) + " k " + std::to_string(s.k));
    kbench::DeviceBuffer a(static_cast<std::size_t>(s.m * s.k)), b(static_cast<std::size_t>(s.n * s.k)),
        d(static_cast<std::size_t>(s.m * s.n * 2)), scales(4096);
    wg::WgmmaGemmParams p;
    p.rows_per_group = s.m;
    p.rows = s.m;
    p.n = s.n;
    p.k = s.k;
    p.a = a.get();
    p.b = b.get();
    p.d = d.get();
    p.a_scale = scales.as<float>();  // read only by a run
    p.b_scale = scales.as<float>();
    const wg::WgmmaTileShape shape = wg::wgmma_gemm_tile_shape(p, sms);
    if (sms == 132) {
      EXPECT_EQ(shape.block_m, s.m == 128 && s.n == 7168 ? 128 : 64);
    }
    const int64_t n_blocks = (s.n + shape.block_n - 1) / shape.block_n;
    const int64_t tile_count = (s.m + shape.block_m - 1) / shape.block_m * n_blocks;
    const int64_t k_blocks = s.k / 128;
    const int64_t streams = wg::wgmma_gemm_device_b_streams();
    const int expected = wg::wgmma_gemm_k_splits(n_blocks, tile_count, k_blocks, sms, streams);
    {
      const ScopedEnv heuristic(kSplits, nullptr);
      const wg::WgmmaGemm gemm(p);
      EXPECT_EQ(gemm.k_splits(), expected);
      // 256-byte-rounded counters, then an fp32 tile per unit.
      const auto tiles = static_cast<std::size_t>(tile_count), splits = static_cast<std::size_t>(expected);
      const std::size_t tile_bytes = static_cast<std::size_t>(shape.block_m) * shape.block_n * 4;
      const std::size_t bytes = splits == 1 ? 0 : (tiles * 4 + 255) / 256 * 256 + tiles * splits * tile_bytes;
      EXPECT_EQ(gemm.workspace_bytes(), bytes);
      if (sms == 132 && streams == wg::kSplitKBStreams) {  // an H100
        EXPECT_EQ(gemm.k_splits(), s.n == 2112 ? 3 : 1);
      }
      if (sms == 132 && streams == 69) {  // an H200 (3201 MHz x 6016 bits of HBM)
        EXPECT_EQ(gemm.k_splits(), s.n == 2112 ? (s.m == 64 ? 5 : 3) : 2);
      }
    }
    {
      const ScopedEnv off(kSplits, "1");
      const wg::WgmmaGemm gemm(p);
      EXPECT_EQ(gemm.k_splits(), 1);
      EXPECT_EQ(gemm.workspace_bytes(), 0u);
    }
    if (s.k == 7168) {  // (a workspace of 17 or 34 tiles x 56 splits: 30 or 60 MiB)
      const ScopedEnv too_many(kSplits, "100000");
      EXPECT_EQ(wg::WgmmaGemm(p).k_splits(), k_blocks);
    }
  }
}

}  // namespace
