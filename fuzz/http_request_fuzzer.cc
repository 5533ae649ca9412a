// The HTTP request path: the real http::Server (Beast's parser with our callbacks, header and
// body limits, chunked bodies, Expect: 100-continue, pipelining, the router and its path
// parameters, inline, worker and deferred dispatch, response framing), started once on a
// loopback port. Each input is sent as the bytes of one connection, which is then half-closed;
// the server must answer with HTTP responses (or nothing) and close the connection.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/log.h"
#include "fuzz_support.h"
#include "http/router.h"
#include "http/server.h"

namespace adserver::fuzz {
namespace {

// A connection that gets neither an answer nor a close within this long is a hang (the server
// under test times out idle connections after 2 s).
constexpr int kReplySeconds = 20;

// Writes back what the server parsed, so that every view of the request is read.
http::Response Echo(const http::Request& request) {
  http::Response response;
  std::string& out = response.body;
  out.append(http::MethodName(request.method)).append(" ").append(request.path);
  out.append("?").append(request.query).append("\n");
  for (const auto& [name, value] : request.params) out.append(name).append("=").append(value);
  for (const http::Header& h : request.headers) {
    out.append(h.name).append(": ").append(h.value).append("\n");
  }
  out.append(std::to_string(request.body.size()));
  response.SetHeader("Content-Type", "text/plain");
  // A request header goes back into a response header: the parser must not let CR or LF in.
  if (request.HasHeader("X-Echo")) response.SetHeader("X-Echo", request.Header("X-Echo"));
  return response;
}

http::Router& Routes() {
  static http::Router router = [] {
    http::Router r;
    r.Add(http::Method::kGet, "/v1/ads", Echo);
    r.Add(http::Method::kPost, "/v1/ads", Echo, {.max_body_bytes = 1024});
    r.Add(http::Method::kOptions, "/v1/ads", Echo);
    r.Add(http::Method::kPost, "/admin/v1/items/{id}", Echo,
          {.dispatch = http::Dispatch::kWorker, .max_body_bytes = 64 * 1024});
    r.Add(http::Method::kPatch, "/admin/v1/items/{id}/keys/{keyId}", Echo,
          {.dispatch = http::Dispatch::kWorker});
    r.Add(http::Method::kGet, "/static/*", Echo);
    r.Add(http::Method::kGet, "/throw", [](const http::Request&) -> http::Response {
      throw std::runtime_error("handler failure");
    });
    r.AddDeferred(
        http::Method::kGet, "/v1/click/{token}",
        [](const http::Request& request, http::Responder respond) { respond(Echo(request)); });
    return r;
  }();
  return router;
}

uint16_t& Port() {
  static uint16_t port = 0;
  return port;
}

void SendAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    // libFuzzer's timeout timer (SIGALRM) interrupts blocking calls.
    if (n < 0 && errno == EINTR) continue;
    // The server may close early (a rejected request); the rest cannot be sent.
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// Reads until the server closes. False when it neither closes nor answers in time.
bool ReadAll(int fd, std::string& out) {
  char buffer[4096];
  for (;;) {
    ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;  // libFuzzer's SIGALRM, not the receive timeout
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
    out.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace
}  // namespace adserver::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace adserver;
  log::SetLevel("off");  // the /throw route logs an error per request
  http::ServerOptions options{.listen = "127.0.0.1:0",
                              .io_threads = 1,
                              .worker_threads = 2,
                              .header_timeout = std::chrono::milliseconds(2000),
                              .body_timeout = std::chrono::milliseconds(2000),
                              .idle_timeout = std::chrono::milliseconds(2000),
                              .max_requests_per_connection = 8,
                              .max_header_bytes = 2048};
  // Runs until the process exits.
  static std::unique_ptr<http::Server> server =
      std::move(http::Server::Create(options, fuzz::Routes())).value();
  if (!server->Start().ok()) std::abort();
  fuzz::Port() = server->port();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace adserver::fuzz;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  Expect(fd >= 0, "socket");
  timeval timeout{.tv_sec = kReplySeconds, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(Port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  // Interrupted, the connection still completes in the background; wait for it by polling.
  if (connected != 0 && errno == EINTR) {
    pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
    while (poll(&p, 1, kReplySeconds * 1000) < 0 && errno == EINTR) {
    }
    socklen_t size = sizeof connected;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &connected, &size);
  }
  Expect(connected == 0, "connect");
  SendAll(fd, std::string_view(reinterpret_cast<const char*>(data), size));
  shutdown(fd, SHUT_WR);
  std::string reply;
  bool closed = ReadAll(fd, reply);
  // Reset instead of a TIME_WAIT per execution, which would exhaust the loopback ports.
  linger reset{.l_onoff = 1, .l_linger = 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  close(fd);
  Expect(closed, "the server answers and closes a half-closed connection in time");
  Expect(reply.empty() || reply.starts_with("HTTP/1."), "the reply is HTTP");
  return 0;
}
