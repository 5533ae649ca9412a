#pragma once

// Admission control of one event loop under overload (ServerOptions::shed_after). The loop
// probes its own lag every millisecond while busy (how late an expired timer runs: how long a
// request arriving now waits). Instead of switching between "answer all" and "shed all", which
// lets the queue swing between empty and a full `shed_after` of waiting, the controller keeps
// a fraction of requests it admits: cut multiplicatively while the lag is high, raised
// additively while it is low (AIMD, as TCP does with its window). The admitted requests are
// spread evenly (a credit counter, no randomness), so the loop spends what it has on as many
// answers as it can give in time and answers the rest at once with the route's overload
// answer. Single-threaded (one per loop), no allocation.

#include <chrono>
#include <cstdint>

namespace adserver::http::detail {

class Admission {
 public:
  // The whole: admit() == kAll admits every request.
  static constexpr uint32_t kAll = 1024;

  Admission() = default;
  explicit Admission(std::chrono::microseconds shed_after) : shed_after_(shed_after) {}

  // One probe's lag. At least shed_after: the queue is already too long, halve the fraction;
  // at least half of it: cut by an eighth; below a quarter of it: give back kAll/32 (all of it
  // back within 32 quiet probes); in between: hold.
  void OnLag(std::chrono::nanoseconds lag) {
    if (lag >= shed_after_) {
      admit_ /= 2;
    } else if (lag * 2 >= shed_after_) {
      admit_ -= admit_ / 8;
    } else if (lag * 4 < shed_after_) {
      admit_ = admit_ + kAll / 32 >= kAll ? kAll : admit_ + kAll / 32;
      if (admit_ == kAll) credit_ = 0;
    }
  }

  // Whether the next request gets its handler (true) or the overload answer (false).
  bool Admit() {
    if (admit_ == kAll) return true;
    credit_ += admit_;
    if (credit_ < kAll) return false;
    credit_ -= kAll;
    return true;
  }

  bool shedding() const { return admit_ < kAll; }
  uint32_t admit() const { return admit_; }

 private:
  std::chrono::nanoseconds shed_after_{0};
  uint32_t admit_ = kAll;
  uint32_t credit_ = 0;
};

}  // namespace adserver::http::detail
