// Differential testing: the generator (sql_generator.h says which differences it avoids).
#include "sql_generator.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

namespace quereus::difftest {

const char* coll_sql(CollName c) {
  switch (c) {
    case CollName::kBinary: return "binary";
    case CollName::kNocase: return "nocase";
    case CollName::kRtrim: return "rtrim";
  }
  return "binary";
}

namespace {

using Kind = TextColl::Kind;

// ---------------------------------------------------------------- collation resolution

// One way SQLite may read an operand: no collation, a column's, or an explicit COLLATE.
struct Reading {
  int rank;  // 0 none, 1 column, 2 explicit
  CollName name;
};

std::vector<Reading> sqlite_readings(const TextColl& c) {
  switch (c.kind) {
    case Kind::kFree: return {{0, CollName::kBinary}};
    case Kind::kColumn: return {{1, c.name}};
    case Kind::kExplicit: return {{2, c.name}};
    case Kind::kDerivedFree: return {{0, CollName::kBinary}, {1, CollName::kBinary}};
    case Kind::kPoison: return {};
  }
  return {};
}

// SQLite: an explicit COLLATE wins, left operand first; then a column's, left first.
CollName sqlite_resolve(const Reading& l, const Reading& r) {
  if (l.rank == 2) return l.name;
  if (r.rank == 2) return r.name;
  if (l.rank == 1) return l.name;
  if (r.rank == 1) return r.name;
  return CollName::kBinary;
}

// Quereus (types.md "Comparison collation resolution"): COLLATE bids 3, a declared
// collation 2, a defaulted BINARY nothing; same rank and different names is an error.
struct Bid {
  int rank = 0;
  CollName name = CollName::kBinary;
};

Bid quereus_bid(const TextColl& c) {
  if (c.kind == Kind::kExplicit) return {3, c.name};
  if (c.kind == Kind::kColumn && c.name != CollName::kBinary) return {2, c.name};
  return {};
}

std::optional<CollName> quereus_resolve(const std::vector<TextColl>& operands) {
  Bid best;
  bool conflict = false;
  for (const TextColl& c : operands) {
    Bid b = quereus_bid(c);
    if (b.rank > best.rank) {
      best = b;
      conflict = false;
    } else if (b.rank == best.rank && b.rank > 0 && b.name != best.name) {
      conflict = true;
    }
  }
  if (conflict) return std::nullopt;
  return best.name;
}

// The collation both engines use for `l op r`, when they agree.
std::optional<CollName> shared_resolution(const TextColl& l, const TextColl& r) {
  if (l.kind == Kind::kPoison || r.kind == Kind::kPoison) return std::nullopt;
  std::optional<CollName> q = quereus_resolve({l, r});
  if (!q) return std::nullopt;
  for (const Reading& a : sqlite_readings(l))
    for (const Reading& b : sqlite_readings(r))
      if (sqlite_resolve(a, b) != *q) return std::nullopt;
  return q;
}

// SQLite's compound SELECT: the leftmost leg whose column has a collation decides.
std::optional<CollName> shared_compound_resolution(const std::vector<TextColl>& legs) {
  for (const TextColl& c : legs)
    if (c.kind == Kind::kPoison || c.kind == Kind::kDerivedFree) return std::nullopt;
  std::optional<CollName> q = quereus_resolve(legs);
  if (!q) return std::nullopt;
  CollName s = CollName::kBinary;
  for (const TextColl& c : legs)
    if (c.kind == Kind::kColumn || c.kind == Kind::kExplicit) {
      s = c.name;
      break;
    }
  if (s != *q) return std::nullopt;
  return q;
}

// The collation a text value is grouped / deduplicated / ordered under on its own.
std::optional<CollName> own_collation(const TextColl& c) {
  return shared_resolution(c, TextColl{});
}

bool is_numeric(SqlType t) { return t == SqlType::kInt || t == SqlType::kReal; }

const std::vector<std::string> kTextPool = {
    "a", "A", "b", "B", "ab", "Ab", "AB", "abc", "b ", "a  ", "A ", "", " ", "x y", "X Y", "xyz", "_", "%", "a_b", "a%b",
    "ba", "bA", "zz", "Zz", "c", "cab"};
const std::vector<std::string> kLikePatterns = {"a%", "%b", "_", "%", "a_", "%a%", "_b%", "A%", "%B", "", "a", "x%y",
                                                "%_", "a\\%"};

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

}  // namespace

// ---------------------------------------------------------------- values

std::string SqlGenerator::int_literal() {
  static const std::vector<int> kSmall = {-3, -2, -1, 0, 0, 1, 1, 2, 2, 3, 4, 5, 7, 10, 12, 20, 100};
  return std::to_string(pick(kSmall));
}

std::string SqlGenerator::real_literal() {
  // Quarters: exact in binary, so sums and averages agree to the bit in both engines.
  const int q = rnd(81) - 40;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", q / 4.0);
  return buf;
}

std::string SqlGenerator::text_literal() { return quote(pick(kTextPool)); }

std::string SqlGenerator::value_literal(const ColumnDef& c, bool allow_null) {
  if (allow_null && chance(0.15)) return "null";
  switch (c.type) {
    case SqlType::kInt: return std::to_string(rnd(12) - 3);
    case SqlType::kReal: return real_literal();
    case SqlType::kText: return text_literal();
    case SqlType::kBool: break;
  }
  return "null";
}

// Quereus puts NULLs first in both directions, SQLite last under DESC: a DESC term
// always says where its NULLs go.
std::string SqlGenerator::order_direction() {
  if (chance(0.6)) return chance(0.2) ? (chance(0.5) ? " nulls first" : " nulls last") : "";
  return chance(0.5) ? " desc nulls first" : " desc nulls last";
}

// An ORDER BY of every column, in order, each in a random direction. A REAL column is
// ordered by its value rounded to 9 decimal places: SQLite 3.40.1's sums (over a sliding
// window frame, or a group's rows in another order) differ from ours in the last bits, and
// such rows, equal as compared, would come out in another order and pass a LIMIT or OFFSET
// differently (difftest seed 554158030). A compound's ORDER BY takes no expression, so a
// select with a REAL column is wrapped in a derived table first — unless a text column's
// collation would not survive that (gen_derived), when this gives "" and nothing is ordered.
std::string SqlGenerator::order_by_all(const std::string& sql, const std::vector<Expr>& columns) {
  bool real = false;
  for (const Expr& e : columns) real = real || e.type == SqlType::kReal;
  if (real)
    for (const Expr& e : columns)
      if (e.type == SqlType::kText && (e.coll.kind == Kind::kExplicit || e.mixed)) return "";
  std::string out = real ? "select * from (" + sql + ") as ord order by " : sql + " order by ";
  for (size_t i = 0; i < columns.size(); ++i) {
    out += i ? ", " : "";
    out += columns[i].type == SqlType::kReal ? "round(ord.x" + std::to_string(i) + ", 9)" : std::to_string(i + 1);
    out += order_direction();
  }
  return out;
}

SqlType SqlGenerator::random_value_type() {
  const int r = rnd(10);
  return r < 4 ? SqlType::kInt : r < 6 ? SqlType::kReal : SqlType::kText;
}

SqlType SqlGenerator::random_type() { return chance(0.08) ? SqlType::kBool : random_value_type(); }

// ---------------------------------------------------------------- schema and rows

GeneratedSchema SqlGenerator::make_schema() {
  GeneratedSchema out;
  const int tables = 2 + rnd(3);
  for (int t = 0; t < tables; ++t) {
    TableDef def;
    def.name = "t" + std::to_string(t);
    const int ncols = 2 + rnd(4);
    def.key_count = chance(0.3) ? 2 : 1;
    for (int i = 0; i < ncols; ++i) {
      ColumnDef c;
      c.name = "c" + std::to_string(i);
      const bool key = static_cast<size_t>(i) < def.key_count;
      c.type = key ? (chance(0.7) ? SqlType::kInt : SqlType::kText) : random_value_type();
      if (c.type == SqlType::kText && chance(0.45)) c.coll = chance(0.6) ? CollName::kNocase : CollName::kRtrim;
      c.nullable = !key;
      def.columns.push_back(c);
    }
    std::string q = "create table " + def.name + " (", s = q;
    for (const ColumnDef& c : def.columns) {
      // SQLite: INT, not INTEGER — a one-column INTEGER PRIMARY KEY is the rowid, which
      // takes a NULL as "pick the next rowid" (Quereus has no rowid).
      const char* type = c.type == SqlType::kInt ? "integer" : c.type == SqlType::kReal ? "real" : "text";
      const char* lite = c.type == SqlType::kInt ? "int" : type;
      std::string coll;
      if (c.coll != CollName::kBinary) coll = std::string(" collate ") + coll_sql(c.coll);
      q += c.name + " " + type + coll + (c.nullable ? " null" : "") + ", ";
      s += c.name + " " + lite + coll + (c.nullable ? "" : " not null") + ", ";
    }
    std::string key = "primary key (";
    for (size_t i = 0; i < def.key_count; ++i) key += (i ? ", " : "") + def.columns[i].name;
    key += ")";
    out.quereus_ddl.push_back(q + key + ")");
    out.sqlite_ddl.push_back(s + key + ") strict");
    // Secondary indexes give the planner other access paths to the same answers.
    if (chance(0.5)) {
      const ColumnDef& c = def.columns[rnd(static_cast<int>(def.columns.size()))];
      std::string col = c.name;
      if (c.type == SqlType::kText && chance(0.3)) col += std::string(" collate ") + pick(std::vector<std::string>{"nocase", "binary", "rtrim"});
      const std::string idx = "create index " + def.name + "_i" + " on " + def.name + " (" + col;
      // DESC on our side only: SQLite 3.40.1's `x not in (select c …)` misses the NULLs of
      // a DESC index on c. An index never changes an answer, so SQLite's needs no DESC.
      out.quereus_ddl.push_back(idx + (chance(0.3) ? " desc)" : ")"));
      out.sqlite_ddl.push_back(idx + ")");
    }
    // Rows: unique keys (under the key columns' collations), duplicates and NULLs elsewhere.
    const int nrows = chance(0.1) ? 0 : chance(0.1) ? 30 + rnd(50) : rnd(22);
    std::set<std::vector<std::string>> keys;
    for (int r = 0; r < nrows; ++r) {
      std::vector<std::string> vals, folded;
      for (size_t i = 0; i < def.columns.size(); ++i) {
        const ColumnDef& c = def.columns[i];
        std::string v = value_literal(c, c.nullable);
        vals.push_back(v);
        if (i < def.key_count) {
          std::string f = v;
          if (c.coll == CollName::kNocase) std::transform(f.begin(), f.end(), f.begin(), ::tolower);
          if (c.coll == CollName::kRtrim) {
            f.pop_back();  // the closing quote
            while (!f.empty() && f.back() == ' ') f.pop_back();
          }
          folded.push_back(f);
        }
      }
      if (!keys.insert(folded).second) continue;
      std::string sql = "insert into " + def.name + " values (";
      for (size_t i = 0; i < vals.size(); ++i) sql += (i ? ", " : "") + vals[i];
      out.rows.push_back(sql + ")");
    }
    out.tables.push_back(std::move(def));
  }
  // Views over the tables (and earlier views), read as FROM items like derived tables.
  schema_ = &out;
  const int views = rnd(3);
  for (int v = 0; v < views; ++v) {
    alias_counter_ = 0;
    ctes_.clear();
    Select sel = gen_derived(1, nullptr);
    ViewDef view;
    view.name = "v" + std::to_string(v);
    for (const Expr& e : sel.columns) {
      view.types.push_back(e.type);
      view.colls.push_back(e.coll);
      view.digits.push_back(e.digits);
    }
    out.view_ddl.push_back("create view " + view.name + " as " + sel.sql);
    out.views.push_back(std::move(view));
  }
  schema_ = nullptr;
  return out;
}

const TableDef& SqlGenerator::pick_table() {
  for (;;) {
    const TableDef& t = schema_->tables[rnd(static_cast<int>(schema_->tables.size()))];
    if (&t != excluded_table_) return t;
  }
}

SqlGenerator::Select SqlGenerator::gen_derived(int depth, const std::vector<SqlType>* want) {
  Select sel;
  if (chance(0.2)) {
    sel = gen_compound(depth, nullptr, want);
    for (const Expr& e : sel.columns)
      if (e.fold != CollName::kBinary) sel.compound = false;
    if (!sel.compound) sel = gen_select(depth, nullptr, want, false);
  } else {
    sel = gen_select(depth, nullptr, want, false);
  }
  // A LIMIT keeps a determined set of rows only under an order of whole rows without
  // collation ties: numeric columns only.
  bool numeric = true;
  for (const Expr& e : sel.columns)
    if (e.type == SqlType::kText) numeric = false;
  if (numeric && chance(0.2)) {
    sel.sql = order_by_all(sel.sql, sel.columns);  // never "": no text column
    sel.sql += " limit " + std::to_string(rnd(6));
  }
  for (Expr& e : sel.columns) {
    // Read from outside, a column over an expression with no collation is a BINARY
    // column or no collation in SQLite, depending on flattening.
    if (e.coll.kind == Kind::kFree) e.coll.kind = Kind::kDerivedFree;
    if (e.coll.kind == Kind::kExplicit || e.mixed) e.coll = TextColl{Kind::kPoison, CollName::kBinary};
  }
  return sel;
}

// ---------------------------------------------------------------- queries

GeneratedQuery SqlGenerator::make_query(const GeneratedSchema& schema) {
  schema_ = &schema;
  alias_counter_ = 0;
  ctes_.clear();
  GeneratedQuery out;
  std::string with;
  if (chance(0.12)) {
    Select cte = gen_derived(1, nullptr);
    Cte c;
    c.name = "w0";
    for (const Expr& e : cte.columns) c.columns.push_back(e);
    with = "w0 as (" + cte.sql + ")";
    ctes_.push_back(std::move(c));
  }
  if (chance(0.08)) {  // a recursive CTE counting from 1
    Cte c;
    c.name = "w1";
    c.columns.push_back(Expr{"x0", SqlType::kInt, TextColl{Kind::kDerivedFree, CollName::kBinary}});
    with += std::string(with.empty() ? "" : ", ") + "w1(x0) as (select 1 union all select x0 + 1 from w1 where x0 < " +
            std::to_string(1 + rnd(12)) + ")";
    ctes_.push_back(std::move(c));
  }
  if (!with.empty()) with = std::string(ctes_.back().name == "w1" ? "with recursive " : "with ") + with + " ";
  const bool compound = chance(0.15);
  right_full_allowed_ = !compound;
  Select body = compound ? gen_compound(2, nullptr, nullptr) : gen_select(2 + rnd(2), nullptr, nullptr, true);
  right_full_allowed_ = false;
  out.sql = with + body.sql;
  bool orderable = true;
  for (const Expr& e : body.columns) {
    out.columns.push_back(OutColumn{e.type, e.fold});
    if (e.type == SqlType::kText && !own_collation(e.coll)) orderable = false;
  }
  const std::string ordered = orderable && chance(0.3) ? order_by_all(body.sql, body.columns) : "";
  if (!ordered.empty()) {
    // Rows that tie under a column's collation may come in either order: the ordered
    // comparison folds each text column by the collation it is sorted under.
    for (size_t i = 0; i < body.columns.size(); ++i)
      if (body.columns[i].type == SqlType::kText) out.columns[i].fold = *own_collation(body.columns[i].coll);
    out.sql = with + ordered;
    if (chance(0.7)) {
      out.sql += " limit " + std::to_string(rnd(8));
      if (chance(0.4)) out.sql += " offset " + std::to_string(rnd(5));
    }
    out.ordered = true;
  }
  schema_ = nullptr;
  return out;
}

std::vector<const SqlGenerator::ScopeColumn*> SqlGenerator::columns_of(SqlType t, const Scope* scope,
                                                                        bool outer_too) {
  std::vector<const ScopeColumn*> out;
  for (const Scope* s = scope; s; s = outer_too ? s->outer : nullptr)
    for (const ScopeColumn& c : s->columns)
      if (c.type == t) out.push_back(&c);
  return out;
}

SqlGenerator::Source SqlGenerator::gen_from(int depth, const Scope* outer) {
  Source src;
  src.scope.outer = outer;
  const int r = rnd(100);
  const int items = r < 45 ? 1 : r < 82 ? 2 : 3;
  // RIGHT / FULL JOIN only in the top query's own FROM: SQLite 3.40.1 answers them wrongly
  // inside views, CTEs, derived tables and compound legs (docs/conformance.md).
  const bool right_full_ok = right_full_allowed_;
  right_full_allowed_ = false;
  std::vector<std::string> joins(items);
  bool right_or_full = false;
  for (int i = 1; i < items; ++i) {
    const int j = rnd(100);
    joins[i] = j < 50 ? " join " : j < 78 ? " left join " : j < 86 ? " cross join " : j < 93 ? " right join " : " full join ";
    if (j >= 86 && !right_full_ok) joins[i] = " left join ";
    right_or_full = right_or_full || joins[i] == " right join " || joins[i] == " full join ";
  }
  for (int i = 0; i < items; ++i) {
    const std::string alias = next_alias();
    std::string item;
    std::vector<ScopeColumn> cols;
    std::vector<ScopeColumn> keys;
    bool keyed = false;
    const int kind = rnd(100);
    if (kind < 12 && depth > 0) {
      Select sub = gen_derived(depth - 1, nullptr);
      item = "(" + sub.sql + ") as " + alias;
      for (size_t k = 0; k < sub.columns.size(); ++k) {
        const Expr& e = sub.columns[k];
        if (e.type == SqlType::kBool) continue;  // a boolean column is not reused
        cols.push_back(ScopeColumn{alias + ".x" + std::to_string(k), e.type, e.coll, false, e.digits, true});
      }
    } else if (kind < 22 && !ctes_.empty()) {
      const Cte& cte = ctes_[rnd(static_cast<int>(ctes_.size()))];
      item = cte.name + " as " + alias;
      for (size_t k = 0; k < cte.columns.size(); ++k) {
        const Expr& e = cte.columns[k];
        if (e.type == SqlType::kBool) continue;
        cols.push_back(ScopeColumn{alias + ".x" + std::to_string(k), e.type, e.coll, false, e.digits, true});
      }
    } else if (kind < 32 && !schema_->views.empty() && !excluded_table_) {  // a view may read the target
      const ViewDef& v = schema_->views[rnd(static_cast<int>(schema_->views.size()))];
      item = v.name + " as " + alias;
      for (size_t k = 0; k < v.types.size(); ++k) {
        if (v.types[k] == SqlType::kBool) continue;
        cols.push_back(ScopeColumn{alias + ".x" + std::to_string(k), v.types[k], v.colls[k], false, v.digits[k], true});
      }
    } else {
      const TableDef& t = pick_table();
      item = t.name + " as " + alias;
      keyed = true;
      for (size_t k = 0; k < t.columns.size(); ++k) {
        const ColumnDef& c = t.columns[k];
        ScopeColumn sc{alias + "." + c.name, c.type, TextColl{Kind::kColumn, c.coll}, k < t.key_count};
        cols.push_back(sc);
        if (sc.key) keys.push_back(sc);
      }
    }
    if (cols.empty()) {  // a derived table of booleans only: a one-column stand-in
      item = "(select 1 as x0) as " + alias;
      cols.push_back(ScopeColumn{alias + ".x0", SqlType::kInt, TextColl{}, false});
    }
    if (i == 0) {
      src.sql = item;
    } else {
      const std::string& join = joins[i];
      src.sql += join + item;
      if (join != " cross join ") {
        // ON: an equality between the new item and one before it, often with more.
        Scope joined;
        joined.columns = src.scope.columns;
        joined.columns.insert(joined.columns.end(), cols.begin(), cols.end());
        joined.outer = outer;
        std::string on;
        for (int attempt = 0; attempt < 6 && on.empty(); ++attempt) {
          const ScopeColumn& a = pick(cols);
          std::vector<const ScopeColumn*> match;
          for (const ScopeColumn& b : src.scope.columns)
            if ((is_numeric(a.type) && is_numeric(b.type)) || (a.type == SqlType::kText && b.type == SqlType::kText))
              match.push_back(&b);
          if (match.empty()) continue;
          const ScopeColumn& b = *pick(match);
          Expr l{b.ref, b.type, b.coll}, rr{a.ref, a.type, a.coll};
          if (a.type == SqlType::kText) settle_collation(l, rr);
          on = l.sql + " = " + rr.sql;
        }
        Ctx ctx;
        ctx.scope = &joined;
        // SQLite 3.40.1 loses the unmatched rows of a RIGHT / FULL JOIN that follows a join
        // whose ON holds a constant-false term: no extra ON terms beside such joins.
        if (on.empty() && right_or_full) on = "1 = 1";
        if (on.empty() || (!right_or_full && chance(0.3))) {
          Expr extra = gen_bool(ctx, 1);
          on = on.empty() ? extra.sql : on + " and " + extra.sql;
        }
        src.sql += " on " + on;
      }
    }
    src.scope.columns.insert(src.scope.columns.end(), cols.begin(), cols.end());
    if (keyed)
      src.keys.push_back(keys);
    else
      src.keys.push_back({});
  }
  return src;
}

SqlGenerator::Select SqlGenerator::gen_select(int depth, const Scope* outer, const std::vector<SqlType>* want,
                                              bool allow_fold) {
  for (int attempt = 0;; ++attempt) {
    Source from = gen_from(depth, outer);
    const Scope& scope = from.scope;
    std::vector<SqlType> types;
    if (want) {
      types = *want;
    } else {
      const int n = 1 + rnd(4);
      for (int i = 0; i < n; ++i) types.push_back(random_type());
    }
    const int r = rnd(100);
    enum { kPlain, kDistinct, kGrouped, kAggregate, kWindow } kind =
        r < 38 ? kPlain : r < 48 ? kDistinct : r < 72 ? kGrouped : r < 82 ? kAggregate : kWindow;
    if (attempt >= 8) kind = kPlain;
    Select sel;
    std::vector<std::string> items;
    std::vector<ScopeColumn> keys;
    std::string group_by;
    Ctx row;
    row.scope = &scope;
    if (kind == kGrouped) {
      std::vector<const ScopeColumn*> candidates;
      for (const ScopeColumn& c : scope.columns)
        if (c.type != SqlType::kText || own_collation(c.coll)) candidates.push_back(&c);
      const int nkeys = candidates.empty() ? 0 : 1 + rnd(std::min<int>(3, static_cast<int>(candidates.size())));
      std::set<std::string> seen;
      for (int i = 0; i < nkeys; ++i) {
        ScopeColumn key = *pick(candidates);
        // Sometimes an expression over the column, written the same way wherever it is used.
        const bool plain_text = key.type == SqlType::kText &&
                                (key.coll.kind == Kind::kDerivedFree ||
                                 (key.coll.kind == Kind::kColumn && key.coll.name == CollName::kBinary));
        if (chance(0.3) && key.type != SqlType::kText) {
          static const std::vector<std::string> kForms = {"(%s %% 3)", "abs(%s)", "(%s + 1)", "-(%s)"};
          std::string form = pick(kForms), out;
          for (size_t p = 0; p < form.size(); ++p) {
            if (form.compare(p, 2, "%s") == 0) { out += key.ref; ++p; }
            else if (form.compare(p, 2, "%%") == 0) { out += '%'; ++p; }
            else out += form[p];
          }
          if (key.type == SqlType::kReal && out.find('%') != std::string::npos) out = "abs(" + key.ref + ")";
          key.ref = out;
          key.key = false;
        } else if (chance(0.3) && plain_text && !key.digits) {
          key.ref = chance(0.5) ? "lower(" + key.ref + ")" : "substr(" + key.ref + ", 1, 1)";
          key.coll = TextColl{};
          key.key = false;
        }
        // A computed REAL (a sum or avg, over a sliding window frame too) may differ from
        // SQLite's in its last bits, and rows equal here group apart there (difftest seed
        // 990604134): such a key is grouped on its value rounded to 9 places, as
        // order_by_all orders it.
        if (key.type == SqlType::kReal && key.computed) {
          key.ref = "round(" + key.ref + ", 9)";
          key.key = false;
        }
        if (!seen.insert(key.ref).second) continue;
        keys.push_back(key);
        group_by += (group_by.empty() ? "" : ", ") + key.ref;
      }
      if (keys.empty()) kind = kAggregate;
    }
    Ctx out_ctx = row;
    if (kind == kGrouped || kind == kAggregate) out_ctx.keys = &keys;
    bool ok = true;
    for (size_t i = 0; i < types.size(); ++i) {
      Expr e;
      if (kind == kAggregate && i == 0 && types[i] != SqlType::kBool) {
        e = gen_agg(types[i], out_ctx, depth);  // an aggregate query has an aggregate
      } else if (kind == kWindow && chance(0.5) && types[i] != SqlType::kBool) {
        e = gen_window(types[i], from, depth);
      } else if (kind == kGrouped && i < keys.size() && chance(0.6)) {
        // A grouping key as it is, when its type fits.
        std::vector<const ScopeColumn*> fit;
        for (const ScopeColumn& k : keys)
          if (k.type == types[i]) fit.push_back(&k);
        if (!fit.empty()) {
          const ScopeColumn& k = *pick(fit);
          e = Expr{k.ref, k.type, k.coll};
          e.digits = k.digits;  // a key over numeric-looking text stays out of min / max
          if (k.type == SqlType::kText) e.fold = own_collation(k.coll).value_or(CollName::kBinary);
        } else {
          e = gen_expr(types[i], out_ctx, depth);
        }
      } else {
        e = gen_expr(types[i], out_ctx, depth);
      }
      if (kind == kDistinct && e.type == SqlType::kText) {
        std::optional<CollName> c = own_collation(e.coll);
        if (!c) {
          ok = false;
          break;
        }
        e.fold = *c;
      }
      if (!allow_fold && e.fold != CollName::kBinary) {
        ok = false;
        break;
      }
      // A computed REAL may carry rounding residue unlike SQLite's in its last bits, and
      // rows equal here would then deduplicate apart under DISTINCT, UNION, INTERSECT or
      // EXCEPT: such an item is compared at 9 places, as grouping keys are.
      if (e.type == SqlType::kReal && (kind == kDistinct || round_reals_)) e.sql = "round(" + e.sql + ", 9)";
      items.push_back(e.sql + " as x" + std::to_string(i));
      sel.columns.push_back(e);
    }
    if (!ok && attempt < 12) continue;
    if (!ok) {  // literals always fit
      sel.columns.clear();
      items.clear();
      for (size_t i = 0; i < types.size(); ++i) {
        Ctx lit;
        Expr e = gen_leaf(types[i], lit);
        items.push_back(e.sql + " as x" + std::to_string(i));
        sel.columns.push_back(e);
      }
      kind = kPlain;
    }
    sel.sql = std::string("select ") + (kind == kDistinct ? "distinct " : "");
    for (size_t i = 0; i < items.size(); ++i) sel.sql += (i ? ", " : "") + items[i];
    sel.sql += " from " + from.sql;
    if (chance(0.55)) sel.sql += " where " + gen_bool(row, 2).sql;
    if (kind == kGrouped) {
      sel.sql += " group by " + group_by;
      if (chance(0.3)) sel.sql += " having " + gen_bool(out_ctx, 2).sql;
    } else if (kind == kAggregate && sel.columns[0].type != SqlType::kBool && chance(0.15)) {
      sel.sql += " having " + gen_bool(out_ctx, 1).sql;
    }
    return sel;
  }
}

SqlGenerator::Select SqlGenerator::gen_compound(int depth, const Scope* outer, const std::vector<SqlType>* want) {
  std::vector<SqlType> types;
  if (want) {
    types = *want;
  } else {
    const int n = 1 + rnd(3);
    for (int i = 0; i < n; ++i) types.push_back(random_value_type());
  }
  // Quereus groups a chain of set operators from the right, SQLite from the left: a third
  // leg repeats an associative operator, where the grouping cannot matter.
  static const std::vector<std::string> kOps = {" union ", " union all ", " intersect ", " except "};
  std::vector<std::string> ops = {pick(kOps)};
  if (ops[0] != " except " && chance(0.25)) ops.push_back(ops[0]);
  const int legs = static_cast<int>(ops.size()) + 1;
  bool distinct_op = ops[0] != " union all ";
  std::vector<Select> parts;
  const bool saved_round = round_reals_;
  round_reals_ = distinct_op;
  for (int i = 0; i < legs; ++i) parts.push_back(gen_select(depth - 1, outer, &types, false));
  round_reals_ = saved_round;
  Select out;
  out.compound = true;
  for (size_t c = 0; c < types.size(); ++c) {
    Expr e = parts[0].columns[c];
    e.sql = "x" + std::to_string(c);
    for (const Select& p : parts) {
      e.digits = e.digits || p.columns[c].digits;
      if (p.columns[c].coll.kind != e.coll.kind || p.columns[c].coll.name != e.coll.name) e.mixed = true;
    }
    if (types[c] == SqlType::kText) {
      std::vector<TextColl> colls;
      for (const Select& p : parts) colls.push_back(p.columns[c].coll);
      std::optional<CollName> shared = shared_compound_resolution(colls);
      if (!shared) {
        if (distinct_op)  // the engines would deduplicate differently: compare nothing here
          for (std::string& op : ops) op = " union all ";
        distinct_op = false;
        e.coll = TextColl{Kind::kPoison, CollName::kBinary};
      } else {
        bool plain = *shared == CollName::kBinary;
        for (const TextColl& cc : colls)
          if (cc.kind != Kind::kFree && !(cc.kind == Kind::kColumn && cc.name == CollName::kBinary)) plain = false;
        e.coll = plain ? TextColl{Kind::kFree, CollName::kBinary} : TextColl{Kind::kPoison, CollName::kBinary};
        e.fold = distinct_op ? *shared : CollName::kBinary;
        // Ordering the result sorts under the shared collation.
        if (!plain) e.coll = TextColl{Kind::kColumn, *shared};
      }
    }
    out.columns.push_back(e);
  }
  // A fold chosen before a later leg was turned into UNION ALL is only conservative.
  out.sql = parts[0].sql;
  for (int i = 1; i < legs; ++i) out.sql += ops[i - 1] + parts[i].sql;
  return out;
}

// ---------------------------------------------------------------- expressions

SqlGenerator::Expr SqlGenerator::text_op(std::string sql, const std::vector<const Expr*>& args) {
  Expr e;
  e.sql = std::move(sql);
  e.type = SqlType::kText;
  bool free = true;
  for (const Expr* a : args) {
    e.has_collate = e.has_collate || a->has_collate;
    e.digits = e.digits || a->digits || a->type != SqlType::kText;
    if (a->type != SqlType::kText) continue;
    const bool plain = a->coll.kind == Kind::kFree || a->coll.kind == Kind::kDerivedFree ||
                       (a->coll.kind == Kind::kColumn && a->coll.name == CollName::kBinary);
    if (!plain) free = false;
  }
  if (e.has_collate) free = false;  // SQLite looks for a COLLATE anywhere inside
  e.coll = free ? TextColl{} : TextColl{Kind::kPoison, CollName::kBinary};
  return e;
}

void SqlGenerator::settle_collation(Expr& l, Expr& r) {
  if (shared_resolution(l.coll, r.coll)) return;
  CollName name = static_cast<CollName>(rnd(3));
  if (l.coll.kind == Kind::kExplicit) name = l.coll.name;
  else if (r.coll.kind == Kind::kExplicit) name = r.coll.name;
  for (Expr* e : {&l, &r}) {
    if (e->coll.kind == Kind::kExplicit && e->coll.name == name) continue;
    e->sql = "(" + e->sql + ") collate " + coll_sql(name);
    e->coll = TextColl{Kind::kExplicit, name};
    e->has_collate = true;
  }
}

void SqlGenerator::force_collation(Expr& l, Expr& r) {
  CollName name = static_cast<CollName>(rnd(3));
  if (l.coll.kind == Kind::kExplicit) name = l.coll.name;
  for (Expr* e : {&l, &r}) {
    if (e->coll.kind == Kind::kExplicit && e->coll.name == name) continue;
    e->sql = "(" + e->sql + ") collate " + coll_sql(name);
    e->coll = TextColl{Kind::kExplicit, name};
    e->has_collate = true;
  }
}

SqlGenerator::Expr SqlGenerator::gen_leaf(SqlType t, const Ctx& ctx) {
  if (ctx.keys) {
    std::vector<const ScopeColumn*> fit;
    for (const ScopeColumn& k : *ctx.keys) {
      if (k.type != t) continue;
      // A key's text is one of its group's spellings: only where that is folded.
      if (t == SqlType::kText && own_collation(k.coll).value_or(CollName::kBinary) != CollName::kBinary && !ctx.top)
        continue;
      fit.push_back(&k);
    }
    if (!fit.empty() && chance(0.6)) {
      const ScopeColumn& k = *pick(fit);
      Expr e{k.ref, k.type, k.coll};
      e.digits = k.digits;
      if (t == SqlType::kText) e.fold = own_collation(k.coll).value_or(CollName::kBinary);
      return e;
    }
  } else if (ctx.scope && t != SqlType::kBool) {
    std::vector<const ScopeColumn*> fit = columns_of(t, ctx.scope, false);
    if (fit.empty() || chance(0.2)) {
      std::vector<const ScopeColumn*> outer = columns_of(t, ctx.scope, true);
      if (!outer.empty()) fit = outer;
    }
    if (!fit.empty() && chance(0.8)) {
      const ScopeColumn& c = *pick(fit);
      Expr e{c.ref, c.type, c.coll};
      e.digits = c.digits;
      return e;
    }
  }
  Expr e;
  e.type = t;
  if (chance(0.06) && t != SqlType::kBool) {
    e.sql = "null";
    return e;
  }
  switch (t) {
    case SqlType::kInt: e.sql = int_literal(); break;
    case SqlType::kReal: e.sql = real_literal(); break;
    case SqlType::kText: e.sql = text_literal(); break;
    case SqlType::kBool: e.sql = chance(0.5) ? "true" : "false"; break;
  }
  return e;
}

SqlGenerator::Expr SqlGenerator::gen_expr(SqlType t, const Ctx& ctx_in, int depth) {
  if (t == SqlType::kBool) return gen_bool(ctx_in, depth);
  if (ctx_in.keys && chance(0.45)) return gen_agg(t, ctx_in, depth);
  if (depth <= 0 || chance(0.3)) return gen_leaf(t, ctx_in);
  Ctx ctx = ctx_in;
  ctx.top = false;
  const int r = rnd(100);
  if (r < 8 && !ctx.keys) return gen_subquery_scalar(t, ctx, depth);
  if (r < 20) {  // CASE over this type (searched, simple or iif)
    Expr c = gen_bool(ctx, depth - 1), a = gen_expr(t, ctx, depth - 1), b = gen_expr(t, ctx, depth - 1);
    std::string sql = "case when " + c.sql + " then " + a.sql + (chance(0.7) ? " else " + b.sql : "") + " end";
    Expr extra(gen_leaf(t, ctx));  // a simple CASE's second THEN
    const int form = rnd(10);
    if (form < 2) {
      sql = "iif(" + c.sql + ", " + a.sql + ", " + b.sql + ")";
    } else if (form < 4) {
      // case x when v1 then … : each WHEN compares as `x = v` does (literals bid nothing).
      const SqlType xt = chance(0.6) ? SqlType::kInt : SqlType::kText;
      Expr x = gen_expr(xt, ctx, depth - 1);
      if (xt == SqlType::kText && !own_collation(x.coll)) {
        Expr literal;
        settle_collation(x, literal);
      }
      c.has_collate = c.has_collate || x.has_collate;
      sql = "case " + x.sql + " when " + gen_leaf(xt, Ctx{}).sql + " then " + a.sql;
      if (chance(0.6)) sql += " when " + gen_leaf(xt, Ctx{}).sql + " then " + extra.sql;
      sql += (chance(0.7) ? " else " + b.sql : "") + " end";
    }
    if (t == SqlType::kText) {
      Expr e = text_op(sql, {&a, &b, &extra});
      if (c.has_collate) e.coll = TextColl{Kind::kPoison, CollName::kBinary};
      e.has_collate = e.has_collate || c.has_collate;
      return e;
    }
    return Expr{sql, t, {}, CollName::kBinary, a.has_collate || b.has_collate || c.has_collate || extra.has_collate};
  }
  if (r < 28) {  // coalesce / ifnull / nullif
    Expr a = gen_expr(t, ctx, depth - 1), b = gen_expr(t, ctx, depth - 1);
    std::string sql;
    const int k = rnd(3);
    if (k == 2 && t == SqlType::kText) force_collation(a, b);  // nullif compares
    sql = std::string(k == 0 ? "coalesce(" : k == 1 ? "ifnull(" : "nullif(") + a.sql + ", " + b.sql + ")";
    if (t == SqlType::kText) return text_op(sql, {&a, &b});
    return Expr{sql, t, {}, CollName::kBinary, a.has_collate || b.has_collate};
  }
  switch (t) {
    case SqlType::kInt: {
      if (r < 50) {
        Expr a = gen_expr(SqlType::kInt, ctx, depth - 1), b = gen_expr(SqlType::kInt, ctx, depth - 1);
        static const std::vector<std::string> kOps = {" + ", " - ", " * ", " % "};
        return Expr{"(" + a.sql + pick(kOps) + b.sql + ")", t, {}, CollName::kBinary, a.has_collate || b.has_collate};
      }
      if (r < 60) {
        Expr a = gen_expr(SqlType::kInt, ctx, depth - 1);
        return Expr{(chance(0.5) ? "abs(" : "-(") + a.sql + ")", t, {}, CollName::kBinary, a.has_collate};
      }
      if (r < 78) {
        Expr a = gen_expr(SqlType::kText, ctx, depth - 1);
        if (chance(0.6)) return Expr{"length(" + a.sql + ")", t, {}, CollName::kBinary, a.has_collate};
        // instr(x, '') is 0 in Quereus, 1 in SQLite: the needle is a non-empty literal.
        const std::string needle = quote(pick(std::vector<std::string>{"a", "b", "A", " ", "_", "ab", "%", "x"}));
        return Expr{"instr(" + a.sql + ", " + needle + ")", t, {}, CollName::kBinary, a.has_collate};
      }
      if (r < 88) {
        Expr a = gen_expr(SqlType::kReal, ctx, depth - 1);
        return Expr{"cast(" + a.sql + " as integer)", t, {}, CollName::kBinary, a.has_collate};
      }
      return gen_leaf(t, ctx);
    }
    case SqlType::kReal: {
      if (r < 55) {
        // At least one REAL operand: the result is REAL in both engines. A division's
        // left side is REAL, so no integer / integer division (Quereus divides as reals).
        Expr a = gen_expr(SqlType::kReal, ctx, depth - 1);
        Expr b = gen_expr(chance(0.5) ? SqlType::kReal : SqlType::kInt, ctx, depth - 1);
        static const std::vector<std::string> kOps = {" + ", " - ", " * ", " / "};
        const std::string& op = pick(kOps);
        if (op != " / " && chance(0.5)) std::swap(a, b);
        return Expr{"(" + a.sql + op + b.sql + ")", t, {}, CollName::kBinary, a.has_collate || b.has_collate};
      }
      if (r < 70) {
        Expr a = gen_expr(SqlType::kReal, ctx, depth - 1);
        return Expr{(chance(0.5) ? "abs(" : "-(") + a.sql + ")", t, {}, CollName::kBinary, a.has_collate};
      }
      if (r < 80) {
        Expr a = gen_expr(SqlType::kInt, ctx, depth - 1);
        return Expr{"(" + a.sql + " * 1.0)", t, {}, CollName::kBinary, a.has_collate};
      }
      if (r < 88) {
        // Half away from zero in both (Quereus may answer an INTEGER), over exact values
        // only: SQLite rounds a computed -1.5499999999999998 to one place as -1.6 (it
        // reads 16 significant digits first), Quereus as -1.5.
        Expr a = gen_leaf(SqlType::kReal, ctx);
        return Expr{"round(" + a.sql + (chance(0.5) ? ", 1)" : ")"), t, {}, CollName::kBinary, a.has_collate};
      }
      return gen_leaf(t, ctx);
    }
    case SqlType::kText: {
      Expr a = gen_expr(SqlType::kText, ctx, depth - 1);
      if (r < 45) {
        Expr b = gen_expr(SqlType::kText, ctx, depth - 1);
        return text_op("(" + a.sql + " || " + b.sql + ")", {&a, &b});
      }
      if (r < 55) return text_op((chance(0.5) ? "upper(" : "lower(") + a.sql + ")", {&a});
      if (r < 68) {
        // A start below 1 or a negative length counts differently in the two engines.
        std::string sql = "substr(" + a.sql + ", " + std::to_string(1 + rnd(4));
        if (chance(0.6)) sql += ", " + std::to_string(rnd(4));
        return text_op(sql + ")", {&a});
      }
      if (r < 78) {
        static const std::vector<std::string> kTrims = {"trim(", "ltrim(", "rtrim("};
        static const std::vector<std::string> kChars = {"", "", ", 'a'", ", ' b'", ", 'xy'"};
        return text_op(pick(kTrims) + a.sql + pick(kChars) + ")", {&a});
      }
      if (r < 86) {
        return text_op("replace(" + a.sql + ", " + quote(pick(std::vector<std::string>{"a", "b", " ", "A"})) + ", " +
                           text_literal() + ")",
                       {&a});
      }
      Expr n = gen_expr(SqlType::kInt, ctx, depth - 1);
      Expr e = text_op("cast(" + n.sql + " as text)", {&n});  // digits: see gen_agg
      // SQLite gives CAST its operand's collation: a bare column's (BINARY) — or, through
      // a derived table, none.
      if (n.sql.find_first_of("( ") == std::string::npos && n.sql.find('.') != std::string::npos && !e.has_collate)
        e.coll = TextColl{Kind::kDerivedFree, CollName::kBinary};
      return e;
    }
    case SqlType::kBool: break;
  }
  return gen_leaf(t, ctx);
}

SqlGenerator::Expr SqlGenerator::gen_agg(SqlType t, const Ctx& ctx, int depth) {
  // The argument reads this query's own columns only: an aggregate over outer columns
  // alone belongs to the outer query in SQLite.
  Scope local;
  if (ctx.scope) local.columns = ctx.scope->columns;
  Ctx arg;
  arg.scope = &local;
  arg.top = false;
  const int d = std::max(0, depth - 1);
  auto numeric_arg = [&](SqlType want) { return gen_expr(want, arg, d); };
  const std::string distinct = chance(0.15) ? "distinct " : "";
  switch (t) {
    case SqlType::kInt: {
      const int r = rnd(5);
      if (r == 0) return Expr{"count(*)", t};
      if (r == 1) {
        SqlType at = random_value_type();
        Expr a = gen_expr(at, arg, d);
        std::string dist = distinct;
        if (at == SqlType::kText && !own_collation(a.coll)) dist.clear();
        return Expr{"count(" + dist + a.sql + ")", t};
      }
      Expr a = numeric_arg(SqlType::kInt);
      return Expr{std::string(r == 2 ? "sum(" : r == 3 ? "min(" : "max(") + (r == 2 ? distinct : "") + a.sql + ")", t};
    }
    case SqlType::kReal: {
      const int r = rnd(5);
      if (r == 0 || r == 1) {
        Expr a = numeric_arg(chance(0.5) ? SqlType::kInt : SqlType::kReal);
        return Expr{std::string(r == 0 ? "avg(" : "total(") + distinct + a.sql + ")", t};
      }
      Expr a = numeric_arg(SqlType::kReal);
      return Expr{std::string(r == 2 ? "sum(" : r == 3 ? "min(" : "max(") + a.sql + ")", t};
    }
    case SqlType::kText: {
      // min / max compare under the argument's collation: one both engines agree on.
      // The result is one of the tied spellings, so it is folded and kept at the top.
      // Numeric-looking text is ranked and returned as its number by Quereus's min / max
      // (a debt of the reference its corpus pins): such arguments are left out.
      for (int attempt = 0; attempt < 4; ++attempt) {
        Expr a = gen_expr(SqlType::kText, arg, d);
        std::optional<CollName> c = own_collation(a.coll);
        if (!c || a.digits) continue;
        if (*c != CollName::kBinary && !ctx.top) continue;
        Expr e{std::string(chance(0.5) ? "min(" : "max(") + a.sql + ")", t};
        e.coll = TextColl{Kind::kPoison, CollName::kBinary};  // SQLite: no collation; Quereus: the argument's
        if (*c == CollName::kBinary && a.coll.kind != Kind::kColumn) e.coll = TextColl{};
        e.fold = *c;
        return e;
      }
      return Expr{"max(" + text_literal() + ")", t};
    }
    case SqlType::kBool: break;
  }
  return gen_leaf(t, ctx);
}

SqlGenerator::Expr SqlGenerator::gen_subquery_scalar(SqlType t, const Ctx& ctx, int depth) {
  // An aggregate over a correlated single-table query: always exactly one row.
  const TableDef& table = pick_table();
  const std::string alias = next_alias();
  Scope inner;
  inner.outer = ctx.scope;
  for (size_t k = 0; k < table.columns.size(); ++k) {
    const ColumnDef& c = table.columns[k];
    inner.columns.push_back(ScopeColumn{alias + "." + c.name, c.type, TextColl{Kind::kColumn, c.coll}, k < table.key_count});
  }
  std::vector<ScopeColumn> no_keys;
  Ctx agg;
  agg.scope = &inner;
  agg.keys = &no_keys;
  agg.top = false;
  Expr value = gen_agg(t, agg, depth - 1);  // an aggregate: exactly one row
  if (value.fold != CollName::kBinary) return gen_leaf(t, ctx);
  Ctx where;
  where.scope = &inner;
  std::string sql = "(select " + value.sql + " from " + table.name + " as " + alias;
  if (chance(0.8)) sql += " where " + gen_bool(where, depth - 1).sql;
  sql += ")";
  Expr e{sql, t};
  // SQLite gives a subquery no collation; Quereus its column's.
  if (t == SqlType::kText) e.coll = value.coll.kind == Kind::kFree ? TextColl{} : TextColl{Kind::kPoison, CollName::kBinary};
  return e;
}

SqlGenerator::Expr SqlGenerator::gen_comparison(const Ctx& ctx, int depth) {
  const bool text = chance(0.4);
  Expr l, r;
  if (text) {
    l = gen_expr(SqlType::kText, ctx, depth);
    r = chance(0.5) ? gen_leaf(SqlType::kText, ctx) : gen_expr(SqlType::kText, ctx, depth);
    if (chance(0.5)) std::swap(l, r);  // before settling: SQLite prefers the left operand
    settle_collation(l, r);
  } else {
    l = gen_expr(chance(0.6) ? SqlType::kInt : SqlType::kReal, ctx, depth);
    r = chance(0.5) ? gen_leaf(chance(0.6) ? SqlType::kInt : SqlType::kReal, ctx)
                    : gen_expr(chance(0.6) ? SqlType::kInt : SqlType::kReal, ctx, depth);
    if (chance(0.5)) std::swap(l, r);
  }
  static const std::vector<std::string> kOps = {" = ", " <> ", " < ", " <= ", " > ", " >= ", " is ", " is not "};
  return Expr{"(" + l.sql + pick(kOps) + r.sql + ")", SqlType::kBool, {}, CollName::kBinary,
              l.has_collate || r.has_collate};
}

// The keys whose value is the same in every row of a group (a NOCASE key is not: a
// correlated subquery would see one of its spellings).
std::vector<SqlGenerator::ScopeColumn> SqlGenerator::unfolded_keys(const std::vector<ScopeColumn>& keys) {
  std::vector<ScopeColumn> out;
  for (const ScopeColumn& k : keys)
    if (k.type != SqlType::kText || own_collation(k.coll).value_or(CollName::kNocase) == CollName::kBinary)
      out.push_back(k);
  return out;
}

SqlGenerator::Expr SqlGenerator::gen_bool(const Ctx& ctx_in, int depth) {
  Ctx ctx = ctx_in;
  ctx.top = false;
  const int d = std::max(0, depth - 1);
  const int r = rnd(100);
  if (depth > 0 && r < 18) {
    Expr a = gen_bool(ctx, d), b = gen_bool(ctx, d);
    return Expr{"(" + a.sql + (chance(0.5) ? " and " : " or ") + b.sql + ")", SqlType::kBool, {}, CollName::kBinary,
                a.has_collate || b.has_collate};
  }
  if (depth > 0 && r < 23) {
    Expr a = gen_bool(ctx, d);
    return Expr{"not " + a.sql, SqlType::kBool, {}, CollName::kBinary, a.has_collate};
  }
  if (r < 55) return gen_comparison(ctx, d);
  if (r < 63) {
    Expr a = gen_expr(random_value_type(), ctx, d);
    return Expr{"(" + a.sql + (chance(0.5) ? " is null)" : " is not null)"), SqlType::kBool, {}, CollName::kBinary,
                a.has_collate};
  }
  if (r < 70) {  // BETWEEN: two comparisons against literal bounds
    const SqlType t = chance(0.35) ? SqlType::kText : chance(0.6) ? SqlType::kInt : SqlType::kReal;
    Expr x = gen_expr(t, ctx, d), lo = gen_leaf(t, Ctx{}), hi = gen_leaf(t, Ctx{});
    if (t == SqlType::kText && !own_collation(x.coll)) {
      Expr bound;
      settle_collation(x, bound);
    }
    return Expr{"(" + x.sql + (chance(0.2) ? " not" : "") + " between " + lo.sql + " and " + hi.sql + ")", SqlType::kBool,
                {}, CollName::kBinary, x.has_collate};
  }
  if (r < 78) {  // IN (list of literals)
    const SqlType t = chance(0.35) ? SqlType::kText : chance(0.6) ? SqlType::kInt : SqlType::kReal;
    Expr x = gen_expr(t, ctx, d);
    if (t == SqlType::kText && !own_collation(x.coll)) {
      Expr dummy;
      settle_collation(x, dummy);
    }
    std::string list;
    const int n = 1 + rnd(4);
    for (int i = 0; i < n; ++i) list += (i ? ", " : "") + gen_leaf(t, Ctx{}).sql;
    return Expr{"(" + x.sql + (chance(0.3) ? " not in (" : " in (") + list + "))", SqlType::kBool, {}, CollName::kBinary,
                x.has_collate};
  }
  if (r < 85 && depth > 0) {  // IN (subquery)
    const SqlType t = chance(0.3) ? SqlType::kText : SqlType::kInt;
    Expr x = gen_expr(t, ctx, d);
    std::vector<SqlType> one = {t};
    Scope keys_scope;
    const Scope* outer = ctx.scope;
    if (ctx.keys) {  // inside a grouped output, only the keys are visible per group
      keys_scope.columns = unfolded_keys(*ctx.keys);
      outer = &keys_scope;
    }
    Select sub = chance(0.3) ? gen_derived(d, &one) : gen_select(d, outer, &one, false);
    if (t == SqlType::kText) {
      TextColl sc = sub.columns[0].coll;
      if (sc.kind == Kind::kFree) sc.kind = Kind::kDerivedFree;
      if (sc.kind == Kind::kExplicit) sc.kind = Kind::kPoison;
      if (!shared_resolution(x.coll, sc)) {
        Expr rhs{"", t, sc};
        settle_collation(x, rhs);
        if (!shared_resolution(x.coll, sc)) return gen_comparison(ctx, d);
      }
    }
    return Expr{"(" + x.sql + (chance(0.3) ? " not in (" : " in (") + sub.sql + "))", SqlType::kBool, {},
                CollName::kBinary, x.has_collate};
  }
  if (r < 92 && depth > 0) {  // EXISTS
    std::vector<SqlType> one = {SqlType::kInt};
    Scope keys_scope;
    const Scope* outer = ctx.scope;
    if (ctx.keys) {
      keys_scope.columns = unfolded_keys(*ctx.keys);
      outer = &keys_scope;
    }
    Select sub = gen_select(d, outer, &one, true);
    return Expr{std::string(chance(0.3) ? "not " : "") + "exists (" + sub.sql + ")", SqlType::kBool};
  }
  // LIKE / GLOB: both engines match case-sensitively and ignore collations.
  Expr x = gen_expr(SqlType::kText, ctx, d);
  if (chance(0.25))
    return Expr{"(" + x.sql + " glob " + quote(pick(std::vector<std::string>{"a*", "*b", "?", "*", "[ab]*", "A?"})) + ")",
                SqlType::kBool, {}, CollName::kBinary, x.has_collate};
  if (chance(0.15))
    return Expr{"(" + x.sql + " like " + quote(pick(std::vector<std::string>{"a!%", "%!_%", "!%%", "a!_b", "%!!"})) +
                    " escape '!')",
                SqlType::kBool, {}, CollName::kBinary, x.has_collate};
  return Expr{"(" + x.sql + (chance(0.2) ? " not like " : " like ") + quote(pick(kLikePatterns)) + ")", SqlType::kBool,
              {}, CollName::kBinary, x.has_collate};
}

SqlGenerator::Expr SqlGenerator::gen_window(SqlType t, const Source& from, int depth) {
  const Scope& scope = from.scope;
  Scope local;  // arguments read this query's own columns (see gen_agg)
  local.columns = scope.columns;
  Ctx arg;
  arg.scope = &local;
  arg.top = false;
  // The window order is total when it lists every key of every item (all base tables).
  bool total_possible = !from.keys.empty();
  for (const auto& k : from.keys)
    if (k.empty()) total_possible = false;
  const bool total = total_possible && chance(0.5);
  std::vector<const ScopeColumn*> sortable;
  for (const ScopeColumn& c : scope.columns)
    if (c.type != SqlType::kText || own_collation(c.coll)) sortable.push_back(&c);
  std::string over = "over (";
  if (!sortable.empty() && chance(0.5)) {
    over += "partition by " + pick(sortable)->ref;
    if (chance(0.3)) over += ", " + pick(sortable)->ref;
    over += " ";
  }
  bool ordered = false;
  std::string order;
  std::string single_numeric_key;
  if (total) {
    for (const auto& keys : from.keys)
      for (const ScopeColumn& k : keys) order += (order.empty() ? "" : ", ") + k.ref + order_direction();
    ordered = true;
  } else if (!sortable.empty() && chance(0.7)) {
    const int n = 1 + rnd(2);
    for (int i = 0; i < n; ++i) {
      const ScopeColumn& c = *pick(sortable);
      order += (order.empty() ? "" : ", ") + c.ref;
      if (n == 1 && is_numeric(c.type)) single_numeric_key = c.ref;
      order += order_direction();
    }
    ordered = true;
  }
  if (ordered) over += "order by " + order;
  // A frame: whole-partition and RANGE / GROUPS frames are deterministic over peers;
  // ROWS frames only over a total order.
  std::string frame;
  const int f = rnd(100);
  if (ordered && f < 25) {
    if (total) {
      static const std::vector<std::string> kRows = {
          " rows between 1 preceding and current row", " rows between 2 preceding and 1 following",
          " rows between current row and unbounded following", " rows between unbounded preceding and 1 preceding",
          " rows 2 preceding"};
      frame = pick(kRows);
    } else {
      static const std::vector<std::string> kGroups = {" groups between 1 preceding and current row",
                                                        " groups between current row and 1 following",
                                                        " range between current row and unbounded following"};
      frame = pick(kGroups);
      if (!single_numeric_key.empty() && chance(0.5))
        frame = pick(std::vector<std::string>{" range between 2 preceding and current row",
                                              " range between 1 preceding and 3 following"});
    }
  } else if (f < 35) {
    frame = " rows between unbounded preceding and unbounded following";
  }
  over += frame + ")";
  std::string call;
  SqlType result = t;
  TextColl coll;
  CollName fold = CollName::kBinary;
  const int r = rnd(100);
  if (t == SqlType::kInt && r < 40) {
    if (total && frame.empty() && chance(0.5)) {
      call = chance(0.5) ? "row_number()" : "ntile(" + std::to_string(1 + rnd(4)) + ")";
    } else if (frame.empty() && ordered) {
      call = chance(0.5) ? "rank()" : "dense_rank()";
    }
  } else if (t == SqlType::kReal && r < 25 && frame.empty() && ordered) {
    call = chance(0.5) ? "percent_rank()" : "cume_dist()";
  } else if (total && frame.empty() && r < 60) {
    Expr a = gen_expr(t, arg, std::max(0, depth - 1));
    if (t != SqlType::kText || a.coll.kind == Kind::kFree || a.coll.kind == Kind::kDerivedFree ||
        a.coll.kind == Kind::kColumn) {
      const int k = rnd(3);
      if (k == 0) call = std::string(chance(0.5) ? "lag(" : "lead(") + a.sql + (chance(0.5) ? ", " + std::to_string(1 + rnd(2)) : "") + ")";
      else if (k == 1) call = std::string(chance(0.5) ? "first_value(" : "last_value(") + a.sql + ")";
      else call = "nth_value(" + a.sql + ", " + std::to_string(1 + rnd(3)) + ")";
      if (t == SqlType::kText) coll = TextColl{Kind::kPoison, CollName::kBinary};
    }
  }
  if (call.empty()) {
    // An aggregate over the frame.
    if (t == SqlType::kText) {
      Expr a = gen_expr(SqlType::kText, arg, std::max(0, depth - 1));
      std::optional<CollName> c = own_collation(a.coll);
      if (!c || a.digits) {  // see gen_agg
        a = Expr{"'a'", SqlType::kText};
        c = CollName::kBinary;
      }
      call = std::string(chance(0.5) ? "min(" : "max(") + a.sql + ")";
      coll = TextColl{Kind::kPoison, CollName::kBinary};
      fold = *c;
    } else if (t == SqlType::kInt) {
      const int k = rnd(4);
      if (k == 0) call = "count(*)";
      else if (k == 1) call = "count(" + gen_expr(random_value_type(), arg, std::max(0, depth - 1)).sql + ")";
      else call = std::string(k == 2 ? "sum(" : chance(0.5) ? "min(" : "max(") + gen_expr(SqlType::kInt, arg, std::max(0, depth - 1)).sql + ")";
    } else {
      const int k = rnd(3);
      SqlType at = k == 2 ? SqlType::kReal : (chance(0.5) ? SqlType::kInt : SqlType::kReal);
      call = std::string(k == 0 ? "avg(" : k == 1 ? "total(" : "sum(") + gen_expr(at, arg, std::max(0, depth - 1)).sql + ")";
    }
  }
  Expr e{call + " " + over, result, coll, fold};
  return e;
}

// ---------------------------------------------------------------- data changes

std::string SqlGenerator::make_change(const GeneratedSchema& schema) {
  schema_ = &schema;
  alias_counter_ = 0;
  ctes_.clear();
  const TableDef& t = schema.tables[rnd(static_cast<int>(schema.tables.size()))];
  excluded_table_ = &t;
  Scope scope;
  for (size_t k = 0; k < t.columns.size(); ++k) {
    const ColumnDef& c = t.columns[k];
    scope.columns.push_back(ScopeColumn{t.name + "." + c.name, c.type, TextColl{Kind::kColumn, c.coll}, k < t.key_count});
  }
  Ctx ctx;
  ctx.scope = &scope;
  auto row_values = [&] {
    std::string v = "(";
    for (size_t i = 0; i < t.columns.size(); ++i) v += (i ? ", " : "") + value_literal(t.columns[i], t.columns[i].nullable);
    return v + ")";
  };
  std::string sql;
  const int k = rnd(100);
  if (k < 25) {
    // Rows in a fixed order: OR IGNORE keeps the first of two clashing ones, OR REPLACE the last.
    sql = std::string("insert ") + pick(std::vector<std::string>{"", "", "or ignore ", "or replace "}) + "into " + t.name +
          " values " + row_values();
    if (chance(0.4)) sql += ", " + row_values();
  } else if (k < 35) {
    sql = "insert into " + t.name + " values " + row_values() + " on conflict ";
    std::string key;
    for (size_t i = 0; i < t.key_count; ++i) key += (i ? ", " : "") + t.columns[i].name;
    if (t.columns.size() == t.key_count || chance(0.4)) {
      sql += "do nothing";
    } else {
      const ColumnDef& c = t.columns[t.key_count + rnd(static_cast<int>(t.columns.size() - t.key_count))];
      sql += "(" + key + ") do update set " + c.name + " = excluded." + c.name;
    }
  } else if (k < 45) {
    // The selected rows come in no fixed order: a plain INSERT, so a clash fails the whole
    // statement in both engines instead of keeping an arbitrary one of the clashing rows.
    std::vector<SqlType> types;
    for (const ColumnDef& c : t.columns) types.push_back(c.type);
    Select sel = gen_select(1, nullptr, &types, false);
    bool digits = false;
    for (const Expr& e : sel.columns) digits = digits || e.digits;
    sql = digits ? "insert into " + t.name + " values " + row_values() : "insert into " + t.name + " " + sel.sql;
  } else if (k < 80) {
    // Key columns stay: SQLite checks a key per row, mid-statement.
    std::vector<const ColumnDef*> settable;
    for (size_t i = t.key_count; i < t.columns.size(); ++i) settable.push_back(&t.columns[i]);
    if (settable.empty()) {
      sql = "delete from " + t.name + " where " + gen_bool(ctx, 2).sql;
    } else {
      sql = "update " + t.name + " set ";
      std::set<std::string> seen;
      const int n = 1 + rnd(2);
      for (int i = 0; i < n; ++i) {
        const ColumnDef& c = *pick(settable);
        if (!seen.insert(c.name).second) continue;
        Expr value = gen_expr(c.type, ctx, 2);
        if (value.digits) value = gen_leaf(c.type, Ctx{});  // stored digits would meet min / max (gen_agg)
        sql += (seen.size() > 1 ? ", " : "") + c.name + " = " + value.sql;
      }
      if (chance(0.8)) sql += " where " + gen_bool(ctx, 2).sql;
    }
  } else {
    sql = "delete from " + t.name;
    if (chance(0.9)) sql += " where " + gen_bool(ctx, 2).sql;
  }
  excluded_table_ = nullptr;
  schema_ = nullptr;
  return sql;
}

}  // namespace quereus::difftest
