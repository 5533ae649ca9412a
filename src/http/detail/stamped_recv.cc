#include "http/detail/stamped_recv.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace adserver::http::detail {

bool EnableReceiveTimestamps(int fd) {
  const int on = 1;
  return ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) == 0;
}

TimestampKeeper::TimestampKeeper() {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ >= 0 && !EnableReceiveTimestamps(fd_)) {
    ::close(fd_);
    fd_ = -1;
  }
}

TimestampKeeper::~TimestampKeeper() {
  if (fd_ >= 0) ::close(fd_);
}

StampedRecv RecvStamped(int fd, void* data, size_t size) {
  StampedRecv result;
  iovec iov{data, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec)) * 2];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  for (;;) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    result.bytes = ::recvmsg(fd, &msg, MSG_DONTWAIT);
    if (result.bytes >= 0 || errno != EINTR) break;
  }
  if (result.bytes < 0) {
    result.error = errno;
    return result;
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
    timespec stamp{};
    std::memcpy(&stamp, CMSG_DATA(c), sizeof stamp);
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    const int64_t waited = (static_cast<int64_t>(now.tv_sec) - stamp.tv_sec) * 1'000'000'000 +
                           (now.tv_nsec - stamp.tv_nsec);
    if (waited >= 0) result.waited_ns = waited;
    break;
  }
  return result;
}

}  // namespace adserver::http::detail
