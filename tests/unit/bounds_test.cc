// Bounded work for any input (issue 15, part 3): depth limits instead of stack overflows,
// LIKE / GLOB in polynomial time, configurable limits, NOMEM, interrupt and timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <new>
#include <string>
#include <thread>

#include "config/config_loader.h"
#include "config/host_setup.h"
#include "mem_db_test.h"
#include "planner/scalar_expr.h"

namespace quereus {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// ---------------------------------------------------------------- LIKE / GLOB

TEST(LikeGlobMatch, KeepsSemantics) {
  EXPECT_FALSE(like_match("abc", "ABC", -1));  // case-sensitive, as the reference
  EXPECT_TRUE(like_match("aBc", "aBc", -1));
  EXPECT_TRUE(like_match("a%c", "abbbc", -1));
  EXPECT_TRUE(like_match("a%", "a", -1));
  EXPECT_TRUE(like_match("%", "", -1));
  EXPECT_FALSE(like_match("_", "", -1));
  EXPECT_TRUE(like_match("_", "\xc3\xa9", -1));  // '_' is one UTF-8 character
  EXPECT_FALSE(like_match("__", "\xc3\xa9", -1));
  EXPECT_TRUE(like_match("%b_d", "abcbxd", -1));
  EXPECT_FALSE(like_match("%b_d", "abcbxdx", -1));
  EXPECT_TRUE(like_match("a\\%b", "a%b", '\\'));
  EXPECT_FALSE(like_match("a\\%b", "axb", '\\'));
  EXPECT_TRUE(like_match("a\\_%", "a_zz", '\\'));
  EXPECT_FALSE(like_match("a\\_%", "abzz", '\\'));
  EXPECT_TRUE(like_match("100%%", "100%", '%'));   // ESCAPE '%': '%%' is a literal '%'
  EXPECT_FALSE(like_match("100%%", "100x", '%'));
  // SQLite's ESCAPE rules: the escape wins over the wildcards, an escape ending the
  // pattern matches nothing, and the escape is a code point.
  EXPECT_FALSE(like_match("a_", "ab", '_'));
  EXPECT_TRUE(like_match("a__", "a_", '_'));
  EXPECT_FALSE(like_match("a%", "abc", '%'));
  EXPECT_FALSE(like_match("a%", "a", '%'));
  EXPECT_FALSE(like_match("a\\", "a\\", '\\'));
  EXPECT_FALSE(like_match("%\\", "xyz", '\\'));
  EXPECT_TRUE(like_match("a\xc3\xa9\xc3\xa9%", "a\xc3\xa9x", 0xE9));  // ESCAPE 'é'
  EXPECT_EQ(like_escape_code_point("\xc3\xa9"), 0xE9);
  EXPECT_EQ(like_escape_code_point("ab"), -1);
  EXPECT_EQ(like_escape_code_point(""), -1);
  EXPECT_TRUE(like_match("%a%b%c%", "xxaxxbxxcxx", -1));
  EXPECT_FALSE(like_match("%a%b%c%", "xxaxxcxxbxx", -1));
  EXPECT_TRUE(like_match("ab", "ab", -1));
  EXPECT_FALSE(like_match("ab", "abc", -1));
  EXPECT_FALSE(like_match("abc", "ab", -1));

  EXPECT_TRUE(glob_match("a*c", "abbbc"));
  EXPECT_FALSE(glob_match("a*c", "ABBBC"));  // GLOB is case-sensitive
  EXPECT_TRUE(glob_match("a?c", "abc"));
  EXPECT_TRUE(glob_match("[a-c]x", "bx"));
  EXPECT_FALSE(glob_match("[a-c]x", "dx"));
  EXPECT_TRUE(glob_match("[^a-c]x", "dx"));
  EXPECT_FALSE(glob_match("[^a-c]x", "ax"));
  EXPECT_TRUE(glob_match("[]]", "]"));
  EXPECT_TRUE(glob_match("*[0-9]", "abc7"));
  EXPECT_FALSE(glob_match("*[0-9]", "abc"));
  EXPECT_FALSE(glob_match("a[bc", "ab"));  // an unterminated class never matches
  EXPECT_FALSE(glob_match("*[bc", "ab"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("?", ""));
  EXPECT_TRUE(glob_match("*a*b*", "xaxbx"));
}

// The patterns that backtracked exponentially (or recursed per wildcard) now finish in
// time bounded by pattern x subject.
TEST(LikeGlobMatch, PathologicalPatternsArePolynomial) {
  const auto t0 = Clock::now();
  const std::string subject(60, 'a');
  EXPECT_FALSE(like_match(repeat("%a", 30) + "b", subject, -1));
  EXPECT_FALSE(glob_match(repeat("*a", 30) + "b", subject));
  const std::string long_subject(20000, 'a');
  EXPECT_FALSE(like_match(repeat("%a", 200) + "%b", long_subject, -1));
  EXPECT_TRUE(like_match(repeat("%", 200000), long_subject, -1));
  EXPECT_FALSE(like_match(repeat("%a", 100000) + "b", "aaaa", -1));
  EXPECT_FALSE(glob_match(repeat("*?", 100000) + "b", long_subject));
  EXPECT_LT(seconds_since(t0), 5.0);
}

class BoundsTest : public MemDbTest {
 protected:
  // The status of running `sql`, rows drained.
  Status run(const std::string& sql) { return db_->exec(sql); }
};

TEST_F(BoundsTest, LikeWithManyWildcardsRunsInSql) {
  const auto t0 = Clock::now();
  auto rows = query("select '" + std::string(60, 'a') + "' like '" + repeat("%a", 30) + "b' as m");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].to_text(), "false");
  rows = query("select 'abc' like '" + repeat("%", 200000) + "' as m");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].to_text(), "true");
  EXPECT_LT(seconds_since(t0), 5.0);
}

// ---------------------------------------------------------------- depth limits

TEST_F(BoundsTest, DeepExpressionIsAnError) {
  fails("select " + repeat("(", 100000) + "1" + repeat(")", 100000), StatusCode::kSyntax,
        "Expression tree is too large (maximum depth 1000)");
  fails("select " + repeat("- ", 100000) + "1", StatusCode::kSyntax, "maximum depth");
  std::string chain = "select 1";
  for (int i = 0; i < 100000; ++i) chain += " + 1";
  fails(chain, StatusCode::kSyntax, "maximum depth");
  exec("pragma max_expr_depth = 2000");
  auto rows = query("select " + repeat("(", 400) + "1" + repeat(")", 400) + " as x");
  ASSERT_EQ(rows.size(), 1u);
}

TEST_F(BoundsTest, CompoundSelectTermsAreLimited) {
  std::string sql = "select 1";
  for (int i = 0; i < 20000; ++i) sql += " union all select 1";
  fails(sql, StatusCode::kSyntax, "Too many terms in compound SELECT (maximum 500");
  std::string ok_sql = "select count(*) as n from (select 1";
  for (int i = 0; i < 499; ++i) ok_sql += " union all select 1";
  ok_sql += ")";
  auto rows = query(ok_sql);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 500);
  exec("pragma max_compound_select = 3");
  fails("select 1 union select 2 union select 3 union select 4", StatusCode::kSyntax, "maximum 3");
  exec("select 1 union select 2 union select 3");
}

TEST_F(BoundsTest, JoinedTablesAreLimited) {
  exec("create table t (a integer primary key)");
  std::string sql = "select count(*) from t t0";
  for (int i = 1; i < 100; ++i) sql += " join t t" + std::to_string(i) + " on t" + std::to_string(i) + ".a = t0.a";
  fails(sql, StatusCode::kSyntax, "At most 64 tables in a join");
  std::string ok_sql = "select count(*) from t t0";
  for (int i = 1; i < 64; ++i) ok_sql += " join t t" + std::to_string(i) + " on t" + std::to_string(i) + ".a = t0.a";
  exec("insert into t values (1), (2)");
  auto rows = query(ok_sql);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 2);
}

TEST_F(BoundsTest, StackedViewsAreLimited) {
  exec("create table t (a integer primary key)");
  exec("insert into t values (1)");
  exec("create view v0 as select a from t");
  Status st;
  int i = 1;
  for (; i < 300; ++i) {
    st = run("create view v" + std::to_string(i) + " as select a from v" + std::to_string(i - 1));
    if (!st.ok()) break;
  }
  ASSERT_FALSE(st.ok()) << "3 hundred stacked views all accepted";
  EXPECT_EQ(st.code(), StatusCode::kTooBig) << st.to_string();
  EXPECT_NE(st.message().find("max_view_depth"), std::string::npos) << st.to_string();
  // The views that were accepted still work, and the database does.
  auto rows = query("select a from v" + std::to_string(i - 1));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 1);
}

TEST_F(BoundsTest, ChainedCtesAreLimited) {
  std::string sql = "with c0 as (select 1 as x)";
  for (int i = 1; i < 5000; ++i) sql += ", c" + std::to_string(i) + " as (select x from c" + std::to_string(i - 1) + ")";
  sql += " select x from c4999";
  fails(sql, StatusCode::kTooBig, "nest too deeply");
  // Fanning references (each CTE reads the previous one twice) are bounded in total.
  std::string fan = "with c0 as (select 1 as x)";
  for (int i = 1; i < 40; ++i)
    fan += ", c" + std::to_string(i) + " as (select x from c" + std::to_string(i - 1) + " union all select x from c" +
           std::to_string(i - 1) + ")";
  fan += " select count(*) from c39";
  fails(fan, StatusCode::kTooBig, "more than 100000 times");
  auto rows = query("with a as (select 1 as x), b as (select x from a), c as (select x from b) select x from c");
  ASSERT_EQ(rows.size(), 1u);
}

TEST_F(BoundsTest, DeepJsonIsRefusedNotACrash) {
  const std::string deep = repeat("[", 100000) + repeat("]", 100000);
  auto rows = query("select json_valid('" + deep + "') as v");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].to_text(), "false");
  Status st;
  query("select json('" + deep + "')", &st);  // an error or NULL, never a crash
  const std::string ok_depth = repeat("[", 900) + repeat("]", 900);
  rows = query("select json_valid('" + ok_depth + "') as v");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].to_text(), "true");
  // Wrapping a value again and again stops growing at the depth limit.
  rows = query(
      "with recursive r(n, j) as (select 0, json('[]') union all select n + 1, json_array(j) from r where n < 3000) "
      "select count(*) from r");
  (void)rows;
  exec("select 1");
}

// ---------------------------------------------------------------- limits

TEST_F(BoundsTest, SqlLengthAndValueLengthLimits) {
  exec("pragma max_sql_length = 100");
  fails("select '" + std::string(200, 'x') + "'", StatusCode::kTooBig, "statement too long");
  exec("pragma max_sql_length = 1000000");
  exec("pragma max_length = 1000");
  fails("select lpad('x', 2000, 'y')", StatusCode::kTooBig, "string or blob too big");
  fails("select '" + std::string(600, 'x') + "' || '" + std::string(600, 'y') + "'", StatusCode::kTooBig,
        "string or blob too big");
  fails("select zeroblob(5000)", StatusCode::kTooBig, "too big");
  auto rows = query("pragma max_length");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][1].as_int(), 1000);
  fails("pragma max_length = 0", StatusCode::kError, "max_length must be a positive integer");
  fails("select lpad('x', 1e15)", StatusCode::kTooBig, "too big");
}

TEST(BoundsConfig, LimitsFromYaml) {
  HostOptions options;
  Status st = parse_config(
      "databases:\n"
      "  main:\n"
      "    statement_timeout_ms: 250\n"
      "    limits:\n"
      "      max_compound_select: 7\n"
      "      max_join_tables: 9\n",
      "x.yaml", &options);
  ASSERT_TRUE(st.ok()) << st.to_string();
  const DatabaseConfig& db = options.databases.at("main");
  EXPECT_EQ(db.statement_timeout_ms, 250);
  EXPECT_EQ(db.limits.max_compound_select, 7);
  EXPECT_EQ(db.limits.max_join_tables, 9);
  EXPECT_EQ(db.limits.max_expr_depth, 1000);  // left out: the default
  DatabaseOptions dbo = database_options(db);
  EXPECT_EQ(dbo.limits.max_join_tables, 9);
  EXPECT_EQ(dbo.statement_timeout_ms, 250);

  st = parse_config("databases:\n  main:\n    limits:\n      max_compund_select: 7\n", "x.yaml", &options);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("x.yaml:4: unknown key 'max_compund_select' in databases.main.limits (did you mean "
                              "'max_compound_select'?)"),
            std::string::npos)
      << st.to_string();
  st = parse_config("databases:\n  main:\n    limits:\n      max_length: 0\n", "x.yaml", &options);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("x.yaml:4: key 'max_length' must be an integer >= 1"), std::string::npos)
      << st.to_string();
  st = parse_config("databases:\n  main:\n    statement_timeout_ms: soon\n", "x.yaml", &options);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("x.yaml:3: key 'statement_timeout_ms' must be an integer >= 0"), std::string::npos)
      << st.to_string();
}

// ---------------------------------------------------------------- out of memory

TEST_F(BoundsTest, BadAllocIsNomemAndTheDatabaseStaysUsable) {
  ScalarFunction fn;
  fn.name = "allocate_too_much";
  fn.num_args = 0;
  fn.flags = 0;
  fn.call = [](std::span<const Value>) -> Value { throw std::bad_alloc(); };
  registry_->add_scalar(std::move(fn), "test");
  exec("create table t (a integer primary key)");
  exec("begin");
  exec("insert into t values (1)");
  fails("insert into t select 2 + allocate_too_much()", StatusCode::kNoMem, "out of memory");
  EXPECT_TRUE(db_->in_transaction());
  exec("insert into t values (3)");
  exec("commit");
  auto rows = query("select a from t order by a");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0].as_int(), 1);
  EXPECT_EQ(rows[1][0].as_int(), 3);
}

// ---------------------------------------------------------------- interrupt and timeout

// Never finishes on its own in test time: a three-way cross join of 3,000 rows each.
const char* kEndless =
    "with recursive c(n) as (select 1 union all select n + 1 from c where n < 3000) "
    "select count(*) from c a cross join c b cross join c d";

TEST_F(BoundsTest, StatementTimeout) {
  exec("create table t (a integer primary key)");
  exec("pragma statement_timeout_ms = 200");
  auto rows = query("pragma statement_timeout_ms");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][1].as_int(), 200);
  exec("begin");
  exec("insert into t values (1)");
  const auto t0 = Clock::now();
  fails(kEndless, StatusCode::kInterrupt, "statement timeout of 200 ms");
  EXPECT_LT(seconds_since(t0), 10.0);
  EXPECT_TRUE(db_->in_transaction());  // the transaction stays open
  // A write interrupted by the timeout is undone, the earlier ones stay.
  fails(
      "with recursive c(n) as (select 1 union all select n + 1 from c where n < 3000) "
      "insert into t select a.n + 10000 * b.n + 100000000 * d.n from c a cross join c b cross join c d",
      StatusCode::kInterrupt, "timeout");
  exec("commit");
  rows = query("select count(*) from t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 1);
  exec("pragma statement_timeout_ms = 0");
  exec("select count(*) from t");
  // Also a long recursive CTE alone.
  exec("pragma statement_timeout_ms = 100");
  fails("with recursive c(n) as (select 1 union all select n + 1 from c where n < 100000000) select count(*) from c",
        StatusCode::kInterrupt, "timeout");
}

// Polynomial is still long for long inputs: the matcher polls the timeout as it backtracks.
TEST_F(BoundsTest, LongLikeHonoursTheTimeout) {
  exec("pragma statement_timeout_ms = 100");
  const auto t0 = Clock::now();
  fails("select '" + std::string(400000, 'a') + "' like '%" + std::string(40000, 'a') + "b' as m", StatusCode::kInterrupt,
        "timeout");
  EXPECT_LT(seconds_since(t0), 5.0);
}

TEST_F(BoundsTest, InterruptFromAnotherThread) {
  exec("pragma statement_timeout_ms = 60000");  // a backstop should the interrupt be lost
  Status st;
  std::thread runner([&] { st = db_->exec(kEndless); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = Clock::now();
  db_->interrupt();
  runner.join();
  EXPECT_LT(seconds_since(t0), 5.0);
  EXPECT_EQ(st.code(), StatusCode::kInterrupt) << st.to_string();
  EXPECT_EQ(st.raw_message(), "interrupted");
  // The next statement is not affected.
  auto rows = query("select 1 + 1 as x");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 2);
}

// ---------------------------------------------------------------- smaller bugs

TEST_F(BoundsTest, LimitCounts) {
  exec("create table t (a integer primary key)");
  exec("insert into t values (1), (2), (3)");
  // A negative LIMIT returns no rows: the reference corpus (94.1-limit-offset-edge-cases)
  // requires it, unlike SQLite's "no limit".
  EXPECT_EQ(query("select a from t order by a limit -1").size(), 0u);
  EXPECT_EQ(query("select a from t order by a limit null").size(), 3u);
  EXPECT_EQ(query("select a from t order by a limit 2 offset -5").size(), 2u);
  EXPECT_EQ(query("select a from t order by a limit '2'").size(), 2u);
  EXPECT_EQ(query("select a from t order by a limit 2.0").size(), 2u);
  EXPECT_EQ(query("select a from t order by a limit 0").size(), 0u);
  fails("select a from t limit 'abc'", StatusCode::kMismatch, "LIMIT must be an integer");
  fails("select a from t limit 1.5", StatusCode::kMismatch, "LIMIT must be an integer");
  fails("select a from t limit 1 offset 'x'", StatusCode::kMismatch, "OFFSET must be an integer");
}

TEST_F(BoundsTest, WindowFramesWithHugeOffsetsSaturate) {
  exec("create table t (a integer primary key)");
  exec("insert into t values (1), (2), (3)");
  auto rows = query(
      "select a, sum(a) over (order by a rows between 9223372036854775807 preceding and current row) as s from t "
      "order by a");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][1].as_int(), 1);
  EXPECT_EQ(rows[1][1].as_int(), 3);
  EXPECT_EQ(rows[2][1].as_int(), 6);
  rows = query(
      "select a, sum(a) over (order by a rows between current row and 9223372036854775807 following) as s from t "
      "order by a");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][1].as_int(), 6);
  EXPECT_EQ(rows[2][1].as_int(), 3);
  rows = query(
      "select a, count(*) over (order by a groups between 9223372036854775807 preceding and "
      "9223372036854775807 following) as s from t order by a");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1][1].as_int(), 3);
  rows = query("select a, lead(a, 9223372036854775807) over (order by a) as l from t order by a");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0][1].is_null());
}

TEST_F(BoundsTest, DeferredForeignKeyFailureIsAForeignKeyError) {
  exec("create table p (id integer primary key)");
  exec("create table c (id integer primary key, pid integer references p(id) deferrable initially deferred)");
  exec("begin");
  exec("insert into c values (1, 7)");
  fails("commit", StatusCode::kConstraint, "FOREIGN KEY constraint failed: _fk_c_pid");
  EXPECT_FALSE(db_->in_transaction());
}

}  // namespace
}  // namespace quereus
