// kbench's wgmma GEMM on sm_90a: what it takes, the tile and split heuristics, the tensor maps, the
// split-K workspace and the launch (the kernel: wgmma_gemm_kernel.cuh).
//
// Tiles: the largest (two consumer warpgroups: 128 x 256, the least L2 traffic per FLOP) that give
// every SM a tile; otherwise (decode-sized m) 64 x 128 tiles, twice to four times the CTAs, each
// reading its share of B (these shapes are bound by reading B once from memory, not by the tensor
// cores). Splits: where even those tiles leave SMs idle (n 2112 at m <= 128: 17 or 34 tiles for 132
// SMs), each tile's k-blocks are split over several CTAs (wgmma_gemm_k_splits), so that more SMs
// pull B from memory (as many more as the GPU's HBM is faster than the H100's:
// wgmma_gemm_b_streams).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <string_view>

#include "kernels/common/launch.hpp"
#include "kernels/common/tensor_map.hpp"
#include "kernels/gemm/sm90/fp4_swapped_kernel.cuh"
#include "kernels/gemm/sm90/wgmma_gemm_kernel.cuh"

namespace kbench::kernels::gemm::sm90 {

using Launch = cudaError_t (*)(const WgmmaGemmArgs&, int, cudaStream_t, bool);

namespace {

// Device memory whose first `zeroed` bytes are zero before any stream runs (cleared synchronously:
// plans are made outside timing); the kernel leaves its counters zero at every run's end.
class ZeroedDeviceMemory {
 public:
  ZeroedDeviceMemory(std::size_t bytes, std::size_t zeroed, const char* what) : bytes_(bytes) {
    if (cudaMalloc(&memory_, bytes_) != cudaSuccess) {
      (void)cudaGetLastError();
      memory_ = nullptr;
      throw std::runtime_error(std::string("kbench wgmma GEMM: cannot allocate ") + what + " (" +
                               std::to_string(bytes_) + " bytes)");
    }
    if (cudaMemset(memory_, 0, zeroed) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
      (void)cudaGetLastError();
      cudaFree(memory_);
      throw std::runtime_error(std::string("kbench wgmma GEMM: cannot zero ") + what);
    }
  }
  ZeroedDeviceMemory(const ZeroedDeviceMemory&) = delete;
  ZeroedDeviceMemory& operator=(const ZeroedDeviceMemory&) = delete;
  ~ZeroedDeviceMemory() {
    if (memory_ != nullptr) cudaFree(memory_);
  }

  [[nodiscard]] char* get() const { return static_cast<char*>(memory_); }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  void* memory_ = nullptr;
  std::size_t bytes_ = 0;
};

// Split-K's device memory, one allocation: each tile's arrival counter, then the units' fp32
// partial tiles.
class SplitKWorkspace {
 public:
  SplitKWorkspace(int64_t tiles, int64_t units, int slot_floats)
      : counter_bytes_((static_cast<std::size_t>(tiles) * sizeof(int) + 255) / 256 * 256),
        memory_(counter_bytes_ + static_cast<std::size_t>(units) * static_cast<std::size_t>(slot_floats) * sizeof(float),
                counter_bytes_, "the split-K workspace") {}

  [[nodiscard]] int* tile_arrivals() const { return reinterpret_cast<int*>(memory_.get()); }
  [[nodiscard]] float* partials() const { return reinterpret_cast<float*>(memory_.get() + counter_bytes_); }
  [[nodiscard]] std::size_t bytes() const { return memory_.bytes(); }

 private:
  std::size_t counter_bytes_;
  ZeroedDeviceMemory memory_;
};

}  // namespace

struct WgmmaGemm::Plan {
  WgmmaGemmArgs args{};
  int units = 0;  // of clusters (args.cluster CTAs each); the swapped FP4 kernel: its CTAs
  bool swapped_fp4 = false;
  bool pdl = false;
  Launch launch = nullptr;
  std::unique_ptr<SplitKWorkspace> workspace;  // split-K only
  // The dynamic scheduler's two counters (WgmmaGemmArgs::unit_counter): a plan's runs are ordered.
  ZeroedDeviceMemory unit_counter{2 * sizeof(int), 2 * sizeof(int), "the tile scheduler's counters"};
};

namespace {

struct TileChoice {
  const char* name;
  int block_m;
  int block_n;
  Launch launch;
  int slot_floats;         // one split's fp32 tile in the split-K workspace
  bool overlaps_promotion;  // groupwise double-buffered (WgmmaGemmConfig::kDoubleBuffered): not at decode sizes
};

template <class Cfg>
constexpr TileChoice tile_choice(const char* name) {
  return {name, Cfg::kBlockM, Cfg::kBlockN, launch_wgmma_gemm<Cfg>, Cfg::kSlotFloats, Cfg::kDoubleBuffered};
}

// Large tiles first: the heuristic takes the first whose tiles give every SM one. Groupwise 128 x 128
// tiles (two consumer warpgroups) run the shapes whose 128 x 256 tiles leave SMs idle 1.32x faster
// than 64 x 128 tiles (H200, bench/results/h200/gemm/session36); on shapes that fill the SMs with
// 128 x 256 tiles they are 1.34x slower. Where they fill the SMs their promotion overlaps the next
// slice's wgmmas (1.02-1.025x, session 39); the decode rule takes them with turns.
constexpr TileChoice kGroupwiseTiles[] = {tile_choice<GroupwiseTile128x256>("128x256"),
                                          tile_choice<GroupwiseTile128x128>("128x128"),
                                          tile_choice<GroupwiseTile128x128Turns>("128x128-turns"),
                                          tile_choice<GroupwiseTile64x128>("64x128")};
constexpr TileChoice kPerTensorTiles[] = {tile_choice<PerTensorTile128x256>("128x256"),
                                          tile_choice<PerTensorTile64x128>("64x128")};
constexpr TileChoice kBf16Tiles[] = {tile_choice<Bf16Tile128x256>("128x256"), tile_choice<Bf16Tile64x128>("64x128")};
constexpr TileChoice kFp16Tiles[] = {tile_choice<Fp16Tile128x256>("128x256"), tile_choice<Fp16Tile64x128>("64x128")};
constexpr TileChoice kFp4Tiles[] = {tile_choice<Fp4Tile128x256>("128x256"), tile_choice<Fp4Tile64x128>("64x128")};
constexpr TileChoice kWeightFp4Bf16Tiles[] = {tile_choice<WeightFp4Bf16Tile128x256>("128x256"),
                                              tile_choice<WeightFp4Bf16Tile64x128>("64x128")};
constexpr TileChoice kWeightFp4Fp16Tiles[] = {tile_choice<WeightFp4Fp16Tile128x256>("128x256"),
                                              tile_choice<WeightFp4Fp16Tile64x128>("64x128")};

std::span<const TileChoice> tiles_of(const WgmmaGemmParams& p) {
  switch (p.scaling) {
    case GemmScaling::groupwise: return p.glu ? std::span<const TileChoice>(kGroupwiseTiles).first(1) : kGroupwiseTiles;
    case GemmScaling::per_tensor: return kPerTensorTiles;
    case GemmScaling::none: return p.a_dtype == DType::float16 ? kFp16Tiles : kBf16Tiles;
    case GemmScaling::block_fp4: return kFp4Tiles;
    case GemmScaling::weight_fp4: return p.a_dtype == DType::float16 ? kWeightFp4Fp16Tiles : kWeightFp4Bf16Tiles;
  }
  return kBf16Tiles;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// m-blocks of all groups (device groups: at most one partial block each beyond the rows' own).
int64_t m_blocks(const WgmmaGemmParams& p, int block_m) {
  return p.rows_per_group > 0 ? p.groups * ceil_div(p.rows_per_group, block_m) : ceil_div(p.rows, block_m) + p.groups;
}

// The heuristic's tiles (wgmma_gemm_tile_shape) for sm_count SMs.
const TileChoice& heuristic_tiles(const WgmmaGemmParams& p, int64_t sm_count) {
  const std::span<const TileChoice> tiles = tiles_of(p);
  // Groups of 64 rows or fewer (equal ones, or device groups on average: an MoE at decode, DeepSeek-V3
  // at 128 tokens has 4 rows an expert; bmm_fp8's 256 MLA batches of one row): 128-row tiles would
  // compute twice the padding past each group's end (FP4 weights on bf16 wgmma cannot hide it behind
  // their weight stream; bmm_fp8 256 x 1 x 1024 x 7168 in 64 x 128 tiles: 1.016x, 64 x 4: 1.03x;
  // H200, session 37).
  const bool short_groups = p.rows_per_group > 0 ? p.rows_per_group <= 64 : p.rows <= 64 * static_cast<int64_t>(p.groups);
  if (short_groups) return tiles.back();
  const auto tile_count = [&](const TileChoice& t) { return m_blocks(p, t.block_m) * ceil_div(p.n, t.block_n); };
  for (const TileChoice& t : tiles.first(tiles.size() - 1)) {
    if (tile_count(t) >= sm_count) return t;
  }
  // No shape fills the SMs (decode-sized m): a tile as wide as the last one with more rows, where
  // those rows are not padding and its tiles still give a quarter of the SMs one, reads B once
  // instead of once per m-block (groupwise m 128, n 7168, k 16384 in 128 x 128 tiles: 1.08x; at n
  // 2112, k 7168, 17 tiles, 64 x 128 tiles and split-K stay faster; H200, session 37).
  const TileChoice& last = tiles.back();
  for (const TileChoice& t : tiles.first(tiles.size() - 1)) {
    if (t.block_n == last.block_n && !t.overlaps_promotion && m_blocks(p, t.block_m) < m_blocks(p, last.block_m) &&
        4 * tile_count(t) >= sm_count) {
      return t;
    }
  }
  return last;
}

// KBENCH_WGMMA_GEMM_TILES=<name> (e.g. 64x128) overrides the heuristic, for tuning.
const TileChoice& choose_tiles(const WgmmaGemmParams& p) {
  if (const char* forced = std::getenv("KBENCH_WGMMA_GEMM_TILES")) {
    for (const TileChoice& t : tiles_of(p)) {
      if (std::string_view(forced) == t.name) return t;
    }
  }
  return heuristic_tiles(p, current_sm_count());
}

// The swapped FP4 kernel's rows of A a unit (16 or 64), or 0: the tiled kernel.
// KBENCH_WGMMA_GEMM_TILES=swapped (16 rows) or swapped64 forces it where it can run; a tile's name,
// the tiled kernel.
int choose_swapped_fp4(const WgmmaGemmParams& p) {
  if (const char* forced = std::getenv("KBENCH_WGMMA_GEMM_TILES")) {
    if (!wgmma_gemm_can_swap_fp4(p)) return 0;
    const std::string_view name(forced);
    return name == "swapped" ? 16 : name == "swapped64" ? 64 : 0;
  }
  return wgmma_gemm_swapped_fp4_rows(p);
}

// KBENCH_WGMMA_GEMM_SPLITS=<n> (n >= 1; 1: no split-K) overrides the split heuristic, for tuning;
// at most one split per k-block. Device groups: the host knows only a bound on their tiles, so the
// heuristic leaves them unsplit.
int choose_k_splits(const WgmmaGemmParams& p, int64_t b_panels, int64_t tiles, int64_t k_blocks) {
  if (const char* forced = std::getenv("KBENCH_WGMMA_GEMM_SPLITS")) {
    char* end = nullptr;
    const long n = std::strtol(forced, &end, 10);
    if (end != forced && *end == '\0' && n >= 1) {
      return static_cast<int>(std::min<int64_t>(n, std::max<int64_t>(k_blocks, 1)));
    }
  }
  if (p.rows_per_group <= 0) return 1;
  return wgmma_gemm_k_splits(b_panels, tiles, k_blocks, current_sm_count(), wgmma_gemm_device_b_streams());
}

// Clusters possible for these tiles and splits (wgmma_gemm_cluster says why not).
bool clusters_possible(const WgmmaGemmParams& p, int block_m, int block_n, int k_splits) {
  const bool fp4 = p.scaling == GemmScaling::block_fp4 || p.scaling == GemmScaling::weight_fp4;
  return !fp4 && k_splits == 1 && (block_n == 256 || (p.scaling == GemmScaling::groupwise && block_m == 128));
}

// The heuristic's, or KBENCH_WGMMA_GEMM_CLUSTER=1|2 where clusters are possible, for tuning.
int choose_cluster(const WgmmaGemmParams& p, const TileChoice& tiles, int k_splits) {
  const char* forced = std::getenv("KBENCH_WGMMA_GEMM_CLUSTER");
  if (forced != nullptr && clusters_possible(p, tiles.block_m, tiles.block_n, k_splits)) {
    if (std::string_view(forced) == "1") return 1;
    if (std::string_view(forced) == "2") return 2;
  }
  return wgmma_gemm_cluster(p, tiles.block_m, tiles.block_n, k_splits);
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

// How TMA loads an operand's rows: their bytes, one k-slice's (FP4 codes: 64 elements, 32 bytes
// under a 32-byte swizzle; else one 128-byte swizzled row) and the swizzle.
struct OperandRows {
  int64_t bytes;
  int64_t slice_bytes;
  CUtensorMapSwizzle swizzle;
};

OperandRows operand_rows(bool fp4_codes, DType dtype, int64_t k) {
  if (fp4_codes) return {k / 2, kFp4SliceBytes, CU_TENSOR_MAP_SWIZZLE_32B};
  return {k * static_cast<int64_t>(dtype_size(dtype)), 128, CU_TENSOR_MAP_SWIZZLE_128B};
}

void encode(CUtensorMap* map, const void* base, int rank, const cuuint64_t* dims, const cuuint64_t* strides,
            const cuuint32_t* box, CUtensorMapSwizzle swizzle) {
  const PFN_cuTensorMapEncodeTiled_v12000 encoder = tensor_map_encoder();
  if (encoder == nullptr) throw std::runtime_error("kbench wgmma GEMM: the driver has no cuTensorMapEncodeTiled");
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult result = encoder(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, static_cast<cuuint32_t>(rank),
                                  const_cast<void*>(base), dims, strides, box, element_strides,
                                  CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw std::runtime_error("kbench wgmma GEMM: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(result) + ")");
  }
}

}  // namespace

// The kernel's limits: B's scales in whole 128 x 4 tiles it copies in bulk, k in whole 256-deep stages.
bool wgmma_gemm_can_swap_fp4(const WgmmaGemmParams& p) {
  return p.scaling == GemmScaling::weight_fp4 && p.b_sf_layout == quant::SfLayout::swizzled_128x4 && p.k % 256 == 0 &&
         p.b_sf_group_stride % 16 == 0;
}

int wgmma_gemm_swapped_fp4_rows(const WgmmaGemmParams& p) {
  if (!wgmma_gemm_can_swap_fp4(p)) return 0;
  // DeepSeek-V3's NVFP4 layer (256 experts, H200, session 45): 128, 256 and 512 tokens (4, 8 and 16
  // rows an expert) 1.96x, 1.94x and 1.45x the tiled kernel with 16 rows a unit (call 3); 512 to
  // 4096 tokens (16 to 128 rows) 1.43-1.45x with 64 rows a unit, 16 rows a unit even at 512 and
  // 0.87x at 1024 (a group's weights expanded once per 16 rows; call 5). Above 128 rows the tiled
  // kernel is unmeasured against it and stays.
  const auto at_most = [&](int64_t rows_per_group) {
    return p.rows_per_group > 0 ? p.rows_per_group <= rows_per_group : p.rows <= rows_per_group * p.groups;
  };
  return at_most(16) ? 16 : at_most(128) ? 64 : 0;
}

WgmmaTileShape wgmma_gemm_tile_shape(const WgmmaGemmParams& p, int sm_count) {
  const TileChoice& t = heuristic_tiles(p, sm_count);
  return {t.block_m, t.block_n};
}

int wgmma_gemm_cluster(const WgmmaGemmParams& p, int block_m, int block_n, int k_splits) {
  if (!clusters_possible(p, block_m, block_n, k_splits) || block_m <= 0 || p.groups < 1) return 1;
  if (p.rows_per_group <= 0) return p.rows >= 8 * static_cast<int64_t>(block_m) * p.groups ? 2 : 1;
  const int64_t blocks = ceil_div(p.rows_per_group, block_m);
  return blocks % 2 == 0 || blocks >= 8 ? 2 : 1;
}

int64_t wgmma_gemm_b_streams(double bandwidth) {
  if (!(bandwidth > 0.0)) return kSplitKBStreams;
  return std::max<int64_t>(1, std::llround(static_cast<double>(kSplitKBStreams) * bandwidth / kSplitKReferenceBandwidth));
}

int64_t wgmma_gemm_device_b_streams() {
  static DeviceMemo<int64_t> memo;
  int64_t streams = 0;
  const auto query = [](int device, int64_t* value) {
    int clock_khz = 0, bus_bits = 0;
    cudaError_t status = cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device);
    if (status == cudaSuccess) status = cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
    if (status == cudaSuccess) *value = wgmma_gemm_b_streams(2.0 * clock_khz * 1e3 * bus_bits / 8);
    return status;
  };
  if (memo_per_device(memo, query, &streams) != cudaSuccess) {
    (void)cudaGetLastError();
    return kSplitKBStreams;
  }
  return streams;
}

int wgmma_gemm_k_splits(int64_t b_panels, int64_t tiles, int64_t k_blocks, int sm_count, int64_t streams) {
  if (b_panels <= 0 || tiles <= 0 || b_panels >= streams || tiles >= sm_count) return 1;
  const int64_t wanted = ceil_div(streams, b_panels);
  return static_cast<int>(std::max<int64_t>(1, std::min({wanted, sm_count / tiles, k_blocks})));
}

namespace {

// The operand dtypes each scaling is instantiated for.
std::optional<std::string> operands_unsupported(const WgmmaGemmParams& p) {
  const bool sixteen_bit_a = p.a_dtype == DType::bfloat16 || p.a_dtype == DType::float16;
  switch (p.scaling) {
    case GemmScaling::per_tensor:
    case GemmScaling::groupwise:
      if (p.a_dtype == DType::fp8_e4m3 && p.b_dtype == DType::fp8_e4m3) return std::nullopt;
      return "kbench's FP8 GEMM is instantiated for fp8_e4m3 x fp8_e4m3 only";
    case GemmScaling::none:
      if (sixteen_bit_a && p.b_dtype == p.a_dtype) return std::nullopt;
      return "kbench's unscaled GEMM is instantiated for bfloat16 x bfloat16 and float16 x float16 operands";
    case GemmScaling::block_fp4:
      if (p.a_dtype == DType::uint8 && p.b_dtype == DType::uint8) return std::nullopt;
      return "kbench's FP4 GEMM takes packed e2m1 pairs (uint8) for A and B";
    case GemmScaling::weight_fp4:
      if (sixteen_bit_a && p.b_dtype == DType::uint8) return std::nullopt;
      return "kbench's weight-only FP4 GEMM takes bfloat16 or float16 A and packed e2m1 pairs (uint8) for B";
  }
  return "unknown scaling";
}

// The FP4 modes' own limits (beyond the shared ones below).
std::optional<std::string> fp4_unsupported(const WgmmaGemmParams& p) {
  if (p.fp4_format != quant::BlockFormat::nvfp4 && p.fp4_format != quant::BlockFormat::mxfp4) {
    return "kbench's FP4 GEMM takes NVFP4 or MXFP4 operands";
  }
  if (p.scaling == GemmScaling::block_fp4 && (p.groups != 1 || p.rows_per_group != p.rows)) {
    return "kbench's FP4 GEMM takes one matrix (no batch, no groups; weight_fp4 takes groups)";
  }
  if (p.scaling == GemmScaling::weight_fp4) {
    if (p.fp4_format == quant::BlockFormat::mxfp4 && p.a_dtype == DType::float16) {
      return "MXFP4 weights need bfloat16 A: their ue8m0 scales (2^-127 .. 2^127) leave fp16's range, where "
             "expanding them into fp16 would round or overflow (NVFP4's e2m1 x e4m3 values are exact in fp16)";
    }
    if (p.alpha != 1.0f) return "weight_fp4 scales D by group_alpha (one per group): alpha must stay 1";
  }
  if (p.k <= 0) return "k must be positive for kbench's FP4 GEMM (its consumers take at least one k-slice a tile)";
  if (p.k % 128 != 0) {
    return "k must be a multiple of 128 for kbench's FP4 GEMM (it expands 64-element slices, whole scale blocks), got " +
           std::to_string(p.k);
  }
  if (p.n % 128 != 0) {
    return "n must be a multiple of 128 for kbench's FP4 GEMM (B's scales are read in whole 128-row tiles), got " +
           std::to_string(p.n);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> wgmma_gemm_unsupported(const WgmmaGemmParams& p) {
  const bool fp4 = p.scaling == GemmScaling::block_fp4 || p.scaling == GemmScaling::weight_fp4;
  if (auto reason = operands_unsupported(p)) return reason;
  if (p.d_dtype != DType::bfloat16 && p.d_dtype != DType::float16) return "kbench's GEMM writes bfloat16 or float16";
  if (fp4) {
    if (auto reason = fp4_unsupported(p)) return reason;
  }
  if (p.scaling == GemmScaling::groupwise && p.k % 128 != 0) return "k must be a multiple of 128 (whole scale blocks)";
  if (p.scaling == GemmScaling::per_tensor &&
      (p.a_scale_row_stride != 0 || p.a_scale_k_stride != 0 || p.b_scale_n_stride != 0 || p.b_scale_k_stride != 0)) {
    return "per_tensor scales all of A by one scale and each group of B by one (b_scale_group_stride apart): its "
           "row, n and k scale strides must be 0";
  }
  if (!fp4 && p.k * static_cast<int64_t>(dtype_size(p.a_dtype)) % 16 != 0) {
    return "rows of k must be multiples of 16 bytes (TMA): k a multiple of " + std::to_string(16 / dtype_size(p.a_dtype));
  }
  if (p.n % 2 != 0) return "n must be even (the epilogue stores column pairs)";
  if (p.glu && (p.scaling != GemmScaling::groupwise || p.n % 256 != 0)) {
    return "the GLU epilogue takes groupwise FP8 with n a multiple of 256 (up and gate halves of whole 128-column "
           "blocks)";
  }
  if (p.groups < 1) return "at least one group";
  if (p.rows_per_group <= 0 && p.groups > kMaxDeviceGroups) {
    return "at most " + std::to_string(kMaxDeviceGroups) + " groups whose sizes are on the device";
  }
  constexpr int64_t kIntMax = 0x7fffffff;
  if (p.rows > kIntMax || p.n > kIntMax || p.k > kIntMax || m_blocks(p, 64) * ceil_div(p.n, 64) > kIntMax) {
    return "rows, n and k must fit 32-bit coordinates";
  }
  return std::nullopt;
}

namespace {

// The swapped FP4 kernel's maps (A's rows 128 bytes x `rows` at a time, B's codes 128 bytes x 256
// rows, both 128-byte swizzled), stages and CTAs: one per SM, at most one per unit.
void plan_swapped_fp4(const WgmmaGemmParams& p, int rows, WgmmaGemm::Plan& plan) {
  WgmmaGemmArgs& a = plan.args;
  a.k_blocks = static_cast<int>(p.k / fp4_swapped::kStageK);
  a.a_box_rows = rows;
  const auto a_k = static_cast<cuuint64_t>(p.k) * dtype_size(p.a_dtype), b_k = static_cast<cuuint64_t>(p.k / 2);
  const cuuint64_t a_dims[2] = {a_k, static_cast<cuuint64_t>(p.rows)};
  const cuuint64_t a_strides[1] = {a_k};
  const cuuint32_t a_box[2] = {128, static_cast<cuuint32_t>(rows)};
  encode(&a.tma_a, p.a, 2, a_dims, a_strides, a_box, CU_TENSOR_MAP_SWIZZLE_128B);
  const cuuint64_t b_dims[3] = {b_k, static_cast<cuuint64_t>(p.n), static_cast<cuuint64_t>(p.groups)};
  const cuuint64_t b_strides[2] = {b_k, b_k * static_cast<cuuint64_t>(p.n)};
  const cuuint32_t b_box[3] = {128, fp4_swapped::kWeightRows, 1};
  encode(&a.tma_b, p.b, 3, b_dims, b_strides, b_box, CU_TENSOR_MAP_SWIZZLE_128B);
  const int64_t row_blocks = p.rows_per_group > 0 ? p.groups * ceil_div(p.rows_per_group, rows)
                                                  : ceil_div(p.rows, rows) + p.groups;
  const int64_t units = row_blocks * ceil_div(p.n, fp4_swapped::kWeightRows);
  if (units > 0x7fffffff) throw std::runtime_error("kbench wgmma GEMM: the swapped FP4 kernel's units must fit 32 bits");
  plan.units = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(units, current_sm_count())));
  plan.swapped_fp4 = true;
  const bool fp16 = p.a_dtype == DType::float16;
  plan.launch = rows == 16 ? (fp16 ? launch_fp4_swapped<DType::float16, 16> : launch_fp4_swapped<DType::bfloat16, 16>)
                           : (fp16 ? launch_fp4_swapped<DType::float16, 64> : launch_fp4_swapped<DType::bfloat16, 64>);
}

}  // namespace

WgmmaGemm::WgmmaGemm(const WgmmaGemmParams& p) {
  if (const auto reason = wgmma_gemm_unsupported(p)) throw std::runtime_error("kbench wgmma GEMM: " + *reason);
  if (!aligned16(p.a) || !aligned16(p.b) || !aligned16(p.glu ? p.glu_codes : p.d)) {
    throw std::runtime_error("kbench wgmma GEMM: A, B and D (or the GLU's codes) must be 16-byte aligned (TMA)");
  }
  if (p.glu && p.glu_scales == nullptr) throw std::runtime_error("kbench wgmma GEMM: the GLU's scales missing");
  const bool fp4_a = p.scaling == GemmScaling::block_fp4;
  const bool fp4_b = fp4_a || p.scaling == GemmScaling::weight_fp4;
  const bool scaled = p.scaling == GemmScaling::per_tensor || p.scaling == GemmScaling::groupwise;
  if ((scaled && (p.a_scale == nullptr || p.b_scale == nullptr)) || (fp4_a && p.a_block_scales == nullptr) ||
      (fp4_b && p.b_block_scales == nullptr) ||
      (p.rows_per_group <= 0 && p.row_offsets == nullptr)) {
    throw std::runtime_error("kbench wgmma GEMM: scales or the device groups' row offsets missing");
  }
  auto plan = std::make_shared<Plan>();
  WgmmaGemmArgs& a = plan->args;
  a.groups = p.groups;
  a.rows_per_group = static_cast<int>(p.rows_per_group > 0 ? p.rows_per_group : 0);
  a.row_offsets = p.row_offsets;
  a.rows = static_cast<int>(p.rows);
  a.n = static_cast<int>(p.n);
  a.d = p.d;
  a.d_bf16 = p.d_dtype == DType::bfloat16;
  a.a_scale = p.a_scale;
  a.b_scale = p.b_scale;
  a.a_scale_row_stride = p.a_scale_row_stride;
  a.a_scale_k_stride = p.a_scale_k_stride;
  a.b_scale_group_stride = p.b_scale_group_stride;
  a.b_scale_n_stride = p.b_scale_n_stride;
  a.b_scale_k_stride = p.b_scale_k_stride;
  a.a_block_scales = p.a_block_scales;
  a.b_block_scales = p.b_block_scales;
  a.b_sf_group_stride = p.b_sf_group_stride;
  a.a_sf_layout = p.a_sf_layout;
  a.b_sf_layout = p.b_sf_layout;
  a.fp4_format = p.fp4_format;
  a.sf_columns = fp4_b ? static_cast<uint32_t>(p.k / (p.fp4_format == quant::BlockFormat::nvfp4 ? 16 : 32)) : 0;
  a.alpha = p.alpha;
  a.group_alpha = p.group_alpha;
  a.glu_epilogue = p.glu.has_value();
  a.glu = p.glu.value_or(GatedLinearUnit::swiglu);
  a.glu_codes = static_cast<uint8_t*>(p.glu_codes);
  a.glu_scales = p.glu_scales;
  a.glu_columns = static_cast<int>(p.n / 2);
  a.k_splits = 1;
  a.cluster = 1;
  a.unit_counter = reinterpret_cast<int*>(plan->unit_counter.get());
  plan->pdl = p.enable_pdl;
  if (const int rows = choose_swapped_fp4(p); rows > 0 && aligned16(p.b_block_scales)) {
    plan_swapped_fp4(p, rows, *plan);
    plan_ = std::move(plan);
    return;
  }
  const TileChoice& tiles = choose_tiles(p);
  const OperandRows a_rows = operand_rows(fp4_a, p.a_dtype, p.k), b_rows = operand_rows(fp4_b, p.b_dtype, p.k);
  a.k_blocks = static_cast<int>(ceil_div(a_rows.bytes, a_rows.slice_bytes));  // B's alike
  a.n_blocks = static_cast<int>(p.glu ? p.n / tiles.block_n : ceil_div(p.n, tiles.block_n));
  // Equal groups shorter than a tile: A's box holds only their rows (rounded to 8), the rest of the
  // tile's rows are never stored.
  a.a_box_rows = a.rows_per_group > 0 && a.rows_per_group < tiles.block_m
                     ? static_cast<int>(std::min<int64_t>(tiles.block_m, ceil_div(a.rows_per_group, 8) * 8))
                     : tiles.block_m;
  // The maps address bytes.
  const auto a_k = static_cast<cuuint64_t>(a_rows.bytes), b_k = static_cast<cuuint64_t>(b_rows.bytes);
  const cuuint64_t a_dims[2] = {a_k, static_cast<cuuint64_t>(p.rows)};
  const cuuint64_t a_strides[1] = {a_k};
  const cuuint32_t a_box[2] = {static_cast<cuuint32_t>(a_rows.slice_bytes), static_cast<cuuint32_t>(a.a_box_rows)};
  encode(&a.tma_a, p.a, 2, a_dims, a_strides, a_box, a_rows.swizzle);
  const cuuint64_t b_dims[3] = {b_k, static_cast<cuuint64_t>(p.n), static_cast<cuuint64_t>(p.groups)};
  const cuuint64_t b_strides[2] = {b_k, b_k * static_cast<cuuint64_t>(p.n)};
  // Two boxes of half a tile's rows per slice (load_slice).
  const cuuint32_t b_box[3] = {static_cast<cuuint32_t>(b_rows.slice_bytes), static_cast<cuuint32_t>(tiles.block_n / 2), 1};
  encode(&a.tma_b, p.b, 3, b_dims, b_strides, b_box, b_rows.swizzle);
  const int64_t tile_bound = m_blocks(p, tiles.block_m) * a.n_blocks;
  a.k_splits = choose_k_splits(p, static_cast<int64_t>(p.groups) * a.n_blocks, tile_bound, a.k_blocks);
  const int64_t units = tile_bound * a.k_splits;
  if (units > 0x7fffffff) throw std::runtime_error("kbench wgmma GEMM: tiles x k-splits must fit 32 bits");
  if (a.k_splits > 1) {
    plan->workspace = std::make_unique<SplitKWorkspace>(tile_bound, units, tiles.slot_floats);
    a.partials = plan->workspace->partials();
    a.tile_arrivals = plan->workspace->tile_arrivals();
  }
  a.cluster = choose_cluster(p, tiles, a.k_splits);
  plan->units = static_cast<int>(a.cluster > 1 ? m_blocks(p, tiles.block_m * a.cluster) * a.n_blocks : units);
  plan->launch = tiles.launch;
  plan_ = std::move(plan);
}

cudaError_t WgmmaGemm::run(cudaStream_t stream) const {
  return plan_->launch(plan_->args, plan_->units, stream, plan_->pdl);
}

int WgmmaGemm::k_splits() const { return plan_->args.k_splits; }
int WgmmaGemm::cluster() const { return plan_->args.cluster; }

std::size_t WgmmaGemm::workspace_bytes() const { return plan_->workspace ? plan_->workspace->bytes() : 0; }
bool WgmmaGemm::swapped_fp4() const { return plan_->swapped_fp4; }

bool wgmma_gemm_built_for_sm90a() {
#if defined(KBENCH_GEMM_BUILT_FOR_SM90A)
  return true;
#else
  return false;
#endif
}

}  // namespace kbench::kernels::gemm::sm90
