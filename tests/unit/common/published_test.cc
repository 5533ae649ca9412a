#include "common/published.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace adserver {
namespace {

TEST(PublishedTest, ReadersSeeTheLatestVersion) {
  Published<int> p;
  EXPECT_EQ(p.Current(), nullptr);
  p.Publish(std::make_shared<const int>(1));
  EXPECT_EQ(*p.Current(), 1);
  p.Publish(std::make_shared<const int>(2));
  EXPECT_EQ(*p.Current(), 2);
  EXPECT_EQ(p.version(), 2u);
}

TEST(PublishedTest, OldVersionLivesWhileHeld) {
  Published<int> p;
  p.Publish(std::make_shared<const int>(1));
  auto held = p.Current();
  p.Publish(std::make_shared<const int>(2));
  EXPECT_EQ(*held, 1);
}

// A thread that read a version once and went idle must not keep it alive after a newer one is
// published (the wallet table's in-memory copy is hundreds of MB).
TEST(PublishedTest, IdleReaderThreadDoesNotKeepAnOldVersion) {
  Published<int> p;
  auto first = std::make_shared<const int>(1);
  std::weak_ptr<const int> watch = first;
  p.Publish(std::move(first));
  std::thread reader([&] { EXPECT_EQ(*p.Current(), 1); });  // caches version 1, then idles
  reader.join();
  std::thread idle;
  std::mutex mu;
  std::condition_variable cv;
  bool read = false, done = false;
  idle = std::thread([&] {
    EXPECT_EQ(*p.Current(), 1);
    std::unique_lock<std::mutex> lock(mu);
    read = true;
    cv.notify_all();
    cv.wait(lock, [&] { return done; });  // alive, never reading again
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return read; });
  }
  p.Publish(std::make_shared<const int>(2));
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(*p.Current(), 2);
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  cv.notify_all();
  idle.join();
}

TEST(PublishedTest, TwoInstancesOnOneThreadDoNotMix) {
  Published<int> a, b;
  a.Publish(std::make_shared<const int>(1));
  b.Publish(std::make_shared<const int>(2));
  EXPECT_EQ(*a.Current(), 1);
  EXPECT_EQ(*b.Current(), 2);
  EXPECT_EQ(*a.Current(), 1);
}

TEST(PublishedTest, ConcurrentReadersAndWriterAgree) {
  Published<int> p;
  p.Publish(std::make_shared<const int>(0));
  std::vector<std::thread> readers;
  std::atomic<bool> stop{false};
  std::atomic<int> regressions{0};
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      int last = 0;
      while (!stop) {
        int v = *p.Current();
        if (v < last) ++regressions;
        last = v;
      }
    });
  }
  for (int i = 1; i <= 2000; ++i) p.Publish(std::make_shared<const int>(i));
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(regressions.load(), 0);
  EXPECT_EQ(*p.Current(), 2000);
}

// Records the thread that destroys it.
struct Freed {
  explicit Freed(std::atomic<std::thread::id>* b) : by(b) {}
  Freed(const Freed&) = delete;
  Freed& operator=(const Freed&) = delete;
  ~Freed() { by->store(std::this_thread::get_id()); }
  std::atomic<std::thread::id>* by;
};

// A replaced version is freed by the publisher once the reader holding it lets go, not by the
// reader; a reader holding it past the patience frees it itself.
TEST(PublishedTest, ReleaseWhenUnusedFreesTheReplacedVersionOnThePublisher) {
  std::atomic<std::thread::id> freed_by{};
  Published<Freed> p;
  p.Publish(std::make_shared<const Freed>(&freed_by));
  std::shared_ptr<const Freed> held = p.Current();
  std::thread reader([held = std::move(held)]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    held.reset();  // not the last reference: the publisher still holds it
  });
  std::shared_ptr<const Freed> old = p.Exchange(std::make_shared<const Freed>(&freed_by));
  ASSERT_NE(old, nullptr);
  ReleaseWhenUnused(std::move(old), std::chrono::seconds(30));
  EXPECT_EQ(freed_by.load(), std::this_thread::get_id());
  reader.join();

  // Patience runs out: the holder frees it.
  freed_by = std::thread::id{};
  std::shared_ptr<const Freed> kept = p.Current();
  old = p.Exchange(std::make_shared<const Freed>(&freed_by));
  ReleaseWhenUnused(std::move(old), std::chrono::milliseconds(1));
  EXPECT_EQ(freed_by.load(), std::thread::id{});  // still alive
  std::thread holder([kept = std::move(kept)]() mutable { kept.reset(); });
  const std::thread::id holder_id = holder.get_id();
  holder.join();
  EXPECT_EQ(freed_by.load(), holder_id);
}

}  // namespace
}  // namespace adserver
