// FlashInfer's fa2 batch prefill (PrefillPlan + BatchPrefillWith{Ragged,Paged}KVCacheDispatched from
// flashinfer/attention/prefill.cuh) for one element type and one KV kind; included by
// prefill_fa2_{ragged,paged}_{bf16,fp16}.cu. Instantiates head dims 64/64, 128/128 and 256/256,
// masks none and causal, and the CTA_TILE_Q values FA2DetermineCtaTileQ can pick for them
// (16, 64, and 128 below head dim 256) -- the set FlashInfer's own kernel_inst.jinja instantiates.
// The paged kernels take SAME_KV_STRIDES = true: kbench's interleaved cache gives K and V the same
// strides. The tensor-core decode path is this paged kernel with one query per request.
#pragma once

#include <flashinfer/attention/default_prefill_params.cuh>
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/prefill.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>
#include <flashinfer/fastdiv.cuh>
#include <flashinfer/page.cuh>
#include <flashinfer/utils.cuh>

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

// FlashInfer's Python renders DefaultAttention<use_custom_mask, use_sliding_window,
// use_logits_soft_cap, use_alibi>; here all four are off (mask none or causal only).
using Fa2Variant = ::flashinfer::DefaultAttention<false, false, false, false>;
constexpr auto kFa2NoRope = ::flashinfer::PosEncodingMode::kNone;

template <typename T, bool PAGED, uint32_t HEAD_DIM>
class PrefillFa2 final : public PrefillImpl {
 public:
  using Params = std::conditional_t<PAGED, ::flashinfer::BatchPrefillPagedParams<T, T, T, int32_t>,
                                    ::flashinfer::BatchPrefillRaggedParams<T, T, T, int32_t>>;

  PrefillFa2(const PrefillShape& s, cudaStream_t stream)
      : shape_(s),
        view_(kbench::backends::flashinfer::detail::paged_cache_view(s.num_kv_heads, s.page_size, HEAD_DIM,
                                                                     s.layout)) {
    std::vector<int32_t> qo_indptr_h = s.qo_indptr, kv_indptr_h = s.kv_indptr;  // plan takes int32_t*
    const auto batch = static_cast<uint32_t>(s.batch);
    const auto total_rows = static_cast<uint32_t>(qo_indptr_h[batch]);
    const auto hq = static_cast<uint32_t>(s.num_qo_heads), hkv = static_cast<uint32_t>(s.num_kv_heads);
    const uint32_t page_size = PAGED ? static_cast<uint32_t>(s.page_size) : 1u;
    // As FlashInfer's Python plan(): no CUDA-graph padding (the plan is fixed for this object, so a
    // captured run() replays it as is), window_left -1, fixed_split_size -1, split-KV allowed, no
    // colocated CTAs, no uniform_q_len; sizeof(DTypeO) 2, kv_dtype_bytes = sizeof(DTypeKV).
    size_t float_bytes = 0, int_bytes = 0;
    plan_check(::flashinfer::PrefillPlanWorkspaceSize<int32_t>(
                   float_bytes, int_bytes, qo_indptr_h.data(), kv_indptr_h.data(), total_rows, batch, hq, hkv,
                   HEAD_DIM, HEAD_DIM, page_size, /*enable_cuda_graph=*/false, /*sizeof_dtype_o=*/2,
                   /*window_left=*/-1, /*fixed_split_size=*/-1, /*disable_split_kv=*/false,
                   /*num_colocated_ctas=*/0, /*uniform_q_len=*/0, stream, /*kv_dtype_bytes=*/sizeof(T)),
               "PrefillPlanWorkspaceSize");
    float_ws_ = DeviceBuffer(float_bytes + kbench::backends::flashinfer::detail::kWorkspaceSlack);
    int_ws_ = DeviceBuffer(int_bytes + kbench::backends::flashinfer::detail::kWorkspaceSlack);
    {
      PinnedBuffer pinned(int_ws_.bytes());
      plan_check(::flashinfer::PrefillPlan<int32_t>(
                     float_ws_.get(), float_ws_.bytes(), int_ws_.get(), pinned.get(), int_ws_.bytes(), plan_,
                     qo_indptr_h.data(), kv_indptr_h.data(), total_rows, batch, hq, hkv, HEAD_DIM, HEAD_DIM,
                     page_size, /*enable_cuda_graph=*/false, /*sizeof_dtype_o=*/2, /*window_left=*/-1,
                     /*fixed_split_size=*/-1, /*disable_split_kv=*/false, /*num_colocated_ctas=*/0,
                     /*uniform_q_len=*/0, stream, /*kv_dtype_bytes=*/sizeof(T)),
                 "PrefillPlan");
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // the plan's copy reads `pinned`
    }
    if (plan_.cta_tile_q != 16 && plan_.cta_tile_q != 64 && !(plan_.cta_tile_q == 128 && HEAD_DIM < 256)) {
      throw std::runtime_error("flashinfer: the fa2 plan chose cta_tile_q " + std::to_string(plan_.cta_tile_q) +
                               ", which is not instantiated");
    }
    // The fields BatchPrefillWith{Ragged,Paged}KVCacheRun (csrc/batch_prefill*.cu) set.
    void* int_base = int_ws_.get();
    void* float_base = float_ws_.get();
    Params& p = params_;
    p.lse = nullptr;
    p.maybe_custom_mask = nullptr;
    p.maybe_mask_indptr = nullptr;
    p.maybe_alibi_slopes = nullptr;
    p.group_size = ::flashinfer::uint_fastdiv(hq / hkv);
    p.num_qo_heads = hq;
    p.q_stride_n = static_cast<decltype(p.q_stride_n)>(s.num_qo_heads * HEAD_DIM);
    p.q_stride_h = HEAD_DIM;
    if constexpr (!PAGED) {
      p.num_kv_heads = hkv;
      p.k_stride_n = hkv * HEAD_DIM;
      p.k_stride_h = HEAD_DIM;
      p.v_stride_n = hkv * HEAD_DIM;
      p.v_stride_h = HEAD_DIM;
    }
    p.k_sf_stride_page = p.k_sf_stride_n = p.k_sf_stride_h = 0;
    p.v_sf_stride_page = p.v_sf_stride_n = p.v_sf_stride_h = 0;
    p.window_left = -1;
    p.logits_soft_cap = 0.f;
    p.sm_scale = s.sm_scale;
    p.rope_rcp_scale = 1.f;
    p.rope_rcp_theta = 1.f / 1e4f;
    p.request_indices = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan_.request_indices_offset);
    p.qo_tile_indices = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan_.qo_tile_indices_offset);
    p.kv_tile_indices = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan_.kv_tile_indices_offset);
    p.o_indptr = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan_.o_indptr_offset);
    p.kv_chunk_size_ptr = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan_.kv_chunk_size_ptr_offset);
    p.merge_indptr = nullptr;
    if (plan_.split_kv) {
      p.merge_indptr = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan_.merge_indptr_offset);
      tmp_v_ = ::flashinfer::GetPtrFromBaseOffset<T>(float_base, plan_.v_offset);
      tmp_s_ = ::flashinfer::GetPtrFromBaseOffset<float>(float_base, plan_.s_offset);
    }
    p.block_valid_mask = nullptr;  // only with enable_cuda_graph
    p.total_num_rows = nullptr;    // only with enable_cuda_graph
    p.max_total_num_rows = static_cast<uint32_t>(plan_.total_num_rows);
    p.padded_batch_size = static_cast<uint32_t>(plan_.padded_batch_size);
    p.partition_kv = false;  // set by the dispatcher from tmp_v
    p.maybe_prefix_len_ptr = nullptr;
    p.maybe_token_pos_in_items_ptr = nullptr;
    p.token_pos_in_items_len = 0;
    p.maybe_max_item_len_ptr = nullptr;
    std::ostringstream os;
    os << "fa2 " << (PAGED ? "paged" : "ragged") << " head_dim " << HEAD_DIM << " cta_tile_q=" << plan_.cta_tile_q
       << " split_kv=" << plan_.split_kv << " padded_batch=" << plan_.padded_batch_size
       << " float_ws=" << float_ws_.bytes() << " int_ws=" << int_ws_.bytes();
    summary = os.str();
  }

  cudaError_t run(const PrefillTensors& t, cudaStream_t stream) const override {
    return launch_guarded([&]() -> cudaError_t {
      Params p = params_;
      p.q = static_cast<T*>(const_cast<void*>(t.q));
      p.o = static_cast<T*>(t.out);
      p.q_indptr = const_cast<int32_t*>(t.qo_indptr);
      if constexpr (PAGED) {
        auto* cache = static_cast<T*>(const_cast<void*>(t.kv_cache));
        p.paged_kv = ::flashinfer::paged_kv_t<T, int32_t>(
            static_cast<uint32_t>(shape_.num_kv_heads), static_cast<uint32_t>(shape_.page_size), HEAD_DIM,
            static_cast<uint32_t>(shape_.batch),
            shape_.layout == kbench::kernels::KvLayout::NHD ? ::flashinfer::QKVLayout::kNHD
                                                            : ::flashinfer::QKVLayout::kHND,
            cache, cache + view_.v_offset, view_.strides, const_cast<int32_t*>(t.kv_indices),
            const_cast<int32_t*>(t.kv_indptr), const_cast<int32_t*>(t.last_page_len));
      } else {
        p.k = static_cast<T*>(const_cast<void*>(t.k));
        p.v = static_cast<T*>(const_cast<void*>(t.v));
        p.kv_indptr = const_cast<int32_t*>(t.kv_indptr);
      }
      return shape_.causal ? launch_mask<MaskMode::kCausal>(p, stream) : launch_mask<MaskMode::kNone>(p, stream);
    });
  }

 private:
  template <MaskMode MASK>
  cudaError_t launch_mask(const Params& p, cudaStream_t stream) const {
    switch (plan_.cta_tile_q) {
      case 16: return launch_tile<MASK, 16>(p, stream);
      case 64: return launch_tile<MASK, 64>(p, stream);
      case 128:
        if constexpr (HEAD_DIM < 256) return launch_tile<MASK, 128>(p, stream);
        return cudaErrorNotSupported;
      default: return cudaErrorNotSupported;
    }
  }
  template <MaskMode MASK, uint32_t CTA_TILE_Q>
  cudaError_t launch_tile(const Params& p, cudaStream_t stream) const {
    if constexpr (PAGED) {
      return ::flashinfer::BatchPrefillWithPagedKVCacheDispatched<
          /*SAME_KV_STRIDES=*/true, CTA_TILE_Q, HEAD_DIM, HEAD_DIM, kFa2NoRope, /*USE_FP16_QK_REDUCTION=*/false,
          MASK, Fa2Variant, Params>(p, tmp_v_, tmp_s_, shape_.enable_pdl, stream);
    } else {
      return ::flashinfer::BatchPrefillWithRaggedKVCacheDispatched<
          CTA_TILE_Q, HEAD_DIM, HEAD_DIM, kFa2NoRope, /*USE_FP16_QK_REDUCTION=*/false, MASK, Fa2Variant, Params>(
          p, tmp_v_, tmp_s_, shape_.enable_pdl, stream);
    }
  }

  PrefillShape shape_;
  kbench::backends::flashinfer::detail::PagedCacheView view_;
  DeviceBuffer float_ws_, int_ws_;
  ::flashinfer::PrefillPlanInfo plan_;
  Params params_{};
  T* tmp_v_ = nullptr;
  float* tmp_s_ = nullptr;
};

template <typename T, bool PAGED>
std::unique_ptr<PrefillImpl> make_prefill_fa2(const PrefillShape& s, cudaStream_t stream) {
  if (s.head_dim_qk != s.head_dim_vo) throw std::runtime_error(head_dim_error(s.head_dim_qk, s.head_dim_vo));
  try {
    switch (s.head_dim_qk) {
#ifndef KBENCH_FI_QUICK_CHECK
      case 64: return std::make_unique<PrefillFa2<T, PAGED, 64>>(s, stream);
      case 256: return std::make_unique<PrefillFa2<T, PAGED, 256>>(s, stream);
#endif
      case 128: return std::make_unique<PrefillFa2<T, PAGED, 128>>(s, stream);
      default: throw std::runtime_error(head_dim_error(s.head_dim_qk, s.head_dim_vo));
    }
  } catch (const ::flashinfer::Error& e) {
    throw std::runtime_error(std::string("flashinfer: fa2 prefill plan failed: ") + e.what());
  }
}

}  // namespace kbench_fi
