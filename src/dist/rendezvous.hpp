// The meeting of a run's ranks before NCCL exists: rank 0 hands its payload (NCCL's unique id) to
// every other rank over TCP, and checks on the way that every rank came exactly once and runs the
// same command. No MPI library: plain sockets, poll() with deadlines, length-prefixed messages.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dist/rank_environment.hpp"

namespace kbench::dist {

// A rendezvous that failed: a rank missing, a rank twice, another command line, no answer.
class RendezvousError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RendezvousOptions {
  std::string host;  // where rank 0 listens, as the other ranks reach it
  int port = 0;
  double timeout_s = 120.0;
};

// KBENCH_DIST_TIMEOUT in seconds, or nothing when it is unset: how long a rank waits for the others
// (rendezvous, NCCL's set-up, every collective) before it gives up. Throws std::runtime_error when
// it is not a positive number.
[[nodiscard]] std::optional<double> dist_timeout(const Getenv& getenv);

// host: KBENCH_MASTER_ADDR, else MASTER_ADDR, else 127.0.0.1 (right on one host; across machines
// MASTER_ADDR must name rank 0's host, as every rank can reach it). port: KBENCH_MASTER_PORT, else
// MASTER_PORT, else one in [20000, 60000) derived from the job key (every rank derives the same; a
// job without a key always gets the same one, so concurrent such jobs must set MASTER_PORT).
// timeout_s: dist_timeout(), else 120. Throws std::runtime_error naming a malformed
// variable.
[[nodiscard]] RendezvousOptions rendezvous_options(const RankEnvironment& env, const Getenv& getenv);

// Rank 0 listens at the port, waits (up to the timeout) for ranks 1..size-1 with `command_digest`
// each, and sends each `payload`, which it also returns. Every other rank connects (retrying until
// the timeout: rank 0 may start later), sends its rank and digest, and returns rank 0's payload.
// A failure throws RendezvousError on rank 0 ("rank 2 never reached the rendezvous at HOST:PORT
// within 120 s", "rank 1's command line differs from rank 0's: ...") and rank 0 sends the same text
// to the ranks that came, so they throw it too; a rank that hears nothing throws "rank 0 at
// HOST:PORT did not answer within N s". A single process returns `payload` at once.
[[nodiscard]] std::vector<std::byte> rendezvous(const RankEnvironment& env, const RendezvousOptions& options,
                                                std::span<const std::byte> payload, std::string_view command_digest);

// FNV-1a (64 bits, 16 hex digits) of the tokens, each ended by a NUL so ["a b"] and ["a", "b"]
// differ: what ranks compare to make sure they run the same command.
[[nodiscard]] std::string command_digest(std::span<const std::string> tokens);

}  // namespace kbench::dist
