// FlashInfer's fa3 (sm90) batch prefill: PrefillSM90Plan + BatchPrefillWith{Ragged,Paged}KVCacheDispatched
// from flashinfer/attention/hopper/prefill_sm90.cuh, for one element type; included by
// prefill_fa3_bf16.cu / _fp16.cu (built for sm_90a only). Instantiates ragged head dims 64/64,
// 128/128, 256/256 and 192/128, paged 64/64, 128/128 and 256/256, masks none and causal, with
// SAME_SCHEDULE_FOR_ALL_HEADS = false (the plan picks true only above 4096 query tiles per head,
// which prefill_unsupported rejects).
#pragma once

#include <flashinfer/attention/hopper/attention_updater.cuh>
#include <flashinfer/attention/hopper/variant_helper.cuh>
#include <flashinfer/cutlass_utils.cuh>
#include <flashinfer/layout.cuh>
#include <flashinfer/math.cuh>
// variants.cuh after the params (as FlashInfer's rendered config does).
#include <flashinfer/attention/hopper/variants.cuh>
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/scheduler.cuh>

#include <memory>
#include <sstream>
#include <vector>

#include "backends/flashinfer/fi_plan_util.cuh"

namespace kbench_fi {

using kbench::DeviceBuffer;
using kbench::backends::flashinfer::PrefillShape;
using kbench::backends::flashinfer::PrefillTensors;
using kbench::backends::flashinfer::detail::PinnedBuffer;
using kbench::backends::flashinfer::detail::PrefillImpl;
using ::flashinfer::MaskMode;

// The extra parameters FlashInfer's Python declares for fa3 with 16-bit inputs, no soft cap
// (batch_prefill_sm90_customize_config.jinja renders them into AdditionalParams).
struct Fa3AdditionalParams {
  uint32_t* maybe_prefix_len_ptr;
  uint16_t* maybe_token_pos_in_items_ptr;
  uint16_t* maybe_max_item_len_ptr;
  float* maybe_scale_v;
  double logits_soft_cap;
  double sm_scale;
  double scale_v_scalar;
  int64_t token_pos_in_items_len;
};

// The fields FlashInfer's sm90 kernels read, as its customize config declares them.
template <typename T>
struct Fa3RaggedParams {
  using DTypeQ = ::flashinfer::cutlass_dtype_t<T>;
  using DTypeKV = DTypeQ;
  using DTypeO = DTypeQ;
  using IdType = int32_t;
  DTypeQ* q_ptr;
  DTypeKV* k_ptr;
  DTypeKV* v_ptr;
  DTypeO* o_ptr;
  float* lse_ptr;
  IdType* qo_tile_indices;
  IdType* qo_indptr;
  IdType* kv_indptr;
  IdType* qo_lens;
  IdType* kv_lens;
  IdType* head_indices;
  IdType* work_indptr;
  IdType* batch_indices;
  using AdditionalParams = Fa3AdditionalParams;
  AdditionalParams additional_params;
  int64_t q_stride_n, k_stride_n, v_stride_n, o_stride_n;
  int64_t q_stride_h, k_stride_h, v_stride_h, o_stride_h;
  int64_t nnz_qo, nnz_kv;
  int head_dim, num_qo_heads, num_kv_heads, group_size, window_left;
  bool causal;
};

template <typename T>
struct Fa3PagedParams {
  using DTypeQ = ::flashinfer::cutlass_dtype_t<T>;
  using DTypeKV = DTypeQ;
  using DTypeO = DTypeQ;
  using IdType = int32_t;
  DTypeQ* q_ptr;
  DTypeKV* k_ptr;
  DTypeKV* v_ptr;
  DTypeO* o_ptr;
  float* lse_ptr;
  IdType* qo_tile_indices;
  IdType* qo_indptr;
  IdType* kv_indptr;
  IdType* kv_indices;
  IdType* qo_lens;
  IdType* kv_lens;
  IdType* head_indices;
  IdType* work_indptr;
  IdType* batch_indices;
  using AdditionalParams = Fa3AdditionalParams;
  AdditionalParams additional_params;
  int64_t q_stride_n, k_stride_n, v_stride_n, o_stride_n;
  int64_t q_stride_h, k_stride_h, v_stride_h, o_stride_h;
  int64_t nnz_qo;
  int64_t k_page_stride, v_page_stride;
  int head_dim, num_qo_heads, num_kv_heads, group_size, page_size, window_left;
  bool causal;
};

// DefaultAttention<use_logits_soft_cap = false> of hopper/variants.cuh (StandardAttention).
using Fa3Variant = ::flashinfer::DefaultAttention<false>;

// The int workspace PrefillSM90Plan fills without CUDA-graph padding: 7 arrays of one entry per
// work item (num_qo_heads * sum of query tiles) and work_indptr (one per SM + 1), 16-byte aligned.
inline size_t fa3_int_workspace_bytes(const PrefillShape& s, int num_sms) {
  const int64_t cta_tile_q = s.head_dim_vo == 64 ? 192 : 128;  // as PrefillSM90Plan
  int64_t tiles = 0;
  for (int b = 0; b < s.batch; ++b) {
    tiles += (s.qo_indptr[b + 1] - s.qo_indptr[b] + cta_tile_q - 1) / cta_tile_q;
  }
  const auto round16 = [](int64_t bytes) { return static_cast<size_t>((bytes + 15) / 16 * 16); };
  const int64_t works = tiles * s.num_qo_heads;
  return 7 * round16(works * 4) + round16((num_sms + 1) * 4) + kbench::backends::flashinfer::detail::kWorkspaceSlack;
}

template <typename T, bool PAGED, uint32_t HEAD_QK, uint32_t HEAD_VO>
class PrefillFa3 final : public PrefillImpl {
 public:
  using Params = std::conditional_t<PAGED, Fa3PagedParams<T>, Fa3RaggedParams<T>>;

  PrefillFa3(const PrefillShape& s, cudaStream_t stream) : shape_(s) {
    std::vector<int32_t> qo_indptr_h = s.qo_indptr, kv_indptr_h = s.kv_indptr, kv_lens_h = s.kv_lens;
    const auto batch = static_cast<uint32_t>(s.batch);
    const int64_t total_q = qo_indptr_h[batch];
    int device = 0, num_sms = 0;
    KBENCH_CUDA_CHECK(cudaGetDevice(&device));
    KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device));
    int_ws_ = DeviceBuffer(fa3_int_workspace_bytes(s, num_sms));
    ::flashinfer::PrefillPlanSM90Info plan;
    {
      PinnedBuffer pinned(int_ws_.bytes());
      // As FlashInfer's Python plan() for fa3: no CUDA-graph padding, sizeof(DTypeO) 2. The float
      // workspace is not used by PrefillSM90Plan.
      plan_check(::flashinfer::PrefillSM90Plan<int32_t>(
                     /*float_buffer=*/nullptr, /*float_workspace_size_in_bytes=*/0, int_ws_.get(), pinned.get(),
                     int_ws_.bytes(), plan, qo_indptr_h.data(), kv_indptr_h.data(), kv_lens_h.data(),
                     static_cast<uint32_t>(total_q), batch, s.num_qo_heads, s.num_kv_heads, HEAD_QK, HEAD_VO,
                     PAGED ? s.page_size : 1, s.causal, /*enable_cuda_graph=*/false, /*sizeof_dtype_o=*/2, stream),
                 "PrefillSM90Plan");
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // the plan's copy reads `pinned`
    }
    if (plan.same_schedule_for_all_heads) {
      throw std::runtime_error(
          "flashinfer: the fa3 plan chose same_schedule_for_all_heads, which is not instantiated");
    }
    void* int_base = int_ws_.get();
    Params& p = params_;
    p = Params{};
    p.lse_ptr = nullptr;
    p.q_stride_n = static_cast<int64_t>(s.num_qo_heads) * HEAD_QK;
    p.q_stride_h = HEAD_QK;
    p.o_stride_n = static_cast<int64_t>(s.num_qo_heads) * HEAD_VO;
    p.o_stride_h = HEAD_VO;
    p.nnz_qo = total_q;
    if constexpr (PAGED) {
      const auto view = kbench::backends::flashinfer::detail::paged_cache_view(s.num_kv_heads, s.page_size,
                                                                               HEAD_QK, s.layout);
      v_offset_ = view.v_offset;
      // NHD view strides are {page, slot, head}, HND {page, head, slot} (see paged_cache_view).
      const bool nhd = s.layout == kbench::kernels::KvLayout::NHD;
      p.k_stride_n = p.v_stride_n = nhd ? view.strides[1] : view.strides[2];
      p.k_stride_h = p.v_stride_h = nhd ? view.strides[2] : view.strides[1];
      p.k_page_stride = p.v_page_stride = view.strides[0];
      p.page_size = s.page_size;
    } else {
      p.k_stride_n = static_cast<int64_t>(s.num_kv_heads) * HEAD_QK;
      p.v_stride_n = static_cast<int64_t>(s.num_kv_heads) * HEAD_VO;
      p.k_stride_h = HEAD_QK;
      p.v_stride_h = HEAD_VO;
      p.nnz_kv = kv_indptr_h[batch];
    }
    p.head_dim = HEAD_QK;
    p.num_qo_heads = s.num_qo_heads;
    p.num_kv_heads = s.num_kv_heads;
    p.group_size = s.num_qo_heads / s.num_kv_heads;
    p.window_left = -1;
    p.causal = s.causal;
    p.qo_tile_indices = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.qo_tile_indices_offset);
    p.qo_indptr = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.qo_indptr_offset);
    p.kv_indptr = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.kv_indptr_offset);
    p.qo_lens = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.qo_len_offset);
    p.kv_lens = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.kv_len_offset);
    p.head_indices = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.head_indices_offset);
    p.work_indptr = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.work_indptr_offset);
    p.batch_indices = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.batch_indices_offset);
    p.additional_params = {};
    p.additional_params.sm_scale = s.sm_scale;
    p.additional_params.scale_v_scalar = 1.0;
    p.additional_params.logits_soft_cap = 0.0;
    std::ostringstream os;
    os << "fa3 " << (PAGED ? "paged" : "ragged") << " head_dim " << HEAD_QK << "/" << HEAD_VO
       << " int_ws=" << int_ws_.bytes();
    summary = os.str();
  }

  cudaError_t run(const PrefillTensors& t, cudaStream_t stream) const override {
    return launch_guarded([&]() -> cudaError_t {
      using DT = typename Params::DTypeQ;
      Params p = params_;
      p.q_ptr = static_cast<DT*>(const_cast<void*>(t.q));
      p.o_ptr = static_cast<DT*>(t.out);
      if constexpr (PAGED) {
        auto* cache = static_cast<DT*>(const_cast<void*>(t.kv_cache));
        p.k_ptr = cache;
        p.v_ptr = cache + v_offset_;
        p.kv_indices = const_cast<int32_t*>(t.kv_indices);
      } else {
        p.k_ptr = static_cast<DT*>(const_cast<void*>(t.k));
        p.v_ptr = static_cast<DT*>(const_cast<void*>(t.v));
      }
      return shape_.causal ? launch_mask<MaskMode::kCausal>(p, shape_.enable_pdl, stream)
                           : launch_mask<MaskMode::kNone>(p, shape_.enable_pdl, stream);
    });
  }

 private:
  template <MaskMode MASK>
  static cudaError_t launch_mask(Params& p, bool enable_pdl, cudaStream_t stream) {
    if constexpr (PAGED) {
      return ::flashinfer::BatchPrefillWithPagedKVCacheDispatched<HEAD_QK, HEAD_VO, MASK, /*LEFT_SLIDING_WINDOW=*/false,
                                                                  /*SAME_SCHEDULE_FOR_ALL_HEADS=*/false, Fa3Variant>(
          p, enable_pdl, stream);
    } else {
      return ::flashinfer::BatchPrefillWithRaggedKVCacheDispatched<HEAD_QK, HEAD_VO, MASK, /*LEFT_SLIDING_WINDOW=*/false,
                                                                   /*SAME_SCHEDULE_FOR_ALL_HEADS=*/false, Fa3Variant>(
          p, enable_pdl, stream);
    }
  }

  PrefillShape shape_;
  DeviceBuffer int_ws_;
  Params params_{};
  int64_t v_offset_ = 0;
};

template <typename T>
std::unique_ptr<PrefillImpl> make_prefill_fa3(const PrefillShape& s, cudaStream_t stream) {
  try {
    const int qk = s.head_dim_qk, vo = s.head_dim_vo;
    if (s.paged) {
#ifndef KBENCH_FI_QUICK_CHECK
      if (qk == 64 && vo == 64) return std::make_unique<PrefillFa3<T, true, 64, 64>>(s, stream);
      if (qk == 256 && vo == 256) return std::make_unique<PrefillFa3<T, true, 256, 256>>(s, stream);
#endif
      if (qk == 128 && vo == 128) return std::make_unique<PrefillFa3<T, true, 128, 128>>(s, stream);
    } else {
#ifndef KBENCH_FI_QUICK_CHECK
      if (qk == 64 && vo == 64) return std::make_unique<PrefillFa3<T, false, 64, 64>>(s, stream);
      if (qk == 256 && vo == 256) return std::make_unique<PrefillFa3<T, false, 256, 256>>(s, stream);
      if (qk == 192 && vo == 128) return std::make_unique<PrefillFa3<T, false, 192, 128>>(s, stream);
#endif
      if (qk == 128 && vo == 128) return std::make_unique<PrefillFa3<T, false, 128, 128>>(s, stream);
    }
  } catch (const ::flashinfer::Error& e) {
    throw std::runtime_error(std::string("flashinfer: fa3 prefill plan failed: ") + e.what());
  }
  throw std::runtime_error(head_dim_error(s.head_dim_qk, s.head_dim_vo));
}

}  // namespace kbench_fi
