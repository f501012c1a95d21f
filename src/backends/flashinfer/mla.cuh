// FlashInfer's MLA decode for bf16 q, kv and output, head dims 512/64, causal: MLAPlan (scheduler.cuh)
// and either mla::BatchMLAPagedAttention (fa2, mla.cuh) or mla::BatchMLAPageAttentionHopper (fa3,
// mla_hopper.cuh), as FlashInfer's csrc/batch_mla{,_sm90}_{plan,run}.cu drive them; included by
// mla_fa2_bf16.cu and mla_fa3_bf16.cu (the latter built for sm_90a only). MLAPlan stages the int
// workspace in page-locked memory and leaves the copy to its caller (FlashInfer's Python copies
// the staged bytes): the constructor does it, outside timing.
#pragma once

#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/mla_params.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/fastdiv.cuh>

#include <memory>
#include <sstream>
#include <vector>

#include "backends/flashinfer/fi_plan_util.cuh"

namespace kbench_fi {

using kbench::DeviceBuffer;
using kbench::backends::flashinfer::MlaShape;
using kbench::backends::flashinfer::MlaTensors;
using kbench::backends::flashinfer::detail::MlaImpl;
using kbench::backends::flashinfer::detail::PinnedBuffer;

inline constexpr uint32_t kMlaHeadDimCkv = 512;
inline constexpr uint32_t kMlaHeadDimKpe = 64;
// MLAPlan's max_total_num_works: every per-work array of the int workspace holds this many entries.
inline constexpr size_t kMlaMaxWorks = 16384;
// MLAPlan's CTA tile of packed (query row, head) pairs; a cluster has one or two CTAs.
inline constexpr size_t kMlaCtaTileQ = 64;

inline size_t round16(size_t bytes) { return (bytes + 15) / 16 * 16; }

// MLAPlan's int workspace: 9 arrays of kMlaMaxWorks entries and 5 of one entry per SM.
inline size_t mla_int_workspace_bytes(int num_sms) {
  return 9 * round16(kMlaMaxWorks * sizeof(int32_t)) + 5 * round16(static_cast<size_t>(num_sms) * sizeof(int32_t)) +
         kbench::backends::flashinfer::detail::kWorkspaceSlack;
}

// Its float workspace: partial outputs (2-byte) and LSEs for 2 x (clusters x cluster tile) rows, at
// most 2 x num_sms x 64 rows whatever the cluster size.
inline size_t mla_float_workspace_bytes(int num_sms, int head_dim_ckv) {
  const size_t rows = 2 * static_cast<size_t>(num_sms) * kMlaCtaTileQ;
  return round16(rows * 2 * static_cast<size_t>(head_dim_ckv)) + round16(rows * sizeof(float)) +
         kbench::backends::flashinfer::detail::kWorkspaceSlack;
}

// Launch(params, num_blks_x, num_blks_y, stream) runs the kernel (fa2 or fa3) for Params.
template <typename T, class Launch>
class MlaKernel final : public MlaImpl {
 public:
  using Params = ::flashinfer::MLAParams<T, T, T, int32_t>;

  MlaKernel(const MlaShape& s, cudaStream_t stream, const char* name) {
    std::vector<int32_t> qo_indptr_h = s.qo_indptr, kv_indptr_h = s.kv_indptr, kv_len_h = s.kv_len;
    int device = 0, num_sms = 0;
    KBENCH_CUDA_CHECK(cudaGetDevice(&device));
    KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device));
    int_ws_ = DeviceBuffer(mla_int_workspace_bytes(num_sms));
    float_ws_ = DeviceBuffer(mla_float_workspace_bytes(num_sms, s.head_dim_ckv));
    {
      PinnedBuffer pinned(int_ws_.bytes());
      size_t staged_bytes = 0;
      plan_check(::flashinfer::MLAPlan<int32_t>(float_ws_.get(), float_ws_.bytes(), int_ws_.get(), pinned.get(),
                                                int_ws_.bytes(), plan_, staged_bytes, qo_indptr_h.data(),
                                                kv_indptr_h.data(), kv_len_h.data(), static_cast<uint32_t>(s.batch),
                                                static_cast<uint32_t>(s.num_heads),
                                                static_cast<uint32_t>(s.head_dim_ckv), /*causal=*/true, stream),
                 "MLAPlan");
      KBENCH_CUDA_CHECK(cudaMemcpyAsync(int_ws_.get(), pinned.get(), staged_bytes, cudaMemcpyHostToDevice, stream));
      KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // the copy reads `pinned`
    }
    void* int_base = int_ws_.get();
    void* float_base = float_ws_.get();
    Params& p = params_;
    p = Params{};
    const auto at = [&](int64_t offset) { return ::flashinfer::GetPtrFromBaseOffset<int32_t>(int_base, offset); };
    p.q_indptr = at(plan_.q_indptr_offset);
    p.kv_indptr = at(plan_.kv_indptr_offset);
    p.partial_indptr = at(plan_.partial_indptr_offset);
    p.merge_packed_offset_start = at(plan_.merge_packed_offset_start_offset);
    p.merge_packed_offset_end = at(plan_.merge_packed_offset_end_offset);
    p.merge_partial_packed_offset_start = at(plan_.merge_partial_packed_offset_start_offset);
    p.merge_partial_packed_offset_end = at(plan_.merge_partial_packed_offset_end_offset);
    p.merge_partial_stride = at(plan_.merge_partial_stride_offset);
    p.q_len = at(plan_.q_len_offset);
    p.kv_len = at(plan_.kv_len_offset);
    p.q_start = at(plan_.q_start_offset);
    p.kv_start = at(plan_.kv_start_offset);
    p.kv_end = at(plan_.kv_end_offset);
    p.work_indptr = at(plan_.work_indptr_offset);
    p.partial_o = ::flashinfer::GetPtrFromBaseOffset<T>(float_base, plan_.partial_o_offset);
    p.partial_lse = ::flashinfer::GetPtrFromBaseOffset<float>(float_base, plan_.partial_lse_offset);
    p.final_lse = nullptr;  // the routine outputs no LSE
    p.num_heads = ::flashinfer::uint_fastdiv(static_cast<uint32_t>(s.num_heads));
    p.block_size = ::flashinfer::uint_fastdiv(static_cast<uint32_t>(s.page_size));
    const auto h = static_cast<uint32_t>(s.num_heads), ps = static_cast<uint32_t>(s.page_size);
    p.q_nope_stride_n = h * kMlaHeadDimCkv;
    p.q_nope_stride_h = kMlaHeadDimCkv;
    p.q_pe_stride_n = h * kMlaHeadDimKpe;
    p.q_pe_stride_h = kMlaHeadDimKpe;
    p.ckv_stride_page = ps * kMlaHeadDimCkv;
    p.ckv_stride_n = kMlaHeadDimCkv;
    p.kpe_stride_page = ps * kMlaHeadDimKpe;
    p.kpe_stride_n = kMlaHeadDimKpe;
    p.o_stride_n = h * kMlaHeadDimCkv;
    p.o_stride_h = kMlaHeadDimCkv;
    p.sm_scale = s.sm_scale;
    p.ckv_scale = 1.f;
    p.kpe_scale = 1.f;
    p.ckv_scale_arr = nullptr;
    p.return_lse_base_on_e = false;
    std::ostringstream os;
    os << name << " 512/64 causal clusters=" << plan_.num_blks_y << "x" << plan_.num_blks_x
       << " int_ws=" << int_ws_.bytes() << " float_ws=" << float_ws_.bytes();
    summary = os.str();
  }

  cudaError_t run(const MlaTensors& t, cudaStream_t stream) const override {
    return launch_guarded([&]() -> cudaError_t {
      Params p = params_;
      p.q_nope = static_cast<T*>(const_cast<void*>(t.q_nope));
      p.q_pe = static_cast<T*>(const_cast<void*>(t.q_pe));
      p.ckv = static_cast<T*>(const_cast<void*>(t.ckv));
      p.kpe = static_cast<T*>(const_cast<void*>(t.kpe));
      p.kv_indices = const_cast<int32_t*>(t.kv_indices);
      p.final_o = static_cast<T*>(t.out);
      return Launch{}(p, static_cast<uint32_t>(plan_.num_blks_x), static_cast<uint32_t>(plan_.num_blks_y), stream);
    });
  }

 private:
  DeviceBuffer int_ws_, float_ws_;
  ::flashinfer::MLAPlanInfo plan_{};
  Params params_{};
};

template <typename T, class Launch>
std::unique_ptr<MlaImpl> make_mla(const MlaShape& s, cudaStream_t stream, const char* name) {
  try {
    return std::make_unique<MlaKernel<T, Launch>>(s, stream, name);
  } catch (const ::flashinfer::Error& e) {  // not a std::runtime_error: the constructors promise one
    throw std::runtime_error(std::string("flashinfer: ") + name + " MLA plan failed: " + e.what());
  }
}

}  // namespace kbench_fi
