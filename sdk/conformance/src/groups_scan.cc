// Groups 4–5: ordering and ranges (expected rows computed here, independently of the
// engine), and access-plan honesty (the module's plan against the reference mode, and its
// claims checked at the vtable level).
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <random>
#include <set>

#include "harness.h"
#include "catalog/catalog.h"

namespace quereus::conformance::detail {

namespace {

// ---------------------------------------------------------------- 4 ordering

// A model table: its keys in ascending key order, rendered as the query renders them.
template <typename K>
struct Model {
  std::vector<K> keys;  // ascending key order
  std::function<std::string(const K&)> render;
};

template <typename K>
void check_range(Env& env, const std::string& table, const std::string& cols, const Model<K>& m,
                 const std::string& where, const std::function<bool(const K&)>& pred, const std::string& asc_order,
                 const std::string& desc_order) {
  std::vector<std::string> asc, desc;
  for (const K& k : m.keys)
    if (pred(k)) asc.push_back(m.render(k));
  desc.assign(asc.rbegin(), asc.rend());
  std::string base = "select " + cols + " from " + table + (where.empty() ? "" : " where " + where);
  env.expect(base + " order by " + asc_order, asc);
  env.expect(base + " order by " + desc_order, desc);
  env.expect_unordered(base, asc);
  if (asc.size() > 2) {
    env.expect(base + " order by " + asc_order + " limit 2 offset 1", {asc[1], asc[2]});
    env.expect(base + " order by " + desc_order + " limit 2 offset 1", {desc[1], desc[2]});
  }
  std::vector<std::string> first(asc.begin(), asc.begin() + std::min<size_t>(asc.size(), 1));
  env.expect(base + " order by " + asc_order + " limit 1", first);
}

// Every lower × upper bound combination over `values` pairs, on one column.
template <typename K, typename V>
void all_bounds(Env& env, const std::string& table, const std::string& cols, const Model<K>& m,
                const std::string& col, const std::vector<std::pair<V, V>>& pairs,
                const std::function<std::string(const V&)>& lit, const std::function<int(const K&, const V&)>& cmp,
                const std::string& asc_order, const std::string& desc_order, const std::string& prefix = "",
                const std::function<bool(const K&)>& prefix_pred = nullptr) {
  const char* lows[] = {"", ">", ">="};
  const char* highs[] = {"", "<", "<="};
  for (auto& [lo, hi] : pairs)
    for (const char* l : lows)
      for (const char* h : highs) {
        std::string where = prefix;
        auto add = [&](const std::string& c) { where += (where.empty() ? "" : " and ") + c; };
        if (*l) add(col + " " + l + " " + lit(lo));
        if (*h) add(col + " " + h + " " + lit(hi));
        std::string L = l, H = h;
        auto pred = [&, L, H](const K& k) {
          if (prefix_pred && !prefix_pred(k)) return false;
          if (L == ">" && !(cmp(k, lo) > 0)) return false;
          if (L == ">=" && !(cmp(k, lo) >= 0)) return false;
          if (H == "<" && !(cmp(k, hi) < 0)) return false;
          if (H == "<=" && !(cmp(k, hi) <= 0)) return false;
          return true;
        };
        check_range<K>(env, table, cols, m, where, pred, asc_order, desc_order);
      }
}

Model<int64_t> int_table(Env& env) {
  env.exec("create table t (k integer primary key, v text)");
  Model<int64_t> m;
  m.render = [](const int64_t& k) { return std::to_string(k); };
  std::string ins;
  for (int64_t k = 2; k <= 40; k += 2) {
    m.keys.push_back(k);
    ins += std::string(ins.empty() ? "" : ", ") + "(" + std::to_string(k) + ", 'v" + std::to_string(k) + "')";
  }
  // Inserted out of order: the module orders, not the insertion.
  env.exec("insert into t select * from (values " + ins + ") order by random()");
  return m;
}

void int_ranges(Env& env) {
  Model<int64_t> m = int_table(env);
  std::vector<std::pair<int64_t, int64_t>> pairs = {{10, 30}, {11, 29}, {1, 41}, {30, 10}, {20, 20}, {40, 2}, {-5, 2}};
  all_bounds<int64_t, int64_t>(
      env, "t", "k", m, "k", pairs, [](const int64_t& v) { return std::to_string(v); },
      [](const int64_t& k, const int64_t& v) { return k < v ? -1 : k > v ? 1 : 0; }, "k", "k desc");
  check_range<int64_t>(env, "t", "k", m, "k = 12", [](const int64_t& k) { return k == 12; }, "k", "k desc");
  check_range<int64_t>(env, "t", "k", m, "k = 13", [](const int64_t& k) { return k == 13; }, "k", "k desc");
  check_range<int64_t>(env, "t", "k", m, "k between 7 and 15", [](const int64_t& k) { return k >= 7 && k <= 15; },
                       "k", "k desc");
  check_range<int64_t>(env, "t", "k", m, "k > 5 and k > 9 and k < 30 and k <= 20",
                       [](const int64_t& k) { return k > 9 && k <= 20; }, "k", "k desc");
  check_range<int64_t>(env, "t", "k", m, "", [](const int64_t&) { return true; }, "k", "k desc");
}

void int_in_lists(Env& env) {
  Model<int64_t> m = int_table(env);
  std::set<int64_t> in = {30, 4, 18, 40, 2};
  check_range<int64_t>(env, "t", "k", m, "k in (30, 4, 18, 99, 4, 40, 2, 7)",
                       [&](const int64_t& k) { return in.count(k) > 0; }, "k", "k desc");
  check_range<int64_t>(env, "t", "k", m, "k in (30, 4, 18) and k > 4",
                       [&](const int64_t& k) { return k == 30 || k == 18; }, "k", "k desc");
  check_range<int64_t>(env, "t", "k", m, "k in (1, 3, 99)", [](const int64_t&) { return false; }, "k", "k desc");
}

int nocase_cmp(const std::string& a, const std::string& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    int x = std::tolower(static_cast<unsigned char>(a[i])), y = std::tolower(static_cast<unsigned char>(b[i]));
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() == b.size() ? 0 : a.size() < b.size() ? -1 : 1;
}
std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}
int rtrim_cmp(const std::string& a, const std::string& b) {
  int c = rtrim(a).compare(rtrim(b));
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

void text_nocase_ranges(Env& env) {
  env.exec("create table t (k text collate nocase primary key, v integer)");
  Model<std::string> m;
  m.keys = {"apple", "Banana", "cherry", "Date", "elder", "Fig", "grape"};
  m.render = [](const std::string& k) { return k; };
  env.exec("insert into t values ('Fig', 6), ('apple', 1), ('grape', 7), ('cherry', 3), ('Banana', 2), "
           "('elder', 5), ('Date', 4)");
  std::vector<std::pair<std::string, std::string>> pairs = {
      {"banana", "ELDER"}, {"B", "e"}, {"a", "z"}, {"FIG", "apple"}, {"date", "DATE"}};
  auto lit = [](const std::string& v) { return "'" + v + "'"; };
  all_bounds<std::string, std::string>(env, "t", "k", m, "k", pairs, lit, nocase_cmp, "k", "k desc");
  check_range<std::string>(env, "t", "k", m, "k in ('FIG', 'banana', 'zz')",
                           [](const std::string& k) { return k == "Fig" || k == "Banana"; }, "k", "k desc");
}

void text_rtrim_ranges(Env& env) {
  env.exec("create table t (k text collate rtrim primary key, v integer)");
  Model<std::string> m;
  m.keys = {"a", "b ", "c", "d  ", "e"};
  m.render = [](const std::string& k) { return "<" + k + ">"; };
  env.exec("insert into t values ('c', 3), ('a', 1), ('e', 5), ('b ', 2), ('d  ', 4)");
  std::vector<std::pair<std::string, std::string>> pairs = {{"b", "d"}, {"b   ", "d "}, {"a ", "e  "}};
  auto lit = [](const std::string& v) { return "'" + v + "'"; };
  all_bounds<std::string, std::string>(env, "t", "'<' || k || '>'", m, "k", pairs, lit, rtrim_cmp, "k", "k desc");
}

using Pair = std::pair<int64_t, std::string>;

void composite_ranges(Env& env) {
  env.exec("create table t (x integer, y text, v integer, primary key (x, y desc))");
  Model<Pair> m;
  // Key order: x ascending, then y descending.
  for (int64_t x = 1; x <= 4; ++x)
    for (const char* y : {"d", "c", "b", "a"}) m.keys.push_back({x, y});
  m.render = [](const Pair& k) { return std::to_string(k.first) + "|" + k.second; };
  std::string ins;
  for (auto it = m.keys.rbegin(); it != m.keys.rend(); ++it)
    ins += std::string(ins.empty() ? "" : ", ") + "(" + std::to_string(it->first) + ", '" + it->second + "', 0)";
  env.exec("insert into t values " + ins);
  // Leading-column ranges.
  std::vector<std::pair<int64_t, int64_t>> xs = {{2, 3}, {0, 5}, {3, 2}, {2, 2}};
  all_bounds<Pair, int64_t>(
      env, "t", "x, y", m, "x", xs, [](const int64_t& v) { return std::to_string(v); },
      [](const Pair& k, const int64_t& v) { return k.first < v ? -1 : k.first > v ? 1 : 0; }, "x, y desc",
      "x desc, y");
  // Trailing-column ranges after an equality on the leading one.
  std::vector<std::pair<std::string, std::string>> ys = {{"a", "c"}, {"b", "b"}, {"c", "a"}, {"", "z"}};
  all_bounds<Pair, std::string>(
      env, "t", "x, y", m, "y", ys, [](const std::string& v) { return "'" + v + "'"; },
      [](const Pair& k, const std::string& v) { int c = k.second.compare(v); return c < 0 ? -1 : c > 0 ? 1 : 0; },
      "x, y desc", "x desc, y", "x = 3", [](const Pair& k) { return k.first == 3; });
  check_range<Pair>(env, "t", "x, y", m, "x in (4, 1) and y in ('b', 'd', 'q')",
                    [](const Pair& k) { return (k.first == 4 || k.first == 1) && (k.second == "b" || k.second == "d"); },
                    "x, y desc", "x desc, y");
}

// Keys whose order a storage encoding easily gets wrong: int64 extremes around zero, reals
// with -0.0 (equal to 0.0) and infinities, text with embedded NULs and prefixes, blobs.
void edge_keys(Env& env) {
  env.exec("create table i (k integer primary key)");
  env.exec("insert into i values (0), (9223372036854775807), (-1), (-9223372036854775808), (1), "
           "(-9223372036854775807), (9223372036854775806), (256), (-256), (255)");
  const std::vector<std::string> ints = {"-9223372036854775808", "-9223372036854775807", "-256", "-1", "0", "1",
                                         "255", "256", "9223372036854775806", "9223372036854775807"};
  env.expect("select k from i order by k", ints);
  env.expect("select k from i order by k desc", {ints.rbegin(), ints.rend()});
  env.expect("select k from i where k > 9223372036854775806", {"9223372036854775807"});
  env.expect("select k from i where k >= -9223372036854775807 and k < 0 order by k",
             {"-9223372036854775807", "-256", "-1"});
  env.expect("select k from i where k between -1 and 255 order by k desc", {"255", "1", "0", "-1"});

  env.exec("create table r (k real primary key, n integer)");
  env.exec("insert into r values (2.5, 1), (-1.5, 2), (0.0, 3), (9e999, 4), (-9e999, 5), (1e-300, 6), (-1e-300, 7)");
  env.fails("insert into r values (-0.0, 8)", StatusCode::kConstraint);
  env.expect("select n from r order by k", {"5", "2", "7", "3", "6", "1", "4"});
  env.expect("select n from r order by k desc", {"4", "1", "6", "3", "7", "2", "5"});
  env.expect("select n from r where k = -0.0", {"3"});
  env.expect("select n from r where k > 0 order by k", {"6", "1", "4"});
  env.expect("select n from r where k >= -1e-300 and k < 1e-300 order by k", {"7", "3"});

  env.exec("create table s (k text primary key, n integer)");
  env.exec("insert into s values ('b', 1), ('a' || char(0) || 'b', 2), ('a', 3), ('ab', 4), ('a' || char(0), 5), "
           "('', 6), ('\xC3\xA9', 7), ('z', 8)");
  env.expect("select n from s order by k", {"6", "3", "5", "2", "4", "1", "8", "7"});
  env.expect("select n from s order by k desc", {"7", "8", "1", "4", "2", "5", "3", "6"});
  env.expect("select n from s where k > 'a' and k < 'ab' order by k", {"5", "2"});
  env.expect("select n from s where k = 'a' || char(0)", {"5"});
  env.fails("insert into s values ('a' || char(0), 9)", StatusCode::kConstraint);

  env.exec("create table b (k blob primary key, n integer)");
  env.exec("insert into b values (x'01', 1), (x'', 2), (x'0000', 3), (x'00', 4), (x'ff', 5), (x'00ff', 6)");
  env.expect("select n from b order by k", {"2", "4", "3", "6", "1", "5"});
  env.expect("select n from b order by k desc", {"5", "1", "6", "3", "4", "2"});
  env.expect("select n from b where k >= x'00' and k < x'01' order by k", {"4", "3", "6"});
  env.fails("insert into b values (x'0000', 9)", StatusCode::kConstraint);
}

// A multi-seek emits in key order even when no ordering was requested (sdk-brief §2.3).
void vt_in_multiseek_order(Env& env) {
  Model<int64_t> m = int_table(env);
  auto t = env.vtab("t");
  PlanRequest req;
  FilterSpec f;
  f.column = 0;
  f.op = QRS_OP_IN;
  f.in_count = 5;
  req.filters.push_back(f);
  PlanResult plan = t->best_access_plan(req);
  ScanArgs args;
  args.plan_id = plan.plan_id;
  f.has_value = true;
  for (int64_t v : {30, 4, 18, 40, 2}) f.in_values.push_back(Value::Integer(v));
  args.filters = {f};
  args.handled = plan.handled;
  args.handled.resize(1, false);
  std::vector<int64_t> got;
  for (const Row& r : vt_scan(*t, args)) got.push_back(r[0].as_int());
  if (!args.handled[0]) {
    if (!std::is_sorted(got.begin(), got.end()) && plan.provides_ordering)
      fail("a full scan offered for an IN filter is not in key order");
    return;
  }
  std::vector<int64_t> want = {2, 4, 18, 30, 40};
  std::string g;
  for (int64_t v : got) g += (g.empty() ? "" : ",") + std::to_string(v);
  if (got != want) fail("IN (30, 4, 18, 40, 2) handled by the module: expected rows in key order 2,4,18,30,40, got " + g);
}

// ---------------------------------------------------------------- 5 honesty

struct Rng {
  std::mt19937_64 gen;
  explicit Rng(uint64_t seed) : gen(seed) {}
  int64_t range(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(gen); }
  bool chance(int pct) { return range(0, 99) < pct; }
  template <typename T> const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(range(0, static_cast<int64_t>(v.size()) - 1))]; }
};

const std::vector<std::string> kWords = {"ant", "Ant", "bee", "BEE", "cat", "dog", "Dog", "eel", "fox", "gnu", "hen", ""};

void make_random_tables(Env& env, Rng& rng) {
  env.exec("create table t (k integer primary key, a integer null, b text null, c real null)");
  env.exec("create index t_a on t (a)");
  std::set<int64_t> keys;
  while (keys.size() < 150) keys.insert(rng.range(-100, 400));
  std::string ins;
  for (int64_t k : keys) {
    std::string a = rng.chance(10) ? "null" : std::to_string(rng.range(0, 20));
    std::string b = rng.chance(10) ? "null" : "'" + rng.pick(kWords) + "'";
    std::string c = rng.chance(10) ? "null" : std::to_string(rng.range(-1000, 1000)) + ".5";
    ins += std::string(ins.empty() ? "" : ", ") + "(" + std::to_string(k) + ", " + a + ", " + b + ", " + c + ")";
  }
  env.exec("insert into t values " + ins);
  env.exec("create table u (x text collate nocase, y integer, z integer null, primary key (x, y desc))");
  std::set<std::pair<std::string, int64_t>> ukeys;
  ins.clear();
  while (ukeys.size() < 120) {
    std::string x = rng.pick(kWords);
    int64_t y = rng.range(0, 30);
    std::string lx = x;
    for (char& ch : lx) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!ukeys.insert({lx, y}).second) continue;
    ins += std::string(ins.empty() ? "" : ", ") + "('" + x + "', " + std::to_string(y) + ", " +
           (rng.chance(15) ? "null" : std::to_string(rng.range(0, 5))) + ")";
  }
  env.exec("insert into u values " + ins);
}

std::string random_query(Rng& rng, bool* ordered) {
  bool on_t = rng.chance(60);
  struct Col { std::string name; char kind; };  // i: integer, t: text, r: real
  std::vector<Col> cols = on_t ? std::vector<Col>{{"k", 'i'}, {"k", 'i'}, {"a", 'i'}, {"b", 't'}, {"c", 'r'}}
                               : std::vector<Col>{{"x", 't'}, {"x", 't'}, {"y", 'i'}, {"y", 'i'}, {"z", 'i'}};
  auto literal = [&](char kind) -> std::string {
    if (kind == 'i') return std::to_string(on_t ? rng.range(-120, 420) : rng.range(-2, 32));
    if (kind == 'r') return std::to_string(rng.range(-1100, 1100)) + ".5";
    return "'" + rng.pick(kWords) + "'";
  };
  std::vector<std::string> conj;
  int n = static_cast<int>(rng.range(0, 3));
  for (int i = 0; i < n; ++i) {
    const Col& c = rng.pick(cols);
    switch (rng.range(0, 9)) {
      case 0: conj.push_back(c.name + " = " + literal(c.kind)); break;
      case 1: conj.push_back(c.name + " > " + literal(c.kind)); break;
      case 2: conj.push_back(c.name + " >= " + literal(c.kind)); break;
      case 3: conj.push_back(c.name + " < " + literal(c.kind)); break;
      case 4: conj.push_back(c.name + " <= " + literal(c.kind)); break;
      case 5: conj.push_back(c.name + " between " + literal(c.kind) + " and " + literal(c.kind)); break;
      case 6: {
        std::string list;
        for (int j = static_cast<int>(rng.range(1, 5)); j > 0; --j) list += (list.empty() ? "" : ", ") + literal(c.kind);
        conj.push_back(c.name + (rng.chance(20) ? " not in (" : " in (") + list + ")");
        break;
      }
      case 7: conj.push_back(c.name + (rng.chance(50) ? " is null" : " is not null")); break;
      case 8: conj.push_back(c.name + " <> " + literal(c.kind)); break;
      default: conj.push_back("(" + c.name + " < " + literal(c.kind) + " or " + c.name + " > " + literal(c.kind) + ")"); break;
    }
  }
  std::string sql = on_t ? "select k, a, b, c from t" : "select x, y, z from u";
  for (size_t i = 0; i < conj.size(); ++i) sql += (i ? " and " : " where ") + conj[i];
  *ordered = rng.chance(70);
  if (*ordered) {
    std::vector<std::string> orders =
        on_t ? std::vector<std::string>{"k", "k desc", "a, k", "a desc, k desc", "b, k", "c desc, k"}
             : std::vector<std::string>{"x, y desc", "x desc, y", "x, y", "y, x", "z, x, y", "x desc, y desc"};
    sql += " order by " + rng.pick(orders);
    if (rng.chance(50)) {
      sql += " limit " + std::to_string(rng.range(0, 20));
      if (rng.chance(50)) sql += " offset " + std::to_string(rng.range(0, 10));
    }
  }
  return sql;
}

void set_pushdown(Env& env, bool on) {
  Status s = env.db().set_option("module_pushdown", Value::Boolean(on));
  if (!s.ok()) fail("pragma module_pushdown: " + s.to_string());
}

void differential(Env& env) {
  const uint64_t seed = env.ctx().seed;
  Rng rng(seed);
  make_random_tables(env, rng);
  for (int i = 0; i < 200; ++i) {
    bool ordered = false;
    std::string sql = random_query(rng, &ordered);
    set_pushdown(env, false);
    std::vector<std::string> ref = env.query(sql);
    set_pushdown(env, true);
    std::vector<std::string> got = env.query(sql);
    std::vector<std::string> again = env.query(sql);
    std::string where = " (seed " + std::to_string(seed) + ", query " + std::to_string(i) + ")";
    if (got != again)
      fail("`" + sql + "`: the same request twice gave different answers: " + render_rows(got) + " then " +
           render_rows(again) + where);
    if (!ordered) {
      std::sort(ref.begin(), ref.end());
      std::sort(got.begin(), got.end());
    }
    if (got != ref)
      fail("`" + sql + "`: under the module's plan " + render_rows(got) + ", full scan with every filter in the engine " +
           render_rows(ref) + where);
  }
}

bool holds(const Value& cell, const FilterSpec& f) {
  if (f.op == QRS_OP_IS_NULL) return cell.is_null();
  if (f.op == QRS_OP_IS_NOT_NULL) return !cell.is_null();
  if (cell.is_null()) return false;
  int64_t v = cell.as_int();
  if (f.op == QRS_OP_IN) {
    for (const Value& x : f.in_values)
      if (x.as_int() == v) return true;
    return false;
  }
  int64_t w = f.value.as_int();
  switch (f.op) {
    case QRS_OP_EQ: return v == w;
    case QRS_OP_GT: return v > w;
    case QRS_OP_GE: return v >= w;
    case QRS_OP_LT: return v < w;
    case QRS_OP_LE: return v <= w;
    default: return true;
  }
}

// Engine order on an integer column: NULLs first in both directions.
bool before(const Value& a, const Value& b, bool desc) {
  if (a.is_null() || b.is_null()) return a.is_null() && !b.is_null();
  return desc ? a.as_int() > b.as_int() : a.as_int() < b.as_int();
}

void vt_plan_claims(Env& env) {
  const uint64_t seed = env.ctx().seed;
  Rng rng(seed ^ 0x9e3779b97f4a7c15ULL);
  env.exec("create table t (k integer primary key, a integer null)");
  std::set<int64_t> keys;
  while (keys.size() < 120) keys.insert(rng.range(-50, 300));
  std::string ins;
  for (int64_t k : keys)
    ins += std::string(ins.empty() ? "" : ", ") + "(" + std::to_string(k) + ", " +
           (rng.chance(10) ? "null" : std::to_string(rng.range(0, 15))) + ")";
  env.exec("insert into t values " + ins);
  std::vector<Row> all = env.query_rows("select k, a from t");
  auto t = env.vtab("t");
  const qrs_filter_op ops[] = {QRS_OP_EQ, QRS_OP_GT, QRS_OP_GE, QRS_OP_LT, QRS_OP_LE, QRS_OP_IN};
  for (int i = 0; i < 150; ++i) {
    PlanRequest req;
    std::vector<FilterSpec> bound;
    for (int n = static_cast<int>(rng.range(0, 3)); n > 0; --n) {
      FilterSpec f;
      f.column = rng.chance(70) ? 0 : 1;
      f.op = ops[rng.range(0, 5)];
      FilterSpec b = f;
      b.has_value = true;
      if (f.op == QRS_OP_IN) {
        for (int j = static_cast<int>(rng.range(1, 5)); j > 0; --j) b.in_values.push_back(Value::Integer(rng.range(-60, 310)));
        f.in_count = b.in_count = static_cast<uint32_t>(b.in_values.size());
      } else {
        b.value = Value::Integer(f.column == 0 ? rng.range(-60, 310) : rng.range(0, 15));
        if (rng.chance(50)) {  // a plan-time constant, as the optimizer offers literals
          f.has_value = true;
          f.value = b.value;
        }
      }
      req.filters.push_back(f);
      bound.push_back(b);
    }
    if (rng.chance(60)) req.ordering.push_back({rng.chance(75) ? 0 : 1, rng.chance(50)});
    PlanResult p1 = t->best_access_plan(req);
    PlanResult p2 = t->best_access_plan(req);
    std::string ctx = " (seed " + std::to_string(seed) + ", request " + std::to_string(i) + ")";
    if (p1.handled.size() != req.filters.size() && !p1.handled.empty())
      fail("best_access_plan answered " + std::to_string(p1.handled.size()) + " handled flags for " +
           std::to_string(req.filters.size()) + " filters" + ctx);
    if (p1.cost < 0 || p1.rows < 0) fail("best_access_plan answered a negative cost or row count" + ctx);
    if (p1.handled != p2.handled || p1.provides_ordering != p2.provides_ordering || p1.plan_id != p2.plan_id ||
        p1.cost != p2.cost || p1.rows != p2.rows)
      fail("best_access_plan answered the same request differently twice" + ctx);
    p1.handled.resize(req.filters.size(), false);
    ScanArgs args;
    args.plan_id = p1.plan_id;
    args.filters = bound;
    args.handled = p1.handled;
    args.provides_ordering = p1.provides_ordering && !req.ordering.empty();
    args.ordering = req.ordering;
    std::vector<Row> got = vt_scan(*t, args);
    std::string describe = "plan '" + p1.explain + "'";
    // Every handled filter holds for every emitted row; every row they admit is emitted.
    std::set<int64_t> emitted;
    for (const Row& r : got) {
      for (size_t f = 0; f < bound.size(); ++f)
        if (p1.handled[f] && !holds(r[bound[f].column], bound[f]))
          fail(describe + " emitted row k=" + r[0].to_text() + " that its handled filter #" + std::to_string(f) +
               " rejects" + ctx);
      if (!emitted.insert(r[0].as_int()).second) fail(describe + " emitted k=" + r[0].to_text() + " twice" + ctx);
    }
    bool all_handled = !bound.empty();
    for (const Row& r : all) {
      bool admitted = true;
      for (size_t f = 0; f < bound.size(); ++f)
        if (p1.handled[f] && !holds(r[bound[f].column], bound[f])) admitted = false;
      if (admitted && !emitted.count(r[0].as_int()))
        fail(describe + " did not emit k=" + r[0].to_text() + ", which its handled filters admit" + ctx);
    }
    for (bool h : p1.handled) all_handled = all_handled && h;
    if (p1.rows == 0 && all_handled && !got.empty()) fail(describe + " answered rows = 0 (provably empty) but emitted rows" + ctx);
    if (args.provides_ordering) {
      const OrderSpec& o = req.ordering[0];
      for (size_t r = 1; r < got.size(); ++r)
        if (before(got[r][o.column], got[r - 1][o.column], o.desc))
          fail(describe + " claims ordering on column " + std::to_string(o.column) + (o.desc ? " desc" : " asc") +
               " but emitted " + render_row(got[r - 1]) + " before " + render_row(got[r]) + ctx);
    }
  }
}

// Ordering claims over a composite key (x NOCASE, y DESC): for requested orderings that
// match the key, its reverse, a prefix, or neither, a claim must hold on the emitted rows;
// equality and range filters the plan handles must hold too.
void vt_composite_claims(Env& env) {
  const uint64_t seed = env.ctx().seed;
  Rng rng(seed ^ 0x51ed27ULL);
  env.exec("create table u (x text collate nocase, y integer, z integer null, primary key (x, y desc))");
  std::set<std::pair<std::string, int64_t>> keys;
  std::string ins;
  while (keys.size() < 80) {
    std::string x = rng.pick(kWords);
    int64_t y = rng.range(0, 12);
    std::string lx = x;
    for (char& ch : lx) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!keys.insert({lx, y}).second) continue;
    ins += std::string(ins.empty() ? "" : ", ") + "('" + x + "', " + std::to_string(y) + ", 0)";
  }
  env.exec("insert into u values " + ins);
  const size_t total = keys.size();
  auto t = env.vtab("u");
  const std::vector<std::vector<OrderSpec>> orderings = {
      {{0, false}}, {{0, true}}, {{0, false}, {1, true}}, {{0, true}, {1, false}},
      {{0, false}, {1, false}}, {{1, false}}, {{1, true}, {0, false}}, {}};
  auto cmp = [](const Row& a, const Row& b, const OrderSpec& o) {
    int c = o.column == 0 ? nocase_cmp(a[0].str(), b[0].str())
                          : (a[1].as_int() < b[1].as_int() ? -1 : a[1].as_int() > b[1].as_int() ? 1 : 0);
    return o.desc ? -c : c;
  };
  for (int i = 0; i < 80; ++i) {
    PlanRequest req;
    req.ordering = rng.pick(orderings);
    std::vector<FilterSpec> bound;
    if (rng.chance(50)) {
      FilterSpec f;
      f.column = 0;
      f.op = QRS_OP_EQ;
      f.has_value = true;
      f.value = Value::Text(rng.pick(kWords));
      req.filters.push_back(f);
    }
    if (rng.chance(50)) {
      FilterSpec f;
      f.column = 1;
      f.op = rng.chance(50) ? QRS_OP_GE : QRS_OP_LT;
      f.has_value = true;
      f.value = Value::Integer(rng.range(0, 12));
      req.filters.push_back(f);
    }
    PlanResult p = t->best_access_plan(req);
    p.handled.resize(req.filters.size(), false);
    ScanArgs args;
    args.plan_id = p.plan_id;
    args.filters = req.filters;
    args.handled = p.handled;
    args.provides_ordering = p.provides_ordering && !req.ordering.empty();
    args.ordering = req.ordering;
    std::vector<Row> got = vt_scan(*t, args);
    std::string ctx = " (plan '" + p.explain + "', seed " + std::to_string(seed) + ", request " + std::to_string(i) + ")";
    size_t admitted = 0;
    for (const auto& [lx, y] : keys) {
      bool ok = true;
      for (size_t f = 0; f < req.filters.size(); ++f) {
        if (!p.handled[f]) continue;
        const FilterSpec& fs = req.filters[f];
        if (fs.column == 0) ok = ok && nocase_cmp(lx, fs.value.str()) == 0;
        else if (fs.op == QRS_OP_GE) ok = ok && y >= fs.value.as_int();
        else ok = ok && y < fs.value.as_int();
      }
      admitted += ok;
    }
    if (got.size() != admitted)
      fail("emitted " + std::to_string(got.size()) + " rows, its handled filters admit " + std::to_string(admitted) +
           " of " + std::to_string(total) + ctx);
    if (!args.provides_ordering) continue;
    for (size_t r = 1; r < got.size(); ++r) {
      int c = 0;
      for (const OrderSpec& o : req.ordering)
        if ((c = cmp(got[r - 1], got[r], o)) != 0) break;
      if (c > 0) {
        std::string want;
        for (const OrderSpec& o : req.ordering) want += std::string(want.empty() ? "" : ", ") + (o.column ? "y" : "x") + (o.desc ? " desc" : "");
        fail("claims ordering (" + want + ") but emitted " + render_row(got[r - 1]) + " before " + render_row(got[r]) + ctx);
      }
    }
  }
}

// ORDER BY the key is answered in order (with or without the module's claim) — the
// end-to-end check that catches a claimed order the rows do not follow.
void order_by_key(Env& env) {
  Model<int64_t> m = int_table(env);
  std::vector<std::string> asc, desc;
  for (int64_t k : m.keys) asc.push_back(std::to_string(k));
  desc.assign(asc.rbegin(), asc.rend());
  env.expect("select k from t order by k", asc);
  env.expect("select k from t order by k desc", desc);
  env.expect("select k from t where k > 0 order by k limit 5", {asc.begin(), asc.begin() + 5});
}

}  // namespace

void add_ordering_tests(TestList& out) {
  out.push_back({4, "order_by_key", order_by_key});
  out.push_back({4, "int_ranges", int_ranges});
  out.push_back({4, "int_in_lists", int_in_lists});
  out.push_back({4, "text_nocase_ranges", text_nocase_ranges});
  out.push_back({4, "text_rtrim_ranges", text_rtrim_ranges});
  out.push_back({4, "composite_ranges", composite_ranges});
  out.push_back({4, "edge_keys", edge_keys});
  out.push_back({4, "vt_in_multiseek_key_order", vt_in_multiseek_order});
}

void add_honesty_tests(TestList& out) {
  out.push_back({5, "differential", differential});
  out.push_back({5, "vt_plan_claims", vt_plan_claims});
  out.push_back({5, "vt_composite_claims", vt_composite_claims});
}

}  // namespace quereus::conformance::detail
