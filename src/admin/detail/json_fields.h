#pragma once

// Reading typed fields out of admin request bodies (nlohmann::json) with one FieldError per
// problem, money conversion, and JSON responses. Module-private to admin/.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "http/message.h"

namespace adserver::admin::detail {

using Json = nlohmann::json;

// Largest accepted amount of money, in currency units (keeps every value with 6 decimals
// exactly representable as a JSON number: at most 15 significant digits).
inline constexpr int64_t kMaxMoneyUnits = 999'999'999;

// Field errors of one request, at most one per field (the first one wins). Time and answer
// stay linear in the body (issue 39): fields are deduplicated through a hash set, and only the
// first kMaxListed errors are listed; the rest are counted. Not thread-safe.
class FieldErrors {
 public:
  static constexpr size_t kMaxListed = 100;

  void Add(std::string field, std::string message);
  // Adds the details of a validation status (no-op when ok), skipping those inside a field
  // that already has an error ("pricing" is required -> nothing more about "pricing.bid").
  void AddAll(const Status& status);
  bool empty() const { return errors_.empty(); }
  // Counts `n` more errors on fields known to have none yet, without naming them (the unknown
  // keys of an object beyond the listed ones: distinct by construction).
  void AddUnlisted(size_t n) { unlisted_ += n; }
  // Every error, listed or not.
  size_t count() const { return fields_.size() + unlisted_; }
  // InvalidArgument naming the first problem, with the first kMaxListed problems as details
  // and, when there were more, a last detail {"field":"body","message":"N more errors not
  // listed"}.
  Status ToStatus() const;

 private:
  std::vector<FieldError> errors_;
  std::unordered_set<std::string> fields_;  // every field with an error, but AddUnlisted's
  size_t unlisted_ = 0;
};

// Money in a JSON number or decimal string ("12.5") to micro-units, exactly: at most 6
// decimals, not negative, at most kMaxMoneyUnits. Returns nullopt with `*error` set otherwise.
std::optional<Micros> ParseMoney(const Json& value, std::string* error);
// Micro-units to a JSON number in currency units (an integer when whole).
Json MoneyToJson(Micros micros);

// Reads fields of one JSON object, recording errors under "<prefix><key>". Every Read* leaves
// `out` unchanged when the key is absent or its value is invalid. Not thread-safe.
class ObjectReader {
 public:
  // `object` must be a JSON object and outlive the reader.
  ObjectReader(const Json& object, std::string prefix, FieldErrors& errors);

  std::string Field(std::string_view key) const { return prefix_ + std::string(key); }
  void Error(std::string_view key, std::string message) {
    errors_.Add(Field(key), std::move(message));
  }
  FieldErrors& errors() { return errors_; }
  // The value of `key` (marked as read), or null when absent.
  const Json* Find(std::string_view key);
  // Records "is required" for each absent key.
  void Require(std::initializer_list<std::string_view> keys);

  void ReadString(std::string_view key, std::string& out);
  // Like ReadString, but JSON null clears the value to "".
  void ReadOptionalString(std::string_view key, std::string& out);
  void ReadBool(std::string_view key, bool& out);
  void ReadInt(std::string_view key, int64_t& out);
  void ReadInt32(std::string_view key, int32_t& out);
  // JSON null clears.
  void ReadOptionalInt32(std::string_view key, std::optional<int32_t>& out);
  void ReadMoney(std::string_view key, Micros& out);
  // JSON null clears.
  void ReadOptionalMoney(std::string_view key, std::optional<Micros>& out);
  // RFC 3339 string; JSON null clears.
  void ReadOptionalTime(std::string_view key, std::optional<int64_t>& out);
  void ReadStringArray(std::string_view key, std::vector<std::string>& out);
  void ReadIntArray(std::string_view key, std::vector<int64_t>& out);
  // Calls `fn` with a reader for the nested object (prefix "<key>."). JSON null calls
  // `on_null` when given and is an error otherwise.
  void ReadObject(std::string_view key, const std::function<void(ObjectReader&)>& fn,
                  const std::function<void()>& on_null = nullptr);
  // Records "unknown field" for every key not read. Read-only fields a client may echo back
  // from a GET (id, createdAt, updatedAt) are ignored.
  void RejectUnknown();

 private:
  const Json& object_;
  std::string prefix_;
  FieldErrors& errors_;
  std::set<std::string, std::less<>> seen_;
};

// Deepest nesting of arrays and objects an admin body may have (issue 39): far beyond any
// record's shape; a body nested deeper is refused before it is parsed, as building and freeing
// its tree would cost more than the rest of the request.
inline constexpr int kMaxJsonDepth = 32;

// `text` parsed as a JSON object; InvalidArgument when it is nested deeper than kMaxJsonDepth
// (field "body"), is not valid JSON or is not an object.
Result<Json> ParseJsonObject(std::string_view text);

// Reads an integer (not a float, not a string) within int64; nullopt when it is none.
std::optional<int64_t> JsonInt(const Json& value);

// A response with `body` serialised (invalid UTF-8 replaced), Content-Type application/json
// and Cache-Control no-store.
http::Response JsonResponse(int status, const Json& body);

}  // namespace adserver::admin::detail
