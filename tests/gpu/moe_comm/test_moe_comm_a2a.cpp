// The NVLink dispatch / combine kernels (kernels/moe_comm/a2a.hpp), R ranks simulated in one process
// on one GPU: R zero-filled workspaces and one device array of their bases (every simulated rank's
// `peers`). Dispatch and the split combine: all ranks' send kernels run before any rank's wait, in
// one stream, since a wait needs every source. The fused combine: every rank's kernel on its own
// stream at once (each waits for the others' steps mid-kernel), with a layout whose combine grids,
// R x combine_ctas <= 2 CTAs a SM, are resident together.
// Three calls in a row with new expert ids each (epochs advance, stale slots stay behind), ranks of
// different token counts (one with none), dropped picks (id -1), 16-byte and 4-byte payload rows:
//   dispatch: every routed slot on every destination is bit-exact, its row padding and every
//             unrouted slot keep the poison written before the call, slot epochs and rank epochs.
//   combine:  combine_out holds exactly the rows routed to other ranks (the rest keeps its poison: stale slots are
//             not sent), out[t] is the host's fp32 sum over the token's ranks rounded once,
//             combine_reduce alone gives the same out, every step counter counts every CTA.
// Then the same calls captured in a CUDA graph and replayed, and the fake expert for each hidden
// format against a host model (the data quantized with kernels/quantization's host codecs), through
// combine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/moe/block_operand.hpp"
#include "kernels/moe/half_bits.hpp"
#include "kernels/moe_comm/a2a.hpp"

namespace kbench {
namespace {

namespace km = kernels::moe;
namespace kc = kernels::moe_comm;
namespace quant = kernels::quant;

constexpr int kCalls = 3;
constexpr int kMaxReportedMismatches = 5;

enum class CombinePath { split, fused };

// The fused combine CTAs resident at once, which the simulated ranks share: 2 a SM (the kernel's
// launch bounds), at most kMaxCombineCtas.
int resident_combine_ctas() {
  int device = 0;
  int sms = 0;
  KBENCH_CUDA_CHECK(cudaGetDevice(&device));
  KBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::min(kc::kMaxCombineCtas, kc::kCombineCtasPerSm * sms);
}

class CudaEvent {
 public:
  CudaEvent() { KBENCH_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent() { (void)cudaEventDestroy(event_); }
  [[nodiscard]] cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// R ranks' workspaces (zero-filled once, as the routine does) and the device array of their bases.
class SimulatedRanks {
 public:
  // The fused combine's layouts: every rank's grid resident at once.
  SimulatedRanks(int ranks, int max_tokens, const std::vector<int64_t>& row_bytes, int hidden, CombinePath path)
      : layout_(kc::make_a2a_layout(ranks, max_tokens, row_bytes, hidden,
                                    path == CombinePath::fused ? resident_combine_ctas() / ranks : kc::kMaxCombineCtas)),
        peers_(sizeof(void*) * static_cast<std::size_t>(ranks)),
        rank_streams_(static_cast<std::size_t>(ranks)),
        rank_done_(static_cast<std::size_t>(ranks)) {
    std::vector<void*> bases;
    for (int r = 0; r < ranks; ++r) {
      workspaces_.emplace_back(static_cast<std::size_t>(layout_.total_bytes));
      KBENCH_CUDA_CHECK(cudaMemsetAsync(workspaces_.back().get(), 0, workspaces_.back().bytes(), stream()));
      bases.push_back(workspaces_.back().get());
    }
    testing::to_device(peers_.as<char>(), bases, stream());
    KBENCH_CUDA_CHECK(cudaStreamSynchronize(stream()));
  }

  [[nodiscard]] const kc::A2aLayout& layout() const { return layout_; }
  [[nodiscard]] int ranks() const { return layout_.ranks; }
  [[nodiscard]] int max_tokens() const { return layout_.max_tokens; }
  [[nodiscard]] int64_t slots() const { return static_cast<int64_t>(layout_.ranks) * layout_.max_tokens; }
  [[nodiscard]] void* const* peers() const { return peers_.as<void* const>(); }
  [[nodiscard]] char* workspace(int rank) const { return workspaces_[static_cast<std::size_t>(rank)].as<char>(); }
  [[nodiscard]] cudaStream_t stream() const { return stream_.get(); }
  [[nodiscard]] cudaStream_t rank_stream(int rank) const { return rank_streams_[static_cast<std::size_t>(rank)].get(); }

  // Runs launch(r, rank_stream(r)) for every rank concurrently, after and before the main stream's work
  // (an event fork and join, which graph capture records as parallel branches).
  template <class Launch>
  void on_rank_streams(Launch&& launch) const {
    KBENCH_CUDA_CHECK(cudaEventRecord(forked_.get(), stream()));
    for (int r = 0; r < ranks(); ++r) {
      KBENCH_CUDA_CHECK(cudaStreamWaitEvent(rank_stream(r), forked_.get(), 0));
      launch(r, rank_stream(r));
      KBENCH_CUDA_CHECK(cudaEventRecord(rank_done_[static_cast<std::size_t>(r)].get(), rank_stream(r)));
      KBENCH_CUDA_CHECK(cudaStreamWaitEvent(stream(), rank_done_[static_cast<std::size_t>(r)].get(), 0));
    }
  }

  template <class T>
  [[nodiscard]] std::vector<T> read(int rank, int64_t offset, int64_t count) const {
    return testing::to_host<T>(workspace(rank) + offset, count, stream());
  }
  template <class T>
  void write(int rank, int64_t offset, const std::vector<T>& host) const {
    testing::to_device(workspace(rank) + offset, host, stream());
  }
  void fill(int rank, int64_t offset, int64_t bytes, int byte) const {
    KBENCH_CUDA_CHECK(cudaMemsetAsync(workspace(rank) + offset, byte, static_cast<std::size_t>(bytes), stream()));
  }
  [[nodiscard]] uint32_t signal(int rank, int word) const {
    return read<uint32_t>(rank, kc::signal_word_offset(layout_, word), 1)[0];
  }

 private:
  CudaStream stream_;
  kc::A2aLayout layout_;
  std::vector<DeviceBuffer> workspaces_;
  DeviceBuffer peers_;
  std::vector<CudaStream> rank_streams_;
  CudaEvent forked_;
  std::vector<CudaEvent> rank_done_;
};

// One rank's tokens: expert ids and payload rows, on the host and the device.
struct RankBatch {
  int tokens = 0;
  int top_k = 0;
  int experts_per_rank = 0;
  std::vector<int32_t> ids;                // [tokens][top_k]
  std::vector<std::vector<uint8_t>> rows;  // per payload, [tokens][row bytes]
  DeviceBuffer ids_device;
  std::vector<DeviceBuffer> rows_device;

  [[nodiscard]] kc::A2aRoute route(int rank) const {
    return {rank, tokens, top_k, experts_per_rank, ids_device.as<const int32_t>()};
  }
  [[nodiscard]] std::vector<const void*> sources() const {
    std::vector<const void*> pointers;
    for (const DeviceBuffer& b : rows_device) pointers.push_back(b.get());
    return pointers;
  }
  // The distinct ranks of token t's valid experts, as a mask.
  [[nodiscard]] uint64_t destinations(int t, int ranks) const {
    uint64_t mask = 0;
    for (int j = 0; j < top_k; ++j) {
      const int32_t e = ids[static_cast<std::size_t>(t * top_k + j)];
      if (e >= 0 && e < ranks * experts_per_rank) mask |= uint64_t{1} << (e / experts_per_rank);
    }
    return mask;
  }
  void upload(cudaStream_t stream) {
    ids_device = DeviceBuffer(std::max<std::size_t>(1, ids.size()) * sizeof(int32_t));
    testing::to_device(ids_device.as<char>(), ids, stream);
    rows_device.clear();
    for (const auto& r : rows) {
      rows_device.emplace_back(std::max<std::size_t>(16, r.size()));
      testing::to_device(rows_device.back().as<char>(), r, stream);
    }
  }
};

// Distinct experts per token (the first top_k of a random permutation); with probability `dropped`
// one pick becomes -1.
std::vector<int32_t> random_expert_ids(int tokens, int top_k, int experts, double dropped, std::mt19937& rng) {
  std::vector<int32_t> all(static_cast<std::size_t>(experts));
  std::iota(all.begin(), all.end(), 0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::uniform_int_distribution<int> pick(0, top_k - 1);
  std::vector<int32_t> ids;
  for (int t = 0; t < tokens; ++t) {
    std::shuffle(all.begin(), all.end(), rng);
    ids.insert(ids.end(), all.begin(), all.begin() + top_k);
    if (uniform(rng) < dropped) ids[static_cast<std::size_t>(t * top_k + pick(rng))] = -1;
  }
  return ids;
}

// A random bf16 / fp16 value of magnitude 2^-7 to 2^8 from one draw (combine_in fills every slot of
// every rank: normal samples would dominate the test's time).
uint16_t random_half_bits(std::mt19937& rng, bool fp16) {
  const uint32_t r = rng();
  const uint32_t sign = (r >> 31) << 15;
  const uint32_t exponent = (r >> 16) % 16;
  return static_cast<uint16_t>(fp16 ? sign | (exponent + 8) << 10 | (r & 0x3ffu)
                                    : sign | (exponent + 120) << 7 | (r & 0x7fu));
}

void dispatch_all(const SimulatedRanks& sim, const std::vector<RankBatch>& batches) {
  for (int r = 0; r < sim.ranks(); ++r) {
    const auto sources = batches[static_cast<std::size_t>(r)].sources();
    kc::launch_dispatch_send(sim.layout(), batches[static_cast<std::size_t>(r)].route(r), sources, sim.peers(),
                             sim.stream());
  }
  for (int r = 0; r < sim.ranks(); ++r) {
    kc::launch_dispatch_wait(sim.layout(), batches[static_cast<std::size_t>(r)].route(r), sim.peers(), sim.stream());
  }
}

void combine_all(const SimulatedRanks& sim, const std::vector<RankBatch>& batches, const std::vector<DeviceBuffer>& out,
                 DType dtype, CombinePath path) {
  if (path == CombinePath::fused) {
    sim.on_rank_streams([&](int r, cudaStream_t stream) {
      kc::launch_combine(sim.layout(), batches[static_cast<std::size_t>(r)].route(r), sim.peers(),
                         out[static_cast<std::size_t>(r)].get(), dtype, stream);
    });
    return;
  }
  for (int r = 0; r < sim.ranks(); ++r) {
    kc::launch_combine_send(sim.layout(), batches[static_cast<std::size_t>(r)].route(r), sim.peers(), sim.stream());
  }
  for (int r = 0; r < sim.ranks(); ++r) {
    kc::launch_combine_receive(sim.layout(), batches[static_cast<std::size_t>(r)].route(r), sim.peers(),
                               out[static_cast<std::size_t>(r)].get(), dtype, sim.stream());
  }
}

// Every rank's receive regions after a dispatch whose regions were filled with `poison` first (0:
// the zero-filled workspace; source bytes are never 0).
void expect_dispatched(const SimulatedRanks& sim, const std::vector<RankBatch>& batches, uint32_t epoch,
                       uint8_t poison) {
  const kc::A2aLayout& l = sim.layout();
  int mismatches = 0;
  for (int d = 0; d < sim.ranks(); ++d) {
    EXPECT_EQ(sim.signal(d, kc::kDispatchEpochWord), epoch) << "rank " << d;
    const auto slot_epochs = sim.read<uint32_t>(d, l.slot_epoch_offset, sim.slots());
    for (int q = 0; q < l.num_payloads; ++q) {
      const int64_t row_bytes = l.payload_row_bytes[q];
      const int64_t stride = l.payload_row_stride[q];
      const auto region = sim.read<uint8_t>(d, l.payload_offset[q], sim.slots() * stride);
      for (int s = 0; s < sim.ranks(); ++s) {
        const RankBatch& b = batches[static_cast<std::size_t>(s)];
        for (int t = 0; t < sim.max_tokens(); ++t) {
          const bool routed = t < b.tokens && ((b.destinations(t, sim.ranks()) >> d) & 1) != 0;
          const uint8_t* slot = region.data() + (static_cast<int64_t>(s) * sim.max_tokens() + t) * stride;
          bool ok = (slot_epochs[static_cast<std::size_t>(s * sim.max_tokens() + t)] == epoch) == routed;
          for (int64_t i = 0; i < stride; ++i) {
            const auto& rows = b.rows[static_cast<std::size_t>(q)];
            const uint8_t expected = routed && i < row_bytes ? rows[static_cast<std::size_t>(t * row_bytes + i)] : poison;
            ok = ok && slot[i] == expected;
          }
          if (!ok && ++mismatches <= kMaxReportedMismatches) {
            ADD_FAILURE() << "payload " << q << " slot (" << s << ", " << t << ") on rank " << d
                          << (routed ? " (routed)" : " (not routed)");
          }
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// The sum the combine returns to source s's token t: over the token's ranks d in increasing order,
// combine_in[d] (each [ranks][max_tokens][hidden]) row (s, t), fp32, rounded once.
std::vector<uint16_t> expected_combine(const SimulatedRanks& sim, const std::vector<RankBatch>& batches,
                                       const std::vector<std::vector<uint16_t>>& combine_in, int s, bool fp16) {
  const RankBatch& b = batches[static_cast<std::size_t>(s)];
  const int64_t hidden = sim.layout().hidden;
  std::vector<uint16_t> out(static_cast<std::size_t>(b.tokens * hidden));
  for (int t = 0; t < b.tokens; ++t) {
    const uint64_t mask = b.destinations(t, sim.ranks());
    for (int64_t i = 0; i < hidden; ++i) {
      float acc = 0.0f;
      for (int d = 0; d < sim.ranks(); ++d) {
        if (((mask >> d) & 1) == 0) continue;
        const int64_t row = static_cast<int64_t>(s) * sim.max_tokens() + t;
        const auto& rows = combine_in[static_cast<std::size_t>(d)];
        acc += km::half_bits_to_float(rows[static_cast<std::size_t>(row * hidden + i)], fp16);
      }
      out[static_cast<std::size_t>(t * hidden + i)] = km::float_to_half_bits(acc, fp16);
    }
  }
  return out;
}

std::vector<DeviceBuffer> poisoned_outputs(const SimulatedRanks& sim, const std::vector<RankBatch>& batches) {
  std::vector<DeviceBuffer> out;
  for (const RankBatch& b : batches) {
    out.emplace_back(std::max<std::size_t>(16, static_cast<std::size_t>(b.tokens) * sim.layout().hidden * 2));
    KBENCH_CUDA_CHECK(cudaMemsetAsync(out.back().get(), 0xff, out.back().bytes(), sim.stream()));
  }
  return out;
}

std::vector<uint16_t> output_of(const SimulatedRanks& sim, const DeviceBuffer& out, int tokens) {
  return testing::to_host<uint16_t>(out.get(), static_cast<int64_t>(tokens) * sim.layout().hidden, sim.stream());
}

struct RoundTripCase {
  int ranks;
  int max_tokens;
  int token_step;  // rank r has max(0, max_tokens - r * token_step) tokens
  int hidden;
  int64_t hidden_row_bytes;
  int top_k;
  int experts;
  DType dtype;
  CombinePath path;
};

// Every rank's signal counters for the other ranks (words (d, g), d != s) after `calls` combines.
void expect_signal_counters(const SimulatedRanks& sim, int s, uint32_t calls) {
  const kc::A2aLayout& l = sim.layout();
  const auto words = sim.read<uint32_t>(s, kc::signal_word_offset(l, kc::combine_signal_word(l, 0, 0)),
                                        static_cast<int64_t>(l.ranks) * l.combine_signals);
  for (int d = 0; d < l.ranks; ++d) {
    for (int g = 0; g < l.combine_signals; ++g) {
      const uint32_t expected = d == s ? 0 : calls * static_cast<uint32_t>(l.combine_ctas);
      EXPECT_EQ(words[static_cast<std::size_t>(kc::combine_signal_word(l, d, g) - kc::kSignalWords)], expected)
          << "rank " << s << " signal counter (" << d << ", " << g << ")";
    }
  }
}

void expect_round_trips(const RoundTripCase& c, uint32_t seed) {
  SCOPED_TRACE(std::string(c.path == CombinePath::fused ? "fused" : "split") + " R " + std::to_string(c.ranks) +
               " T " + std::to_string(c.max_tokens) + " H " + std::to_string(c.hidden) + " k " +
               std::to_string(c.top_k) + "/" + std::to_string(c.experts));
  const bool fp16 = c.dtype == DType::float16;
  // Hidden row, expert ids, weights, 1x128 block scales, and a 36-byte row (4-byte words).
  const std::vector<int64_t> row_bytes = {c.hidden_row_bytes, 4 * c.top_k, 4 * c.top_k,
                                          4 * ((c.hidden + 127) / 128), 36};
  const SimulatedRanks sim(c.ranks, c.max_tokens, row_bytes, c.hidden, c.path);
  const kc::A2aLayout& l = sim.layout();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> nonzero_byte(1, 255);
  for (int call = 1; call <= kCalls; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    std::vector<RankBatch> batches(static_cast<std::size_t>(c.ranks));
    for (int r = 0; r < c.ranks; ++r) {
      RankBatch& b = batches[static_cast<std::size_t>(r)];
      b.tokens = std::max(0, c.max_tokens - r * c.token_step);
      b.top_k = c.top_k;
      b.experts_per_rank = c.experts / c.ranks;
      b.ids = random_expert_ids(b.tokens, c.top_k, c.experts, 0.1, rng);
      for (int64_t bytes : row_bytes) {
        std::vector<uint8_t> rows(static_cast<std::size_t>(b.tokens * bytes));
        for (uint8_t& x : rows) x = static_cast<uint8_t>(nonzero_byte(rng));
        b.rows.push_back(std::move(rows));
      }
      b.upload(sim.stream());
    }
    const auto poison = static_cast<uint8_t>(0x40 + call);
    for (int d = 0; d < c.ranks; ++d) {
      for (int q = 0; q < l.num_payloads; ++q) {
        sim.fill(d, l.payload_offset[q], sim.slots() * l.payload_row_stride[q], poison);
      }
    }
    dispatch_all(sim, batches);
    expect_dispatched(sim, batches, static_cast<uint32_t>(call), poison);

    // Combine: known combine_in everywhere (stale slots included), combine_out poisoned (NaN rows).
    std::vector<std::vector<uint16_t>> combine_in(static_cast<std::size_t>(c.ranks));
    for (int d = 0; d < c.ranks; ++d) {
      auto& rows = combine_in[static_cast<std::size_t>(d)];
      rows.resize(static_cast<std::size_t>(sim.slots() * c.hidden));
      for (uint16_t& x : rows) x = random_half_bits(rng, fp16);
      sim.write(d, l.combine_in_offset, rows);
      sim.fill(d, l.combine_out_offset, sim.slots() * c.hidden * 2, 0xff);
    }
    const auto out = poisoned_outputs(sim, batches);
    combine_all(sim, batches, out, c.dtype, c.path);
    const auto reduced = poisoned_outputs(sim, batches);
    for (int s = 0; s < c.ranks; ++s) {
      kc::launch_combine_reduce(l, batches[static_cast<std::size_t>(s)].route(s), sim.workspace(s),
                                reduced[static_cast<std::size_t>(s)].get(), c.dtype, sim.stream());
    }
    for (int s = 0; s < c.ranks; ++s) {
      SCOPED_TRACE("source " + std::to_string(s));
      const RankBatch& b = batches[static_cast<std::size_t>(s)];
      EXPECT_EQ(sim.signal(s, kc::kCombineEpochWord), static_cast<uint32_t>(call));
      EXPECT_EQ(sim.signal(s, kc::kDispatchEpochWord), static_cast<uint32_t>(call));
      expect_signal_counters(sim, s, static_cast<uint32_t>(call));
      const auto combine_out = sim.read<uint16_t>(s, l.combine_out_offset, sim.slots() * c.hidden);
      int mismatches = 0;
      for (int d = 0; d < c.ranks; ++d) {
        for (int t = 0; t < c.max_tokens; ++t) {
          // A rank's results for its own tokens are summed in place, never sent.
          const bool routed = d != s && t < b.tokens && ((b.destinations(t, c.ranks) >> d) & 1) != 0;
          const int64_t row = (static_cast<int64_t>(d) * c.max_tokens + t) * c.hidden;
          const int64_t sent_row = (static_cast<int64_t>(s) * c.max_tokens + t) * c.hidden;
          bool ok = true;
          for (int64_t i = 0; i < c.hidden; ++i) {
            const uint16_t expected =
                routed ? combine_in[static_cast<std::size_t>(d)][static_cast<std::size_t>(sent_row + i)] : 0xffff;
            ok = ok && combine_out[static_cast<std::size_t>(row + i)] == expected;
          }
          if (!ok && ++mismatches <= kMaxReportedMismatches) {
            ADD_FAILURE() << "combine_out row (" << d << ", " << t << ")" << (routed ? " (routed)" : " (not routed)");
          }
        }
      }
      EXPECT_EQ(mismatches, 0);
      const auto expected = expected_combine(sim, batches, combine_in, s, fp16);
      EXPECT_TRUE(output_of(sim, out[static_cast<std::size_t>(s)], b.tokens) == expected);
      EXPECT_TRUE(output_of(sim, reduced[static_cast<std::size_t>(s)], b.tokens) == expected);
    }
  }
}

TEST(MoeCommA2a, DispatchAndCombineRoundTrip) {
  KBENCH_REQUIRE_GPU();
  constexpr CombinePath split = CombinePath::split;
  expect_round_trips({2, 1, 0, 7168, 7168, 8, 256, DType::bfloat16, split}, 1);
  expect_round_trips({3, 37, 12, 2880, 2 * 2880, 1, 96, DType::float16, split}, 2);
  expect_round_trips({8, 300, 40, 7168, 7168, 8, 256, DType::bfloat16, split}, 3);
  expect_round_trips({8, 37, 5, 96, 96, 1, 256, DType::bfloat16, split}, 4);
  expect_round_trips({3, 300, 150, 96, 2 * 96, 8, 255, DType::float16, split}, 5);  // rank 2 has no tokens
}

// The fused combine at 264 / R CTAs a rank (on a 132-SM H100): 132 at 2 ranks, 88 at 3, 33 at 8;
// one step (1 token) to 7 steps (3 ranks x 300 tokens: 600 sends over 88 CTAs). Each case with the
// default signal spacing, a signal after every step and after every third
// (KBENCH_A2A_STEPS_PER_SIGNAL): sums between signals, tokens whose steps straddle a signal.
TEST(MoeCommA2a, FusedCombineRoundTrip) {
  KBENCH_REQUIRE_GPU();
  constexpr CombinePath fused = CombinePath::fused;
  constexpr const char* kSpacing = "KBENCH_A2A_STEPS_PER_SIGNAL";
  for (const char* spacing : {static_cast<const char*>(nullptr), "1", "3"}) {
    SCOPED_TRACE(std::string("steps per signal ") + (spacing ? spacing : "(default)"));
    if (spacing) {
      ASSERT_EQ(setenv(kSpacing, spacing, 1), 0);
    } else {
      ASSERT_EQ(unsetenv(kSpacing), 0);
    }
    expect_round_trips({2, 1, 0, 7168, 7168, 8, 256, DType::bfloat16, fused}, 31);
    expect_round_trips({2, 301, 40, 7168, 7168, 8, 256, DType::bfloat16, fused}, 32);
    expect_round_trips({2, 301, 301, 96, 2 * 96, 8, 256, DType::float16, fused}, 33);   // rank 1 has no tokens
    expect_round_trips({3, 37, 12, 2880, 2 * 2880, 1, 96, DType::float16, fused}, 34);
    expect_round_trips({3, 300, 150, 96, 2 * 96, 8, 255, DType::bfloat16, fused}, 35);  // rank 2 has no tokens
    expect_round_trips({8, 37, 5, 96, 96, 1, 256, DType::bfloat16, fused}, 36);
  }
  ASSERT_EQ(unsetenv(kSpacing), 0);
}

// Dispatch and combine of every rank captured once and replayed: no host resets between calls.
void expect_graph_replays_advance_the_epochs(CombinePath path) {
  SCOPED_TRACE(path == CombinePath::fused ? "fused" : "split");
  constexpr int kRanks = 3;
  constexpr int kTokens = 37;
  constexpr int kHidden = 2880;
  constexpr int kReplays = 3;
  const std::vector<int64_t> row_bytes = {kHidden, 32, 4 * ((kHidden + 127) / 128)};
  const SimulatedRanks sim(kRanks, kTokens, row_bytes, kHidden, path);
  const kc::A2aLayout& l = sim.layout();
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> nonzero_byte(1, 255);
  std::vector<RankBatch> batches(kRanks);
  std::vector<std::vector<uint16_t>> combine_in(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    RankBatch& b = batches[static_cast<std::size_t>(r)];
    b.tokens = kTokens - r;
    b.top_k = 8;
    b.experts_per_rank = 32;
    b.ids = random_expert_ids(b.tokens, b.top_k, kRanks * b.experts_per_rank, 0.0, rng);
    for (int64_t bytes : row_bytes) {
      std::vector<uint8_t> rows(static_cast<std::size_t>(b.tokens * bytes));
      for (uint8_t& x : rows) x = static_cast<uint8_t>(nonzero_byte(rng));
      b.rows.push_back(std::move(rows));
    }
    b.upload(sim.stream());
    auto& rows = combine_in[static_cast<std::size_t>(r)];
    rows.resize(static_cast<std::size_t>(sim.slots() * kHidden));
    for (uint16_t& x : rows) x = random_half_bits(rng, false);
    sim.write(r, l.combine_in_offset, rows);
  }
  const auto out = poisoned_outputs(sim, batches);
  ASSERT_EQ(testing::capture_and_replay(sim.stream(), kReplays,
                                        [&] {
                                          dispatch_all(sim, batches);
                                          combine_all(sim, batches, out, DType::bfloat16, path);
                                          return cudaSuccess;
                                        }),
            cudaSuccess);
  expect_dispatched(sim, batches, kReplays, 0);
  for (int s = 0; s < kRanks; ++s) {
    EXPECT_EQ(sim.signal(s, kc::kCombineEpochWord), static_cast<uint32_t>(kReplays));
    EXPECT_EQ(sim.signal(s, kc::kDispatchTicketWord), 0u);
    EXPECT_EQ(sim.signal(s, kc::kCombineTicketWord), 0u);
    expect_signal_counters(sim, s, kReplays);
    EXPECT_TRUE(output_of(sim, out[static_cast<std::size_t>(s)], batches[static_cast<std::size_t>(s)].tokens) ==
                expected_combine(sim, batches, combine_in, s, false))
        << "source " << s;
  }
}

TEST(MoeCommA2a, GraphReplaysAdvanceTheEpochs) {
  KBENCH_REQUIRE_GPU();
  expect_graph_replays_advance_the_epochs(CombinePath::split);
  expect_graph_replays_advance_the_epochs(CombinePath::fused);
}

// ---- Fake expert ------------------------------------------------------------------------------

struct QuantizedRow {
  std::vector<uint8_t> hidden;  // payload 0
  std::vector<uint8_t> scales;  // payload 3 (block formats)
  std::vector<float> values;    // what the kernel dequantizes
};

// x in `format` (tensor_scale: fp8's dequantization scale or nvfp4's global scale), with kernels/
// quantization's host codecs; scales padded to `scale_bytes`.
QuantizedRow quantize_row(kc::HiddenFormat format, const std::vector<float>& x, float tensor_scale, bool fp16,
                          int64_t scale_bytes) {
  QuantizedRow q;
  const auto n = static_cast<int64_t>(x.size());
  q.values.resize(x.size());
  q.scales.assign(static_cast<std::size_t>(scale_bytes), 0);
  auto block_amax = [&](int64_t begin, int64_t size) {
    float amax = 0.0f;
    for (int64_t i = begin; i < std::min(n, begin + size); ++i) {
      amax = std::max(amax, std::abs(x[static_cast<std::size_t>(i)]));
    }
    return amax;
  };
  switch (format) {
    case kc::HiddenFormat::none:
      q.hidden.resize(static_cast<std::size_t>(2 * n));
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t bits = km::float_to_half_bits(x[static_cast<std::size_t>(i)], fp16);
        std::memcpy(q.hidden.data() + 2 * i, &bits, 2);
        q.values[static_cast<std::size_t>(i)] = km::half_bits_to_float(bits, fp16);
      }
      break;
    case kc::HiddenFormat::fp8:
    case kc::HiddenFormat::fp8_block_scale:
      q.hidden.resize(static_cast<std::size_t>(n));
      for (int64_t b = 0; b < n; b += kc::kFp8ScaleBlock) {
        float scale = tensor_scale;
        if (format == kc::HiddenFormat::fp8_block_scale) {
          scale = std::max(block_amax(b, kc::kFp8ScaleBlock), 1e-4f) / 448.0f;
          std::memcpy(q.scales.data() + 4 * (b / kc::kFp8ScaleBlock), &scale, 4);
        }
        for (int64_t i = b; i < std::min(n, b + kc::kFp8ScaleBlock); ++i) {
          const uint8_t code = quant::float_to_e4m3(x[static_cast<std::size_t>(i)] / scale);
          q.hidden[static_cast<std::size_t>(i)] = code;
          q.values[static_cast<std::size_t>(i)] = quant::e4m3_to_float(code) * scale;
        }
      }
      break;
    case kc::HiddenFormat::nvfp4:
      q.hidden.assign(static_cast<std::size_t>(n / 2), 0);
      for (int64_t b = 0; b < n; b += km::kNvfp4Block) {
        const quant::BlockScale s =
            quant::block_scale(quant::BlockFormat::nvfp4, block_amax(b, km::kNvfp4Block), tensor_scale);
        q.scales[static_cast<std::size_t>(b / km::kNvfp4Block)] = s.sf;
        for (int64_t i = b; i < b + km::kNvfp4Block; ++i) {
          const uint8_t code =
              quant::quantize_element(quant::BlockFormat::nvfp4, x[static_cast<std::size_t>(i)], s.factor);
          q.hidden[static_cast<std::size_t>(i / 2)] |= static_cast<uint8_t>(code << (4 * (i % 2)));
          q.values[static_cast<std::size_t>(i)] =
              quant::dequantize_element(quant::BlockFormat::nvfp4, code, s.sf, tensor_scale);
        }
      }
      break;
  }
  return q;
}

struct FakeExpertCase {
  kc::HiddenFormat format;
  DType dtype;
  int ranks;
  int tokens;
  int hidden;
  int top_k;
  int experts;
};

// Dispatch, the fake expert on every rank (combine_in of every routed slot against the host model),
// then combine (out against the host sum of the model's rows).
void expect_fake_expert_matches(const FakeExpertCase& c, uint32_t seed) {
  SCOPED_TRACE("format " + std::to_string(static_cast<int>(c.format)) + " R " + std::to_string(c.ranks) + " T " +
               std::to_string(c.tokens) + " H " + std::to_string(c.hidden) + " k " + std::to_string(c.top_k));
  const bool fp16 = c.dtype == DType::float16;
  const int64_t hidden_bytes = c.format == kc::HiddenFormat::none ? 2 * c.hidden
                               : c.format == kc::HiddenFormat::nvfp4 ? c.hidden / 2
                                                                     : c.hidden;
  const int64_t scale_bytes = c.format == kc::HiddenFormat::nvfp4
                                  ? (c.hidden / km::kNvfp4Block + 3) / 4 * 4
                                  : 4 * ((c.hidden + kc::kFp8ScaleBlock - 1) / kc::kFp8ScaleBlock);
  const std::vector<int64_t> row_bytes = {hidden_bytes, 4 * c.top_k, 4 * c.top_k, scale_bytes};
  const SimulatedRanks sim(c.ranks, c.tokens, row_bytes, c.hidden, CombinePath::split);
  const kc::A2aLayout& l = sim.layout();
  const int experts_per_rank = c.experts / c.ranks;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Two dispatches: the second's ids differ, so stale slots are left from the first.
  std::vector<RankBatch> batches;
  std::vector<std::vector<std::vector<float>>> values(static_cast<std::size_t>(c.ranks));  // [rank][token][hidden]
  const float fp8_scale = 4.0f / 448.0f;
  const float nvfp4_global_scale = km::nvfp4_global_scale(4.0f);
  const float tensor_scale = c.format == kc::HiddenFormat::nvfp4 ? nvfp4_global_scale : fp8_scale;
  for (int call = 1; call <= 2; ++call) {
    batches = std::vector<RankBatch>(static_cast<std::size_t>(c.ranks));
    for (int r = 0; r < c.ranks; ++r) {
      RankBatch& b = batches[static_cast<std::size_t>(r)];
      b.tokens = c.tokens;
      b.top_k = c.top_k;
      b.experts_per_rank = experts_per_rank;
      b.ids = random_expert_ids(b.tokens, c.top_k, c.experts, 0.0, rng);
      b.rows.assign(row_bytes.size(), {});
      values[static_cast<std::size_t>(r)].clear();
      for (int t = 0; t < b.tokens; ++t) {
        std::vector<float> x(static_cast<std::size_t>(c.hidden));
        for (float& v : x) v = std::clamp(normal(rng), -4.0f, 4.0f);  // within the scales' range
        QuantizedRow q = quantize_row(c.format, x, tensor_scale, fp16, scale_bytes);
        std::vector<uint8_t> weights(static_cast<std::size_t>(4 * c.top_k), 0x3f);
        const auto* ids = reinterpret_cast<const uint8_t*>(b.ids.data() + static_cast<std::ptrdiff_t>(t) * c.top_k);
        b.rows[kc::kHiddenPayload].insert(b.rows[kc::kHiddenPayload].end(), q.hidden.begin(), q.hidden.end());
        b.rows[kc::kExpertIdsPayload].insert(b.rows[kc::kExpertIdsPayload].end(), ids, ids + 4 * c.top_k);
        b.rows[2].insert(b.rows[2].end(), weights.begin(), weights.end());
        b.rows[kc::kBlockScalePayload].insert(b.rows[kc::kBlockScalePayload].end(), q.scales.begin(), q.scales.end());
        values[static_cast<std::size_t>(r)].push_back(std::move(q.values));
      }
      b.upload(sim.stream());
    }
    dispatch_all(sim, batches);
  }
  for (int r = 0; r < c.ranks; ++r) {
    const kc::FakeExpertArgs args{r, c.top_k, experts_per_rank, c.format, c.dtype, tensor_scale};
    kc::launch_fake_expert(l, args, sim.workspace(r), sim.stream());
  }
  // The host model: rank d's row for source s's token t.
  auto model_row = [&](int d, int s, int t) {
    const RankBatch& b = batches[static_cast<std::size_t>(s)];
    const std::vector<float>& x = values[static_cast<std::size_t>(s)][static_cast<std::size_t>(t)];
    std::vector<uint16_t> row(static_cast<std::size_t>(c.hidden));
    for (int64_t i = 0; i < c.hidden; ++i) {
      float acc = 0.0f;
      for (int j = 0; j < c.top_k; ++j) {
        const int32_t e = b.ids[static_cast<std::size_t>(t * c.top_k + j)];
        if (e / experts_per_rank != d) continue;
        acc = std::fma(x[static_cast<std::size_t>(i)], kc::fake_expert_factor(e, c.experts), acc);
      }
      row[static_cast<std::size_t>(i)] = km::float_to_half_bits(acc, fp16);
    }
    return row;
  };
  std::vector<std::vector<uint16_t>> combine_in(static_cast<std::size_t>(c.ranks));
  for (int d = 0; d < c.ranks; ++d) {
    combine_in[static_cast<std::size_t>(d)] = sim.read<uint16_t>(d, l.combine_in_offset, sim.slots() * c.hidden);
    int mismatches = 0;
    for (int s = 0; s < c.ranks; ++s) {
      for (int t = 0; t < c.tokens; ++t) {
        if (((batches[static_cast<std::size_t>(s)].destinations(t, c.ranks) >> d) & 1) == 0) continue;
        const auto expected = model_row(d, s, t);
        const auto* got = combine_in[static_cast<std::size_t>(d)].data() +
                          (static_cast<int64_t>(s) * c.tokens + t) * c.hidden;
        if (!std::equal(expected.begin(), expected.end(), got) && ++mismatches <= kMaxReportedMismatches) {
          ADD_FAILURE() << "combine_in row (" << s << ", " << t << ") on rank " << d;
        }
      }
    }
    EXPECT_EQ(mismatches, 0) << "rank " << d;
  }
  const auto out = poisoned_outputs(sim, batches);
  combine_all(sim, batches, out, c.dtype, CombinePath::split);
  for (int s = 0; s < c.ranks; ++s) {
    EXPECT_TRUE(output_of(sim, out[static_cast<std::size_t>(s)], c.tokens) ==
                expected_combine(sim, batches, combine_in, s, fp16))
        << "source " << s;
  }
}

TEST(MoeCommA2a, FakeExpertMatchesTheHostModel) {
  KBENCH_REQUIRE_GPU();
  using F = kc::HiddenFormat;
  expect_fake_expert_matches({F::none, DType::bfloat16, 2, 37, 2880, 8, 256}, 21);
  expect_fake_expert_matches({F::none, DType::float16, 3, 1, 96, 1, 96}, 22);
  expect_fake_expert_matches({F::fp8, DType::bfloat16, 3, 37, 7168, 8, 96}, 23);
  expect_fake_expert_matches({F::fp8_block_scale, DType::bfloat16, 3, 37, 2880, 8, 255}, 24);
  expect_fake_expert_matches({F::fp8_block_scale, DType::float16, 2, 5, 96, 1, 256}, 25);
  expect_fake_expert_matches({F::nvfp4, DType::bfloat16, 2, 37, 2880, 8, 256}, 26);
  expect_fake_expert_matches({F::nvfp4, DType::float16, 3, 5, 96, 1, 255}, 27);
}

TEST(MoeCommA2a, LayoutRejectsBadShapes) {
  const std::vector<int64_t> rows = {7168, 32};
  EXPECT_THROW((void)kc::make_a2a_layout(0, 16, rows, 7168), std::invalid_argument);
  EXPECT_THROW((void)kc::make_a2a_layout(kc::kMaxRanks + 1, 16, rows, 7168), std::invalid_argument);
  EXPECT_THROW((void)kc::make_a2a_layout(8, 0, rows, 7168), std::invalid_argument);
  EXPECT_THROW((void)kc::make_a2a_layout(8, 16, std::vector<int64_t>{7168, 30}, 7168), std::invalid_argument);
  EXPECT_THROW((void)kc::make_a2a_layout(8, 16, std::vector<int64_t>(kc::kMaxPayloads + 1, 16), 7168),
               std::invalid_argument);
  EXPECT_THROW((void)kc::make_a2a_layout(8, 16, rows, 7164), std::invalid_argument);
  EXPECT_THROW((void)kc::make_a2a_layout(8, 16, rows, 7168, 0), std::invalid_argument);
  EXPECT_THROW((void)kc::make_a2a_layout(8, 16, rows, 7168, kc::kMaxCombineCtas + 1), std::invalid_argument);
  const kc::A2aLayout l = kc::make_a2a_layout(8, 16, std::vector<int64_t>{7168, 36}, 2880);
  EXPECT_EQ(l.payload_row_stride[1], 48);
  EXPECT_EQ(l.payload_offset[1] % 16, 0);
  EXPECT_GE(l.slot_epoch_offset, l.payload_offset[1] + 8 * 16 * 48);
  EXPECT_GE(l.combine_out_offset, l.combine_in_offset + int64_t{8} * 16 * 2880 * 2);
  EXPECT_EQ(l.combine_ctas, 112);  // a CTA per slot of another rank: 7 x 16
  EXPECT_EQ(l.combine_steps, 1);
  EXPECT_GE(l.total_bytes, l.signal_offset + (kc::kSignalWords + 8 * 1) * 4);
  const kc::A2aLayout capped = kc::make_a2a_layout(8, 16, rows, 7168, 33);
  EXPECT_EQ(capped.combine_ctas, 33);
  EXPECT_EQ(capped.combine_steps, 4);  // ceil(112 / 33)
  EXPECT_EQ(capped.combine_steps_per_signal, kc::kCombineStepsPerSignal);
  EXPECT_EQ(capped.combine_signals, (4 + kc::kCombineStepsPerSignal - 1) / kc::kCombineStepsPerSignal);
  EXPECT_EQ(kc::combine_signal_word(capped, 7, capped.combine_signals - 1),
            kc::kSignalWords + 7 * capped.combine_signals + capped.combine_signals - 1);
  EXPECT_GE(capped.total_bytes, capped.signal_offset + (kc::kSignalWords + 8 * capped.combine_signals) * 4);
  ASSERT_EQ(setenv("KBENCH_A2A_STEPS_PER_SIGNAL", "1", 1), 0);
  EXPECT_EQ(kc::make_a2a_layout(8, 16, rows, 7168, 33).combine_signals, 4);
  ASSERT_EQ(setenv("KBENCH_A2A_STEPS_PER_SIGNAL", "0", 1), 0);
  EXPECT_THROW((void)kc::make_a2a_layout(8, 16, rows, 7168, 33), std::invalid_argument);
  ASSERT_EQ(unsetenv("KBENCH_A2A_STEPS_PER_SIGNAL"), 0);
  const kc::A2aLayout deepseek = kc::make_a2a_layout(2, 4096, rows, 7168);
  EXPECT_EQ(deepseek.combine_ctas, kc::kMaxCombineCtas);
  EXPECT_EQ(deepseek.combine_steps, 16);  // ceil(4096 / 264)
  EXPECT_EQ(deepseek.combine_steps_per_signal, 1);  // 2 ranks: a signal every step
  EXPECT_EQ(deepseek.combine_signals, 16);
  EXPECT_EQ(kc::make_a2a_layout(1, 100, rows, 7168).combine_ctas, 100);  // one rank: a CTA per token, no sends
  EXPECT_EQ(kc::make_a2a_layout(1, 100, rows, 7168).combine_steps, 0);
}

}  // namespace
}  // namespace kbench
