#pragma once

// Statistics of A/B comparisons (issue 16): Wilson score intervals for a proportion and the
// pooled two-proportion z-test. Pure; thread-compatible.

#include <cstdint>
#include <optional>

namespace adserver::reports {

// The two-sided 95 % critical value of the standard normal distribution.
inline constexpr double kZ95 = 1.959963984540054;

// Standard normal cumulative distribution function, Φ(x) = erfc(-x / √2) / 2.
double NormalCdf(double x);

struct Interval {
  double low = 0;
  double high = 0;
};

// The Wilson score interval of `successes` out of `trials` at critical value `z` (95 % by
// default). Requires 0 <= successes <= trials; {0, 0} when trials is 0.
Interval WilsonInterval(int64_t successes, int64_t trials, double z = kZ95);

struct ZTest {
  double z = 0;  // > 0: the variant's proportion is higher than the baseline's
  double p = 1;  // two-sided
};

// Pooled two-proportion z-test of the variant (x2 of n2) against the baseline (x1 of n1).
// nullopt when a sample is empty or the pooled proportion is 0 or 1 (no variance: no test).
std::optional<ZTest> TwoProportionZTest(int64_t x1, int64_t n1, int64_t x2, int64_t n2);

enum class Better : uint8_t { kNone, kVariant, kBaseline };

// Which side is better at significance `alpha`: kNone unless test.p < alpha; else the side
// with the higher proportion (higher CTR and CVR are better).
Better Judge(const std::optional<ZTest>& test, double alpha = 0.05);

}  // namespace adserver::reports
