#include "common/published.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace adserver
