#include "store/postgres/detail/pg_sql.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

namespace adserver::store::pg_detail {
namespace {

class PgSqlStatement final : public sql::StatementImpl {
 public:
  PgSqlStatement(PgSqlConnection& conn, std::string text, std::vector<int> used)
      : conn_(conn), text_(std::move(text)), used_(std::move(used)) {
    int max = 0;
    for (int n : used_) max = std::max(max, n);
    values_.resize(static_cast<size_t>(max) + 1);
  }

  void SetInt(int i, int64_t v) override { Set(i, std::to_string(v)); }
  void SetText(int i, std::string_view v) override { Set(i, std::string(v)); }
  void SetBlob(int i, const void* data, size_t size) override {
    Set(i, BytesParam(static_cast<const uint8_t*>(data), size));
  }
  void SetNull(int i) override { Set(i, std::nullopt); }
  void SetDouble(int i, double v) override {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact form
    Set(i, ec == std::errc() ? std::string(buf, end) : std::to_string(v));
  }

  Result<bool> Step() override {
    if (!ran_) {
      std::vector<PgParam> params;
      params.reserve(used_.size());
      for (int n : used_) params.push_back(values_[static_cast<size_t>(n)]);
      ADS_ASSIGN_OR_RETURN(result_, conn_.Run(text_, params));
      ran_ = true;
      row_ = -1;
    }
    ++row_;
    return row_ < result_.rows();
  }
  void Reset() override {
    ran_ = false;
    result_ = PgResult();
  }

  bool IsNull(int col) const override { return result_.IsNull(row_, col); }
  int64_t Int(int col) const override {
    Result<int64_t> v = result_.Int(row_, col);
    return v.ok() ? *v : 0;
  }
  double Double(int col) const override {
    std::string text(result_.Text(row_, col));
    return std::strtod(text.c_str(), nullptr);
  }
  std::string Text(int col) const override { return std::string(result_.Text(row_, col)); }
  bool Blob(int col, void* out, size_t size) const override {
    Result<std::vector<uint8_t>> bytes = result_.Bytes(row_, col);
    if (!bytes.ok() || bytes->size() != size) return false;
    std::memcpy(out, bytes->data(), size);
    return true;
  }

 private:
  void Set(int i, PgParam v) {
    if (i >= 0 && static_cast<size_t>(i) < values_.size())
      values_[static_cast<size_t>(i)] = std::move(v);
  }

  PgSqlConnection& conn_;
  const std::string text_;
  const std::vector<int> used_;
  std::vector<PgParam> values_;  // by `?N`
  bool ran_ = false;
  PgResult result_;
  int row_ = -1;
};

}  // namespace

std::string TranslateParameters(std::string_view text, std::vector<int>& used) {
  std::string out;
  out.reserve(text.size() + 8);
  std::map<int, int> number;  // ?N -> $k
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\'') quoted = !quoted;
    if (quoted || c != '?' || i + 1 >= text.size() || text[i + 1] < '0' || text[i + 1] > '9') {
      out += c;
      continue;
    }
    int n = 0;
    size_t j = i + 1;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') n = n * 10 + (text[j++] - '0');
    auto [it, added] = number.emplace(n, static_cast<int>(used.size()) + 1);
    if (added) used.push_back(n);
    out += '$';
    out += std::to_string(it->second);
    i = j - 1;
  }
  return out;
}

Result<sql::Statement> PgSqlConnection::Prepare(const std::string& text) {
  std::vector<int> used;
  std::string translated = TranslateParameters(text, used);
  return sql::Statement(
      std::make_unique<PgSqlStatement>(*this, std::move(translated), std::move(used)));
}

Result<PgResult> PgSqlConnection::Run(const std::string& text, const std::vector<PgParam>& params) {
  const bool guarded = conn_.in_transaction();
  if (guarded) ADS_RETURN_IF_ERROR(conn_.ExecScript("SAVEPOINT adserver_statement"));
  Result<PgResult> result = conn_.Exec(text, params);
  if (guarded) {
    Status undo = conn_.ExecScript(result.ok() ? "RELEASE SAVEPOINT adserver_statement"
                                               : "ROLLBACK TO SAVEPOINT adserver_statement; "
                                                 "RELEASE SAVEPOINT adserver_statement");
    if (result.ok() && !undo.ok()) return undo;
  }
  changes_ = result.ok() ? result->Changed() : 0;
  return result;
}

}  // namespace adserver::store::pg_detail
