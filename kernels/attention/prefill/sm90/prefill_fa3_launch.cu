// fa3 prefill (sm_90a): what it supports, its tensor maps and its launch (dispatch to the
// per-head-dim translation units). The kernel is in prefill_fa3_kernel.cuh.
//
// Grid: min(work items, SMs) persistent CTAs of 384 threads (one per SM: 144..224 KB of shared
// memory). Requirements beyond launch_prefill's shared checks: q and KV of one type (bf16, fp16, or
// fp8_e4m3 with head dims 128 or 256), sm_scale * q_scale * k_scale > 0 (the running max is taken on
// raw logits).
#include <cudaTypedefs.h>

#include <cmath>
#include <cstdint>
#include <numeric>

#include "kernels/attention/prefill/prefill_internal.hpp"
#include "kernels/attention/prefill/sm90/prefill_fa3.hpp"
#include "kernels/common/launch.hpp"
#include "kernels/common/tensor_map.hpp"

namespace kbench::kernels {

namespace prefill_fa3 {

namespace {

// Multiprocessors of the current device (a memo per device).
cudaError_t sm_count(int* count) {
  static DeviceMemo<int> memo;
  return memo_attribute(memo, cudaDevAttrMultiProcessorCount, count);
}

bool input_dtype(DType t) { return t == DType::bfloat16 || t == DType::float16 || t == DType::fp8_e4m3; }

}  // namespace

cudaError_t encode_page_map(CUtensorMap* map, const void* base, DType dtype, int heads, int head_dim, int page_size,
                            int box_rows, int box_chunks, int64_t slot_stride, int64_t head_stride,
                            int64_t page_stride) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return cudaErrorNotSupported;
  const cuuint64_t chunk = 128 / dtype_size(dtype);
  const cuuint64_t dims[5] = {chunk, static_cast<cuuint64_t>(page_size), static_cast<cuuint64_t>(heads),
                              static_cast<cuuint64_t>(head_dim) / chunk, 0x7fffffffull};
  const cuuint64_t strides[4] = {static_cast<cuuint64_t>(slot_stride), static_cast<cuuint64_t>(head_stride), 128,
                                 static_cast<cuuint64_t>(page_stride)};
  const cuuint32_t box[5] = {static_cast<cuuint32_t>(chunk), static_cast<cuuint32_t>(box_rows), 1,
                             static_cast<cuuint32_t>(box_chunks), 1};
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  const CUresult result = encode(map, tensor_map_type(dtype), 5, const_cast<void*>(base), dims, strides, box,
                                 element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

}  // namespace prefill_fa3

namespace prefill_detail {

int fa3_block_m(const PrefillParams&) { return prefill_fa3::kBlockM; }

// One CTA per SM (__launch_bounds__(384, 1), up to 224 KB of shared memory); launch_fa3's grid is
// min(items, SMs).
int fa3_ctas_per_sm(const PrefillParams&) { return 1; }

bool fa3_supported(const PrefillParams& p) {
  if (!prefill_fa3::input_dtype(p.q_dtype) || p.kv_dtype != p.q_dtype) return false;
  // fp8 rows must fill whole 128-byte swizzle rows: head dims 128 and 256.
  if (p.q_dtype == DType::fp8_e4m3 && (p.head_dim_qk % 128 != 0 || p.head_dim_vo % 128 != 0)) return false;
  if (p.out_dtype != DType::bfloat16 && p.out_dtype != DType::float16) return false;
  const bool dims = (p.head_dim_qk == p.head_dim_vo &&
                     (p.head_dim_qk == 64 || p.head_dim_qk == 128 || p.head_dim_qk == 256)) ||
                    (p.head_dim_qk == 192 && p.head_dim_vo == 128);
  if (!dims) return false;
  if (p.num_qo_heads < 1 || p.num_kv_heads < 1 || p.num_qo_heads % p.num_kv_heads != 0) return false;
  if (p.paged && (p.head_dim_qk != p.head_dim_vo || p.pages.page_size < 1)) return false;
  const double scale = static_cast<double>(p.sm_scale) * p.q_scale * p.k_scale;
  return std::isfinite(scale) && scale > 0.0 && std::isfinite(p.v_scale);
}

cudaError_t fa3_available() {
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) return status;
  int major = 0;
  int minor = 0;
  status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (status != cudaSuccess) return status;
  status = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (status != cudaSuccess) return status;
  if (major != 9 || minor != 0) return cudaErrorNoKernelImageForDevice;  // wgmma and setmaxnreg: sm_90a only
#if defined(KBENCH_FA3_BUILT_FOR_SM90A)
  return prefill_fa3::probe_kernel_image();
#else
  return cudaErrorNoKernelImageForDevice;  // built without sm_90a (sources.cmake): the bodies would trap
#endif
}

cudaError_t launch_fa3(const PrefillParams& params, const PrefillWorkspace& workspace, cudaStream_t stream) {
  namespace fa3 = prefill_fa3;
  if (!fa3_supported(params) || workspace.num_items < 0) return cudaErrorInvalidValue;
  if (workspace.num_items == 0) return cudaSuccess;

  fa3::Fa3Args args{};
  cudaError_t status = encode_token_major_map(&args.tma_q, params.q, params.q_dtype, params.num_qo_heads,
                                              params.head_dim_qk, fa3::kBlockM);
  if (status != cudaSuccess) return status;
  args.items = workspace.items;
  args.num_items = workspace.num_items;
  args.out = params.out;
  args.num_qo_heads = params.num_qo_heads;
  args.group = params.num_qo_heads / params.num_kv_heads;
  args.causal = params.causal ? 1 : 0;
  args.out_type = params.out_dtype == DType::bfloat16 ? fa3::OutType::bf16 : fa3::OutType::fp16;
  args.scale_log2 = static_cast<float>(static_cast<double>(params.sm_scale) * params.q_scale * params.k_scale *
                                       1.4426950408889634073599);
  args.out_scale = params.v_scale;
  if (params.paged) {
    const PagedKvView& kv = params.pages;
    const int64_t es = static_cast<int64_t>(dtype_size(params.kv_dtype));
    const int64_t d = params.head_dim_qk;
    const int64_t h = params.num_kv_heads;
    const int64_t ps = kv.page_size;
    args.paged = 1;
    args.cache = static_cast<const uint8_t*>(kv.data);
    args.page_indices = kv.indices;
    args.page_size = kv.page_size;
    args.page_div = FastDivisor::make(static_cast<uint32_t>(kv.page_size));
    args.page_stride = 2 * ps * h * d * es;
    args.v_offset = ps * h * d * es;
    if (kv.layout == KvLayout::NHD) {  // [page][k|v][slot][head][dim]
      args.slot_stride = h * d * es;
      args.head_stride = d * es;
    } else {  // HND: [page][k|v][head][slot][dim]
      args.slot_stride = d * es;
      args.head_stride = ps * d * es;
    }
    // Page-aligned tiles go by TMA in boxes of box_rows keys (none crosses a page) where the boxes
    // hold whole swizzle atoms; block_n is a power of two, so box_rows is the one dividing both.
    const int block_n = fa3::block_n(params.head_dim_qk);
    args.box_rows = std::gcd(kv.page_size, block_n);
    args.page_maps = args.box_rows >= fa3::kMinBoxRows ? 1 : 0;
    args.v_box_major = args.page_maps && args.box_rows >= 16 && params.kv_dtype != DType::fp8_e4m3 ? 1 : 0;
    if (args.page_maps) {
      const uint8_t* cache = static_cast<const uint8_t*>(kv.data);
      status = fa3::encode_page_map(&args.tma_k, cache, params.kv_dtype, params.num_kv_heads, params.head_dim_qk,
                                    kv.page_size, args.box_rows, 1, args.slot_stride, args.head_stride,
                                    args.page_stride);
      if (status != cudaSuccess) return status;
      const int v_chunks = params.head_dim_vo * static_cast<int>(es) / 128;
      status = fa3::encode_page_map(&args.tma_v, cache + args.v_offset, params.kv_dtype, params.num_kv_heads,
                                    params.head_dim_vo, kv.page_size, args.box_rows,
                                    args.v_box_major ? v_chunks : 1, args.slot_stride, args.head_stride,
                                    args.page_stride);
      if (status != cudaSuccess) return status;
    }
  } else {
    args.paged = 0;
  }

  int sms = 0;
  status = fa3::sm_count(&sms);
  if (status != cudaSuccess) return status;
  const fa3::Fa3Launch launch{workspace.num_items < sms ? workspace.num_items : sms, params.enable_pdl, stream};
  switch (params.head_dim_qk) {
    case 64: return fa3::launch_d64(args, params, launch);
    case 128: {
      const bool wide = !params.paged && !params.causal && params.q_dtype != DType::fp8_e4m3;
      return wide ? fa3::launch_d128_wide(args, params, launch) : fa3::launch_d128(args, params, launch);
    }
    case 256: {
      const bool wide = !params.paged && params.q_dtype != DType::fp8_e4m3;
      return wide ? fa3::launch_d256_wide(args, params, launch) : fa3::launch_d256(args, params, launch);
    }
    case 192: return fa3::launch_d192_128(args, params, launch);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace prefill_detail

}  // namespace kbench::kernels
