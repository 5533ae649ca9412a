#include "common/metrics_text.h"

#include <charconv>
#include <cmath>

#include "common/thread_counters.h"

namespace adserver {

namespace detail {
size_t CountingThreadIndex() {
  static std::atomic<size_t> next{0};
  thread_local const size_t index = next.fetch_add(1, std::memory_order_relaxed);
  return index;
}
}  // namespace detail

namespace {
void AppendDouble(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
    out.append(buffer, end);
  }
}
}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void MetricsText::Family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += help;
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void MetricsText::Begin(std::string_view name, Labels labels, std::string_view extra_label,
                        std::string_view extra_value) {
  out_ += name;
  if (labels.size() == 0 && extra_label.empty()) {
    out_ += ' ';
    return;
  }
  out_ += '{';
  bool first = true;
  for (const auto& [key, value] : labels) {
    if (!first) out_ += ',';
    first = false;
    out_ += key;
    out_ += "=\"";
    out_ += EscapeLabelValue(value);
    out_ += '"';
  }
  if (!extra_label.empty()) {
    if (!first) out_ += ',';
    out_ += extra_label;
    out_ += "=\"";
    out_ += extra_value;
    out_ += '"';
  }
  out_ += "} ";
}

void MetricsText::Sample(std::string_view name, Labels labels, double value) {
  Begin(name, labels);
  AppendDouble(out_, value);
  out_ += '\n';
}

void MetricsText::Sample(std::string_view name, Labels labels, uint64_t value) {
  Begin(name, labels);
  out_ += std::to_string(value);
  out_ += '\n';
}

void MetricsText::Sample(std::string_view name, Labels labels, int64_t value) {
  Begin(name, labels);
  out_ += std::to_string(value);
  out_ += '\n';
}

void MetricsText::Histogram(std::string_view name, Labels labels, const double* bounds,
                            size_t bucket_count, const uint64_t* counts, double sum) {
  std::string bucket_name = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bucket_count; ++i) {
    cumulative += counts[i];
    std::string le;
    if (i == bucket_count) {
      le = "+Inf";
    } else {
      AppendDouble(le, bounds[i]);
    }
    Begin(bucket_name, labels, "le", le);
    out_ += std::to_string(cumulative);
    out_ += '\n';
  }
  Begin(std::string(name) + "_sum", labels);
  AppendDouble(out_, sum);
  out_ += '\n';
  Begin(std::string(name) + "_count", labels);
  out_ += std::to_string(cumulative);
  out_ += '\n';
}

}  // namespace adserver
