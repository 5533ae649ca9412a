#pragma once

// CSV text (RFC 4180) for reports: CRLF line ends, a field quoted when it holds a comma, a
// double quote, CR or LF (double quotes doubled), and the number forms report cells use.
// Pure; thread-compatible.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/types.h"

namespace adserver::reports {

// `field` as one CSV field: as is, or in double quotes with inner quotes doubled.
std::string CsvField(std::string_view field);

// Appends one record (fields separated by commas, ended by CRLF) to `out`.
void AppendCsvRecord(std::span<const std::string> fields, std::string& out);

// Micros as a decimal number of currency units without trailing zeros: 12500000 -> "12.5",
// -1 -> "-0.000001".
std::string FormatMoney(Micros micros);

// The shortest decimal text that reads back as `value` ("0.05", "1e-07").
std::string FormatDouble(double value);

}  // namespace adserver::reports
