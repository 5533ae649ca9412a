#include "reports/statistics.h"

#include <algorithm>
#include <cmath>

namespace adserver::reports {

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

Interval WilsonInterval(int64_t successes, int64_t trials, double z) {
  if (trials <= 0) return {};
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(successes) / n;
  const double z2 = z * z;
  const double center = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

std::optional<ZTest> TwoProportionZTest(int64_t x1, int64_t n1, int64_t x2, int64_t n2) {
  if (n1 <= 0 || n2 <= 0) return std::nullopt;
  const double a = static_cast<double>(n1);
  const double b = static_cast<double>(n2);
  const double pooled = static_cast<double>(x1 + x2) / (a + b);
  const double variance = pooled * (1 - pooled) * (1 / a + 1 / b);
  if (!(variance > 0)) return std::nullopt;
  ZTest t;
  t.z = (static_cast<double>(x2) / b - static_cast<double>(x1) / a) / std::sqrt(variance);
  // 2 * (1 - Φ(|z|)) through erfc, exact far into the tail.
  t.p = std::erfc(std::fabs(t.z) / std::sqrt(2.0));
  return t;
}

Better Judge(const std::optional<ZTest>& test, double alpha) {
  if (!test || !(test->p < alpha)) return Better::kNone;
  return test->z > 0 ? Better::kVariant : Better::kBaseline;
}

}  // namespace adserver::reports
