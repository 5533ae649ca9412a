#pragma once

// Admission control of one event loop under overload (ServerOptions::shed_after). The loop
// probes its own lag every millisecond while busy (how late an expired timer runs: how long a
// request arriving now waits). Two probes in a row at least `shed_after` late (one alone may
// be the thread losing its CPU for a moment) start shedding: requests on routes with an
// overload answer get it instead of their handler; a probe under half of `shed_after` stops
// it. With pipelined answers written together (Session::batch_), a shed answer costs the loop
// little, so the queue drains within a probe or two and serving resumes.
//
// Tried and dropped (2026-11-26): admitting a fraction of requests that follows the lag
// (AIMD, as TCP's window). Arrivals come in bursts (a client's own lag, many connections ready
// at once), each burst makes a late probe, and the cuts shed far more than the loop could not
// serve: at 2x the sustainable rate it answered 15 k ads/s instead of ~50 k (bench/overload.sh).
// Single-threaded (one per loop), no allocation.

#include <chrono>

namespace adserver::http::detail {

class Admission {
 public:
  Admission() = default;
  explicit Admission(std::chrono::microseconds shed_after) : shed_after_(shed_after) {}

  // One probe's lag.
  void OnLag(std::chrono::nanoseconds lag) {
    if (lag >= shed_after_) {
      shedding_ = ++late_probes_ >= 2;
    } else if (lag * 2 < shed_after_) {
      late_probes_ = 0;
      shedding_ = false;
    }
  }

  // Whether the next request gets its handler (true) or the overload answer (false).
  bool Admit() const { return !shedding_; }
  bool shedding() const { return shedding_; }

 private:
  std::chrono::nanoseconds shed_after_{0};
  int late_probes_ = 0;  // probes in a row that found the loop lagging
  bool shedding_ = false;
};

}  // namespace adserver::http::detail
