// FlashInfer's CUDA-core paged decode (BatchDecodeWithPagedKVCacheDispatched after DecodePlan), for
// one element type; included by decode_cuda_cores_bf16.cu / _fp16.cu. Instantiates head dims 64,
// 128 and 256, each for every GQA group size FlashInfer's DISPATCH_GQA_GROUP_SIZE takes
// (1, 2, 3, 4, 6, 8, 16).
#pragma once

#include <flashinfer/attention/decode.cuh>
#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>
#include <flashinfer/page.cuh>
#include <flashinfer/utils.cuh>

#include <memory>
#include <sstream>
#include <vector>

#include "backends/flashinfer/fi_plan_util.cuh"

namespace kbench_fi {

using kbench::DeviceBuffer;
using kbench::backends::flashinfer::DecodeShape;
using kbench::backends::flashinfer::DecodeTensors;
using kbench::backends::flashinfer::detail::DecodeImpl;
using kbench::backends::flashinfer::detail::PinnedBuffer;

// What FlashInfer's Python renders for decode without soft cap, window or ALiBi:
// DefaultAttention<use_custom_mask=false, use_sliding_window=false, use_logits_soft_cap=false, use_alibi=false>.
using DecodeVariant = ::flashinfer::DefaultAttention<false, false, false, false>;
constexpr auto kNoRope = ::flashinfer::PosEncodingMode::kNone;

template <typename T, uint32_t HEAD_DIM>
class DecodeCudaCores final : public DecodeImpl {
 public:
  using Params = ::flashinfer::BatchDecodeParams<T, T, T, int32_t>;

  DecodeCudaCores(const DecodeShape& s, cudaStream_t stream)
      : shape_(s),
        view_(kbench::backends::flashinfer::detail::paged_cache_view(s.num_kv_heads, s.page_size, s.head_dim,
                                                                     s.layout)) {
    std::vector<int32_t> indptr_h = s.indptr;  // FlashInfer's plan takes a non-const host pointer
    const auto batch = static_cast<uint32_t>(s.batch);
    const auto num_qo_heads = static_cast<uint32_t>(s.num_qo_heads);
    const auto page_size = static_cast<uint32_t>(s.page_size);
    ::flashinfer::DecodePlanInfo plan;
    DISPATCH_GQA_GROUP_SIZE(num_qo_heads / s.num_kv_heads, GROUP_SIZE, {
      auto work_estimation = ::flashinfer::BatchDecodeWithPagedKVCacheWorkEstimationDispatched<
          GROUP_SIZE, HEAD_DIM, kNoRope, DecodeVariant, Params>;
      // The sizes the plan will allocate (count-only pass of the same DecodePlanImpl).
      size_t float_bytes = 0, int_bytes = 0;
      plan_check(::flashinfer::DecodePlanWorkspaceSize<HEAD_DIM, kNoRope, DecodeVariant, Params>(
                     float_bytes, int_bytes, indptr_h.data(), batch, num_qo_heads, page_size,
                     /*enable_cuda_graph=*/false, stream, work_estimation),
                 "DecodePlanWorkspaceSize");
      float_ws_ = DeviceBuffer(float_bytes + kbench::backends::flashinfer::detail::kWorkspaceSlack);
      int_ws_ = DeviceBuffer(int_bytes + kbench::backends::flashinfer::detail::kWorkspaceSlack);
      PinnedBuffer pinned(int_ws_.bytes());
      plan_check(::flashinfer::DecodePlan<HEAD_DIM, kNoRope, DecodeVariant, Params>(
                     float_ws_.get(), float_ws_.bytes(), int_ws_.get(), pinned.get(), int_ws_.bytes(), plan,
                     indptr_h.data(), batch, num_qo_heads, page_size, /*enable_cuda_graph=*/false, stream,
                     work_estimation),
                 "DecodePlan");
      // The plan's cudaMemcpyAsync reads `pinned`, freed at the end of this scope.
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    });
    // What BatchDecodeWithPagedKVCacheRun (csrc/batch_decode.cu) reads from the plan.
    void* int_base = int_ws_.get();
    void* float_base = float_ws_.get();
    params_.num_qo_heads = num_qo_heads;
    params_.q_stride_n = s.num_qo_heads * s.head_dim;
    params_.q_stride_h = s.head_dim;
    params_.window_left = -1;
    params_.logits_soft_cap = 0.f;
    params_.sm_scale = s.sm_scale;
    params_.rope_rcp_scale = 1.f;
    params_.rope_rcp_theta = 1.f / 1e4f;
    params_.lse = nullptr;
    params_.request_indices = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.request_indices_offset);
    params_.kv_tile_indices = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.kv_tile_indices_offset);
    params_.o_indptr = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.o_indptr_offset);
    params_.kv_chunk_size_ptr = ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, plan.kv_chunk_size_ptr_offset);
    params_.block_valid_mask = nullptr;  // only with enable_cuda_graph
    params_.padded_batch_size = static_cast<uint32_t>(plan.padded_batch_size);
    params_.partition_kv = false;  // set by the dispatcher from tmp_v
    if (plan.split_kv) {
      tmp_v_ = ::flashinfer::GetPtrFromBaseOffset<T>(float_base, plan.v_offset);
      tmp_s_ = ::flashinfer::GetPtrFromBaseOffset<float>(float_base, plan.s_offset);
    }
    std::ostringstream os;
    os << "cuda_cores head_dim " << HEAD_DIM << " split_kv=" << plan.split_kv
       << " padded_batch=" << plan.padded_batch_size << " float_ws=" << float_ws_.bytes()
       << " int_ws=" << int_ws_.bytes();
    summary = os.str();
  }

  cudaError_t run(const DecodeTensors& t, cudaStream_t stream) const override {
    return launch_guarded([&]() -> cudaError_t {
      Params p = params_;
      auto* cache = static_cast<T*>(const_cast<void*>(t.kv_cache));
      p.q = static_cast<T*>(const_cast<void*>(t.q));
      p.o = static_cast<T*>(t.out);
      p.paged_kv = ::flashinfer::paged_kv_t<T, int32_t>(
          static_cast<uint32_t>(shape_.num_kv_heads), static_cast<uint32_t>(shape_.page_size), HEAD_DIM,
          static_cast<uint32_t>(shape_.batch),
          shape_.layout == kbench::kernels::KvLayout::NHD ? ::flashinfer::QKVLayout::kNHD
                                                          : ::flashinfer::QKVLayout::kHND,
          cache, cache + view_.v_offset, view_.strides, const_cast<int32_t*>(t.indices),
          const_cast<int32_t*>(t.indptr), const_cast<int32_t*>(t.last_page_len));
      return ::flashinfer::BatchDecodeWithPagedKVCacheDispatched<HEAD_DIM, kNoRope, DecodeVariant>(
          p, tmp_v_, tmp_s_, shape_.enable_pdl, stream);
    });
  }

 private:
  DecodeShape shape_;
  kbench::backends::flashinfer::detail::PagedCacheView view_;
  DeviceBuffer float_ws_, int_ws_;
  Params params_{};
  T* tmp_v_ = nullptr;
  float* tmp_s_ = nullptr;
};

template <typename T>
std::unique_ptr<DecodeImpl> make_decode_cuda_cores(const DecodeShape& s, cudaStream_t stream) {
  try {
    switch (s.head_dim) {
      case 64: return std::make_unique<DecodeCudaCores<T, 64>>(s, stream);
      case 128: return std::make_unique<DecodeCudaCores<T, 128>>(s, stream);
      case 256: return std::make_unique<DecodeCudaCores<T, 256>>(s, stream);
      default: throw std::runtime_error(head_dim_error(s.head_dim, s.head_dim));
    }
  } catch (const ::flashinfer::Error& e) {
    throw std::runtime_error(std::string("flashinfer: decode plan failed: ") + e.what());
  }
}

}  // namespace kbench_fi
