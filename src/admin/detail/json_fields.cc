#include "admin/detail/json_fields.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

#include "ingest/activity_import.h"

namespace adserver::admin::detail {
namespace {

// "123", "123.5", "0.000001": digits, optionally '.' and 1-6 digits.
std::optional<Micros> ParseDecimalMoney(std::string_view text, std::string* error) {
  if (!text.empty() && text[0] == '-') {
    *error = "must not be negative";
    return std::nullopt;
  }
  size_t dot = text.find('.');
  std::string_view whole = text.substr(0, dot);
  std::string_view fraction = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  auto all_digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || !all_digits(whole) || !all_digits(fraction) ||
      (dot != std::string_view::npos && fraction.empty())) {
    *error = "must be a decimal amount in currency units, e.g. 12.5";
    return std::nullopt;
  }
  if (fraction.size() > 6) {
    *error = "must have at most 6 decimal places";
    return std::nullopt;
  }
  while (whole.size() > 1 && whole[0] == '0') whole.remove_prefix(1);
  if (whole.size() > 9) {
    *error = "must be at most " + std::to_string(kMaxMoneyUnits);
    return std::nullopt;
  }
  Micros units = 0;
  for (char c : whole) units = units * 10 + (c - '0');
  Micros micros = 0;
  for (size_t i = 0; i < 6; ++i) {
    micros = micros * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
  }
  return units * kMicrosPerUnit + micros;
}

std::string TypeError(std::string_view expected) { return "must be " + std::string(expected); }

std::optional<int32_t> ToInt32(const Json& value, std::string* error) {
  std::optional<int64_t> n = JsonInt(value);
  if (!n) {
    *error = TypeError("an integer");
    return std::nullopt;
  }
  if (*n < std::numeric_limits<int32_t>::min() || *n > std::numeric_limits<int32_t>::max()) {
    *error = "is out of range";
    return std::nullopt;
  }
  return static_cast<int32_t>(*n);
}

}  // namespace

void FieldErrors::Add(std::string field, std::string message) {
  if (fields_.size() >= kMaxListed) {
    fields_.insert(std::move(field));
    return;
  }
  if (!fields_.insert(field).second) return;
  errors_.push_back({std::move(field), std::move(message)});
}

void FieldErrors::AddAll(const Status& status) {
  for (const FieldError& e : status.details()) {
    // Covered when a prefix ending before a '.' or '[' already has an error.
    bool covered = false;
    for (size_t i = 1; i < e.field.size() && !covered; ++i) {
      if (e.field[i] == '.' || e.field[i] == '[') covered = fields_.contains(e.field.substr(0, i));
    }
    if (!covered) Add(e.field, e.message);
  }
}

Status FieldErrors::ToStatus() const {
  if (errors_.empty()) return OkStatus();
  std::string message = "invalid request: " + errors_.front().field + " " + errors_.front().message;
  if (count() > 1) message += " (and " + std::to_string(count() - 1) + " more)";
  if (count() == errors_.size()) return InvalidArgumentError(std::move(message), errors_);
  std::vector<FieldError> listed = errors_;
  listed.push_back({"body", std::to_string(count() - errors_.size()) + " more errors not listed"});
  return InvalidArgumentError(std::move(message), std::move(listed));
}

std::optional<Micros> ParseMoney(const Json& value, std::string* error) {
  if (value.is_number_unsigned() || value.is_number_integer()) {
    std::optional<int64_t> units = JsonInt(value);
    if (units && *units < 0) {
      *error = "must not be negative";
      return std::nullopt;
    }
    if (!units || *units > kMaxMoneyUnits) {
      *error = "must be at most " + std::to_string(kMaxMoneyUnits);
      return std::nullopt;
    }
    return *units * kMicrosPerUnit;
  }
  if (value.is_number_float()) {
    // The shortest decimal that round-trips is what the client wrote (12.5, 0.1).
    char buf[512];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value.get<double>(),
                                   std::chars_format::fixed);
    if (ec != std::errc()) {
      *error = "must be at most " + std::to_string(kMaxMoneyUnits);
      return std::nullopt;
    }
    return ParseDecimalMoney(std::string_view(buf, static_cast<size_t>(end - buf)), error);
  }
  if (value.is_string()) return ParseDecimalMoney(value.get_ref<const std::string&>(), error);
  *error = "must be a number or a decimal string in currency units";
  return std::nullopt;
}

Json MoneyToJson(Micros micros) {
  if (micros % kMicrosPerUnit == 0) return Json(micros / kMicrosPerUnit);
  return Json(static_cast<double>(micros) / static_cast<double>(kMicrosPerUnit));
}

std::optional<int64_t> JsonInt(const Json& value) {
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  return std::nullopt;
}

ObjectReader::ObjectReader(const Json& object, std::string prefix, FieldErrors& errors)
    : object_(object), prefix_(std::move(prefix)), errors_(errors) {}

const Json* ObjectReader::Find(std::string_view key) {
  auto it = object_.find(key);
  if (it == object_.end()) return nullptr;
  seen_.emplace(key);
  return &*it;
}

void ObjectReader::Require(std::initializer_list<std::string_view> keys) {
  for (std::string_view key : keys) {
    if (object_.find(key) == object_.end()) Error(key, "is required");
  }
}

void ObjectReader::ReadString(std::string_view key, std::string& out) {
  const Json* v = Find(key);
  if (!v) return;
  if (!v->is_string()) return Error(key, TypeError("a string"));
  out = v->get<std::string>();
}

void ObjectReader::ReadOptionalString(std::string_view key, std::string& out) {
  const Json* v = Find(key);
  if (!v) return;
  if (v->is_null()) {
    out.clear();
    return;
  }
  if (!v->is_string()) return Error(key, TypeError("a string or null"));
  out = v->get<std::string>();
}

void ObjectReader::ReadBool(std::string_view key, bool& out) {
  const Json* v = Find(key);
  if (!v) return;
  if (!v->is_boolean()) return Error(key, TypeError("true or false"));
  out = v->get<bool>();
}

void ObjectReader::ReadInt(std::string_view key, int64_t& out) {
  const Json* v = Find(key);
  if (!v) return;
  std::optional<int64_t> n = JsonInt(*v);
  if (!n) return Error(key, TypeError("an integer"));
  out = *n;
}

void ObjectReader::ReadInt32(std::string_view key, int32_t& out) {
  const Json* v = Find(key);
  if (!v) return;
  std::string error;
  std::optional<int32_t> n = ToInt32(*v, &error);
  if (!n) return Error(key, std::move(error));
  out = *n;
}

void ObjectReader::ReadOptionalInt32(std::string_view key, std::optional<int32_t>& out) {
  const Json* v = Find(key);
  if (!v) return;
  if (v->is_null()) {
    out.reset();
    return;
  }
  std::string error;
  std::optional<int32_t> n = ToInt32(*v, &error);
  if (!n) return Error(key, std::move(error));
  out = *n;
}

void ObjectReader::ReadMoney(std::string_view key, Micros& out) {
  const Json* v = Find(key);
  if (!v) return;
  std::string error;
  std::optional<Micros> micros = ParseMoney(*v, &error);
  if (!micros) return Error(key, std::move(error));
  out = *micros;
}

void ObjectReader::ReadOptionalMoney(std::string_view key, std::optional<Micros>& out) {
  const Json* v = Find(key);
  if (!v) return;
  if (v->is_null()) {
    out.reset();
    return;
  }
  std::string error;
  std::optional<Micros> micros = ParseMoney(*v, &error);
  if (!micros) return Error(key, std::move(error));
  out = *micros;
}

void ObjectReader::ReadOptionalTime(std::string_view key, std::optional<int64_t>& out) {
  const Json* v = Find(key);
  if (!v) return;
  if (v->is_null()) {
    out.reset();
    return;
  }
  if (!v->is_string()) return Error(key, TypeError("an RFC 3339 timestamp string or null"));
  Result<int64_t> seconds = ingest::ParseRfc3339(v->get_ref<const std::string&>());
  if (!seconds.ok()) return Error(key, "must be an RFC 3339 timestamp, e.g. 2026-11-01T12:00:00Z");
  out = *seconds;
}

void ObjectReader::ReadStringArray(std::string_view key, std::vector<std::string>& out) {
  const Json* v = Find(key);
  if (!v) return;
  if (!v->is_array()) return Error(key, TypeError("an array of strings"));
  std::vector<std::string> values;
  bool ok = true;
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& item = (*v)[i];
    if (!item.is_string()) {
      errors_.Add(Field(key) + "[" + std::to_string(i) + "]", TypeError("a string"));
      ok = false;
      continue;
    }
    values.push_back(item.get<std::string>());
  }
  if (ok) out = std::move(values);
}

void ObjectReader::ReadIntArray(std::string_view key, std::vector<int64_t>& out) {
  const Json* v = Find(key);
  if (!v) return;
  if (!v->is_array()) return Error(key, TypeError("an array of integers"));
  std::vector<int64_t> values;
  bool ok = true;
  for (size_t i = 0; i < v->size(); ++i) {
    std::optional<int64_t> n = JsonInt((*v)[i]);
    if (!n) {
      errors_.Add(Field(key) + "[" + std::to_string(i) + "]", TypeError("an integer"));
      ok = false;
      continue;
    }
    values.push_back(*n);
  }
  if (ok) out = std::move(values);
}

void ObjectReader::ReadObject(std::string_view key, const std::function<void(ObjectReader&)>& fn,
                              const std::function<void()>& on_null) {
  const Json* v = Find(key);
  if (!v) return;
  if (v->is_null() && on_null) {
    on_null();
    return;
  }
  if (!v->is_object()) return Error(key, TypeError(on_null ? "an object or null" : "an object"));
  ObjectReader inner(*v, Field(key) + ".", errors_);
  fn(inner);
}

void ObjectReader::RejectUnknown() {
  static constexpr std::string_view kReadOnly[] = {"id", "createdAt", "updatedAt"};
  size_t unlisted = 0;
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    const std::string& key = it.key();
    if (seen_.count(key) != 0) continue;
    if (prefix_.empty() &&
        std::find(std::begin(kReadOnly), std::end(kReadOnly), key) != std::end(kReadOnly)) {
      continue;
    }
    // Beyond the listed errors an unknown key is only counted: no field name is built.
    if (errors_.count() >= FieldErrors::kMaxListed) {
      ++unlisted;
      continue;
    }
    Error(key, "unknown field");
  }
  errors_.AddUnlisted(unlisted);
}

namespace {

// The deepest nesting of arrays and objects in `text` (strings skipped), stopping once it
// exceeds `limit`. A byte scan: malformed JSON is the parser's to report.
int JsonDepth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Result<Json> ParseJsonObject(std::string_view text) {
  if (JsonDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return InvalidFieldError("body", "must not nest arrays and objects deeper than " +
                                         std::to_string(kMaxJsonDepth) + " levels");
  }
  Json body = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return InvalidArgumentError("request body is not valid JSON");
  if (!body.is_object()) return InvalidArgumentError("request body must be a JSON object");
  return body;
}

http::Response JsonResponse(int status, const Json& body) {
  http::Response response;
  response.status = status;
  response.SetHeader("Content-Type", "application/json");
  response.SetHeader("Cache-Control", "no-store");
  response.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return response;
}

}  // namespace adserver::admin::detail
