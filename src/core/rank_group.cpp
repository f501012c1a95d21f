#include "core/rank_group.hpp"

namespace kbench {
namespace {
RankGroup* g_group = nullptr;
}  // namespace

RankGroup* rank_group() noexcept { return g_group; }
void set_rank_group(RankGroup* group) noexcept { g_group = group; }

}  // namespace kbench
