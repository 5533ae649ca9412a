#include "http/detail/loop_bound.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <future>
#include <memory>
#include <thread>

namespace adserver::http::detail {
namespace {

using Executor = boost::asio::io_context::executor_type;

// Says on which thread it ended.
struct Probe {
  explicit Probe(std::promise<std::thread::id>* ended) : ended(ended) {}
  ~Probe() { ended->set_value(std::this_thread::get_id()); }
  std::promise<std::thread::id>* ended;
};

// An event loop on a thread of its own for the test.
class Loop {
 public:
  Loop() : work_(boost::asio::make_work_guard(ioc_)), thread_([this] { ioc_.run(); }) {}
  ~Loop() {
    work_.reset();
    thread_.join();
  }
  Executor executor() { return ioc_.get_executor(); }
  std::thread::id id() const { return thread_.get_id(); }

 private:
  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<Executor> work_;
  std::thread thread_;
};

// The bug this guards against: a deferred responder copied into a writer's callback kept a
// session alive, and dropping that copy on the writer's thread ended the session there, editing
// its loop's session set concurrently with the loop (a crash in cluster_kill_loop_test).
TEST(LoopBoundTest, TheLastCopyDroppedOffTheLoopEndsTheObjectOnTheLoop) {
  Loop loop;
  std::promise<std::thread::id> ended;
  std::future<std::thread::id> ended_on = ended.get_future();
  {
    LoopBound<Probe, Executor> hold(std::make_shared<Probe>(&ended), loop.executor());
    LoopBound<Probe, Executor> copy = hold;
    // Both copies end here, on the test's thread.
  }
  EXPECT_EQ(ended_on.get(), loop.id());
}

TEST(LoopBoundTest, DroppedOnTheLoopItEndsAtOnce) {
  Loop loop;
  std::promise<std::thread::id> ended;
  std::future<std::thread::id> ended_on = ended.get_future();
  std::promise<bool> ended_before_the_post_returned;
  boost::asio::post(loop.executor(), [&] {
    { LoopBound<Probe, Executor> hold(std::make_shared<Probe>(&ended), loop.executor()); }
    ended_before_the_post_returned.set_value(ended_on.wait_for(std::chrono::seconds(0)) ==
                                             std::future_status::ready);
  });
  EXPECT_TRUE(ended_before_the_post_returned.get_future().get());
  EXPECT_EQ(ended_on.get(), loop.id());
}

// Take hands the reference over: the holder then releases nothing, and a second Take is null
// (a responder invoked twice answers once).
TEST(LoopBoundTest, TakeLeavesTheHolderEmpty) {
  Loop loop;
  std::promise<std::thread::id> ended;
  std::future<std::thread::id> ended_on = ended.get_future();
  std::shared_ptr<Probe> taken;
  {
    LoopBound<Probe, Executor> hold(std::make_shared<Probe>(&ended), loop.executor());
    taken = hold.Take();
    EXPECT_EQ(hold.Take(), nullptr);
  }
  EXPECT_EQ(ended_on.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  taken.reset();  // the taker's reference, released where the taker drops it
  EXPECT_EQ(ended_on.get(), std::this_thread::get_id());
}

}  // namespace
}  // namespace adserver::http::detail
