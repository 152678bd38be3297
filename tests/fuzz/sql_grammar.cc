// The grammar fuzzer's SQL generator (see sql_grammar.h): schema, queries, DML, DDL,
// transactions, pragmas, files and declarations, drawn from the parser's statement kinds.
//
// Bounds that keep every statement finite and cheap under the sanitizers: tables stay
// small (a few rows per INSERT, INSERT … SELECT is limited), at most three sources per
// FROM, recursive CTEs stop on a counter, generate_series() gets small ranges, catalog-wide
// table functions are read through a LIMIT, and the
// harness caps value length (max_length) so that zeroblob() / printf() cannot run away.
#include "sql_grammar.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace quereus::fuzz {

namespace {

std::string join(const std::vector<std::string>& parts, const char* sep = ", ") {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// A catalog-wide table function (schema(), function_info()) answers a row per object or
// function, some 200: crossed three or four times through a view it is 10^9 rows or more
// (the sixth long run stopped on 7 * 10^9). It is read through a small LIMIT instead.
std::string bounded_call(const std::string& call, int limit) {
  return "(select * from " + call + " limit " + std::to_string(limit) + ")";
}

std::string ref(const std::string& qualifier, const std::string& name) {
  return qualifier.empty() ? name : qualifier + "." + name;
}

const std::vector<std::string> kInts = {"0", "1", "-1", "2", "3", "5", "7", "10", "42", "100", "-100", "255",
                                        "65536", "2147483647", "-2147483648", "9223372036854775807",
                                        "-9223372036854775808", "9223372036854775808", "99999999999999999999",
                                        "0x7f", "0xffffffffffffffff", "1000000"};
const std::vector<std::string> kReals = {"0.0", "-0.0", "1.5", "-2.25", "3.14159", "0.1", "100.0", "1e20",
                                         "1e308", "-1e308", "1e-308", "4.9e-324", "2.5e-3", "9.223372036854775807e18",
                                         "1.0", ".5"};
const std::vector<std::string> kTexts = {"''", "'a'", "'abc'", "'ABC'", "'hello world'", "' pad '", "'ß'",
                                         "'É'", "'ΣΑΣ'", "'😀'", "'%'", "'_'", "'a%b_c'", "'[a-z]*'", "'*?'",
                                         "'it''s'", "'12'", "'1.5'", "'-3'", "' 7 '", "'null'", "'true'",
                                         "'2024-02-29'", "'x\ny'", "'\\'", "'abc  '", "'0x10'", "'1e5'"};
const std::vector<std::string> kBlobs = {"x''", "x'00'", "x'ff00'", "x'deadbeef'", "x'61'", "x'0000000000'"};
const std::vector<std::string> kJsons = {"'{\"a\":1,\"b\":[1,2,3]}'", "'[1,2,null]'", "'\"s\"'", "'1'", "'null'",
                                         "'{\"a\":{\"b\":{\"c\":[]}}}'", "'[]'", "'{}'", "'[1.5,\"x\",true]'",
                                         "'{\"k\":99999999999999999999}'"};
const std::vector<std::string> kDates = {"'2024-01-31'", "'1970-01-01'", "'0001-01-01'", "'9999-12-31'",
                                         "'2024-02-29'", "'2023-02-29'"};
const std::vector<std::string> kTimes = {"'00:00:00'", "'23:59:59'", "'12:30'", "'12:30:45.123'", "'24:00:00'"};
const std::vector<std::string> kDateTimes = {"'2024-01-31T12:00:00'", "'2024-01-31 12:00:00'",
                                             "'1970-01-01T00:00:00Z'", "'2000-02-29T23:59:59.999'",
                                             "'2024-06-01T08:00:00+02:00'"};
const std::vector<std::string> kSpans = {"'P1D'", "'PT1H'", "'P1Y2M3DT4H5M6S'", "'-P1D'", "'PT0S'", "'P1W'",
                                         "'PT90M'", "'P400D'"};
const std::vector<std::string> kCollations = {"binary", "nocase", "rtrim"};
const std::vector<std::string> kTags = {"'x'", "1", "true", "null", "2.5", "'display name'"};

}  // namespace

SqlGrammar::SqlGrammar(FuzzedDataProvider& in, uint64_t seed, const std::vector<FunctionModel>& functions,
                       const std::vector<std::string>& optimizer_passes, std::string file_dir)
    : in_(in), rng_(seed), functions_(functions), passes_(optimizer_passes), file_dir_(std::move(file_dir)) {}

// ---------------------------------------------------------------- decisions

int SqlGrammar::draw(int lo, int hi) {
  if (in_.remaining_bytes() > 0) return in_.ConsumeIntegralInRange<int>(lo, hi);
  return lo + static_cast<int>(rng_() % static_cast<uint64_t>(hi - lo + 1));
}
bool SqlGrammar::chance(int percent) { return draw(0, 99) < percent; }
int SqlGrammar::pick(int n) { return n <= 1 ? 0 : draw(0, n - 1); }
int SqlGrammar::range(int lo, int hi) { return draw(lo, hi); }

// ---------------------------------------------------------------- names and values

std::string SqlGrammar::type_name(Ty t) {
  switch (t) {
    case Ty::kInt: return chance(80) ? "integer" : "int";
    case Ty::kReal: return chance(80) ? "real" : "numeric";
    case Ty::kText: return chance(90) ? "text" : "varchar(10)";
    case Ty::kBlob: return "blob";
    case Ty::kBool: return "boolean";
    case Ty::kJson: return "json";
    case Ty::kDate: return "date";
    case Ty::kTime: return "time";
    case Ty::kDateTime: return "datetime";
    case Ty::kSpan: return "timespan";
    case Ty::kAny: return "any";
  }
  return "";
}

Ty SqlGrammar::random_type() {
  static const Ty kCommon[] = {Ty::kInt, Ty::kInt, Ty::kInt, Ty::kText, Ty::kText, Ty::kReal, Ty::kReal,
                               Ty::kBool, Ty::kBlob, Ty::kJson, Ty::kDate, Ty::kTime, Ty::kDateTime,
                               Ty::kSpan, Ty::kAny};
  return kCommon[pick(static_cast<int>(sizeof(kCommon) / sizeof(kCommon[0])))];
}

std::string SqlGrammar::literal(Ty t) {
  if (chance(7)) return "null";
  switch (t) {
    case Ty::kInt: return chance(60) ? std::to_string(range(-3, 12)) : one(kInts);
    case Ty::kReal: return one(kReals);
    case Ty::kText: return one(kTexts);
    case Ty::kBlob: return one(kBlobs);
    case Ty::kBool: return chance(50) ? "true" : "false";
    case Ty::kJson: return one(kJsons);
    case Ty::kDate: return one(kDates);
    case Ty::kTime: return one(kTimes);
    case Ty::kDateTime: return one(kDateTimes);
    case Ty::kSpan: return one(kSpans);
    case Ty::kAny: return any_literal();
  }
  return "null";
}

std::string SqlGrammar::any_literal() {
  Ty t = random_type();
  return literal(t == Ty::kAny ? Ty::kInt : t);
}

std::string SqlGrammar::collation() { return chance(3) ? "no_such_collation" : one(kCollations); }

const RelationModel* SqlGrammar::relation(bool tables_only) {
  std::vector<const RelationModel*> rels;
  for (const auto& r : model_->relations)
    if (!tables_only || r.kind == RelationModel::Kind::kTable) rels.push_back(&r);
  if (rels.empty()) return nullptr;
  return rels[pick(static_cast<int>(rels.size()))];
}

const RelationModel* SqlGrammar::table() { return relation(true); }

std::string SqlGrammar::fresh_name(const char* prefix, int pool) { return prefix + std::to_string(pick(pool)); }

std::string SqlGrammar::tags() {
  std::vector<std::string> t;
  int n = range(1, 2);
  for (int i = 0; i < n; ++i) t.push_back(fresh_name("tag", 4) + " = " + one(kTags));
  return "with tags (" + join(t) + ")";
}

// ---------------------------------------------------------------- expressions

std::string SqlGrammar::column(const Scope& s, Ty want) {
  const Scope* sc = &s;
  // Now and then an outer scope's column: a correlated reference.
  while (sc->outer && (sc->cols.empty() || chance(15))) sc = sc->outer;
  if (sc->cols.empty()) return literal(want);
  // Prefer a column of the wanted type.
  if (want != Ty::kAny && chance(70)) {
    std::vector<const Col*> typed;
    for (const auto& c : sc->cols)
      if (c.type == want) typed.push_back(&c);
    if (!typed.empty()) {
      const Col* c = typed[pick(static_cast<int>(typed.size()))];
      return ref(c->qualifier, c->name);
    }
  }
  const Col& c = one(sc->cols);
  return ref(c.qualifier, c.name);
}

std::string SqlGrammar::args(const Scope& s, int depth, int n) {
  std::vector<std::string> a;
  for (int i = 0; i < n; ++i) a.push_back(expr(s, depth - 1));
  return join(a);
}

std::string SqlGrammar::function_call(const Scope& s, int depth, const std::string& type) {
  std::vector<const FunctionModel*> fs;
  for (const auto& f : functions_)
    if (f.type == type) fs.push_back(&f);
  if (fs.empty()) return literal(Ty::kAny);
  const FunctionModel& f = *fs[pick(static_cast<int>(fs.size()))];
  int n = f.num_args >= 0 ? f.num_args : range(0, 3);
  if (chance(3)) n = std::max(0, n + (chance(50) ? 1 : -1));  // a wrong argument count
  std::string name = f.name;
  if (type == "aggregate") {
    if (name == "count" && chance(30)) return "count(*)";
    std::string q = chance(15) ? "distinct " : chance(5) ? "all " : "";
    if (n == 0) q.clear();
    return name + "(" + q + args(s, depth, n) + ")";
  }
  if (name == "generate_series" || name == "zeroblob" || name == "randomblob")
    return name + "(" + std::to_string(range(-2, 20)) + (n > 1 ? ", " + std::to_string(range(0, 30)) : "") + ")";
  return name + "(" + args(s, depth, n) + ")";
}

std::string SqlGrammar::frame() {
  static const char* kUnits[] = {"rows", "range", "groups"};
  auto bound = [this](bool start) -> std::string {
    switch (pick(5)) {
      case 0: return start ? "unbounded preceding" : "unbounded following";
      case 1: return std::to_string(range(0, 3)) + " preceding";
      case 2: return "current row";
      case 3: return std::to_string(range(0, 3)) + " following";
      default: return chance(50) ? "unbounded preceding" : "unbounded following";  // sometimes invalid
    }
  };
  std::string f = kUnits[pick(3)];
  if (chance(40)) {
    f += " " + bound(true);
  } else {
    f += " between " + bound(true) + " and " + bound(false);
  }
  if (chance(15)) {
    static const char* kEx[] = {" exclude no others", " exclude current row", " exclude group", " exclude ties"};
    f += kEx[pick(4)];
  }
  return f;
}

std::string SqlGrammar::window_spec(const Scope& s, int depth) {
  Scope plain = s;
  plain.windows = false;
  std::vector<std::string> parts;
  if (chance(50)) {
    std::vector<std::string> p;
    int n = range(1, 2);
    for (int i = 0; i < n; ++i) p.push_back(expr(plain, depth - 1));
    parts.push_back("partition by " + join(p));
  }
  if (chance(70)) {
    std::vector<std::string> o;
    int n = range(1, 2);
    for (int i = 0; i < n; ++i)
      o.push_back(expr(plain, depth - 1) + (chance(30) ? " desc" : "") +
                  (chance(15) ? (chance(50) ? " nulls first" : " nulls last") : ""));
    parts.push_back("order by " + join(o));
  }
  if (chance(40)) parts.push_back(frame());
  return "over (" + join(parts, " ") + ")";
}

std::string SqlGrammar::window_call(const Scope& s, int depth) {
  Scope plain = s;
  plain.windows = false;
  plain.aggregates = false;
  std::string call;
  if (chance(50)) {
    call = function_call(plain, depth, "window");
  } else {
    call = function_call(plain, depth, "aggregate");
  }
  return call + " " + window_spec(plain, depth);
}

std::string SqlGrammar::subquery(const Scope& s, int depth, int ncols) {
  return "(" + select(&s, depth - 1, ncols).sql + ")";
}

std::string SqlGrammar::predicate(const Scope& s, int depth) { return expr(s, depth, Ty::kBool); }

std::string SqlGrammar::expr(const Scope& s, int depth, Ty want) {
  if (depth <= 0 || chance(25)) {
    if (chance(60)) return column(s, want);
    if (chance(4)) return chance(50) ? "?" : ":p" + std::to_string(pick(3));
    return literal(want == Ty::kAny ? random_type() : want);
  }
  int d = depth - 1;
  if (want == Ty::kBool && chance(70)) {
    static const char* kCmp[] = {" = ", " == ", " != ", " <> ", " < ", " <= ", " > ", " >= ", " is ", " is not "};
    switch (pick(12)) {
      case 0: return expr(s, d) + " and " + expr(s, d, Ty::kBool);
      case 1: return expr(s, d, Ty::kBool) + " or " + expr(s, d, Ty::kBool);
      case 2: return "not " + expr(s, d, Ty::kBool);
      case 3: return expr(s, d) + (chance(50) ? " is null" : chance(50) ? " is not null" : " notnull");
      case 4: {
        Ty t = random_type();
        return expr(s, d, t) + (chance(20) ? " not" : "") + " between " + expr(s, d, t) + " and " + expr(s, d, t);
      }
      case 5: {
        std::string lhs = expr(s, d);
        if (chance(40)) return lhs + (chance(25) ? " not" : "") + " in " + subquery(s, depth, 1);
        std::vector<std::string> l;
        int n = range(0, 4);
        for (int i = 0; i < n; ++i) l.push_back(expr(s, d));
        return lhs + (chance(25) ? " not" : "") + " in (" + join(l) + ")";
      }
      case 6: return (chance(25) ? "not exists " : "exists ") + subquery(s, depth, -1);
      case 7: {
        static const char* kPat[] = {" like ", " not like ", " glob ", " not glob ", " regexp ", " match "};
        int k = pick(6);
        std::string e = expr(s, d, Ty::kText) + kPat[k] + expr(s, d, Ty::kText);
        if (k < 2 && chance(20)) e += " escape " + (chance(80) ? std::string("'\\'") : literal(Ty::kText));
        return e;
      }
      case 8: return expr(s, d) + (chance(50) ? " is true" : chance(50) ? " is not false" : " is false");
      default: {
        Ty t = random_type();
        return expr(s, d, t) + kCmp[pick(10)] + expr(s, d, chance(80) ? t : Ty::kAny);
      }
    }
  }
  switch (pick(16)) {
    case 0: case 1: {
      static const char* kArith[] = {" + ", " - ", " * ", " / ", " % ", " || ", " & ", " | ", " << ", " >> "};
      Ty t = want == Ty::kAny ? (chance(50) ? Ty::kInt : Ty::kReal) : want;
      return "(" + expr(s, d, t) + kArith[pick(10)] + expr(s, d, t) + ")";
    }
    case 2: {
      static const char* kUn[] = {"-", "+", "~", "not "};
      return std::string("(") + kUn[pick(4)] + expr(s, d, want) + ")";
    }
    case 3: case 4: return function_call(s, depth, "scalar");
    case 5:
      if (s.aggregates) return function_call(s, depth, "aggregate");
      return function_call(s, depth, "scalar");
    case 6:
      if (s.windows) return window_call(s, depth);
      return column(s, want);
    case 7: return "cast(" + expr(s, d) + " as " + (chance(3) ? "nonsense" : type_name(random_type())) + ")";
    case 8: return expr(s, d, Ty::kText) + " collate " + collation();
    case 9: {
      std::string e = "case";
      bool base = chance(40);
      if (base) e += " " + expr(s, d);
      int n = range(1, 3);
      for (int i = 0; i < n; ++i)
        e += " when " + (base ? expr(s, d) : expr(s, d, Ty::kBool)) + " then " + expr(s, d, want);
      if (chance(60)) e += " else " + expr(s, d, want);
      return e + " end";
    }
    case 10: return subquery(s, depth, 1);
    case 11: return "(" + predicate(s, d) + ")";
    case 12: return "coalesce(" + expr(s, d, want) + ", " + literal(want) + ")";
    default: return chance(50) ? column(s, want) : literal(want == Ty::kAny ? random_type() : want);
  }
}

// ---------------------------------------------------------------- queries

std::string SqlGrammar::source(const Scope* outer, int depth, Scope* into, bool lateral_ok) {
  std::string alias = "s" + std::to_string(into->cols.size()) + "_" + std::to_string(pick(100));
  auto bounded = [this](const std::string& call) { return bounded_call(call, range(1, 8)); };
  int kind = pick(10);
  if (kind <= 5 || depth <= 0) {
    const RelationModel* r = relation(false);
    if (!r) kind = 8;
    else {
      for (const auto& c : r->columns) into->cols.push_back({alias, c.name, c.type});
      std::string name = r->name;
      if (chance(3)) name = "committed." + name;
      if (chance(10)) {  // unaliased: qualify by the table's name
        for (size_t i = into->cols.size() - r->columns.size(); i < into->cols.size(); ++i)
          into->cols[i].qualifier = r->name.find('.') == std::string::npos ? r->name : "";
        return name;
      }
      return name + " as " + alias;
    }
  }
  if (kind == 6 && chance(10)) {
    // DML as a relation: INSERT / UPDATE / DELETE … RETURNING in FROM.
    const RelationModel* t = table();
    if (t && !t->columns.empty()) {
      std::string dml = chance(50) ? "insert into " + t->name + insert_values(*t, 1)
                                   : "delete from " + t->name + " where " + column(Scope{}, Ty::kBool);
      for (const auto& c : t->columns) into->cols.push_back({alias, c.name, c.type});
      return "(" + dml + " returning *) as " + alias;
    }
  }
  if (kind <= 7) {
    Query q = select(lateral_ok ? outer : nullptr, depth - 1, -1);
    for (const auto& c : q.cols) into->cols.push_back({alias, c.name, c.type});
    return (lateral_ok && chance(30) ? "lateral " : "") + std::string("(") + q.sql + ") as " + alias;
  }
  // A table-valued function.
  switch (pick(5)) {
    case 0:
      into->cols.push_back({alias, "value", Ty::kInt});
      return "generate_series(" + std::to_string(range(-2, 5)) + ", " + std::to_string(range(0, 12)) +
             (chance(30) ? ", " + std::to_string(range(-2, 3)) : "") + ") as " + alias;
    case 1:
    case 2:
      into->cols.push_back({alias, "key", Ty::kAny});
      into->cols.push_back({alias, "value", Ty::kAny});
      into->cols.push_back({alias, "type", Ty::kText});
      return std::string(chance(50) ? "json_each(" : "json_tree(") + literal(Ty::kJson) + ") as " + alias;
    case 3:
      into->cols.push_back({alias, "name", Ty::kText});
      into->cols.push_back({alias, "type", Ty::kText});
      return bounded(chance(50) ? "schema()" : "function_info()") + " as " + alias;
    default: {
      std::vector<const FunctionModel*> tvfs;
      for (const auto& f : functions_)
        if (f.type == "table" && f.name != "read_csv" && f.name != "read_jsonl") tvfs.push_back(&f);
      if (tvfs.empty()) return "generate_series(1, 3) as " + alias;
      const FunctionModel& f = *tvfs[pick(static_cast<int>(tvfs.size()))];
      int n = f.num_args >= 0 ? f.num_args : range(0, 2);
      std::vector<std::string> a;
      for (int i = 0; i < n; ++i) {
        const RelationModel* r = relation(false);
        a.push_back(r && chance(70) ? "'" + r->name + "'" : any_literal());
      }
      std::string call = f.name + "(" + join(a) + ")";
      if (f.name == "schema" || f.name == "schema_ddl" || f.name == "function_info") call = bounded(call);
      return call + " as " + alias;
    }
  }
}

std::string SqlGrammar::from_clause(const Scope* outer, int depth, Scope* into) {
  std::string f = source(outer, depth, into, false);
  int joins = chance(50) ? 0 : range(1, 2);
  for (int i = 0; i < joins; ++i) {
    static const char* kJoins[] = {" join ", " inner join ", " left join ", " left outer join ", " right join ",
                                   " full join ", " cross join "};
    int k = pick(7);
    Scope right;
    right.outer = outer;
    bool lateral = (k <= 3 || k == 6) && chance(15);
    std::string r;
    if (lateral) {
      // JOIN LATERAL: the right side sees the left side's columns.
      Scope left_scope = *into;
      left_scope.outer = outer;
      Query q = select(&left_scope, depth - 1, -1);
      std::string alias = "l" + std::to_string(i);
      for (const auto& c : q.cols) right.cols.push_back({alias, c.name, c.type});
      r = "lateral (" + q.sql + ") as " + alias;
    } else {
      r = source(outer, depth, &right, false);
    }
    for (const auto& c : right.cols) into->cols.push_back(c);
    f += kJoins[k] + r;
    if (k == 6) continue;
    Scope both = *into;
    both.outer = outer;
    if (chance(10) && !right.cols.empty()) {
      f += " using (" + one(right.cols).name + ")";
    } else {
      f += " on " + predicate(both, 2);
    }
    if ((k == 2 || k == 3 || k == 4 || k == 5) && chance(10)) {
      std::string flag = "f" + std::to_string(i);
      f += std::string(" exists ") + (chance(30) ? "left " : chance(30) ? "right " : "") + "as " + flag;
      into->cols.push_back({"", flag, Ty::kBool});
    }
  }
  return f;
}

std::string SqlGrammar::with_clause(const Scope* outer, int depth, Scope* ctes) {
  bool recursive = chance(40);
  std::vector<std::string> parts;
  int n = range(1, 2);
  for (int i = 0; i < n; ++i) {
    std::string name = "cte" + std::to_string(cte_counter_++);
    if (recursive && i == 0) {
      // A bounded recursion: a counter and one column carried along.
      std::string limit = std::to_string(range(0, 40));
      std::string step = chance(50) ? "n + 1" : "n + " + std::to_string(range(1, 4));
      std::string seed = chance(70) ? "select 1, " + any_literal() : "select " + std::to_string(range(-3, 3)) + ", 'x'";
      std::string body = "select " + step + ", " + (chance(50) ? std::string("v") : "v || 'y'") + " from " + name +
                         " where n < " + limit;
      std::string op = chance(80) ? " union all " : " union ";
      parts.push_back(name + "(n, v) as (" + seed + op + body + ")");
      ctes->cols.push_back({name, "n", Ty::kInt});
      ctes->cols.push_back({name, "v", Ty::kAny});
      continue;
    }
    Query q = select(outer, depth - 1, -1);
    std::vector<std::string> names;
    for (auto& c : q.cols) names.push_back(c.name);
    std::string hint = chance(10) ? "materialized " : chance(10) ? "not materialized " : "";
    bool with_cols = chance(30);
    parts.push_back(name + (with_cols ? "(" + join(names) + ")" : "") + " as " + hint + "(" + q.sql + ")");
    for (auto& c : q.cols) ctes->cols.push_back({name, c.name, c.type});
  }
  std::string w = std::string("with ") + (recursive ? "recursive " : "") + join(parts);
  if (recursive && chance(20)) w += " option (maxrecursion " + std::to_string(range(0, 100)) + ")";
  return w + " ";
}

std::string SqlGrammar::order_by(const Scope& s, int depth, int ncols) {
  std::vector<std::string> o;
  int n = range(1, 3);
  for (int i = 0; i < n; ++i) {
    // A position, an output column, or (rarely: refused) an expression over output columns.
    std::string e = ncols > 0 && chance(40) ? std::to_string(range(1, ncols + (chance(5) ? 1 : 0)))
                    : chance(90)            ? column(s, Ty::kAny)
                                            : expr(s, depth);
    if (chance(10)) e += " collate " + collation();
    e += chance(30) ? " desc" : chance(20) ? " asc" : "";
    if (chance(15)) e += chance(50) ? " nulls first" : " nulls last";
    o.push_back(e);
  }
  return " order by " + join(o);
}

std::string SqlGrammar::limit() {
  std::string l = " limit ";
  switch (pick(6)) {
    case 0: l += "null"; break;
    case 1: l += "-1"; break;
    case 2: l += "(select 2)"; break;
    case 3: l += chance(50) ? "'2'" : "1.5"; break;
    default: l += std::to_string(range(0, 10));
  }
  if (chance(30)) l += " offset " + std::to_string(range(-1, 5));
  return l;
}

SqlGrammar::Query SqlGrammar::select_core(const Scope* outer, int depth, int ncols, std::string* with_sql) {
  Query q;
  Scope s;
  s.outer = outer;
  if (with_sql && depth > 0 && chance(15)) *with_sql = with_clause(outer, depth, &s);
  std::vector<Col> cte_cols = s.cols;  // CTE names are sources, not columns
  s.cols.clear();
  if (chance(5)) {  // VALUES
    int n = ncols > 0 ? ncols : range(1, 3);
    int rows = range(1, 3);
    std::vector<std::string> rs;
    std::vector<Ty> types;
    for (int c = 0; c < n; ++c) types.push_back(random_type());
    for (int r = 0; r < rows; ++r) {
      std::vector<std::string> vs;
      for (int c = 0; c < n; ++c) vs.push_back(literal(types[c]));
      rs.push_back("(" + join(vs) + ")");
    }
    for (int c = 0; c < n; ++c) q.cols.push_back({"", "column" + std::to_string(c + 1), types[c]});
    q.sql = "values " + join(rs);
    return q;
  }
  std::string from;
  if (!cte_cols.empty() && chance(70)) {
    std::string name = cte_cols[0].qualifier;
    std::string alias = "c" + std::to_string(pick(10));
    for (const auto& c : cte_cols)
      if (c.qualifier == name) s.cols.push_back({alias, c.name, c.type});
    from = " from " + name + " as " + alias;
  } else if (chance(85) || depth <= 0) {
    from = " from " + from_clause(outer, depth, &s);
  }
  bool grouped = chance(20);
  std::vector<std::string> cols;
  std::vector<std::string> group;
  Scope agg = s;
  agg.aggregates = true;
  Scope win = s;
  win.windows = depth > 0 && chance(30);
  if (grouped) {
    int g = range(0, 2);
    for (int i = 0; i < g; ++i) group.push_back(chance(80) ? column(s, Ty::kAny) : expr(s, 1));
  }
  int n = ncols > 0 ? ncols : range(1, 4);
  if (ncols < 0 && !grouped && chance(8) && !s.cols.empty()) {
    cols.push_back("*");
    for (const auto& c : s.cols) q.cols.push_back({"", c.name, c.type});
  } else {
    for (int i = 0; i < n; ++i) {
      std::string e;
      Ty t = random_type();
      if (grouped) {
        e = !group.empty() && chance(40) ? one(group) : function_call(agg, depth, "aggregate");
        if (chance(20)) e = "(" + e + " + " + function_call(agg, 1, "aggregate") + ")";
      } else {
        e = expr(win, depth, t);
      }
      std::string alias = "r" + std::to_string(i);
      cols.push_back(e + (chance(92) ? " as " + alias : ""));
      q.cols.push_back({"", alias, t});
    }
  }
  q.sql = std::string("select ") + (chance(10) ? "distinct " : "") + join(cols) + from;
  if (!from.empty() && chance(50)) q.sql += " where " + predicate(s, depth);
  if (grouped) {
    if (!group.empty()) q.sql += " group by " + join(group);
    if (chance(30)) q.sql += " having " + predicate(agg, 1);
  }
  return q;
}

SqlGrammar::Query SqlGrammar::select(const Scope* outer, int depth, int ncols) {
  std::string with;
  if (ncols < 0 && chance(20)) ncols = range(1, 3);
  Query q = select_core(outer, depth, ncols, &with);
  int n = static_cast<int>(q.cols.size());
  if (depth > 0 && chance(15)) {
    static const char* kOps[] = {" union ", " union all ", " intersect ", " except ", " diff "};
    int legs = range(1, 2);
    for (int i = 0; i < legs; ++i) {
      int k = pick(5);
      std::string leg = select_core(outer, depth - 1, n, nullptr).sql;
      if (chance(10)) leg = "(" + leg + limit() + ")";
      std::string membership;
      if (k != 4 && chance(8)) {
        // Membership flags: `union exists left as m0, exists right as m0r`.
        membership = "exists left as m" + std::to_string(i) + " ";
        q.cols.push_back({"", "m" + std::to_string(i), Ty::kBool});
        if (chance(40)) {
          membership = "exists left as m" + std::to_string(i) + ", exists right as m" + std::to_string(i) + "r ";
          q.cols.push_back({"", "m" + std::to_string(i) + "r", Ty::kBool});
        }
      }
      q.sql += std::string(kOps[k]) + membership + leg;
    }
    if (chance(30)) q.sql += " order by " + std::to_string(range(1, n));
  } else if (chance(30)) {
    Scope s;
    s.outer = outer;
    for (const auto& c : q.cols) s.cols.push_back(c);
    q.sql += order_by(s, 1, n);
  }
  if (chance(30)) q.sql += limit();
  if (chance(2)) q.sql += " with schema main";
  q.sql = with + q.sql;
  return q;
}

std::string SqlGrammar::returning(const Scope& s) {
  if (!chance(25)) return "";
  if (chance(30)) return " returning *";
  std::vector<std::string> r;
  int n = range(1, 3);
  for (int i = 0; i < n; ++i) r.push_back(expr(s, 2) + (chance(50) ? " as ret" + std::to_string(i) : ""));
  return " returning " + join(r);
}

// ---------------------------------------------------------------- statements

std::string SqlGrammar::column_def(int i, std::vector<ColumnModel>* cols, const std::vector<ColumnModel>& earlier) {
  ColumnModel c;
  c.name = "c" + std::to_string(i);
  c.type = random_type();
  std::string d = c.name;
  std::string tn = c.type == Ty::kAny && chance(50) ? "" : type_name(c.type);
  if (!tn.empty()) d += " " + tn;
  bool generated = i > 0 && !earlier.empty() && chance(10);
  if (generated) {
    Scope s;
    for (const auto& e : earlier)
      if (!e.generated) s.cols.push_back({"", e.name, e.type});
    d += " generated always as (" + expr(s, 2, c.type) + ")" + (chance(50) ? " stored" : chance(50) ? " virtual" : "");
    c.generated = true;
  }
  if (chance(60)) {
    d += " null";
  } else if (chance(40)) {
    d += " not null";
    c.not_null = true;
  } else {
    c.not_null = true;  // NOT NULL is the default
  }
  if (!generated && chance(25)) d += " default " + (chance(85) ? literal(c.type) : "(" + std::to_string(range(0, 9)) + " * 2)");
  if (chance(10)) {
    Scope s;
    s.cols.push_back({"", c.name, c.type});
    d += (chance(30) ? " constraint " + fresh_name("k", 6) : "") + " check (" + predicate(s, 1) + ")";
  }
  if (chance(8)) d += " unique";
  if ((c.type == Ty::kText || c.type == Ty::kAny) && chance(25)) d += " collate " + collation();
  if (chance(5)) d += " " + tags();
  cols->push_back(c);
  return d;
}

std::string SqlGrammar::table_constraint(const std::vector<ColumnModel>& cols, bool with_fk) {
  std::string name = chance(40) ? "constraint " + fresh_name("k", 6) + " " : "";
  if (!name.empty()) constraints_.push_back(name.substr(11, name.size() - 12));
  const ColumnModel& c = cols[pick(static_cast<int>(cols.size()))];
  switch (pick(with_fk ? 4 : 3)) {
    case 0: {
      Scope s;
      for (const auto& x : cols) s.cols.push_back({"", x.name, x.type});
      std::string on = chance(15) ? (chance(50) ? " on insert" : " on update, delete") : "";
      return name + "check" + on + " (" + predicate(s, 2) + ")";
    }
    case 1:
    case 2: {
      std::string u = "unique (" + c.name;
      if (cols.size() > 1 && chance(40)) u += ", " + cols[pick(static_cast<int>(cols.size()))].name;
      return name + u + ")" + (chance(10) ? " on conflict replace" : "");
    }
    default: {
      const RelationModel* parent = table();
      if (!parent || parent->columns.empty()) return name + "check (1)";
      const ColumnModel* pk = nullptr;
      for (const auto& pc : parent->columns)
        if (pc.pk) pk = &pc;
      const ColumnModel& target = pk ? *pk : parent->columns[0];
      static const char* kActions[] = {"", " on delete cascade", " on delete set null", " on update cascade",
                                       " on delete restrict", " on delete set default", " on update no action"};
      std::string fk = name + "foreign key (" + c.name + ") references " + parent->name + "(" + target.name + ")" +
                       kActions[pick(7)];
      if (chance(15)) fk += chance(50) ? " deferrable initially deferred" : " not deferrable";
      return fk;
    }
  }
}

std::string SqlGrammar::create_table(const std::string& name, bool with_fk) {
  std::vector<ColumnModel> cols;
  std::vector<std::string> defs;
  int n = range(1, 6);
  int pk_col = chance(70) ? pick(n) : -1;
  for (int i = 0; i < n; ++i) {
    std::string d = column_def(i, &cols, cols);
    if (i == pk_col && !cols.back().generated) {
      d = d.substr(0, d.find(' ') == std::string::npos ? d.size() : d.find(' '));
      d += std::string(" ") + (chance(70) ? "integer" : "text") + " primary key" + (chance(10) ? " desc" : "");
      cols.back().pk = true;
      cols.back().type = d.find("integer") != std::string::npos ? Ty::kInt : Ty::kText;
    } else if (with_fk && chance(10)) {
      const RelationModel* parent = table();
      if (parent && !parent->columns.empty()) {
        const ColumnModel* pk = nullptr;
        for (const auto& pc : parent->columns)
          if (pc.pk) pk = &pc;
        d += " references " + parent->name + (pk ? "(" + pk->name + ")" : "") +
             (chance(50) ? " on delete cascade" : "");
      }
    }
    defs.push_back(d);
  }
  if (pk_col < 0 && chance(50)) {
    std::vector<std::string> k;
    for (int i = 0; i < n && k.size() < 2; ++i)
      if (!cols[i].generated && chance(60)) k.push_back(cols[i].name + (chance(15) ? " desc" : ""));
    defs.push_back("primary key (" + join(k) + ")");  // `primary key ()`: a singleton table
  }
  int nc = chance(50) ? 0 : range(1, 2);
  for (int i = 0; i < nc; ++i) defs.push_back(table_constraint(cols, with_fk));
  std::string sql = std::string("create ") + (chance(3) ? "temp " : "") + "table " +
                    (chance(10) ? "if not exists " : "") + name + " (" + join(defs) + ")";
  if (chance(5)) sql += " using memory";
  if (chance(4)) sql += " with context (ctx integer" + std::string(chance(50) ? " null" : "") + ")";
  if (chance(5)) sql += " " + tags();
  if (model_ == &initial_) initial_.relations.push_back({name, RelationModel::Kind::kTable, cols});
  return sql;
}

std::string SqlGrammar::insert_values(const RelationModel& t, int rows) {
  std::vector<const ColumnModel*> cols;
  for (const auto& c : t.columns)
    if (!c.generated || chance(3)) cols.push_back(&c);
  bool explicit_cols = chance(50) || cols.size() != t.columns.size();
  if (explicit_cols && cols.size() > 1 && chance(30)) {
    // Leave out a column with a chance of a default or NULL.
    cols.erase(cols.begin() + pick(static_cast<int>(cols.size())));
  }
  std::vector<std::string> names, rs;
  for (auto* c : cols) names.push_back(c->name);
  for (int r = 0; r < rows; ++r) {
    std::vector<std::string> vs;
    for (auto* c : cols) {
      std::string v = c->pk && chance(70) ? std::to_string(range(0, 30)) : literal(c->type);
      if (c->not_null && v == "null" && chance(80)) v = c->type == Ty::kAny ? "1" : literal(c->type);
      vs.push_back(v);
    }
    rs.push_back("(" + join(vs) + ")");
  }
  return (explicit_cols ? " (" + join(names) + ")" : std::string()) + " values " + join(rs);
}

std::string SqlGrammar::insert() {
  const RelationModel* t = relation(false);
  if (!t) return "select 1";
  static const char* kOr[] = {"", "", "", "", " or replace", " or ignore", " or abort", " or fail", " or rollback"};
  std::string with;
  Scope dummy;
  if (chance(8)) with = with_clause(nullptr, 1, &dummy);
  std::string head = chance(5) ? "replace into " : std::string("insert") + kOr[pick(9)] + " into ";
  std::string alias = chance(2) ? " as ins" : "";  // refused: INSERT takes no alias
  std::string body;
  switch (pick(10)) {
    case 0: case 1: {
      // INSERT … SELECT, limited so tables stay small.
      int n = 0;
      for (const auto& c : t->columns)
        if (!c.generated) ++n;
      std::vector<std::string> names;
      for (const auto& c : t->columns)
        if (!c.generated) names.push_back(c.name);
      Query q = select(nullptr, 2, n);
      body = " (" + join(names) + ") select * from (" + q.sql + ") limit " + std::to_string(range(0, 5));
      break;
    }
    case 2:
      if (chance(10)) {  // refused, as in the reference
        body = " default values";
        break;
      }
      [[fallthrough]];
    default: body = insert_values(*t, range(1, 4));
  }
  std::string sql = with + head + t->name + alias + body;
  bool or_action = head != "insert into ";
  if (chance(or_action ? 1 : 25) && !t->columns.empty()) {
    std::vector<const ColumnModel*> pk;
    for (const auto& c : t->columns)
      if (c.pk) pk.push_back(&c);
    sql += " on conflict";
    if (!pk.empty() && chance(70)) sql += " (" + pk[0]->name + ")";
    else if (chance(20)) sql += " (" + one(t->columns).name + ")";
    if (chance(50)) {
      sql += " do nothing";
    } else {
      Scope s;
      for (const auto& c : t->columns) {
        s.cols.push_back({"", c.name, c.type});
        s.cols.push_back({"excluded", c.name, c.type});
      }
      const ColumnModel& c = one(t->columns);
      sql += " do update set " + c.name + " = " + expr(s, 2, c.type);
      if (chance(30)) sql += " where " + predicate(s, 1);
    }
    if (chance(10)) sql += " on conflict do nothing";
  }
  if (chance(4)) sql += " " + tags();
  if (chance(3)) sql += " with context ctx = " + literal(Ty::kInt);
  Scope rs;
  for (const auto& c : t->columns) rs.cols.push_back({"", c.name, c.type});
  sql += returning(rs);
  return sql;
}

std::string SqlGrammar::update() {
  const RelationModel* t = relation(false);
  if (!t || t->columns.empty()) return "select 2";
  Scope s;
  std::string target = t->name;
  std::string alias = chance(20) ? "u" : "";
  for (const auto& c : t->columns) s.cols.push_back({alias, c.name, c.type});
  if (chance(5)) {
    // An inline subquery target, written through like a view.
    std::vector<std::string> names;
    for (const auto& c : t->columns) names.push_back(c.name);
    target = "(select " + join(names) + " from " + t->name + ") as v";
    for (auto& c : s.cols) c.qualifier = "";
  } else if (!alias.empty()) {
    target += " as " + alias;
  }
  std::vector<std::string> sets;
  int n = range(1, 2);
  for (int i = 0; i < n; ++i) {
    const ColumnModel& c = one(t->columns);
    sets.push_back(c.name + " = " + expr(s, 2, c.type));
  }
  std::string with;
  Scope dummy;
  if (chance(5)) with = with_clause(nullptr, 1, &dummy);
  std::string sql = with + "update " + target + " set " + join(sets);
  if (chance(75)) sql += " where " + predicate(s, 2);
  sql += returning(s);
  return sql;
}

std::string SqlGrammar::del() {
  const RelationModel* t = relation(false);
  if (!t) return "select 3";
  Scope s;
  for (const auto& c : t->columns) s.cols.push_back({"", c.name, c.type});
  std::string sql = "delete from " + t->name;
  if (chance(5)) {
    std::vector<std::string> names;
    for (const auto& c : t->columns) names.push_back(c.name);
    sql = "delete from (select " + join(names) + " from " + t->name + ") as v";
  }
  if (chance(80)) sql += " where " + predicate(s, 2);
  sql += returning(s);
  return sql;
}

std::string SqlGrammar::create_index() {
  const RelationModel* t = table();
  if (!t || t->columns.empty()) return "select 4";
  std::vector<std::string> cols;
  int n = range(1, 2);
  for (int i = 0; i < n; ++i) {
    std::string c = one(t->columns).name;
    if (chance(15)) c += " collate " + collation();
    if (chance(25)) c += " desc";
    cols.push_back(c);
  }
  std::string sql = std::string("create ") + (chance(25) ? "unique " : "") + "index " + (chance(10) ? "if not exists " : "") +
                    fresh_name("ix", 6) + " on " + t->name + " (" + join(cols) + ")";
  if (chance(15)) {
    Scope s;
    for (const auto& c : t->columns) s.cols.push_back({"", c.name, c.type});
    sql += " where " + predicate(s, 1);
  }
  if (chance(5)) sql += " " + tags();
  return sql;
}

std::string SqlGrammar::create_view() {
  Query q = select(nullptr, 2, -1);
  std::string sql = std::string("create view ") + (chance(10) ? "if not exists " : "") + fresh_name("v", 5);
  if (chance(20)) {
    std::vector<std::string> names;
    for (size_t i = 0; i < q.cols.size(); ++i) names.push_back("vc" + std::to_string(i));
    sql += " (" + join(names) + ")";
  }
  sql += " as " + q.sql;
  if (chance(5)) sql += " " + tags();
  return sql;
}

std::string SqlGrammar::create_materialized_view() {
  // Mostly the shapes a materialized view keeps: one table, a filter, or a grouping.
  const RelationModel* t = table();
  std::string body;
  if (t && !t->columns.empty() && chance(70)) {
    Scope s;
    for (const auto& c : t->columns) s.cols.push_back({"", c.name, c.type});
    if (chance(40)) {
      const ColumnModel& g = one(t->columns);
      body = "select " + g.name + ", count(*) as n" + (chance(50) ? ", sum(" + one(t->columns).name + ") as s" : "") +
             " from " + t->name + " group by " + g.name;
    } else {
      std::vector<std::string> cols;
      for (const auto& c : t->columns)
        if (chance(70)) cols.push_back(c.name);
      if (cols.empty()) cols.push_back(t->columns[0].name);
      body = "select " + join(cols) + " from " + t->name;
      if (chance(50)) body += " where " + predicate(s, 1);
    }
  } else {
    body = select(nullptr, 1, -1).sql;
  }
  std::string name = fresh_name("mv", 3);
  if (t && !t->columns.empty() && chance(25)) {
    // A maintained table: the declared shape is the body's.
    std::vector<std::string> defs, names;
    for (const auto& c : t->columns) {
      std::string tn = type_name(c.type);
      defs.push_back(c.name + (tn.empty() ? "" : " " + tn) + (c.pk ? " primary key" : c.not_null ? "" : " null"));
      names.push_back(c.name);
    }
    return "create table " + fresh_name("mt", 2) + " (" + join(defs) + ") maintained as select " + join(names) +
           " from " + t->name + (chance(30) ? " where " + column(Scope{}, Ty::kBool) : "");
  }
  return std::string("create materialized view ") + (chance(10) ? "if not exists " : "") + name + " as " + body;
}

std::string SqlGrammar::create_assertion() {
  Scope s;
  return "create assertion " + fresh_name("a", 3) + " check (" +
         (chance(70) ? "not exists " + subquery(s, 2, -1) : predicate(s, 2)) + ")";
}

std::string SqlGrammar::drop() {
  std::string ie = chance(30) ? "if exists " : "";
  switch (pick(6)) {
    case 0: case 1: {
      const RelationModel* t = table();
      return "drop table " + ie + (t && chance(90) ? t->name : fresh_name("t", 8));
    }
    case 2: {
      if (!model_->indexes.empty() && chance(90)) return "drop index " + ie + one(model_->indexes);
      return "drop index " + ie + fresh_name("ix", 6);
    }
    case 3: return "drop view " + ie + fresh_name("v", 5);
    case 4: return "drop materialized view " + ie + fresh_name("mv", 3);
    default:
      if (!model_->assertions.empty()) return "drop assertion " + ie + one(model_->assertions);
      return "drop assertion " + ie + fresh_name("a", 3);
  }
}

std::string SqlGrammar::alter_table() {
  const RelationModel* t = relation(false);
  if (!t || t->columns.empty()) return "select 5";
  std::string sql = "alter table " + t->name + " ";
  const ColumnModel& c = one(t->columns);
  Scope s;
  for (const auto& x : t->columns) s.cols.push_back({"", x.name, x.type});
  std::string cname = constraints_.empty() || chance(20) ? fresh_name("k", 6) : one(constraints_);
  switch (pick(20)) {
    case 0: return sql + "rename to " + fresh_name("t", 8);
    case 1: return sql + "rename " + (chance(50) ? "column " : "") + c.name + " to " + fresh_name("c", 9);
    case 2: case 3: {
      std::vector<ColumnModel> cols;
      std::string d = column_def(static_cast<int>(t->columns.size()) + pick(3), &cols, t->columns);
      return sql + "add " + (chance(50) ? "column " : "") + d;
    }
    case 4: return sql + "drop " + (chance(50) ? "column " : "") + c.name;
    case 5: case 6: {
      std::vector<ColumnModel> cols = t->columns;
      std::string tc = table_constraint(cols, true);
      if (tc.rfind("constraint ", 0) == 0) return sql + "add " + tc;
      return sql + "add " + (chance(50) ? "constraint " + cname + " " : "") + tc;
    }
    case 7: return sql + "drop constraint " + cname;
    case 8: return sql + "rename constraint " + cname + " to " + fresh_name("k", 6);
    case 9: {
      std::vector<std::string> k;
      for (const auto& x : t->columns)
        if (!x.generated && chance(40) && k.size() < 2) k.push_back(x.name);
      return sql + "alter primary key (" + join(k) + ")";
    }
    case 10: return sql + "alter " + (chance(50) ? "column " : "") + c.name + " set not null";
    case 11: return sql + "alter column " + c.name + " drop not null";
    case 12: return sql + "alter column " + c.name + " set data type " + type_name(random_type());
    case 13: return sql + "alter column " + c.name + " set default " + literal(c.type);
    case 14: return sql + "alter column " + c.name + " drop default";
    case 15: return sql + "alter column " + c.name + " set collate " + collation();
    case 16: {
      static const char* kVerb[] = {"set", "add", "drop"};
      int v = pick(3);
      std::string list = v == 2 ? "drop tags (" + fresh_name("tag", 4) + ")" : std::string(kVerb[v]) + tags().substr(4);
      switch (pick(3)) {
        case 0: return sql + list;
        case 1: return sql + "alter column " + c.name + " " + list;
        default: return sql + "alter constraint " + cname + " " + list;
      }
    }
    case 17: {
      std::vector<std::string> names;
      for (const auto& x : t->columns) names.push_back(x.name);
      const RelationModel* src = table();
      return sql + "set maintained as select " + join(names) + " from " + (src ? src->name : t->name);
    }
    case 18: return sql + "drop maintained";
    default: {
      std::vector<ColumnModel> cols;
      std::string d = column_def(static_cast<int>(t->columns.size()), &cols, t->columns);
      return sql + "add column " + d;
    }
  }
}

std::string SqlGrammar::alter_tags() {
  static const char* kObj[] = {"view ", "materialized view ", "index "};
  int k = pick(3);
  std::string name = k == 2 && !model_->indexes.empty() ? one(model_->indexes)
                     : k == 0                           ? fresh_name("v", 5)
                                                        : fresh_name("mv", 3);
  static const char* kVerb[] = {"set", "add"};
  std::string list = chance(30) ? "drop tags (" + fresh_name("tag", 4) + ")" : std::string(kVerb[pick(2)]) + tags().substr(4);
  return std::string("alter ") + kObj[k] + name + " " + list;
}

std::string SqlGrammar::transaction() {
  switch (pick(9)) {
    case 0: {
      static const char* kModes[] = {"begin", "begin transaction", "begin deferred", "begin immediate",
                                     "begin exclusive"};
      savepoints_.clear();
      return kModes[pick(5)];
    }
    case 1: case 2: {
      std::string name = fresh_name("sp", 3);
      savepoints_.push_back(name);
      return "savepoint " + name;
    }
    case 3: return "release " + std::string(chance(50) ? "savepoint " : "") +
                   (savepoints_.empty() ? fresh_name("sp", 3) : one(savepoints_));
    case 4: return "rollback to " + std::string(chance(50) ? "savepoint " : "") +
                   (savepoints_.empty() ? fresh_name("sp", 3) : one(savepoints_));
    case 5: case 6: return chance(50) ? "commit" : "end";
    default: return chance(70) ? "rollback" : "rollback transaction";
  }
}

std::string SqlGrammar::pragma() {
  switch (pick(14)) {
    case 0: return std::string("pragma default_column_nullability = ") + (chance(50) ? "'nullable'" : "'not_null'");
    case 1: return std::string("pragma ddl_transaction_policy = ") + (chance(70) ? "'permissive'" : "'strict'");
    case 2: return std::string("pragma foreign_keys = ") + (chance(50) ? "on" : chance(50) ? "off" : "1");
    case 3: return "pragma default_collation = " + collation();
    case 4: return std::string("pragma nondeterministic_schema = ") + (chance(50) ? "on" : "off");
    case 5: {
      std::vector<std::string> p;
      int n = range(0, 2);
      for (int i = 0; i < n; ++i) p.push_back(passes_.empty() || chance(5) ? "no_such_pass" : one(passes_));
      return "pragma optimizer_disabled_passes = '" + join(p) + "'";
    }
    case 6: return std::string("pragma module_pushdown = ") + (chance(50) ? "off" : "on");
    case 7: return std::string("pragma schema_path = ") + (chance(50) ? "'main'" : "'s0, main'");
    case 8: {
      static const char* kLimits[] = {"max_expr_depth", "max_compound_select", "max_join_tables", "max_view_depth",
                                      "max_length", "max_sql_length"};
      return std::string("pragma ") + kLimits[pick(6)] + " = " + std::to_string(range(1, 50) * (chance(20) ? 1 : 1000));
    }
    case 9: return "pragma integrity_check";
    case 10: return "analyze" + (chance(50) ? std::string() : " " + (table() ? table()->name : std::string("main.*")));
    default: {
      static const char* kRead[] = {"foreign_keys", "default_column_nullability", "schema_path", "max_length",
                                    "optimizer_disabled_passes", "default_vtab_module", "no_such_pragma"};
      return std::string("pragma ") + kRead[pick(7)];
    }
  }
}

std::string SqlGrammar::copy() {
  std::string path = "'" + file_dir_ + "/f" + std::to_string(pick(3)) + (chance(50) ? ".csv" : ".jsonl") + "'";
  static const char* kOpts[] = {"", " (format csv)", " with (format jsonl)", " (format csv, header true)",
                                " (format tsv, null 'NULL')", " (format json)", " (delimiter ';')"};
  const RelationModel* t = table();
  std::string opt = kOpts[pick(7)];
  switch (pick(4)) {
    case 0: return "copy (" + select(nullptr, 1, -1).sql + ") to " + path + opt;
    case 1: return t ? "copy " + t->name + " to " + path + opt : "select 6";
    case 2: return t ? "copy " + t->name + " from " + path + opt : "select 7";
    default: return std::string("select * from ") + (chance(50) ? "read_csv(" : "read_jsonl(") + path + ") limit 5";
  }
}

std::string SqlGrammar::declare_schema() {
  std::string name = fresh_name("s", 2);
  switch (pick(5)) {
    case 0: case 1: {
      std::string body = "table x (a integer primary key, b text null" +
                         std::string(chance(50) ? ", c real null" : "") + ") ";
      if (chance(50)) body += "table y (k text primary key, n integer null default 0) ";
      if (chance(30)) body += "index xb on x (b) ";
      if (chance(30)) body += "view xv as select a, b from x ";
      if (chance(40)) body += "seed x ((1, 'one'" + std::string(body.find("c real") != std::string::npos ? ", 1.5" : "") + ")) ";
      return std::string("declare ") + (chance(10) ? "logical " : "") + "schema " + name +
             (chance(30) ? " version '1.0." + std::to_string(pick(3)) + "'" : "") + " { " + body + "}";
    }
    case 2: return "apply schema " + name + (chance(30) ? " with seed" : "") +
                   (chance(15) ? " options (allow_destructive = true)" : "");
    case 3: return (chance(70) ? "diff schema " : "explain schema ") + name;
    default: {
      const RelationModel* t = table();
      return "declare lens for " + name + " over main { view x as select * from " + (t ? t->name : "t0") + " }";
    }
  }
}

// A deliberate mistake: a dropped token, a misspelt name or trailing garbage.
std::string SqlGrammar::mistake(std::string sql) {
  switch (pick(4)) {
    case 0: {
      size_t sp = sql.find(' ', pick(static_cast<int>(sql.size())));
      if (sp == std::string::npos) return sql + " )";
      size_t end = sql.find(' ', sp + 1);
      return sql.substr(0, sp) + (end == std::string::npos ? "" : sql.substr(end));
    }
    case 1: return sql + (chance(50) ? " )" : " where");
    case 2: {
      size_t at = sql.find(" c");
      if (at == std::string::npos) return "selec " + sql;
      return sql.substr(0, at) + " nosuch" + sql.substr(at + 2);
    }
    default: return sql.substr(0, pick(static_cast<int>(sql.size()) + 1));
  }
}

std::vector<GeneratedStatement> SqlGrammar::schema() {
  initial_ = SchemaModel{};
  model_ = &initial_;
  std::vector<GeneratedStatement> out;
  int tables = range(1, 4);
  for (int i = 0; i < tables; ++i) out.push_back({create_table("t" + std::to_string(i), i > 0), true});
  for (int i = 0; i < tables; ++i) {
    const RelationModel& t = initial_.relations[i];
    int inserts = range(0, 2);
    for (int k = 0; k < inserts; ++k) out.push_back({"insert into " + t.name + insert_values(t, range(1, 4)), false});
  }
  int extras = range(0, 3);
  for (int i = 0; i < extras; ++i) {
    int k = pick(3);
    out.push_back({k == 0 ? create_index() : k == 1 ? create_view() : create_materialized_view(), true});
  }
  model_ = nullptr;
  return out;
}

GeneratedStatement SqlGrammar::next(const SchemaModel& model) {
  model_ = &model;
  GeneratedStatement g;
  int k = pick(100);
  if (k < 28) {
    g.sql = select(nullptr, range(1, 3), -1).sql;
  } else if (k < 42) {
    g.sql = insert();
  } else if (k < 50) {
    g.sql = update();
  } else if (k < 55) {
    g.sql = del();
  } else if (k < 66) {
    g.changes_schema = true;
    switch (pick(9)) {
      case 0: g.sql = create_table(fresh_name("t", 8), true); break;
      case 1: g.sql = create_index(); break;
      case 2: g.sql = create_view(); break;
      case 3: g.sql = create_materialized_view(); break;
      case 4: g.sql = "refresh materialized view " + fresh_name("mv", 3); break;
      case 5: g.sql = create_assertion(); break;
      case 6: case 7: g.sql = drop(); break;
      default: g.sql = alter_tags(); break;
    }
  } else if (k < 75) {
    g.changes_schema = true;
    g.sql = alter_table();
  } else if (k < 83) {
    g.changes_schema = true;
    g.sql = transaction();
  } else if (k < 90) {
    g.changes_schema = true;  // default_column_nullability, schema_path … change what names mean
    g.sql = pragma();
  } else if (k < 93) {
    g.sql = copy();
  } else if (k < 96) {
    g.changes_schema = true;
    g.sql = declare_schema();
  } else {
    // Expressions alone: every function over literals of every type.
    Scope s;
    std::vector<std::string> cols;
    int n = range(1, 3);
    for (int i = 0; i < n; ++i) cols.push_back(chance(50) ? function_call(s, 2, "scalar") : expr(s, 3));
    g.sql = "select " + join(cols);
  }
  if (chance(3)) g.sql = mistake(g.sql);
  model_ = nullptr;
  return g;
}

}  // namespace quereus::fuzz
