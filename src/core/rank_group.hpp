// The processes of one multi-GPU run (one per GPU, started by mpirun, srun or `kbench --nproc N`),
// as the harness needs them: which rank reports, and the collective steps that keep every rank's
// runner in step (fixed iteration counts, per-iteration maxima, agreed refcheck verdicts). core
// knows no communication library: src/dist implements this over NCCL.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace kbench {

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  // The element-wise maximum over ranks; every rank passes as many values. Throws on a timeout
  // (a rank died or left the step) after aborting the group.
  [[nodiscard]] virtual std::vector<double> max_over_ranks(std::span<const double> values) = 0;
  // Every rank's bytes in rank order; every rank passes as many bytes.
  [[nodiscard]] virtual std::vector<std::vector<std::byte>> all_gather(std::span<const std::byte> bytes) = 0;

  // True where `value` is true on every rank.
  [[nodiscard]] bool all(bool value) {
    const double mine = value ? 0.0 : 1.0;
    return max_over_ranks(std::span(&mine, 1)).front() == 0.0;
  }
};

// The process's group, or null in a single-process run. Set once by the program's entry point.
[[nodiscard]] RankGroup* rank_group() noexcept;
void set_rank_group(RankGroup* group) noexcept;

}  // namespace kbench
