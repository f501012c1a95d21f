// World where kbench was built without NCCL: create() says so; nothing else can be reached, as no
// World exists.
#include "dist/world.hpp"

namespace kbench::dist {
namespace {

[[noreturn]] void without_nccl() {
  throw std::runtime_error(
      "kbench was built without NCCL: a multi-process run needs it (install nccl.h and libnccl, or run "
      "scripts/deps.sh for the header, then configure again)");
}

}  // namespace

std::unique_ptr<World> World::create(const RankEnvironment&, const RendezvousOptions&, std::string_view) {
  without_nccl();
}
World::~World() = default;
std::vector<double> World::max_over_ranks(std::span<const double>) { without_nccl(); }
std::vector<std::vector<std::byte>> World::all_gather(std::span<const std::byte>) { without_nccl(); }
void World::wait(cudaStream_t, std::string_view) { without_nccl(); }
std::vector<void*> World::share_device_memory(void*, std::size_t) { without_nccl(); }
void World::release_device_memory(const std::vector<void*>&) { without_nccl(); }
bool World::single_host() const { without_nccl(); }

}  // namespace kbench::dist
