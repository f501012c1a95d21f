// The TCP rendezvous over loopback, each rank a thread: the payload reaches every rank, and a
// different command line, a missing rank or a missing rank 0 end in clear errors on every side.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "dist/rendezvous.hpp"
#include "dist/socket.hpp"

namespace kbench::dist {
namespace {

struct Outcome {
  std::vector<std::byte> payload;
  std::string error;  // empty when it succeeded
};

RankEnvironment rank_of(int rank, int size) {
  RankEnvironment env;
  env.rank = rank;
  env.size = size;
  env.local_rank = rank;
  env.local_size = size;
  env.launcher = "kbench";
  return env;
}

Outcome meet(int rank, int size, const RendezvousOptions& options, std::span<const std::byte> payload,
             const std::string& digest) {
  Outcome outcome;
  try {
    outcome.payload = rendezvous(rank_of(rank, size), options, payload, digest);
  } catch (const RendezvousError& error) {
    outcome.error = error.what();
  }
  return outcome;
}

// Runs `ranks` (a digest each; ranks without one never come) as threads; rank 0 starts last, as
// it may when the launcher starts the processes in any order.
std::vector<Outcome> meet_all(const std::vector<std::optional<std::string>>& ranks, const RendezvousOptions& options,
                              std::span<const std::byte> payload) {
  const int size = static_cast<int>(ranks.size());
  std::vector<Outcome> outcomes(size);
  std::vector<std::thread> threads;
  for (int rank = size - 1; rank >= 0; --rank) {
    if (!ranks[rank]) continue;
    if (rank == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    threads.emplace_back([&, rank] { outcomes[rank] = meet(rank, size, options, payload, *ranks[rank]); });
  }
  for (auto& thread : threads) thread.join();
  return outcomes;
}

RendezvousOptions loopback(double timeout_s) { return {"127.0.0.1", free_tcp_port(), timeout_s}; }

std::string address(const RendezvousOptions& options) { return "127.0.0.1:" + std::to_string(options.port); }

const std::vector<std::byte> kPayload = {std::byte{0}, std::byte{1}, std::byte{0xfe}, std::byte{'\n'}, std::byte{42}};

TEST(Rendezvous, PayloadReachesEveryRank) {
  const auto outcomes = meet_all({"abc", "abc", "abc", "abc"}, loopback(10), kPayload);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(outcomes[rank].error, "") << "rank " << rank;
    EXPECT_EQ(outcomes[rank].payload, kPayload) << "rank " << rank;
  }
}

TEST(Rendezvous, ASingleProcessNeedsNoSocket) {
  EXPECT_EQ(rendezvous(rank_of(0, 1), {"no-such-host.invalid", 1, 0.1}, kPayload, "abc"), kPayload);
}

TEST(Rendezvous, ADifferentCommandLineFailsRankZeroAndThatRank) {
  const auto options = loopback(2);
  const auto outcomes = meet_all({"abc", "abc", "xyz"}, options, kPayload);
  const std::string expected =
      "rank 2's command line differs from rank 0's: digest xyz against abc (every rank must run the same command)";
  EXPECT_EQ(outcomes[0].error, expected);
  EXPECT_EQ(outcomes[2].error, expected);
  // Rank 1 came before or after rank 2: it hears the same error, or finds rank 0 gone.
  EXPECT_NE(outcomes[1].error, "");
}

TEST(Rendezvous, AMissingRankTimesOutOnRankZero) {
  const auto options = loopback(0.5);
  const auto start = std::chrono::steady_clock::now();
  const auto outcomes = meet_all({"abc", "abc", std::nullopt, "abc"}, options, kPayload);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string expected = "rank 2 never reached the rendezvous at " + address(options) + " within 0.5 s";
  EXPECT_EQ(outcomes[0].error, expected);
  EXPECT_EQ(outcomes[1].error, expected) << "rank 0 tells the ranks that came";
  EXPECT_EQ(outcomes[3].error, expected);
  EXPECT_LT(seconds, 5.0);
}

TEST(Rendezvous, MissingRanksAreAllNamed) {
  const auto options = loopback(0.3);
  const auto outcomes = meet_all({"abc", std::nullopt, "abc", std::nullopt, std::nullopt}, options, kPayload);
  EXPECT_EQ(outcomes[0].error,
            "ranks 1, 3 and 4 never reached the rendezvous at " + address(options) + " within 0.3 s");
}

TEST(Rendezvous, AWorkerWithoutRankZeroTimesOut) {
  const auto options = loopback(0.5);
  const auto start = std::chrono::steady_clock::now();
  const Outcome outcome = meet(1, 2, options, {}, "abc");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(outcome.error, "rank 0 at " + address(options) + " did not answer within 0.5 s");
  EXPECT_GE(seconds, 0.5);
  EXPECT_LT(seconds, 5.0);
}

TEST(Rendezvous, AStrangerIsIgnored) {
  const auto options = loopback(10);
  Outcome zero;
  std::thread rank_zero([&] { zero = meet(0, 2, options, kPayload, "abc"); });
  // Not a rank: connects once rank 0 listens, says something else, leaves; then rank 1 comes.
  bool connected = false;
  for (int attempt = 0; attempt < 200 && !connected; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const FileDescriptor socket(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(options.port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected = ::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    if (connected) {
      const std::string request = "GET / HTTP/1.0\r\n\r\n";
      EXPECT_EQ(::send(socket.get(), request.data(), request.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(request.size()));
    }
  }
  EXPECT_TRUE(connected);
  const Outcome one = meet(1, 2, options, {}, "abc");
  rank_zero.join();
  EXPECT_EQ(zero.error, "");
  EXPECT_EQ(one.error, "");
  EXPECT_EQ(one.payload, kPayload);
}

TEST(Rendezvous, ARankTwiceFails) {
  const auto options = loopback(2);
  Outcome first;
  Outcome second;
  std::thread one([&] { first = meet(1, 3, options, {}, "abc"); });
  std::thread again([&] { second = meet(1, 3, options, {}, "abc"); });
  const Outcome zero = meet(0, 3, options, kPayload, "abc");
  one.join();
  again.join();
  const std::string expected = "rank 1 reached the rendezvous at " + address(options) +
                               " twice (does another job use this port? set KBENCH_MASTER_PORT or MASTER_PORT)";
  EXPECT_EQ(zero.error, expected);
  EXPECT_EQ(first.error, expected);
  EXPECT_EQ(second.error, expected);
}

TEST(Rendezvous, ARankOutsideTheJobFails) {
  const auto options = loopback(2);
  Outcome stray;
  std::thread worker([&] { stray = meet(5, 3, options, {}, "abc"); });
  const Outcome zero = meet(0, 2, options, kPayload, "abc");
  worker.join();
  const std::string expected = "a process claiming to be rank 5 reached the rendezvous at " + address(options) +
                               ", but this job has ranks 0..1 (does another job use this port? set "
                               "KBENCH_MASTER_PORT or MASTER_PORT)";
  EXPECT_EQ(zero.error, expected);
  EXPECT_EQ(stray.error, expected);
}

}  // namespace
}  // namespace kbench::dist
