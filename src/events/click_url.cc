#include "events/click_url.h"

#include <vector>

namespace adserver::events {
namespace {

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

// Absolute http(s) with a non-empty authority, nothing a header line cannot carry.
bool IsHttpUrl(std::string_view url) {
  size_t rest = 0;
  if (StartsWithIgnoreCase(url, "https://")) {
    rest = 8;
  } else if (StartsWithIgnoreCase(url, "http://")) {
    rest = 7;
  } else {
    return false;
  }
  if (rest >= url.size() || url[rest] == '/' || url[rest] == '?' || url[rest] == '#') return false;
  for (char c : url) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> AddSpclid(std::string_view cta_url, const DecisionId& decision) {
  if (!IsHttpUrl(cta_url)) return std::nullopt;
  size_t hash = cta_url.find('#');
  std::string_view fragment = hash == std::string_view::npos ? "" : cta_url.substr(hash);
  std::string_view before = cta_url.substr(0, hash);
  size_t question = before.find('?');
  std::string_view base = before.substr(0, question);
  std::string out(base);
  out.reserve(cta_url.size() + 48);
  out += '?';
  if (question != std::string_view::npos) {
    std::string_view query = before.substr(question + 1);
    // Keep every parameter but an earlier spclid, in order.
    while (!query.empty()) {
      size_t amp = query.find('&');
      std::string_view param = query.substr(0, amp);
      query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
      if (param.empty() || param == "spclid" || param.starts_with("spclid=")) continue;
      out += param;
      out += '&';
    }
  }
  out += "spclid=";
  decision.AppendTo(out);
  out += fragment;
  return out;
}

}  // namespace adserver::events
