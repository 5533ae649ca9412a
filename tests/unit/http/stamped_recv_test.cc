#include "http/detail/stamped_recv.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

namespace adserver::http::detail {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// A connected pair of TCP sockets on loopback.
struct Pair {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  tcp::socket client{ioc};
  tcp::socket server{ioc};
  Pair() {
    client.connect(acceptor.local_endpoint());
    acceptor.accept(server);
  }
};

// One byte sent on a fresh pair with timestamps on: what its read reports.
StampedRecv ReadOneStampedByte() {
  Pair pair;
  EXPECT_TRUE(EnableReceiveTimestamps(pair.server.native_handle()));
  asio::write(pair.client, asio::buffer(std::string("x")));
  char buffer[8];
  StampedRecv read;
  for (int i = 0;
       i < 1000 && (read = RecvStamped(pair.server.native_handle(), buffer, 8)).bytes < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  EXPECT_EQ(read.bytes, 1);
  return read;
}

// Stamping kept on for the rest of the process (TimestampKeeper), and the kernel's deferred
// switch done: a fresh pair reads a stamped byte.
void KeepTimestampsOn() {
  static TimestampKeeper keeper;
  ASSERT_TRUE(keeper.ok());
  for (int i = 0; i < 200; ++i) {
    if (ReadOneStampedByte().waited_ns >= 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  FAIL() << "receive timestamps never came on";
}

// Without a keeper, a connection opened after the last stamped socket closed often read its
// first bytes unstamped (a quarter of 300 fresh pairs on Linux 6.18); with one, none does.
TEST(StampedRecvTest, AKeeperKeepsEveryNewConnectionStamped) {
  KeepTimestampsOn();
  for (int i = 0; i < 100; ++i) {
    StampedRecv read = ReadOneStampedByte();
    ASSERT_GE(read.waited_ns, 0) << "pair " << i;
  }
}

TEST(StampedRecvTest, ReportsHowLongTheBytesWaitedInTheKernel) {
  KeepTimestampsOn();
  Pair pair;
  ASSERT_TRUE(EnableReceiveTimestamps(pair.server.native_handle()));
  asio::write(pair.client, asio::buffer(std::string("GET / HTTP/1.1\r\n\r\n")));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  char buffer[64];
  StampedRecv read = RecvStamped(pair.server.native_handle(), buffer, sizeof buffer);
  ASSERT_EQ(read.bytes, 18);
  EXPECT_EQ(std::string(buffer, 18), "GET / HTTP/1.1\r\n\r\n");
  EXPECT_GE(read.waited_ns, 29'000'000);
  EXPECT_LT(read.waited_ns, 5'000'000'000);

  // Bytes read at once waited next to nothing.
  asio::write(pair.client, asio::buffer(std::string("x")));
  for (int i = 0;
       i < 1000 && (read = RecvStamped(pair.server.native_handle(), buffer, 64)).bytes < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ASSERT_EQ(read.bytes, 1);
  EXPECT_GE(read.waited_ns, 0);
  EXPECT_LT(read.waited_ns, 20'000'000);
}

TEST(StampedRecvTest, NothingToReadIsWouldBlockAndEndOfStreamIsZero) {
  Pair pair;
  ASSERT_TRUE(EnableReceiveTimestamps(pair.server.native_handle()));
  char buffer[16];
  StampedRecv read = RecvStamped(pair.server.native_handle(), buffer, sizeof buffer);
  EXPECT_EQ(read.bytes, -1);
  EXPECT_TRUE(read.error == EAGAIN || read.error == EWOULDBLOCK) << read.error;
  pair.client.close();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  read = RecvStamped(pair.server.native_handle(), buffer, sizeof buffer);
  EXPECT_EQ(read.bytes, 0);
}

TEST(StampedRecvTest, WithoutTimestampsTheWaitIsUnknown) {
  Pair pair;
  asio::write(pair.client, asio::buffer(std::string("abc")));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  char buffer[16];
  StampedRecv read = RecvStamped(pair.server.native_handle(), buffer, sizeof buffer);
  ASSERT_EQ(read.bytes, 3);
  EXPECT_EQ(read.waited_ns, -1);
}

}  // namespace
}  // namespace adserver::http::detail
