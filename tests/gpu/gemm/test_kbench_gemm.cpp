// GPU tests of kbench's own FP8 GEMM kernel (backend `cuda`, kernels/gemm/sm90): through kbench's
// refcheck (gemm_backend_check.hpp: the fp32 reference, poisoned output, a second input set, a
// CUDA-graph replay) over odd m (1, 7, 100, 1000), both scale layouts, both output dtypes, both tile
// configurations, clusters of 2, the group GEMM, the per-tensor routines and the BF16 ones; then the
// kernel alone on groups of unequal sizes, empty ones included, read on the device: one plan
// (unsplit, then split-K forced) run on two sets of group sizes against the host's double GEMM. Each test skips itself without a CUDA
// device; off Hopper the backend says why and the lines are not run. Split-K's own tests:
// test_kbench_gemm_split_k.cpp.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <vector>

#include "gemm/gemm_backend_check.hpp"
#include "gemm/gemm_test_data.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/sm90/wgmma_gemm.hpp"
#include "routines/gemm/gemm_reference.hpp"

namespace {

using kbench::DeviceBuffer;
using kbench::DType;
using kbench::testing::normals;
using kbench::testing::GemmLine;
using kbench::testing::to_host;
namespace kg = kbench::kernels::gemm;
namespace wg = kbench::kernels::gemm::sm90;
namespace ref = kbench::gemm_reference;

void expect_kbench_passes(const GemmLine& line) { kbench::testing::expect_gemm_backend_passes("cuda", line); }

TEST(KbenchGemm, GroupwiseFp8) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           GemmLine{"gemm_fp8_nt_groupwise", "--m 1 --n 128 --k 128"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 7 --n 384 --k 384 --scale_major_mode K"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 100 --n 640 --k 1152 --out_dtype float16"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 1000 --n 1536 --k 7168 --scale_major_mode K"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 1000 --n 4096 --k 512"},  // 128 x 256 tiles, n-tail tiles
           GemmLine{"gemm_fp8_nt_groupwise", "--m 2048 --n 2304 --k 1024 --scale_major_mode K --out_dtype float16"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 128 --n 7168 --k 2048 --mma_sm 2"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 128 --n 2112 --k 7168"},  // a partial last scale block
           GemmLine{"gemm_fp8_nt_groupwise", "--m 1000 --n 2112 --k 1024 --scale_major_mode K"},
       }) {
    expect_kbench_passes(line);
  }
}

// The heuristic picks one tile shape per problem: every one is run here on shapes with partial
// tiles in m and n.
TEST(KbenchGemm, EveryTileShape) {
  KBENCH_REQUIRE_GPU();
  // 128 x 128 (the promotion overlapped, or with turns): groupwise only (the others' heuristic).
  for (const char* tiles : {"128x256", "128x128", "128x128-turns", "64x128"}) {
    SCOPED_TRACE(tiles);
    ASSERT_EQ(setenv("KBENCH_WGMMA_GEMM_TILES", tiles, 1), 0);
    for (const GemmLine& line : {
             GemmLine{"gemm_fp8_nt_groupwise", "--m 300 --n 896 --k 1024"},
             GemmLine{"gemm_fp8_nt_groupwise", "--m 129 --n 640 --k 384 --scale_major_mode K"},
             GemmLine{"gemm_fp8_nt_groupwise", "--m 257 --n 2112 --k 512"},  // sub-tiles past n
             GemmLine{"group_gemm_fp8_nt_groupwise", "--m 70 --n 1152 --k 256 --group_size 3"},
             GemmLine{"mm_fp8", "--m 129 --n 520 --k 272"},
             GemmLine{"mm_bf16", "--m 129 --n 520 --k 264"},
         }) {
      expect_kbench_passes(line);
    }
  }
  ASSERT_EQ(unsetenv("KBENCH_WGMMA_GEMM_TILES"), 0);
}

// Clusters of 2 (B multicast) on every routine of the wgmma GEMM that can take them, on shapes whose
// pairs run past a group's end (odd m-blocks), past n, and over device groups.
TEST(KbenchGemm, ClustersOfTwo) {
  KBENCH_REQUIRE_GPU();
  const kbench::testing::ScopedEnv tiles("KBENCH_WGMMA_GEMM_TILES", "128x256");
  const kbench::testing::ScopedEnv cluster("KBENCH_WGMMA_GEMM_CLUSTER", "2");
  for (const GemmLine& line : {
           GemmLine{"gemm_fp8_nt_groupwise", "--m 300 --n 896 --k 1024"},
           GemmLine{"gemm_fp8_nt_groupwise", "--m 257 --n 2112 --k 512 --scale_major_mode K"},
           GemmLine{"group_gemm_fp8_nt_groupwise", "--m 70 --n 1152 --k 256 --group_size 3"},
           GemmLine{"mm_fp8", "--m 129 --n 520 --k 272"},
           GemmLine{"mm_bf16", "--m 385 --n 520 --k 264"},
           GemmLine{"bmm_fp8", "--batch_size 3 --m 300 --n 512 --k 256"},
           GemmLine{"bmm_bf16", "--batch_size 2 --m 200 --n 520 --k 136"},
       }) {
    expect_kbench_passes(line);
  }
  for (const char* groupwise : {"128x128", "128x128-turns"}) {
    SCOPED_TRACE(groupwise);
    const kbench::testing::ScopedEnv groupwise_tiles("KBENCH_WGMMA_GEMM_TILES", groupwise);
    for (const GemmLine& line : {
             GemmLine{"gemm_fp8_nt_groupwise", "--m 300 --n 896 --k 1024"},
             GemmLine{"group_gemm_fp8_nt_groupwise", "--m 70 --n 1152 --k 256 --group_size 3"},
         }) {
      expect_kbench_passes(line);
    }
  }
}

TEST(KbenchGemm, GroupGemmFp8) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           GemmLine{"group_gemm_fp8_nt_groupwise", "--m 16 --n 1024 --k 7168 --group_size 2"},
           GemmLine{"group_gemm_fp8_nt_groupwise", "--m 7 --n 256 --k 512 --group_size 8 --scale_major_mode K"},
           GemmLine{"group_gemm_fp8_nt_groupwise", "--m 300 --n 1024 --k 1024 --group_size 3 --out_dtype float16"},
           GemmLine{"group_gemm_fp8_nt_groupwise", "--m 512 --n 4096 --k 1024 --group_size 4"},
       }) {
    expect_kbench_passes(line);
  }
}

TEST(KbenchGemm, PerTensorFp8) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           GemmLine{"bmm_fp8", "--batch_size 3 --m 5 --n 48 --k 64"},
           GemmLine{"bmm_fp8", "--batch_size 2 --m 37 --n 96 --k 160 --out_dtype float16"},
           GemmLine{"bmm_fp8", "--batch_size 64 --m 4 --n 1024 --k 7168"},
           GemmLine{"bmm_fp8", "--batch_size 2 --m 5 --n 64 --k 64 --input_dtype fp8_e5m2"},  // refused: e4m3 only
           GemmLine{"mm_fp8", "--m 37 --n 96 --k 256"},
           GemmLine{"mm_fp8", "--m 1000 --n 4096 --k 2048"},
       }) {
    expect_kbench_passes(line);
  }
}

TEST(KbenchGemm, Bf16) {
  KBENCH_REQUIRE_GPU();
  for (const GemmLine& line : {
           GemmLine{"mm_bf16", "--m 33 --n 72 --k 40"},
           GemmLine{"mm_bf16", "--m 300 --n 512 --k 1000 --out_dtype float16"},
           GemmLine{"mm_bf16", "--m 1000 --n 4096 --k 1024"},
           GemmLine{"mm_bf16", "--m 64 --n 64 --k 64 --bias"},          // refused: no bias
           GemmLine{"mm_bf16", "--m 64 --n 64 --k 64 --out_dtype float32"},  // refused: bf16 / fp16 out
           GemmLine{"bmm_bf16", "--batch_size 3 --m 31 --n 40 --k 72"},
           GemmLine{"bmm_bf16", "--batch_size 4 --m 300 --n 1024 --k 512"},
       }) {
    expect_kbench_passes(line);
  }
}

TEST(KbenchGemm, GroupsOfUnequalSizesReadOnTheDevice) {
  KBENCH_REQUIRE_GPU();
  int device = 0, major_cc = 0, minor_cc = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&major_cc, cudaDevAttrComputeCapabilityMajor, device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&minor_cc, cudaDevAttrComputeCapabilityMinor, device));
  if (major_cc != 9 || minor_cc != 0 || !wg::wgmma_gemm_built_for_sm90a()) GTEST_SKIP() << "kbench's GEMM kernel is sm_90a";
  kbench::CudaStream stream;
  const int64_t groups = 7, rows = 432, n = 384, k = 512, kb = k / 128, nb = n / 128;
  // Two partitions of the same 432 rows: empty groups, a single row, groups across tile edges.
  const std::vector<std::vector<int32_t>> partitions = {{0, 37, 37, 167, 168, 168, 368, 432},
                                                        {0, 0, 300, 301, 301, 429, 432, 432}};
  for (const kg::ScaleMajor major : {kg::ScaleMajor::mn, kg::ScaleMajor::k}) {
    const std::vector<float> a = normals(static_cast<std::size_t>(rows * k), 1.0f, 11);
    const std::vector<float> b = normals(static_cast<std::size_t>(groups * n * k), 1.0f / std::sqrt(512.0f), 12);
    const ref::GroupwiseOperand ha = ref::quantize_a(a, rows, k, 128, major);
    std::vector<ref::GroupwiseOperand> hb;
    std::vector<uint8_t> b_bytes;
    std::vector<float> b_scales;
    for (int64_t g = 0; g < groups; ++g) {
      const std::vector<float> b_group(b.begin() + g * n * k, b.begin() + (g + 1) * n * k);
      hb.push_back(ref::quantize_b(b_group, n, k, 128, major));
      b_bytes.insert(b_bytes.end(), hb.back().bytes.begin(), hb.back().bytes.end());
      b_scales.insert(b_scales.end(), hb.back().scales.begin(), hb.back().scales.end());
    }
    DeviceBuffer da(ha.bytes.size()), dsa(ha.scales.size() * sizeof(float)), db(b_bytes.size()),
        dsb(b_scales.size() * sizeof(float)), dd(static_cast<std::size_t>(rows * n) * 2),
        offsets(static_cast<std::size_t>(groups + 1) * sizeof(int32_t));
    KBENCH_CUDA_CHECK(cudaMemcpy(da.get(), ha.bytes.data(), da.bytes(), cudaMemcpyHostToDevice));
    KBENCH_CUDA_CHECK(cudaMemcpy(dsa.get(), ha.scales.data(), dsa.bytes(), cudaMemcpyHostToDevice));
    KBENCH_CUDA_CHECK(cudaMemcpy(db.get(), b_bytes.data(), db.bytes(), cudaMemcpyHostToDevice));
    KBENCH_CUDA_CHECK(cudaMemcpy(dsb.get(), b_scales.data(), dsb.bytes(), cudaMemcpyHostToDevice));
    wg::WgmmaGemmParams p;
    p.scaling = wg::GemmScaling::groupwise;
    p.groups = static_cast<int>(groups);
    p.row_offsets = offsets.as<int32_t>();
    p.rows = rows;
    p.n = n;
    p.k = k;
    p.a = da.get();
    p.b = db.get();
    p.d = dd.get();
    p.a_scale = dsa.as<float>();
    p.b_scale = dsb.as<float>();
    const bool mn = major == kg::ScaleMajor::mn;
    p.a_scale_row_stride = mn ? 1 : kb;
    p.a_scale_k_stride = mn ? rows : 1;
    p.b_scale_group_stride = nb * kb;
    p.b_scale_n_stride = mn ? 1 : kb;
    p.b_scale_k_stride = mn ? nb : 1;
    KBENCH_CUDA_CHECK(cudaMemcpy(offsets.get(), partitions[0].data(), offsets.bytes(), cudaMemcpyHostToDevice));
    // Unsplit (the heuristic's choice for device groups) and split-K forced.
    for (const char* splits : {"1", "3"}) {
      SCOPED_TRACE(std::string("splits ") + splits);
      ASSERT_EQ(setenv("KBENCH_WGMMA_GEMM_SPLITS", splits, 1), 0);
      const wg::WgmmaGemm gemm(p);  // planned on the first partition, run on both
      ASSERT_EQ(unsetenv("KBENCH_WGMMA_GEMM_SPLITS"), 0);
      ASSERT_EQ(gemm.k_splits(), std::atoi(splits));
      for (const std::vector<int32_t>& bounds : partitions) {
        KBENCH_CUDA_CHECK(cudaMemcpy(offsets.get(), bounds.data(), offsets.bytes(), cudaMemcpyHostToDevice));
        KBENCH_CUDA_CHECK(cudaMemset(dd.get(), 0xFF, dd.bytes()));  // NaN: a row left unstored fails
        KBENCH_CUDA_CHECK(gemm.run(stream.get()));
        const std::vector<uint16_t> got = to_host<uint16_t>(dd.get(), rows * n, stream.get());
        for (int64_t g = 0; g < groups; ++g) {
          const int64_t begin = bounds[static_cast<std::size_t>(g)], end = bounds[static_cast<std::size_t>(g) + 1];
          if (begin == end) continue;
          const std::vector<float> expected =
              ref::groupwise_gemm(kbench::testing::a_rows(ha, rows, begin, end, k, major), hb[static_cast<std::size_t>(g)], end - begin, n, k,
                                  128, major);
          for (int64_t i = 0; i < (end - begin) * n; ++i) {
            const uint16_t bits = got[static_cast<std::size_t>(begin * n + i)];
            const float value = __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(&bits));
            const float e = expected[static_cast<std::size_t>(i)];
            ASSERT_NEAR(value, e, 1e-2f + 1e-2f * std::fabs(e))
                << "group " << g << " row " << begin + i / n << " column " << i % n << " major " << static_cast<int>(major);
          }
        }
      }
    }
  }
}

}  // namespace
