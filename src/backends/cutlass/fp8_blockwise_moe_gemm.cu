// The MoE GEMM (cutlass_moe_gemm.hpp): CUTLASS's grouped FP8 blockwise kernel
// (Sm90GroupedBlockwiseGemm) with K-major block scales, its per-group arrays written on the device
// from row_offsets at every run, and launched without host problem sizes: CUTLASS's group tile
// scheduler then launches a persistent grid of the SM count (sm90_tile_scheduler_group.hpp,
// get_tiled_cta_shape_mnl) and every CTA walks the groups' tiles from the device sizes, an empty
// group having none.
#include "backends/cutlass/cutlass_moe_gemm.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backends/cutlass/cutlass_gemm_kernel.cuh"
#include "kbench/cuda_check.hpp"

namespace kbench::backends {

class CutlassMoeGemm::Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void run(const CutlassMoeGemmOperands& operands, cudaStream_t stream) = 0;
};

namespace {

namespace ck = cutlass_kernels;

// The scales as the MoE pipeline writes them, K-major: A's (row, k-block) at row * (k / 128) +
// k-block, B's (n-block, k-block) at n-block * (k / 128) + k-block. CUTLASS's sm90 ptr-array
// mainloop takes either major (it reads the scales through these layouts, by cp.async).
using MoeScaleConfig = ck::BlockScaleConfig<cute::GMMA::Major::K>;
using ProblemSize = ck::GroupedProblemShape::UnderlyingProblemShape;
using ElementAB = cutlass::float_e4m3_t;

template <class ElementD>
using MoeGemm = ck::Sm90GroupedBlockwiseGemm<ElementD, MoeScaleConfig>;

// The per-group arrays CUTLASS's grouped kernel reads, `groups` entries each, in device memory.
template <class ElementD>
struct GroupArrays {
  using StrideA = typename MoeGemm<ElementD>::Kernel::InternalStrideA;
  using StrideB = typename MoeGemm<ElementD>::Kernel::InternalStrideB;
  using StrideD = typename MoeGemm<ElementD>::Kernel::InternalStrideD;
  using LayoutSFA = decltype(MoeScaleConfig::deduce_layoutSFA());
  using LayoutSFB = decltype(MoeScaleConfig::deduce_layoutSFB());

  ProblemSize* problem_sizes = nullptr;
  const ElementAB** a = nullptr;
  const ElementAB** b = nullptr;
  ElementD** d = nullptr;
  const float** a_scales = nullptr;
  const float** b_scales = nullptr;
  StrideA* a_strides = nullptr;
  StrideB* b_strides = nullptr;
  StrideD* d_strides = nullptr;
  LayoutSFA* a_scale_layouts = nullptr;
  LayoutSFB* b_scale_layouts = nullptr;
};

// Group g's entries, one thread per group: its rows of A, D and A's scales from row_offsets[g], its
// B and B's scales after the g experts' before it. The strides are the same every run; writing them
// here keeps all of a group's entries in one place.
template <class ElementD>
__global__ void write_group_arrays(GroupArrays<ElementD> arrays, CutlassMoeGemmOperands operands, int groups, int n,
                                   int k) {
  const int g = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (g >= groups) return;
  const int32_t first_row = operands.row_offsets[g];
  const ProblemSize size{operands.row_offsets[g + 1] - first_row, n, k};
  const int64_t k_blocks = k / kCutlassScaleBlock;
  arrays.problem_sizes[g] = size;
  arrays.a[g] = static_cast<const ElementAB*>(operands.a) + int64_t{first_row} * k;
  arrays.b[g] = static_cast<const ElementAB*>(operands.b) + int64_t{g} * n * k;
  arrays.d[g] = static_cast<ElementD*>(operands.d) + int64_t{first_row} * n;
  arrays.a_scales[g] = operands.a_scale + first_row * k_blocks;
  arrays.b_scales[g] = operands.b_scale + int64_t{g} * (n / kCutlassScaleBlock) * k_blocks;
  arrays.a_strides[g] = cute::make_stride(int64_t{k}, cute::_1{}, cute::_0{});
  arrays.b_strides[g] = cute::make_stride(int64_t{k}, cute::_1{}, cute::_0{});
  arrays.d_strides[g] = cute::make_stride(int64_t{n}, cute::_1{}, cute::_0{});
  // The layouts depend on the group's m. This CUTLASS's mainloop derives them from the problem size
  // itself (load_init); its arguments carry them too, so they are kept true.
  arrays.a_scale_layouts[g] = MoeScaleConfig::tile_atom_to_shape_SFA(size);
  arrays.b_scale_layouts[g] = MoeScaleConfig::tile_atom_to_shape_SFB(size);
}

template <class ElementD>
class PlannedMoeGemm final : public CutlassMoeGemm::Kernel {
 public:
  PlannedMoeGemm(const CutlassMoeGemmShape& shape, cudaStream_t stream) : shape_(shape) {
    arrays_.problem_sizes = allocate<ProblemSize>();
    arrays_.a = allocate<const ElementAB*>();
    arrays_.b = allocate<const ElementAB*>();
    arrays_.d = allocate<ElementD*>();
    arrays_.a_scales = allocate<const float*>();
    arrays_.b_scales = allocate<const float*>();
    arrays_.a_strides = allocate<typename Arrays::StrideA>();
    arrays_.b_strides = allocate<typename Arrays::StrideB>();
    arrays_.d_strides = allocate<typename Arrays::StrideD>();
    arrays_.a_scale_layouts = allocate<typename Arrays::LayoutSFA>();
    arrays_.b_scale_layouts = allocate<typename Arrays::LayoutSFB>();

    // No host problem sizes: the grid is sized by the SM count, and nothing is read back.
    const typename Gemm::Arguments arguments{
        cutlass::gemm::GemmUniversalMode::kGrouped,
        {shape.groups, arrays_.problem_sizes, nullptr},
        {arrays_.a, arrays_.a_strides, arrays_.b, arrays_.b_strides, arrays_.a_scales, arrays_.a_scale_layouts,
         arrays_.b_scales, arrays_.b_scale_layouts},
        {{}, nullptr, nullptr, arrays_.d, arrays_.d_strides},
        ck::current_device_hardware()};
    // Without host sizes CUTLASS's can_implement skips the TMA alignment of the rows; it checks them
    // here on sizes every group shares but m (which no alignment involves).
    const std::vector<ProblemSize> representative(static_cast<std::size_t>(shape.groups),
                                                  {static_cast<int>(shape.max_rows), static_cast<int>(shape.n),
                                                   static_cast<int>(shape.k)});
    typename Gemm::Arguments checked = arguments;
    checked.problem_shape.host_problem_shapes = representative.data();
    ck::check_cutlass(Gemm::Device::can_implement(checked), "can_implement");
    gemm_.emplace(std::array{arguments}, stream);
  }

  void run(const CutlassMoeGemmOperands& operands, cudaStream_t stream) override {
    constexpr int kThreads = 128;
    write_group_arrays<ElementD><<<(shape_.groups + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
        arrays_, operands, shape_.groups, static_cast<int>(shape_.n), static_cast<int>(shape_.k));
    KBENCH_CUDA_CHECK(cudaGetLastError());
    gemm_->run(0, stream);
  }

 private:
  using Gemm = MoeGemm<ElementD>;
  using Arrays = GroupArrays<ElementD>;

  // A device array of one T per group, owned here.
  template <class T>
  T* allocate() {
    return buffers_.emplace_back(static_cast<std::size_t>(shape_.groups) * sizeof(T)).template as<T>();
  }

  CutlassMoeGemmShape shape_;
  std::vector<DeviceBuffer> buffers_;
  Arrays arrays_;
  std::optional<ck::PlannedSm90Gemm<typename Gemm::Device>> gemm_;  // its parameters point into arrays_
};

constexpr int64_t kIntMax = 2147483647;

// Why an input set's pointers cannot be taken, or nullopt: TMA loads A and B and stores D from
// 16-byte aligned addresses (each group's first row then is too, n and k being multiples of 128).
std::optional<std::string> operands_unusable(const CutlassMoeGemmOperands& o) {
  for (const void* p : {o.a, o.b, static_cast<const void*>(o.d)}) {
    if (p == nullptr || reinterpret_cast<std::uintptr_t>(p) % 16 != 0) {
      return "kbench's CUTLASS MoE GEMM needs A, B and D at 16-byte aligned addresses (CUTLASS's TMA)";
    }
  }
  if (o.a_scale == nullptr || o.b_scale == nullptr || o.row_offsets == nullptr) {
    return "kbench's CUTLASS MoE GEMM needs both block scales and the row offsets";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> cutlass_moe_gemm_unsupported(const CutlassMoeGemmShape& s) {
  if (s.groups <= 0 || s.max_rows <= 0 || s.n <= 0 || s.k <= 0) return "empty GEMM";
  if (s.out_dtype != DType::bfloat16 && s.out_dtype != DType::float16) {
    return "kbench's CUTLASS MoE GEMM writes bfloat16 or float16, not " + std::string(dtype_name(s.out_dtype));
  }
  // Whole scale blocks along n and k; this also makes the rows CUTLASS's TMA moves 16-byte multiples
  // (k bytes of A and B, 2n bytes of D).
  for (const auto& [name, extent] : {std::pair{"n", s.n}, std::pair{"k", s.k}}) {
    if (extent % kCutlassScaleBlock != 0) {
      return std::string(name) + " " + std::to_string(extent) +
             " is not a multiple of 128 (kbench's CUTLASS MoE GEMM takes whole 128 x 128 scale blocks of B)";
    }
  }
  // CUTLASS's problem sizes and its scale layouts' strides are int.
  const int64_t k_blocks = s.k / kCutlassScaleBlock;
  if (s.n > kIntMax || s.k > kIntMax || s.max_rows > kIntMax / k_blocks ||
      s.n / kCutlassScaleBlock > kIntMax / k_blocks) {
    return "an extent or a scale count over 2^31 - 1 (CUTLASS's int problem sizes)";
  }
  return std::nullopt;
}

CutlassMoeGemm::CutlassMoeGemm(const CutlassMoeGemmShape& shape, std::span<const CutlassMoeGemmOperands> input_sets,
                               cudaStream_t stream)
    : shape_(shape), input_sets_(input_sets.begin(), input_sets.end()) {
  if (const auto reason = cutlass_moe_gemm_unsupported(shape)) throw std::runtime_error(*reason);
  for (const CutlassMoeGemmOperands& operands : input_sets_) {
    if (const auto reason = operands_unusable(operands)) throw std::runtime_error(*reason);
  }
  if (shape.out_dtype == DType::float16) {
    kernel_ = std::make_unique<PlannedMoeGemm<cutlass::half_t>>(shape, stream);
  } else {
    kernel_ = std::make_unique<PlannedMoeGemm<cutlass::bfloat16_t>>(shape, stream);
  }
}

CutlassMoeGemm::~CutlassMoeGemm() = default;
CutlassMoeGemm::CutlassMoeGemm(CutlassMoeGemm&&) noexcept = default;
CutlassMoeGemm& CutlassMoeGemm::operator=(CutlassMoeGemm&&) noexcept = default;

void CutlassMoeGemm::run(std::size_t input_set, cudaStream_t stream) {
  kernel_->run(input_sets_.at(input_set), stream);
}

}  // namespace kbench::backends
