// kbench's wgmma GEMM kernel for sm_90a (wgmma_gemm.hpp says what it computes). One instantiation per
// translation unit (wgmma_gemm_<scaling>_<tile>.cu); the launch and the tile and split heuristics are
// in wgmma_gemm_launch.cu.
//
// CTA: warpgroup 0 is the producer (its warp 0: one lane issues TMA loads of A's and B's k-slices
// into a ring of stages, all lanes copy the slices' block scales beside them), warpgroups
// 1..kConsumers the consumers, 64 rows of the tile each. Tiles are kBlockM x kBlockN, in bands of
// kBand m-blocks within a group, so the CTAs running at once share A's and B's slices in L2. Each
// k-slice is 128 bytes deep (128 fp8 or 64 bf16 / fp16 elements): one 128-byte swizzled row per tile
// row, and (groupwise) one block scale. A unit of work is one tile's k-split (k_splits of them a
// tile, 1 without split-K), taken in order by persistent CTAs from a global counter (UnitQueue).
// Clusters of 2 (args.cluster; 128 x 256 and groupwise 128 x 128 tiles of large equal groups): the
// cluster's CTAs take adjacent m-blocks of the same unit, each loads half of B's slice by TMA
// multicast into both CTAs' stages (a stage is free once both CTAs' consumers released it), and
// rank 0 hands its units to rank 1 (UnitMailbox).
//   per_tensor (and none, bf16 or fp16): one wgmma a k-step as wide as the tile (A's rows read once)
//               accumulates every slice into the fp32 accumulators; a slice's stage is released
//               once the next slice's wgmmas are issued and its own are done (one group in flight);
//               the epilogue multiplies by a_scale * b_scale (per_tensor: B's of the tile's group).
//   groupwise:  each 128-wide column sub-tile of the slice is accumulated by 4 wgmmas into a
//               temporary, then added to the accumulators times a_scale(row) * b_scale(n-block) (the
//               promotion: fp8 wgmma accumulates with reduced precision, so it never sums more than
//               one slice). The two consumer warpgroups take turns issuing, so that the tensor
//               cores run one's wgmmas while the other promotes; in 128 x 128 tiles that fill the
//               SMs each instead promotes slice k from one temporary while slice k + 1's wgmmas,
//               issued into the other, run (kDoubleBuffered).
// Split-K (decode-sized m, where the tiles alone leave SMs idle): each split accumulates its own
// k-blocks (groupwise: promoted with their own scales) and writes its fp32 tile to its workspace slot;
// the tile's last split to arrive (a per-tile counter, which it resets for the next launch) sums
// every slot in split order, so the result does not depend on the order of arrival, and runs the
// epilogue. One launch, no host work: graph-safe.
// The epilogue converts to bf16 / fp16 and stores through a small per-warp staging buffer in shared
// memory as 16-byte row vectors (rows past the group's end and columns past n are not stored; where n
// is not a multiple of 8, and for weight_fp4, straight from registers), while the producer already
// loads the next unit.
//
// block_fp4 (FP4 operands on bf16 wgmma): the producer's TMA loads each k-slice's packed codes
// (64 elements: 32 bytes a row, 32-byte swizzle) into a ring of raw stages and all its warpgroup's
// threads copy the slice's scale words beside them (cp.async). A converter warpgroup (warpgroup 1)
// expands B's rows of a raw stage into the 128-byte swizzled bf16 rows of a 16-bit stage (B only)
// that the consumers' wgmma descriptors read; each consumer thread expands its own A rows' block (2
// rows x 16 codes) straight into wgmma's A fragments (registers), two sets, so that a slice's are
// expanded while the previous slice's wgmmas run (fp4_expand.hpp: e2m1 x scale, exact; its k order
// makes a thread's fragment one scale block). A raw stage is free once the converter and the
// consumers have read it.
// Why (128 x 256 tiles, 1737 slices a CTA at 4096 x 7168 x 16384): the tensor cores take 128 x 256 x
// 64 bf16 FMAs at 2048 a clock per SM = 1024 cycles a slice at peak. Shared memory per slice: TMA
// writes 13.5 KB, the converter reads 9 KB and writes 32 KB, the consumers read 4.5 KB of A's codes
// and scales, wgmma reads 2 x 32 KB of B: ~123 KB, ~960 cycles at 128 bytes a clock (bf16 mode:
// 128 KB). With A expanded into shared memory too (sessions 16-42): the converter wrote 48 KB and
// wgmma read 2 x 40 KB, ~156 KB, ~1220 cycles: shared memory, not the tensor cores, set the pace
// (0.73x kbench's bf16 GEMM). Per slice and SM sub-partition the converter warp now expands 2 rows of
// B a thread (was 3) and each of the 2 consumer warps 2 x 16 codes, between its wgmmas.
// History (ncu): 3220 cycles a slice (2.825 ms on the H100) with one producer warp copying all 384
// scale words (~573 dependent instructions a slice); the producer's whole warpgroup copies them since.
// 3 16-bit stages (32 KB each) decouple the converter from the consumers; the raw stages (14 KB each)
// fill the rest: a few held for the consumers' A, the others loaded ahead of the converter.
// Measured (session 43, H200): ~2000 cycles a slice at 4096 x 7168 x 16384, 0.75x kbench's bf16 GEMM;
// the converter bounds it (ncu: its warps issue nonstop, the consumers wait on its stages), and
// consumers expanding half of B instead ran 1.12x slower (docs/kernels/gemm_wgmma.md).
//
// weight_fp4 (bf16 or fp16 A, FP4 B, per group: an MoE's FP4 expert weights) shares that path: the
// raw stages hold B's rows alone (of the tile's group: its scale bytes b_sf_group_stride apart), the
// converter expands them into A's type in k order (A is not permuted: fp4_expand.hpp), and its
// thread 0 loads A's slice by TMA straight into the 16-bit stage once that is free (128-byte rows
// as in none), a fifth arrival on the stage's full barrier. Per slice the converter does 2 rows a
// thread (128 x 256 tiles), each pair one byte permute more; the epilogue multiplies by the group's
// alpha. 64 x 128 tiles (an MoE's groups of a few rows: the expansion, not the tensor cores, bounds
// them) take two converter warpgroups, a half row a thread, 7 16-bit stages (A's loads issued that
// far ahead) and one proxy fence a slice (session 43: 1.10x on the NVFP4 DeepSeek-V3 layer at 128
// tokens, H200).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <cute/arch/mma_sm90.hpp>

#include "kernels/common/launch.hpp"
#include "kernels/common/pdl.cuh"
#include "kernels/common/hopper.cuh"
#include "kernels/common/smem_vector.cuh"
#include "kernels/gemm/groupwise_fp8.hpp"
#include "kernels/gemm/sm90/device_groups.cuh"
#include "kernels/gemm/sm90/fp4_expand.hpp"
#include "kernels/gemm/sm90/wgmma_gemm.hpp"
#include "kernels/gemm/sm90/wgmma_gemm_args.hpp"

namespace kbench::kernels::gemm::sm90 {

template <class ElemA, class ElemB, GemmScaling kScaling, int kBlockN_, int kConsumers_, bool kDoubleBuffered_ = false>
struct WgmmaGemmConfig {
  // cute::float_e4m3_t, cute::float_e5m2_t, cute::bfloat16_t or cute::half_t (the FP4 modes': what
  // their codes expand into).
  using A = ElemA;
  using B = ElemB;
  static constexpr bool kGroupwise = kScaling == GemmScaling::groupwise;
  static constexpr bool kPerTensor = kScaling == GemmScaling::per_tensor;
  // FP4 expanded in the pipeline: A's and B's (block_fp4: kFp4A) or B's (kWeightFp4, whose A is
  // loaded by TMA into the 16-bit stages as it lies, so B's expansion keeps k in order).
  static constexpr bool kFp4A = kScaling == GemmScaling::block_fp4;
  static constexpr bool kWeightFp4 = kScaling == GemmScaling::weight_fp4;
  static constexpr bool kFp4 = kFp4A || kWeightFp4;
  static constexpr DType kExpandedType = std::is_same_v<ElemA, cute::half_t> ? DType::float16 : DType::bfloat16;
  static constexpr int kConsumers = kConsumers_;
  // Warpgroups expanding FP4 (warpgroups 1 .. kConverters). weight_fp4's 64 x 128 tiles (an MoE's
  // groups of a few rows: its tensor cores nearly idle, the expansion of B its bound) take two, each
  // thread a half row (kFp4HalfRows).
  static constexpr int kConverters = kFp4 ? (kWeightFp4 && kConsumers_ == 1 ? 2 : 1) : 0;
  static constexpr int kThreads = 128 * (1 + kConverters + kConsumers);
  static constexpr int kBlockM = 64 * kConsumers;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kElemBytes = static_cast<int>(sizeof(ElemA));
  static_assert(sizeof(ElemA) == sizeof(ElemB), "A and B of one width");
  static constexpr int kBlockK = 128;  // bytes of k per slice: one swizzled row (128 fp8, 64 bf16 or fp16)
  static constexpr int kStepK = 32 / kElemBytes;  // k of one wgmma (32 bytes)
  // N of one wgmma and of one B scale block at most: 128-column sub-tiles (the groupwise temporary
  // of a whole 256-wide tile would not fit beside the accumulators).
  static constexpr int kSubN = kBlockN < 128 ? kBlockN : 128;
  static constexpr int kSubTiles = kBlockN / kSubN;
  static constexpr int kSubRegs = kSubN / 2;  // fp32 accumulators per thread of one sub-tile
  // N of the unscaled / per-tensor wgmmas: the whole tile's (A's rows read once a k-step), except
  // with a converter warpgroup (512 threads: ptxas then compiles for 128 registers, too few for
  // an n256 wgmma's 128 accumulators).
  static constexpr int kWgmmaN = kFp4 ? kSubN : kBlockN;
  static constexpr int kABytes = kBlockM * kBlockK;
  static constexpr int kBBytes = kBlockN * kBlockK;
  // A's part of a 16-bit / fp8 stage: none in block_fp4's (its consumers expand A into registers).
  static constexpr int kStageABytes = kFp4A ? 0 : kABytes;
  static constexpr int kStageARows = kStageABytes / kBlockK;
  static constexpr int kStageBytes = kStageABytes + kBBytes;
  // Groupwise: each stage's block scales (A's of the tile's rows, then B's of its sub-tiles), copied
  // by the producer warp beside the TMA loads, so the consumers read them from shared memory.
  static constexpr int kScaleBytes = kGroupwise ? (kBlockM + kSubTiles) * 4 : 0;
  static constexpr int kScaleStageBytes = (kScaleBytes + 15) / 16 * 16;
  // The unit queue (UnitQueue): its slots, each with a full barrier (the producer's arrival) and an
  // empty one (every thread of every other warp that walks the units).
  static constexpr int kUnitSlots = 4;
  static constexpr int kUnitReaders = 32 * (4 * (kConsumers + kConverters) + (kFp4 ? 3 : 0) + (kGroupwise ? 1 : 0));
  // A 16-bit / fp8 stage is released by one lane of each consumer warp (wgmma reads it through the
  // async proxy), groupwise by every consumer thread: each read the stage's scales, and racecheck
  // orders a thread's reads before the producer's next copies only through its own arrival.
  static constexpr int kStageReleases = kGroupwise ? 128 * kConsumers : 4 * kConsumers;
  // Clusters of 2: the mailbox by which rank 0's scheduler hands rank 1 its units (kUnitSlots slots,
  // a full barrier each in rank 1, an empty one each in rank 0), and the peer's releases of a stage
  // (lane 0 of each of its consumer warps: it read the B half this CTA multicast).
  static constexpr int kPeerReleases = 4 * kConsumers;
  // Only 128 x 256 tiles without FP4 and groupwise 128 x 128 tiles run in clusters
  // (wgmma_gemm_cluster): the other instantiations compile the cluster paths out (they cost the
  // 64 x 128 decode tiles 2-4%).
  static constexpr bool kClusters = (kBlockN == 256 || (kGroupwise && kConsumers == 2)) && !kFp4;
  static constexpr int kUnitQueueBytes = 256;
  static constexpr int kMailboxOffset = 128;  // within the unit queue's bytes
  // Barriers, the stages' scales, the device groups' row offsets and m-block prefix
  // (kMaxDeviceGroups + 1 each), then the unit queue.
  static constexpr int kGroupBytes = 2 * 4 * (kMaxDeviceGroups + 1);
  static constexpr int kAuxBytes = 1024 + 8 * kScaleStageBytes + kGroupBytes + kUnitQueueBytes;
  static constexpr int kSmemLimit = 227 * 1024;
  // FP4: the raw stages (the FP4 operands' rows of packed codes, 32 bytes each: block_fp4 A's then
  // B's, weight_fp4 B's; then one scale word a row) after the 16-bit stages (kStages says how many),
  // as many raw ones as fit up to 8 (block_fp4: a raw stage is held until the consumers have read its
  // A rows, and the rest must still cover memory latency).
  static constexpr int kLoadARows = kWeightFp4 ? 0 : kBlockM;  // A's rows in the ring the producer fills
  static constexpr int kLoadRows = kLoadARows + kBlockN;
  static constexpr int kRawStageBytes = kFp4 ? (kLoadRows * (32 + 4) + 1023) / 1024 * 1024 : 0;
  // The epilogue's staging: each consumer warp's 16 rows x 128 bytes of D at a time
  // (store_tile_staged), after the other shared memory (block_fp4: one raw stage fewer). Not
  // weight_fp4, which would lose two of its eight raw stages.
  static constexpr bool kStagedEpilogue = !kWeightFp4;
  static constexpr int kEpilogueWarpBytes = 16 * 128;
  static constexpr int kEpilogueBytes = kStagedEpilogue ? 4 * kConsumers * kEpilogueWarpBytes : 0;
  static constexpr int kEpilogueReserve = kStagedEpilogue ? kEpilogueBytes + 128 : 0;  // with its alignment
  // weight_fp4: 8 raw stages, then as many 16-bit stages as fit: the converter loads A's slice into a
  // 16-bit stage as it expands B's, so A's load latency is covered by the 16-bit stages ahead of the
  // consumers (64 x 128 tiles: 7; an MoE's groups of a few rows, where the tensor cores idle, waited
  // on A with 3).
  static constexpr int kStages =
      kWeightFp4 ? std::clamp((kSmemLimit - kAuxBytes - kEpilogueReserve - 8 * kRawStageBytes) / kStageBytes, 3, 8)
      : kFp4     ? 3
                 : std::min((kSmemLimit - kAuxBytes - kEpilogueReserve) / kStageBytes, 8);
  static constexpr int kRawStages =
      kFp4 ? std::min((kSmemLimit - kAuxBytes - kEpilogueReserve - kStages * kStageBytes) / kRawStageBytes, 8) : 0;
  static constexpr int kRawOffset = kStages * kStageBytes;
  static constexpr int kFullOffset = kRawOffset + kRawStages * kRawStageBytes;  // barriers after the stages
  static constexpr int kEmptyOffset = kFullOffset + 8 * kStages;
  static constexpr int kRawFullOffset = kEmptyOffset + 8 * kStages;
  static constexpr int kRawEmptyOffset = kRawFullOffset + 8 * kRawStages;
  static constexpr int kScaleOffset = kFullOffset + 1024;
  static constexpr int kGroupOffset = kScaleOffset + 8 * kScaleStageBytes;
  static constexpr int kUnitOffset = kGroupOffset + kGroupBytes;
  static constexpr int kEpilogueOffset =
      kStagedEpilogue ? (kFullOffset + kAuxBytes + 127) / 128 * 128 : kFullOffset + kAuxBytes;  // 128-byte rows
  static constexpr int kSmemBytes = kEpilogueOffset + kEpilogueBytes;
  // The ring the producer fills: the 16-bit / fp8 stages themselves, or FP4's raw stages.
  static constexpr int kLoadStages = kFp4 ? kRawStages : kStages;
  static constexpr int kLoadOffset = kFp4 ? kRawOffset : 0;
  static constexpr int kLoadStageBytes = kFp4 ? kRawStageBytes : kStageBytes;
  static constexpr int kLoadFullOffset = kFp4 ? kRawFullOffset : kFullOffset;
  static constexpr int kLoadEmptyOffset = kFp4 ? kRawEmptyOffset : kEmptyOffset;
  static constexpr int kLoadRowBytes = kFp4 ? 32 : kBlockK;  // bytes of k a slice loads per row
  static constexpr int kLoadBOffset = kLoadARows * kLoadRowBytes;
  static constexpr int kLoadBBytes = kBlockN * kLoadRowBytes;
  static constexpr int kLoadScaleOffset = kLoadRows * kLoadRowBytes;  // FP4's scale words
  // Arrivals that complete a loaded stage: the TMA issuer's (with the transaction bytes), and every
  // scale-copying producer thread's once its copies have landed (groupwise: warp 1's lanes; FP4:
  // the whole warpgroup's).
  static constexpr int kFullArrivals = kFp4 ? 1 + 128 : kGroupwise ? 1 + 32 : 1;
  // FP4's 16-bit stages: lane 0 of each converter warp, and weight_fp4's converter thread that
  // loads A's slice into the stage (with the transaction bytes).
  static constexpr int kStageFullArrivals = kFp4A ? 4 : kWeightFp4 ? 4 * kConverters + 1 : kFullArrivals;
  // The converters' threads each expand a half row of B (32 codes) where they are twice B's rows,
  // else whole rows (kBlockN / (128 kConverters) a thread).
  static constexpr bool kFp4HalfRows = kFp4 && 128 * kConverters == 2 * kBlockN;
  // FP4's raw stages are free once every thread that read them arrived: the converter's (B's rows,
  // weight_fp4 all) and block_fp4's consumers' (A's rows). Per thread: the producer's cp.async
  // overwrite scale words a thread read, and racecheck orders a thread's reads only by its own arrival.
  static constexpr int kRawEmptyArrivals = 128 * (kConverters + (kFp4A ? kConsumers : 0));
  // block_fp4's converter releases a raw stage as soon as it holds its rows (a proxy fence before
  // expanding, a second after): its consumers hold the stage too. weight_fp4's releases it after the
  // expansion's one fence: the fences had taken ~25% of the NVFP4 MoE's converter stall samples
  // (ncu, experiments/session43 call 7); with one, 1.031x at 128 tokens, while mm_fp4 read 0.98-1.02x
  // (call 8).
  static constexpr bool kFp4EarlyRawRelease = kFp4A;
  // setmaxnreg with two consumer warpgroups or a converter (168 x 384 at launch, 128 x 512 with
  // both): the producer and the converter give up what the consumers take (their accumulators, the
  // groupwise temporary or the one-warpgroup split-K sum's two slots in flight need ~200; block_fp4's
  // consumers also hold two sets of A fragments, 32 registers). FP4 with two consumers: 40 + 72 +
  // 2 x 200 = 512 (the converter holds a thread's rows of codes and scale words at once: at 56 it
  // spilled).
  static constexpr bool kSetMaxNReg = kConsumers > 1 || kConverters > 0;
  static constexpr int kProducerRegs = 40;
  static constexpr int kConverterRegs = 72;
  static constexpr int kConsumerRegs = kFp4 && kConsumers > 1 ? 200 : 232;
  static constexpr int kBand = 8;  // m-blocks per raster band
  // Groupwise 128 x 128 tiles where they fill the SMs (accumulators and two temporaries fit in the
  // consumers' 232 registers): each consumer issues slice k + 1's wgmmas into one temporary before
  // it promotes slice k's from the other, so its own wgmmas run while it promotes
  // (accumulate_groupwise_double_buffered). Not at decode sizes: a stage is freed only once the
  // next is full, a stage less in flight where loads bound the kernel (m 128, n 7168, k 16384:
  // 1.7-2.6% slower in session 39's calls 1-2, though second in each round there). 64 x 128 tiles
  // keep one temporary: without setmaxnreg the kernel's 255 registers spilled.
  static constexpr bool kDoubleBuffered = kDoubleBuffered_;
  static_assert(!kDoubleBuffered || (kGroupwise && kSubTiles == 1 && kConsumers == 2), "128 x 128 groupwise only");
  // Groupwise 128 x 256 tiles (one temporary: two would not fit beside the accumulators): the two
  // consumer warpgroups take turns issuing their wgmmas (named barriers kTurnBarrier + warpgroup),
  // so that one promotes while the tensor cores run the other's. Issued together, the tensor cores
  // interleave them, both finish together and both promote while the tensor cores idle.
  static constexpr bool kTakeTurns = kGroupwise && kConsumers == 2 && !kDoubleBuffered;
  static constexpr int kTurnBarrier = 1;
  static constexpr int kSplitBarrier = 3;  // the consumers' split-K hand-over
  static constexpr int kSlotFloats = kBlockM * kBlockN;  // one unit's fp32 tile in the workspace
  static_assert(kBlockN % kSubN == 0 && (kSubN == 64 || kSubN == 128) && kBlockN % 64 == 0, "wgmma N");
  static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "swizzle atoms stay aligned");
  static_assert(16 * (kStages + kRawStages) <= 1024, "barriers");
  static_assert(kUnitOffset % 8 == 0 && 2 * 8 * kUnitSlots + 4 * kUnitSlots <= kMailboxOffset &&
                    kMailboxOffset + 2 * 8 * kUnitSlots + 4 * kUnitSlots <= kUnitQueueBytes,
                "unit queue and mailbox");
  static_assert(kStages >= 3 && (!kFp4 || kRawStages >= 3) && kSmemBytes <= kSmemLimit, "shared memory per block");
  static_assert(!kFp4 || (kBlockK == 128 && kElemBytes == 2), "FP4 expands to 16-bit slices of 64 elements");
  static_assert(!kFp4A || kExpandedType == DType::bfloat16, "block_fp4 expands to bf16");
  static_assert(!kFp4 || kFp4HalfRows || kBlockN % (128 * kConverters) == 0, "the converters expand whole rows of B a thread");
  static_assert(!kFp4HalfRows || kWeightFp4, "half rows in k order (weight_fp4)");
  static_assert(!kSetMaxNReg || 128 * (kProducerRegs + kConverters * kConverterRegs + kConsumers * kConsumerRegs) <=
                                   kThreads * std::min(255, 65536 / kThreads / 8 * 8),
                "register pool");
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The launch's CTAs a cluster (args.cluster), 1 where Cfg never runs in clusters.
template <class Cfg>
__device__ __forceinline__ int cluster_size(const WgmmaGemmArgs& args) {
  return Cfg::kClusters ? args.cluster : 1;
}

// One unit of work: a tile (its index in the tile order) and the k-blocks [k_begin, k_end) of its
// split (a tile's splits differ by at most one k-block).
struct GemmUnit {
  int tile;
  int split;
  int k_begin;
  int k_end;
};

// One tile: the group, its rows of A / D and the tile's first column.
struct GemmTile {
  int group;
  int row_begin;  // the tile's first row
  int row_end;    // the group's end: rows at or past it are not stored
  int col_begin;  // its first column of D (GLU epilogue: of act)
};

// The tile order: group by group, each group's m-blocks in bands of at most kBand, each band walked
// column-block by column-block, so the CTAs running together cover few A rows and B columns. In
// clusters of 2 a tile is a cluster's: its m-block has 2 kBlockM rows, rank r computes the r-th
// kBlockM of them (past the group's end: nothing stored, but it still loads its half of B). A band
// never spans two groups: an MoE expert's m-blocks (often two, the second part-filled) then read its
// weight panel together, once from HBM; bands across experts split some experts over two waves,
// which re-read their panels (~3 GB more at 4096 tokens of DeepSeek-V3's FC1).
template <class Cfg>
struct GemmTileMap {
  const WgmmaGemmArgs& args;
  const int* group_rows;    // device groups: row offsets [groups + 1] (shared memory)
  const int* group_blocks;  // device groups: m-blocks before each group [groups + 1]
  int m_blocks;             // all groups' m-blocks (of kBlockM x args.cluster rows)

  // This CTA's rank in its cluster (read where used: a value held across setmaxnreg spilled).
  __device__ int rank() const { return cluster_size<Cfg>(args) > 1 ? static_cast<int>(hopper::cluster_rank()) : 0; }

  __device__ int tiles() const { return m_blocks * args.n_blocks; }
  __device__ int units() const { return tiles() * args.k_splits; }

  // A tile's splits are consecutive units (the tile order's bands stay together); the first
  // k_blocks % k_splits splits take one k-block more.
  __device__ GemmUnit unit(int u) const {
    GemmUnit w;
    w.tile = u / args.k_splits;
    w.split = u - w.tile * args.k_splits;
    const int base = args.k_blocks / args.k_splits, extra = args.k_blocks % args.k_splits;
    w.k_begin = w.split * base + min(w.split, extra);
    w.k_end = w.k_begin + base + (w.split < extra ? 1 : 0);
    return w;
  }

  __device__ GemmTile at(int t) const {
    GemmTile tile;
    int group_first_block = 0, group_m_blocks = 0;
    const int block_rows = Cfg::kBlockM * cluster_size<Cfg>(args);
    if (args.rows_per_group > 0) {
      group_m_blocks = (args.rows_per_group + block_rows - 1) / block_rows;
      tile.group = t / (group_m_blocks * args.n_blocks);
      group_first_block = tile.group * group_m_blocks;
      tile.row_begin = tile.group * args.rows_per_group;
      tile.row_end = tile.row_begin + args.rows_per_group;
    } else {
      // The last group with no more tiles before it than t (empty groups share their successor's
      // prefix and are skipped).
      int lo = 0, hi = args.groups - 1;
      while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (group_blocks[mid] * args.n_blocks <= t) lo = mid; else hi = mid - 1;
      }
      tile.group = lo;
      group_first_block = group_blocks[lo];
      group_m_blocks = group_blocks[lo + 1] - group_first_block;
      tile.row_begin = group_rows[lo];
      tile.row_end = group_rows[lo + 1];
    }
    const int local = t - group_first_block * args.n_blocks;
    const int band_tiles = Cfg::kBand * args.n_blocks;
    const int band = local / band_tiles;
    const int first = band * Cfg::kBand;
    const int size = min(Cfg::kBand, group_m_blocks - first);
    const int in_band = local - band * band_tiles;
    tile.row_begin += (first + in_band % size) * block_rows + rank() * Cfg::kBlockM;
    tile.col_begin = (in_band / size) * (args.glu_epilogue ? Cfg::kBlockN / 2 : Cfg::kBlockN);
    return tile;
  }

  // The row of B that row r of the tile's B stage holds: col_begin + r, or with the GLU epilogue
  // (col_begin the first of its output columns) the up rows, then the gate rows n / 2 further.
  __device__ int b_row(const GemmTile& tile, int r) const {
    return tile.col_begin + r + (args.glu_epilogue && r >= Cfg::kBlockN / 2 ? args.glu_columns - Cfg::kBlockN / 2 : 0);
  }
};

// The dynamic tile scheduler. Each CTA's first unit is blockIdx.x; the producer's thread 0 then takes
// gridDim.x + the next value of a global counter, so the units in flight at any time are a window of
// consecutive units and the CTAs sharing an operand panel load it together. A static stride
// (unit = blockIdx.x + i * gridDim.x) let CTAs drift apart over the waves: at 4096 tokens of
// DeepSeek-V3's FC1 (62 waves) the expert's m-tiles and n-panels that share A's rows and B's panels
// were then read again from HBM, ~12.7 GB against CUTLASS's ~9.2 for the same 8 GB of operands.
// Thread 0 hands each unit to the CTA's other warps through a ring of kUnitSlots slots.
template <class Cfg>
struct UnitQueue {
  uint32_t base;  // shared: the full barriers, the empty barriers, then the slots
  int* slots;

  __device__ uint32_t full(uint32_t slot) const { return base + 8 * slot; }
  __device__ uint32_t empty(uint32_t slot) const { return base + 8 * (Cfg::kUnitSlots + slot); }

  // The CTA's j-th unit into its slot (the producer's thread 0), once every reader took unit j - slots.
  __device__ void publish(uint32_t j, int unit) const {
    const uint32_t slot = j % Cfg::kUnitSlots;
    hopper::mbar_wait(empty(slot), ((j / Cfg::kUnitSlots) & 1) ^ 1);
    slots[slot] = unit;
    hopper::mbar_arrive(full(slot));  // release: the slot's write is seen by the waiters' acquire
  }

  // The CTA's j-th unit, for every thread of a reading warp (each frees the slot once it read it).
  __device__ int take(uint32_t j) const {
    const uint32_t slot = j % Cfg::kUnitSlots;
    hopper::mbar_wait(full(slot), (j / Cfg::kUnitSlots) & 1);
    const int unit = *static_cast<volatile int*>(slots + slot);
    hopper::mbar_arrive(empty(slot));
    return unit;
  }
};

// Clusters of 2: rank 0's scheduler hands every unit it takes to rank 1 (both CTAs walk the same
// units: their stages fill from each other's multicasts). Message j goes to rank 1's slot j %
// kUnitSlots (a store into its shared memory, then an arrival on its full barrier there); rank 1
// frees the slot by an arrival on rank 0's empty barrier. Both CTAs keep them at the same offsets.
template <class Cfg>
struct UnitMailbox {
  uint32_t base;  // shared: the full barriers, the empty barriers, then the slots

  __device__ uint32_t full(uint32_t slot) const { return base + 8 * slot; }
  __device__ uint32_t empty(uint32_t slot) const { return base + 8 * (Cfg::kUnitSlots + slot); }
  __device__ uint32_t slot_address(uint32_t slot) const { return base + 16 * Cfg::kUnitSlots + 4 * slot; }

  __device__ void send(uint32_t j, int unit) const {  // rank 0's thread 0
    const uint32_t slot = j % Cfg::kUnitSlots;
    hopper::mbar_wait_cluster(empty(slot), ((j / Cfg::kUnitSlots) & 1) ^ 1);
    hopper::cluster_store(hopper::cluster_address(slot_address(slot), 1), static_cast<uint32_t>(unit));
    hopper::mbar_arrive_cluster(hopper::cluster_address(full(slot), 1));
  }

  __device__ int receive(uint32_t j) const {  // rank 1's thread 0
    const uint32_t slot = j % Cfg::kUnitSlots;
    hopper::mbar_wait_cluster(full(slot), (j / Cfg::kUnitSlots) & 1);
    uint32_t unit = 0;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(unit) : "r"(slot_address(slot)) : "memory");
    hopper::mbar_arrive_cluster(hopper::cluster_address(empty(slot), 0));
    return static_cast<int>(unit);
  }
};

// The producer's warp 0: its thread 0 takes the units and publishes them.
template <class Cfg>
struct UnitScheduler {
  const WgmmaGemmArgs& args;
  UnitQueue<Cfg> queue;
  UnitMailbox<Cfg> mailbox;
  int units;
  int rank;  // in the cluster
  int clusters = static_cast<int>(gridDim.x) / cluster_size<Cfg>(args);
  int next = static_cast<int>(blockIdx.x) / cluster_size<Cfg>(args);  // thread 0's: the unit it took for the next iteration

  // The CTA's j-th unit for every lane of warp 0 (units or more: none left). Thread 0 publishes it
  // and already takes the one after (the atomic's latency hides behind this unit's loads; rank 1
  // receives it from rank 0); after its last take, rank 0 counts its cluster done, and the last
  // cluster done resets the counters for the next launch (every cluster has taken its last unit by
  // then).
  __device__ int advance(uint32_t j, int lane) {
    const int unit = __shfl_sync(0xffffffffu, next, 0);
    if (lane == 0) {
      queue.publish(j, unit);
      if (unit < units) {
        if (rank == 0) {
          next = clusters + atomicAdd(args.unit_counter, 1);
          if (cluster_size<Cfg>(args) > 1) mailbox.send(j, next);
        } else {
          next = mailbox.receive(j);
        }
      } else if (rank == 0 && atomicAdd(args.unit_counter + 1, 1) == clusters - 1) {
        atomicExch(args.unit_counter, 0);
        atomicExch(args.unit_counter + 1, 0);
      }
    }
    return unit;
  }
};

// Device groups: their row offsets and prefix of m-blocks (of block_rows rows) into shared memory
// (warp 0 scans, every lane a run of groups), and the total of m-blocks.
template <class Cfg>
__device__ int stage_device_groups(const WgmmaGemmArgs& args, int* group_rows, int* group_blocks, int block_rows,
                                   int tid) {
  return stage_group_prefix(args, group_rows, group_blocks, Cfg::kThreads, tid,
                            [block_rows](int rows) { return (rows + block_rows - 1) / block_rows; });
}

// kN: the wgmma's N (kSubN, or the whole tile's where nothing happens between sub-tiles: one
// instruction reads A's rows once for all of B's).
template <class Cfg, int kN = Cfg::kSubN>
struct WgmmaSlice {
  using Op = decltype(cute::SM90::GMMA::ss_op_selector<typename Cfg::A, typename Cfg::B, float,
                                                        cute::Shape<cute::_64, cute::Int<kN>, cute::Int<Cfg::kStepK>>,
                                                        cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::K>());

  // acc (+)= the 64 rows of A at a_rows times the kN rows of B at b_rows, over one 128-deep slice: 4
  // k-steps of 32 bytes inside the swizzled rows.
  __device__ static __forceinline__ void slice(uint32_t a_rows, uint32_t b_rows, float (&acc)[kN / 2],
                                               bool accumulate) {
    const uint64_t a_desc = hopper::smem_desc(a_rows, 16, 1024);
    const uint64_t b_desc = hopper::smem_desc(b_rows, 16, 1024);
#pragma unroll
    for (int step = 0; step < 4; ++step) {
      hopper::gmma_ss<Op>(a_desc + 2 * step, b_desc + 2 * step, acc, accumulate || step > 0,
                        std::make_index_sequence<kN / 2>{});
    }
  }
};

// block_fp4's consumers: acc (+)= A's 64 rows from registers (wgmma's A fragments of the slice's 4
// k-steps, 4 registers each) times the kSubN rows of B at b_rows.
template <class Cfg>
struct WgmmaSliceRegA {
  using Op = decltype(cute::SM90::GMMA::rs_op_selector<typename Cfg::A, typename Cfg::B, float,
                                                        cute::Shape<cute::_64, cute::Int<Cfg::kSubN>, cute::Int<Cfg::kStepK>>,
                                                        cute::SM90::GMMA::Major::K, cute::SM90::GMMA::Major::K>());

  __device__ static __forceinline__ void slice(const uint32_t (&a)[16], uint32_t b_rows, float (&acc)[Cfg::kSubRegs],
                                               bool accumulate) {
    const uint64_t b_desc = hopper::smem_desc(b_rows, 16, 1024);
#pragma unroll
    for (int step = 0; step < 4; ++step) {
      hopper::gmma_rs<Op>(a[4 * step], a[4 * step + 1], a[4 * step + 2], a[4 * step + 3], b_desc + 2 * step, acc,
                          std::make_index_sequence<Cfg::kSubRegs>{}, accumulate || step > 0);
    }
  }
};

// The TMA loads of one k-slice into a load stage (lane 0 of the producer's warp 0), completing on
// its full barrier with the transaction bytes (a_bytes: 0 where A is not in the load ring). B's rows
// in two boxes of half the tile (the GLU epilogue's up and gate rows lie n / 2 apart); in clusters of
// 2, rank r loads box r into both CTAs' stages (multicast: each CTA's barrier counts both halves).
template <class Cfg>
__device__ __forceinline__ void load_slice(const WgmmaGemmArgs& args, const GemmTileMap<Cfg>& map, const GemmTile& tile,
                                           int kb, uint32_t dst, uint32_t full, uint32_t a_bytes) {
  hopper::mbar_arrive_expect_tx(full, a_bytes + Cfg::kLoadBBytes);
  if constexpr (Cfg::kLoadARows > 0) hopper::tma_load_2d(dst, &args.tma_a, full, kb * Cfg::kLoadRowBytes, tile.row_begin);
  if (cluster_size<Cfg>(args) > 1) {
    const int rank = map.rank();
    hopper::tma_load_3d_multicast(dst + Cfg::kLoadBOffset + rank * Cfg::kLoadBBytes / 2, &args.tma_b, full,
                                  kb * Cfg::kLoadRowBytes, map.b_row(tile, rank * Cfg::kBlockN / 2), tile.group, 0x3);
    return;
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    hopper::tma_load_3d(dst + Cfg::kLoadBOffset + h * Cfg::kLoadBBytes / 2, &args.tma_b, full, kb * Cfg::kLoadRowBytes,
                        map.b_row(tile, h * Cfg::kBlockN / 2), tile.group);
  }
}

// Warp 0 of the producer warpgroup (not the FP4 modes): lane 0 issues the TMA loads of each slice
// (groupwise: warp 1 copies the slice's block scales beside them, run_scale_copier).
template <class Cfg>
__device__ void run_producer(const WgmmaGemmArgs& args, const GemmTileMap<Cfg>& map, const UnitQueue<Cfg>& queue,
                             const UnitMailbox<Cfg>& mailbox, uint32_t smem, int lane) {
  const uint32_t a_bytes = static_cast<uint32_t>(args.a_box_rows) * Cfg::kLoadRowBytes;
  UnitScheduler<Cfg> scheduler{args, queue, mailbox, map.units(), map.rank()};
  uint32_t it = 0;
  for (uint32_t j = 0;; ++j) {
    const int u = scheduler.advance(j, lane);
    if (u >= map.units()) break;
    const GemmUnit unit = map.unit(u);
    const GemmTile tile = map.at(unit.tile);
    for (int kb = unit.k_begin; kb < unit.k_end; ++kb, ++it) {
      const uint32_t stage = it % Cfg::kLoadStages;
      const uint32_t phase = (it / Cfg::kLoadStages) & 1;
      const uint32_t full = smem + Cfg::kLoadFullOffset + 8 * stage;
      hopper::mbar_wait(smem + Cfg::kLoadEmptyOffset + 8 * stage, phase ^ 1);
      if (lane == 0) load_slice<Cfg>(args, map, tile, kb, smem + Cfg::kLoadOffset + stage * Cfg::kLoadStageBytes, full, a_bytes);
    }
  }
}

// Groupwise: warp 1 of the producer warpgroup copies each slice's block scales beside warp 0's TMA
// loads (cp.async, completing on the stage's full barrier), so that the address arithmetic of 160
// copies a slice does not delay the loads (in one warp with them it capped the ring's refill rate,
// ~46 GB/s an SM: 128 x 128 tiles starved).
template <class Cfg>
__device__ void run_scale_copier(const WgmmaGemmArgs& args, const GemmTileMap<Cfg>& map, const UnitQueue<Cfg>& queue,
                                 uint32_t smem, int lane) {
  uint32_t it = 0;
  for (uint32_t j = 0;; ++j) {
    const int u = queue.take(j);
    if (u >= map.units()) break;
    const GemmUnit unit = map.unit(u);
    const GemmTile tile = map.at(unit.tile);
    // This lane's scale sources at slice 0: A's rows lane, lane + 32, ... (rows past the group's
    // end read its last row's: their results are not stored), then B's block of sub-tile `lane`.
    constexpr int kRowsPerLane = Cfg::kBlockM / 32;
    const float* a_src[kRowsPerLane];
    const float* b_src = nullptr;
#pragma unroll
    for (int i = 0; i < kRowsPerLane; ++i) {
      a_src[i] = args.a_scale + min(tile.row_begin + lane + 32 * i, tile.row_end - 1) * args.a_scale_row_stride;
    }
    if (lane < Cfg::kSubTiles) {  // a sub-tile wholly past n (n-tail tiles) reads the last block
      const int n_block = min(map.b_row(tile, lane * Cfg::kSubN), args.n - 1) / 128;
      b_src = args.b_scale + tile.group * args.b_scale_group_stride + n_block * args.b_scale_n_stride;
    }
    for (int kb = unit.k_begin; kb < unit.k_end; ++kb, ++it) {
      const uint32_t stage = it % Cfg::kStages;
      hopper::mbar_wait(smem + Cfg::kEmptyOffset + 8 * stage, ((it / Cfg::kStages) & 1) ^ 1);
      const uint32_t scales = smem + Cfg::kScaleOffset + stage * Cfg::kScaleStageBytes;
#pragma unroll
      for (int i = 0; i < kRowsPerLane; ++i) hopper::cp_async_4(scales + 4 * (lane + 32 * i), a_src[i] + kb * args.a_scale_k_stride);
      if (b_src != nullptr) hopper::cp_async_4(scales + 4 * (Cfg::kBlockM + lane), b_src + kb * args.b_scale_k_stride);
      hopper::cp_async_arrive_noinc(smem + Cfg::kFullOffset + 8 * stage);
    }
  }
}

// FP4's producer: the whole warpgroup. Thread 0 issues the TMA loads of each slice's codes;
// every thread copies the scale words of rows thread, thread + 128, ... of the raw stage (block_fp4:
// A's rows, then B's; weight_fp4: B's, of the tile's group) beside them (cp.async, one arrival a
// thread on the stage's full barrier). A row's source is computed once per unit, a slice only adds
// its column offset (the same for every row of A, of B). One warp doing all 384 rows with the full
// offset arithmetic took ~3000 cycles a slice (the header says more).
template <class Cfg>
__device__ void run_fp4_producer(const WgmmaGemmArgs& args, const GemmTileMap<Cfg>& map, const UnitQueue<Cfg>& queue,
                                 const UnitMailbox<Cfg>& mailbox, uint32_t smem, int thread) {
  constexpr int kRowsPerThread = (Cfg::kLoadRows + 127) / 128;
  const uint32_t a_bytes = static_cast<uint32_t>(args.a_box_rows) * Cfg::kLoadRowBytes;
  UnitScheduler<Cfg> scheduler{args, queue, mailbox, map.units(), map.rank()};
  uint32_t it = 0;
  for (uint32_t j = 0;; ++j) {
    const int u = thread < 32 ? scheduler.advance(j, thread) : queue.take(j);
    if (u >= map.units()) break;
    const GemmUnit unit = map.unit(u);
    const GemmTile tile = map.at(unit.tile);
    const uint8_t* const b_scales = args.b_block_scales + tile.group * args.b_sf_group_stride;
    // Rows past the group's end or past n read the last row's: their results are not stored.
    const uint8_t* row_src[kRowsPerThread];
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = thread + 128 * i;
      const bool a_row = Cfg::kFp4A && r < Cfg::kLoadARows;
      const uint32_t row = a_row ? min(tile.row_begin + r, tile.row_end - 1)
                                 : min(tile.col_begin + r - Cfg::kLoadARows, args.n - 1);
      row_src[i] = (a_row ? args.a_block_scales : b_scales) +
                   quant::sf_row_offset<uint32_t>(a_row ? args.a_sf_layout : args.b_sf_layout, row, args.sf_columns);
    }
    for (int kb = unit.k_begin; kb < unit.k_end; ++kb, ++it) {
      const uint32_t stage = it % Cfg::kLoadStages;
      const uint32_t phase = (it / Cfg::kLoadStages) & 1;
      const uint32_t full = smem + Cfg::kLoadFullOffset + 8 * stage;
      const uint32_t dst = smem + Cfg::kLoadOffset + stage * Cfg::kLoadStageBytes;
      hopper::mbar_wait(smem + Cfg::kLoadEmptyOffset + 8 * stage, phase ^ 1);
      if (thread == 0) load_slice<Cfg>(args, map, tile, kb, dst, full, Cfg::kFp4A ? a_bytes : 0);
      const uint32_t a_column = fp4_slice_scale_column_offset<uint32_t>(args.a_sf_layout, args.fp4_format, kb);
      const uint32_t b_column = fp4_slice_scale_column_offset<uint32_t>(args.b_sf_layout, args.fp4_format, kb);
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        const int r = thread + 128 * i;
        if (r < Cfg::kLoadRows) {
          const bool a_row = Cfg::kFp4A && r < Cfg::kLoadARows;
          hopper::cp_async_4(dst + Cfg::kLoadScaleOffset + 4 * r, row_src[i] + (a_row ? a_column : b_column));
        }
      }
      hopper::cp_async_arrive_noinc(full);
    }
  }
}

// FP4: pair s of a word of codes (fp4_expand.hpp) times its block's scale factor (16-bit pair bits,
// both halves alike) in Cfg's expanded type, exactly.
template <class Cfg>
__device__ __forceinline__ uint32_t expand_fp4_pair(uint32_t q, int s, uint32_t scale2) {
  const uint32_t codes = fp4_pair_bits<Cfg::kExpandedType>(q, s);
  uint32_t pair;
  if constexpr (Cfg::kExpandedType == DType::bfloat16) {
    asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(pair) : "r"(codes), "r"(scale2));
  } else {
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(pair) : "r"(codes), "r"(scale2));
  }
  return pair;
}

// FP4: a block's scale byte (of a slice's scale word) as the 16-bit factor's bits in both halves.
template <class Cfg, quant::BlockFormat kFormat>
__device__ __forceinline__ uint32_t fp4_scale2(uint32_t scale_word, int kb, int block) {
  const uint32_t scale = fp4_scale_bits<Cfg::kExpandedType, kFormat>(
      (scale_word >> (8 * fp4_slice_scale_byte(kFormat, kb, block))) & 0xFF);
  return scale | (scale << 16);
}

// FP4: row r of a raw stage (its 32 bytes of codes, 32-byte swizzled: 16-byte chunk j at
// j ^ ((r / 4) % 2); its scale word at scales + 4 r) expanded into row `row` of a 16-bit stage
// (128 bytes, 128-byte swizzled: chunk j at j ^ (row % 8)): block_fp4's chunk order (fp4_expand.hpp:
// slot c of chunk j is pair j % 4 of word 2c + j / 4), weight_fp4's k order (chunk j: word j's pairs
// regrouped). Consecutive threads take consecutive rows: both the loads and the stores are free of
// bank conflicts.
struct Fp4RawRow {
  uint4 lo, hi;  // the codes' two 16-byte chunks, in k order
  uint32_t scale_word;
};

template <class Cfg>
__device__ __forceinline__ Fp4RawRow load_fp4_row(const uint8_t* raw, int r) {
  const int flip = (r / 4) % 2;
  Fp4RawRow row;
  row.lo = *reinterpret_cast<const uint4*>(raw + 32 * r + 16 * flip);
  row.hi = *reinterpret_cast<const uint4*>(raw + 32 * r + 16 * (1 - flip));
  row.scale_word = *reinterpret_cast<const uint32_t*>(raw + Cfg::kLoadScaleOffset + 4 * r);
  return row;
}

// weight_fp4: word `word` of a row's codes times its block's scale factor, its pairs regrouped into
// k order, stored as 16-byte chunk `chunk` of row `stage_row` of a 16-bit stage.
template <class Cfg>
__device__ __forceinline__ void store_fp4_chunk_in_k_order(uint32_t word, uint32_t scale2, uint8_t* out, int stage_row,
                                                           int chunk) {
  uint32_t pairs[4], in_order[4];
#pragma unroll
  for (int p = 0; p < 4; ++p) pairs[p] = expand_fp4_pair<Cfg>(word, p, scale2);
  fp4_pairs_in_order(pairs, in_order);
  *reinterpret_cast<uint4*>(out + 128 * stage_row + 16 * (chunk ^ (stage_row % 8))) =
      make_uint4(in_order[0], in_order[1], in_order[2], in_order[3]);
}

template <class Cfg, quant::BlockFormat kFormat>
__device__ __forceinline__ void expand_fp4_row(const Fp4RawRow& row, uint8_t* out, int stage_row, int kb) {
  uint32_t scale2[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) scale2[c] = fp4_scale2<Cfg, kFormat>(row.scale_word, kb, c);
  const uint32_t words[8] = {row.lo.x, row.lo.y, row.lo.z, row.lo.w, row.hi.x, row.hi.y, row.hi.z, row.hi.w};
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    if constexpr (Cfg::kWeightFp4) {
      store_fp4_chunk_in_k_order<Cfg>(words[j], scale2[j / 2], out, stage_row, j);
    } else {
      uint32_t chunk[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) chunk[c] = expand_fp4_pair<Cfg>(words[fp4_chunk_word(j, c)], j % 4, scale2[c]);
      *reinterpret_cast<uint4*>(out + 128 * stage_row + 16 * (j ^ (stage_row % 8))) =
          make_uint4(chunk[0], chunk[1], chunk[2], chunk[3]);
    }
  }
}

// weight_fp4 in half rows (Cfg::kFp4HalfRows): half `half` of raw row r of B, its 16-byte chunk of
// codes (words 4 half .. 4 half + 3, k in order) and its scale word, expanded into chunks 4 half ..
// 4 half + 3 of row `stage_row` of a 16-bit stage. Consecutive threads take the two halves of
// consecutive rows: both the loads and the stores are free of bank conflicts.
struct Fp4RawHalfRow {
  uint4 codes;
  uint32_t scale_word;
};

template <class Cfg>
__device__ __forceinline__ Fp4RawHalfRow load_fp4_half_row(const uint8_t* raw, int r, int half) {
  Fp4RawHalfRow row;
  row.codes = *reinterpret_cast<const uint4*>(raw + 32 * r + 16 * (half ^ ((r / 4) % 2)));
  row.scale_word = *reinterpret_cast<const uint32_t*>(raw + Cfg::kLoadScaleOffset + 4 * r);
  return row;
}

template <class Cfg, quant::BlockFormat kFormat>
__device__ __forceinline__ void expand_fp4_half_row(const Fp4RawHalfRow& row, uint8_t* out, int stage_row, int half,
                                                    int kb) {
  static_assert(Cfg::kWeightFp4, "k in order");
  const uint32_t words[4] = {row.codes.x, row.codes.y, row.codes.z, row.codes.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t scale2 = fp4_scale2<Cfg, kFormat>(row.scale_word, kb, 2 * half + i / 2);
    store_fp4_chunk_in_k_order<Cfg>(words[i], scale2, out, stage_row, 4 * half + i);
  }
}

// FP4's converter warpgroups: B's rows of every slice's raw stage into its 16-bit stage, row b by
// converter thread b % (128 kConverters) (half rows: row b / 2's half b % 2 by thread b), the scale
// format a compile-time constant (no branches in the loop). All of a thread's rows are loaded before
// any is expanded, so their shared-memory latencies overlap. Once its expansion is fenced for the
// async proxy, each thread releases the raw stage and each warp fills the 16-bit stage (its lane 0
// arrives; wgmma reads through the async proxy). weight_fp4: once the stage is free, thread 0 also
// loads A's slice into it (TMA, its own arrival and transaction bytes on the stage's full barrier),
// a stage ahead of the consumers like the expansion; the producer's ring holds B alone, so B's
// loads run as far ahead as before.
template <class Cfg, quant::BlockFormat kFormat>
__device__ void convert_fp4_slices(const WgmmaGemmArgs& args, const GemmTileMap<Cfg>& map, const UnitQueue<Cfg>& queue,
                                   uint8_t* smem_raw, uint32_t smem, int thread) {
  constexpr int kConverterThreads = 128 * Cfg::kConverters;
  constexpr int kRowsPerThread = Cfg::kFp4HalfRows ? 0 : Cfg::kBlockN / kConverterThreads;
  const uint32_t a_bytes = static_cast<uint32_t>(args.a_box_rows) * Cfg::kBlockK;
  uint32_t it = 0;
  for (uint32_t j = 0;; ++j) {
    const int u = queue.take(j);
    if (u >= map.units()) break;
    const GemmUnit unit = map.unit(u);
    int a_first_row = 0;  // weight_fp4: the tile's first row of A
    if constexpr (Cfg::kWeightFp4) a_first_row = map.at(unit.tile).row_begin;
    for (int kb = unit.k_begin; kb < unit.k_end; ++kb, ++it) {
      const uint32_t raw_stage = it % Cfg::kRawStages, stage = it % Cfg::kStages;
      hopper::mbar_wait(smem + Cfg::kRawFullOffset + 8 * raw_stage, (it / Cfg::kRawStages) & 1);
      hopper::mbar_wait(smem + Cfg::kEmptyOffset + 8 * stage, ((it / Cfg::kStages) & 1) ^ 1);
      if constexpr (Cfg::kWeightFp4) {
        if (thread == 0) {
          const uint32_t full = smem + Cfg::kFullOffset + 8 * stage;
          hopper::mbar_arrive_expect_tx(full, a_bytes);
          hopper::tma_load_2d(smem + stage * Cfg::kStageBytes, &args.tma_a, full, kb * Cfg::kBlockK, a_first_row);
        }
      }
      const uint8_t* raw = smem_raw + Cfg::kRawOffset + raw_stage * Cfg::kRawStageBytes;
      uint8_t* out = smem_raw + stage * Cfg::kStageBytes;
      Fp4RawRow rows[kRowsPerThread > 0 ? kRowsPerThread : 1];
      Fp4RawHalfRow half_row;
      if constexpr (Cfg::kFp4HalfRows) half_row = load_fp4_half_row<Cfg>(raw, thread / 2, thread % 2);
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        rows[i] = load_fp4_row<Cfg>(raw, Cfg::kLoadARows + thread + kConverterThreads * i);
      }
      if constexpr (Cfg::kFp4EarlyRawRelease) {
        hopper::fence_proxy_async();
        hopper::mbar_arrive(smem + Cfg::kRawEmptyOffset + 8 * raw_stage);
      }
      if constexpr (Cfg::kFp4HalfRows) {
        expand_fp4_half_row<Cfg, kFormat>(half_row, out, Cfg::kStageARows + thread / 2, thread % 2, kb);
      }
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        expand_fp4_row<Cfg, kFormat>(rows[i], out, Cfg::kStageARows + thread + kConverterThreads * i, kb);
      }
      // The proxy fence orders this thread's generic accesses before async-proxy ones: its stores
      // before wgmma's reads, and its raw stage's reads before the refill's TMA writes (without it,
      // mxfp4 at m 1000 x n 2304 read codes already overwritten). Each thread releases the raw stage
      // itself, not through lane 0: the scale words' cp.async overwrite words this thread read, and
      // racecheck sees only a thread's own arrival. Where Cfg::kFp4EarlyRawRelease, it released it
      // before expanding, after a fence of its own.
      hopper::fence_proxy_async();
      if constexpr (!Cfg::kFp4EarlyRawRelease) hopper::mbar_arrive(smem + Cfg::kRawEmptyOffset + 8 * raw_stage);
      __syncwarp();
      if (thread % 32 == 0) hopper::mbar_arrive(smem + Cfg::kFullOffset + 8 * stage);
    }
  }
}

// fp16 operands take NVFP4 only (wgmma_gemm_unsupported: ue8m0 scales leave fp16's range).
template <class Cfg>
__device__ void run_converter(const WgmmaGemmArgs& args, const GemmTileMap<Cfg>& map, const UnitQueue<Cfg>& queue,
                              uint8_t* smem_raw, uint32_t smem, int thread) {
  if constexpr (Cfg::kExpandedType == DType::float16) {
    convert_fp4_slices<Cfg, quant::BlockFormat::nvfp4>(args, map, queue, smem_raw, smem, thread);
  } else if (args.fp4_format == quant::BlockFormat::nvfp4) {
    convert_fp4_slices<Cfg, quant::BlockFormat::nvfp4>(args, map, queue, smem_raw, smem, thread);
  } else {
    convert_fp4_slices<Cfg, quant::BlockFormat::mxfp4>(args, map, queue, smem_raw, smem, thread);
  }
}

template <class Cfg>
__device__ void store_tile(const WgmmaGemmArgs& args, const GemmTile& tile, const float (&acc)[Cfg::kSubTiles][Cfg::kSubRegs],
                           int row0, int lane, float scale) {
  const int col0 = tile.col_begin + (lane % 4) * 2;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + 8 * half;
    if (row >= tile.row_end) continue;
    uint8_t* out_row = static_cast<uint8_t*>(args.d) + static_cast<int64_t>(row) * args.n * 2;
#pragma unroll
    for (int h = 0; h < Cfg::kSubTiles; ++h) {
#pragma unroll
      for (int j = 0; j < Cfg::kSubN / 8; ++j) {
        const int col = col0 + h * Cfg::kSubN + j * 8;
        if (col >= args.n) continue;
        const float lo = acc[h][4 * j + 2 * half] * scale, hi = acc[h][4 * j + 2 * half + 1] * scale;
        const uint32_t packed = args.d_bf16 ? hopper::pack2<true>(lo, hi) : hopper::pack2<false>(lo, hi);
        *reinterpret_cast<uint32_t*>(out_row + col * 2) = packed;
      }
    }
  }
}

// Four 8 x 8 matrices of 16-bit pairs from the mma fragment (register i: matrix i, whose row
// addresses lanes 8 i .. 8 i + 7 give) into shared memory.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// The epilogue's staging (kStagedEpilogue): a warp writes 16 rows x 128 bytes of its D (or GLU
// codes) into its own buffer in the accumulators' fragment order and stores them back as 16-byte
// vectors, each store 4 whole 128-byte row segments (a fragment's own stores write 4 or 2 bytes a
// lane: 8 rows' parts of 32-byte sectors, ~4x the store instructions and L2 sectors; staging took
// 4.4% off mm_bf16 8192^3's time, experiments/session35). A row's 16-byte chunk c lies at chunk
// c ^ (row % 8), so neither the fragment's writes nor the read-back conflict on banks. The buffer is
// the warp's alone: __syncwarp orders it.
__device__ __forceinline__ uint32_t staged_offset(int row, int chunk) { return row * 128 + ((chunk ^ (row % 8)) * 16); }

// The buffer's rows back out: row r to dst + (warp_row0 + r) * pitch, where warp_row0 + r < row_end,
// lane % 8's 16 bytes (where `columns_in`: false past D's last column).
__device__ __forceinline__ void store_staged_rows(uint32_t buffer, int lane, int warp_row0, int row_end, uint8_t* dst,
                                                  int64_t pitch, bool columns_in) {
  __syncwarp();
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = lane / 8 + 4 * i;
    const uint4 v = ld_shared_v4(buffer + staged_offset(r, lane % 8));
    if (warp_row0 + r < row_end && columns_in) {
      *reinterpret_cast<uint4*>(dst + (warp_row0 + r) * pitch + 16 * (lane % 8)) = v;
    }
  }
  __syncwarp();
}

// store_tile through the staging buffer (D's rows whole 16-byte vectors: n a multiple of 8), a
// 64-column chunk at a time, written by stmatrix (8 x 8 matrices of 16-bit pairs: the fragment's own
// layout).
template <class Cfg>
__device__ void store_tile_staged(const WgmmaGemmArgs& args, const GemmTile& tile,
                                  const float (&acc)[Cfg::kSubTiles][Cfg::kSubRegs], int warp_row0, uint32_t buffer,
                                  int lane, float scale) {
  constexpr int kGroupsPerSub = Cfg::kSubN / 8;  // 8-column groups of a sub-tile
  const int st_row = lane % 8 + 8 * ((lane / 8) % 2);  // the row of the matrix this lane addresses
  const auto pair = [&](int g, int e) {  // 8-column group g's two values of register pair e
    const float* part = acc[g / kGroupsPerSub] + 4 * (g % kGroupsPerSub) + 2 * e;
    return args.d_bf16 ? hopper::pack2<true>(part[0] * scale, part[1] * scale)
                       : hopper::pack2<false>(part[0] * scale, part[1] * scale);
  };
#pragma unroll
  for (int c = 0; c < Cfg::kBlockN / 64; ++c) {
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      const int g = 8 * c + 2 * p;  // this stmatrix: groups g (matrices 0, 1) and g + 1 (2, 3)
      stmatrix_x4(buffer + staged_offset(st_row, 2 * p + lane / 16), pair(g, 0), pair(g, 1), pair(g + 1, 0),
                  pair(g + 1, 1));
    }
    const int col = tile.col_begin + 64 * c;
    store_staged_rows(buffer, lane, warp_row0, tile.row_end, static_cast<uint8_t*>(args.d) + col * 2,
                      static_cast<int64_t>(args.n) * 2, col + 8 * (lane % 8) < args.n);
  }
}

// The GLU epilogue (128 x 256 tiles): sub-tile 0 multiplied B's up rows, sub-tile 1 the gate rows of
// the same columns, so each thread holds both products of its columns. act = glu(up, gate) of the
// tile's 128 columns is one FP8 1x128 block a row: its amax over the row's quad of threads, then the
// codes (two bytes a thread and 8 columns) and the block's scale. The arithmetic runs on every
// element of FC1 while the tensor cores wait, so it is the cheap form: SiLU by the fast exponential
// and division (2 ulp), the codes by the reciprocal of the block's scale (an ulp from
// groupwise_quantize's division: a code one step off only at a rounding tie). With IEEE divisions and
// both units' branches (~80 instructions an element) FC1 at 4096 tokens of DeepSeek-V3 took 4.28 ms
// against 3.35 unfused.
template <GatedLinearUnit kUnit>
__device__ __forceinline__ float fast_glu(float up, float gate) {
  if constexpr (kUnit == GatedLinearUnit::swiglu) {
    return __fdividef(gate, 1.0f + __expf(-gate)) * up;
  } else {
    return gated_linear_unit(kUnit, up, gate);
  }
}

template <class Cfg, GatedLinearUnit kUnit>
__device__ void store_glu_tile(const WgmmaGemmArgs& args, const GemmTile& tile,
                               const float (&acc)[Cfg::kSubTiles][Cfg::kSubRegs], int row0, int lane, uint32_t buffer) {
  if constexpr (Cfg::kSubTiles == 2 && Cfg::kSubN == 128 && Cfg::kStagedEpilogue) {
    const int64_t scale_columns = args.glu_columns / 128;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + 8 * half;
      float act[Cfg::kSubN / 4];
      float amax = 0.0f;
#pragma unroll
      for (int j = 0; j < Cfg::kSubN / 8; ++j) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int i = 4 * j + 2 * half + e;
          act[2 * j + e] = fast_glu<kUnit>(acc[0][i], acc[1][i]);
          amax = fmaxf(amax, fabsf(act[2 * j + e]));
        }
      }
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
      if (row >= tile.row_end) continue;
      const float scale = groupwise_scale(amax);
      const float inverse = 1.0f / (scale + kGroupwiseScaleEpsilon);
      const int r = lane / 4 + 8 * half;  // the row in the warp's buffer
#pragma unroll
      for (int j = 0; j < Cfg::kSubN / 8; ++j) {
        const uint32_t pair = quant::float_to_e4m3(act[2 * j] * inverse) |
                              static_cast<uint32_t>(quant::float_to_e4m3(act[2 * j + 1] * inverse)) << 8;
        st_shared_u16(buffer + staged_offset(r, j / 2) + (j % 2) * 8 + (lane % 4) * 2, pair);
      }
      if (lane % 4 == 0) args.glu_scales[row * scale_columns + tile.col_begin / 128] = scale;
    }
    store_staged_rows(buffer, lane, row0 - lane / 4, tile.row_end, args.glu_codes + tile.col_begin, args.glu_columns,
                      true);
  }
}

// One workspace slot (a unit's fp32 tile) as float4s [consumer][chunk][thread], so that a warp's
// accesses are 512 contiguous bytes and each thread reads back exactly its own accumulators' places.
// Reads bypass L1 (ld.cg): the slots were written by other SMs.
template <class Cfg>
struct SplitSlot {
  static constexpr int kChunks = Cfg::kSubTiles * Cfg::kSubRegs / 4;  // float4s a thread holds
  static constexpr int kChunksPerSub = Cfg::kSubRegs / 4;
  static constexpr int kStride = Cfg::kSlotFloats / 4;  // float4s from one split's slot to the next
  using Acc = float[Cfg::kSubTiles][Cfg::kSubRegs];

  // The 4 accumulators of chunk c (a compile-time index once unrolled).
  __device__ static __forceinline__ float* chunk(Acc& acc, int c) {
    return &acc[c / kChunksPerSub][4 * (c % kChunksPerSub)];
  }

  __device__ static __forceinline__ void add(Acc& acc, int c, float4 v) {
    float* a = chunk(acc, c);
    a[0] += v.x, a[1] += v.y, a[2] += v.z, a[3] += v.w;
  }

  __device__ static __forceinline__ void write(float4* slot, Acc& acc) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const float* a = chunk(acc, c);
      __stcg(slot + c * 128, make_float4(a[0], a[1], a[2], a[3]));
    }
  }

  __device__ static __forceinline__ void load(const float4* slot, float4 (&v)[kChunks]) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) v[c] = __ldcg(slot + c * 128);
  }

  __device__ static __forceinline__ void add(Acc& acc, const float4 (&v)[kChunks]) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) add(acc, c, v[c]);
  }

  // acc = the `count` slots from `slots` summed in split order. One consumer warpgroup: two slots
  // in flight, the next one's loads issued before this one's adds (at small m few threads load, and
  // a round trip to L2 per split would dominate). Two warpgroups' threads hold twice the
  // accumulators, too many for a second slot beside them: one slot at a time.
  __device__ static __forceinline__ void sum(const float4* slots, int count, Acc& acc) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      float* a = chunk(acc, c);
      a[0] = a[1] = a[2] = a[3] = 0.0f;
    }
    if constexpr (Cfg::kConsumers == 1) {
      float4 even[kChunks], odd[kChunks];
      load(slots, even);
#pragma unroll 1
      for (int s = 0; s < count; s += 2) {
        if (s + 1 < count) load(slots + (s + 1) * kStride, odd);
        add(acc, even);
        if (s + 1 == count) break;
        if (s + 2 < count) load(slots + (s + 2) * kStride, even);
        add(acc, odd);
      }
    } else {
#pragma unroll 1
      for (int s = 0; s < count; ++s) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) add(acc, c, __ldcg(slots + s * kStride + c * 128));
      }
    }
  }
};

// Split-K: this unit's accumulators to its slot; then, if this CTA's split is the tile's last to
// arrive, acc = every split's slot summed in split order (its own read back, so the sum is the same
// whichever split arrives last) and the tile's counter reset to 0 for the next launch. Returns
// whether acc now holds the tile's sum (the CTA stores it). Threads whose rows are all past the
// group's end (`rows_stored` false) neither write nor read: their results are never stored.
template <class Cfg>
__device__ bool reduce_splits(const WgmmaGemmArgs& args, const GemmUnit& unit, typename SplitSlot<Cfg>::Acc& acc,
                              bool rows_stored, int consumer, int thread) {
  using Slot = SplitSlot<Cfg>;
  constexpr int kThreads = 128 * Cfg::kConsumers;
  float4* const tile_slots = reinterpret_cast<float4*>(args.partials) +
                             static_cast<int64_t>(unit.tile) * args.k_splits * Slot::kStride +
                             consumer * Slot::kChunks * 128 + thread;
  if (rows_stored) Slot::write(tile_slots + unit.split * Slot::kStride, acc);
  // The barrier orders every consumer's slot writes before thread 0's release (acq_rel atomic); its
  // acquire, through the second barrier, orders the other splits' writes before the reads.
  hopper::named_sync_unaligned(Cfg::kSplitBarrier, kThreads);
  bool last = false;
  if (consumer == 0 && thread == 0) {
    last = hopper::atomic_add_acq_rel(args.tile_arrivals + unit.tile, 1) == args.k_splits - 1;
    if (last) args.tile_arrivals[unit.tile] = 0;
  }
  if (!hopper::named_sync_or(Cfg::kSplitBarrier, kThreads, last)) return false;
  if (rows_stored) Slot::sum(tile_slots, args.k_splits, acc);
  return true;
}

// The kRegs accumulators from part * kRegs on, of the sub-tiles' taken as one array (the fragment of
// a wgmma kRegs * 2 wide).
template <int kRegs, int kSubTiles, int kSubRegs>
__device__ __forceinline__ float (&accumulator_part(float (&acc)[kSubTiles][kSubRegs], int part))[kRegs] {
  return *reinterpret_cast<float(*)[kRegs]>(&acc[0][0] + part * kRegs);
}

// A consumer thread is done with a stage (its warp's wgmmas that read it have completed): an
// arrival on this CTA's empty barrier (one lane of each warp; groupwise every thread, which read the
// stage's scales), and in clusters of 2 that lane's on the peer's too (it multicast half of this
// stage's B and must not overwrite it before both CTAs are done). The peer's empty barriers are
// mapped once (StageRelease): mapa and the rank read between a sub-tile's wgmmas delayed the turn.
struct StageRelease {
  uint32_t empty;       // this CTA's empty barriers
  uint32_t peer_empty;  // the peer's (clusters of 2), else 0
};

template <class Cfg>
__device__ __forceinline__ void release_stage(const StageRelease& release, uint32_t stage) {
  const bool elected = hopper::elect_one();
  if (Cfg::kGroupwise || elected) hopper::mbar_arrive(release.empty + 8 * stage);
  if (Cfg::kClusters && release.peer_empty != 0 && elected) hopper::mbar_arrive_remote(release.peer_empty + 8 * stage);
}

// block_fp4: where a consumer thread's A codes lie in a raw stage. Its A fragments hold rows g and
// g + 8 of its warp's 16 (tile_row = g's), slot c = lane % 4 of every chunk: block c of each row
// (fp4_expand.hpp), 8 bytes of codes (words 2c, 2c + 1) and one scale byte. A warp's 8-byte loads
// cover 8 whole rows each: free of bank conflicts.
struct Fp4ARows {
  uint32_t codes[2];   // rows g, g + 8: their block's codes (offsets in a raw stage)
  uint32_t scales[2];  // their scale words
  int block;
};

template <class Cfg>
__device__ __forceinline__ Fp4ARows fp4_a_rows(int tile_row, int lane) {
  Fp4ARows a;
  a.block = lane % 4;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = tile_row + 8 * h;
    a.codes[h] = 32 * r + 16 * ((a.block / 2) ^ ((r / 4) % 2)) + 8 * (a.block % 2);
    a.scales[h] = Cfg::kLoadScaleOffset + 4 * r;
  }
  return a;
}

// block_fp4: a consumer thread's A rows of slice kb from a raw stage into its A fragments: k-step
// t's registers are chunks 2t and 2t + 1 of rows g, g + 8, g, g + 8; chunk j's slot c is pair j % 4
// of word 2c + j / 4 (fp4_chunk_word): the thread's first word for j < 4, its second after.
template <class Cfg, quant::BlockFormat kFormat>
__device__ __forceinline__ void expand_fp4_a(const uint8_t* raw, const Fp4ARows& a, int kb, uint32_t (&frag)[16]) {
  uint2 words[2];
  uint32_t scale_words[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    words[h] = *reinterpret_cast<const uint2*>(raw + a.codes[h]);
    scale_words[h] = *reinterpret_cast<const uint32_t*>(raw + a.scales[h]);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t scale2 = fp4_scale2<Cfg, kFormat>(scale_words[h], kb, a.block);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      frag[4 * (j / 2) + 2 * (j % 2) + h] = expand_fp4_pair<Cfg>(j < 4 ? words[h].x : words[h].y, j % 4, scale2);
    }
  }
}

// block_fp4's consumer, one slice: its A rows from the raw stage into `frag` (the wgmmas that read
// that set last are done) while the converter may still expand B, the raw stage released (after a
// proxy fence: the refill writes through TMA), then the wgmmas on B's 16-bit stage; once the previous
// slice's wgmmas are done, that slice's stage is released.
template <class Cfg, quant::BlockFormat kFormat>
__device__ __forceinline__ void consume_fp4_slice(const uint8_t* smem_raw, uint32_t smem, const Fp4ARows& a,
                                                  const StageRelease& release, int kb, bool first, uint32_t it,
                                                  uint32_t& previous, uint32_t (&frag)[16],
                                                  float (&acc)[Cfg::kSubTiles][Cfg::kSubRegs]) {
  const uint32_t raw_stage = it % Cfg::kRawStages, stage = it % Cfg::kStages;
  hopper::mbar_wait(smem + Cfg::kRawFullOffset + 8 * raw_stage, (it / Cfg::kRawStages) & 1);
  expand_fp4_a<Cfg, kFormat>(smem_raw + Cfg::kRawOffset + raw_stage * Cfg::kRawStageBytes, a, kb, frag);
  hopper::fence_proxy_async();
  hopper::mbar_arrive(smem + Cfg::kRawEmptyOffset + 8 * raw_stage);
  hopper::mbar_wait(smem + Cfg::kFullOffset + 8 * stage, (it / Cfg::kStages) & 1);
  hopper::fence_regs(frag);  // every fragment written before the wgmma fence (PTX's rule for A in registers)
  hopper::wgmma_fence();
#pragma unroll
  for (int h = 0; h < Cfg::kSubTiles; ++h) {
    WgmmaSliceRegA<Cfg>::slice(frag, smem + stage * Cfg::kStageBytes + h * Cfg::kSubN * Cfg::kBlockK, acc[h], !first);
  }
  hopper::wgmma_commit();
  hopper::wgmma_wait<1>();  // the previous slice's wgmmas are done: its stage and fragments are free
  if (!first) release_stage<Cfg>(release, previous);
  previous = stage;
}

// block_fp4's consumer, one unit's slices: two sets of A fragments, so that a slice's are expanded
// while the previous slice's wgmmas still read theirs. One loop with two exits (every unit has a
// k-block): a remainder after a loop of pairs took a third set of fragments, and a test at the top
// spilled (session 16, 64 x 128).
template <class Cfg, quant::BlockFormat kFormat>
__device__ void consume_fp4_unit(const uint8_t* smem_raw, uint32_t smem, const GemmUnit& unit,
                                 const StageRelease& release, int tile_row, int lane, uint32_t& it,
                                 float (&acc)[Cfg::kSubTiles][Cfg::kSubRegs]) {
  const Fp4ARows a = fp4_a_rows<Cfg>(tile_row, lane);
  uint32_t even[16], odd[16];
  uint32_t previous = 0;
  for (int kb = unit.k_begin;;) {
    consume_fp4_slice<Cfg, kFormat>(smem_raw, smem, a, release, kb, kb == unit.k_begin, it++, previous, even, acc);
    if (++kb == unit.k_end) break;
    consume_fp4_slice<Cfg, kFormat>(smem_raw, smem, a, release, kb, false, it++, previous, odd, acc);
    if (++kb == unit.k_end) break;
  }
  hopper::wgmma_wait<0>();
#pragma unroll
  for (int h = 0; h < Cfg::kSubTiles; ++h) hopper::fence_regs(acc[h]);
  release_stage<Cfg>(release, previous);
}

// Groupwise, one sub-tile (Cfg::kDoubleBuffered): the unit's k-blocks accumulated into acc, each
// slice's wgmmas into temporary (slice parity) and promoted with its scales once the next slice's
// are issued, so that the tensor cores run those while this warpgroup promotes. The scales are read
// when the slice's stage is full and kept for the promotion; the stage is released after it.
template <class Cfg>
__device__ __forceinline__ void accumulate_groupwise_double_buffered(const GemmUnit& unit, const StageRelease& release,
                                                                     const uint8_t* smem_raw, uint32_t smem,
                                                                     int consumer, int tile_row, uint32_t& it,
                                                                     float (&acc)[Cfg::kSubRegs]) {
#pragma unroll
  for (int i = 0; i < Cfg::kSubRegs; ++i) acc[i] = 0.0f;
  float tmp[2][Cfg::kSubRegs];
  float scale0[2], scale1[2];  // a_scale(row, row + 8) x b_scale of the slice in temporary b
  uint32_t stages[2];
  const auto issue = [&](auto parity) {
    constexpr int b = decltype(parity)::value;
    const uint32_t stage = it % Cfg::kStages;
    hopper::mbar_wait(smem + Cfg::kFullOffset + 8 * stage, (it / Cfg::kStages) & 1);
    const float* scales = reinterpret_cast<const float*>(smem_raw + Cfg::kScaleOffset + stage * Cfg::kScaleStageBytes);
    const float sb = scales[Cfg::kBlockM];
    scale0[b] = scales[tile_row] * sb;
    scale1[b] = scales[tile_row + 8] * sb;
    stages[b] = stage;
    hopper::wgmma_fence();
    WgmmaSlice<Cfg>::slice(smem + stage * Cfg::kStageBytes + consumer * 64 * Cfg::kBlockK,
                           smem + stage * Cfg::kStageBytes + Cfg::kABytes, tmp[b], false);
    hopper::wgmma_commit();
    ++it;
  };
  const auto promote = [&](auto parity) {  // once the slice's wgmmas are done
    constexpr int b = decltype(parity)::value;
    hopper::fence_regs(tmp[b]);
    release_stage<Cfg>(release, stages[b]);
#pragma unroll
    for (int i = 0; i < Cfg::kSubRegs; ++i) acc[i] += tmp[b][i] * ((i & 2) ? scale1[b] : scale0[b]);
  };
  constexpr std::integral_constant<int, 0> even{};
  constexpr std::integral_constant<int, 1> odd{};
  if (unit.k_begin >= unit.k_end) return;
  issue(even);
  int kb = unit.k_begin + 1;
  for (; kb + 1 < unit.k_end; kb += 2) {
    issue(odd);
    hopper::wgmma_wait<1>();
    promote(even);
    issue(even);
    hopper::wgmma_wait<1>();
    promote(odd);
  }
  if (kb < unit.k_end) {  // an even count: the last slice into the odd temporary
    issue(odd);
    hopper::wgmma_wait<1>();
    promote(even);
    hopper::wgmma_wait<0>();
    promote(odd);
  } else {
    hopper::wgmma_wait<0>();
    promote(even);
  }
}

// kFp4Format: block_fp4's scale format (a compile-time constant: the accumulators must not pass
// through a branch between wgmmas, or ptxas serializes them); unused otherwise.
template <class Cfg, quant::BlockFormat kFp4Format = quant::BlockFormat::nvfp4>
__device__ void run_consumer(const WgmmaGemmArgs& args, const GemmTileMap<Cfg>& map, const UnitQueue<Cfg>& queue,
                             const uint8_t* smem_raw, uint32_t smem, int consumer, int thread) {
  const int warp = thread / 32, lane = thread % 32;
  const int tile_row = consumer * 64 + warp * 16 + lane / 4;  // and + 8
  float acc[Cfg::kSubTiles][Cfg::kSubRegs];
  const StageRelease release{smem + Cfg::kEmptyOffset,
                             cluster_size<Cfg>(args) > 1 ? hopper::cluster_address(smem + Cfg::kEmptyOffset, map.rank() ^ 1) : 0};
  uint32_t it = 0;
  if constexpr (Cfg::kTakeTurns) {
    if (consumer == 1) hopper::named_arrive(Cfg::kTurnBarrier, 256);  // warpgroup 0 issues first
  }
  for (uint32_t j = 0;; ++j) {
    const int u = queue.take(j);
    if (u >= map.units()) break;
    const GemmUnit unit = map.unit(u);
    const GemmTile tile = map.at(unit.tile);
    const int row0 = tile.row_begin + tile_row;
    if constexpr (Cfg::kDoubleBuffered) {
      accumulate_groupwise_double_buffered<Cfg>(unit, release, smem_raw, smem, consumer, tile_row, it, acc[0]);
    } else if constexpr (Cfg::kFp4A) {
      consume_fp4_unit<Cfg, kFp4Format>(smem_raw, smem, unit, release, tile_row, lane, it, acc);
    } else if constexpr (Cfg::kGroupwise) {
#pragma unroll
      for (int h = 0; h < Cfg::kSubTiles; ++h)
#pragma unroll
        for (int i = 0; i < Cfg::kSubRegs; ++i) acc[h][i] = 0.0f;
      float tmp[Cfg::kSubRegs];
      for (int kb = unit.k_begin; kb < unit.k_end; ++kb, ++it) {
        const uint32_t stage = it % Cfg::kStages;
        hopper::mbar_wait(smem + Cfg::kFullOffset + 8 * stage, (it / Cfg::kStages) & 1);
        const float* scales = reinterpret_cast<const float*>(smem_raw + Cfg::kScaleOffset + stage * Cfg::kScaleStageBytes);
        const float sa0 = scales[tile_row], sa1 = scales[tile_row + 8];
        float sb[Cfg::kSubTiles];
#pragma unroll
        for (int h = 0; h < Cfg::kSubTiles; ++h) sb[h] = scales[Cfg::kBlockM + h];
        const uint32_t a_rows = smem + stage * Cfg::kStageBytes + consumer * 64 * Cfg::kBlockK;
        const uint32_t b_rows = smem + stage * Cfg::kStageBytes + Cfg::kABytes;
#pragma unroll
        for (int h = 0; h < Cfg::kSubTiles; ++h) {
          if constexpr (Cfg::kTakeTurns) hopper::named_sync(Cfg::kTurnBarrier + consumer, 256);
          hopper::wgmma_fence();
          WgmmaSlice<Cfg>::slice(a_rows, b_rows + h * Cfg::kSubN * Cfg::kBlockK, tmp, false);
          hopper::wgmma_commit();
          if constexpr (Cfg::kTakeTurns) hopper::named_arrive(Cfg::kTurnBarrier + (consumer ^ 1), 256);
          hopper::wgmma_wait<0>();
          hopper::fence_regs(tmp);
          if (h == Cfg::kSubTiles - 1) release_stage<Cfg>(release, stage);
          const float s0 = sa0 * sb[h], s1 = sa1 * sb[h];
#pragma unroll
          for (int i = 0; i < Cfg::kSubRegs; ++i) acc[h][i] += tmp[i] * ((i & 2) ? s1 : s0);
        }
      }
    } else {
      uint32_t previous = 0;
      for (int kb = unit.k_begin; kb < unit.k_end; ++kb, ++it) {
        const uint32_t stage = it % Cfg::kStages;
        hopper::mbar_wait(smem + Cfg::kFullOffset + 8 * stage, (it / Cfg::kStages) & 1);
        const uint32_t a_rows = smem + stage * Cfg::kStageBytes + consumer * 64 * Cfg::kBlockK;
        const uint32_t b_rows = smem + stage * Cfg::kStageBytes + Cfg::kABytes;
        hopper::wgmma_fence();
        // kWgmmaN-wide wgmmas over the sub-tiles' accumulators taken as one array: they lie in the
        // order of a wide wgmma's fragment (register 4 j + e of sub-tile h is its 4 (j + h kSubN / 8) + e).
#pragma unroll
        for (int w = 0; w < Cfg::kBlockN / Cfg::kWgmmaN; ++w) {
          WgmmaSlice<Cfg, Cfg::kWgmmaN>::slice(a_rows, b_rows + w * Cfg::kWgmmaN * Cfg::kBlockK,
                                               accumulator_part<Cfg::kWgmmaN / 2>(acc, w), kb > unit.k_begin);
        }
        hopper::wgmma_commit();
        hopper::wgmma_wait<1>();  // the previous slice's wgmmas are done: its stage is free
        if (kb > unit.k_begin) release_stage<Cfg>(release, previous);
        previous = stage;
      }
      hopper::wgmma_wait<0>();
#pragma unroll
      for (int h = 0; h < Cfg::kSubTiles; ++h) hopper::fence_regs(acc[h]);
      release_stage<Cfg>(release, previous);
    }
    if (args.k_splits > 1 && !reduce_splits<Cfg>(args, unit, acc, row0 < tile.row_end, consumer, thread)) continue;
    // Per-tensor: the scales once (B's of the tile's group), on the tile's (or the splits' summed)
    // raw products; block_fp4: alpha and the operands' 2^-32 each; weight_fp4: the group's alpha and
    // B's 2^-32 (fp16: 2^-14) (fp4_expand.hpp).
    constexpr float kFp4Unscale = fp4_operand_unscale<Cfg::kExpandedType>();
    const float group_alpha = Cfg::kWeightFp4 && args.group_alpha != nullptr ? __ldg(args.group_alpha + tile.group) : 1.0f;
    const float scale = Cfg::kPerTensor ? __ldg(args.a_scale) * __ldg(args.b_scale + tile.group * args.b_scale_group_stride)
                        : Cfg::kFp4A    ? args.alpha * (kFp4Unscale * kFp4Unscale)
                        : Cfg::kWeightFp4 ? group_alpha * kFp4Unscale
                                        : 1.0f;
    const uint32_t buffer = smem + Cfg::kEpilogueOffset + (consumer * 4 + warp) * Cfg::kEpilogueWarpBytes;
    if (args.glu_epilogue && args.glu == GatedLinearUnit::swiglu) {
      store_glu_tile<Cfg, GatedLinearUnit::swiglu>(args, tile, acc, row0, lane, buffer);
    } else if (args.glu_epilogue) {
      store_glu_tile<Cfg, GatedLinearUnit::geglu>(args, tile, acc, row0, lane, buffer);
    } else if (Cfg::kStagedEpilogue && args.n % 8 == 0) {  // D 16-byte aligned: the launch checks
      store_tile_staged<Cfg>(args, tile, acc, row0 - lane / 4, buffer, lane, scale);
    } else {
      store_tile<Cfg>(args, tile, acc, row0, lane, scale);
    }
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) wgmma_gemm_kernel(const __grid_constant__ WgmmaGemmArgs args) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  const uint32_t smem = hopper::smem_addr(smem_raw);
  if ((smem & 1023) != 0) __trap();  // the swizzle atoms and descriptors assume it
  const int tid = static_cast<int>(threadIdx.x);
  const uint32_t mailbox_base = smem + Cfg::kUnitOffset + Cfg::kMailboxOffset;
  if (tid == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      hopper::mbar_init(smem + Cfg::kFullOffset + 8 * s, Cfg::kStageFullArrivals);
      hopper::mbar_init(smem + Cfg::kEmptyOffset + 8 * s,
                        Cfg::kStageReleases + (cluster_size<Cfg>(args) > 1 ? Cfg::kPeerReleases : 0));
    }
    for (int s = 0; s < Cfg::kRawStages; ++s) {
      hopper::mbar_init(smem + Cfg::kRawFullOffset + 8 * s, Cfg::kFullArrivals);
      hopper::mbar_init(smem + Cfg::kRawEmptyOffset + 8 * s, Cfg::kRawEmptyArrivals);
    }
    for (int s = 0; s < Cfg::kUnitSlots; ++s) {
      hopper::mbar_init(smem + Cfg::kUnitOffset + 8 * s, 1);
      hopper::mbar_init(smem + Cfg::kUnitOffset + 8 * (Cfg::kUnitSlots + s), Cfg::kUnitReaders);
      hopper::mbar_init(mailbox_base + 8 * s, 1);
      hopper::mbar_init(mailbox_base + 8 * (Cfg::kUnitSlots + s), 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (cluster_size<Cfg>(args) > 1) hopper::cluster_sync();  // the peer's barriers are initialised before any multicast
  pdl_wait();
  int* group_rows = reinterpret_cast<int*>(smem_raw + Cfg::kGroupOffset);
  int* group_blocks = group_rows + kMaxDeviceGroups + 1;
  const int block_rows = Cfg::kBlockM * cluster_size<Cfg>(args);
  int m_blocks = 0;
  if (args.rows_per_group > 0) {
    __syncthreads();
    m_blocks = args.groups * ((args.rows_per_group + block_rows - 1) / block_rows);
  } else {
    m_blocks = stage_device_groups<Cfg>(args, group_rows, group_blocks, block_rows, tid);
  }
  const GemmTileMap<Cfg> map{args, group_rows, group_blocks, m_blocks};
  const UnitQueue<Cfg> queue{smem + Cfg::kUnitOffset,
                             reinterpret_cast<int*>(smem_raw + Cfg::kUnitOffset + 16 * Cfg::kUnitSlots)};
  const UnitMailbox<Cfg> mailbox{mailbox_base};
  const int warpgroup = tid / 128;
  if (warpgroup == 0) {
    if constexpr (Cfg::kSetMaxNReg) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Cfg::kProducerRegs));
    if constexpr (Cfg::kFp4) run_fp4_producer<Cfg>(args, map, queue, mailbox, smem, tid);
    else if (tid < 32) run_producer<Cfg>(args, map, queue, mailbox, smem, tid);
    else if (Cfg::kGroupwise && tid < 64) run_scale_copier<Cfg>(args, map, queue, smem, tid % 32);
  } else if (warpgroup <= Cfg::kConverters) {
    if constexpr (Cfg::kSetMaxNReg) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Cfg::kConverterRegs));
    if constexpr (Cfg::kFp4) run_converter<Cfg>(args, map, queue, smem_raw, smem, tid - 128);
  } else {
    if constexpr (Cfg::kSetMaxNReg) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Cfg::kConsumerRegs));
    // The consumer index as lane 0's (a shuffle: warp-uniform to the compiler). ptxas still moves
    // each wgmma descriptor through R2UR, but without it the groupwise kernel ran 0.5-2.3% slower
    // (experiments/session37, call 11).
    const int consumer = __shfl_sync(0xffffffffu, warpgroup - 1 - Cfg::kConverters, 0);
    if (Cfg::kFp4A && args.fp4_format == quant::BlockFormat::mxfp4) {
      run_consumer<Cfg, quant::BlockFormat::mxfp4>(args, map, queue, smem_raw, smem, consumer, tid % 128);
    } else {
      run_consumer<Cfg>(args, map, queue, smem_raw, smem, consumer, tid % 128);
    }
  }
  // No CTA leaves while its peer may still multicast into it or arrive on its barriers.
  if (cluster_size<Cfg>(args) > 1) hopper::cluster_sync();
  pdl_launch_dependents();
#else
  (void)args;
  __trap();  // sm_90a only (wgmma, setmaxnreg); wgmma_gemm_built_for_sm90a tells the host
#endif
}

// The launch of one instantiation (explicitly instantiated by its translation unit): persistent,
// min(units, clusters resident at once) clusters of args.cluster CTAs.
template <class Cfg>
cudaError_t launch_wgmma_gemm(const WgmmaGemmArgs& args, int units, cudaStream_t stream, bool pdl) {
  void (*kernel)(WgmmaGemmArgs) = wgmma_gemm_kernel<Cfg>;
  cudaError_t status = ensure_smem_limit<wgmma_gemm_kernel<Cfg>>(Cfg::kSmemBytes);
  if (status != cudaSuccess) return status;
  if (args.cluster > 1 && !Cfg::kClusters) return cudaErrorNotSupported;
  int resident = current_sm_count();
  if (args.cluster > 1) {
    static DeviceMemo<int> resident_pairs;  // clusters of 2 resident at once
    const auto query = [&](int, int* value) {
      return max_active_clusters(kernel, args.cluster, Cfg::kThreads, Cfg::kSmemBytes, value);
    };
    status = memo_per_device(resident_pairs, query, &resident);
    if (status != cudaSuccess) return status;
    if (resident <= 0) return cudaErrorInvalidConfiguration;
  }
  const int clusters = std::max(1, std::min(units, resident));
  return launch_kernel(kernel, dim3(clusters * args.cluster), dim3(Cfg::kThreads), Cfg::kSmemBytes, stream, pdl, args,
                       args.cluster);
}

// The instantiations, one translation unit each: 128 x 256 tiles (two consumer warpgroups) where
// there are tiles for every SM, 64 x 128 (one) for decode-sized m; groupwise also 128 x 128 with
// the promotion overlapped (where they fill the SMs) and with turns (decode-sized m). block_fp4
// multiplies on bf16, weight_fp4 on A's type.
using E4m3 = cute::float_e4m3_t;
using GroupwiseTile128x256 = WgmmaGemmConfig<E4m3, E4m3, GemmScaling::groupwise, 256, 2>;
using GroupwiseTile128x128 = WgmmaGemmConfig<E4m3, E4m3, GemmScaling::groupwise, 128, 2, true>;
using GroupwiseTile128x128Turns = WgmmaGemmConfig<E4m3, E4m3, GemmScaling::groupwise, 128, 2>;
using GroupwiseTile64x128 = WgmmaGemmConfig<E4m3, E4m3, GemmScaling::groupwise, 128, 1>;
using PerTensorTile128x256 = WgmmaGemmConfig<E4m3, E4m3, GemmScaling::per_tensor, 256, 2>;
using PerTensorTile64x128 = WgmmaGemmConfig<E4m3, E4m3, GemmScaling::per_tensor, 128, 1>;
using Bf16 = cute::bfloat16_t;
using Bf16Tile128x256 = WgmmaGemmConfig<Bf16, Bf16, GemmScaling::none, 256, 2>;
using Bf16Tile64x128 = WgmmaGemmConfig<Bf16, Bf16, GemmScaling::none, 128, 1>;
using Fp16 = cute::half_t;
using Fp16Tile128x256 = WgmmaGemmConfig<Fp16, Fp16, GemmScaling::none, 256, 2>;
using Fp16Tile64x128 = WgmmaGemmConfig<Fp16, Fp16, GemmScaling::none, 128, 1>;
using Fp4Tile128x256 = WgmmaGemmConfig<Bf16, Bf16, GemmScaling::block_fp4, 256, 2>;
using Fp4Tile64x128 = WgmmaGemmConfig<Bf16, Bf16, GemmScaling::block_fp4, 128, 1>;
using WeightFp4Bf16Tile128x256 = WgmmaGemmConfig<Bf16, Bf16, GemmScaling::weight_fp4, 256, 2>;
using WeightFp4Bf16Tile64x128 = WgmmaGemmConfig<Bf16, Bf16, GemmScaling::weight_fp4, 128, 1>;
using WeightFp4Fp16Tile128x256 = WgmmaGemmConfig<Fp16, Fp16, GemmScaling::weight_fp4, 256, 2>;
using WeightFp4Fp16Tile64x128 = WgmmaGemmConfig<Fp16, Fp16, GemmScaling::weight_fp4, 128, 1>;
extern template cudaError_t launch_wgmma_gemm<GroupwiseTile128x256>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<GroupwiseTile128x128>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<GroupwiseTile128x128Turns>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<GroupwiseTile64x128>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<PerTensorTile128x256>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<PerTensorTile64x128>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<Bf16Tile128x256>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<Bf16Tile64x128>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<Fp16Tile128x256>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<Fp16Tile64x128>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<Fp4Tile128x256>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<Fp4Tile64x128>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<WeightFp4Bf16Tile128x256>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<WeightFp4Bf16Tile64x128>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<WeightFp4Fp16Tile128x256>(const WgmmaGemmArgs&, int, cudaStream_t, bool);
extern template cudaError_t launch_wgmma_gemm<WeightFp4Fp16Tile64x128>(const WgmmaGemmArgs&, int, cudaStream_t, bool);

}  // namespace kbench::kernels::gemm::sm90
