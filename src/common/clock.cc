#include "common/clock.h"

namespace adserver {

int64_t SystemClock::NowSeconds() const {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

int64_t SystemClock::NowMicros() const {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

const SystemClock& SystemClock::Get() {
  static const SystemClock clock;
  return clock;
}

}  // namespace adserver
