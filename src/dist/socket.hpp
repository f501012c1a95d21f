// The few TCP pieces the rendezvous and the launcher share: an owned file descriptor, a listening
// socket, and a port free right now.
#pragma once

#include <utility>

namespace kbench::dist {

// Closes its descriptor however its owner's scope ends.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) noexcept : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// A non-blocking TCP socket listening on every interface at `port` (0: one the kernel picks), with
// SO_REUSEADDR so a port a finished run left in TIME_WAIT can be taken again at once. Throws
// std::runtime_error naming the port.
[[nodiscard]] FileDescriptor listen_tcp(int port, int backlog);

// The port a bound socket has.
[[nodiscard]] int bound_port(const FileDescriptor& socket);

// A TCP port no socket listens on now (bound, read, released): another process may take it
// before its user does, a race as rare as it is harmless (the run fails with a clear error).
[[nodiscard]] int free_tcp_port();

}  // namespace kbench::dist
