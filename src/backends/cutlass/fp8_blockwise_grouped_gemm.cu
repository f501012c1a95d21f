// The fp8_blockwise_grouped configuration: fp8_blockwise's GEMM for every group of a grouped GEMM in
// one launch of CUTLASS's ptr-array grouped kernel (Sm90GroupedBlockwiseGemm), with the scales of
// the fp8_blockwise kinds (MN-major). The kernel finds each group's operands, strides and problem
// size in device arrays, built here once per input set (outside timing). It derives each group's
// scale layouts from its m, so A's scale rows are m apart, unpadded, whatever m is.
#include <cstddef>
#include <cstring>

#include "backends/cutlass/cutlass_gemm_kernel.cuh"

namespace kbench::backends::cutlass_kernels {
namespace {

using cute::_1;

using ProblemSize = GroupedProblemShape::UnderlyingProblemShape;

// Every group's strides are equal here.
template <class ElementD>
using GroupedGemm = Sm90GroupedBlockwiseGemm<ElementD, BlockwiseScaleConfig>;

// Arrays staged on the host for one device allocation, each at a 16-byte aligned offset: where an
// array will lie is known as it is added, so arguments can point into the allocation it becomes.
class ArrayStaging {
 public:
  template <class T>
  struct Place {
    std::size_t offset = 0;
    [[nodiscard]] T* in(const DeviceBuffer& device) const {
      return reinterpret_cast<T*>(static_cast<std::byte*>(device.get()) + offset);
    }
  };

  template <class T>
  Place<T> add(const std::vector<T>& values) {
    const std::size_t offset = (bytes_.size() + 15) / 16 * 16;
    bytes_.resize(offset + values.size() * sizeof(T));
    std::memcpy(bytes_.data() + offset, values.data(), values.size() * sizeof(T));
    return {offset};
  }

  [[nodiscard]] DeviceBuffer upload(cudaStream_t stream) const {
    DeviceBuffer device(bytes_.size());
    KBENCH_CUDA_CHECK(cudaMemcpyAsync(device.get(), bytes_.data(), bytes_.size(), cudaMemcpyHostToDevice, stream));
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));  // the staging goes out of scope
    return device;
  }

 private:
  std::vector<std::byte> bytes_;
};

// Group g's pointer: `first` advanced past g groups of `group_elements`.
template <class T>
std::vector<T*> group_pointers(T* first, int64_t groups, int64_t group_elements) {
  std::vector<T*> pointers;
  for (int64_t g = 0; g < groups; ++g) pointers.push_back(first + g * group_elements);
  return pointers;
}

// What one input set's arguments point to, kept while its parameters are launched: the per-group
// arrays on the device, and the problem sizes on the host too, which CUTLASS reads at every launch to
// size the persistent grid (no more CTAs than the groups have tiles). Moves keep both in place.
struct GroupArrays {
  DeviceBuffer device;
  std::vector<ProblemSize> host_problem_sizes;
};

// Input set `o`'s arguments, its per-group arrays built into `arrays`: group g's A [m][k], B [n][k]
// and D [m][n] after the g matrices before it, its scales after the g groups' before it (each group's
// in the layouts of cutlass_a_block_scale_index and cutlass_b_block_scale_index).
template <class ElementD, class Gemm = GroupedGemm<ElementD>>
typename Gemm::Arguments grouped_arguments(const CutlassGemmShape& s, const CutlassGemmOperands& o,
                                           const cutlass::KernelHardwareInfo& hardware, GroupArrays& arrays,
                                           cudaStream_t stream) {
  using ElementAB = const cutlass::float_e4m3_t;
  using StrideA = typename Gemm::Kernel::InternalStrideA;
  using StrideB = typename Gemm::Kernel::InternalStrideB;
  using StrideD = typename Gemm::Kernel::InternalStrideD;
  const auto groups = static_cast<std::size_t>(s.batch);
  const ProblemSize problem_size{static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k)};
  const StrideA a_stride = cute::make_stride(s.k, _1{}, cute::_0{});
  const StrideB b_stride = cute::make_stride(s.k, _1{}, cute::_0{});
  const StrideD d_stride = cute::make_stride(s.n, _1{}, cute::_0{});
  // The kernel derives the scale layouts from each group's problem size; CUTLASS's arguments carry them too.
  const BlockwiseLayoutSFA a_scale_layout = BlockwiseScaleConfig::tile_atom_to_shape_SFA(problem_size);
  const BlockwiseLayoutSFB b_scale_layout = BlockwiseScaleConfig::tile_atom_to_shape_SFB(problem_size);

  ArrayStaging staging;
  const auto sizes = staging.add(std::vector<ProblemSize>(groups, problem_size));
  const auto a = staging.add(group_pointers(static_cast<ElementAB*>(o.a), s.batch, s.m * s.k));
  const auto b = staging.add(group_pointers(static_cast<ElementAB*>(o.b), s.batch, s.n * s.k));
  const auto d = staging.add(group_pointers(static_cast<ElementD*>(o.d), s.batch, s.m * s.n));
  const auto a_scales = staging.add(group_pointers(o.a_scale, s.batch, cutlass_a_block_scale_floats(s)));
  const auto b_scales = staging.add(group_pointers(o.b_scale, s.batch, cutlass_b_block_scale_floats(s)));
  const auto a_strides = staging.add(std::vector<StrideA>(groups, a_stride));
  const auto b_strides = staging.add(std::vector<StrideB>(groups, b_stride));
  const auto d_strides = staging.add(std::vector<StrideD>(groups, d_stride));
  const auto a_scale_layouts = staging.add(std::vector<BlockwiseLayoutSFA>(groups, a_scale_layout));
  const auto b_scale_layouts = staging.add(std::vector<BlockwiseLayoutSFB>(groups, b_scale_layout));
  arrays.device = staging.upload(stream);
  arrays.host_problem_sizes.assign(groups, problem_size);

  const DeviceBuffer& on = arrays.device;
  return {cutlass::gemm::GemmUniversalMode::kGrouped,
          {static_cast<int>(s.batch), sizes.in(on), arrays.host_problem_sizes.data()},
          {a.in(on), a_strides.in(on), b.in(on), b_strides.in(on), a_scales.in(on), a_scale_layouts.in(on),
           b_scales.in(on), b_scale_layouts.in(on)},
          {{}, nullptr, nullptr, d.in(on), d_strides.in(on)},
          hardware};
}

// The planned parameters of every input set, with the arrays they point to.
template <class Gemm>
class PlannedGroupedGemm final : public CutlassGemm::Kernel {
 public:
  PlannedGroupedGemm(std::vector<GroupArrays> arrays, std::span<const typename Gemm::Arguments> input_sets,
                     cudaStream_t stream)
      : arrays_(std::move(arrays)), gemm_(input_sets, stream) {}

  void run(std::size_t input_set, cudaStream_t stream) override { gemm_.run(input_set, stream); }

 private:
  std::vector<GroupArrays> arrays_;
  PlannedSm90Gemm<typename Gemm::Device> gemm_;
};

template <class ElementD>
PlannedKernel plan(const CutlassGemmShape& s, std::span<const CutlassGemmOperands> input_sets, cudaStream_t stream) {
  using Gemm = GroupedGemm<ElementD>;
  const cutlass::KernelHardwareInfo hardware = current_device_hardware();
  std::vector<GroupArrays> arrays(input_sets.size());
  std::vector<typename Gemm::Arguments> arguments;
  for (std::size_t i = 0; i < input_sets.size(); ++i) {
    arguments.push_back(grouped_arguments<ElementD>(s, input_sets[i], hardware, arrays[i], stream));
  }
  return std::make_unique<PlannedGroupedGemm<Gemm>>(std::move(arrays), arguments, stream);
}

}  // namespace

PlannedKernel plan_fp8_blockwise_grouped(const CutlassGemmShape& shape, std::span<const CutlassGemmOperands> input_sets,
                                         cudaStream_t stream) {
  return shape.out_dtype == DType::float16 ? plan<cutlass::half_t>(shape, input_sets, stream)
                                           : plan<cutlass::bfloat16_t>(shape, input_sets, stream);
}

}  // namespace kbench::backends::cutlass_kernels
