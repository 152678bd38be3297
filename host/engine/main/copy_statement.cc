// COPY … TO and COPY … FROM (see copy_statement.h).
#include "main/copy_statement.h"

#include <strings.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "catalog/registry.h"
#include "common/status.h"
#include "io/record_reader.h"
#include "io/record_writer.h"
#include "main/database_impl.h"
#include "parser/ast_build.h"
#include "planner/planner.h"
#include "write/dml_relation.h"

namespace quereus {

namespace {

struct CopyOptions {
  io::FileFormat format = io::FileFormat::kCsv;
  bool header = true;
  char delimiter = 0;  // 0: the format's
  char quote = '"';
  int64_t skip = 0;
  std::optional<std::string> null_text;
};

[[noreturn]] void bad_option(const ast::CopyStmt::Option& o, const std::string& message) {
  throw Error(StatusCode::kError, "COPY option " + o.name + ": " + message, o.site);
}

bool truth(const ast::CopyStmt::Option& o) {
  if (!o.has_value) return true;
  for (const char* t : {"true", "on", "1", "yes"})
    if (strcasecmp(o.value.c_str(), t) == 0) return true;
  for (const char* f : {"false", "off", "0", "no"})
    if (strcasecmp(o.value.c_str(), f) == 0) return false;
  bad_option(o, "expected true or false, got '" + o.value + "'");
}

char one_char(const ast::CopyStmt::Option& o) {
  std::string v = o.value;
  if (v == "tab" || v == "\\t") v = "\t";
  if (!o.has_value || v.size() != 1 || v[0] == '\n' || v[0] == '\r') bad_option(o, "expected one character (or 'tab')");
  return v[0];
}

CopyOptions copy_options(const ast::CopyStmt& s) {
  CopyOptions out;
  out.format = io::format_for_path(s.path);
  for (const auto& o : s.options) {
    if (o.name == "format") {
      if (!o.has_value || !io::parse_file_format(o.value, &out.format))
        bad_option(o, "expected csv, tsv, jsonl or json");
    } else if (o.name == "header") {
      out.header = truth(o);
    } else if (o.name == "delimiter") {
      out.delimiter = one_char(o);
    } else if (o.name == "quote" && !s.to) {
      out.quote = one_char(o);
    } else if (o.name == "skip" && !s.to) {
      char* end = nullptr;
      const long long n = o.has_value ? std::strtoll(o.value.c_str(), &end, 10) : -1;
      if (n < 0 || *end != '\0') bad_option(o, "expected a number of records >= 0");
      out.skip = n;
    } else if (o.name == "null") {
      if (!o.has_value) bad_option(o, "expected the text that stands for NULL");
      out.null_text = o.value;
    } else {
      throw Error(StatusCode::kError,
                  "unknown COPY option '" + o.name + "' (" +
                      (s.to ? "TO: format, header, delimiter, null" : "FROM: format, header, delimiter, quote, skip, null") +
                      ")",
                  o.site);
    }
  }
  if (!s.to && out.format == io::FileFormat::kJson)
    throw Error(StatusCode::kError, "COPY … FROM reads csv, tsv or jsonl files (json arrays: use json_each)", s.site);
  return out;
}

// COPY … TO: runs the query and writes its rows; one result row, the number written.
class CopyToExec : public Executable {
 public:
  CopyToExec(DatabaseImpl& db, const ast::CopyStmt& s, const PlanSeed* seed)
      : db_(db), path_(s.path), options_(copy_options(s)) {
    db.require_file_access(true, "COPY … TO");
    Planner planner(db);
    PlanSeed own;
    if (seed) own = *seed;
    planner.seed(&own);
    std::unique_ptr<ast::Select> table_query;
    const ast::Select* query = s.query.get();
    if (!query) {
      // COPY t [(cols)] TO: the table's (or view's) rows, as `select cols from t`.
      std::vector<ast::ResultColumn> cols;
      if (s.columns.empty()) cols.push_back(ast::star());
      for (const std::string& c : s.columns) cols.push_back(ast::result_column(ast::column_ref("", c)));
      table_query = ast::select(std::move(cols), ast::table_source(s.table, ""));
      table_query->site = s.site;
      query = table_query.get();
    } else {
      planner.set_leading_with(query->with.get());
    }
    QueryPlan qp = planner.plan_select(*query, nullptr);
    column_names_ = qp.names;
    root_ = db.optimize_plan(qp.root);
    prelude_ = planner.take_dml_prelude();
    names_ = {"rows"};
  }

  void start(ExecContext& ctx) override {
    done_ = false;
    db_.require_file_access(true, "COPY … TO");
    run_dml_prelude(prelude_, ctx);
    EvalEnv env{nullptr, nullptr, &ctx};
    op_ = root_->instantiate();
    op_->open(env);
    io::WriteOptions w;
    w.format = options_.format;
    w.header = options_.header;
    w.delimiter = options_.delimiter;
    w.null_text = options_.null_text.value_or("");
    io::RecordWriter writer(path_, column_names_, w);
    for (Row row; op_->next(row);) writer.write(row);
    writer.commit();
    rows_ = writer.rows();
    op_.reset();
  }

  bool next(Row& out) override {
    if (done_) return false;
    done_ = true;
    out = {Value::Integer(static_cast<int64_t>(rows_))};
    return true;
  }

 private:
  DatabaseImpl& db_;
  std::string path_;
  CopyOptions options_;
  std::vector<std::string> column_names_;
  RelPtr root_;
  std::vector<std::shared_ptr<DmlRun>> prelude_;
  std::unique_ptr<Operator> op_;
  uint64_t rows_ = 0;
  bool done_ = true;
};

// COPY t FROM: `insert into t (cols) select * from read_csv(path, options)` (or
// read_jsonl), built as syntax and planned as an INSERT, so constraints, defaults, foreign
// keys, maintained views and change events apply as to any insert, and the statement is
// atomic. Fields reach the columns as text and convert to their declared types. One
// result row, the number of rows read.
class CopyFromExec : public Executable {
 public:
  CopyFromExec(DatabaseImpl& db, const ast::CopyStmt& s, const ParamTypes* param_types) : db_(db) {
    db.require_file_access(false, "COPY … FROM");
    const CopyOptions o = copy_options(s);
    const bool jsonl = o.format == io::FileFormat::kJsonl;
    std::vector<ast::ExprPtr> args;
    args.push_back(ast::string_literal(s.path));
    std::vector<Value> arg_values{Value::Text(s.path)};
    if (!jsonl) {
      nlohmann::json j;
      j["header"] = o.header;
      j["delimiter"] = std::string(1, o.delimiter ? o.delimiter : o.format == io::FileFormat::kTsv ? '\t' : ',');
      j["quote"] = std::string(1, o.quote);
      j["skip"] = o.skip;
      j["infer"] = false;
      if (o.null_text) j["null"] = *o.null_text;
      args.push_back(ast::string_literal(j.dump()));
      arg_values.push_back(Value::Text(j.dump()));
    } else if (o.null_text || o.delimiter || o.skip) {
      throw Error(StatusCode::kError, "COPY … FROM a jsonl file takes no delimiter, null or skip option", s.site);
    }
    const char* fn_name = jsonl ? "read_jsonl" : "read_csv";
    insert_ = std::make_unique<ast::InsertStmt>();
    insert_->site = s.site;
    insert_->table = s.table;
    insert_->columns = s.columns;
    if (insert_->columns.empty() && (jsonl || o.header)) {
      // The file names the columns: its header, or the keys of its objects.
      const TableFunction* fn = db.registry().find_table_function(fn_name);
      if (!fn || !fn->shape) throw Error(StatusCode::kInternal, std::string(fn_name) + " is not registered");
      for (const TableFunctionColumn& c : db.table_function_shape(*fn, arg_values)) insert_->columns.push_back(c.name);
    }
    std::vector<ast::ResultColumn> star;
    star.push_back(ast::star());
    insert_->source = ast::select(std::move(star), ast::function_source(fn_name, std::move(args)));
    insert_->source->site = s.site;
    inner_ = plan_statement(db, *insert_, param_types);
    names_ = {"rows"};
  }

  void start(ExecContext& ctx) override {
    done_ = false;
    io::ReadProgress progress;
    struct Scope {  // the file cursors of this run report into `progress`
      ExecContext& ctx;
      io::ReadProgress* saved;
      ~Scope() { ctx.read_progress = saved; }
    } scope{ctx, ctx.read_progress};
    ctx.read_progress = &progress;
    try {
      inner_->start(ctx);
      for (Row r; inner_->next(r);) {
      }
    } catch (const Error& e) {
      // Name the record the failing row came from, unless the reader already did.
      if (progress.line > 0 && e.raw_message().rfind(progress.path + ":", 0) != 0)
        throw Error(e.code(), progress.path + ":" + std::to_string(progress.line) + ": " + e.raw_message(), e.site());
      throw;
    }
    rows_ = progress.rows;
  }

  bool next(Row& out) override {
    if (done_) return false;
    done_ = true;
    out = {Value::Integer(static_cast<int64_t>(rows_))};
    return true;
  }

 private:
  DatabaseImpl& db_;
  std::unique_ptr<ast::InsertStmt> insert_;  // the inner plan refers to it
  std::unique_ptr<Executable> inner_;
  uint64_t rows_ = 0;
  bool done_ = true;
};

}  // namespace

std::unique_ptr<Executable> plan_copy(DatabaseImpl& db, const ast::CopyStmt& s, const PlanSeed* seed) {
  if (s.to) return std::make_unique<CopyToExec>(db, s, seed);
  return std::make_unique<CopyFromExec>(db, s, seed ? seed->param_types : nullptr);
}

}  // namespace quereus
