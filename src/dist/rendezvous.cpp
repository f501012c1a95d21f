#include "dist/rendezvous.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "dist/seconds_text.hpp"
#include "dist/socket.hpp"

namespace kbench::dist {
namespace {

using Clock = std::chrono::steady_clock;

// Every hello starts with this: a stray connection (a port scanner, another program on a derived
// port) is dropped, never mistaken for a rank.
constexpr std::string_view kHelloMagic = "kbench-rendezvous-1";
constexpr std::size_t kMaxHelloBytes = 4096;
constexpr std::size_t kMaxAnswerBytes = std::size_t{64} << 20;
constexpr std::byte kPayloadAnswer{'P'};
constexpr std::byte kErrorAnswer{'E'};
// How long rank 0 spends telling the ranks that came about a failure: each is a few bytes into a
// socket buffer, so this only bounds a rank that stopped reading.
constexpr auto kErrorDeliveryTime = std::chrono::seconds(1);
// Rank 0 answers within its own timeout, which started before a worker could connect; this covers
// the scheduling between its deadline and its answer.
constexpr auto kAnswerGrace = std::chrono::seconds(2);

std::string address_text(const RendezvousOptions& options) { return options.host + ":" + std::to_string(options.port); }

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// poll()'s timeout for a deadline: at least 0, rounded up so a poll never ends just short of it.
int milliseconds_until(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1'000'000));
}

enum class Transfer { done, timed_out, closed };

// Waits for `events` on a non-blocking socket; false at the deadline.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, milliseconds_until(deadline));
    if (ready > 0) return true;
    if (ready == 0 && Clock::now() >= deadline) return false;
    if (ready < 0 && errno != EINTR) throw RendezvousError(std::string("poll: ") + std::strerror(errno));
  }
}

Transfer send_all(int fd, std::span<const std::byte> bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    // MSG_NOSIGNAL: a peer that went away is an error here, not a SIGPIPE that ends the process.
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      bytes = bytes.subspan(static_cast<std::size_t>(sent));
    } else if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!wait_for(fd, POLLOUT, deadline)) return Transfer::timed_out;
    } else {
      return Transfer::closed;
    }
  }
  return Transfer::done;
}

Transfer send_frame(int fd, std::span<const std::byte> body, Clock::time_point deadline) {
  const std::uint32_t length = htonl(static_cast<std::uint32_t>(body.size()));
  const Transfer header = send_all(fd, std::as_bytes(std::span(&length, 1)), deadline);
  return header == Transfer::done ? send_all(fd, body, deadline) : header;
}

// Reads what is there without blocking; closed at end of stream or on an error.
Transfer read_available(int fd, std::vector<std::byte>& buffer) {
  std::byte chunk[4096];
  for (;;) {
    const ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
    if (got > 0) {
      buffer.insert(buffer.end(), chunk, chunk + got);
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return Transfer::done;
    } else {
      return Transfer::closed;
    }
  }
}

// The first length-prefixed frame of `buffer`: its body once all of it is there; oversized when it
// announces more than `max_bytes` (no frame of kbench's).
struct Frame {
  bool oversized = false;
  std::optional<std::span<const std::byte>> body;
};

Frame first_frame(const std::vector<std::byte>& buffer, std::size_t max_bytes) {
  std::uint32_t length = 0;
  if (buffer.size() < sizeof length) return {};
  std::memcpy(&length, buffer.data(), sizeof length);
  length = ntohl(length);
  if (length > max_bytes) return {true, std::nullopt};
  if (buffer.size() < sizeof length + length) return {};
  return {false, std::span(buffer).subspan(sizeof length, length)};
}

std::vector<std::byte> answer(std::byte kind, std::span<const std::byte> content) {
  std::vector<std::byte> body(1 + content.size());
  body.front() = kind;
  std::copy(content.begin(), content.end(), body.begin() + 1);
  return body;
}

std::string missing_ranks_text(const std::vector<bool>& arrived) {
  std::vector<int> missing;
  for (int rank = 1; rank < static_cast<int>(arrived.size()); ++rank) {
    if (!arrived[rank]) missing.push_back(rank);
  }
  std::string text = missing.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < missing.size(); ++i) {
    if (i > 0) text += i + 1 == missing.size() ? " and " : ", ";
    text += std::to_string(missing[i]);
  }
  return text;
}

struct Hello {
  int rank = 0;
  std::string digest;
};

// "kbench-rendezvous-1\n<rank>\n<digest>", or nothing for a stranger.
std::optional<Hello> parse_hello(std::span<const std::byte> body) {
  const std::string_view text(reinterpret_cast<const char*>(body.data()), body.size());
  const std::size_t first = text.find('\n');
  const std::size_t second = text.find('\n', first + 1);
  if (first == std::string_view::npos || second == std::string_view::npos || text.substr(0, first) != kHelloMagic) {
    return std::nullopt;
  }
  Hello hello;
  const std::string_view rank = text.substr(first + 1, second - first - 1);
  if (std::from_chars(rank.data(), rank.data() + rank.size(), hello.rank).ptr != rank.data() + rank.size() ||
      rank.empty()) {
    return std::nullopt;
  }
  hello.digest = std::string(text.substr(second + 1));
  return hello;
}

class RendezvousServer {
 public:
  RendezvousServer(const RankEnvironment& env, const RendezvousOptions& options, std::string_view digest)
      : env_(env), options_(options), digest_(digest), arrived_(env.size, false), workers_(env.size) {
    arrived_[0] = true;
  }

  std::vector<std::byte> run(std::span<const std::byte> payload) {
    const FileDescriptor listener = listen_tcp(options_.port, env_.size);
    const auto deadline = deadline_after(options_.timeout_s);
    int count = 1;
    while (count < env_.size) {
      if (Clock::now() >= deadline) {
        fail(missing_ranks_text(arrived_) + " never reached the rendezvous at " + address_text(options_) + " within " +
             seconds_text(options_.timeout_s) + " s");
      }
      std::vector<pollfd> entries{{listener.get(), POLLIN, 0}};
      for (const auto& connection : pending_) entries.push_back({connection.socket.get(), POLLIN, 0});
      const int ready = ::poll(entries.data(), entries.size(), milliseconds_until(deadline));
      if (ready < 0 && errno != EINTR) throw RendezvousError(std::string("poll: ") + std::strerror(errno));
      if (ready <= 0) continue;
      // Pending connections first (entries[1..] are pending_ as it was), then new ones.
      for (std::size_t i = pending_.size(); i-- > 0;) {
        if (entries[i + 1].revents != 0 && read_hello(i)) ++count;
      }
      if ((entries[0].revents & POLLIN) != 0) accept_all(listener);
    }
    const auto answer_deadline = deadline_after(options_.timeout_s);
    const auto message = answer(kPayloadAnswer, payload);
    for (int rank = 1; rank < env_.size; ++rank) {
      if (send_frame(workers_[rank].get(), message, answer_deadline) != Transfer::done) {
        fail("rank " + std::to_string(rank) + " left the rendezvous at " + address_text(options_) +
             " before rank 0 could answer it");
      }
    }
    return {payload.begin(), payload.end()};
  }

 private:
  struct Pending {
    FileDescriptor socket;
    std::vector<std::byte> received;
  };

  void accept_all(const FileDescriptor& listener) {
    for (;;) {
      FileDescriptor socket(::accept4(listener.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!socket.valid()) return;  // EAGAIN: none left (an aborted connection is no concern either)
      pending_.push_back({std::move(socket), {}});
    }
  }

  // Reads from pending_[index]; true when it completed a rank's hello (the rank is then a worker).
  // A stranger, or a connection closed before its hello, is dropped.
  bool read_hello(std::size_t index) {
    Pending& connection = pending_[index];
    const Transfer read = read_available(connection.socket.get(), connection.received);
    const Frame frame = first_frame(connection.received, kMaxHelloBytes);
    if (!frame.body && !frame.oversized && read == Transfer::done) return false;  // more to come
    const auto hello = frame.body ? parse_hello(*frame.body) : std::nullopt;
    if (!hello) {
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
      return false;
    }
    FileDescriptor socket = std::move(connection.socket);
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(index));
    const std::string rank = std::to_string(hello->rank);
    if (hello->rank < 1 || hello->rank >= env_.size) {
      fail("a process claiming to be rank " + rank + " reached the rendezvous at " + address_text(options_) +
               ", but this job has ranks 0.." + std::to_string(env_.size - 1) +
               " (does another job use this port? set KBENCH_MASTER_PORT or MASTER_PORT)",
           &socket);
    }
    if (arrived_[hello->rank]) {
      fail("rank " + rank + " reached the rendezvous at " + address_text(options_) +
               " twice (does another job use this port? set KBENCH_MASTER_PORT or MASTER_PORT)",
           &socket);
    }
    if (hello->digest != digest_) {
      fail("rank " + rank + "'s command line differs from rank 0's: digest " + hello->digest + " against " +
               digest_ + " (every rank must run the same command)",
           &socket);
    }
    arrived_[hello->rank] = true;
    workers_[hello->rank] = std::move(socket);
    return true;
  }

  // Tells every rank that came (and `offender`, when there is one) what failed, then throws it.
  [[noreturn]] void fail(const std::string& message, const FileDescriptor* offender = nullptr) {
    const auto deadline = Clock::now() + kErrorDeliveryTime;
    const auto text = std::as_bytes(std::span(message));
    const auto error = answer(kErrorAnswer, text);
    if (offender != nullptr) (void)send_frame(offender->get(), error, deadline);
    for (const auto& worker : workers_) {
      if (worker.valid()) (void)send_frame(worker.get(), error, deadline);
    }
    throw RendezvousError(message);
  }

  const RankEnvironment& env_;
  const RendezvousOptions& options_;
  std::string digest_;
  std::vector<bool> arrived_;
  std::vector<FileDescriptor> workers_;  // by rank; connected and checked
  std::vector<Pending> pending_;         // accepted, hello not complete yet
};

// rank 0's address for connect(): IPv4, as rank 0 listens.
sockaddr_in resolve(const RendezvousOptions& options) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options.port);
  if (const int error = ::getaddrinfo(options.host.c_str(), port.c_str(), &hints, &found); error != 0) {
    throw RendezvousError("cannot resolve the rendezvous host '" + options.host + "': " + ::gai_strerror(error));
  }
  sockaddr_in address{};
  std::memcpy(&address, found->ai_addr, sizeof address);
  ::freeaddrinfo(found);
  return address;
}

// A connected socket, or an invalid one when rank 0 is not there (yet) or the deadline passed.
FileDescriptor try_connect(const sockaddr_in& address, Clock::time_point deadline) {
  FileDescriptor socket(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket.valid()) throw RendezvousError(std::string("socket: ") + std::strerror(errno));
  if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    if (errno != EINPROGRESS || !wait_for(socket.get(), POLLOUT, deadline)) return {};
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(socket.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) return {};
  }
  // On loopback, with nobody listening at a port of the ephemeral range, Linux may give a socket
  // that very port as its own and connect it to itself; it would read its own hello back.
  sockaddr_in local{};
  socklen_t length = sizeof local;
  if (::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&local), &length) == 0 &&
      local.sin_port == address.sin_port && local.sin_addr.s_addr == address.sin_addr.s_addr) {
    return {};
  }
  return socket;
}

std::vector<std::byte> join_rendezvous(const RankEnvironment& env, const RendezvousOptions& options,
                                       std::string_view digest) {
  const std::string silence = "rank 0 at " + address_text(options) + " did not answer within " +
                              seconds_text(options.timeout_s) + " s";
  const sockaddr_in address = resolve(options);
  const auto deadline = deadline_after(options.timeout_s);
  FileDescriptor socket;
  for (auto pause = std::chrono::milliseconds(10); !(socket = try_connect(address, deadline)).valid();) {
    if (Clock::now() >= deadline) throw RendezvousError(silence);
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - Clock::now()));
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
  const auto answer_deadline = deadline_after(options.timeout_s) + kAnswerGrace;
  const std::string hello = std::string(kHelloMagic) + "\n" + std::to_string(env.rank) + "\n" + std::string(digest);
  if (send_frame(socket.get(), std::as_bytes(std::span(hello)), answer_deadline) != Transfer::done) {
    throw RendezvousError("rank 0 at " + address_text(options) + " closed the connection before rank " +
                          std::to_string(env.rank) + " could introduce itself");
  }
  std::vector<std::byte> received;
  for (;;) {
    const Frame frame = first_frame(received, kMaxAnswerBytes);
    if (frame.oversized || (frame.body && (frame.body->empty() || ((*frame.body)[0] != kPayloadAnswer &&
                                                                     (*frame.body)[0] != kErrorAnswer)))) {
      throw RendezvousError("rank 0 at " + address_text(options) + " sent an answer kbench does not know");
    }
    if (frame.body) {
      const auto content = frame.body->subspan(1);
      if ((*frame.body)[0] == kErrorAnswer) {
        throw RendezvousError(std::string(reinterpret_cast<const char*>(content.data()), content.size()));
      }
      return {content.begin(), content.end()};
    }
    if (!wait_for(socket.get(), POLLIN, answer_deadline)) throw RendezvousError(silence);
    if (read_available(socket.get(), received) == Transfer::closed && !first_frame(received, kMaxAnswerBytes).body) {
      throw RendezvousError("rank 0 at " + address_text(options) + " closed the connection without an answer");
    }
  }
}

// FNV-1a, 64 bits: a stable hash (std::hash may differ between builds of the ranks).
constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
std::uint64_t fnv1a(std::uint64_t hash, std::string_view bytes) {
  for (const char c : bytes) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return hash;
}

// An environment variable's number, nothing when it is unset, or an error naming it.
template <class Number>
std::optional<Number> number_variable(const Getenv& getenv, const char* name) {
  const auto text = getenv(name);
  if (!text) return std::nullopt;
  Number value{};
  const char* end = text->data() + text->size();
  const auto [stop, error] = std::from_chars(text->data(), end, value);
  if (text->empty() || error != std::errc() || stop != end) {
    throw std::runtime_error(std::string(name) + "='" + *text + "' is not a number");
  }
  return value;
}

}  // namespace

std::optional<double> dist_timeout(const Getenv& getenv) {
  const auto timeout = number_variable<double>(getenv, "KBENCH_DIST_TIMEOUT");
  if (timeout && !(*timeout > 0)) {
    throw std::runtime_error("KBENCH_DIST_TIMEOUT=" + *getenv("KBENCH_DIST_TIMEOUT") +
                             " is not a positive number of seconds");
  }
  return timeout;
}

RendezvousOptions rendezvous_options(const RankEnvironment& env, const Getenv& getenv) {
  RendezvousOptions options;
  options.host = getenv("KBENCH_MASTER_ADDR").value_or(getenv("MASTER_ADDR").value_or("127.0.0.1"));
  const char* port_variable = getenv("KBENCH_MASTER_PORT") ? "KBENCH_MASTER_PORT" : "MASTER_PORT";
  if (const auto port = number_variable<int>(getenv, port_variable)) {
    if (*port < 1 || *port > 65535) {
      throw std::runtime_error(std::string(port_variable) + "=" + std::to_string(*port) + " is not a TCP port");
    }
    options.port = *port;
  } else {
    // Every rank derives the same port from the same key; [20000, 60000) avoids the low well-known ports.
    options.port = 20000 + static_cast<int>(fnv1a(kFnvOffset, env.job_key) % 40000);
  }
  options.timeout_s = dist_timeout(getenv).value_or(options.timeout_s);
  return options;
}

std::vector<std::byte> rendezvous(const RankEnvironment& env, const RendezvousOptions& options,
                                  std::span<const std::byte> payload, std::string_view command_digest) {
  if (env.size == 1) return {payload.begin(), payload.end()};
  if (env.rank == 0) return RendezvousServer(env, options, command_digest).run(payload);
  return join_rendezvous(env, options, command_digest);
}

std::string command_digest(std::span<const std::string> tokens) {
  std::uint64_t hash = kFnvOffset;
  for (const auto& token : tokens) hash = fnv1a(hash, std::string_view(token.c_str(), token.size() + 1));
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace kbench::dist
