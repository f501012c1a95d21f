#include "dist/world.hpp"

#include <cuda.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "dist/seconds_text.hpp"
#include "kbench/cuda_check.hpp"

namespace kbench::dist {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Polling with a pause that grows: a step that ends at once costs microseconds, a long one a
// millisecond of latency at most.
class Backoff {
 public:
  void pause() {
    std::this_thread::sleep_for(pause_);
    pause_ = std::min(pause_ * 2, std::chrono::microseconds(1000));
  }

 private:
  std::chrono::microseconds pause_{10};
};

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(call) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                             ")");
  }
}

void check_nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess) throw std::runtime_error(std::string(call) + ": " + ncclGetErrorString(result));
}

// Host name and GPU as the other ranks compare them: fixed-size, so every rank gathers as many bytes.
struct PeerRecord {
  char host[256];
  char pci_bus_id[32];
};

struct SharedAllocation {
  cudaIpcMemHandle_t handle;
  std::uint64_t bytes;
};

// The start of the allocation holding `pointer` (cuMemGetAddressRange through the runtime, so
// kbench needs no libcuda at link time).
CUdeviceptr allocation_start(void* pointer) {
  using GetAddressRange = CUresult (*)(CUdeviceptr*, std::size_t*, CUdeviceptr);
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  check_cuda(cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &entry, 12000, cudaEnableDefault, &found),
             "cudaGetDriverEntryPointByVersion(cuMemGetAddressRange)");
  if (found != cudaDriverEntryPointSuccess || entry == nullptr) {
    throw std::runtime_error("the CUDA driver has no cuMemGetAddressRange");
  }
  CUdeviceptr start = 0;
  std::size_t bytes = 0;
  if (reinterpret_cast<GetAddressRange>(entry)(&start, &bytes, reinterpret_cast<CUdeviceptr>(pointer)) !=
      CUDA_SUCCESS) {
    throw std::runtime_error("share_device_memory: the pointer is not device memory of this process");
  }
  return start;
}

}  // namespace

std::unique_ptr<World> World::create(const RankEnvironment& env, const RendezvousOptions& options,
                                     std::string_view command_digest) {
  // NVLink multicast (NVLS) stays off unless the user set it: on the shared GPU machines a program
  // using it can put the host's GPUs, which others share, out of service for a day or more.
  ::setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  const std::string me = "rank " + std::to_string(env.rank) + ": ";
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (env.local_rank >= devices) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const std::string visible_text = visible != nullptr ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : "";
    throw std::runtime_error(me + "local rank " + std::to_string(env.local_rank) + " needs GPU " +
                             std::to_string(env.local_rank) + ", but this process sees " + std::to_string(devices) +
                             " GPU(s)" + visible_text +
                             ": run at most as many ranks per host as it has GPUs, each seeing all of them");
  }
  check_cuda(cudaSetDevice(env.local_rank), "cudaSetDevice");

  ncclUniqueId id{};
  if (env.rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  const auto received = rendezvous(env, options, std::as_bytes(std::span(&id, 1)), command_digest);
  if (received.size() != sizeof id) {
    throw RendezvousError(me + "rank 0 sent " + std::to_string(received.size()) + " bytes, not an NCCL id");
  }
  std::memcpy(&id, received.data(), sizeof id);

  // Non-blocking: set-up and collectives return at once and are polled, so a rank that never comes
  // ends in a timeout here, never in a hang inside NCCL.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  const ncclResult_t started = ncclCommInitRankConfig(&comm, env.size, id, env.rank, &config);
  if (comm == nullptr) check_nccl(started, "ncclCommInitRankConfig");
  std::unique_ptr<World> world(new World(env, options.timeout_s, comm));
  world->complete(started, "NCCL's set-up (ncclCommInitRankConfig)");
  world->gather_peers();
  return world;
}

World::World(const RankEnvironment& env, double timeout_s, ncclComm_t comm)
    : rank_(env.rank), size_(env.size), local_rank_(env.local_rank), device_(env.local_rank), timeout_s_(timeout_s),
      comm_(comm) {}

World::~World() {
  for (void* pointer : opened_) (void)cudaIpcCloseMemHandle(pointer);
  if (comm_ == nullptr || aborted_) return;
  // Finalize flushes what is queued and needs every rank; a rank that left would make it wait
  // forever, so it is polled and the communicator aborted past the timeout.
  ncclResult_t state = ncclCommFinalize(comm_);
  const auto deadline = deadline_after(timeout_s_);
  Backoff backoff;
  while (state == ncclInProgress && Clock::now() < deadline) {
    if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) break;
    if (state == ncclInProgress) backoff.pause();
  }
  if (state == ncclSuccess) {
    (void)ncclCommDestroy(comm_);
  } else {
    (void)ncclCommAbort(comm_);
  }
}

void World::complete(int nccl_result, std::string_view what) {
  const auto result = static_cast<ncclResult_t>(nccl_result);
  if (result == ncclSuccess) return;
  if (result != ncclInProgress) fail_nccl(result, what);
  const auto deadline = deadline_after(timeout_s_);
  Backoff backoff;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    if (const ncclResult_t query = ncclCommGetAsyncError(comm_, &state); query != ncclSuccess) fail_nccl(query, what);
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) fail_nccl(state, what);
    if (Clock::now() >= deadline) give_up(what);
    backoff.pause();
  }
}

void World::check_communicator(std::string_view what) {
  ncclResult_t state = ncclSuccess;
  if (const ncclResult_t query = ncclCommGetAsyncError(comm_, &state); query != ncclSuccess) fail_nccl(query, what);
  if (state != ncclSuccess && state != ncclInProgress) fail_nccl(state, what);
}

void World::give_up(std::string_view what) {
  if (!aborted_) {
    aborted_ = true;
    (void)ncclCommAbort(comm_);
  }
  throw DistTimeout("rank " + std::to_string(rank_) + ": " + std::string(what) + " did not finish within " +
                    seconds_text(timeout_s_) + " s: another rank died, hung or left the step");
}

void World::fail_nccl(int nccl_result, std::string_view what) {
  const auto result = static_cast<ncclResult_t>(nccl_result);
  std::string message = "rank " + std::to_string(rank_) + ": " + std::string(what) + " failed: NCCL " +
                        ncclGetErrorString(result);
  if (const char* detail = ncclGetLastError(comm_); detail != nullptr && *detail != '\0') {
    message += std::string(" (") + detail + ")";
  }
  // A communicator in error cannot be used again; aborting it also ends any NCCL kernel waiting
  // for a peer.
  if (!aborted_) {
    aborted_ = true;
    (void)ncclCommAbort(comm_);
  }
  throw std::runtime_error(message);
}

void World::wait(cudaStream_t stream, std::string_view what) {
  const auto deadline = deadline_after(timeout_s_);
  Backoff backoff;
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) {
      throw std::runtime_error("rank " + std::to_string(rank_) + ": " + std::string(what) + " failed: " +
                               cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
    }
    check_communicator(what);
    if (Clock::now() >= deadline) give_up(what);
    backoff.pause();
  }
}

std::byte* World::scratch(DeviceBuffer& buffer, std::size_t bytes) {
  if (buffer.bytes() < bytes) buffer = DeviceBuffer(bytes);
  return buffer.as<std::byte>();
}

std::vector<double> World::max_over_ranks(std::span<const double> values) {
  if (values.empty()) return {};
  const std::size_t bytes = values.size_bytes();
  std::byte* send = scratch(send_scratch_, bytes);
  std::byte* receive = scratch(receive_scratch_, bytes);
  check_cuda(cudaMemcpyAsync(send, values.data(), bytes, cudaMemcpyHostToDevice, stream_.get()), "cudaMemcpyAsync");
  complete(ncclAllReduce(send, receive, values.size(), ncclDouble, ncclMax, comm_, stream_.get()),
           "max_over_ranks (ncclAllReduce)");
  std::vector<double> maxima(values.size());
  // After the wait, so the copy to pageable memory (synchronous) never waits on a hung collective.
  wait(stream_.get(), "max_over_ranks (ncclAllReduce)");
  check_cuda(cudaMemcpyAsync(maxima.data(), receive, bytes, cudaMemcpyDeviceToHost, stream_.get()), "cudaMemcpyAsync");
  wait(stream_.get(), "max_over_ranks (copy)");
  return maxima;
}

std::vector<std::vector<std::byte>> World::all_gather(std::span<const std::byte> bytes) {
  if (bytes.empty()) return std::vector<std::vector<std::byte>>(size_);
  std::byte* send = scratch(send_scratch_, bytes.size());
  std::byte* receive = scratch(receive_scratch_, bytes.size() * size_);
  check_cuda(cudaMemcpyAsync(send, bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream_.get()),
             "cudaMemcpyAsync");
  complete(ncclAllGather(send, receive, bytes.size(), ncclUint8, comm_, stream_.get()), "all_gather (ncclAllGather)");
  wait(stream_.get(), "all_gather (ncclAllGather)");
  std::vector<std::byte> all(bytes.size() * size_);
  check_cuda(cudaMemcpyAsync(all.data(), receive, all.size(), cudaMemcpyDeviceToHost, stream_.get()),
             "cudaMemcpyAsync");
  wait(stream_.get(), "all_gather (copy)");
  std::vector<std::vector<std::byte>> by_rank;
  for (int rank = 0; rank < size_; ++rank) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(rank * bytes.size());
    by_rank.emplace_back(first, first + static_cast<std::ptrdiff_t>(bytes.size()));
  }
  return by_rank;
}

void World::gather_peers() {
  PeerRecord mine{};
  if (::gethostname(mine.host, sizeof mine.host - 1) != 0) std::strcpy(mine.host, "?");
  check_cuda(cudaDeviceGetPCIBusId(mine.pci_bus_id, sizeof mine.pci_bus_id, device_), "cudaDeviceGetPCIBusId");
  for (const auto& record : all_gather(std::as_bytes(std::span(&mine, 1)))) {
    PeerRecord peer{};
    std::memcpy(&peer, record.data(), sizeof peer);
    peers_.push_back({peer.host, peer.pci_bus_id});
  }
}

bool World::single_host() const {
  return std::all_of(peers_.begin(), peers_.end(), [&](const Peer& p) { return p.host == peers_[rank_].host; });
}

std::vector<void*> World::share_device_memory(void* local, std::size_t bytes) {
  const std::string me = "rank " + std::to_string(rank_) + ": share_device_memory: ";
  if (allocation_start(local) != reinterpret_cast<CUdeviceptr>(local)) {
    throw std::runtime_error(me + "the pointer is inside an allocation, not at its start (CUDA IPC shares whole "
                                  "allocations: share the allocation and add the offset)");
  }
  SharedAllocation mine{};
  check_cuda(cudaIpcGetMemHandle(&mine.handle, local), "cudaIpcGetMemHandle");
  mine.bytes = bytes;
  const auto records = all_gather(std::as_bytes(std::span(&mine, 1)));

  // Every check before any mapping, so a failure leaves nothing open.
  std::vector<SharedAllocation> shared(size_);
  for (int peer = 0; peer < size_; ++peer) {
    std::memcpy(&shared[peer], records[peer].data(), sizeof(SharedAllocation));
    if (peer == rank_) continue;
    const std::string them = "rank " + std::to_string(peer);
    if (shared[peer].bytes != bytes) {
      throw std::runtime_error(me + them + " shares " + std::to_string(shared[peer].bytes) + " bytes, this rank " +
                               std::to_string(bytes) + ": every rank must share as many");
    }
    if (peers_[peer].host != peers_[rank_].host) {
      throw std::runtime_error(me + them + " runs on host " + peers_[peer].host + ", this rank on " +
                               peers_[rank_].host + ": CUDA IPC shares memory within one host only");
    }
    int peer_device = -1;
    if (cudaDeviceGetByPCIBusId(&peer_device, peers_[peer].pci_bus_id.c_str()) != cudaSuccess) {
      throw std::runtime_error(me + them + "'s GPU (PCI " + peers_[peer].pci_bus_id +
                               ") is not visible to this rank: every rank must see every GPU of the host");
    }
    int can_access = 0;
    check_cuda(cudaDeviceCanAccessPeer(&can_access, device_, peer_device), "cudaDeviceCanAccessPeer");
    if (can_access == 0) {
      throw std::runtime_error(me + "GPU " + std::to_string(device_) + " cannot access " + them + "'s GPU " +
                               std::to_string(peer_device) + " (no peer access over NVLink or PCIe)");
    }
  }
  std::vector<void*> pointers(size_, nullptr);
  pointers[rank_] = local;
  try {
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      check_cuda(cudaIpcOpenMemHandle(&pointers[peer], shared[peer].handle, cudaIpcMemLazyEnablePeerAccess),
                 "cudaIpcOpenMemHandle");
      opened_.push_back(pointers[peer]);
    }
  } catch (...) {
    release_device_memory(pointers);
    throw;
  }
  return pointers;
}

void World::release_device_memory(const std::vector<void*>& pointers) {
  for (void* pointer : pointers) {
    const auto open = std::find(opened_.begin(), opened_.end(), pointer);
    if (pointer == nullptr || open == opened_.end()) continue;
    opened_.erase(open);
    check_cuda(cudaIpcCloseMemHandle(pointer), "cudaIpcCloseMemHandle");
  }
}

}  // namespace kbench::dist
