#pragma once

// Writes the Prometheus text exposition format (version 0.0.4): one `# HELP` and `# TYPE` per
// family, then its samples, label values escaped. The /metrics handlers of http and app use it.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace adserver {

class MetricsText {
 public:
  using Labels = std::initializer_list<std::pair<std::string_view, std::string_view>>;

  explicit MetricsText(std::string& out) : out_(out) {}
  // Starts a family: `type` is counter, gauge or histogram.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  void Sample(std::string_view name, Labels labels, double value);
  void Sample(std::string_view name, Labels labels, uint64_t value);
  void Sample(std::string_view name, Labels labels, int64_t value);
  // A histogram's samples: `<name>_bucket{...,le}` cumulative from per-bucket counts, `_sum`
  // and `_count`. `bounds` and `counts` have the same size; counts[size] is the +Inf bucket
  // (so `counts` has bounds.size() + 1 entries).
  void Histogram(std::string_view name, Labels labels, const double* bounds, size_t bucket_count,
                 const uint64_t* counts, double sum);

 private:
  void Begin(std::string_view name, Labels labels, std::string_view extra_label = {},
             std::string_view extra_value = {});
  std::string& out_;
};

// `value` escaped for a label value (backslash, double quote, new line).
std::string EscapeLabelValue(std::string_view value);

}  // namespace adserver
