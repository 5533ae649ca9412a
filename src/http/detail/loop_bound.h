#pragma once

// A shared object that must end on its event loop's thread (a Session edits its loop's own sets
// when it ends). Copies of a holder may be dropped on any thread (a deferred handler's callbacks
// run on a writer's thread, and may keep more than one copy of a responder): a copy dropped off
// the loop hands its reference to the loop, so the last one is always released there. Dropped
// on the loop, a copy releases at once.

#include <boost/asio/post.hpp>
#include <memory>
#include <utility>

namespace adserver::http::detail {

template <typename T, typename Executor>
class LoopBound {
 public:
  LoopBound(std::shared_ptr<T> object, Executor executor)
      : object_(std::move(object)), executor_(std::move(executor)) {}
  LoopBound(const LoopBound&) = default;
  LoopBound(LoopBound&&) noexcept = default;
  LoopBound& operator=(const LoopBound&) = delete;
  LoopBound& operator=(LoopBound&&) = delete;
  ~LoopBound() {
    if (object_ != nullptr && !executor_.running_in_this_thread()) {
      boost::asio::post(executor_, [object = std::move(object_)] {});
    }
  }

  // The reference, leaving this holder empty (null if it was taken already).
  std::shared_ptr<T> Take() { return std::move(object_); }
  const Executor& executor() const { return executor_; }

 private:
  std::shared_ptr<T> object_;
  Executor executor_;
};

}  // namespace adserver::http::detail
