// GPU tests of the fused norms: the RMSNorm + FP4 kernels (byte for byte against the quantizers'
// host reference where the norm is exact: inputs +-1, eps 0, power-of-two hidden, so y = +-w with
// no rounding anywhere), their 128x4 padding, the layouts written together, what they refuse; and
// end-to-end kbench runs with --refcheck of every new norm routine on odd sizes (hidden 7168, 5120,
// 2880; row counts not multiples of 128). Each test skips itself where no CUDA device is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "kernels/norm/layernorm.hpp"
#include "kernels/norm/rmsnorm_fp4.hpp"
#include "routines/quantization/quant_reference.hpp"

namespace {

using kbench::CudaStream;
using kbench::DeviceBuffer;
using kbench::DType;
using kbench::testing::to_host;
namespace kk = kbench::kernels;
namespace q = kbench::kernels::quant;
namespace ref = kbench::quant_reference;

float half_bits_to_float(uint16_t h, DType dtype) {
  if (dtype == DType::bfloat16) {
    const uint32_t f = static_cast<uint32_t>(h) << 16;
    float v;
    std::memcpy(&v, &f, sizeof v);
    return v;
  }
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  const float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                                        : std::ldexp(1.0f + mantissa / 1024.0f, exponent - 15);
  return (h & 0x8000) ? -magnitude : magnitude;
}

struct Fp4Shape {
  q::BlockFormat format = q::BlockFormat::nvfp4;
  DType in = DType::bfloat16;
  bool fused = false;
  int64_t rows = 1;
  int64_t hidden = 64;
};

// Inputs +-1 (residual 0 for the add variant, so v = x), eps 0: sum(v^2) = hidden exactly, and with
// hidden a power of two the row's scale is exactly 1, so y = +-w; the codes and both scale tensors
// must equal the host quantizer's bytes of y, padding included.
void expect_exact_norm_equals_quantizer(const Fp4Shape& s, uint64_t seed) {
  SCOPED_TRACE(std::string(s.format == q::BlockFormat::nvfp4 ? "nvfp4" : "mxfp4") + (s.fused ? " add" : "") +
               " rows=" + std::to_string(s.rows) + " hidden=" + std::to_string(s.hidden) +
               (s.in == DType::bfloat16 ? " bf16" : " fp16"));
  CudaStream stream;
  const int64_t n = s.rows * s.hidden;
  const uint16_t one = s.in == DType::bfloat16 ? 0x3F80 : 0x3C00;
  std::vector<uint16_t> x(static_cast<std::size_t>(n));
  uint64_t state = seed;
  for (auto& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<uint16_t>(one | ((state >> 40) & 1 ? 0x8000 : 0));
  }
  DeviceBuffer d_x(static_cast<std::size_t>(n) * 2), d_r(s.fused ? static_cast<std::size_t>(n) * 2 : 0);
  DeviceBuffer d_w(static_cast<std::size_t>(s.hidden) * 2);
  KBENCH_CUDA_CHECK(cudaMemcpyAsync(d_x.get(), x.data(), x.size() * 2, cudaMemcpyHostToDevice, stream.get()));
  if (s.fused) KBENCH_CUDA_CHECK(cudaMemsetAsync(d_r.get(), 0, d_r.bytes(), stream.get()));
  KBENCH_CUDA_CHECK(kk::fill_normal(d_w.get(), s.in, s.hidden, seed, 0.0f, 1.0f, stream.get()));
  const auto w = to_host<uint16_t>(d_w.get(), s.hidden, stream.get());

  std::vector<float> y(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float sign = (x[static_cast<std::size_t>(i)] & 0x8000) ? -1.0f : 1.0f;
    y[static_cast<std::size_t>(i)] = sign * half_bits_to_float(w[static_cast<std::size_t>(i % s.hidden)], s.in);
  }
  kk::RmsNormFp4Params p;
  p.rows = s.rows;
  p.hidden = s.hidden;
  p.eps = 0.0f;
  p.format = s.format;
  p.in_dtype = s.in;
  kk::QuantizeParams shape;
  shape.rows = s.rows;
  shape.columns = shape.padded_columns = s.hidden;
  shape.block_size = static_cast<int>(p.block_size());
  shape.format = s.format;
  shape.layout = q::SfLayout::linear;
  const ref::Quantized linear = ref::quantize(y, shape);
  shape.layout = q::SfLayout::swizzled_128x4;
  const ref::Quantized swizzled = ref::quantize(y, shape);

  DeviceBuffer d_codes(static_cast<std::size_t>(n / 2)), d_linear(linear.scales.size()), d_swizzled(swizzled.scales.size());
  p.input = d_x.get();
  p.residual = s.fused ? d_r.get() : nullptr;
  p.weight = d_w.get();
  p.codes = d_codes.as<uint8_t>();
  // Each layout alone, then both in one call.
  for (int which : {0, 1, 2}) {
    SCOPED_TRACE("layouts " + std::to_string(which));
    p.scales_linear = which != 1 ? d_linear.as<uint8_t>() : nullptr;
    p.scales_swizzled = which != 0 ? d_swizzled.as<uint8_t>() : nullptr;
    for (DeviceBuffer* b : {&d_codes, &d_linear, &d_swizzled}) {
      KBENCH_CUDA_CHECK(cudaMemsetAsync(b->get(), 0xFF, b->bytes(), stream.get()));
    }
    ASSERT_EQ(kk::launch_rmsnorm_fp4(p, stream.get()), cudaSuccess);
    const auto codes = to_host<uint8_t>(d_codes.get(), n / 2, stream.get());
    for (std::size_t i = 0; i < codes.size(); ++i) ASSERT_EQ(codes[i], linear.data[i]) << "code byte " << i;
    if (p.scales_linear != nullptr) {
      const auto got = to_host<uint8_t>(d_linear.get(), static_cast<int64_t>(linear.scales.size()), stream.get());
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], linear.scales[i]) << "linear scale " << i;
    }
    if (p.scales_swizzled != nullptr) {
      const auto got = to_host<uint8_t>(d_swizzled.get(), static_cast<int64_t>(swizzled.scales.size()), stream.get());
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], swizzled.scales[i]) << "128x4 scale " << i;
    }
    if (s.fused) {
      const auto residual = to_host<uint16_t>(d_r.get(), n, stream.get());
      for (std::size_t i = 0; i < residual.size(); ++i) ASSERT_EQ(residual[i], x[i]) << "residual " << i;
      KBENCH_CUDA_CHECK(cudaMemsetAsync(d_r.get(), 0, d_r.bytes(), stream.get()));
    }
  }
}

TEST(FusedNormKernels, Fp4ExactNormEqualsTheQuantizer) {
  KBENCH_REQUIRE_GPU();
  uint64_t seed = 1;
  for (q::BlockFormat format : {q::BlockFormat::nvfp4, q::BlockFormat::mxfp4}) {
    for (bool fused : {false, true}) {
      // 64: 8 threads a row, several rows a block; 4096: 4 vectors a thread; 32768: 8.
      for (int64_t hidden : {64, 128, 4096, 16384, 32768}) {
        for (int64_t rows : {1, 130, 300}) {
          if (hidden >= 16384 && rows > 130) continue;
          Fp4Shape s;
          s.format = format;
          s.fused = fused;
          s.rows = rows;
          s.hidden = hidden;
          s.in = seed % 2 == 0 ? DType::float16 : DType::bfloat16;
          expect_exact_norm_equals_quantizer(s, seed++);
        }
      }
    }
  }
}

TEST(FusedNormKernels, RejectWhatTheyDoNotTake) {
  KBENCH_REQUIRE_GPU();
  DeviceBuffer buffer(1 << 20);
  kk::RmsNormFp4Params p;
  p.input = buffer.get();
  p.weight = buffer.as<char>() + (1 << 18);
  p.codes = buffer.as<uint8_t>() + (1 << 19);
  p.scales_linear = buffer.as<uint8_t>() + (3 << 18);
  p.rows = 4;
  p.hidden = 4096;
  EXPECT_EQ(kk::rmsnorm_fp4_unsupported(p), nullptr);
  EXPECT_EQ(kk::launch_rmsnorm_fp4(p, nullptr), cudaSuccess);
  KBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  p.hidden = 4104;  // not a multiple of 16
  EXPECT_NE(kk::rmsnorm_fp4_unsupported(p), nullptr);
  EXPECT_EQ(kk::launch_rmsnorm_fp4(p, nullptr), cudaErrorInvalidValue);
  p.hidden = 4096 + 16;  // nvfp4 takes it, mxfp4 does not
  EXPECT_EQ(kk::rmsnorm_fp4_unsupported(p), nullptr);
  p.format = q::BlockFormat::mxfp4;
  EXPECT_NE(kk::rmsnorm_fp4_unsupported(p), nullptr);
  p.hidden = 65536;  // beyond the register path
  EXPECT_NE(kk::rmsnorm_fp4_unsupported(p), nullptr);
  p.hidden = 4096;
  p.scales_linear = nullptr;  // no scale tensor
  EXPECT_EQ(kk::launch_rmsnorm_fp4(p, nullptr), cudaErrorInvalidValue);
  p.scales_linear = buffer.as<uint8_t>();  // overlaps the input
  EXPECT_EQ(kk::launch_rmsnorm_fp4(p, nullptr), cudaErrorInvalidValue);

  kk::LayerNormQuantParams l;
  l.input = buffer.get();
  l.gamma = reinterpret_cast<const float*>(buffer.as<char>() + (1 << 18));
  l.beta = reinterpret_cast<const float*>(buffer.as<char>() + (1 << 18) + 4096 * 4);
  l.output = buffer.as<char>() + (1 << 19);
  l.rows = 4;
  l.hidden = 4096;
  EXPECT_EQ(kk::launch_layernorm_quant(l, nullptr), cudaSuccess);
  KBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  l.hidden = 100;
  EXPECT_NE(kk::layernorm_quant_unsupported(l), nullptr);
  l.hidden = 4096;
  l.out_dtype = DType::bfloat16;
  EXPECT_NE(kk::layernorm_quant_unsupported(l), nullptr);
  (void)cudaGetLastError();
}

TEST(FusedNormEndToEnd, EveryRoutinePassesTheRefcheck) {
  KBENCH_REQUIRE_GPU();
  const std::string list = kbench::testing::write_testlist(
      "kbench_fused_norm_e2e.txt",
      "--routine rmsnorm_fp4quant --batch_size 1000 --hidden_size 7168 --refcheck\n"
      "--routine rmsnorm_fp4quant --batch_size 77 --hidden_size 5120 --input_dtype float16 --is_sf_swizzled_layout --refcheck\n"
      "--routine rmsnorm_fp4quant --batch_size 130 --hidden_size 2880 --out_dtype mxfp4 --is_sf_swizzled_layout --refcheck\n"
      "--routine rmsnorm_fp4quant --batch_size 3 --num_heads 32 --hidden_size 128 --use_global_scale --enable_pdl --refcheck\n"
      "--routine add_rmsnorm_fp4quant --batch_size 1000 --hidden_size 7168 --output_both_sf_layouts --refcheck\n"
      "--routine add_rmsnorm_fp4quant --batch_size 77 --hidden_size 2880 --out_dtype mxfp4 --output_both_sf_layouts --refcheck\n"
      "--routine add_rmsnorm_fp4quant --batch_size 129 --hidden_size 5120 --input_dtype float16 --is_sf_swizzled_layout --refcheck\n"
      "--routine add_rmsnorm_fp4quant --batch_size 5 --hidden_size 32768 --out_dtype mxfp4 --refcheck\n"
      "--routine gemma_fused_add_rmsnorm --batch_size 1000 --hidden_size 7168 --refcheck\n"
      "--routine gemma_fused_add_rmsnorm --batch_size 77 --hidden_size 2880 --input_dtype float16 --enable_pdl --refcheck\n"
      "--routine gemma_fused_add_rmsnorm --batch_size 3 --hidden_size 100 --refcheck\n"
      "--routine fused_rmsnorm_silu --batch_size 1560 --hidden_size 1024 --refcheck\n"
      "--routine fused_rmsnorm_silu --batch_size 77 --hidden_size 5120 --input_dtype float16 --refcheck\n"
      "--routine fused_rmsnorm_silu --batch_size 9 --hidden_size 100 --refcheck\n"
      "--routine fused_rmsnorm_silu --batch_size 3 --hidden_size 65536 --refcheck\n"
      "--routine layernorm_quant --batch_size 1000 --hidden_size 7168 --refcheck\n"
      "--routine layernorm_quant --batch_size 77 --hidden_size 2880 --out_dtype fp8_e5m2 --scale 2.0 --refcheck\n"
      "--routine layernorm_quant --batch_size 130 --hidden_size 5120 --input_dtype float16 --refcheck\n");
  kbench::testing::expect_testlist_passes(list, "-n 3", 18);
}

}  // namespace
