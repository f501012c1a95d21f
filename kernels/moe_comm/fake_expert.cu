// The reference's fake expert (a2a.hpp): a CTA per receive slot (grid-stride), each thread 8 hidden
// elements at a time, dequantized with kernels/quantization's e4m3 / e2m1 decoders, and one 16-byte
// store of the 8 results. Validation only: not tuned.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kbench/cuda_check.hpp"
#include "kernels/moe/half_bits.hpp"
#include "kernels/moe_comm/a2a.hpp"

namespace kbench::kernels::moe_comm {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxCtas = 1024;
constexpr int kNvfp4Block = quant::block_elements(quant::BlockFormat::nvfp4);

struct FakeExpertParams {
  A2aLayout layout;
  FakeExpertArgs args;
  char* workspace = nullptr;
};

// Elements 8v .. 8v+7 of a hidden row (its block scales at `scales`) as floats.
template <HiddenFormat kFormat>
__device__ __forceinline__ void load_hidden(const char* row, const char* scales, int v, const FakeExpertArgs& a,
                                            float* x) {
  if constexpr (kFormat == HiddenFormat::none) {
    const uint4 packed = *reinterpret_cast<const uint4*>(row + 16 * v);
    const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      x[i] = moe::half_bits_to_float(static_cast<uint16_t>(words[i / 2] >> (16 * (i % 2))), a.dtype == DType::float16);
    }
  } else if constexpr (kFormat == HiddenFormat::nvfp4) {
    const uint32_t codes = *reinterpret_cast<const uint32_t*>(row + 4 * v);
    const auto sf = static_cast<uint8_t>(scales[8 * v / kNvfp4Block]);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      x[i] = quant::dequantize_element(quant::BlockFormat::nvfp4, static_cast<uint8_t>((codes >> (4 * i)) & 0xFu), sf,
                                       a.scale);
    }
  } else {
    const uint2 codes = *reinterpret_cast<const uint2*>(row + 8 * v);
    const float scale = kFormat == HiddenFormat::fp8
                            ? a.scale
                            : reinterpret_cast<const float*>(scales)[8 * v / kFp8ScaleBlock];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t word = i < 4 ? codes.x : codes.y;
      x[i] = quant::e4m3_to_float(static_cast<uint8_t>(word >> (8 * (i % 4)))) * scale;
    }
  }
}

template <HiddenFormat kFormat>
__global__ void __launch_bounds__(kThreads) fake_expert_kernel(const __grid_constant__ FakeExpertParams p) {
  const A2aLayout& l = p.layout;
  const FakeExpertArgs& a = p.args;
  const bool fp16 = a.dtype == DType::float16;
  const int num_experts = l.ranks * a.experts_per_rank;
  for (int slot = blockIdx.x; slot < l.ranks * l.max_tokens; slot += gridDim.x) {
    const int source = slot / l.max_tokens;
    const int t = slot % l.max_tokens;
    const char* row = p.workspace + payload_slot_offset(l, kHiddenPayload, source, t);
    const auto* ids =
        reinterpret_cast<const int32_t*>(p.workspace + payload_slot_offset(l, kExpertIdsPayload, source, t));
    const char* scales = kFormat == HiddenFormat::fp8_block_scale || kFormat == HiddenFormat::nvfp4
                             ? p.workspace + payload_slot_offset(l, kBlockScalePayload, source, t)
                             : nullptr;
    auto* out = reinterpret_cast<uint4*>(p.workspace + combine_row_offset(l, l.combine_in_offset, source, t));
    for (int v = threadIdx.x; v < l.hidden / 8; v += kThreads) {
      float x[8];
      load_hidden<kFormat>(row, scales, v, a, x);
      float acc[8] = {};
      for (int j = 0; j < a.top_k; ++j) {
        const int32_t expert = ids[j];
        if (expert < 0 || expert >= num_experts || expert / a.experts_per_rank != a.rank) continue;
        const float factor = fake_expert_factor(expert, num_experts);
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[i] = __fmaf_rn(x[i], factor, acc[i]);
      }
      uint32_t words[4];
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        words[w] = moe::float_to_half_bits(acc[2 * w], fp16) |
                   static_cast<uint32_t>(moe::float_to_half_bits(acc[2 * w + 1], fp16)) << 16;
      }
      out[v] = make_uint4(words[0], words[1], words[2], words[3]);
    }
  }
}

void require(bool condition, const char* what) {
  if (!condition) throw std::invalid_argument(std::string("moe_comm fake expert: ") + what);
}

}  // namespace

void launch_fake_expert(const A2aLayout& layout, const FakeExpertArgs& args, void* own_workspace,
                        cudaStream_t stream) {
  const int64_t hidden = layout.hidden;
  const auto& row_bytes = layout.payload_row_bytes;
  require(own_workspace != nullptr && layout.total_bytes > 0, "workspace or layout missing");
  require(args.rank >= 0 && args.rank < layout.ranks && args.top_k >= 1 && args.experts_per_rank >= 1,
          "bad rank, top_k or experts_per_rank");
  require(args.dtype == DType::bfloat16 || args.dtype == DType::float16, "dtype must be bfloat16 or float16");
  require(layout.num_payloads > kExpertIdsPayload && row_bytes[kExpertIdsPayload] >= 4 * int64_t{args.top_k},
          "payload 1 must hold top_k int32 expert ids");
  const bool block_scaled = args.format == HiddenFormat::fp8_block_scale || args.format == HiddenFormat::nvfp4;
  require(!block_scaled || layout.num_payloads > kBlockScalePayload, "payload 3 (block scales) missing");
  switch (args.format) {
    case HiddenFormat::none:
      require(row_bytes[kHiddenPayload] >= 2 * hidden, "payload 0 must hold hidden 16-bit values");
      break;
    case HiddenFormat::fp8:
      require(row_bytes[kHiddenPayload] >= hidden, "payload 0 must hold hidden e4m3 codes");
      break;
    case HiddenFormat::fp8_block_scale:
      require(row_bytes[kHiddenPayload] >= hidden, "payload 0 must hold hidden e4m3 codes");
      require(row_bytes[kBlockScalePayload] >= 4 * ((hidden + kFp8ScaleBlock - 1) / kFp8ScaleBlock),
              "payload 3 must hold ceil(hidden / 128) fp32 scales");
      break;
    case HiddenFormat::nvfp4:
      require(hidden % kNvfp4Block == 0, "nvfp4 needs hidden a multiple of 16");
      require(row_bytes[kHiddenPayload] >= hidden / 2, "payload 0 must hold hidden / 2 bytes of e2m1 pairs");
      require(row_bytes[kBlockScalePayload] >= hidden / kNvfp4Block, "payload 3 must hold hidden / 16 e4m3 scales");
      break;
  }
  FakeExpertParams p;
  p.layout = layout;
  p.args = args;
  p.workspace = static_cast<char*>(own_workspace);
  const auto grid = static_cast<unsigned>(std::min(layout.ranks * layout.max_tokens, kMaxCtas));
  switch (args.format) {
    case HiddenFormat::none: fake_expert_kernel<HiddenFormat::none><<<grid, kThreads, 0, stream>>>(p); break;
    case HiddenFormat::fp8: fake_expert_kernel<HiddenFormat::fp8><<<grid, kThreads, 0, stream>>>(p); break;
    case HiddenFormat::fp8_block_scale:
      fake_expert_kernel<HiddenFormat::fp8_block_scale><<<grid, kThreads, 0, stream>>>(p);
      break;
    case HiddenFormat::nvfp4: fake_expert_kernel<HiddenFormat::nvfp4><<<grid, kThreads, 0, stream>>>(p); break;
  }
  KBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace kbench::kernels::moe_comm
