// CUTLASS 3.x sm90 GEMMs as kbench's GEMM routines call them: D = A B^T with A [m][k] and B [n][k]
// both k-contiguous (CUTLASS's row-major A and column-major B, the "TN" form its FP8 kernels need),
// D [m][n] row-major, optionally batched (strided), on the TMA warp-specialized cooperative kernels:
//   fp8_blockwise:  e4m3 operands with fp32 block scales (A 1 x 128, B 128 x 128) promoted into the
//                   fp32 accumulators every 128 of k (CUTLASS's FP8 blockwise mainloop);
//   fp8_blockwise_grouped: the same GEMM over `batch` groups of m rows (A [batch * m][k], B
//                   [batch][n][k], D [batch * m][n]) in one launch of CUTLASS's grouped (ptr-array)
//                   kernel, each group found through device arrays of pointers built at plan time;
//   fp8_per_tensor: e4m3 operands, D = (a_scale * b_scale) * acc, the two scales read on the device
//                   by the epilogue (a graph replays whatever scales the inputs hold);
//   bf16:           bf16 operands, D = acc.
// Each configuration is one translation unit (fp8_blockwise_gemm.cu, ...), instantiated for sm_90a
// only. No CUTLASS header leaks from here: callers build without CUTLASS's include path.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "kbench/dtype.hpp"

namespace kbench::backends {

enum class CutlassGemmKind { fp8_blockwise, fp8_blockwise_grouped, fp8_per_tensor, bf16 };

struct CutlassGemmShape {
  int64_t batch = 1;  // matrices (groups), each pointer advancing by its matrix per batch
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  CutlassGemmKind kind = CutlassGemmKind::bf16;
  DType out_dtype = DType::bfloat16;
};

// The k (and B's n) extent of one block scale of the fp8_blockwise kinds.
inline constexpr int64_t kCutlassScaleBlock = 128;

// The block scale layouts the fp8_blockwise kernels read (their "MN-major" configuration, K = k / 128
// blocks) for one matrix: A's scales [K][stride] (a k-block's row scales contiguous), B's scales
// [K][ceil(n / 128)] (the last n-block partial where 128 does not divide n). fp8_blockwise loads A's
// scales by TMA, so its stride is m padded to the 16 bytes TMA needs (round_up(m, 4));
// fp8_blockwise_grouped loads scales float by float (cp.async) and derives each group's layouts from
// m on the device, so its stride is m, and group g's scales follow the g groups before it (at
// g * cutlass_a_block_scale_floats and g * cutlass_b_block_scale_floats).
[[nodiscard]] int64_t cutlass_a_scale_stride(const CutlassGemmShape& shape);
[[nodiscard]] int64_t cutlass_a_block_scale_index(const CutlassGemmShape& shape, int64_t row, int64_t k_block);
[[nodiscard]] int64_t cutlass_b_block_scale_index(const CutlassGemmShape& shape, int64_t n_block, int64_t k_block);
[[nodiscard]] int64_t cutlass_a_block_scale_floats(const CutlassGemmShape& shape);
[[nodiscard]] int64_t cutlass_b_block_scale_floats(const CutlassGemmShape& shape);

// Why the kernels here cannot take this shape (kind, dtypes, the 16-byte alignment their TMA needs,
// whole scale blocks along k), or nullopt. Cheap: CUTLASS's can_implement runs in the constructor.
[[nodiscard]] std::optional<std::string> cutlass_gemm_unsupported(const CutlassGemmShape& shape);

// The pointers of one input set; scales as the kind wants them (null otherwise).
struct CutlassGemmOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  const float* a_scale = nullptr;  // fp8_blockwise kinds: in cutlass_a_block_scale_index's layout
  const float* b_scale = nullptr;
};

// A planned GEMM: CUTLASS's arguments turned into kernel parameters (TMA descriptors, tile
// scheduler) once per input set, its workspace, the kernel's shared-memory attribute, all made here
// (outside timing). Throws std::runtime_error where CUTLASS cannot implement the problem,
// kbench::CudaError for CUDA failures.
class CutlassGemm {
 public:
  CutlassGemm(const CutlassGemmShape& shape, std::span<const CutlassGemmOperands> input_sets, cudaStream_t stream);
  ~CutlassGemm();
  CutlassGemm(CutlassGemm&&) noexcept;
  CutlassGemm& operator=(CutlassGemm&&) noexcept;
  CutlassGemm(const CutlassGemm&) = delete;
  CutlassGemm& operator=(const CutlassGemm&) = delete;

  // Enqueues the GEMM of input set `input_set` on `stream`: a kernel launch from the planned
  // parameters, no allocation, no host synchronisation (capturable in a CUDA graph). Throws
  // std::runtime_error where the launch fails.
  void run(std::size_t input_set, cudaStream_t stream);

  [[nodiscard]] const CutlassGemmShape& shape() const noexcept { return shape_; }

  // One instantiation planned for every input set (cutlass_gemm_kernel.cuh).
  class Kernel {
   public:
    virtual ~Kernel() = default;
    virtual void run(std::size_t input_set, cudaStream_t stream) = 0;
  };

 private:
  CutlassGemmShape shape_;
  std::unique_ptr<Kernel> kernel_;
};

}  // namespace kbench::backends
