// The json, datetime and extra built-in function families: their helpers (temporal
// calendar and durations, JSON canonical text and paths, json_schema) directly, and the
// functions end to end through SQL.
#include <gtest/gtest.h>

#include "mem_db_test.h"
#include "main/database.h"
#include "functions/json_schema.h"
#include "types/json_value.h"
#include "types/temporal.h"

namespace quereus {
namespace {

// ---------------------------------------------------------------- temporal

TEST(TemporalCalendar, DaysFromCivilRoundTrips) {
  EXPECT_EQ(temporal::days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(temporal::days_from_civil(2000, 3, 1), 11017);
  for (int64_t d : {-800000, -1, 0, 59, 11016, 19723, 2932896}) {
    int64_t y;
    int m, day;
    temporal::civil_from_days(d, &y, &m, &day);
    EXPECT_EQ(temporal::days_from_civil(y, m, day), d);
  }
  EXPECT_EQ(temporal::iso_weekday(temporal::days_from_civil(2024, 7, 22)), 1);  // Monday
  EXPECT_EQ(temporal::iso_weekday(temporal::days_from_civil(2024, 7, 28)), 7);  // Sunday
}

TEST(TemporalCalendar, IsoWeekCrossesYearBoundaries) {
  int w;
  int64_t y;
  temporal::iso_week({2023, 1, 1}, &w, &y);
  EXPECT_EQ(w, 52);
  EXPECT_EQ(y, 2022);
  temporal::iso_week({2024, 12, 30}, &w, &y);
  EXPECT_EQ(w, 1);
  EXPECT_EQ(y, 2025);
  temporal::iso_week({2020, 12, 31}, &w, &y);
  EXPECT_EQ(w, 53);
}

TEST(TemporalParse, ScansIsoShapes) {
  auto p = temporal::scan_iso("2024-01-15T10:30:00.5+02:00");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->has_date && p->has_time && p->has_offset);
  EXPECT_EQ(p->time.nanos, 500000000);
  EXPECT_TRUE(temporal::scan_iso("20240701"));
  EXPECT_TRUE(temporal::scan_iso("12:30"));
  EXPECT_FALSE(temporal::scan_iso("2023-02-29"));
  EXPECT_FALSE(temporal::scan_iso("2024-01-01T24:00"));
  EXPECT_FALSE(temporal::scan_iso("not-a-date"));
  EXPECT_TRUE(temporal::matches_strict_iso("2024-01-01 00:00:00Z", true, false));
  EXPECT_FALSE(temporal::matches_strict_iso("20240101", true, false));
}

TEST(TemporalDuration, ParsesAndPrintsLikeTemporal) {
  auto d = temporal::parse_duration("PT1.5H");
  ASSERT_TRUE(d);
  EXPECT_EQ(temporal::format_duration(*d), "PT1H30M");
  EXPECT_EQ(temporal::format_duration(*temporal::parse_duration("-pt1h")), "-PT1H");
  EXPECT_EQ(temporal::format_duration(*temporal::parse_duration("PT1M30.5S")), "PT1M30.5S");
  EXPECT_EQ(temporal::format_duration(temporal::Duration{}), "PT0S");
  EXPECT_FALSE(temporal::parse_duration("P"));
  EXPECT_FALSE(temporal::parse_duration("PT"));
  EXPECT_FALSE(temporal::parse_duration("P1H"));
  EXPECT_EQ(temporal::format_duration(*temporal::parse_human_duration("2 hours 30 minutes")), "PT2H30M");
  EXPECT_EQ(temporal::format_duration(*temporal::parse_human_duration("1 week")), "P1W");
  EXPECT_FALSE(temporal::parse_human_duration("1.5 hours"));
  EXPECT_FALSE(temporal::parse_human_duration("invalid"));
}

TEST(TemporalDuration, TotalsResolveCalendarUnitsAgainst2024) {
  auto d = temporal::parse_duration("P1M");
  EXPECT_DOUBLE_EQ(temporal::duration_total(*d, temporal::kNanosPerDay), 31);  // January 2024
  EXPECT_DOUBLE_EQ(temporal::duration_total(*temporal::parse_duration("PT90M"), 3600 * temporal::kNanosPerSecond), 1.5);
  EXPECT_LT(temporal::compare_durations(*temporal::parse_duration("PT90M"), *temporal::parse_duration("PT2H")), 0);
}

TEST(TemporalDuration, DateArithmeticConstrainsMonthEnds) {
  temporal::Duration one_month;
  one_month.months = 1;
  auto r = temporal::add_to_date({2024, 1, 31}, one_month);
  EXPECT_EQ(temporal::format_date(r), "2024-02-29");
}

std::string arith(char op, const Value& a, const Value& b) {
  Value out;
  if (!temporal::temporal_arithmetic(op, a, b, &out)) return "<none>";
  return out.is_null() ? "<null>" : out.to_text();
}

TEST(TemporalArithmetic, FollowsTheOperationTable) {
  EXPECT_EQ(arith('-', Value::Text("2024-01-15"), Value::Text("2024-01-01")), "P14D");
  EXPECT_EQ(arith('+', Value::Text("2024-01-01"), Value::Text("P1W")), "2024-01-08");
  EXPECT_EQ(arith('+', Value::Text("P1D"), Value::Text("2024-01-01")), "2024-01-02");
  EXPECT_EQ(arith('-', Value::Text("14:30:00"), Value::Text("09:00:00")), "PT5H30M");
  EXPECT_EQ(arith('+', Value::Text("PT1H"), Value::Text("PT30M")), "PT1H30M");
  EXPECT_EQ(arith('+', Value::Text("P1D"), Value::Text("PT12H")), "P1DT12H");
  EXPECT_EQ(arith('*', Value::Text("PT1H"), Value::Integer(2)), "PT7200S");
  EXPECT_EQ(arith('*', Value::Text("P1Y6M"), Value::Integer(2)), "P2Y12M");
  EXPECT_EQ(arith('/', Value::Text("P1Y6M"), Value::Integer(2)), "P9M");
  EXPECT_EQ(arith('/', Value::Text("PT2H"), Value::Text("PT1H")), "2");
  EXPECT_EQ(arith('/', Value::Text("P6M"), Value::Text("P2M")), "<null>");
  EXPECT_EQ(arith('+', Value::Text("2024-01-01"), Value()), "<null>");
  EXPECT_EQ(arith('+', Value::Integer(1), Value::Integer(2)), "<none>");
  Value out;
  EXPECT_THROW(temporal::temporal_arithmetic('+', Value::Text("2024-01-01"), Value::Text("2024-01-02"), &out), Error);
  EXPECT_EQ(*temporal::negate_timespan("PT90M"), "-PT90M");
}

// types.md "Temporal arithmetic": a number past 2^53 is the reference's bigint, which the
// table rejects as unsupported rather than scaling it through a lossy double.
TEST(TemporalArithmetic, RefusesANumberPastTheSafeIntegerRange) {
  constexpr int64_t kMaxSafe = (int64_t{1} << 53) - 1;
  EXPECT_EQ(arith('*', Value::Text("PT1S"), Value::Integer(kMaxSafe)), "PT9007199254740991S");
  EXPECT_EQ(arith('*', Value::Text("PT1S"), Value::Integer(-kMaxSafe)), "-PT9007199254740991S");
  Value out;
  for (int64_t n : {kMaxSafe + 1, -kMaxSafe - 1, INT64_MAX}) {
    EXPECT_THROW(temporal::temporal_arithmetic('*', Value::Text("P1M"), Value::Integer(n), &out), Error);
    EXPECT_THROW(temporal::temporal_arithmetic('*', Value::Integer(n), Value::Text("PT0S"), &out), Error);
    EXPECT_THROW(temporal::temporal_arithmetic('/', Value::Text("P1D"), Value::Integer(n), &out), Error);
  }
  EXPECT_EQ(arith('*', Value::Text("PT1S"), Value::Real(2.0)), "PT2S");
  EXPECT_EQ(arith('*', Value::Text("PT1S"), Value()), "<null>");
}

TEST(TemporalConversion, ProducesCanonicalText) {
  std::string err;
  EXPECT_EQ(*temporal::to_date_text(Value::Text("2024-01-15T23:30:00-05:00"), &err), "2024-01-16");
  EXPECT_EQ(*temporal::to_time_text(Value::Text("09:00"), &err), "09:00:00");
  EXPECT_EQ(*temporal::to_datetime_text(Value::Text("2024-01-15"), &err), "2024-01-15T00:00:00");
  EXPECT_EQ(*temporal::to_timespan_text(Value::Integer(3600), &err), "PT3600S");
  EXPECT_EQ(*temporal::to_timespan_text(Value::Text("90 minutes"), &err), "PT90M");
  EXPECT_FALSE(temporal::to_date_text(Value::Text("junk"), &err));
  EXPECT_NE(err.find("Cannot convert 'junk' to DATE"), std::string::npos);
  EXPECT_FALSE(temporal::to_timespan_text(Value::Boolean(true), &err));
}

// ---------------------------------------------------------------- json

TEST(JsonValue, CanonicalTextSortsKeysAndPrintsNumbersLikeJavaScript) {
  auto j = jsonv::parse(R"({"b": 1.0, "a": [1e3, 0.5, 1e21, "x\n"]})");
  ASSERT_TRUE(j);
  EXPECT_EQ(jsonv::canonical(*j), R"({"a":[1000,0.5,1e+21,"x\n"],"b":1})");
  EXPECT_STREQ(jsonv::type_name(*jsonv::parse("1.0")), "integer");
  EXPECT_STREQ(jsonv::type_name(*jsonv::parse("1.5")), "real");
  EXPECT_FALSE(jsonv::parse("{missing_quotes: 1}"));
  EXPECT_FALSE(jsonv::parse(""));
}

TEST(JsonValue, ObjectsKeepInsertionOrderInTextButNotInCanonicalForm) {
  auto j = jsonv::parse(R"({"b": 1, "a": {"z": 1, "y": 2}, "b": 3})");
  ASSERT_TRUE(j);
  EXPECT_EQ(jsonv::text(*j), R"({"b":3,"a":{"z":1,"y":2}})");  // a repeated key: first place, last value
  EXPECT_EQ(jsonv::canonical(*j), R"({"a":{"y":2,"z":1},"b":3})");
  jsonv::Json o = jsonv::Json::object();
  o["name"] = "Alice";
  o["age"] = 30;
  o["name"] = "Ann";  // replaced in place
  EXPECT_EQ(jsonv::text(o), R"({"name":"Ann","age":30})");
  o.erase("name");
  o["name"] = "Bo";  // removed, then appended
  EXPECT_EQ(jsonv::text(o), R"({"age":30,"name":"Bo"})");
}

TEST(JsonValue, BigObjectsAreIndexedAndStayConsistentAcrossErase) {
  jsonv::Json o = jsonv::Json::object();
  const int n = 50000;
  for (int i = n; i > 0; --i) o["k" + std::to_string(i)] = i;  // descending: order is not sorted
  ASSERT_EQ(o.size(), static_cast<size_t>(n));
  EXPECT_EQ(o.begin().key(), "k" + std::to_string(n));
  EXPECT_EQ(o["k7"].get<int>(), 7);
  o.erase("k7");
  EXPECT_FALSE(o.contains("k7"));
  EXPECT_EQ(o.at("k8").get<int>(), 8);
  o["k7"] = 70;
  EXPECT_EQ(std::prev(o.end()).key(), "k7");
  const jsonv::Json copy = o;  // a copy starts without an index; const lookups still work
  EXPECT_EQ(copy.at("k7").get<int>(), 70);
  EXPECT_EQ(copy.count("k9"), 1u);
  EXPECT_EQ(jsonv::compare(copy, o), 0);
}

TEST(JsonValue, StructuralComparisonIgnoresKeyOrder) {
  EXPECT_EQ(jsonv::compare_text(R"({"a":1,"b":2})", R"({"b":2,"a":1})"), 0);
  EXPECT_LT(jsonv::compare_text(R"({"a":2})", R"({"a":10})"), 0);
  EXPECT_LT(jsonv::compare_text("null", "false"), 0);
  EXPECT_LT(jsonv::compare_text("[1,2]", "[1,2,0]"), 0);
}

TEST(JsonValue, ElementsFollowTheReferenceRules) {
  EXPECT_EQ(jsonv::canonical(jsonv::from_sql_element(Value::Text("1"))), "1");
  EXPECT_EQ(jsonv::canonical(jsonv::from_sql_element(Value::Text("two"))), "\"two\"");
  EXPECT_EQ(jsonv::canonical(jsonv::from_sql_element(Value::Blob("\x01"))), "null");
  EXPECT_EQ(jsonv::canonical(jsonv::from_sql_element(Value::Real(1.0 / 0.0))), "null");
  EXPECT_FALSE(jsonv::from_sql_document(Value::Blob("x")));
}

TEST(JsonValue, ResolvesPaths) {
  auto doc = *jsonv::parse(R"({"a":[10,{"b":99}],"c.d":1})");
  auto t = jsonv::resolve(doc, "$.a[1].b");
  ASSERT_TRUE(t && t->value);
  EXPECT_EQ(t->value->get<int>(), 99);
  t = jsonv::resolve(doc, R"($."c.d")");
  ASSERT_TRUE(t && t->value);
  t = jsonv::resolve(doc, "$.a[#-1].b");
  ASSERT_TRUE(t && t->value);
  t = jsonv::resolve(doc, "$.zz");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->value, nullptr);
  EXPECT_FALSE(jsonv::resolve(doc, "$[0"));
  EXPECT_FALSE(jsonv::resolve(doc, "$.a[-1]"));
  EXPECT_FALSE(jsonv::resolve(doc, ""));
  EXPECT_FALSE(jsonv::resolve(doc, "$.zz.yy"));
  EXPECT_TRUE(jsonv::resolve(doc, "$")->is_root);
}

TEST(JsonSchema, ValidatesTypeScriptLikeShapes) {
  auto check = [](const char* json, const char* schema) {
    auto s = jsonv::Schema::compile(schema);
    return s && s->matches(*jsonv::parse(json));
  };
  EXPECT_TRUE(check("[1, 2.5]", "number[]"));
  EXPECT_FALSE(check(R"([1, "x"])", "number[]"));
  EXPECT_TRUE(check(R"({"x": 1, "y": 2})", "{ x: number }"));
  EXPECT_FALSE(check("{}", "{ x: number }"));
  EXPECT_TRUE(check("{}", "{ x?: number }"));
  EXPECT_TRUE(check(R"({"users": [{"name": "A", "age": 3}]})", "{ users: { name: string, age: number }[] }"));
  EXPECT_TRUE(check(R"("a")", "'a' | 'b'"));
  EXPECT_TRUE(check("[1, \"x\"]", "[number, string]"));
  EXPECT_FALSE(jsonv::Schema::compile("unknown_type"));
  EXPECT_FALSE(jsonv::Schema::compile("!!!invalid!!!"));
}

// ---------------------------------------------------------------- SQL

class FunctionsSqlTest : public MemDbTest {
 protected:
  // The first column of the first row, or an "error: …" string.
  Value eval(const std::string& sql, std::string* error = nullptr) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db_->prepare(sql, &stmts);
    if (!st.ok()) {
      if (error) *error = st.to_string();
      return Value();
    }
    Value result;
    for (auto& s : stmts) {
      bool has = true, first = true;
      while (has) {
        st = s->step(&has);
        if (!st.ok()) {
          if (error) *error = st.to_string();
          return Value();
        }
        if (has && first) { result = s->row()[0]; first = false; }
      }
    }
    return result;
  }
  std::string text(const std::string& sql) {
    std::string error;
    Value v = eval(sql, &error);
    if (!error.empty()) return "error: " + error;
    return v.is_null() ? "NULL" : v.to_text();
  }
};

TEST_F(FunctionsSqlTest, JsonFunctions) {
  EXPECT_EQ(text(R"(select json_extract('{"a":[10,20]}', '$.a[1]'))"), "20");
  EXPECT_EQ(text(R"(select json_extract('{"a":{"b":1}}', '$.a'))"), R"({"b":1})");
  EXPECT_EQ(text(R"(select json_set('[1]', '$[3]', 'x'))"), R"([1,null,null,"x"])");
  EXPECT_EQ(text(R"(select json_patch('{"a":1}', '[{"op":"move","from":"/a","path":"/b"}]'))"), R"({"b":1})");
  EXPECT_EQ(text(R"(select json_quote('say "hi"'))"), R"("say \"hi\"")");
  EXPECT_EQ(text("select json_type('[1]')"), "array");
  EXPECT_EQ(text("select typeof(json_array(1, 2))"), "json");
  EXPECT_EQ(text("select json('not json')").rfind("error: ", 0), 0u);
  EXPECT_EQ(text("select count(*) from json_each('[1,2,3]')"), "3");
  EXPECT_EQ(text(R"(select fullkey from json_tree('{"a":[5]}') where atom = 5)"), "$.a[0]");
}

TEST_F(FunctionsSqlTest, DatetimeFunctions) {
  EXPECT_EQ(text("select strftime('%Y-%m-%d %H:%M:%S', 2451545)"), "2000-01-01 12:00:00");
  EXPECT_EQ(text("select date('2024-01-31', '+1 month')"), "2024-02-29");
  EXPECT_EQ(text("select date('2024-07-22', 'weekday 0')"), "2024-07-28");
  EXPECT_EQ(text("select datetime(1721997045.123, 'unixepoch', 'subsec')"), "2024-07-26 12:30:45.123");
  EXPECT_EQ(text("select epoch_ms('2024-07-26 12:30:45.123')"), "1721997045123");
  EXPECT_EQ(text("select epoch_s('20240101')"), "NULL");
  EXPECT_EQ(text("select strftime('%V %G %U', '2023-01-01')"), "52 2022 %U");
  EXPECT_EQ(text("select julianday('2024-01-01') - julianday('2023-01-01')"), "365");
  EXPECT_EQ(text("select date('2024-01-15')"), "2024-01-15");
  EXPECT_EQ(text("select datetime('2024-01-15 09:00')"), "2024-01-15T09:00:00");
  EXPECT_EQ(text("select timespan('2 hours 30 minutes')"), "PT2H30M");
  EXPECT_EQ(text("select timespan_total_hours('P2D')"), "48");
  EXPECT_NE(text("select timespan('invalid')").find("Cannot convert to TIMESPAN"), std::string::npos);
}

TEST_F(FunctionsSqlTest, ExtraFunctions) {
  EXPECT_EQ(text("select sqrt(2)"), "1.4142135623730951");
  EXPECT_EQ(text("select sqrt(-1)"), "NULL");
  EXPECT_EQ(text("select least('abc', null, 1)"), "abc");
  EXPECT_EQ(text("select greatest('abc', null, 1)"), "1");
  EXPECT_EQ(text("select clamp(50, 0, 10)"), "10");
  EXPECT_EQ(text("select reverse('a😀b')"), "b😀a");
  EXPECT_EQ(text("select lpad('hi', 7, 'ab')"), "ababahi");
  EXPECT_EQ(text("select integer(' -456 ')"), "-456");
  EXPECT_EQ(text("select integer('')"), "NULL");
  EXPECT_NE(text("select integer('hello')").find("Cannot convert to INTEGER"), std::string::npos);
  EXPECT_EQ(text("select boolean('off')"), "false");
  EXPECT_EQ(text("select text(x'6162')"), "ab");  // UTF-8 decoded (functions.md), not hex
  EXPECT_EQ(text("select printf('%5.2f|%-3d|%q', 3.14159, 7, 'it''s')"), " 3.14|7  |it''s");
  EXPECT_EQ(text("select length(randomblob(16))"), "16");
  EXPECT_EQ(text("select hex(unhex('00ff'))"), "00FF");
}

TEST_F(FunctionsSqlTest, StatisticalAggregates) {
  ASSERT_TRUE(db_->exec("create table s (id integer primary key, v real);"
                        "insert into s values (1, 10.0), (2, 20.0), (3, 30.0)").ok());
  EXPECT_EQ(text("select var_pop(v) from s"), "66.66666666666669");
  EXPECT_EQ(text("select var_samp(v) from s"), "100");
  EXPECT_EQ(text("select stddev_pop(v) from s"), "8.16496580927726");
  EXPECT_EQ(text("select json_group_array(v) from s"), "[10,20,30]");
  EXPECT_EQ(text("select string_concat(cast(id as text)) from s"), "1,2,3");
}

}  // namespace
}  // namespace quereus
