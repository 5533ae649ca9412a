#include "reports/csv.h"

#include <charconv>
#include <cstdlib>

namespace adserver::reports {

std::string CsvField(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

void AppendCsvRecord(std::span<const std::string> fields, std::string& out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += CsvField(fields[i]);
  }
  out += "\r\n";
}

std::string FormatMoney(Micros micros) {
  // Negative amounts (a reorg taking back more than a bucket held) keep their sign.
  std::string out = micros < 0 ? "-" : "";
  const uint64_t magnitude =
      micros < 0 ? uint64_t{0} - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  out += std::to_string(magnitude / 1'000'000);
  uint64_t fraction = magnitude % 1'000'000;
  if (fraction == 0) return out;
  std::string digits = std::to_string(fraction);
  digits.insert(0, 6 - digits.size(), '0');
  digits.erase(digits.find_last_not_of('0') + 1);
  return out + "." + digits;
}

std::string FormatDouble(double value) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "0";
  return std::string(buf, end);
}

}  // namespace adserver::reports
