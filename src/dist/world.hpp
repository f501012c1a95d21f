// The process group of a multi-GPU run over NCCL, one process per GPU: the rendezvous, the NCCL
// communicator, the host collectives the runner keeps the ranks in step with, and the device memory
// the ranks share through CUDA IPC. Nothing here knows a kernel. No call blocks past timeout_s():
// a rank that died or hung makes the others abort the communicator and throw DistTimeout.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/rank_group.hpp"
#include "dist/rank_environment.hpp"
#include "dist/rendezvous.hpp"
#include "kbench/cuda_stream.hpp"
#include "kbench/device_buffer.hpp"

// nccl.h's own declaration: the header stays usable where kbench was built without NCCL.
typedef struct ncclComm* ncclComm_t;

namespace kbench::dist {

// A step that did not finish within the timeout: another rank died, hung or left it.
class DistTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class World final : public RankGroup {
 public:
  // Selects GPU env.local_rank (every GPU must stay visible: CUDA IPC between processes needs
  // them), meets the other ranks (rendezvous(): every rank must pass the same command digest) and
  // sets up the NCCL communicator. Throws std::runtime_error (too few GPUs, a CUDA or NCCL error,
  // a build without NCCL), RendezvousError, or DistTimeout.
  [[nodiscard]] static std::unique_ptr<World> create(const RankEnvironment& env, const RendezvousOptions& options,
                                                     std::string_view command_digest);
  ~World() override;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] int local_rank() const noexcept { return local_rank_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] ncclComm_t comm() const noexcept { return comm_; }
  [[nodiscard]] double timeout_s() const noexcept { return timeout_s_; }

  [[nodiscard]] std::vector<double> max_over_ranks(std::span<const double> values) override;
  [[nodiscard]] std::vector<std::vector<std::byte>> all_gather(std::span<const std::byte> bytes) override;

  // Returns when the work queued on `stream` so far is done. Past timeout_s() it aborts the
  // communicator (NCCL kernels waiting for a peer end) and throws DistTimeout: "rank R: <what> did
  // not finish within N s: another rank died, hung or left the step". An NCCL error throws too.
  void wait(cudaStream_t stream, std::string_view what);

  // Every rank's `bytes` of device memory at `local`, in rank order ([rank()] is `local`; the
  // others are mapped through CUDA IPC with peer access). Collective: every rank calls it with as
  // many bytes. `local` must be the start of a cudaMalloc allocation (IPC shares whole allocations:
  // share an arena's base and add offsets). Every rank must run on this host, with peer access
  // between the GPUs. The mappings last until release_device_memory() or the World's end.
  [[nodiscard]] std::vector<void*> share_device_memory(void* local, std::size_t bytes);
  // Whether every rank runs on this rank's host (share_device_memory() needs it).
  [[nodiscard]] bool single_host() const;
  // Unmaps what share_device_memory() returned (the local pointer stays as it is).
  void release_device_memory(const std::vector<void*>& pointers);

  // The result of an NCCL call on comm() (an ncclResult_t): the communicator is non-blocking, so a
  // call (ncclGroupEnd above all) may answer ncclInProgress; this returns once NCCL has taken it,
  // and throws on an error or past timeout_s(). Every call on comm() goes through it before the next.
  void complete(int nccl_result, std::string_view what);

 private:
  struct Peer {
    std::string host;
    std::string pci_bus_id;  // how another process names the same GPU, whatever its ordinal there
  };

  World(const RankEnvironment& env, double timeout_s, ncclComm_t comm);
  void check_communicator(std::string_view what);
  [[noreturn]] void give_up(std::string_view what);
  [[noreturn]] void fail_nccl(int nccl_result, std::string_view what);
  std::byte* scratch(DeviceBuffer& buffer, std::size_t bytes);
  void gather_peers();

  int rank_;
  int size_;
  int local_rank_;
  int device_;
  double timeout_s_;
  ncclComm_t comm_;
  bool aborted_ = false;
  CudaStream stream_;  // the host collectives' own, so they never wait for a routine's work
  DeviceBuffer send_scratch_;
  DeviceBuffer receive_scratch_;
  std::vector<Peer> peers_;      // by rank
  std::vector<void*> opened_;    // CUDA IPC mappings still open
};

// The run's World (the process's RankGroup), or null in a single-process run.
[[nodiscard]] inline World* current_world() noexcept { return dynamic_cast<World*>(rank_group()); }

}  // namespace kbench::dist
