// The shared SQL's `?N` parameters as PostgreSQL's `$k` (store/postgres/detail/pg_sql.h).

#include "store/postgres/detail/pg_sql.h"

#include <gtest/gtest.h>

#include <vector>

namespace adserver::store::pg_detail {
namespace {

TEST(TranslateParametersTest, RenumbersTheParametersAStatementUses) {
  std::vector<int> used;
  EXPECT_EQ(TranslateParameters("INSERT INTO t (a, b) VALUES (?2, ?3) RETURNING id", used),
            "INSERT INTO t (a, b) VALUES ($1, $2) RETURNING id");
  EXPECT_EQ(used, (std::vector<int>{2, 3})) << "?1 is not used: PostgreSQL must not see it";
}

TEST(TranslateParametersTest, AParameterUsedTwiceKeepsOneNumber) {
  std::vector<int> used;
  EXPECT_EQ(TranslateParameters("WHERE (CAST(?1 AS BIGINT) IS NULL OR id = ?1) AND x = ?12", used),
            "WHERE (CAST($1 AS BIGINT) IS NULL OR id = $1) AND x = $2");
  EXPECT_EQ(used, (std::vector<int>{1, 12}));
}

TEST(TranslateParametersTest, LeavesQuotedTextAndLoneQuestionMarksAlone) {
  std::vector<int> used;
  EXPECT_EQ(TranslateParameters("SELECT '?1', 'it''s ?2', ? FROM t WHERE a = ?3", used),
            "SELECT '?1', 'it''s ?2', ? FROM t WHERE a = $1");
  EXPECT_EQ(used, (std::vector<int>{3}));
}

}  // namespace
}  // namespace adserver::store::pg_detail
