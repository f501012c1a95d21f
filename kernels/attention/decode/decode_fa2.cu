// The CUDA-core decode kernel's entry points (decode_internal.hpp): support check and launch, which
// packs the kernel arguments and dispatches to the per-kv-dtype translation units
// decode_fa2_<dtype>.cu. The kernel itself is in decode_fa2.cuh.
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/attention/decode/decode_common.cuh"
#include "kernels/attention/decode/decode_internal.hpp"

namespace kbench::kernels::decode_detail {

bool fa2_supported(const DecodeParams& params) {
  // Every shape and dtype combination the common checks accept, on paged caches (V beside K).
  return fa2::common_shape_valid(params) && params.kv.v_data == nullptr;
}

cudaError_t launch_fa2(const DecodeParams& params, const DecodeWorkspace& workspace, cudaStream_t stream) {
  using namespace fa2;
  if (!fa2::common_params_valid(params)) return cudaErrorInvalidValue;
  if (workspace.num_items < 0 || (workspace.num_items > 0 && workspace.items == nullptr)) return cudaErrorInvalidValue;
  if (params.batch == 0 || workspace.num_items == 0) return cudaSuccess;

  const PagedKvCache& kv = params.kv;
  const int group = params.num_qo_heads / kv.num_kv_heads;
  const int tiles = (group + fa2_heads_per_cta(group) - 1) / fa2_heads_per_cta(group);
  if (static_cast<int64_t>(workspace.num_items) * tiles > std::numeric_limits<int32_t>::max()) {
    return cudaErrorInvalidValue;
  }

  const int64_t elem = static_cast<int64_t>(dtype_size(kv.dtype));
  const int64_t row_bytes = static_cast<int64_t>(kv.head_dim) * elem;
  const int64_t half_page = static_cast<int64_t>(kv.page_size) * kv.num_kv_heads * row_bytes;

  Fa2Args args{};
  args.q = params.q;
  args.out = params.out;
  args.kv = static_cast<const char*>(kv.data);
  args.indptr = kv.indptr;
  args.indices = kv.indices;
  args.items = workspace.items;
  args.merge_indptr = workspace.merge_indptr;
  args.workspace = static_cast<float*>(workspace.workspace);
  args.page_bytes = 2 * half_page;
  args.v_offset = half_page;
  if (kv.layout == KvLayout::NHD) {
    args.slot_bytes = static_cast<int64_t>(kv.num_kv_heads) * row_bytes;
    args.head_bytes = row_bytes;
  } else {
    args.slot_bytes = row_bytes;
    args.head_bytes = static_cast<int64_t>(kv.page_size) * row_bytes;
  }
  args.page_size = kv.page_size;
  args.num_kv_heads = kv.num_kv_heads;
  args.num_qo_heads = params.num_qo_heads;
  args.group = group;
  args.tiles = tiles;
  args.batch = params.batch;
  args.qk_scale_log2 = params.sm_scale * params.q_scale * kv.k_scale * kLog2e;
  args.v_scale = kv.v_scale;
  args.out_scale = params.out_scale;
  args.q_dtype = elem_of(params.q_dtype);
  args.out_dtype = elem_of(params.out_dtype);

  const bool pdl = params.enable_pdl;
  switch (kv.dtype) {
    case DType::bfloat16: return launch_fa2_bf16(args, workspace.num_items, kv.head_dim, pdl, stream);
    case DType::float16: return launch_fa2_fp16(args, workspace.num_items, kv.head_dim, pdl, stream);
    case DType::fp8_e4m3: return launch_fa2_e4m3(args, workspace.num_items, kv.head_dim, pdl, stream);
    case DType::fp8_e5m2: return launch_fa2_e5m2(args, workspace.num_items, kv.head_dim, pdl, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace kbench::kernels::decode_detail
