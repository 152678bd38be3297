// Unit tests for the value type, comparison and conversions.
#include <gtest/gtest.h>

#include <cmath>

#include "planner/scalar_expr.h"
#include "types/compare.h"
#include "types/value.h"

namespace quereus {
namespace {

TEST(ValueTest, ConstructorsAndAccessors) {
  EXPECT_TRUE(Value().is_null());
  EXPECT_EQ(Value::Integer(-7).as_int(), -7);
  EXPECT_EQ(Value::Real(2.5).as_real(), 2.5);
  EXPECT_TRUE(Value::Boolean(true).as_bool());
  EXPECT_EQ(Value::Text("héllo").str(), "héllo");
  EXPECT_EQ(Value::Blob(std::string("\0\1", 2)).str().size(), 2u);
  EXPECT_EQ(Value::Json("{\"a\":1}").type(), ValueType::kJson);
}

TEST(ValueTest, BooleanIsItsOwnType) {
  EXPECT_FALSE(Value::Boolean(true) == Value::Integer(1));
  EXPECT_EQ(std::string(value_type_name(Value::Boolean(false).type())), "boolean");
}

TEST(ValueTest, TextRendering) {
  EXPECT_EQ(Value::Integer(INT64_MIN).to_text(), "-9223372036854775808");
  EXPECT_EQ(Value::Real(1.0).to_text(), "1");
  EXPECT_EQ(Value::Real(0.1).to_text(), "0.1");
  EXPECT_EQ(Value::Real(3.14).to_text(), "3.14");
  EXPECT_EQ(Value::Real(1e21).to_text(), "1e+21");
  EXPECT_EQ(Value::Real(1e-7).to_text(), "1e-7");
  EXPECT_EQ(Value::Real(123456789012.0).to_text(), "123456789012");
  EXPECT_EQ(Value::Real(INFINITY).to_text(), "Infinity");
  EXPECT_EQ(Value::Boolean(true).to_text(), "true");
}

TEST(CompareTest, StorageClassOrder) {
  // NULL < numbers < text < blob
  std::vector<Value> ordered = {Value(), Value::Integer(-1), Value::Real(0.5), Value::Integer(1),
                                Value::Text("a"), Value::Text("b"), Value::Blob("\x00"), Value::Blob("\xff")};
  for (size_t i = 0; i + 1 < ordered.size(); ++i)
    EXPECT_LT(compare_values(ordered[i], ordered[i + 1]), 0) << i;
}

TEST(CompareTest, IntegersAndRealsCompareByValueAtFullPrecision) {
  EXPECT_EQ(compare_values(Value::Integer(2), Value::Real(2.0)), 0);
  EXPECT_LT(compare_values(Value::Integer(2), Value::Real(2.5)), 0);
  // 2^53 + 1 is not representable as a double; the integer is still larger.
  EXPECT_GT(compare_values(Value::Integer(9007199254740993LL), Value::Real(9007199254740992.0)), 0);
  EXPECT_LT(compare_values(Value::Integer(INT64_MAX), Value::Real(1e19)), 0);
}

TEST(CompareTest, CollationsApplyToText) {
  EXPECT_NE(compare_values(Value::Text("ABC"), Value::Text("abc")), 0);
  EXPECT_EQ(compare_values(Value::Text("ABC"), Value::Text("abc"), &Collation::nocase()), 0);
  EXPECT_EQ(compare_values(Value::Text("abc  "), Value::Text("abc"), &Collation::rtrim()), 0);
}

TEST(CompareTest, SqlCompareIsUnknownWithNull) {
  EXPECT_FALSE(sql_compare(Value(), Value::Integer(1), nullptr).has_value());
  EXPECT_EQ(*sql_compare(Value::Integer(1), Value::Integer(1), nullptr), 0);
}

TEST(ConversionTest, Cast) {
  EXPECT_EQ(cast_value(Value::Real(3.7), QRS_LT_INTEGER).as_int(), 3);
  EXPECT_EQ(cast_value(Value::Real(-2.9), QRS_LT_INTEGER).as_int(), -2);
  EXPECT_EQ(cast_value(Value::Text("42"), QRS_LT_INTEGER).as_int(), 42);
  EXPECT_EQ(cast_value(Value::Text("abc"), QRS_LT_INTEGER).as_int(), 0);
  EXPECT_EQ(cast_value(Value::Text("3.14"), QRS_LT_REAL).as_real(), 3.14);
  EXPECT_EQ(cast_value(Value::Integer(42), QRS_LT_TEXT).str(), "42");
  EXPECT_TRUE(cast_value(Value::Integer(42), QRS_LT_BOOLEAN).as_bool());
  EXPECT_EQ(cast_value(Value::Text("42"), QRS_LT_NUMERIC).type(), ValueType::kInteger);
  EXPECT_EQ(cast_value(Value::Text("3.5"), QRS_LT_NUMERIC).type(), ValueType::kReal);
  EXPECT_TRUE(cast_value(Value(), QRS_LT_INTEGER).is_null());
}

// types.md "Value to text": one conversion — a JSON string scalar renders bare, any other
// document as its own text, a blob UTF-8-decoded (lossy); CAST to TEXT / BLOB uses it.
TEST(ConversionTest, ValueToTextRendersAJsonStringScalarBare) {
  EXPECT_EQ(value_to_text(Value::Json("\"hello\"")), "hello");
  EXPECT_EQ(value_to_text(Value::Json("\"a\\\"b\"")), "a\"b");
  EXPECT_EQ(value_to_text(Value::Json("{\"b\":1,\"a\":2}")), "{\"b\":1,\"a\":2}");
  EXPECT_EQ(value_to_text(Value::Json("[\"x\"]")), "[\"x\"]");
  EXPECT_EQ(value_to_text(Value::Json("9")), "9");
  EXPECT_EQ(value_to_text(Value::Blob("ab")), "ab");
  EXPECT_EQ(value_to_text(Value::Blob("\xff")), value_to_text(Value::Blob("\xfe")));
  EXPECT_EQ(value_to_text(Value::Boolean(true)), "true");
  EXPECT_EQ(cast_value(Value::Json("\"hello\""), QRS_LT_TEXT).str(), "hello");
  EXPECT_EQ(cast_value(Value::Json("\"hello\""), QRS_LT_BLOB).str(), "hello");
  EXPECT_EQ(cast_value(Value::Json("{\"a\":1}"), QRS_LT_BLOB).str(), "{\"a\":1}");
}

TEST(ConversionTest, TypeNames) {
  EXPECT_EQ(logical_type_from_name("INTEGER"), QRS_LT_INTEGER);
  EXPECT_EQ(logical_type_from_name("bigint"), QRS_LT_INTEGER);
  EXPECT_EQ(logical_type_from_name("varchar(10)"), QRS_LT_TEXT);
  EXPECT_EQ(logical_type_from_name("double precision"), QRS_LT_REAL);
  EXPECT_EQ(logical_type_from_name("BOOLEAN"), QRS_LT_BOOLEAN);
  EXPECT_EQ(logical_type_from_name(""), QRS_LT_ANY);
  EXPECT_EQ(logical_type_from_name("decimal(10, 2)"), QRS_LT_NUMERIC);
}

TEST(ConversionTest, ParseNumber) {
  EXPECT_EQ(parse_number("12", false).as_int(), 12);
  EXPECT_EQ(parse_number(" -3.5e1 ", false).as_real(), -35.0);
  EXPECT_TRUE(parse_number("12abc", false).is_null());
  EXPECT_EQ(parse_number("12abc", true).as_int(), 12);
  EXPECT_TRUE(parse_number(".", false).is_null());
  EXPECT_EQ(parse_number(".5", false).as_real(), 0.5);
  // An integer spelling past int64 stays exact (a big integer), never a rounded real.
  EXPECT_EQ(parse_number("99999999999999999999", false).type(), ValueType::kBigInt);
  EXPECT_EQ(parse_number("+99999999999999999999", false).to_text(), "99999999999999999999");
  EXPECT_EQ(parse_number("-0009223372036854775808", false).type(), ValueType::kInteger);
}

TEST(PatternTest, LikeAndGlob) {
  EXPECT_TRUE(like_match("A%", "ABC", -1));
  EXPECT_FALSE(like_match("a%", "ABC", -1));  // LIKE is case-sensitive
  EXPECT_TRUE(like_match("_b_", "abc", -1));
  EXPECT_FALSE(like_match("a_", "abc", -1));
  EXPECT_TRUE(like_match("10\\%", "10%", '\\'));
  EXPECT_TRUE(glob_match("a*", "abc"));
  EXPECT_FALSE(glob_match("A*", "abc"));
  EXPECT_TRUE(glob_match("[a-c]?", "bz"));
  // Characters, not bytes, compared exactly.
  EXPECT_FALSE(like_match("\xc3\xa9" "cole", "\xc3\x89" "cole", -1));  // 'école' vs 'École'
  EXPECT_TRUE(like_match("%\xc3\xa9", "caf\xc3\xa9", -1));
  EXPECT_FALSE(like_match("e", "\xc3\xa9", -1));  // accents are not folded
  EXPECT_TRUE(like_match("a_c", "a\xf0\x9f\x99\x82" "c", -1));  // one emoji is one '_'
  EXPECT_FALSE(like_match("a__c", "a\xf0\x9f\x99\x82" "c", -1));
  EXPECT_TRUE(glob_match("a?c", "a\xf0\x9f\x99\x82" "c"));
  EXPECT_TRUE(glob_match("[\xc3\xa0-\xc3\xbc]", "\xc3\xa9"));  // [à-ü] holds 'é'
  EXPECT_FALSE(glob_match("\xc3\xa9", "\xc3\x89"));
  EXPECT_TRUE(like_match("\xff%", "\xff\xfe", -1));  // bytes that are not UTF-8 match themselves
}

}  // namespace
}  // namespace quereus
