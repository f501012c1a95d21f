// Split KV for kbench's MLA decode kernels (fa2, fa3): the plan both make on the host, outside
// timing (query-row blocks, KV splits from the longest request, workspace), and the merge of a
// row's splits. A split kernel writes, per (request, split, row), the row's output normalised over
// the split's keys (times ckv_scale) and its log2-sum-exp (-inf: the row saw none of the split's
// keys) into the workspace; the merge weights them by 2^(lse - max) into bf16 out.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/attention/mla/mla.hpp"

namespace kbench::kernels {

// One segment of a balanced schedule: keys [k_begin, k_end) of one unit (a request's row block: unit
// = b * row_blocks + block), written to out directly (slot -1: the unit's only segment) or as the
// unit's partial `slot` for the merge.
struct MlaSegment {
  int32_t unit;
  int32_t k_begin;
  int32_t k_end;
  int32_t slot;
};

struct MlaPlan {
  int rows_per_cta = 64;  // query rows (token x head pairs of one request) per CTA
  int row_blocks = 1;     // ceil(s_qo * num_heads / rows_per_cta)
  int num_splits = 1;     // KV splits per request (1: no workspace, no merge); balanced: the most of a unit
  int split_keys = 0;     // keys per split (a multiple of the kernel's KV tile)
  // Balanced schedule (fa3, lengths that leave a uniform split's CTAs unequal; empty: the uniform
  // grid above): CTA p of part_begin.size() - 1 takes segments [part_begin[p], part_begin[p + 1]) in
  // turn, each part about the same number of KV tiles, so no CTA waits on the longest request. The
  // parts come in runs of row_blocks, part r of a run taking the run's keys for row block r (a
  // request's blocks read each tile side by side). unit_splits[u]: the unit's segments (the merge
  // skips units of one, written directly).
  std::vector<MlaSegment> segments;
  std::vector<int32_t> part_begin;
  std::vector<int32_t> unit_splits;
  [[nodiscard]] bool balanced() const { return !segments.empty(); }
  // Workspace: [batch][num_splits][rows][512] fp32 partial outputs, then [batch][num_splits][rows]
  // fp32 log2-sum-exps, then a balanced plan's segments, part_begin and unit_splits.
  [[nodiscard]] std::size_t workspace_bytes(const MlaParams& p) const;
};

// Splits the KV of every request when batch x row_blocks CTAs leave the GPU's sm_count x
// ctas_per_sm CTA slots idle and more, shorter splits finish sooner (fewer waves per unit of work):
// no split shorter than four tiles of tile_keys keys.
[[nodiscard]] MlaPlan plan_mla_split(const MlaParams& params, int rows_per_cta, int ctas_per_sm, int tile_keys,
                                     int max_kv_len, int sm_count);

// A segment's own cost in the time of one KV tile (its start, the merge of its consumers' halves, its
// output), the cost model's default: the bf16 kernels' (session 42, H200: the bf16 transposed
// kernel's mean SM active cycles over random lengths beyond its fixed-length cycles a tile, about 1.9).
inline constexpr double kMlaSegmentTiles = 2.0;

// The uniform plan above, or a balanced schedule over sm_count CTAs (one a SM; sm_count / row_blocks
// runs of a CTA per row block, or one run where there are fewer SMs than row blocks) where the cost model
// (a CTA's time: its KV tiles plus segment_tiles a segment, CTAs taken in launch order by the free
// SMs; the merge's partials read at the same bandwidth) predicts it 3% faster or more: random
// lengths, where the uniform grid's CTAs wait on the longest request.
[[nodiscard]] MlaPlan plan_mla_balanced(const MlaParams& params, std::span<const int32_t> kv_lens, int rows_per_cta,
                                        int tile_keys, int sm_count, double segment_tiles);

// The balanced schedule whatever the model predicts (tests: many segments a CTA over few SMs); the
// uniform plan where there is nothing to schedule.
[[nodiscard]] MlaPlan make_mla_balanced_schedule(const MlaParams& params, std::span<const int32_t> kv_lens,
                                                 int rows_per_cta, int tile_keys, int sm_count);

// A balanced plan's schedule into its workspace (synchronous copy: once, outside timing); nothing for
// a uniform plan.
[[nodiscard]] cudaError_t upload_mla_schedule(const MlaParams& params, const MlaPlan& plan, void* workspace);

// The q / KV dtype pairs both MLA kernels take: bfloat16 / bfloat16, bfloat16 / fp8_e4m3 and
// fp8_e4m3 / fp8_e4m3 (fp8 is widened to bf16 exactly as it is staged).
[[nodiscard]] bool mla_kernel_dtypes_supported(DType q_dtype, DType kv_dtype);
// Whether both MLA kernels take this problem (dtypes, head dims 512 / 64, sizes, scales: bf16 KV has
// one scale for ckv and kpe, applied in fp32; fp8 KV widens kpe times kpe_scale / ckv_scale, which
// must be finite); no pointer is looked at.
[[nodiscard]] bool mla_kernel_supported(const MlaParams& params);

// What both MLA kernels take for a launch: the operands (the kernel reads them as its dtypes), the
// paged cache's tables, the output, the plan's partials, shape and split, and the scales.
struct MlaKernelArgs {
  const void* q_nope;
  const void* q_pe;
  const void* ckv;
  const void* kpe;
  const int32_t* kv_indptr;
  const int32_t* kv_indices;
  const int32_t* kv_len;
  __nv_bfloat16* out;
  float* part_o;    // [batch][num_splits][rows][512] (num_splits > 1)
  float* part_lse;  // [batch][num_splits][rows], log2 units
  // A balanced plan's schedule in the workspace (null: the uniform grid).
  const MlaSegment* segments;
  const int32_t* part_begin;
  const int32_t* unit_splits;
  int row_blocks;
  int s_qo;
  int num_heads;
  int rows;  // s_qo * num_heads
  int page_size;
  int num_splits;
  int split_keys;
  float scale_log2;  // sm_scale * q_scale * ckv_scale * log2(e)
  float v_scale;     // ckv_scale
  float kpe_mul;     // fp8 KV: kpe_scale / ckv_scale, applied to kpe when it is widened to bf16
  int kv_fp8;        // the caches are fp8 e4m3 (else bfloat16)
  int q_fp8;         // fp8 KV only: q is fp8 e4m3 (else bfloat16)
};

// The launch arguments of `params` under `plan` into out (and the workspace, when split), or
// cudaErrorInvalidValue where a pointer the launch needs is null.
[[nodiscard]] cudaError_t make_mla_kernel_args(const MlaParams& params, const MlaPlan& plan, void* out,
                                               void* workspace, MlaKernelArgs* args);

// The merge of the plan's splits (plan.num_splits > 1) into out ([batch * s_qo][num_heads][512] bf16).
[[nodiscard]] cudaError_t launch_mla_merge(const MlaParams& params, const MlaPlan& plan, const void* workspace,
                                           void* out, cudaStream_t stream);

}  // namespace kbench::kernels
