// `quereus --check-syntax`: statement splitting and error reporting.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/check_syntax.h"

namespace quereus {
namespace {

TEST(CheckSyntaxTest, SplitsOutsideQuotesCommentsAndBraces) {
  auto spans = split_sql_statements("select ';'; -- a;b\nselect 2 /* ; */;\ndeclare schema s { table t (a int); };");
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[1].line, 2);
  EXPECT_EQ(spans[2].line, 3);
}

TEST(CheckSyntaxTest, ReportsFileLineColumnAndCounts) {
  std::string path = testing::TempDir() + "/check_syntax_test.sql";
  std::ofstream(path) << "select 1;\n\nselect from t;\ncreate table t (a integer);\n";
  std::ostringstream out, err;
  int failures = check_syntax({path}, out, err);
  EXPECT_EQ(failures, 1);
  EXPECT_NE(out.str().find(path + ":3:"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("2 passed, 1 failed"), std::string::npos) << out.str();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace quereus
