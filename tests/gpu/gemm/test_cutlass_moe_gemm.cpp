// GPU tests of the CUTLASS MoE GEMM (backends/cutlass/cutlass_moe_gemm.hpp): every group's rows
// against the refcheck's fp32 reference GEMM (kernels/gemm/gemm_kernels.hpp, K-major block scales,
// as moe_case.cpp's reference calls it per expert) on random e4m3 operands and random non-zero
// scales, with groups of 0, 1, odd and several-tile row counts (the first and the last empty, more
// than a warp's 32 groups), n of an odd tile count and k of one scale block, both out dtypes and a
// second input set of other group sizes; the rows past the last group left as poisoned. A run
// captured into a CUDA graph replays to the same bits, and replays after row_offsets changed on the
// device compute the new groups. What the constructor refuses needs no GPU; the rest skips itself
// where no CUDA device is present, and off sm_90 (the kernel is built for sm_90a only).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cutlass/cutlass_moe_gemm.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "kernels/gemm/gemm_kernels.hpp"

namespace kbench {
namespace {

using backends::CutlassMoeGemm;
using backends::CutlassMoeGemmOperands;
using backends::CutlassMoeGemmShape;
using testing::to_device;
using testing::to_host;

constexpr int64_t kBlock = 128;
constexpr uint16_t kPoisonBits = 0xFFFF;  // kernels::poison's bytes in a bf16 or fp16 element

std::vector<int32_t> offsets_of(const std::vector<int32_t>& group_rows) {
  std::vector<int32_t> offsets(group_rows.size() + 1, 0);
  std::partial_sum(group_rows.begin(), group_rows.end(), offsets.begin() + 1);
  return offsets;
}

// One input set on the device: A and B e4m3 from normal values, their block scales uniform in
// [0.25, 4) (never zero), D poisoned, and the row offsets of `group_rows`.
struct MoeInputs {
  MoeInputs(const CutlassMoeGemmShape& s, const std::vector<int32_t>& group_rows, uint64_t seed, cudaStream_t stream)
      : a(bytes_of(s.max_rows * s.k, DType::fp8_e4m3)),
        a_scale(bytes_of(s.max_rows * (s.k / kBlock), DType::float32)),
        b(bytes_of(s.groups * s.n * s.k, DType::fp8_e4m3)),
        b_scale(bytes_of(s.groups * (s.n / kBlock) * (s.k / kBlock), DType::float32)),
        d(bytes_of(s.max_rows * s.n, s.out_dtype)),
        offsets(bytes_of(s.groups + 1, DType::int32)) {
    KBENCH_CUDA_CHECK(kernels::fill_normal(a.get(), DType::fp8_e4m3, s.max_rows * s.k, seed, 0.0f, 1.0f, stream));
    KBENCH_CUDA_CHECK(
        kernels::fill_normal(b.get(), DType::fp8_e4m3, s.groups * s.n * s.k, seed + 1, 0.0f, 1.0f, stream));
    KBENCH_CUDA_CHECK(kernels::fill_uniform(a_scale.get(), DType::float32, s.max_rows * (s.k / kBlock), seed + 2, 0.25f,
                                            4.0f, stream));
    KBENCH_CUDA_CHECK(kernels::fill_uniform(b_scale.get(), DType::float32, s.groups * (s.n / kBlock) * (s.k / kBlock),
                                            seed + 3, 0.25f, 4.0f, stream));
    KBENCH_CUDA_CHECK(kernels::poison(d.get(), static_cast<int64_t>(d.bytes()), stream));
    set_group_rows(group_rows, stream);
  }

  void set_group_rows(const std::vector<int32_t>& group_rows, cudaStream_t stream) {
    row_offsets = offsets_of(group_rows);
    to_device(offsets.as<char>(), row_offsets, stream);
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // before the host offsets change again
  }

  [[nodiscard]] CutlassMoeGemmOperands operands() const {
    return {a.get(), a_scale.as<float>(), b.get(), b_scale.as<float>(), d.get(), offsets.as<int32_t>()};
  }

  DeviceBuffer a, a_scale, b, b_scale, d, offsets;
  std::vector<int32_t> row_offsets;  // what `offsets` holds
};

// Every group's rows by the fp32 reference GEMM, rounded to the out dtype ([max_rows][n]; rows past
// the last group 0).
std::vector<float> reference(const CutlassMoeGemmShape& s, const MoeInputs& in, cudaStream_t stream) {
  const int64_t k_blocks = s.k / kBlock;
  DeviceBuffer out(bytes_of(s.max_rows * s.n, DType::float32));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(out.get(), 0, out.bytes(), stream));
  for (int g = 0; g < s.groups; ++g) {
    const int64_t first = in.row_offsets[g], m = in.row_offsets[g + 1] - first;
    if (m == 0) continue;
    kernels::gemm::ReferenceGemmParams r;
    r.m = m;
    r.n = s.n;
    r.k = s.k;
    r.a = {in.a.as<uint8_t>() + first * s.k, DType::fp8_e4m3, m * s.k};
    r.a.block_scales = in.a_scale.as<float>() + first * k_blocks;
    r.a.block_rows = 1;
    r.a.scale_block_rows = m;
    r.b = {in.b.as<uint8_t>() + g * s.n * s.k, DType::fp8_e4m3, s.n * s.k};
    r.b.block_scales = in.b_scale.as<float>() + g * (s.n / kBlock) * k_blocks;
    r.b.block_rows = kBlock;
    r.b.scale_block_rows = s.n / kBlock;
    r.tile = kBlock;
    r.major = kernels::gemm::ScaleMajor::k;
    r.out_dtype = s.out_dtype;
    r.out = out.as<float>() + first * s.n;
    KBENCH_CUDA_CHECK(kernels::gemm::reference_gemm(r, stream));
  }
  return to_host<float>(out.get(), s.max_rows * s.n, stream);
}

// D's rows of the groups equal the reference's within rounding to bf16 (one bf16 step, 2^-7, of the
// value or of the output's RMS: the two sum in other orders, and the FP8 tensor cores accumulate each
// 128 of k in less than fp32 before its promotion); the rows past the last group still poisoned.
void expect_matches_reference(const CutlassMoeGemmShape& s, const MoeInputs& in, cudaStream_t stream) {
  const std::vector<float> want = reference(s, in, stream);
  DeviceBuffer d_floats(bytes_of(s.max_rows * s.n, DType::float32));
  KBENCH_CUDA_CHECK(kernels::convert_to_float(in.d.get(), s.out_dtype, s.max_rows * s.n, d_floats.as<float>(), stream));
  const std::vector<float> got = to_host<float>(d_floats.get(), s.max_rows * s.n, stream);
  const int64_t written = in.row_offsets.back() * s.n;

  double sum_sq = 0;
  for (int64_t i = 0; i < written; ++i) sum_sq += static_cast<double>(want[i]) * want[i];
  const double step = 1.0 / 128;
  const double atol = step * std::sqrt(sum_sq / static_cast<double>(std::max<int64_t>(written, 1)));
  int64_t mismatches = 0;
  std::string first_mismatch;
  for (int64_t i = 0; i < written; ++i) {
    if (!(std::abs(static_cast<double>(got[i]) - want[i]) <= atol + step * std::abs(want[i]))) {
      if (mismatches++ == 0) {
        first_mismatch = "row " + std::to_string(i / s.n) + " column " + std::to_string(i % s.n) + ": got " +
                         std::to_string(got[i]) + ", want " + std::to_string(want[i]);
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << "first: " << first_mismatch;

  const char* past_rows = static_cast<const char*>(in.d.get()) + bytes_of(written, s.out_dtype);
  const std::vector<uint16_t> past = to_host<uint16_t>(past_rows, s.max_rows * s.n - written, stream);
  EXPECT_EQ(std::count(past.begin(), past.end(), kPoisonBits), static_cast<std::ptrdiff_t>(past.size()))
      << "the GEMM wrote rows past the last group";
}

struct MoeCase {
  int64_t n;
  int64_t k;
  DType out_dtype;
  std::vector<std::vector<int32_t>> input_set_group_rows;  // one list per input set, as many groups each
  int64_t spare_rows;                                      // rows of A and D past the longest input set's
};

CutlassMoeGemmShape shape_of(const MoeCase& c) {
  int64_t rows = 0;
  for (const auto& group_rows : c.input_set_group_rows) {
    rows = std::max<int64_t>(rows, std::accumulate(group_rows.begin(), group_rows.end(), int64_t{0}));
  }
  return {static_cast<int>(c.input_set_group_rows.front().size()), rows + c.spare_rows, c.n, c.k, c.out_dtype};
}

// 40 groups (more than the 32 the tile scheduler looks ahead at once), every fourth empty.
std::vector<int32_t> many_groups(int salt) {
  std::vector<int32_t> rows(40);
  for (int g = 0; g < 40; ++g) rows[g] = g % 4 == 0 ? 0 : (g * 37 + salt) % 150;
  return rows;
}

TEST(CutlassMoeGemm, RefusesWhatItCannotTake) {
  const auto unsupported = [](int groups, int64_t max_rows, int64_t n, int64_t k, DType out) {
    return backends::cutlass_moe_gemm_unsupported({groups, max_rows, n, k, out}).has_value();
  };
  EXPECT_FALSE(unsupported(8, 1000, 256, 384, DType::bfloat16));
  EXPECT_FALSE(unsupported(256, 32768, 4096, 7168, DType::float16));
  EXPECT_TRUE(unsupported(0, 1000, 256, 384, DType::bfloat16));
  EXPECT_TRUE(unsupported(8, 0, 256, 384, DType::bfloat16));
  EXPECT_TRUE(unsupported(8, 1000, 200, 384, DType::bfloat16));   // n not whole scale blocks
  EXPECT_TRUE(unsupported(8, 1000, 256, 400, DType::bfloat16));   // k not whole scale blocks
  EXPECT_TRUE(unsupported(8, 1000, 256, 384, DType::float32));
  EXPECT_TRUE(unsupported(8, int64_t{1} << 28, 256, 1024, DType::bfloat16));  // A's scales past int

  // Operands are checked before any CUDA call: a misaligned D, a missing row_offsets.
  const CutlassMoeGemmShape shape{4, 64, 256, 384, DType::bfloat16};
  const auto at = [](std::uintptr_t address) { return reinterpret_cast<void*>(address); };
  const auto scales = static_cast<const float*>(at(0x1000));
  const auto offsets = static_cast<const int32_t*>(at(0x2000));
  const CutlassMoeGemmOperands misaligned{at(0x10000), scales, at(0x20000), scales, at(0x30008), offsets};
  EXPECT_THROW(CutlassMoeGemm gemm(shape, std::span(&misaligned, 1), nullptr), std::runtime_error);
  const CutlassMoeGemmOperands no_offsets{at(0x10000), scales, at(0x20000), scales, at(0x30000), nullptr};
  EXPECT_THROW(CutlassMoeGemm gemm(shape, std::span(&no_offsets, 1), nullptr), std::runtime_error);
}

TEST(CutlassMoeGemm, MatchesTheReferenceGemmPerGroup) {
  KBENCH_REQUIRE_GPU();
  if (!kbench::testing::device_is_sm90()) GTEST_SKIP() << "kbench's CUTLASS GEMMs are built for sm_90a only";
  const std::vector<MoeCase> cases = {
      {256, 384, DType::bfloat16, {{0, 1, 7, 100, 0, 300, 0}, {0, 0, 0, 0, 0, 0, 0}}, 21},
      // 3 n tiles: the second CTA of the last 1 x 2 cluster has its tile past n.
      {384, 1024, DType::float16, {{129, 0, 5, 256, 64}, {1, 2, 3, 0, 130}}, 3},
      {128, 128, DType::bfloat16, {many_groups(0), many_groups(11)}, 0},  // one n tile, one k block
  };
  CudaStream stream;
  for (const MoeCase& c : cases) {
    const CutlassMoeGemmShape shape = shape_of(c);
    SCOPED_TRACE("groups " + std::to_string(shape.groups) + " max_rows " + std::to_string(shape.max_rows) + " n " +
                 std::to_string(shape.n) + " k " + std::to_string(shape.k) + " " +
                 std::string(dtype_name(shape.out_dtype)));
    ASSERT_FALSE(backends::cutlass_moe_gemm_unsupported(shape).has_value());
    std::vector<MoeInputs> inputs;
    inputs.reserve(c.input_set_group_rows.size());
    std::vector<CutlassMoeGemmOperands> operands;
    for (std::size_t i = 0; i < c.input_set_group_rows.size(); ++i) {
      inputs.emplace_back(shape, c.input_set_group_rows[i], 1000 * (i + 1), stream.get());
      operands.push_back(inputs.back().operands());
    }
    CutlassMoeGemm gemm(shape, operands, stream.get());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      SCOPED_TRACE("input set " + std::to_string(i));
      gemm.run(i, stream.get());
      expect_matches_reference(shape, inputs[i], stream.get());
    }
  }
}

// The MoE pipeline captures its layer once and replays it whatever the routing: a replay recomputes
// the groups from the row_offsets the device holds at that moment.
TEST(CutlassMoeGemm, GraphReplaysReadTheGroupSizesOfTheMoment) {
  KBENCH_REQUIRE_GPU();
  if (!kbench::testing::device_is_sm90()) GTEST_SKIP() << "kbench's CUTLASS GEMMs are built for sm_90a only";
  const std::vector<int32_t> captured_rows = {0, 1, 7, 100, 0, 300, 0};
  const std::vector<int32_t> replayed_rows = {300, 0, 0, 7, 1, 100, 13};
  const CutlassMoeGemmShape shape{7, 430, 256, 384, DType::bfloat16};
  CudaStream stream;
  MoeInputs in(shape, captured_rows, 7, stream.get());
  const CutlassMoeGemmOperands operands = in.operands();
  CutlassMoeGemm gemm(shape, std::span(&operands, 1), stream.get());
  gemm.run(0, stream.get());  // a direct run first: lazy module loading outside the capture
  const std::vector<uint16_t> direct = to_host<uint16_t>(in.d.get(), shape.max_rows * shape.n, stream.get());

  cudaGraph_t graph = nullptr;
  KBENCH_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeGlobal));
  gemm.run(0, stream.get());
  KBENCH_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  KBENCH_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const auto replay = [&] {
    KBENCH_CUDA_CHECK(kernels::poison(in.d.get(), static_cast<int64_t>(in.d.bytes()), stream.get()));
    KBENCH_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  };
  replay();
  EXPECT_EQ(to_host<uint16_t>(in.d.get(), shape.max_rows * shape.n, stream.get()), direct);
  in.set_group_rows(replayed_rows, stream.get());
  replay();
  expect_matches_reference(shape, in, stream.get());
  KBENCH_CUDA_CHECK(cudaGraphExecDestroy(exec));
  KBENCH_CUDA_CHECK(cudaGraphDestroy(graph));
}

}  // namespace
}  // namespace kbench
