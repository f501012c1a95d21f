// Inputs the GEMM family's kernel tests draw (deterministic by seed): host normals, slices of the
// host reference's operands, and FP4 operands quantized by kbench's quantizer on the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "core/host_tensor.hpp"
#include "kbench/cuda_check.hpp"
#include "kbench/device_buffer.hpp"
#include "kernels/common/tensor_fill.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/quantization/quantize.hpp"
#include "routines/gemm/gemm_reference.hpp"

namespace kbench::testing {

// `count` values of N(0, stddev^2).
inline std::vector<float> normals(std::size_t count, float stddev, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, stddev);
  std::vector<float> v(count);
  for (float& x : v) x = d(rng);
  return v;
}

// Rows [begin, end) of a groupwise A of `rows` rows, their scales rewritten into a layout of their
// own (one group's operand of a grouped GEMM).
inline gemm_reference::GroupwiseOperand a_rows(const gemm_reference::GroupwiseOperand& a, int64_t rows, int64_t begin,
                                               int64_t end, int64_t k, kernels::gemm::ScaleMajor major) {
  const int64_t kb = k / 128, count = end - begin;
  gemm_reference::GroupwiseOperand out;
  out.bytes.assign(a.bytes.begin() + begin * k, a.bytes.begin() + end * k);
  out.scales.resize(static_cast<std::size_t>(count * kb));
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t c = 0; c < kb; ++c) {
      out.scales[static_cast<std::size_t>(kernels::gemm::a_scale_offset(major, count, kb, i, c))] =
          a.scales[static_cast<std::size_t>(kernels::gemm::a_scale_offset(major, rows, kb, begin + i, c))];
    }
  }
  return out;
}

// rows x k normals N(0, stddev^2) quantized by kbench's quantizer into `codes` (packed e2m1 pairs,
// rows x k / 2 bytes) and `scales` (sf_bytes(layout, rows, k / block) bytes); returns the global
// scale it used (NVFP4: 2688 / amax; MXFP4: 1).
inline float quantize_fp4_normals(int64_t rows, int64_t k, kernels::quant::BlockFormat format,
                                  kernels::quant::SfLayout layout, uint64_t seed, float stddev, uint8_t* codes,
                                  uint8_t* scales, cudaStream_t stream) {
  const bool nvfp4 = format == kernels::quant::BlockFormat::nvfp4;
  DeviceBuffer source(static_cast<std::size_t>(rows * k) * 2), amax(sizeof(float));
  KBENCH_CUDA_CHECK(kernels::fill_normal(source.get(), DType::bfloat16, rows * k, seed, 0.0f, stddev, stream));
  float global_scale = 1.0f;
  if (nvfp4) {
    KBENCH_CUDA_CHECK(kernels::gemm::amax_bfloat16(source.get(), rows * k, amax.as<float>(), stream));
    global_scale = 2688.0f / read_as_floats(amax.get(), DType::float32, 1, stream).at(0);
  }
  kernels::QuantizeParams q;
  q.input = source.get();
  q.output = codes;
  q.scales = scales;
  q.rows = rows;
  q.columns = q.padded_columns = k;
  q.block_size = nvfp4 ? 16 : 32;
  q.format = format;
  q.layout = layout;
  q.global_scale = global_scale;
  KBENCH_CUDA_CHECK(kernels::launch_quantize(q, stream));
  KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return global_scale;
}

// One FP4 operand: rows x k standard normals, quantized.
struct Fp4Operand {
  DeviceBuffer codes;
  DeviceBuffer scales;
  float global_scale = 1.0f;
};

inline Fp4Operand quantized(int64_t rows, int64_t k, kernels::quant::BlockFormat format, kernels::quant::SfLayout layout,
                            uint64_t seed, cudaStream_t stream) {
  const int64_t block = format == kernels::quant::BlockFormat::nvfp4 ? 16 : 32;
  Fp4Operand o{DeviceBuffer(static_cast<std::size_t>(rows * k / 2)),
               DeviceBuffer(static_cast<std::size_t>(kernels::quant::sf_bytes(layout, rows, k / block))), 1.0f};
  o.global_scale = quantize_fp4_normals(rows, k, format, layout, seed, 1.0f, o.codes.as<uint8_t>(),
                                        o.scales.as<uint8_t>(), stream);
  return o;
}

}  // namespace kbench::testing
