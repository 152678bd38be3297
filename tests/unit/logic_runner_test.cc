// Unit tests for the .sqllogic runner's pure pieces (FORMAT.md §2, §4, §6, §7); no engine.
#include "logic_runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace quereus::logic {
namespace {

Status caps(const std::string& text, std::set<std::string>* out = nullptr) {
  std::set<std::string> ignored;
  return parse_capabilities(text, out ? out : &ignored);
}

TEST(LogicRunnerTest, JsTrimHandlesUnicodeSpace) {
  EXPECT_EQ(js_trim("  \t x \r\n"), "x");
  EXPECT_EQ(js_trim("\xEF\xBB\xBF-- a\xC2\xA0"), "-- a");      // BOM, NBSP
  EXPECT_EQ(js_trim("\xE2\x80\x83x\xE3\x80\x80"), "x");        // em space, ideographic space
  EXPECT_EQ(js_trim("\xE2\x86\x92 [1]"), "\xE2\x86\x92 [1]");  // → is not space
  EXPECT_EQ(js_trim(" \xC2\xA0 "), "");
}

TEST(LogicRunnerTest, ParsesBlocks) {
  const std::vector<Block> b = parse_blocks(
      "-- a comment\n"
      "create table t (a integer primary key);\n"
      "insert into t values (1); -- trailing comment\n"
      "-- run\n"
      "\n"
      "select a\n"
      "  from t;\n"
      "\xE2\x86\x92 [{\"a\": 1}]\n"
      "-- params: [5]\n"
      "select ? as p;\n"
      "   \xE2\x86\x92   [{\"p\": 5}]  \n"
      "select 1;\n"
      "-- Error in batch: prose, not a directive\n"
      "-- Run ANALYZE first (prose)\n"
      "--error: plain comment\n"
      "insert into t values (1);\n"
      "-- ERROR: UNIQUE constraint\n"
      "-- error: dropped, no SQL before it\n"
      "\xE2\x86\x92 [\"dropped\"]\n"
      "-- params: {\"id\": 2}\n"
      "select :id;\n"
      "-- error:\n"
      "select 2\n");
  ASSERT_EQ(b.size(), 6u);
  EXPECT_EQ(b[0].kind, BlockKind::kSetup);
  EXPECT_EQ(b[0].line, 4);
  EXPECT_EQ(b[0].sql, "create table t (a integer primary key);\ninsert into t values (1);");
  EXPECT_EQ(b[1].kind, BlockKind::kResult);
  EXPECT_EQ(b[1].sql, "select a\n  from t;");
  EXPECT_EQ(b[1].expected, "[{\"a\": 1}]");
  EXPECT_FALSE(b[1].params);
  EXPECT_EQ(b[2].kind, BlockKind::kResult);
  EXPECT_EQ(b[2].line, 11);
  EXPECT_EQ(b[2].expected, "[{\"p\": 5}]");
  ASSERT_TRUE(b[2].params);
  EXPECT_EQ(*b[2].params, Json::parse("[5]"));
  EXPECT_EQ(b[3].kind, BlockKind::kError);  // prose and --error: lines neither split nor end it
  EXPECT_EQ(b[3].sql, "select 1;\ninsert into t values (1);");
  EXPECT_EQ(b[3].expected, "UNIQUE constraint");
  EXPECT_EQ(b[4].kind, BlockKind::kError);  // params are not carried into error blocks
  EXPECT_EQ(b[4].sql, "select :id;");
  EXPECT_EQ(b[4].expected, "");
  EXPECT_FALSE(b[4].params);
  EXPECT_EQ(b[5].kind, BlockKind::kSetup);  // end of file
  EXPECT_EQ(b[5].sql, "select 2");
}

TEST(LogicRunnerTest, ParamsResetAfterEachBlockAndBadParamsFail) {
  const std::vector<Block> b = parse_blocks(
      "-- params: [1]\nselect ?;\n\xE2\x86\x92 [1]\nselect 2;\n\xE2\x86\x92 [2]\n-- params: [oops\n");
  ASSERT_EQ(b.size(), 3u);
  EXPECT_TRUE(b[0].params);
  EXPECT_FALSE(b[1].params);
  EXPECT_EQ(b[2].kind, BlockKind::kBadParams);
  EXPECT_EQ(b[2].line, 6);
}

TEST(LogicRunnerTest, CutsSqlAtTheFirstDoubleDash) {
  const std::vector<Block> b =
      parse_blocks("select '--x' as a;\nselect 1 -- note\n\xE2\x86\x92 []\n-- run\n");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].sql, "select '\nselect 1");  // the reference's quirk, copied
}

TEST(LogicRunnerTest, SplitsStatementsOnEverySemicolon) {
  EXPECT_EQ(split_statements(" a ;; b;\n c ; "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split_statements("select 'x;y'"), (std::vector<std::string>{"select 'x", "y'"}));
  EXPECT_TRUE(split_statements(" ; ").empty());
}

TEST(LogicRunnerTest, CapabilityDirective) {
  std::set<std::string> got;
  ASSERT_TRUE(caps("-- header\n\n-- Requires-Capability: Standalone-Index-DDL\n"
                   "--requires-capability:standalone-index-ddl,\nselect 1;\n",
                   &got)
                  .ok());
  EXPECT_EQ(got, (std::set<std::string>{"standalone-index-ddl"}));
  got.clear();
  ASSERT_TRUE(caps("\xEF\xBB\xBF-- requires-capability: standalone-index-ddl\n", &got).ok());
  EXPECT_EQ(got.size(), 1u);
  EXPECT_TRUE(caps("select 1;\n-- a comment about capabilities\n").ok());

  Status s = caps("-- requires-capability: standalone-index-ddl, time-travel\n");
  EXPECT_EQ(s.code(), StatusCode::kFormat);
  EXPECT_EQ(s.message(), "line 1: unknown capability 'time-travel'");
  EXPECT_EQ(caps("-- requires-capability:  , \n").message(),
            "line 1: requires-capability directive names no capability");
  EXPECT_EQ(caps("-- x\nselect 1;\n-- requires-capability: standalone-index-ddl\n").message(),
            "line 3: requires-capability directive after the first SQL line");
  EXPECT_FALSE(caps("-- requires-capability: standalone-index-ddl -- why\n").ok());  // no trailing comment
  for (const char* near : {"-- require-capability: standalone-index-ddl", "-- requires capability: x",
                           "-- required_capability: x", "--REQUIRECAPABILITIES x"}) {
    s = caps(std::string("select 1;\n") + near + "\n");
    EXPECT_FALSE(s.ok()) << near;
    EXPECT_EQ(s.message().rfind("line 2: malformed requires-capability directive", 0), 0u) << s.message();
  }
}

TEST(LogicRunnerTest, BareColumnRules) {
  // (A) IS [NOT] NULL without a logical operator.
  EXPECT_TRUE(is_bare_column("x IS NULL"));
  EXPECT_TRUE(is_bare_column("a + 1 is not null"));
  EXPECT_FALSE(is_bare_column("a is null and b is null"));
  EXPECT_FALSE(is_bare_column("a is null or b is null"));
  EXPECT_FALSE(is_bare_column("null is null xor x"));
  EXPECT_FALSE(is_bare_column("is_null"));
  // (B) " - " without a logical operator.
  EXPECT_TRUE(is_bare_column("a - b"));
  EXPECT_FALSE(is_bare_column("a-b"));
  EXPECT_FALSE(is_bare_column("a - b and c"));
  // (C) the listed functions, whole name.
  EXPECT_TRUE(is_bare_column("json_extract(a, '$.b')"));
  EXPECT_TRUE(is_bare_column("DATE('now')"));
  EXPECT_TRUE(is_bare_column("epoch_s_frac(x)"));
  EXPECT_FALSE(is_bare_column("date()"));
  EXPECT_FALSE(is_bare_column("cast(json_extract(a, '$.b') as text)"));
  EXPECT_FALSE(is_bare_column("json_extract(a, '$.b') + 1 as x"));
  EXPECT_FALSE(is_bare_column("datetime"));
  EXPECT_FALSE(is_bare_column("count(*)"));
}

TEST(LogicRunnerTest, RendersRows) {
  EXPECT_EQ(render_row({"x is null"}, {Value::Boolean(true)}), Json(true));
  EXPECT_EQ(render_row({"c"}, {Value::Integer(1)}), Json::parse(R"({"c": 1})"));
  EXPECT_EQ(render_row({"a", "b"}, {Value::Text("t"), Value()}), Json::parse(R"({"a": "t", "b": null})"));
  EXPECT_EQ(render_row({"j"}, {Value::Json(R"({"k":[1,2]})")}), Json::parse(R"({"j": {"k": [1, 2]}})"));
  EXPECT_EQ(render_row({"b"}, {Value::Blob(std::string("\x01\x02", 2))}),
            Json::parse(R"({"b": {"0": 1, "1": 2}})"));
  const Json inf = render_row({"r"}, {Value::Real(std::numeric_limits<double>::infinity())})["r"];
  EXPECT_TRUE(inf.is_number_float());  // compared as a number, as the reference does
}

TEST(LogicRunnerTest, JsonComparison) {
  auto eq = [](const char* a, const char* b) { return json_equal(Json::parse(a), Json::parse(b)); };
  EXPECT_TRUE(eq(R"([{"a": 1, "b": 2}])", R"([{"b": 2, "a": 1}])"));  // key order ignored
  EXPECT_FALSE(eq(R"([{"a": 1}])", R"([{"a": 1, "b": 2}])"));
  EXPECT_FALSE(eq(R"([{"a": 1, "c": 2}])", R"([{"a": 1, "b": 2}])"));
  EXPECT_TRUE(eq("[10]", "[10.0]"));  // numbers as doubles
  EXPECT_TRUE(eq("[9223372036854775807]", "[9223372036854775806]"));
  EXPECT_TRUE(eq("[18446744073709551615]", "[1.8446744073709552e19]"));
  EXPECT_FALSE(eq("[1]", "[true]"));  // no coercion
  EXPECT_FALSE(eq("[0]", "[false]"));
  EXPECT_FALSE(eq("[1]", R"(["1"])"));
  EXPECT_FALSE(eq("[null]", "[0]"));
  EXPECT_FALSE(eq("[1, 2]", "[2, 1]"));  // rows in order
  EXPECT_FALSE(eq("[1]", "[1, 1]"));
  EXPECT_TRUE(
      eq(R"([{"j": {"x": [1, {"y": 2, "z": null}]}}])", R"([{"j": {"x": [1.0, {"z": null, "y": 2}]}}])"));
  EXPECT_FALSE(eq(R"([{"j": [1, 2]}])", R"([{"j": [1, 2, 3]}])"));
  EXPECT_TRUE(json_equal(Json(std::nan("")), Json(std::nan(""))));
}

TEST(LogicRunnerTest, ParamValues) {
  EXPECT_EQ(param_value(Json::parse("20.0")).type(), ValueType::kInteger);
  EXPECT_EQ(param_value(Json::parse("20.0")).as_int(), 20);
  EXPECT_EQ(param_value(Json::parse("-3")).as_int(), -3);
  EXPECT_EQ(param_value(Json::parse("1.5")).type(), ValueType::kReal);
  EXPECT_EQ(param_value(Json::parse("\"x\"")).str(), "x");
  EXPECT_EQ(param_value(Json::parse("true")).type(), ValueType::kBoolean);
  EXPECT_TRUE(param_value(Json::parse("null")).is_null());
  const Value obj = param_value(Json::parse(R"({"b": 1, "a": [true]})"));
  EXPECT_EQ(obj.type(), ValueType::kJson);
  EXPECT_EQ(obj.str(), R"({"a":[true],"b":1})");
}

}  // namespace
}  // namespace quereus::logic
