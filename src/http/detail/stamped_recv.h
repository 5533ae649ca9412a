#pragma once

// Reading a TCP socket with the kernel's receive timestamp (SO_TIMESTAMPNS): how long the
// bytes read waited in the socket's receive queue before the application took them. This is
// the wait an event loop's own clocks cannot see (bytes queue in the kernel while the loop
// serves other connections), and the one that decides a request's latency under overload.
//
// For TCP the timestamp is that of the last segment the read consumed: the newest bytes read,
// so `waited` is a lower bound for everything the read returned.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace adserver::http::detail {

// Turns on SO_TIMESTAMPNS for `fd`. False (errno set) if the socket refuses.
bool EnableReceiveTimestamps(int fd);

// Keeps the kernel's receive timestamping on while it lives (a socket of its own with
// SO_TIMESTAMPNS). Linux stamps received segments only while some socket asks for it: the first
// socket to ask turns stamping on, and closing the last one turns it off, each time through a
// deferred switch of a kernel-wide static key. A connection accepted after every stamped one
// closed therefore received its first segments unstamped, and each switch patches kernel
// text. A server that sheds holds one for its lifetime. Best effort: ok() is false if the socket
// could not be had.
class TimestampKeeper {
 public:
  TimestampKeeper();
  ~TimestampKeeper();
  TimestampKeeper(const TimestampKeeper&) = delete;
  TimestampKeeper& operator=(const TimestampKeeper&) = delete;
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

struct StampedRecv {
  // recvmsg's result: bytes read, 0 at end of stream, -1 with `error` (errno) set.
  ssize_t bytes = 0;
  int error = 0;
  // Nanoseconds between the kernel's receipt of the last bytes read and now (CLOCK_REALTIME
  // both); -1 when the read carried no timestamp or the clock stepped back meanwhile.
  int64_t waited_ns = -1;
};

// One non-blocking recvmsg into [data, data + size) (EINTR retried).
StampedRecv RecvStamped(int fd, void* data, size_t size);

}  // namespace adserver::http::detail
