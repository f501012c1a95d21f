// GPU tests of the GEMM family's own device work (kernels/gemm): the groupwise FP8 quantizer equal
// to the host reference (routines/gemm/gemm_reference) byte for byte and scale for scale, in both
// scale layouts, for grouped B and for n not a multiple of 128 (a partial last block); the
// refcheck's reference GEMM against the host's double GEMM on those operands (A spanning groups,
// odd m, n 200); the per-tensor quantizer's scale and codes as the reference's to_float8 makes
// them. Each test skips itself where no CUDA device is present.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gemm/gemm_test_data.hpp"
#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "routines/gemm/gemm_reference.hpp"
#include "routines/quantization/quant_reference.hpp"

namespace {

using kbench::DeviceBuffer;
using kbench::DType;
using kbench::testing::normals;
using kbench::testing::to_host;
namespace kg = kbench::kernels::gemm;
namespace ref = kbench::gemm_reference;

DeviceBuffer upload(const std::vector<float>& host, cudaStream_t stream) {
  DeviceBuffer d(host.size() * sizeof(float));
  KBENCH_CUDA_CHECK(cudaMemcpyAsync(d.get(), host.data(), d.bytes(), cudaMemcpyHostToDevice, stream));
  return d;
}

// `groups` x rows x k on the device, quantized by the kernel in blocks of block_rows x 128.
struct DeviceQuantized {
  std::vector<uint8_t> bytes;
  std::vector<float> scales;
  DeviceBuffer device_bytes;
  DeviceBuffer device_scales;
};

DeviceQuantized quantize_on_device(const std::vector<float>& x, int64_t groups, int64_t rows, int64_t k, int64_t block_rows,
                                   kg::ScaleMajor major, cudaStream_t stream) {
  const DeviceBuffer input = upload(x, stream);
  DeviceQuantized q;
  q.device_bytes = DeviceBuffer(x.size());
  const int64_t scales = groups * kg::scale_blocks(rows, block_rows) * (k / 128);
  q.device_scales = DeviceBuffer(static_cast<std::size_t>(scales) * sizeof(float));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(q.device_bytes.get(), 0xFF, q.device_bytes.bytes(), stream));
  KBENCH_CUDA_CHECK(cudaMemsetAsync(q.device_scales.get(), 0xFF, q.device_scales.bytes(), stream));
  kg::GroupwiseQuantizeParams p;
  p.input = input.as<float>();
  p.output = q.device_bytes.as<uint8_t>();
  p.scales = q.device_scales.as<float>();
  p.groups = groups;
  p.rows = rows;
  p.k = k;
  p.tile = 128;
  p.block_rows = block_rows;
  p.major = major;
  KBENCH_CUDA_CHECK(kg::quantize_groupwise(p, stream));
  q.bytes = to_host<uint8_t>(q.device_bytes.get(), static_cast<int64_t>(x.size()), stream);
  q.scales = to_host<float>(q.device_scales.get(), scales, stream);
  return q;
}

TEST(GemmOperands, GroupwiseQuantizerIsTheHostReference) {
  KBENCH_REQUIRE_GPU();
  kbench::CudaStream stream;
  for (const kg::ScaleMajor major : {kg::ScaleMajor::mn, kg::ScaleMajor::k}) {
    // n 2112: B's 17th block holds 64 rows, its scale from their amax alone.
    for (const int64_t n : {256, 2112}) {
      const int64_t m = 37, k = 384;
      std::vector<float> a = normals(static_cast<std::size_t>(m * k), 1.0f, 1);
      a[5] = 0.0f;
      std::fill(a.begin() + 128, a.begin() + 256, 0.0f);  // an all-zero block: the 1e-4 floor
      const std::vector<float> b = normals(static_cast<std::size_t>(n * k), 1.0f / std::sqrt(384.0f), 2);
      const DeviceQuantized qa = quantize_on_device(a, 1, m, k, 1, major, stream.get());
      const DeviceQuantized qb = quantize_on_device(b, 1, n, k, 128, major, stream.get());
      const ref::GroupwiseOperand ha = ref::quantize_a(a, m, k, 128, major);
      const ref::GroupwiseOperand hb = ref::quantize_b(b, n, k, 128, major);
      EXPECT_EQ(qa.bytes, ha.bytes);
      EXPECT_EQ(qa.scales, ha.scales);
      EXPECT_EQ(qb.bytes, hb.bytes) << "n " << n;
      ASSERT_EQ(qb.scales.size(), static_cast<std::size_t>(kg::scale_blocks(n, 128) * (k / 128)));
      EXPECT_EQ(qb.scales, hb.scales) << "n " << n;
    }
  }
}

TEST(GemmOperands, ReferenceGemmMatchesTheHostsDoubleGemm) {
  KBENCH_REQUIRE_GPU();
  kbench::CudaStream stream;
  for (const kg::ScaleMajor major : {kg::ScaleMajor::mn, kg::ScaleMajor::k}) {
    // Two groups of 37 rows: A's scale layout spans both groups, B has one layout per group, of a
    // whole block and a partial one (n 200).
    const int64_t groups = 2, m = 37, n = 200, k = 384, kb = k / 128, nb = kg::scale_blocks(n, 128);
    const std::vector<float> a = normals(static_cast<std::size_t>(groups * m * k), 1.0f, 3);
    const std::vector<float> b = normals(static_cast<std::size_t>(groups * n * k), 1.0f / std::sqrt(384.0f), 4);
    const DeviceQuantized qa = quantize_on_device(a, 1, groups * m, k, 1, major, stream.get());
    const DeviceQuantized qb = quantize_on_device(b, groups, n, k, 128, major, stream.get());
    DeviceBuffer out(static_cast<std::size_t>(groups * m * n) * sizeof(float));
    kg::ReferenceGemmParams r;
    r.batches = groups;
    r.m = m;
    r.n = n;
    r.k = k;
    r.a = {qa.device_bytes.get(), DType::fp8_e4m3, m * k};
    r.a.block_scales = qa.device_scales.as<float>();
    r.a.block_rows = 1;
    r.a.scale_block_rows = groups * m;
    r.a.scale_batch_rows = m;
    r.b = {qb.device_bytes.get(), DType::fp8_e4m3, n * k};
    r.b.block_scales = qb.device_scales.as<float>();
    r.b.block_rows = 128;
    r.b.scale_block_rows = nb;
    r.b.scale_batch_stride = nb * kb;
    r.major = major;
    r.out_dtype = DType::float32;
    r.out = out.as<float>();
    KBENCH_CUDA_CHECK(kg::reference_gemm(r, stream.get()));
    const std::vector<float> got = to_host<float>(out.get(), groups * m * n, stream.get());
    // The host reference per group: A's rows of the group with their slice of A's scales.
    const ref::GroupwiseOperand ha = ref::quantize_a(a, groups * m, k, 128, major);
    for (int64_t g = 0; g < groups; ++g) {
      const ref::GroupwiseOperand a_group = kbench::testing::a_rows(ha, groups * m, g * m, (g + 1) * m, k, major);
      const std::vector<float> b_group(b.begin() + g * n * k, b.begin() + (g + 1) * n * k);
      const ref::GroupwiseOperand hb = ref::quantize_b(b_group, n, k, 128, major);
      // fp32 accumulation against double: a misplaced scale is off by a factor of 2 or more.
      const std::vector<float> expected = ref::groupwise_gemm(a_group, hb, m, n, k, 128, major);
      for (int64_t i = 0; i < m * n; ++i) {
        const float e = expected[static_cast<std::size_t>(i)];
        ASSERT_NEAR(got[static_cast<std::size_t>(g * m * n + i)], e, 1e-4f + 1e-4f * std::fabs(e))
            << "group " << g << " element " << i << " major " << static_cast<int>(major);
      }
    }
  }
}

TEST(GemmOperands, PerTensorQuantizerIsTorchsToFloat8) {
  KBENCH_REQUIRE_GPU();
  kbench::CudaStream stream;
  const int64_t count = 3 * 5 * 64 + 7;
  std::vector<float> x = normals(static_cast<std::size_t>(count), 1.0f, 5);
  x[17] = -6.5f;  // the amax, negative
  std::vector<__nv_bfloat16> bf16(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    bf16[i] = __float2bfloat16_rn(x[i]);
    x[i] = __bfloat162float(bf16[i]);
  }
  DeviceBuffer input(bf16.size() * sizeof(__nv_bfloat16));
  KBENCH_CUDA_CHECK(cudaMemcpyAsync(input.get(), bf16.data(), input.bytes(), cudaMemcpyHostToDevice, stream.get()));
  DeviceBuffer amax(sizeof(float)), codes(static_cast<std::size_t>(count)), scale(sizeof(float));
  KBENCH_CUDA_CHECK(kg::quantize_per_tensor(input.get(), count, DType::fp8_e4m3, amax.as<float>(), codes.as<uint8_t>(),
                                            scale.as<float>(), stream.get()));
  const float inv_s = to_host<float>(scale.get(), 1, stream.get())[0];
  // bf16(448 / 6.5) = 69 (68.92 rounded to bfloat16's 8 bits), and its reciprocal in fp32.
  const float s = __bfloat162float(__float2bfloat16_rn(448.0f / 6.5f));
  EXPECT_EQ(inv_s, 1.0f / s);
  const std::vector<uint8_t> q = to_host<uint8_t>(codes.get(), count, stream.get());
  for (int64_t i = 0; i < count; ++i) {
    const float v = std::clamp(__bfloat162float(__float2bfloat16_rn(x[static_cast<std::size_t>(i)] * s)), -448.0f, 448.0f);
    ASSERT_EQ(q[static_cast<std::size_t>(i)], kbench::quant_reference::e4m3_code(v)) << i;
  }
}

}  // namespace
