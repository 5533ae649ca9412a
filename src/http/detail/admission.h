#pragma once

// Admission control of one event loop under overload (ServerOptions::shed_after), a PIE
// controller (RFC 8033, "Proportional Integral controller Enhanced") on the time requests wait
// before their turn. Each read reports how long its bytes waited in the kernel (the kernel's
// receive timestamp, detail/stamped_recv.h). Every millisecond the longest of those waits, d,
// moves the shed fraction p:
//     p += kAlpha * (d - target) / target + kBeta * (d - d_previous) / target
// (clamped to [0, kMaxShed]): up while requests wait longer than the target or the wait grows,
// down while they wait less. Requests are then shed in that fraction, evenly (a credit
// counter, not a coin), so that the loop admits what it can serve with a wait near the target
// and answers the rest at a fraction of their cost, at once. Which requests are shed does not
// depend on their own wait: one that already waited long is better served (its answer is late
// either way, and an ad beats a 503) than shed; tried both ways at 2x the sustainable rate,
// with no difference in latency (bench/overload.sh, 2026-11-26). While the last wait was under half
// the target and p under kQuietShare, nothing is shed (RFC 8033's safeguard against shedding for a
// burst the loop absorbs).
//
// Why not shed by each request's own wait alone (CoDel's rule, tried 2026-11-26): under
// overload the loop then swings between admitting everything and shedding everything, the
// queue with it; at 2x the sustainable rate, shed answers took 21-37 ms (p99) and the client
// dropped requests (bench/overload.sh). Why not on/off by the loop's lag (before): the same
// swing, 8-13 ms.
// Single-threaded (one per loop), no allocation.

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace adserver::http::detail {

class Admission {
 public:
  static constexpr double kAlpha = 0.0125;  // per ms, per target of excess wait
  static constexpr double kBeta = 0.125;    // per target of wait growth since the last update
  static constexpr double kMaxShed = 0.95;
  static constexpr double kQuietShare = 0.2;
  static constexpr int64_t kUpdateNs = 1'000'000;

  Admission() = default;
  explicit Admission(std::chrono::nanoseconds target) : target_ns_(target.count()) {}

  // A read at `now_ns` (steady clock) whose bytes waited `waited_ns`.
  void OnRead(int64_t now_ns, int64_t waited_ns) {
    longest_ns_ = std::max(longest_ns_, waited_ns);
    if (now_ns - updated_ns_ < kUpdateNs) return;
    const bool first = updated_ns_ == 0;
    const int64_t intervals = first ? 1 : (now_ns - updated_ns_) / kUpdateNs;
    updated_ns_ = now_ns;
    const double target = static_cast<double>(target_ns_);
    const double d = static_cast<double>(longest_ns_);
    if (first) previous_ns_ = d;  // no growth to speak of yet
    // An idle stretch (no read for several intervals) counts first, as that many quiet updates.
    if (intervals > 1) p_ = std::max(0.0, p_ - kAlpha * static_cast<double>(intervals - 1));
    p_ += kAlpha * (d - target) / target + kBeta * (d - previous_ns_) / target;
    p_ = std::clamp(p_, 0.0, kMaxShed);
    previous_ns_ = d;
    longest_ns_ = 0;
  }

  // Whether the next request gets its handler (true) or the overload answer.
  bool Admit() {
    // RFC 8033's safeguard: a small share with waits well under the target sheds nothing.
    if (p_ <= 0.0 || (p_ < kQuietShare && previous_ns_ * 2 < static_cast<double>(target_ns_))) {
      return true;
    }
    credit_ += 1.0 - p_;
    if (credit_ >= 1.0) {
      credit_ -= 1.0;
      return true;
    }
    return false;
  }

  double shed_fraction() const { return p_; }

 private:
  int64_t target_ns_ = 0;
  int64_t updated_ns_ = 0;  // last update (steady ns); 0 = none yet
  int64_t longest_ns_ = 0;  // the longest wait read since then
  double previous_ns_ = 0;  // d at the last update
  double p_ = 0;            // the fraction of requests shed
  double credit_ = 0;       // admissions owed: += 1 - p per request, an admission spends 1
};

}  // namespace adserver::http::detail
