// fa2_tc: what the tensor-core decode kernel supports, and its launch (cache strides, scales,
// dispatch to the per-KV-dtype translation units). See decode_fa2_tc.cuh for the kernel.
//
// Grid: x = work item (head pairs: items 2x and 2x + 1), y = M tile of 16 query heads
// (ceil(group / 16)); 128 threads; dynamic shared memory by head_dim and KV dtype (49..203 KB, see
// decode_fa2_tc.cuh). Requirements beyond the API's: q, out and the cache 16-byte aligned; the
// workspace 16-byte aligned; a plan with split items passes merge_indptr (its last entry, the
// number of partial slots, places partial_lse).
#include <cmath>
#include <cstdint>

#include "kernels/attention/decode/decode_fa2_tc.cuh"
#include "kernels/attention/decode/decode_internal.hpp"
#include "kernels/common/launch.hpp"

namespace kbench::kernels::decode_detail {

namespace {

using decode_tc_detail::TcArgs;

int elem_code(DType t) {
  switch (t) {
    case DType::bfloat16: return decode_tc_detail::kBf16;
    case DType::float16: return decode_tc_detail::kF16;
    case DType::fp8_e4m3: return decode_tc_detail::kE4m3;
    case DType::fp8_e5m2: return decode_tc_detail::kE5m2;
    default: return -1;
  }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Opt-in shared memory per block of the current device (a memo per device).
cudaError_t device_smem(int* max_smem) {
  static DeviceMemo<int> memo;
  return memo_attribute(memo, cudaDevAttrMaxSharedMemoryPerBlockOptin, max_smem);
}

// Head pairs (two work items per CTA, side by side in its shared-memory rows) where an NHD fp8 row
// of one kv head, 128 bytes at a num_kv_heads x 128-byte stride, is the unit of a read: plan_decode
// emits a chunk's kv heads in turn, so with an even number of them items 2x and 2x + 1 are heads
// h, h + 1 of one chunk and the CTA reads 256 contiguous bytes per token (16-bit rows are 256
// bytes already; HND rows are contiguous per head). Head_dim 128 only (256 would not fit the
// registers; 64 is unmeasured), and group <= 8 so each item's query heads fit half the M tile.
int items_per_cta(const DecodeParams& p) {
  const PagedKvCache& kv = p.kv;
  const bool pairs = kv.layout == KvLayout::NHD && is_fp8(kv.dtype) && kv.head_dim == 128 &&
                     kv.num_kv_heads % 2 == 0 && p.num_qo_heads / kv.num_kv_heads <= decode_tc_detail::kMRows / 2;
  return pairs ? 2 : 1;
}

}  // namespace

bool fa2_tc_supported(const DecodeParams& p) {
  const PagedKvCache& kv = p.kv;
  if (elem_code(kv.dtype) < 0 || elem_code(p.q_dtype) < 0 || elem_code(p.out_dtype) < 0) return false;
  if (kv.head_dim != 64 && kv.head_dim != 128 && kv.head_dim != 256) return false;
  if (kv.num_kv_heads <= 0 || p.num_qo_heads <= 0 || p.num_qo_heads % kv.num_kv_heads != 0) return false;
  if (kv.page_size <= 0 || p.batch < 0) return false;
  if (kv.v_data != nullptr && (kv.page_size != 1 || kv.layout != KvLayout::NHD || !aligned16(kv.v_data))) return false;
  const int group = p.num_qo_heads / kv.num_kv_heads;
  if ((group + decode_tc_detail::kMRows - 1) / decode_tc_detail::kMRows > 65535) return false;
  // 16-byte vectors (cp.async rows, q loads) and 4-element output stores.
  if (!aligned16(kv.data) || !aligned16(p.q) || !aligned16(p.out)) return false;
  return true;
}

cudaError_t launch_fa2_tc(const DecodeParams& params, const DecodeWorkspace& workspace, cudaStream_t stream) {
  if (!fa2_tc_supported(params)) return cudaErrorInvalidValue;
  if (workspace.num_items < 0) return cudaErrorInvalidValue;
  if (workspace.num_items == 0) return cudaSuccess;
  const PagedKvCache& kv = params.kv;
  if (workspace.items == nullptr || kv.data == nullptr || kv.indptr == nullptr || kv.indices == nullptr ||
      params.q == nullptr || params.out == nullptr || !aligned16(workspace.workspace)) {
    return cudaErrorInvalidValue;
  }

  const int64_t es = static_cast<int64_t>(dtype_size(kv.dtype));
  const int64_t d = kv.head_dim;
  const int64_t h = kv.num_kv_heads;
  const int64_t ps = kv.page_size;
  TcArgs args{};
  args.q = params.q;
  args.out = params.out;
  args.kv = static_cast<const uint8_t*>(kv.data);
  args.indptr = kv.indptr;
  args.indices = kv.indices;
  args.items = workspace.items;
  args.num_items = workspace.num_items;
  args.merge_indptr = workspace.merge_indptr;
  args.partial_o = static_cast<float*>(workspace.workspace);
  if (kv.v_data != nullptr) {  // K [token][head][dim] at data, V likewise at v_data: pages of one token
    args.page_stride = h * d * es;
    args.slot_stride = h * d * es;
    args.head_stride = d * es;
    args.v_offset = static_cast<const uint8_t*>(kv.v_data) - static_cast<const uint8_t*>(kv.data);
  } else if (kv.layout == KvLayout::NHD) {  // [page][k|v][slot][head][dim]
    args.page_stride = 2 * ps * h * d * es;
    args.slot_stride = h * d * es;
    args.head_stride = d * es;
    args.v_offset = ps * h * d * es;
  } else {  // HND: [page][k|v][head][slot][dim]
    args.page_stride = 2 * h * ps * d * es;
    args.slot_stride = d * es;
    args.head_stride = ps * d * es;
    args.v_offset = h * ps * d * es;
  }
  args.page_size = kv.page_size;
  args.batch = params.batch;
  args.num_kv_heads = kv.num_kv_heads;
  args.num_qo_heads = params.num_qo_heads;
  args.group = params.num_qo_heads / kv.num_kv_heads;
  args.q_code = elem_code(params.q_dtype);
  args.out_code = elem_code(params.out_dtype);
  args.scale_log2 = static_cast<float>(static_cast<double>(params.sm_scale) * params.q_scale * kv.k_scale *
                                       1.4426950408889634073599);
  args.v_scale = kv.v_scale;
  args.out_scale = params.out_scale;

  int max_smem = 0;
  const cudaError_t status = device_smem(&max_smem);
  if (status != cudaSuccess) return status;
  const int m_tiles = (args.group + decode_tc_detail::kMRows - 1) / decode_tc_detail::kMRows;
  const int cta_items = items_per_cta(params);
  const bool pdl = params.enable_pdl;
  const int hd = kv.head_dim;
  namespace tc = decode_tc_detail;
  switch (kv.dtype) {
    case DType::bfloat16: return tc::launch_bf16(args, hd, cta_items, m_tiles, max_smem, pdl, stream);
    case DType::float16: return tc::launch_fp16(args, hd, cta_items, m_tiles, max_smem, pdl, stream);
    case DType::fp8_e4m3: return tc::launch_e4m3(args, hd, cta_items, m_tiles, max_smem, pdl, stream);
    case DType::fp8_e5m2: return tc::launch_e5m2(args, hd, cta_items, m_tiles, max_smem, pdl, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace kbench::kernels::decode_detail
