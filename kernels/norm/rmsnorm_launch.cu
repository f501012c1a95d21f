// launch_rmsnorm: parameter validation, choice of path and launch configuration, dispatch to the
// per-dtype translation units. rmsnorm_kernel_available. See rmsnorm_kernel.cuh for the kernels.
//
// Launch configuration (threads_per_row = blockDim.x, rows_per_block = blockDim.y):
//  * Register path (16-byte vectors possible, hidden <= 32768): nvec = hidden / 8 vectors per row.
//      nvec <= 32          : 1 vector per thread, threads_per_row = next power of two >= nvec.
//      nvec <= 2048 (16K)  : 4 vectors per thread (64 bytes of input in flight per thread, ~16
//                            data registers), threads_per_row = ceil(nvec / 4) rounded up to a
//                            power of two (<= 32) or a multiple of 32 (<= 512). hidden 4096 -> 128
//                            threads, 8192 -> 256, 16384 -> 512.
//      nvec <= 4096 (32K)  : 8 vectors per thread, <= 512 threads.
//    bf16 8192: 256-thread blocks at 48 registers per thread (62 with the fused add) leave 5 (4)
//    blocks, i.e. rows, resident per SM: 80 KB (128 KB) of loads in flight per SM, several times
//    the ~25 KB Little's law needs to keep HBM busy (3 TB/s x ~1 us / 132 SMs). One row per
//    block and dynamic block scheduling: 8192 rows over 132 SMs are 62.06 rows per SM, so wave
//    quantization costs at most one row per SM (~1.6%). Few rows (the latency case: 32 x 4096)
//    get one row per block, 128 threads, so the 32 rows spread over 32 SMs.
//  * Vector loop path (16-byte vectors, hidden > 32768): up to 512 threads per row (57 registers:
//    2 blocks per SM), 4 vectors in flight per thread per pass; the second pass re-reads the row
//    (the stored residual for the fused add) from L2: 264 resident rows of 64K bf16 are 34 MB.
//  * Scalar loop path (hidden % 8 != 0, or a pointer / stride not 16-byte aligned; 8 bytes for fp8
//    outputs): up to 1024 threads per row, one element per access, 4 in flight.
//  Rows narrower than 64 threads are packed several per block (blocks of 32..128 threads), so a
//  block is always a whole number of warps and small rows do not waste the per-SM block limit.
#include <cstdint>

#include "kernels/common/kernel_image.hpp"
#include "kernels/norm/rmsnorm.hpp"
#include "kernels/norm/rmsnorm_kernel.cuh"

namespace kbench::kernels {

namespace rmsnorm_detail {
namespace {

bool aligned(const void* p, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(bytes) == 0;
}

// Byte extent [begin, end) of a [rows][hidden] tensor with a row stride.
struct Extent {
  uintptr_t begin;
  uintptr_t end;
};
Extent extent(const void* p, int64_t rows, int64_t stride, int64_t hidden, int64_t elem) {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const int64_t bytes = ((rows - 1) * stride + hidden) * elem;
  return {begin, begin + static_cast<uintptr_t>(bytes)};
}
bool overlap(Extent a, Extent b) { return a.begin < b.end && b.begin < a.end; }

int next_pow2(int64_t v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// threads_per_row for `units` accesses of `per_thread` each: a power of two up to a warp, a
// multiple of 32 beyond, at most `max_threads`.
int threads_for(int64_t units, int64_t per_thread, int64_t max_threads) {
  const int64_t c = ceil_div(units, per_thread);
  if (c <= 32) return next_pow2(c);
  return static_cast<int>(round_up(c, 32) < max_threads ? round_up(c, 32) : max_threads);
}


}  // namespace

Plan make_plan(const RmsNormParams& p) {
  const bool fused = p.residual != nullptr;
  const auto out_size = static_cast<int64_t>(dtype_size(p.out_dtype));
  const int64_t out_vec_bytes = 8 * out_size;
  const bool vector = p.hidden % 8 == 0 && aligned(p.input, 16) && aligned(p.weight, 16) &&
                      aligned(p.output, out_vec_bytes) && (p.input_stride * 2) % 16 == 0 &&
                      (p.output_stride * out_size) % out_vec_bytes == 0 &&
                      (!fused || (aligned(p.residual, 16) && (p.residual_stride * 2) % 16 == 0));
  Plan plan;
  if (vector && p.hidden <= kRegisterPathMaxHidden) {
    const int64_t nvec = p.hidden / 8;
    plan.path = Path::kRegisters;
    if (nvec <= 32) {
      plan.vpt = 1;
    } else if (nvec <= 4 * 512) {
      plan.vpt = 4;
    } else {
      plan.vpt = 8;
    }
    plan.threads_per_row = threads_for(nvec, plan.vpt, 512);
  } else if (vector) {
    plan.path = Path::kLoopVector;
    plan.threads_per_row = threads_for(p.hidden / 8, 4, 512);
  } else {
    plan.path = Path::kLoopScalar;
    plan.threads_per_row = threads_for(p.hidden, 4, 1024);
  }

  plan.rows_per_block = 1;
  if (plan.threads_per_row < 64) {
    // Whole warps per block (the shuffles use full masks), at most 128 threads, but keep at
    // least ~2 blocks per SM when there are few rows.
    const int64_t min_rows = 32 / plan.threads_per_row > 1 ? 32 / plan.threads_per_row : 1;
    const int64_t max_rows = 128 / plan.threads_per_row;
    int64_t want = ceil_div(p.rows, 2 * static_cast<int64_t>(current_sm_count()));
    want = want < min_rows ? min_rows : (want > max_rows ? max_rows : want);
    plan.rows_per_block = static_cast<int>(round_up(want, min_rows));
  }
  plan.blocks = ceil_div(p.rows, plan.rows_per_block);
  return plan;
}

bool params_valid(const RmsNormParams& p) {
  if (p.in_dtype != DType::bfloat16 && p.in_dtype != DType::float16) return false;
  if (p.out_dtype != p.in_dtype && p.out_dtype != DType::fp8_e4m3 && p.out_dtype != DType::fp8_e5m2) return false;
  if (p.hidden <= 0 || p.rows < 0) return false;
  if (p.input == nullptr || p.weight == nullptr || p.output == nullptr) return false;
  const bool fused = p.residual != nullptr;
  if (p.silu && (fused || p.out_dtype != p.in_dtype)) return false;
  if (p.input_stride < p.hidden || p.output_stride < p.hidden) return false;
  if (fused && p.residual_stride < p.hidden) return false;
  const auto out_size = static_cast<int64_t>(dtype_size(p.out_dtype));
  if (!aligned(p.input, 2) || !aligned(p.weight, 2) || !aligned(p.output, out_size)) return false;
  if (fused && !aligned(p.residual, 2)) return false;
  if (p.rows == 0) return true;

  // Aliasing: written tensors either coincide exactly with a read tensor (same pointer, element
  // size and stride: every element is read before it is written, by the same thread) or are
  // disjoint from it; the weight overlaps nothing that is written.
  const Extent in = extent(p.input, p.rows, p.input_stride, p.hidden, 2);
  const Extent out = extent(p.output, p.rows, p.output_stride, p.hidden, out_size);
  const Extent w = extent(p.weight, 1, p.hidden, p.hidden, 2);
  const bool in_out_same = p.input == p.output && out_size == 2 && p.input_stride == p.output_stride;
  if (overlap(in, out) && !in_out_same) return false;
  if (overlap(w, out)) return false;
  if (fused) {
    const Extent res = extent(p.residual, p.rows, p.residual_stride, p.hidden, 2);
    const bool res_out_same = p.residual == p.output && out_size == 2 && p.residual_stride == p.output_stride;
    const bool in_res_same = p.input == p.residual && p.input_stride == p.residual_stride;
    if (overlap(res, out) && !res_out_same) return false;
    if (overlap(in, res) && !in_res_same) return false;
    if (overlap(w, res)) return false;
  }
  return true;
}

Args make_args(const RmsNormParams& p) {
  Args args{};
  args.input = p.input;
  args.residual = p.residual;
  args.weight = p.weight;
  args.output = p.output;
  args.rows = p.rows;
  args.hidden = p.hidden;
  args.input_stride = p.input_stride;
  args.residual_stride = p.residual != nullptr ? p.residual_stride : 0;
  args.output_stride = p.output_stride;
  args.eps = p.eps;
  args.inv_hidden = 1.0f / static_cast<float>(p.hidden);
  args.weight_offset = p.weight_offset;
  args.out_scale = p.out_scale;
  args.zero = 0;
  return args;
}

}  // namespace rmsnorm_detail

cudaError_t launch_rmsnorm(const RmsNormParams& params, cudaStream_t stream) {
  using namespace rmsnorm_detail;
  if (!params_valid(params)) return cudaErrorInvalidValue;
  if (params.rows == 0) return cudaSuccess;
  const Plan plan = make_plan(params);
  if (plan.blocks > 0x7fffffff) return cudaErrorInvalidValue;

  const bool fused = params.residual != nullptr;
  const Args args = make_args(params);

  const bool pdl = params.enable_pdl;
  if (params.silu) {
    return params.in_dtype == DType::bfloat16 ? launch_bf16_bf16_silu(args, plan, false, pdl, stream)
                                              : launch_fp16_fp16_silu(args, plan, false, pdl, stream);
  }
  if (params.in_dtype == DType::bfloat16) {
    switch (params.out_dtype) {
      case DType::bfloat16: return launch_bf16_bf16(args, plan, fused, pdl, stream);
      case DType::fp8_e4m3: return launch_bf16_e4m3(args, plan, fused, pdl, stream);
      case DType::fp8_e5m2: return launch_bf16_e5m2(args, plan, fused, pdl, stream);
      default: return cudaErrorInvalidValue;
    }
  }
  switch (params.out_dtype) {
    case DType::float16: return launch_fp16_fp16(args, plan, fused, pdl, stream);
    case DType::fp8_e4m3: return launch_fp16_e4m3(args, plan, fused, pdl, stream);
    case DType::fp8_e5m2: return launch_fp16_e5m2(args, plan, fused, pdl, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t rmsnorm_kernel_available() {
  cudaFuncAttributes attributes{};
  const cudaError_t status = rmsnorm_detail::probe_bf16_bf16(&attributes);
  return kernel_image_status(status);
}

}  // namespace kbench::kernels
