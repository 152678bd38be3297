// Differential testing: the seeded generator of random schemas, rows and queries that both
// Quereus and SQLite must answer alike (docs/conformance.md, "Differential testing against
// SQLite").
//
// The generator stays inside the subset where the two engines document the same
// semantics. Each documented difference is either avoided or normalized, and each avoidance
// is stated where it is made:
//   - every table has an explicit PRIMARY KEY (Quereus has no rowid and keys a table
//     without one on all its columns); non-key columns are declared `null` in Quereus
//     (columns are NOT NULL unless declared NULL) and the SQLite tables are STRICT (no
//     affinity conversions);
//   - expressions are typed: no comparison or arithmetic mixes text with numbers, no
//     integer / integer division (Quereus divides as reals), no arithmetic on booleans,
//     no real rendered as text, small integers only (no int64 overflow);
//   - text is ASCII (SQLite's NOCASE folds ASCII only), LIKE runs with SQLite's
//     case_sensitive_like on (Quereus's LIKE is case-sensitive);
//   - collations: a comparison, grouping, DISTINCT, set operation or ORDER BY only sees
//     text whose collation both engines resolve alike (Quereus resolves symmetrically and
//     carries a column's collation through functions, `||` and CASE; SQLite prefers the
//     left operand and drops it there) — TextColl below tracks both views;
//   - no result depends on an order the query does not fix: no LIMIT without an ORDER BY
//     over every output column, no row_number() / lag() / ROWS frames unless the window
//     order is a key, no group_concat, no bare columns beside aggregates.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace quereus::difftest {

enum class SqlType { kInt, kReal, kText, kBool };
enum class CollName { kBinary, kNocase, kRtrim };

const char* coll_sql(CollName c);  // "binary", "nocase", "rtrim"

// How the two engines see a text expression's collation.
struct TextColl {
  enum class Kind {
    kFree,         // none in either engine (a literal, an expression over BINARY columns)
    kColumn,       // a column with this collation (SQLite: a column; Quereus: declared, or
                   // defaulted when BINARY)
    kExplicit,     // `e COLLATE name` at the top of the expression
    kDerivedFree,  // a derived table's column over a kFree expression: SQLite sees a
                   // BINARY column or no collation depending on flattening
    kPoison,       // the engines disagree (or may): never compared, grouped or ordered
  };
  Kind kind = Kind::kFree;
  CollName name = CollName::kBinary;
};

struct ColumnDef {
  std::string name;
  SqlType type;
  CollName coll = CollName::kBinary;
  bool nullable = true;
};

struct TableDef {
  std::string name;
  std::vector<ColumnDef> columns;
  size_t key_count = 1;  // the first key_count columns are the primary key
};

// A view: its columns as a derived table's (TextColl of each, as FROM items see them).
struct ViewDef {
  std::string name;
  std::vector<SqlType> types;
  std::vector<TextColl> colls;
  std::vector<bool> digits;
};

// A database both engines load: DDL in each dialect, then one INSERT per row (the same
// text for both engines, so a failing case can be shrunk row by row), then the views.
struct GeneratedSchema {
  std::vector<TableDef> tables;
  std::vector<ViewDef> views;
  std::vector<std::string> view_ddl;  // the same text for both engines, after the rows
  std::vector<std::string> quereus_ddl;
  std::vector<std::string> sqlite_ddl;
  std::vector<std::string> rows;
};

// One output column: its type, and the collation under which its values are only
// determined up to equality (a NOCASE group key may come back as 'a' or 'A'; compared
// after folding).
struct OutColumn {
  SqlType type;
  CollName fold = CollName::kBinary;
};

struct GeneratedQuery {
  std::string sql;
  std::vector<OutColumn> columns;
  bool ordered = false;  // the ORDER BY fixes the whole row order: compare as lists
};

class SqlGenerator {
 public:
  explicit SqlGenerator(uint64_t seed) : rng_(seed) {}

  GeneratedSchema make_schema();
  GeneratedQuery make_query(const GeneratedSchema& schema);
  // A data change (INSERT / UPDATE / DELETE, some with OR / ON CONFLICT) on one table; the
  // caller compares the tables afterwards. Its subqueries never read the target table
  // (SQLite may let an UPDATE's subquery see rows the statement already changed).
  std::string make_change(const GeneratedSchema& schema);
  // Whether the next step is a data change (about one step in seven).
  bool make_change_now() { return chance(0.15); }

 private:
  struct ScopeColumn {
    std::string ref;  // qualified: a3.c1
    SqlType type;
    TextColl coll;
    bool key = false;  // part of its table's primary key
    bool digits = false;  // text that may look like a number (Expr::digits)
    bool computed = false;  // a derived table's, CTE's or view's column, not a table's
  };
  struct Scope {
    std::vector<ScopeColumn> columns;
    const Scope* outer = nullptr;
  };
  struct Expr {
    Expr() = default;
    Expr(std::string s, SqlType t, TextColl c = {}, CollName f = CollName::kBinary, bool collate = false)
        : sql(std::move(s)), type(t), coll(c), fold(f), has_collate(collate) {}
    std::string sql;
    SqlType type = SqlType::kInt;
    TextColl coll;                    // text only
    CollName fold = CollName::kBinary;  // value only determined up to this collation
    bool has_collate = false;         // a COLLATE somewhere inside (SQLite looks into it)
    bool digits = false;              // text that may look like a number (from a CAST)
    bool mixed = false;               // a set operation's column whose legs differ in collation
  };
  // Where an expression is being generated.
  struct Ctx {
    const Scope* scope = nullptr;
    // Grouped output (select list / HAVING of a grouped query): columns only as these
    // keys, everything else inside aggregates over `scope`.
    const std::vector<ScopeColumn>* keys = nullptr;
    bool top = true;  // at the top of a select item (a folded value may only sit here)
  };
  struct Select {
    std::string sql;
    std::vector<Expr> columns;
    bool compound = false;
  };
  struct Cte {  // a WITH item the FROM clauses may name
    std::string name;
    std::vector<Expr> columns;
  };
  struct Source {  // a FROM clause and the scope it makes
    std::string sql;
    Scope scope;
    std::vector<std::vector<ScopeColumn>> keys;  // per single-table item: its key columns
  };

  // ---- randomness
  int rnd(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[rnd(static_cast<int>(v.size()))]; }

  // ---- values
  std::string int_literal();
  std::string real_literal();
  std::string text_literal();
  std::string value_literal(const ColumnDef& c, bool allow_null);

  // ---- queries
  Select gen_select(int depth, const Scope* outer, const std::vector<SqlType>* want, bool allow_fold);
  Select gen_compound(int depth, const Scope* outer, const std::vector<SqlType>* want);
  // A relation read as a FROM item, CTE or view: fold-free, its columns' TextColl as an
  // outer query sees them (kDerivedFree, kPoison where the engines may differ).
  Select gen_derived(int depth, const std::vector<SqlType>* want);
  const TableDef& pick_table();
  Source gen_from(int depth, const Scope* outer);
  std::string next_alias() { return "a" + std::to_string(alias_counter_++); }

  // ---- expressions
  Expr gen_expr(SqlType t, const Ctx& ctx, int depth);
  Expr gen_bool(const Ctx& ctx, int depth);
  Expr gen_agg(SqlType t, const Ctx& ctx, int depth);
  Expr gen_window(SqlType t, const Source& from, int depth);
  Expr gen_leaf(SqlType t, const Ctx& ctx);
  Expr gen_subquery_scalar(SqlType t, const Ctx& ctx, int depth);
  Expr gen_comparison(const Ctx& ctx, int depth);
  std::vector<const ScopeColumn*> columns_of(SqlType t, const Scope* scope, bool outer_too);
  Expr text_op(std::string sql, const std::vector<const Expr*>& args);
  // Makes `l op r` (text) resolve alike in both engines, adding COLLATE where needed.
  void settle_collation(Expr& l, Expr& r);
  // Gives both operands the same explicit COLLATE (for nullif, where SQLite takes the
  // first argument that has a collation, explicit or not).
  void force_collation(Expr& l, Expr& r);
  static std::vector<ScopeColumn> unfolded_keys(const std::vector<ScopeColumn>& keys);
  std::string order_direction();
  // `sql` ordered by every one of its columns, in order (see the definition).
  std::string order_by_all(const std::string& sql, const std::vector<Expr>& columns);
  SqlType random_type();
  SqlType random_value_type();

  std::mt19937_64 rng_;
  // Set while the legs of a deduplicating set operation are generated: their REAL items
  // are compared at 9 places (see gen_select).
  bool round_reals_ = false;
  const GeneratedSchema* schema_ = nullptr;
  int alias_counter_ = 0;
  std::vector<Cte> ctes_;
  const TableDef* excluded_table_ = nullptr;  // make_change: the target
  bool right_full_allowed_ = false;           // the next gen_from may use RIGHT / FULL JOIN
};

}  // namespace quereus::difftest
