// `nccl`: the all-to-all a framework without its own kernels would use, NCCL's grouped
// send/receive. The token counts per destination live on the device, so a send of exact sizes
// would need the host to read them inside the call; instead every rank sends all of its tokens to
// every peer (graph-safe, no synchronisation): at 2 ranks with top-8 of 256 experts that is the
// routed traffic within 0.4%, at 8 ranks about 1.5x it. Combine returns each source's whole slot
// block and sums the ranks of each token's experts there.
#include <nccl.h>

#include <string>

#include "dist/world.hpp"
#include "routines/moe_comm/nccl_backends.hpp"
#include "routines/moe_comm/a2a_case.hpp"
#include "routines/moe_comm/a2a_operation.hpp"

namespace kbench {
namespace {

namespace a2a = kernels::moe_comm;


class A2aNcclOperation final : public A2aOperation {
 public:
  // The expert stage reads every source's first `tokens` slots: nccl moves every token to every rank.
  A2aNcclOperation(MoeA2aCase& c, dist::World& world, cudaStream_t stream)
      : A2aOperation(a2a_expert_stage(c, a2a::SlotValidity::first_tokens, stream)),
        c_(c),
        world_(world),
        comm_(world.comm()) {}

  void dispatch(cudaStream_t stream, int copy) override {
    const a2a::A2aLayout& l = c_.layout();
    const int rank = c_.problem().rank;
    const std::vector<const void*> sources = c_.payload_sources(copy);
    auto* base = static_cast<uint8_t*>(c_.workspace());
    world_.complete(ncclGroupStart(), "ncclGroupStart");
    for (int p = 0; p < l.num_payloads; ++p) {
      const std::size_t bytes = static_cast<std::size_t>(c_.problem().tokens * l.payload_row_bytes[p]);
      for (int peer = 0; peer < l.ranks; ++peer) {
        uint8_t* slot = base + l.payload_offset[p] + static_cast<int64_t>(peer) * l.max_tokens * l.payload_row_stride[p];
        if (peer == rank) {
          KBENCH_CUDA_CHECK(cudaMemcpyAsync(slot, sources[static_cast<std::size_t>(p)], bytes, cudaMemcpyDeviceToDevice, stream));
          continue;
        }
        world_.complete(ncclSend(sources[static_cast<std::size_t>(p)], bytes, ncclUint8, peer, comm_, stream), "ncclSend");
        world_.complete(ncclRecv(slot, bytes, ncclUint8, peer, comm_, stream), "ncclRecv");
      }
    }
    world_.complete(ncclGroupEnd(), "ncclGroupEnd");
  }

  void combine(cudaStream_t stream, int copy) override {
    const a2a::A2aLayout& l = c_.layout();
    const int rank = c_.problem().rank;
    auto* base = static_cast<uint8_t*>(c_.workspace());
    const int64_t block = static_cast<int64_t>(l.max_tokens) * l.hidden * 2;
    const std::size_t bytes = static_cast<std::size_t>(c_.problem().tokens * l.hidden * 2);
    world_.complete(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < l.ranks; ++peer) {
      uint8_t* results_for_peer = base + l.combine_in_offset + peer * block;
      uint8_t* results_from_peer = base + l.combine_out_offset + peer * block;
      if (peer == rank) continue;  // the sum reads this rank's own results in place
      world_.complete(ncclSend(results_for_peer, bytes, ncclUint8, peer, comm_, stream), "ncclSend");
      world_.complete(ncclRecv(results_from_peer, bytes, ncclUint8, peer, comm_, stream), "ncclRecv");
    }
    world_.complete(ncclGroupEnd(), "ncclGroupEnd");
    a2a::launch_combine_reduce(l, c_.route(copy), c_.workspace(), c_.output(), c_.problem().input_dtype, stream);
  }

 private:
  MoeA2aCase& c_;
  dist::World& world_;
  ncclComm_t comm_;
};

}  // namespace


A2aNcclBackend::A2aNcclBackend(BackendInfo info) : BackendFor(std::move(info)) {}

Support A2aNcclBackend::can_run_on(const DeviceInfo&) const { return Support::yes(); }

Support A2aNcclBackend::implements(const MoeA2aCase& c) const {
  if (c.problem().ranks < 2) return Support::no("NCCL's all-to-all needs a run of 2 ranks or more (mpirun -np N or --nproc N)");
  const a2a::A2aLayout& l = c.layout();
  for (int p = 0; p < l.num_payloads; ++p) {
    if (l.payload_row_stride[p] != l.payload_row_bytes[p]) {
      return Support::no("a payload row of " + std::to_string(l.payload_row_bytes[p]) +
                         " bytes is padded in the receive slots; NCCL receives whole arrays (top_k a multiple of 4 "
                         "and hidden a multiple of 256 avoid padding)");
    }
  }
  return Support::yes();
}

std::unique_ptr<Operation> A2aNcclBackend::bind(MoeA2aCase& c, cudaStream_t stream) const {
  dist::World* world = dist::current_world();
  if (world == nullptr) throw BackendUnavailable("NCCL: no communicator (a single-process run)");
  return validated(std::make_unique<A2aNcclOperation>(c, *world, stream), c, "nccl", stream);
}


}  // namespace kbench
