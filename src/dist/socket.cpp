#include "dist/socket.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kbench::dist {

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

FileDescriptor listen_tcp(int port, int backlog) {
  const auto fail = [port](const char* call) {
    throw std::runtime_error(std::string("cannot listen on TCP port ") + std::to_string(port) + ": " + call + ": " +
                             std::strerror(errno));
  };
  FileDescriptor socket(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket.valid()) fail("socket");
  const int on = 1;
  if (::setsockopt(socket.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0) fail("setsockopt(SO_REUSEADDR)");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) fail("bind");
  if (::listen(socket.get(), backlog) != 0) fail("listen");
  return socket;
}

int bound_port(const FileDescriptor& socket) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (::getsockname(socket.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error(std::string("getsockname: ") + std::strerror(errno));
  }
  return ntohs(address.sin_port);
}

int free_tcp_port() { return bound_port(listen_tcp(0, 1)); }

}  // namespace kbench::dist
