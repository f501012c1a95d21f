// What the CUTLASS GEMM translation units share: the sm90 kernel assembled from CUTLASS's collective
// builders (TMA warp-specialized cooperative mainloop and epilogue, persistent tile scheduler), the
// batched GEMM's stride and hardware arguments, the blockwise kinds' scale layouts, the grouped
// (ptr-array) blockwise kernel, and the planned kernel that turns one set of arguments per input set
// into kernel parameters once and then only launches.
// Included by the .cu files of src/backends/cutlass alone (it brings in CUTLASS's headers).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cute/tensor.hpp"
#include "cutlass/cutlass.h"
#include "cutlass/detail/blockwise_scale_layout.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/kernel_hardware_info.h"

#include "backends/cutlass/cutlass_gemm_kernels.hpp"
#include "kbench/device_buffer.hpp"

namespace kbench::backends::cutlass_kernels {

// The widest TMA access (16 bytes) in elements of T: the alignment kbench's shapes guarantee
// (cutlass_gemm_unsupported).
template <class T>
inline constexpr int kTmaAlignment = 16 / static_cast<int>(sizeof(T));

// An sm90 kernel D = epilogue(A B^T), no source matrix C, assembled from CUTLASS's collective
// builders. ProblemShape is CUTLASS's (the batched Shape<M, N, K, L>, or a GroupProblemShape);
// LayoutA, LayoutB and LayoutD are CUTLASS's layout tags (pointers to them where every group has its
// own strides), LayoutA and LayoutB (tag, scale layout) tuples for the blockwise mainloops.
template <class ProblemShape, class ElementAB, class LayoutA, class LayoutB, class ElementD, class LayoutD,
          class TileShape, class ClusterShape, class MainloopSchedule, class EpilogueSchedule, class Fusion>
struct Sm90Kernel {
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, LayoutD, kTmaAlignment<ElementD>, ElementD,
      LayoutD, kTmaAlignment<ElementD>, EpilogueSchedule, Fusion>::CollectiveOp;
  // The pipeline takes the shared memory the epilogue leaves.
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementAB, LayoutA, kTmaAlignment<ElementAB>, ElementAB,
      LayoutB, kTmaAlignment<ElementAB>, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      MainloopSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<ProblemShape, Mainloop, Epilogue>;
  using Device = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  using Arguments = typename Device::Arguments;
  using FusionArguments = decltype(std::declval<typename Epilogue::Arguments>().thread);
};

// An sm90 GEMM D[m][n] = epilogue(sum_k A[m][k] B[n][k]) over L batches, each operand's matrices one
// after another, on the TMA warp-specialized cooperative kernel (the epilogue's schedule follows the
// mainloop's).
template <class ElementAB, class LayoutA, class LayoutB, class ElementD, class TileShape, class ClusterShape,
          class MainloopSchedule, class Fusion>
struct Sm90Gemm {
  using Built = Sm90Kernel<cute::Shape<int, int, int, int>, ElementAB, LayoutA, LayoutB, ElementD,
                           cutlass::layout::RowMajor, TileShape, ClusterShape, MainloopSchedule,
                           cutlass::epilogue::TmaWarpSpecializedCooperative, Fusion>;
  using Device = typename Built::Device;
  using Arguments = typename Built::Arguments;
  using FusionArguments = typename Built::FusionArguments;

  // Input set `o`'s arguments: k-contiguous A [m][k] and B [n][k], row-major D [m][n], each matrix of
  // a batch after the last; `fusion` the epilogue's, `scales` the mainloop's after A's and B's.
  template <class... Scales>
  static Arguments arguments(const CutlassGemmShape& s, const CutlassGemmOperands& o,
                             const cutlass::KernelHardwareInfo& hardware, const FusionArguments& fusion,
                             Scales... scales) {
    return {cutlass::gemm::GemmUniversalMode::kGemm,
            problem(s),
            {static_cast<const ElementAB*>(o.a), cute::make_stride(s.k, cute::_1{}, s.m * s.k),
             static_cast<const ElementAB*>(o.b), cute::make_stride(s.k, cute::_1{}, s.n * s.k), scales...},
            {fusion, nullptr, {}, static_cast<ElementD*>(o.d), cute::make_stride(s.n, cute::_1{}, s.m * s.n)},
            hardware};
  }
  static cute::Shape<int, int, int, int> problem(const CutlassGemmShape& s) {
    return {static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k), static_cast<int>(s.batch)};
  }
};

// DeepSeek-style block scales, A's one per row and 128 of k, B's one per 128 x 128 block, both in
// `major`'s layout.
template <cute::GMMA::Major major>
using BlockScaleConfig =
    cutlass::detail::Sm90BlockwiseScaleConfig<1, kCutlassScaleBlock, kCutlassScaleBlock, major, major>;
// Those of the fp8_blockwise kinds, both MN-major (cutlass_a_block_scale_index and
// cutlass_b_block_scale_index).
using BlockwiseScaleConfig = BlockScaleConfig<cute::GMMA::Major::MN>;
using BlockwiseLayoutSFA = decltype(BlockwiseScaleConfig::deduce_layoutSFA());
using BlockwiseLayoutSFB = decltype(BlockwiseScaleConfig::deduce_layoutSFB());

// The problem sizes (m, n, k) of a grouped GEMM, one per group, in device memory.
using GroupedProblemShape = cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>;

// The FP8 blockwise GEMM of every group of a grouped GEMM in one launch of CUTLASS's ptr-array
// grouped kernel (e4m3 A and B, fp32 block scales in ScaleConfig's layouts promoted into the fp32
// accumulators every 128 of k, 128 x 128 x 128 tiles, 1 x 2 clusters, bf16 or fp16 out): its
// persistent tile scheduler walks the tiles of all groups, and a CTA moving on to another group
// rewrites its TMA descriptors of A, B and D on the device. Each group's operands, strides, scales
// and problem size are read from device arrays (layout tags as pointers: every group has its own
// strides); its mainloop loads the scales float by float (cp.async, rows past m predicated off) in
// layouts it derives from the group's problem size.
template <class ElementD, class ScaleConfig>
using Sm90GroupedBlockwiseGemm =
    Sm90Kernel<GroupedProblemShape, cutlass::float_e4m3_t,
               cute::tuple<cutlass::layout::RowMajor*, decltype(ScaleConfig::deduce_layoutSFA())*>,
               cute::tuple<cutlass::layout::ColumnMajor*, decltype(ScaleConfig::deduce_layoutSFB())*>, ElementD,
               cutlass::layout::RowMajor*, cute::Shape<cute::_128, cute::_128, cute::_128>,
               cute::Shape<cute::_1, cute::_2, cute::_1>,
               cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperativeFP8BlockScaledAccum,
               cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative,
               cutlass::epilogue::fusion::LinearCombination<ElementD, float, void>>;

// The current device and its SM count, which the persistent tile scheduler sizes its grid by
// (queried here once rather than by CUTLASS per input set).
inline cutlass::KernelHardwareInfo current_device_hardware() {
  cutlass::KernelHardwareInfo hardware;
  KBENCH_CUDA_CHECK(cudaGetDevice(&hardware.device_id));
  hardware.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(hardware.device_id);
  return hardware;
}

// Throws std::runtime_error naming CUTLASS's `step` where it did not succeed.
inline void check_cutlass(cutlass::Status status, const char* step) {
  if (status != cutlass::Status::kSuccess) {
    throw std::runtime_error(std::string("CUTLASS's ") + step + " failed: " + cutlass::cutlassGetStatusString(status));
  }
}

// One instantiation with its kernel parameters planned per input set and one workspace they share
// (the launches of one operation are ordered on its stream).
template <class Gemm>
class PlannedSm90Gemm final : public CutlassGemm::Kernel {
 public:
  PlannedSm90Gemm(std::span<const typename Gemm::Arguments> input_sets, cudaStream_t stream) {
    std::size_t workspace_bytes = 0;
    for (const auto& arguments : input_sets) {
      check_cutlass(Gemm::can_implement(arguments), "can_implement");
      workspace_bytes = std::max(workspace_bytes, Gemm::get_workspace_size(arguments));
    }
    workspace_ = DeviceBuffer(workspace_bytes);
    Gemm gemm;
    for (const auto& arguments : input_sets) {
      check_cutlass(gemm.initialize(arguments, workspace_.get(), stream), "initialize");
      params_.push_back(gemm.params());
    }
  }

  void run(std::size_t input_set, cudaStream_t stream) override {
    check_cutlass(Gemm::run(params_.at(input_set), stream), "run");  // the launch's CUDA error included
  }

 private:
  DeviceBuffer workspace_;
  std::vector<typename Gemm::Params> params_;
};

// Plans `Gemm` for every input set, `arguments_of(operands, hardware)` giving a set's arguments.
template <class Gemm, class ArgumentsOf>
PlannedKernel plan_input_sets(std::span<const CutlassGemmOperands> input_sets, cudaStream_t stream,
                              ArgumentsOf arguments_of) {
  const cutlass::KernelHardwareInfo hardware = current_device_hardware();
  std::vector<typename Gemm::Arguments> arguments;
  for (const CutlassGemmOperands& operands : input_sets) arguments.push_back(arguments_of(operands, hardware));
  return std::make_unique<PlannedSm90Gemm<typename Gemm::Device>>(arguments, stream);
}

}  // namespace kbench::backends::cutlass_kernels
