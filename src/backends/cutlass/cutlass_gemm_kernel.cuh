// What the CUTLASS GEMM translation units share: the sm90 kernel assembled from CUTLASS's collective
// builders (TMA warp-specialized cooperative mainloop and epilogue, persistent tile scheduler), the
// stride and hardware arguments every configuration passes, and the planned kernel that turns one
// set of arguments per input set into kernel parameters once and then only launches.
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
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/kernel_hardware_info.h"

#include "backends/cutlass/cutlass_gemm_kernels.hpp"
#include "kbench/device_buffer.hpp"

namespace kbench::backends::cutlass_kernels {

// The widest TMA access (16 bytes) in elements of T: the alignment kbench's shapes guarantee
// (cutlass_gemm_unsupported).
template <class T>
inline constexpr int kTmaAlignment = 16 / static_cast<int>(sizeof(T));

// An sm90 GEMM D[m][n] = epilogue(sum_k A[m][k] B[n][k]) over L batches, no source matrix C.
// LayoutA and LayoutB are CUTLASS's layout tags, or (tag, scale layout) tuples for the blockwise
// mainloop; the epilogue's schedule follows the mainloop's (both cooperative).
template <class ElementAB, class LayoutA, class LayoutB, class ElementD, class TileShape, class ClusterShape,
          class MainloopSchedule, class Fusion>
struct Sm90Gemm {
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor,
      kTmaAlignment<ElementD>, ElementD, cutlass::layout::RowMajor, kTmaAlignment<ElementD>,
      cutlass::epilogue::TmaWarpSpecializedCooperative, Fusion>::CollectiveOp;
  // The pipeline takes the shared memory the epilogue leaves.
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementAB, LayoutA, kTmaAlignment<ElementAB>, ElementAB,
      LayoutB, kTmaAlignment<ElementAB>, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename Epilogue::SharedStorage))>,
      MainloopSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue>;
  using Device = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
  using Arguments = typename Device::Arguments;
  using FusionArguments = decltype(std::declval<typename Epilogue::Arguments>().thread);

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

// The current device and its SM count, which the persistent tile scheduler sizes its grid by
// (queried here once rather than by CUTLASS per input set).
inline cutlass::KernelHardwareInfo current_device_hardware() {
  cutlass::KernelHardwareInfo hardware;
  KBENCH_CUDA_CHECK(cudaGetDevice(&hardware.device_id));
  hardware.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(hardware.device_id);
  return hardware;
}

// One instantiation with its kernel parameters planned per input set and one workspace they share
// (the launches of one operation are ordered on its stream).
template <class Gemm>
class PlannedSm90Gemm final : public CutlassGemm::Kernel {
 public:
  PlannedSm90Gemm(std::span<const typename Gemm::Arguments> input_sets, cudaStream_t stream) {
    std::size_t workspace_bytes = 0;
    for (const auto& arguments : input_sets) {
      check(Gemm::can_implement(arguments), "can_implement");
      workspace_bytes = std::max(workspace_bytes, Gemm::get_workspace_size(arguments));
    }
    workspace_ = DeviceBuffer(workspace_bytes);
    Gemm gemm;
    for (const auto& arguments : input_sets) {
      check(gemm.initialize(arguments, workspace_.get(), stream), "initialize");
      params_.push_back(gemm.params());
    }
  }

  void run(std::size_t input_set, cudaStream_t stream) override {
    check(Gemm::run(params_.at(input_set), stream), "run");  // the launch's CUDA error included
  }

 private:
  static void check(cutlass::Status status, const char* step) {
    if (status != cutlass::Status::kSuccess) {
      throw std::runtime_error(std::string("CUTLASS's ") + step + " failed: " + cutlass::cutlassGetStatusString(status));
    }
  }

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
