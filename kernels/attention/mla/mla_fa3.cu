// kbench's MLA decode kernel "fa3" for Hopper, the host side: what it takes, its plan and launch (the
// kernel: mla_fa3_kernel.cuh).
#include "kernels/attention/mla/mla_fa3.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/attention/mla/mla_fa3_transposed_bf16_kernel.cuh"
#include "kernels/common/kernel_image.hpp"
#include "kernels/common/tensor_map.hpp"

namespace kbench::kernels {

using namespace mla_fa3_detail;

bool mla_fa3_dtypes_supported(DType q, DType kv) { return mla_kernel_dtypes_supported(q, kv); }

bool mla_fa3_supported(const MlaParams& p) { return mla_kernel_supported(p); }

cudaError_t mla_fa3_available() {
  int device = 0, major = 0, minor = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status == cudaSuccess) status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (status == cudaSuccess) status = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (status != cudaSuccess) return status;
  if (major != 9 || minor != 0) return cudaErrorNoKernelImageForDevice;  // wgmma and setmaxnreg: sm_90a only
#if defined(KBENCH_MLA_FA3_BUILT_FOR_SM90A)
  cudaFuncAttributes attributes{};
  cudaError_t probe = mla_fa3_kernel_attributes<false, Schedule::lockstep>(&attributes);
  if (probe == cudaSuccess) probe = mla_fa3_kernel_attributes<true, Schedule::lockstep>(&attributes);
  if (probe == cudaSuccess) probe = mla_fa3_kernel_attributes<false, Schedule::seesaw>(&attributes);
  if (probe == cudaSuccess) probe = mla_fa3_kernel_attributes<true, Schedule::seesaw>(&attributes);
  if (probe == cudaSuccess) probe = mla_fa3_kernel_attributes<false, Schedule::seesaw_fp8>(&attributes);
  if (probe == cudaSuccess) probe = mla_fa3_kernel_attributes<true, Schedule::seesaw_fp8>(&attributes);
  if (probe == cudaSuccess) probe = mla_fa3_transposed_attributes<false>(&attributes);
  if (probe == cudaSuccess) probe = mla_fa3_transposed_attributes<true>(&attributes);
  if (probe == cudaSuccess) probe = mla_fa3_transposed_bf16_attributes<false>(&attributes);
  if (probe == cudaSuccess) probe = mla_fa3_transposed_bf16_attributes<true>(&attributes);
  return kernel_image_status(probe);
#else
  return cudaErrorNoKernelImageForDevice;  // built without sm_90a (sources.cmake): the body would trap
#endif
}

namespace {

// A request's rows in one 16-column block: the transposed kernels (keys on wgmma's M; fp8 KV or bf16).
bool transposed_kernel(const MlaParams& p) { return p.s_qo * p.num_heads <= kTransposedMaxRows; }

// A tile is 64 consecutive rows of one page: the tiles go by TMA (given 16-byte aligned caches), not
// gathered.
bool pages_hold_whole_tiles(const MlaParams& p) { return p.page_size % kTile == 0; }

// The fp8 transposed kernel's segment in tiles' time: its tiles take half the bf16 ones' and a
// segment about the same (session 42, H200: Nsight Compute's SM active cycles over random lengths,
// min / avg / max 136 / 152 / 167 K with parts of 1-4 segments and 58-68 tiles, fit 5.2 tiles a
// segment).
constexpr double kFp8TransposedSegmentTiles = 5.0;
// The bf16 transposed kernel's where pages hold whole tiles (TMA): 3.2 tiles (session 44, H200: a
// trace of every CTA over 50 launches of the random-length case, busy time beyond its tiles at the
// fixed lengths' 2.09 us a tile: 6.7 us a segment; at the default's 2 the parts with more segments
// ran longest, 148.6 us with one segment against 154.2 with three; the fp8 kernel's trace gave 4.8).
// Gathered tiles take about twice as long, a segment fewer of them: the default's 2 (3.2 ran 1.3%
// slower on pages of 16).
constexpr double kBf16TransposedTmaSegmentTiles = 3.2;

}  // namespace

MlaPlan plan_mla_fa3(const MlaParams& p, std::span<const int32_t> kv_lens, int sm_count) {
  double segment_tiles = kMlaSegmentTiles;
  if (transposed_kernel(p)) {
    if (p.kv_dtype == DType::fp8_e4m3) {
      segment_tiles = kFp8TransposedSegmentTiles;
    } else if (pages_hold_whole_tiles(p)) {
      segment_tiles = kBf16TransposedTmaSegmentTiles;
    }
  }
  return plan_mla_balanced(p, kv_lens, kRows, kTile, sm_count, segment_tiles);
}

cudaError_t launch_mla_fa3(const MlaParams& p, const MlaPlan& plan, void* out, void* workspace,
                           cudaStream_t stream) {
  if (!mla_fa3_supported(p) || plan.rows_per_cta != kRows || plan.num_splits < 1 || plan.split_keys < kTile ||
      plan.split_keys % kTile != 0) {
    return cudaErrorInvalidValue;
  }
  if (p.batch == 0) return cudaSuccess;
  Args a{};
  if (const cudaError_t status = make_mla_kernel_args(p, plan, out, workspace, &a); status != cudaSuccess) return status;
  const bool transposed = transposed_kernel(p);
  // Pages of whole tiles go by TMA.
  const auto aligned16 = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
  if (pages_hold_whole_tiles(p) && aligned16(p.ckv) && aligned16(p.kpe)) {
    // bf16: ckv as [rows][8 chunks][64], a box one 64-column chunk of the tile, landing on its own
    // barrier. fp8: ckv as [rows][4 boxes][128] and kpe as 64-byte rows, landing raw (widened in place).
    // The bf16 transposed kernel's boxes at 128 B L2 promotion, not 256: its memory-bound case on an
    // H200 273 us against 302 (session 41, call 4; 64 B and none ran as 128 in session 40). The other
    // kernels keep 256 B (not measured otherwise).
    const CUtensorMapL2promotion bf16_promotion =
        transposed ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
    cudaError_t status =
        a.kv_fp8 != 0 ? encode_token_major_map(&a.ckv_map, p.ckv, DType::fp8_e4m3, kDc / 128, 128, kTile)
                      : encode_token_major_map(&a.ckv_map, p.ckv, DType::bfloat16, kDc / kChunkCols, kChunkCols, kTile,
                                               bf16_promotion);
    if (status == cudaSuccess) {
      status = a.kv_fp8 != 0
                   ? encode_byte_rows_map(&a.kpe_map, p.kpe, kDp, kTile)
                   : encode_token_major_map(&a.kpe_map, p.kpe, DType::bfloat16, 1, kDp, kTile, bf16_promotion);
    }
    if (status != cudaSuccess) return status;
    a.page_tma = 1;
  }
  const int row_blocks = (a.rows + kRows - 1) / kRows;
  if (plan.row_blocks != row_blocks) return cudaErrorInvalidValue;
  const dim3 balanced_grid(static_cast<unsigned>(plan.part_begin.size() - 1));
  const dim3 uniform_grid(static_cast<unsigned>(plan.num_splits), static_cast<unsigned>(row_blocks),
                          static_cast<unsigned>(p.batch));
  // Not transposed: a request's rows filling a 64-row block (compute-bound): seesaw consumers (their
  // fp8 variant on fp8 KV); fewer (memory-bound, one block a request): lockstep, whose KV stages free
  // sooner.
  const auto launch = [&](auto balanced, dim3 grid) {
    constexpr bool kBalanced = decltype(balanced)::value;
    if (transposed) {
      return a.kv_fp8 != 0 ? launch_mla_fa3_transposed<kBalanced>(a, grid, stream)
                           : launch_mla_fa3_transposed_bf16<kBalanced>(a, grid, stream);
    }
    if (a.rows < kRows) return launch_mla_fa3_grid<kBalanced, Schedule::lockstep>(a, grid, stream);
    return a.kv_fp8 != 0 ? launch_mla_fa3_grid<kBalanced, Schedule::seesaw_fp8>(a, grid, stream)
                         : launch_mla_fa3_grid<kBalanced, Schedule::seesaw>(a, grid, stream);
  };
  const cudaError_t status = plan.balanced() ? launch(std::true_type{}, balanced_grid)
                                             : launch(std::false_type{}, uniform_grid);
  if (status != cudaSuccess || plan.num_splits == 1) return status;
  return launch_mla_merge(p, plan, workspace, out, stream);
}

}  // namespace kbench::kernels
