// The SQL generator of the grammar fuzzer (grammar_fuzz.cc): the fuzz input's bytes are
// its decisions. It writes a random schema, then random statements of every family the
// parser accepts (host/engine/parser/ast.h StmtKind, docs/sql-dialect.md), mostly valid so
// that they reach the planner and the runtime, a few deliberately wrong.
//
// The generator knows the schema through a SchemaModel the harness reads back from the
// database (schema(), table_info(), column_info()) after every statement that may change
// it, so a failed or rolled-back DDL statement never leaves the generator guessing.
// It depends on nothing of the engine.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace quereus::fuzz {

// A loose value class the generator aims expressions at.
enum class Ty { kAny, kInt, kReal, kText, kBlob, kBool, kJson, kDate, kTime, kDateTime, kSpan };

struct ColumnModel {
  std::string name;
  Ty type = Ty::kAny;
  bool not_null = false;
  bool pk = false;
  bool generated = false;
};

struct RelationModel {
  std::string name;  // qualified ("s.x") outside main
  enum class Kind { kTable, kView, kMaterializedView } kind = Kind::kTable;
  std::vector<ColumnModel> columns;
};

struct SchemaModel {
  std::vector<RelationModel> relations;
  std::vector<std::string> indexes;
  std::vector<std::string> assertions;
};

// One row of function_info(): name, argument count (-1: variadic), type ('scalar',
// 'aggregate', 'window', 'table').
struct FunctionModel {
  std::string name;
  int num_args = 0;
  std::string type;
};

// What a generated statement may change, so the harness knows when to re-read the schema.
struct GeneratedStatement {
  std::string sql;
  bool changes_schema = false;
};

class SqlGrammar {
 public:
  // `functions`: the registry's functions; `optimizer_passes`: the pass names.
  // `file_dir`: the directory COPY and read_csv / read_jsonl may use. Once `in` is used
  // up, decisions come from a generator seeded with `seed` (a hash of the whole input), so
  // a short input still makes a full sequence of statements.
  SqlGrammar(FuzzedDataProvider& in, uint64_t seed, const std::vector<FunctionModel>& functions,
             const std::vector<std::string>& optimizer_passes, std::string file_dir);

  // The opening schema: tables (keys, defaults, CHECK, UNIQUE, FOREIGN KEY, generated
  // columns, collations), rows, indexes and views.
  std::vector<GeneratedStatement> schema();
  // The next statement over `model`.
  GeneratedStatement next(const SchemaModel& model);

 private:
  struct Col {
    std::string qualifier;  // "" when unqualified
    std::string name;
    Ty type = Ty::kAny;
  };
  struct Scope {
    std::vector<Col> cols;
    bool aggregates = false;  // aggregate calls allowed here
    bool windows = false;     // window calls allowed here
    const Scope* outer = nullptr;  // a correlated subquery's enclosing scope
  };
  struct Query {
    std::string sql;
    std::vector<Col> cols;  // the result columns, unqualified
  };

  // Decisions.
  int draw(int lo, int hi);  // lo … hi, from the input while it lasts
  bool chance(int percent);
  int pick(int n);  // 0 … n-1
  int range(int lo, int hi);
  template <class T> const T& one(const std::vector<T>& v) { return v[pick(static_cast<int>(v.size()))]; }

  // Names and values.
  std::string type_name(Ty t);
  Ty random_type();
  std::string literal(Ty t);
  std::string any_literal();
  std::string collation();
  const RelationModel* relation(bool tables_only);
  const RelationModel* table();
  std::string fresh_name(const char* prefix, int pool);

  // Expressions.
  std::string expr(const Scope& s, int depth, Ty want = Ty::kAny);
  std::string predicate(const Scope& s, int depth);
  std::string column(const Scope& s, Ty want);
  std::string function_call(const Scope& s, int depth, const std::string& type);
  std::string window_call(const Scope& s, int depth);
  std::string window_spec(const Scope& s, int depth);
  std::string frame();
  std::string args(const Scope& s, int depth, int n);
  std::string subquery(const Scope& s, int depth, int ncols);

  // Queries.
  Query select(const Scope* outer, int depth, int ncols);
  Query select_core(const Scope* outer, int depth, int ncols, std::string* with_sql);
  std::string from_clause(const Scope* outer, int depth, Scope* into);
  std::string source(const Scope* outer, int depth, Scope* into, bool lateral_ok);
  std::string with_clause(const Scope* outer, int depth, Scope* ctes);
  std::string order_by(const Scope& s, int depth, int ncols);
  std::string limit();
  std::string returning(const Scope& s);

  // Statements.
  std::string create_table(const std::string& name, bool with_fk);
  std::string column_def(int i, std::vector<ColumnModel>* cols, const std::vector<ColumnModel>& earlier);
  std::string table_constraint(const std::vector<ColumnModel>& cols, bool with_fk);
  std::string insert_values(const RelationModel& t, int rows);
  std::string insert();
  std::string update();
  std::string del();
  std::string create_index();
  std::string create_view();
  std::string create_materialized_view();
  std::string create_assertion();
  std::string drop();
  std::string alter_table();
  std::string alter_tags();
  std::string transaction();
  std::string pragma();
  std::string copy();
  std::string declare_schema();
  std::string mistake(std::string sql);
  std::string tags();

  FuzzedDataProvider& in_;
  std::mt19937_64 rng_;
  const std::vector<FunctionModel>& functions_;
  const std::vector<std::string>& passes_;
  std::string file_dir_;
  const SchemaModel* model_ = nullptr;
  SchemaModel initial_;  // the model while schema() runs
  std::vector<std::string> savepoints_;
  std::vector<std::string> constraints_;  // names given to constraints
  int cte_counter_ = 0;
};

}  // namespace quereus::fuzz
