// Split KV for kbench's MLA kernels: the plan and the merge kernel (mla_split.hpp).
#include "kernels/attention/mla/mla_split.hpp"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"

namespace kbench::kernels {
namespace {

constexpr int kDc = 512;  // the output row: the latent (ckv) dim
constexpr int kDp = 64;   // the rope (kpe) dim

struct MergeArgs {
  const float* part_o;
  const float* part_lse;
  __nv_bfloat16* out;
  const int32_t* unit_splits;  // a balanced plan's (null: every row has num_splits partials)
  int rows;
  int num_splits;
  int row_blocks;
  int rows_per_cta;
};

// One 128-thread block per (request, row): out = sum_s w_s o_s / sum_s w_s, w_s = 2^(lse_s - max).
// A balanced plan (unit_splits): the row's unit has unit_splits[unit] partials, or wrote out itself.
// Launched with programmatic dependent launch behind the split kernel (which lets it launch at once):
// the blocks wait on SMs as the split kernel's CTAs leave them, with the row's count read from the
// plan already. The partials come kMergeBatch at a time, their loads issued together (predicated,
// never waiting on a weight: an empty split's row, lse -inf, may hold anything and its terms are
// selected away), the running max rescaling the sums where a later batch raises it.
constexpr int kMergeBatch = 4;

__global__ void __launch_bounds__(128) mla_merge_kernel(const __grid_constant__ MergeArgs a) {
  const int64_t flat = blockIdx.x;  // b * rows + j
  const int b = static_cast<int>(flat / a.rows);
  const int j = static_cast<int>(flat % a.rows);
  int count = a.num_splits;
  if (a.unit_splits != nullptr) {
    count = a.unit_splits[b * a.row_blocks + j / a.rows_per_cta];
    if (count <= 1) return;
  }
  pdl_wait();  // the split kernel's partials
  const int64_t base = static_cast<int64_t>(b) * a.num_splits * a.rows + j;
  const int col = static_cast<int>(threadIdx.x) * 4;
  float mx = -INFINITY, wsum = 0.0f;
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int s0 = 0; s0 < count; s0 += kMergeBatch) {
    float lse[kMergeBatch];
    float4 v[kMergeBatch];
#pragma unroll
    for (int k = 0; k < kMergeBatch; ++k) {
      lse[k] = -INFINITY;
      v[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      if (s0 + k < count) {
        const int64_t idx = base + static_cast<int64_t>(s0 + k) * a.rows;
        lse[k] = a.part_lse[idx];
        v[k] = *reinterpret_cast<const float4*>(a.part_o + idx * kDc + col);
      }
    }
    float big = mx;
#pragma unroll
    for (int k = 0; k < kMergeBatch; ++k) big = fmaxf(big, lse[k]);
    if (big == -INFINITY) continue;  // no key in any partial so far
    const float rescale = mx == -INFINITY ? 0.0f : exp2f(mx - big);
    wsum *= rescale;
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[c] *= rescale;
#pragma unroll
    for (int k = 0; k < kMergeBatch; ++k) {
      const bool empty = lse[k] == -INFINITY;
      const float w = empty ? 0.0f : exp2f(lse[k] - big);
      wsum += w;
      acc[0] += empty ? 0.0f : w * v[k].x;
      acc[1] += empty ? 0.0f : w * v[k].y;
      acc[2] += empty ? 0.0f : w * v[k].z;
      acc[3] += empty ? 0.0f : w * v[k].w;
    }
    mx = big;
  }
  const float inv = wsum > 0.0f ? 1.0f / wsum : 0.0f;
  __nv_bfloat162 lo = __floats2bfloat162_rn(acc[0] * inv, acc[1] * inv);
  __nv_bfloat162 hi = __floats2bfloat162_rn(acc[2] * inv, acc[3] * inv);
  uint2 packed;
  packed.x = *reinterpret_cast<uint32_t*>(&lo);
  packed.y = *reinterpret_cast<uint32_t*>(&hi);
  *reinterpret_cast<uint2*>(a.out + flat * kDc + col) = packed;
}

// Bytes of the partial outputs and log2-sum-exps (none without splits), rounded up to 16: where a
// balanced plan's schedule starts.
std::size_t partials_bytes(const MlaParams& p, const MlaPlan& plan) {
  if (plan.num_splits <= 1) return 0;
  const std::size_t slots = static_cast<std::size_t>(p.batch) * plan.num_splits * p.s_qo * p.num_heads;
  return (slots * (kDc + 1) * sizeof(float) + 15) / 16 * 16;
}

struct ScheduleOffsets {
  std::size_t segments, part_begin, unit_splits, end;
};

ScheduleOffsets schedule_offsets(const MlaParams& p, const MlaPlan& plan) {
  ScheduleOffsets o{};
  o.segments = partials_bytes(p, plan);
  o.part_begin = o.segments + plan.segments.size() * sizeof(MlaSegment);
  o.unit_splits = o.part_begin + plan.part_begin.size() * sizeof(int32_t);
  o.end = o.unit_splits + plan.unit_splits.size() * sizeof(int32_t);
  return o;
}

// The cost model of plan_mla_balanced, in the time one CTA takes for one KV tile.
constexpr double kEmptyCtaTiles = 0.05;           // a CTA with no key of its split
constexpr int kMinSegmentTiles = 4;               // a shorter split or segment costs more in merge than it gains
constexpr int kLatentRowBytes = (kDc + 64) * 2;   // a bf16 key: ckv and kpe

// A request's KV tiles (at least one: every row sees key 0).
int kv_tiles(int32_t kv_len, int tile_keys) { return std::max((kv_len + tile_keys - 1) / tile_keys, 1); }

// The merge: every partial row read once (512 fp32 and its lse) at the bandwidth of all SMs loading
// tiles, plus its launch (about a tile).
double merge_cost(int64_t partial_rows, int tile_keys, int sm_count) {
  if (partial_rows == 0) return 0.0;
  const double tile_bytes = static_cast<double>(tile_keys) * kLatentRowBytes * sm_count;
  return static_cast<double>(partial_rows) * (kDc + 1) * sizeof(float) / tile_bytes + 1.0;
}

}  // namespace

std::size_t MlaPlan::workspace_bytes(const MlaParams& p) const { return schedule_offsets(p, *this).end; }

MlaPlan plan_mla_split(const MlaParams& p, int rows_per_cta, int ctas_per_sm, int tile_keys, int max_kv_len,
                       int sm_count) {
  MlaPlan plan;
  const int rows = p.s_qo * p.num_heads;
  plan.rows_per_cta = rows_per_cta;
  plan.row_blocks = (rows + rows_per_cta - 1) / rows_per_cta;
  const int64_t base = static_cast<int64_t>(std::max(p.batch, 1)) * plan.row_blocks;
  const int64_t target = static_cast<int64_t>(std::max(sm_count, 1)) * ctas_per_sm;
  const int tiles = std::max((std::max(max_kv_len, 1) + tile_keys - 1) / tile_keys, 1);
  int splits = 1;
  if (base < target) {
    splits = static_cast<int>(std::min<int64_t>((target + base - 1) / base, std::max(tiles / kMinSegmentTiles, 1)));
    // Waves of CTAs per unit of a request's work: splitting must save a tenth of the time at least
    // (128 one-block requests on 132 SMs: two splits make two waves of half the work, no gain).
    const double split_waves = static_cast<double>((base * splits + target - 1) / target) / splits;
    if (split_waves > 0.9) splits = 1;
  }
  const int tiles_per_split = (tiles + splits - 1) / splits;
  plan.split_keys = tiles_per_split * tile_keys;
  plan.num_splits = (tiles + tiles_per_split - 1) / tiles_per_split;
  return plan;
}

namespace {

// The requests' tiles in order into parts of at most `limit` (tiles plus segment_tiles a segment),
// a request split where a part fills, no piece under kMinSegmentTiles but a request's whole: into
// segments (a segment's unit its request, slot its piece) and part_begin. The most loaded part's load,
// or none where that takes more than `parts` parts.
std::optional<double> fill_parts(std::span<const int32_t> kv_lens, int tile_keys, double segment_tiles, double limit,
                                 int parts, std::vector<MlaSegment>& segments, std::vector<int32_t>& part_begin) {
  segments.clear();
  part_begin.assign(1, 0);
  double load = 0.0, most = 0.0;
  for (int b = 0; b < static_cast<int>(kv_lens.size()); ++b) {
    const int32_t len = kv_lens[b];
    int left = kv_tiles(len, tile_keys), tile = 0, slot = 0;
    while (left > 0) {
      int take = std::min(left, static_cast<int>(limit - load - segment_tiles));
      if (take < left && left - take < kMinSegmentTiles) take = left - kMinSegmentTiles;  // leave a whole piece
      if (take < std::min(left, kMinSegmentTiles)) {                                     // nothing fits: a new part
        if (load == 0.0 || static_cast<int>(part_begin.size()) == parts) return std::nullopt;
        part_begin.push_back(static_cast<int32_t>(segments.size()));
        load = 0.0;
        continue;
      }
      segments.push_back({b, tile * tile_keys, std::min((tile + take) * tile_keys, len), slot++});
      load += segment_tiles + take;
      most = std::max(most, load);
      left -= take;
      tile += take;
    }
  }
  part_begin.push_back(static_cast<int32_t>(segments.size()));
  return most;
}

// The balanced schedule of make_mla_balanced_schedule and its cost by the model. The schedule is made
// for the requests over `groups` = sm_count / row_blocks parts: requests in order, a request split
// where a part fills (fill_parts), at the smallest part limit that needs no more parts (bisection;
// the most loaded part bounds the kernel's time). Each group's part then becomes row_blocks
// consecutive parts, one a row block, with the same keys: the row blocks of a request read each KV
// tile side by side, once from HBM and then from L2 (a request's blocks scheduled apart read it from
// HBM each, which made a 4-token, 128-head batch bound by HBM at 8 reads of every tile).
MlaPlan balanced_schedule(const MlaParams& p, std::span<const int32_t> kv_lens, const MlaPlan& uniform, int tile_keys,
                          int sm_count, double segment_tiles, double* cost) {
  const int rows = p.s_qo * p.num_heads;
  const int row_blocks = uniform.row_blocks;
  const int groups = std::max(1, sm_count / row_blocks);
  double total = 0.0;
  for (const int32_t len : kv_lens) total += segment_tiles + kv_tiles(len, tile_keys);
  // One part holding every request whole fits `total`; no limit under the mean load fits; the search
  // starts there, or at one minimum piece where that is more (tiny requests on many SMs).
  double low = std::max(total / groups, segment_tiles + kMinSegmentTiles), high = total;
  std::vector<MlaSegment> group_segments, trial_segments;
  std::vector<int32_t> group_begin, trial_begin;
  // One part: fits.
  double most = *fill_parts(kv_lens, tile_keys, segment_tiles, high, groups, group_segments, group_begin);
  for (int step = 0; step < 40 && high - low > 0.01; ++step) {
    const double mid = 0.5 * (low + high);
    if (const std::optional<double> trial_most =
            fill_parts(kv_lens, tile_keys, segment_tiles, mid, groups, trial_segments, trial_begin)) {
      high = mid;
      most = *trial_most;
      group_segments.swap(trial_segments);
      group_begin.swap(trial_begin);
    } else {
      low = mid;
    }
  }
  std::vector<int32_t> pieces(p.batch, 0);
  for (const MlaSegment& s : group_segments) ++pieces[s.unit];
  for (MlaSegment& s : group_segments) {
    if (pieces[s.unit] == 1) s.slot = -1;
  }

  MlaPlan plan = uniform;
  plan.split_keys = tile_keys;
  plan.num_splits = std::max(1, *std::max_element(pieces.begin(), pieces.end()));
  plan.unit_splits.assign(static_cast<std::size_t>(p.batch) * row_blocks, 0);
  for (int b = 0; b < p.batch; ++b) {
    for (int block = 0; block < row_blocks; ++block) plan.unit_splits[b * row_blocks + block] = pieces[b];
  }
  plan.part_begin.push_back(0);
  for (std::size_t g = 0; g + 1 < group_begin.size(); ++g) {
    for (int block = 0; block < row_blocks; ++block) {
      for (int i = group_begin[g]; i < group_begin[g + 1]; ++i) {
        MlaSegment s = group_segments[i];
        s.unit = s.unit * row_blocks + block;
        plan.segments.push_back(s);
      }
      plan.part_begin.push_back(static_cast<int32_t>(plan.segments.size()));
    }
  }
  int64_t partial_rows = 0;
  for (int b = 0; b < p.batch; ++b) {
    if (pieces[b] > 1) partial_rows += static_cast<int64_t>(pieces[b]) * rows;
  }
  *cost = most + merge_cost(partial_rows, tile_keys, sm_count);
  return plan;
}

// The uniform plan's cost by the model: CTAs in launch order (split fastest, then row block, then
// request), each taken by the SM that frees first, then the merge.
double uniform_cost(const MlaParams& p, std::span<const int32_t> kv_lens, const MlaPlan& uniform, int tile_keys,
                    int sm_count, double segment_tiles) {
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (int i = 0; i < sm_count; ++i) free_at.push(0.0);
  double cost = 0.0;
  const int split_tiles = uniform.split_keys / tile_keys;
  for (int b = 0; b < p.batch; ++b) {
    const int tiles = kv_tiles(kv_lens[b], tile_keys);
    for (int block = 0; block < uniform.row_blocks; ++block) {
      for (int split = 0; split < uniform.num_splits; ++split) {
        const int split_tiles_here = std::min(split_tiles, tiles - split * split_tiles);
        const double done =
            free_at.top() + (split_tiles_here > 0 ? segment_tiles + split_tiles_here : kEmptyCtaTiles);
        free_at.pop();
        free_at.push(done);
        cost = std::max(cost, done);
      }
    }
  }
  if (uniform.num_splits == 1) return cost;
  return cost + merge_cost(static_cast<int64_t>(p.batch) * uniform.num_splits * p.s_qo * p.num_heads, tile_keys,
                           sm_count);
}

// The uniform plan (one CTA an SM) from the longest of kv_lens.
MlaPlan uniform_plan(const MlaParams& p, std::span<const int32_t> kv_lens, int rows_per_cta, int tile_keys,
                     int sm_count) {
  const int max_len = kv_lens.empty() ? 1 : *std::max_element(kv_lens.begin(), kv_lens.end());
  return plan_mla_split(p, rows_per_cta, 1, tile_keys, max_len, sm_count);
}

// Whether there is a schedule to make: requests, a length each, SMs.
bool schedulable(const MlaParams& p, std::span<const int32_t> kv_lens, int sm_count) {
  return p.batch > 0 && static_cast<int>(kv_lens.size()) == p.batch && sm_count > 0;
}

}  // namespace

MlaPlan make_mla_balanced_schedule(const MlaParams& p, std::span<const int32_t> kv_lens, int rows_per_cta,
                                   int tile_keys, int sm_count) {
  const MlaPlan uniform = uniform_plan(p, kv_lens, rows_per_cta, tile_keys, sm_count);
  if (!schedulable(p, kv_lens, sm_count)) return uniform;
  double cost = 0.0;
  return balanced_schedule(p, kv_lens, uniform, tile_keys, sm_count, kMlaSegmentTiles, &cost);
}

MlaPlan plan_mla_balanced(const MlaParams& p, std::span<const int32_t> kv_lens, int rows_per_cta, int tile_keys,
                          int sm_count, double segment_tiles) {
  MlaPlan uniform = uniform_plan(p, kv_lens, rows_per_cta, tile_keys, sm_count);
  if (!schedulable(p, kv_lens, sm_count)) return uniform;
  double cost = 0.0;
  MlaPlan balanced = balanced_schedule(p, kv_lens, uniform, tile_keys, sm_count, segment_tiles, &cost);
  return cost < 0.97 * uniform_cost(p, kv_lens, uniform, tile_keys, sm_count, segment_tiles) ? balanced : uniform;
}

cudaError_t upload_mla_schedule(const MlaParams& p, const MlaPlan& plan, void* workspace) {
  if (!plan.balanced()) return cudaSuccess;
  if (workspace == nullptr) return cudaErrorInvalidValue;
  const ScheduleOffsets o = schedule_offsets(p, plan);
  auto* base = static_cast<uint8_t*>(workspace);
  cudaError_t status = cudaMemcpy(base + o.segments, plan.segments.data(), plan.segments.size() * sizeof(MlaSegment),
                                  cudaMemcpyHostToDevice);
  if (status == cudaSuccess) {
    status = cudaMemcpy(base + o.part_begin, plan.part_begin.data(), plan.part_begin.size() * sizeof(int32_t),
                        cudaMemcpyHostToDevice);
  }
  if (status == cudaSuccess) {
    status = cudaMemcpy(base + o.unit_splits, plan.unit_splits.data(), plan.unit_splits.size() * sizeof(int32_t),
                        cudaMemcpyHostToDevice);
  }
  return status;
}

bool mla_kernel_dtypes_supported(DType q, DType kv) {
  return (q == DType::bfloat16 && kv == DType::bfloat16) || (q == DType::bfloat16 && kv == DType::fp8_e4m3) ||
         (q == DType::fp8_e4m3 && kv == DType::fp8_e4m3);
}

bool mla_kernel_supported(const MlaParams& p) {
  const bool fp8_kv = p.kv_dtype == DType::fp8_e4m3;
  const bool scales_ok = p.ckv_scale == p.kpe_scale ||
                         (fp8_kv && p.ckv_scale != 0.0f && std::isfinite(p.kpe_scale / p.ckv_scale));
  return mla_kernel_dtypes_supported(p.q_dtype, p.kv_dtype) && p.head_dim_ckv == kDc && p.head_dim_kpe == kDp &&
         p.batch >= 0 && p.batch <= 65535 && p.s_qo >= 1 && p.num_heads >= 1 && p.page_size >= 1 &&
         static_cast<int64_t>(p.s_qo) * p.num_heads <= (1 << 20) && scales_ok && std::isfinite(p.sm_scale) &&
         std::isfinite(p.q_scale) && std::isfinite(p.ckv_scale);
}

cudaError_t make_mla_kernel_args(const MlaParams& p, const MlaPlan& plan, void* out, void* workspace,
                                 MlaKernelArgs* args) {
  if (p.q_nope == nullptr || p.q_pe == nullptr || p.ckv == nullptr || p.kpe == nullptr || p.kv_indptr == nullptr ||
      p.kv_indices == nullptr || p.kv_len == nullptr || out == nullptr ||
      ((plan.num_splits > 1 || plan.balanced()) && workspace == nullptr)) {
    return cudaErrorInvalidValue;
  }
  constexpr float kLog2e = 1.4426950408889634f;
  MlaKernelArgs a{};
  a.q_nope = p.q_nope;
  a.q_pe = p.q_pe;
  a.ckv = p.ckv;
  a.kpe = p.kpe;
  a.kv_indptr = p.kv_indptr;
  a.kv_indices = p.kv_indices;
  a.kv_len = p.kv_len;
  a.out = static_cast<__nv_bfloat16*>(out);
  a.s_qo = p.s_qo;
  a.num_heads = p.num_heads;
  a.rows = p.s_qo * p.num_heads;
  a.page_size = p.page_size;
  a.num_splits = plan.num_splits;
  a.split_keys = plan.split_keys;
  a.scale_log2 = p.sm_scale * p.q_scale * p.ckv_scale * kLog2e;
  a.v_scale = p.ckv_scale;
  a.kv_fp8 = p.kv_dtype == DType::fp8_e4m3 ? 1 : 0;
  a.q_fp8 = p.q_dtype == DType::fp8_e4m3 ? 1 : 0;
  a.kpe_mul = a.kv_fp8 != 0 && p.kpe_scale != p.ckv_scale ? p.kpe_scale / p.ckv_scale : 1.0f;
  a.row_blocks = plan.row_blocks;
  if (plan.num_splits > 1) {
    const std::size_t slots = static_cast<std::size_t>(p.batch) * plan.num_splits * a.rows;
    a.part_o = static_cast<float*>(workspace);
    a.part_lse = a.part_o + slots * kDc;
  }
  if (plan.balanced()) {
    const ScheduleOffsets o = schedule_offsets(p, plan);
    const auto* base = static_cast<const uint8_t*>(workspace);
    a.segments = reinterpret_cast<const MlaSegment*>(base + o.segments);
    a.part_begin = reinterpret_cast<const int32_t*>(base + o.part_begin);
    a.unit_splits = reinterpret_cast<const int32_t*>(base + o.unit_splits);
  }
  *args = a;
  return cudaSuccess;
}

cudaError_t launch_mla_merge(const MlaParams& p, const MlaPlan& plan, const void* workspace, void* out,
                             cudaStream_t stream) {
  const int rows = p.s_qo * p.num_heads;
  const int64_t merge_blocks = static_cast<int64_t>(p.batch) * rows;
  if (merge_blocks > 0x7fffffff || workspace == nullptr || out == nullptr) return cudaErrorInvalidValue;
  const std::size_t slots = static_cast<std::size_t>(p.batch) * plan.num_splits * rows;
  const float* part_o = static_cast<const float*>(workspace);
  const int32_t* unit_splits =
      plan.balanced() ? reinterpret_cast<const int32_t*>(static_cast<const uint8_t*>(workspace) +
                                                         schedule_offsets(p, plan).unit_splits)
                      : nullptr;
  const MergeArgs args{part_o,     part_o + slots * kDc, static_cast<__nv_bfloat16*>(out), unit_splits, rows,
                       plan.num_splits, plan.row_blocks,  plan.rows_per_cta};
  return launch_kernel(mla_merge_kernel, dim3(static_cast<unsigned>(merge_blocks)), dim3(128), 0, stream,
                       /*pdl=*/true, args);
}

}  // namespace kbench::kernels
