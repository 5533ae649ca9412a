#pragma once

// Tests wait on conditions, not on guesses of how long something takes (issue 41 item 6): a
// test that needs another thread, process or server to reach a state polls for that state up
// to a generous deadline, so it passes as soon as the state is reached and fails (instead of
// flaking) only when it never is.

#include <chrono>
#include <functional>
#include <thread>

namespace adserver::testing {

// Polls `condition` every `poll` until it holds or `deadline` has passed; returns whether it
// held (it is checked once more at the deadline).
inline bool WaitUntil(const std::function<bool()>& condition,
                      std::chrono::milliseconds deadline = std::chrono::seconds(10),
                      std::chrono::milliseconds poll = std::chrono::milliseconds(1)) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(poll);
  }
  return condition();
}

}  // namespace adserver::testing
