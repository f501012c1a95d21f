// fa2 prefill (prefill_internal.hpp): what it supports, its block_m, and its launch (K/V strides of
// the ragged or paged layout, the folded scales, dispatch to the per-(dtype, head dims) translation
// units prefill_fa2_<dtype>_<dims>.cu). The kernel is in prefill_fa2.cuh.
//
// Supported: q, k, v all bf16 or all fp16; out bf16 or fp16; head dims (qk, vo) = (64, 64),
// (128, 128), (256, 256) or (192, 128) (paged: qk == vo); any GQA group; any page size;
// sm_scale q_scale k_scale > 0 (the kernel takes row maxima of unscaled logits); on a device,
// sm_80+ and the tile's shared memory must fit. Beyond the API: q, out and the K/V data 16-byte
// aligned (16-byte cp.async and stores).
#include <cmath>
#include <cstdint>

#include "kernels/attention/prefill/prefill_internal.hpp"
#include "kernels/attention/prefill/sm80/prefill_fa2.hpp"
#include "kernels/common/kernel_image.hpp"
#include "kernels/common/launch.hpp"

namespace kbench::kernels {

namespace {

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

namespace prefill_fa2 {

cudaError_t make_args(const PrefillParams& params, const PrefillWorkspace& workspace, Fa2Args* out) {
  if (workspace.items == nullptr || params.q == nullptr || params.out == nullptr || params.qo_indptr == nullptr ||
      !aligned16(params.q) || !aligned16(params.out)) {
    return cudaErrorInvalidValue;
  }
  const int64_t h = params.num_kv_heads;
  const int64_t dqk_bytes = 2 * static_cast<int64_t>(params.head_dim_qk);
  const int64_t dvo_bytes = 2 * static_cast<int64_t>(params.head_dim_vo);
  Fa2Args args{};
  args.q = static_cast<const uint8_t*>(params.q);
  args.out = static_cast<uint8_t*>(params.out);
  args.qo_indptr = params.qo_indptr;
  args.items = workspace.items;
  if (params.paged) {
    const PagedKvView& kv = params.pages;
    if (kv.data == nullptr || kv.indptr == nullptr || kv.indices == nullptr || kv.last_page_len == nullptr ||
        !aligned16(kv.data) || kv.page_size < 1) {
      return cudaErrorInvalidValue;
    }
    const int64_t ps = kv.page_size;
    const int64_t half_page = ps * h * dqk_bytes;  // K (or V) of one page
    args.k = static_cast<const uint8_t*>(kv.data);
    args.v = args.k + half_page;
    args.kv_indptr = kv.indptr;
    args.page_indices = kv.indices;
    args.last_page_len = kv.last_page_len;
    args.k_row_stride = args.v_row_stride = 2 * half_page;
    if (kv.layout == KvLayout::NHD) {  // [page][k|v][slot][head][dim]
      args.slot_stride = h * dqk_bytes;
      args.k_head_stride = args.v_head_stride = dqk_bytes;
    } else {  // HND: [page][k|v][head][slot][dim]
      args.slot_stride = dqk_bytes;
      args.k_head_stride = args.v_head_stride = ps * dqk_bytes;
    }
    args.page_size = kv.page_size;
    args.paged = 1;
  } else {
    const RaggedKvView& kv = params.ragged;
    if (kv.k == nullptr || kv.v == nullptr || kv.indptr == nullptr || !aligned16(kv.k) || !aligned16(kv.v)) {
      return cudaErrorInvalidValue;
    }
    args.k = static_cast<const uint8_t*>(kv.k);
    args.v = static_cast<const uint8_t*>(kv.v);
    args.kv_indptr = kv.indptr;
    args.k_row_stride = h * dqk_bytes;
    args.v_row_stride = h * dvo_bytes;
    args.k_head_stride = dqk_bytes;
    args.v_head_stride = dvo_bytes;
    args.page_size = 1;
  }
  args.num_qo_heads = params.num_qo_heads;
  args.group = params.num_qo_heads / params.num_kv_heads;
  args.causal = params.causal ? 1 : 0;
  args.out_f16 = params.out_dtype == DType::float16 ? 1 : 0;
  args.scale_log2 = static_cast<float>(static_cast<double>(params.sm_scale) * params.q_scale * params.k_scale *
                                       1.4426950408889634073599);
  args.v_scale = params.v_scale;
  *out = args;
  return cudaSuccess;
}

}  // namespace prefill_fa2

namespace prefill_detail {

namespace {

using prefill_fa2::Fa2Args;
using prefill_fa2::Fa2TileFor;

enum class HeadDims { d64, d128, d256, d192_128, none };

HeadDims head_dims_of(const PrefillParams& p) {
  if (p.head_dim_qk == 64 && p.head_dim_vo == 64) return HeadDims::d64;
  if (p.head_dim_qk == 128 && p.head_dim_vo == 128) return HeadDims::d128;
  if (p.head_dim_qk == 256 && p.head_dim_vo == 256) return HeadDims::d256;
  if (p.head_dim_qk == 192 && p.head_dim_vo == 128 && !p.paged) return HeadDims::d192_128;
  return HeadDims::none;
}

// f(Tile{}) with the tile of `dims`; `none` for HeadDims::none.
template <class R, class F>
R with_tile(HeadDims dims, R none, F f) {
  switch (dims) {
    case HeadDims::d64: return f(Fa2TileFor<64, 64>::type{});
    case HeadDims::d128: return f(Fa2TileFor<128, 128>::type{});
    case HeadDims::d256: return f(Fa2TileFor<256, 256>::type{});
    case HeadDims::d192_128: return f(Fa2TileFor<192, 128>::type{});
    case HeadDims::none: break;
  }
  return none;
}

int smem_bytes(HeadDims dims) {
  return with_tile(dims, 0, [](auto tile) { return decltype(tile)::kSmemBytes; });
}

bool is_16bit(DType t) { return t == DType::bfloat16 || t == DType::float16; }

// The current device's compute capability major and opt-in shared memory per block (memos per
// device: launches stay free of attribute queries).
struct DeviceLimits {
  int cc_major = 0;
  int max_smem = 0;
};

cudaError_t device_limits(DeviceLimits* limits) {
  static DeviceMemo<int> smem_memo, major_memo;
  const cudaError_t status = memo_attribute(smem_memo, cudaDevAttrMaxSharedMemoryPerBlockOptin, &limits->max_smem);
  if (status != cudaSuccess) return status;
  return memo_attribute(major_memo, cudaDevAttrComputeCapabilityMajor, &limits->cc_major);
}

// Dtypes and shapes, without the device.
bool shape_supported(const PrefillParams& p) {
  if (!is_16bit(p.q_dtype) || p.kv_dtype != p.q_dtype || !is_16bit(p.out_dtype)) return false;
  if (head_dims_of(p) == HeadDims::none) return false;
  if (p.batch < 0 || p.num_qo_heads < 1 || p.num_kv_heads < 1 || p.num_qo_heads % p.num_kv_heads != 0) {
    return false;
  }
  if (p.paged && p.pages.page_size < 1) return false;
  // The kernel takes row maxima of the unscaled logits: their scale must be positive.
  const double logit_scale = static_cast<double>(p.sm_scale) * p.q_scale * p.k_scale;
  return std::isfinite(logit_scale) && logit_scale > 0.0 && std::isfinite(p.v_scale);
}

template <bool kF16>
cudaError_t launch_typed(HeadDims dims, const Fa2Args& args, int num_items, bool pdl, cudaStream_t stream) {
  return with_tile(dims, cudaErrorInvalidValue, [&](auto tile) {
    using Tile = decltype(tile);
    return prefill_fa2::launch_head_dims<kF16, Tile::kHeadDimQk, Tile::kHeadDimVo>(args, num_items, pdl, stream);
  });
}

}  // namespace

int fa2_block_m(const PrefillParams& params) {
  // Unsupported shapes: any positive size keeps plan_prefill well defined.
  return with_tile(head_dims_of(params), 128, [](auto tile) { return decltype(tile)::kBlockM; });
}

int fa2_ctas_per_sm(const PrefillParams& params) {
  return with_tile(head_dims_of(params), 1, [](auto tile) { return decltype(tile)::kMinBlocks; });
}

bool fa2_supported(const PrefillParams& params) {
  if (!shape_supported(params)) return false;
  // On a device: sm_80+ and the tile's shared memory fits (no device: the shape answer alone).
  DeviceLimits limits;
  if (device_limits(&limits) != cudaSuccess) {
    (void)cudaGetLastError();
    return true;
  }
  return limits.cc_major >= 8 && smem_bytes(head_dims_of(params)) <= limits.max_smem;
}

cudaError_t fa2_available() {
  DeviceLimits limits;
  cudaError_t status = device_limits(&limits);
  if (status != cudaSuccess) return kernel_image_status(status);
  if (limits.cc_major < 8) return cudaErrorNoKernelImageForDevice;
  cudaFuncAttributes attributes{};
  return kernel_image_status(prefill_fa2::probe_kernel_image(&attributes));
}

cudaError_t launch_fa2(const PrefillParams& params, const PrefillWorkspace& workspace, cudaStream_t stream) {
  if (!shape_supported(params) || workspace.num_items < 0) return cudaErrorInvalidValue;
  if (params.batch == 0 || workspace.num_items == 0) return cudaSuccess;
  Fa2Args args{};
  cudaError_t status = prefill_fa2::make_args(params, workspace, &args);
  if (status != cudaSuccess) return status;
  const HeadDims dims = head_dims_of(params);
  DeviceLimits limits;
  status = device_limits(&limits);
  if (status != cudaSuccess) return status;
  if (limits.cc_major < 8 || smem_bytes(dims) > limits.max_smem) return cudaErrorInvalidValue;
  if (params.q_dtype == DType::float16) {
    return launch_typed<true>(dims, args, workspace.num_items, params.enable_pdl, stream);
  }
  return launch_typed<false>(dims, args, workspace.num_items, params.enable_pdl, stream);
}

}  // namespace prefill_detail

}  // namespace kbench::kernels
