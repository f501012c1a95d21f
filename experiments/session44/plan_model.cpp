// Session 44: what fa3's plan and its cost model predict for issue 19's random-length rows (128
// requests, lengths uniform in [1, 8192], 16 heads x 1 token, 132 SMs): the balanced schedule that
// plan_mla_fa3 makes, its parts' loads in the model's units (a KV tile; a segment costs the kernel's
// segment tiles), and the throughput against the fixed lengths' uniform grid
// (128 CTAs of 128 tiles and one segment) that the model predicts. Build (from the repository root,
// after a build in build/):
//   g++ -std=c++20 -O2 -I include -I . -I /usr/local/cuda/include experiments/session44/plan_model.cpp \
//       build/kernels/libkbench_kernels.a -L /usr/local/cuda/lib64 -lcudart -lcuda -o /tmp/plan_model
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/attention/mla/mla_fa3.hpp"

int main() {
  using namespace kbench;
  constexpr int kSms = 132, kTile = 64, kRows = 16;
  for (const DType kv : {DType::bfloat16, DType::fp8_e4m3}) {
    // mla_fa3.cu's costs for these rows (pages of 64): fp8 5; bf16 3.2 since session 44's trace (2
    // before, the default of mla_split.hpp: the README's first numbers).
    const double segment_tiles = kv == DType::fp8_e4m3 ? 5.0 : 3.2;
    for (unsigned seed = 0; seed < 4; ++seed) {
      std::mt19937 rng(seed);
      std::vector<int32_t> lens(128);
      for (auto& len : lens) len = 1 + static_cast<int32_t>(rng() % 8192);
      kernels::MlaParams p;
      p.batch = 128;
      p.num_heads = kRows;
      p.kv_dtype = kv;
      p.sm_scale = 0.1f;
      const kernels::MlaPlan plan = kernels::plan_mla_fa3(p, lens, kSms);
      double total = 0.0, most = 0.0, sum = 0.0;
      for (const int32_t len : lens) total += std::max((len + kTile - 1) / kTile, 1);
      const int parts = static_cast<int>(plan.part_begin.size()) - 1;
      for (int part = 0; part < parts; ++part) {
        double load = 0.0;
        for (int i = plan.part_begin[part]; i < plan.part_begin[part + 1]; ++i) {
          load += segment_tiles + (plan.segments[i].k_end - plan.segments[i].k_begin + kTile - 1) / kTile;
        }
        most = std::max(most, load);
        sum += load;
      }
      // The merge as mla_split.cu's model prices it: the partial rows read at all SMs' tile bandwidth,
      // plus a tile for its launch.
      long partial_rows = 0;
      for (const int32_t pieces : plan.unit_splits) partial_rows += pieces > 1 ? pieces * kRows : 0;
      const double merge = partial_rows == 0 ? 0.0 : partial_rows * 513.0 * 4 / (kTile * 1152.0 * kSms) + 1.0;
      const double fixed = 128.0 * 128.0 / (128.0 + segment_tiles);
      std::printf("%s seed %u: %d parts, %zu segments, max load %.1f (mean %.1f) + merge %.1f tiles: random / "
                  "fixed %.3f (%.3f without the merge)\n",
                  kv == DType::fp8_e4m3 ? "fp8 " : "bf16", seed, parts, plan.segments.size(), most, sum / parts, merge,
                  total / (most + merge) / fixed, total / most / fixed);
    }
  }
}
