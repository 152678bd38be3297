// Integers outside int64 (ValueType::kBigInt): the value form, its arithmetic, order and
// hashing, and the SQL behaviour end to end, including the refusal to store one.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/result_json.h"
#include "mem_db_test.h"
#include "types/big_int.h"
#include "types/compare.h"
#include "types/value.h"

namespace quereus {
namespace {

Value big(const std::string& digits) {
  bool negative = digits[0] == '-';
  return bigint::from_digits(negative, std::string_view(digits).substr(negative ? 1 : 0));
}

// ---------------------------------------------------------------- the value form

TEST(BigIntValueTest, CanonicalFormIsIntegerWhenItFits) {
  EXPECT_EQ(big("9223372036854775807").type(), ValueType::kInteger);
  EXPECT_EQ(big("-9223372036854775808").type(), ValueType::kInteger);
  EXPECT_EQ(big("0000000000000000000000042").type(), ValueType::kInteger);
  EXPECT_EQ(big("-0").as_int(), 0);
  Value b = big("9223372036854775808");
  EXPECT_EQ(b.type(), ValueType::kBigInt);
  EXPECT_EQ(b.to_text(), "9223372036854775808");
  EXPECT_EQ(big("-00099999999999999999999").to_text(), "-99999999999999999999");
  EXPECT_EQ(std::string(value_type_name(b.type())), "integer");
  EXPECT_TRUE(b.is_integer());
  EXPECT_TRUE(b.is_numeric());
}

TEST(BigIntValueTest, SizeOfValueIsUnchanged) {
  // The digits live in the string member every Value already has.
  EXPECT_EQ(sizeof(Value), 2 * sizeof(int64_t) + sizeof(std::string));
}

TEST(BigIntValueTest, AsIntSaturates) {
  EXPECT_EQ(big("99999999999999999999").as_int(), INT64_MAX);
  EXPECT_EQ(big("-99999999999999999999").as_int(), INT64_MIN);
}

TEST(BigIntValueTest, DoubleConversions) {
  EXPECT_EQ(big("100000000000000000000").to_double(), 1e20);
  EXPECT_EQ(bigint::from_double(1e20).to_text(), "100000000000000000000");
  EXPECT_EQ(bigint::from_double(-1e20).to_text(), "-100000000000000000000");
  EXPECT_EQ(bigint::from_double(9223372036854775808.0).to_text(), "9223372036854775808");
  EXPECT_EQ(bigint::from_double(-9223372036854775808.0).type(), ValueType::kInteger);
  EXPECT_EQ(bigint::from_double(-2.9).as_int(), -2);
  double d = 0;
  EXPECT_TRUE(bigint::exact_double(big("18446744073709551616"), &d));
  EXPECT_EQ(d, 18446744073709551616.0);
  EXPECT_FALSE(bigint::exact_double(big("18446744073709551617"), &d));
}

TEST(BigIntValueTest, ArithmeticNormalizes) {
  Value max = Value::Integer(INT64_MAX), one = Value::Integer(1);
  Value over = bigint::arith('+', max, one);
  EXPECT_EQ(over.to_text(), "9223372036854775808");
  Value back = bigint::arith('-', over, one);
  ASSERT_EQ(back.type(), ValueType::kInteger);
  EXPECT_EQ(back.as_int(), INT64_MAX);
  EXPECT_EQ(bigint::arith('*', max, max).to_text(), "85070591730234615847396907784232501249");
  EXPECT_EQ(bigint::arith('/', big("-99999999999999999999"), Value::Integer(7)).to_text(), "-14285714285714285714");
  EXPECT_EQ(bigint::arith('%', big("-99999999999999999999"), Value::Integer(7)).as_int(), -1);
  EXPECT_TRUE(bigint::arith('/', over, Value::Integer(0)).is_null());
  EXPECT_TRUE(bigint::arith('%', over, Value::Integer(0)).is_null());
  EXPECT_EQ(bigint::negate(Value::Integer(INT64_MIN)).to_text(), "9223372036854775808");
  EXPECT_EQ(bigint::negate(over).as_int(), INT64_MIN);
  EXPECT_EQ(bigint::abs(big("-99999999999999999999")).to_text(), "99999999999999999999");
}

TEST(BigIntValueTest, AccumulatorOverflowsBothWays) {
  bigint::Accumulator acc;
  acc.add(INT64_MAX);
  acc.add(INT64_MAX);
  EXPECT_EQ(acc.total().to_text(), "18446744073709551614");
  acc.add(INT64_MIN);
  acc.add(INT64_MIN);
  EXPECT_EQ(acc.total().as_int(), -2);
  EXPECT_EQ(acc.total().type(), ValueType::kInteger);
  acc.add(big("-99999999999999999999"));
  EXPECT_EQ(acc.total().to_text(), "-100000000000000000001");
  EXPECT_EQ(acc.to_double(), -1e20);
}

TEST(BigIntCompareTest, OrdersExactlyAgainstIntegersAndReals) {
  Value p63 = big("9223372036854775808"), m63 = big("-9223372036854775809");
  EXPECT_GT(compare_values(p63, Value::Integer(INT64_MAX)), 0);
  EXPECT_LT(compare_values(Value::Integer(INT64_MAX), p63), 0);
  EXPECT_LT(compare_values(m63, Value::Integer(INT64_MIN)), 0);
  EXPECT_LT(compare_values(m63, p63), 0);
  EXPECT_LT(compare_values(big("99999999999999999999"), big("100000000000000000000")), 0);
  EXPECT_LT(compare_values(big("-100000000000000000000"), big("-99999999999999999999")), 0);
  EXPECT_EQ(compare_values(big("99999999999999999999"), big("99999999999999999999")), 0);
  // Against reals: 2^63 is a double, 2^63 + 1 is not; no rounding through double.
  EXPECT_EQ(compare_values(p63, Value::Real(9223372036854775808.0)), 0);
  EXPECT_GT(compare_values(big("9223372036854775809"), Value::Real(9223372036854775808.0)), 0);
  EXPECT_LT(compare_values(Value::Real(9223372036854775808.0), big("9223372036854775809")), 0);
  EXPECT_LT(compare_values(Value::Integer(INT64_MAX), Value::Real(9223372036854775808.0)), 0);
  EXPECT_GT(compare_values(p63, Value::Real(9.2e18)), 0);
  EXPECT_LT(compare_values(p63, Value::Real(INFINITY)), 0);
  EXPECT_GT(compare_values(m63, Value::Real(-INFINITY)), 0);
  EXPECT_GT(compare_values(p63, Value::Real(NAN)), 0);
  EXPECT_LT(compare_values(p63, Value::Text("")), 0);
}

TEST(BigIntCompareTest, HashAgreesWithEquality) {
  EXPECT_EQ(hash_value(big("100000000000000000000")), hash_value(Value::Real(1e20)));
  EXPECT_EQ(hash_value(big("99999999999999999999")), hash_value(big("99999999999999999999")));
  EXPECT_EQ(hash_value(Value::Integer(INT64_MIN)), hash_value(Value::Real(-9223372036854775808.0)));
  EXPECT_EQ(hash_value(Value::Integer(5)), hash_value(Value::Real(5.0)));
}

TEST(BigIntJsonTest, RendersExactDigits) {
  EXPECT_EQ(json_value_text(big("99999999999999999999999999")), "99999999999999999999999999");
  EXPECT_EQ(json_value_text(big("-99999999999999999999")), "-99999999999999999999");
  EXPECT_EQ(json_text(value_to_json(big("18446744073709551615"))), "18446744073709551615");
  EXPECT_EQ(row_json_text({"a", "b", "a"}, {Value::Integer(1), big("99999999999999999999"), Value::Text("x")}),
            R"({"a":"x","b":99999999999999999999})");
  EXPECT_EQ(row_json_text({"a"}, {Value::Integer(1)}), R"({"a":1})");
}

// A blob renders as the object of its bytes (FORMAT.md 6.2), built in one pass: 256 KiB is
// instant here and took minutes when each key was looked up before it was added.
TEST(ResultJsonTest, BlobIsTheObjectOfItsBytesBuiltInOnePass) {
  EXPECT_EQ(json_value_text(Value::Blob(std::string("\x00\xff\x41", 3))), R"({"0":0,"1":255,"2":65})");
  EXPECT_EQ(json_value_text(Value::Blob("")), "{}");
  const std::string big_blob(256 * 1024, '\x07');
  const std::string text = json_value_text(Value::Blob(big_blob));
  EXPECT_EQ(text.substr(0, 13), R"({"0":7,"1":7,)");
  EXPECT_NE(text.find(R"("262143":7})"), std::string::npos);
}

// ---------------------------------------------------------------- SQL

class BigIntSqlTest : public MemDbTest {
 protected:
  // Every row of the last statement, each cell as its text ("NULL" for NULL), cells
  // joined by '|' and rows by ','; or "error: CODE: message".
  std::string rows(const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db_->prepare(sql, &stmts);
    if (!st.ok()) return "error: " + st.to_string();
    std::string out;
    for (auto& s : stmts) {
      out.clear();
      bool has = true;
      while (true) {
        st = s->step(&has);
        if (!st.ok()) return "error: " + st.to_string();
        if (!has) break;
        if (!out.empty()) out += ',';
        const Row& r = s->row();
        for (size_t i = 0; i < r.size(); ++i) {
          if (i) out += '|';
          out += r[i].is_null() ? "NULL" : r[i].to_text();
        }
      }
    }
    return out;
  }
  Value one(const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    EXPECT_TRUE(db_->prepare(sql, &stmts).ok());
    bool has = false;
    EXPECT_TRUE(stmts.back()->step(&has).ok());
    EXPECT_TRUE(has);
    return has ? stmts.back()->row()[0] : Value();
  }
};

TEST_F(BigIntSqlTest, Literals) {
  EXPECT_EQ(one("select 99999999999999999999999999").type(), ValueType::kBigInt);
  EXPECT_EQ(rows("select 99999999999999999999999999, typeof(99999999999999999999999999)"),
            "99999999999999999999999999|integer");
  EXPECT_EQ(one("select 9223372036854775807").type(), ValueType::kInteger);
  EXPECT_EQ(one("select 9223372036854775808").type(), ValueType::kBigInt);
  // The negated literal lands back inside int64.
  Value min = one("select -9223372036854775808");
  EXPECT_EQ(min.type(), ValueType::kInteger);
  EXPECT_EQ(min.as_int(), INT64_MIN);
  EXPECT_EQ(one("select 1.5e20").type(), ValueType::kReal);
}

TEST_F(BigIntSqlTest, Casts) {
  EXPECT_EQ(rows("select cast('99999999999999999999999999' as integer)"), "99999999999999999999999999");
  EXPECT_EQ(rows("select cast('+9223372036854775808' as integer), cast('-9223372036854775809abc' as integer)"),
            "9223372036854775808|-9223372036854775809");
  EXPECT_EQ(rows("select cast('  99999999999999999999  ' as numeric), typeof(cast('99999999999999999999' as numeric))"),
            "99999999999999999999|integer");
  EXPECT_EQ(one("select cast('99999999999999999999.0' as numeric)").type(), ValueType::kReal);
  EXPECT_EQ(rows("select integer('123456789012345678901234'), integer(1e20)"),
            "123456789012345678901234|100000000000000000000");
  EXPECT_EQ(rows("select cast(1e20 as integer), cast(-1.5e19 as integer)"),
            "100000000000000000000|-15000000000000000000");
  EXPECT_EQ(rows("select cast(99999999999999999999 as text), cast(99999999999999999999 as real)"),
            "99999999999999999999|100000000000000000000");
  EXPECT_EQ(one("select cast(99999999999999999999 as real)").type(), ValueType::kReal);
  EXPECT_EQ(rows("select cast(99999999999999999999 as boolean)"), "true");
  EXPECT_EQ(rows("select json_array(99999999999999999999, 1)"), R"(["99999999999999999999",1])");
}

TEST_F(BigIntSqlTest, ArithmeticOverflowsIntoBigIntegers) {
  EXPECT_EQ(rows("select 9223372036854775807 + 1, -9223372036854775808 - 1"),
            "9223372036854775808|-9223372036854775809");
  EXPECT_EQ(rows("select 9223372036854775807 * 2, -9223372036854775807 * 3"),
            "18446744073709551614|-27670116110564327421");
  EXPECT_EQ(rows("select (-9223372036854775807 - 1) / -1, -(-9223372036854775807 - 1)"),
            "9223372036854775808|9223372036854775808");
  EXPECT_EQ(rows("select abs(-9223372036854775807 - 1), abs(-99999999999999999999)"),
            "9223372036854775808|99999999999999999999");
  // ... and back: a result inside int64 is a plain integer again.
  Value back = one("select (9223372036854775807 + 10) - 20");
  EXPECT_EQ(back.type(), ValueType::kInteger);
  EXPECT_EQ(back.as_int(), INT64_MAX - 10);
  EXPECT_EQ(one("select 99999999999999999999 - 99999999999999999998").type(), ValueType::kInteger);
  EXPECT_EQ(rows("select 99999999999999999999 / 3, 99999999999999999999 % 7, -99999999999999999999 % 7"),
            "33333333333333333333|1|-1");
  EXPECT_EQ(rows("select 99999999999999999999 / 0, 99999999999999999999 % 0"), "NULL|NULL");
  EXPECT_EQ(rows("select ~99999999999999999999, ~(-9223372036854775807 - 1)"),
            "-100000000000000000000|9223372036854775807");
  // A big integer meets an integral real exactly; a fractional real in double.
  EXPECT_EQ(rows("select 99999999999999999999 + 1.0, 99999999999999999999 * 2.0"),
            "100000000000000000000|199999999999999999998");
  EXPECT_EQ(one("select 99999999999999999999 + 0.5").type(), ValueType::kReal);
  EXPECT_EQ(rows("select '99999999999999999999' + 1, 99999999999999999999 + '1'"),
            "100000000000000000000|100000000000000000000");
  // Bitwise operators stay 64-bit.
  EXPECT_EQ(rows("select 99999999999999999999 & 1").rfind("error: RANGE: integer value 99999999999999999999", 0), 0u);
}

TEST_F(BigIntSqlTest, ComparisonsAtTheBoundary) {
  EXPECT_EQ(rows("select 9223372036854775808 > 9223372036854775807, -9223372036854775809 < -9223372036854775808"),
            "true|true");
  EXPECT_EQ(rows("select 9223372036854775808 = 9223372036854775808.0, 9223372036854775809 = 9223372036854775808.0"),
            "true|false");
  EXPECT_EQ(rows("select 9223372036854775809 > 9223372036854775808.0, 1e20 = 100000000000000000000"), "true|true");
  EXPECT_EQ(rows("select 100000000000000000001 > 1e20, 9223372036854775807 < 9223372036854775808.0"), "true|true");
  EXPECT_EQ(rows("select 99999999999999999999 = '99999999999999999999'"), "true");
  EXPECT_EQ(rows("select 99999999999999999999 between 9223372036854775807 and 1e20"), "true");
}

TEST_F(BigIntSqlTest, OrderGroupDistinct) {
  const char* values =
      "(select 99999999999999999999 as v union all select 9223372036854775807 union all select -99999999999999999999 "
      "union all select 1e20 union all select 100000000000000000000 union all select 100000000000000000001 "
      "union all select 99999999999999999999 union all select 2.5)";
  EXPECT_EQ(rows(std::string("select v from ") + values + " order by v"),
            "-99999999999999999999,2.5,9223372036854775807,99999999999999999999,99999999999999999999,"
            "100000000000000000000,100000000000000000000,100000000000000000001");
  EXPECT_EQ(rows(std::string("select v from ") + values + " order by v desc limit 2"),
            "100000000000000000001,100000000000000000000");
  EXPECT_EQ(rows(std::string("select v, count(*) from ") + values + " group by v order by v"),
            "-99999999999999999999|1,2.5|1,9223372036854775807|1,99999999999999999999|2,100000000000000000000|2,"
            "100000000000000000001|1");
  EXPECT_EQ(rows(std::string("select count(distinct v) from ") + values), "6");
  EXPECT_EQ(rows(std::string("select min(v), max(v) from ") + values), "-99999999999999999999|100000000000000000001");
}

TEST_F(BigIntSqlTest, Aggregates) {
  ASSERT_TRUE(db_->exec("create table s (id integer primary key, v integer);"
                        "insert into s values (1, 9223372036854775807), (2, 9223372036854775807), (3, 10);")
                  .ok());
  EXPECT_EQ(rows("select sum(v), typeof(sum(v)) from s"), "18446744073709551624|integer");
  EXPECT_EQ(rows("select total(v), avg(v) from s"), "18446744073709552000|6148914691236517000");
  EXPECT_EQ(one("select total(v) from s").type(), ValueType::kReal);
  // Overflow and come back: the exact total is an int64 again.
  ASSERT_TRUE(db_->exec("insert into s values (4, -9223372036854775807), (5, -9223372036854775807)").ok());
  Value s = one("select sum(v) from s");
  EXPECT_EQ(s.type(), ValueType::kInteger);
  EXPECT_EQ(s.as_int(), 10);
  // A real joins in double, combined at the end, whatever the order.
  EXPECT_EQ(rows("select sum(v) from (select 9223372036854775807 as v union all select 0.5 "
                 "union all select 9223372036854775807)"),
            "18446744073709552000");
  EXPECT_EQ(rows("select sum(v) from (select 99999999999999999999 as v union all select 1)"), "100000000000000000000");
}

TEST_F(BigIntSqlTest, WritingToATableIsRefused) {
  ASSERT_TRUE(db_->exec("create table t (id integer primary key, x integer null, r real null, s text null, "
                        "n numeric null, a any null)")
                  .ok());
  Status st = db_->exec("insert into t (id, x) values (1, 1), (2, 99999999999999999999)");
  EXPECT_EQ(st.code(), StatusCode::kRange);
  EXPECT_EQ(st.raw_message(),
            "integer value 99999999999999999999 is out of range for column t.x (exact 64-bit integers only)");
  EXPECT_EQ(rows("select count(*) from t"), "0");  // the statement left nothing behind
  EXPECT_EQ(db_->exec("insert into t (id, n) values (3, 9223372036854775807 + 1)").code(), StatusCode::kRange);
  EXPECT_EQ(db_->exec("insert into t (id, a) values (3, -9223372036854775809)").code(), StatusCode::kRange);
  EXPECT_EQ(db_->exec("insert into t (id, x) values (99999999999999999999, 1)").code(), StatusCode::kRange);
  // Columns that convert it store the conversion.
  ASSERT_TRUE(db_->exec("insert into t (id, r, s) values (4, 99999999999999999999, 99999999999999999999)").ok());
  EXPECT_EQ(rows("select typeof(r), r, s from t where id = 4"), "integer|100000000000000000000|99999999999999999999");
  ASSERT_TRUE(db_->exec("insert into t (id, x) values (5, 9223372036854775807)").ok());
  st = db_->exec("update t set x = x + 1 where id = 5");
  EXPECT_EQ(st.code(), StatusCode::kRange);
  EXPECT_EQ(rows("select x from t where id = 5"), "9223372036854775807");
  // Inside a transaction the failed statement alone is undone.
  ASSERT_TRUE(db_->exec("begin; insert into t (id, x) values (6, 6)").ok());
  EXPECT_FALSE(db_->exec("insert into t (id, x) values (7, 7), (8, 99999999999999999999)").ok());
  ASSERT_TRUE(db_->exec("commit").ok());
  EXPECT_EQ(rows("select id from t order by id"), "4,5,6");
}

TEST_F(BigIntSqlTest, FiltersOnStoredColumns) {
  ASSERT_TRUE(db_->exec("create table f (id integer primary key, x integer, r real);"
                        "insert into f values (1, 5, 1e19), (2, 9223372036854775807, 9.3e18),"
                        " (3, -9223372036854775808, -1e30), (4, 7, 18446744073709551616.0), (5, 2, 1e20);")
                  .ok());
  EXPECT_EQ(rows("select id from f where x < 9223372036854775808 order by id"), "1,2,3,4,5");
  EXPECT_EQ(rows("select id from f where x > 9223372036854775807 order by id"), "");
  EXPECT_EQ(rows("select id from f where x <= -9223372036854775809 order by id"), "");
  EXPECT_EQ(rows("select id from f where x >= -9223372036854775809 order by id"), "1,2,3,4,5");
  EXPECT_EQ(rows("select id from f where x = 9223372036854775808"), "");
  EXPECT_EQ(rows("select id from f where id = 99999999999999999999"), "");
  EXPECT_EQ(rows("select id from f where id in (99999999999999999999, 2) order by id"), "2");
  // A real column against big integers: 2^64 is a double, 2^64 ± 1 are not.
  EXPECT_EQ(rows("select id from f where r >= 18446744073709551616 order by id"), "4,5");
  EXPECT_EQ(rows("select id from f where r > 18446744073709551616 order by id"), "5");
  EXPECT_EQ(rows("select id from f where r >= 18446744073709551617 order by id"), "5");
  EXPECT_EQ(rows("select id from f where r <= 18446744073709551615 order by id"), "1,2,3");
  EXPECT_EQ(rows("select id from f where r < 18446744073709551617 order by id"), "1,2,3,4");
  EXPECT_EQ(rows("select id from f where r = 18446744073709551616"), "4");
  EXPECT_EQ(rows("select id from f where r = 18446744073709551617"), "");
  EXPECT_EQ(rows("select id from f where r in (18446744073709551616, 100000000000000000000) order by id"), "4,5");
}

}  // namespace
}  // namespace quereus
