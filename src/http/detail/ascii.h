#pragma once

// ASCII helpers for header names and tokens (case-insensitive by RFC 9110). Allocation-free.

#include <cstddef>
#include <string_view>

namespace adserver::http::detail {

// True when `a` and `b` are equal ignoring the case of ASCII letters.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace adserver::http::detail
