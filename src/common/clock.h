#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace adserver {

// Source of wall-clock time. Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch.
  virtual int64_t NowSeconds() const = 0;
  // Microseconds since the Unix epoch.
  virtual int64_t NowMicros() const = 0;
  // Microseconds on a clock that never steps, for intervals (since an unspecified start):
  // std::chrono::steady_clock unless a clock says otherwise (a fake clock: its own time).
  virtual int64_t SteadyMicros() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// The real clock.
class SystemClock final : public Clock {
 public:
  int64_t NowSeconds() const override;
  int64_t NowMicros() const override;
  // Process-wide instance.
  static const SystemClock& Get();
};

// A clock tests drive by hand. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now_micros = 1'767'225'600'000'000) : now_(now_micros) {}
  int64_t NowSeconds() const override { return now_.load() / 1'000'000; }
  int64_t NowMicros() const override { return now_.load(); }
  // Intervals move with Advance and SetMicros too.
  int64_t SteadyMicros() const override { return now_.load(); }
  void Advance(std::chrono::microseconds d) { now_ += d.count(); }
  void SetMicros(int64_t micros) { now_ = micros; }

 private:
  std::atomic<int64_t> now_;
};

// Days since the Unix epoch for a time in seconds (floor).
inline int64_t DayOf(int64_t unix_seconds) {
  return unix_seconds >= 0 ? unix_seconds / 86400 : (unix_seconds - 86399) / 86400;
}

}  // namespace adserver
