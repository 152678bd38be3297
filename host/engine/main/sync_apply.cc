// Engine-routed replication (Database::sync_request / sync_apply, docs/sync-store.md
// "Engine-routed apply"): the replicating module (SDK 1.12 qrs_module_vtable.replication)
// resolves a peer's change page into row writes; the engine makes them through its own
// write path — `insert or replace` / `delete` by key, in one transaction with the change
// origin set to remote — so index companions, materialized views, assertions and change
// events follow; the module's metadata rides the same commit batch ("arm" before COMMIT).
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "ddl/declarative/schema_differ.h"
#include "common/strings.h"
#include "ddl/schema_ddl.h"
#include "main/database_impl.h"
#include "parser/ast_printer.h"
#include "parser/parser.h"

namespace quereus {

// One row of a replicating module's plan: a deletion by key, an update of an existing row
// by its stored key, or an insert (docs/sync-store.md "Engine-routed apply").
struct SyncPlanRow {
  enum Member : unsigned {
    kSchema = 1, kTable = 2, kOp = 4, kKey = 8, kColumns = 16, kDefaulted = 32, kValues = 64, kKeyValues = 128
  };
  unsigned present = 0;  // the members the plan gave
  std::string schema, table, op;
  bool existed = false;
  std::vector<std::string> key, columns, defaulted;  // column names
  // By `columns` (a deletion's: by `key`); the stored key's values (an update's).
  std::vector<Value> values, key_values;
};

namespace {

struct SyncPlan {
  uint64_t token = 0;
  std::vector<SyncPlanRow> rows;
};

std::string sql_name(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

// A value in the sync wire form (modules/sync-store/json_codec.h).
Value wire_value(const nlohmann::json& j) {
  using nlohmann::json;
  switch (j.type()) {
    case json::value_t::null: return Value();
    case json::value_t::boolean: return Value::Boolean(j.get<bool>());
    case json::value_t::number_integer: return Value::Integer(j.get<int64_t>());
    case json::value_t::number_unsigned: return Value::Integer(static_cast<int64_t>(j.get<uint64_t>()));
    case json::value_t::number_float: return Value::Real(j.get<double>());
    case json::value_t::string: return Value::Text(j.get<std::string>());
    case json::value_t::object:
      if (j.contains("$json") && j["$json"].is_string()) return Value::Json(j["$json"].get<std::string>());
      if (j.contains("$real") && j["$real"].is_string()) {
        const std::string r = j["$real"].get<std::string>();
        if (r == "NaN") return Value::Real(std::numeric_limits<double>::quiet_NaN());
        if (r == "Infinity") return Value::Real(std::numeric_limits<double>::infinity());
        if (r == "-Infinity") return Value::Real(-std::numeric_limits<double>::infinity());
      }
      if (j.contains("$blob") && j["$blob"].is_string()) {
        const std::string b64 = j["$blob"].get<std::string>();
        std::string out;
        uint32_t acc = 0;
        int bits = 0;
        for (char c : b64) {
          int d = c >= 'A' && c <= 'Z'   ? c - 'A'
                  : c >= 'a' && c <= 'z' ? c - 'a' + 26
                  : c >= '0' && c <= '9' ? c - '0' + 52
                  : c == '+' || c == '-' ? 62
                  : c == '/' || c == '_' ? 63
                                         : -1;
          if (d < 0) continue;  // padding
          acc = (acc << 6) | static_cast<uint32_t>(d);
          bits += 6;
          if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<char>((acc >> bits) & 0xFF));
          }
        }
        return Value::Blob(std::move(out));
      }
      break;
    default: break;
  }
  throw Error(StatusCode::kFormat, "sync apply: the replicating module returned a value the engine cannot read: " + j.dump());
}

// Are two plan values the same on the wire? (The plan was a JSON document, compared as
// JSON: an integer and a real of equal value are equal; a NaN or an infinity is a tagged
// object, equal only to the same tag.)
bool same_wire_value(const Value& a, const Value& b) {
  const bool an = a.type() == ValueType::kInteger || a.type() == ValueType::kReal;
  const bool bn = b.type() == ValueType::kInteger || b.type() == ValueType::kReal;
  if (!an || !bn) return a == b;
  if (a.type() == ValueType::kInteger && b.type() == ValueType::kInteger) return a.as_int() == b.as_int();
  const double x = a.type() == ValueType::kReal ? a.as_real() : static_cast<double>(a.as_int());
  const double y = b.type() == ValueType::kReal ? b.as_real() : static_cast<double>(b.as_int());
  if (!std::isfinite(x) || !std::isfinite(y)) {
    if (a.type() != ValueType::kReal || b.type() != ValueType::kReal) return false;
    return (std::isnan(x) && std::isnan(y)) || x == y;
  }
  return x == y;
}

[[noreturn]] void bad_plan(const std::string& what) {
  throw Error(StatusCode::kInternal, "sync apply: the replicating module's plan is malformed: " + what);
}

// Reads a replicating module's plan (the "resolve" reply: {"token", "rows", "result"}) with a
// streaming parse into rows: for a big page, the plan as a document cost as much to build
// and free as writing its rows. Its scalar callbacks (null … string -> one Scalar record) are
// the same as sync-store's PageReader (modules/sync-store/json_codec.cc): a deliberate copy,
// since a module includes only sdk/include/ and the SDK does not carry nlohmann's types.
class PlanReader {
 public:
  std::optional<uint64_t> token;
  bool has_rows = false;
  std::vector<SyncPlanRow> rows;

  bool null() { return scalar(Scalar{Scalar::kNull}); }
  bool boolean(bool b) {
    Scalar s{Scalar::kBool};
    s.b = b;
    return scalar(s);
  }
  bool number_integer(int64_t i) {
    Scalar s{Scalar::kInt};
    s.i = i;
    return scalar(s);
  }
  bool number_unsigned(uint64_t u) {
    Scalar s{Scalar::kUint};
    s.u = u;
    return scalar(s);
  }
  bool number_float(double d, const std::string&) {
    Scalar s{Scalar::kFloat};
    s.d = d;
    return scalar(s);
  }
  bool string(std::string& text) {
    Scalar s{Scalar::kString};
    s.s = &text;
    return scalar(s);
  }
  bool binary(nlohmann::json::binary_t&) { return false; }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (skip_) return true;
    if (!dom_stack_.empty()) {
      dom_element_ = &(*dom_stack_.back())[k];
      return true;
    }
    member_ = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception&) { return false; }

 private:
  enum class Frame { kRoot, kTop, kRows, kRow, kNames, kValues };
  struct Scalar {
    enum Kind { kNull, kBool, kInt, kUint, kFloat, kString } kind;
    bool b = false;
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;
    std::string* s = nullptr;
    nlohmann::json to_json() const {
      switch (kind) {
        case kNull: return nullptr;
        case kBool: return b;
        case kInt: return i;
        case kUint: return u;
        case kFloat: return d;
        case kString: return *s;
      }
      return nullptr;
    }
    // As wire_value reads a scalar.
    Value to_value() const {
      switch (kind) {
        case kNull: return Value();
        case kBool: return Value::Boolean(b);
        case kInt: return Value::Integer(i);
        case kUint: return Value::Integer(static_cast<int64_t>(u));
        case kFloat: return Value::Real(d);
        case kString: return Value::Text(*s);
      }
      return Value();
    }
  };

  SyncPlanRow& row() { return rows.back(); }
  // The list a kNames / kValues frame fills: by the member that opened it.
  std::vector<std::string>& names() {
    return list_ == "key" ? row().key : list_ == "columns" ? row().columns : row().defaulted;
  }
  std::vector<Value>& values() { return list_ == "values" ? row().values : row().key_values; }

  void begin_value(const Scalar* s, bool object) {
    switch (frames_.back()) {
      case Frame::kRoot:
        if (s || !object) bad_plan("not an object");
        frames_.push_back(Frame::kTop);
        return;
      case Frame::kTop:
        if (member_ == "token") {
          if (!s || s->kind == Scalar::kString || s->kind == Scalar::kNull || s->kind == Scalar::kBool)
            bad_plan("`token` is not a number");
          token = s->kind == Scalar::kUint ? s->u
                  : s->kind == Scalar::kInt ? static_cast<uint64_t>(s->i)
                                            : static_cast<uint64_t>(s->d);
        } else if (member_ == "rows") {
          if (s || object) bad_plan("`rows` is not an array");
          has_rows = true;
          rows.clear();
          frames_.push_back(Frame::kRows);
        } else if (!s) {
          skip_ = 1;
        }
        return;
      case Frame::kRows:
        if (s || !object) bad_plan("a row is not an object");
        rows.emplace_back();
        frames_.push_back(Frame::kRow);
        return;
      case Frame::kRow: {
        SyncPlanRow& r = row();
        const std::string& m = member_;
        if (m == "schema" || m == "table" || m == "op") {
          if (!s || s->kind != Scalar::kString) bad_plan("a row's `" + m + "` is not a string");
          (m == "schema" ? r.schema : m == "table" ? r.table : r.op) = *s->s;
          r.present |= m == "schema" ? SyncPlanRow::kSchema : m == "table" ? SyncPlanRow::kTable : SyncPlanRow::kOp;
        } else if (m == "existed") {
          if (!s || s->kind != Scalar::kBool) bad_plan("a row's `existed` is not a boolean");
          r.existed = s->b;
        } else if (m == "key" || m == "columns" || m == "defaulted" || m == "values" || m == "keyValues") {
          if (s || object) bad_plan("a row's `" + m + "` is not an array");
          list_ = m;
          const bool of_values = m == "values" || m == "keyValues";
          if (of_values) values().clear();
          else names().clear();
          r.present |= m == "key"         ? SyncPlanRow::kKey
                       : m == "columns"   ? SyncPlanRow::kColumns
                       : m == "defaulted" ? SyncPlanRow::kDefaulted
                       : m == "values"    ? SyncPlanRow::kValues
                                          : SyncPlanRow::kKeyValues;
          frames_.push_back(of_values ? Frame::kValues : Frame::kNames);
        } else if (!s) {
          skip_ = 1;
        }
        return;
      }
      case Frame::kNames:
        // A name that is not a string: `defaulted` passed over such entries, the others
        // could not read them.
        if (s && s->kind == Scalar::kString) names().push_back(*s->s);
        else if (list_ != "defaulted") bad_plan("a row's `" + list_ + "` holds a name that is not a string");
        else if (!s) skip_ = 1;
        return;
      case Frame::kValues:
        if (s) values().push_back(s->to_value());
        else dom_root_ = nlohmann::json(object ? nlohmann::json::value_t::object : nlohmann::json::value_t::array);
        return;
    }
  }

  bool scalar(const Scalar& s) {
    if (skip_) return true;
    if (!dom_stack_.empty()) {
      place(s.to_json());
      return true;
    }
    begin_value(&s, false);
    return true;
  }
  bool open(bool object) {
    if (skip_) {
      ++skip_;
      return true;
    }
    if (!dom_stack_.empty()) {
      dom_stack_.push_back(place(nlohmann::json(object ? nlohmann::json::value_t::object : nlohmann::json::value_t::array)));
      return true;
    }
    const size_t depth = frames_.size();
    begin_value(nullptr, object);
    if (frames_.size() == depth && frames_.back() == Frame::kValues && !skip_) dom_stack_.push_back(&dom_root_);
    return true;
  }
  bool close() {
    if (skip_) {
      --skip_;
      return true;
    }
    if (!dom_stack_.empty()) {
      dom_stack_.pop_back();
      if (dom_stack_.empty()) values().push_back(wire_value(dom_root_));  // a tagged value ($blob, $json, $real)
      return true;
    }
    frames_.pop_back();
    return true;
  }
  nlohmann::json* place(nlohmann::json v) {
    nlohmann::json& top = *dom_stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *dom_element_ = std::move(v);
    return dom_element_;
  }

  std::vector<Frame> frames_{Frame::kRoot};
  std::string member_;  // the member whose value comes next
  std::string list_;    // the row's list being read
  int skip_ = 0;        // inside a value not read: its depth
  nlohmann::json dom_root_;  // a tagged value being read
  std::vector<nlohmann::json*> dom_stack_;
  nlohmann::json* dom_element_ = nullptr;
};

SyncPlan read_plan(std::string_view text) {
  PlanReader r;
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &r)) bad_plan("not JSON");
  if (!r.token) bad_plan("no `token`");
  if (!r.has_rows) bad_plan("no `rows`");
  for (const SyncPlanRow& row : r.rows) {
    auto need = [&](unsigned bit, const char* name) {
      if (!(row.present & bit)) bad_plan(std::string("a row without `") + name + "`");
    };
    need(SyncPlanRow::kSchema, "schema");
    need(SyncPlanRow::kTable, "table");
    need(SyncPlanRow::kOp, "op");
    if (row.op == "delete") {
      need(SyncPlanRow::kKey, "key");
      need(SyncPlanRow::kValues, "values");
      if (row.values.size() < row.key.size()) bad_plan("a deletion with fewer values than key columns");
    } else {
      need(SyncPlanRow::kColumns, "columns");
      need(SyncPlanRow::kValues, "values");
      if (row.values.size() < row.columns.size()) bad_plan("a row with fewer values than columns");
      if (row.existed) {
        need(SyncPlanRow::kKey, "key");
        need(SyncPlanRow::kKeyValues, "keyValues");
        if (row.key_values.size() < row.key.size()) bad_plan("an update with fewer key values than key columns");
      }
    }
  }
  return SyncPlan{*r.token, std::move(r.rows)};
}

// Does the page hold a schema fact ("type": "schema")? A cheap scan, so a page of data
// alone is not parsed twice; a false positive costs only the schema resolution's parse.
bool mentions_schema(std::string_view page) {
  for (size_t at = page.find("\"type\""); at != std::string_view::npos; at = page.find("\"type\"", at + 6)) {
    size_t i = at + 6;
    while (i < page.size() && (page[i] == ' ' || page[i] == ':' || page[i] == '\n' || page[i] == '\t' || page[i] == '\r'))
      ++i;
    if (page.substr(i, 8) == "\"schema\"") return true;
  }
  return false;
}

}  // namespace

bool DatabaseImpl::replicates(VtabModule* module) {
  auto it = replicates_.find(module);
  if (it != replicates_.end()) return it->second;
  bool r = false;
  // "site" is the cheap probe (sync-store's "status" walks its whole change log); a module
  // that answers only "status" is asked that.
  for (const char* op : {"site", "status"}) {
    try {
      r = module->replication(op, "{}").has_value();
      break;
    } catch (const std::exception&) {
    }
  }
  return replicates_[module] = r;
}

void DatabaseImpl::capture_schema(const TableEntry& table) {
  // Materialized views are derived on each peer (docs/sync-store.md): not replicated as DDL.
  if (schema_scope_depth_ == 0 || !table.module || table.schema.derivation || !replicates(table.module.get())) return;
  nlohmann::json parts = nlohmann::json::array();
  for (auto& [part, text] : table_objects(table.schema)) parts.push_back(nlohmann::json::array({part, text}));
  nlohmann::json renames = nlohmann::json::array();
  std::erase_if(column_renames_, [&](const ColumnRename& r) {
    if (r.schema != table.schema.schema_name || !iequals(r.table, table.schema.name)) return false;
    renames.push_back(nlohmann::json::array({r.from, r.to}));
    return true;
  });
  nlohmann::json args{{"schema", table.schema.schema_name}, {"table", table.schema.name}, {"parts", parts},
                      {"renames", renames}, {"inTransaction", in_transaction()}};
  table.module->replication("capture_schema", args.dump());
}

void DatabaseImpl::run_schema_step(const nlohmann::json& step, const std::string& module_name, bool check_only) {
  auto run = [this](const std::string& sql) {
    Status st = exec(sql);
    if (!st.ok()) throw Error(st.code(), "sync apply: the peer's schema change `" + sql + "` failed here: " + st.message());
  };
  const std::string op = step.at("op").get<std::string>(), schema = step.at("schema").get<std::string>();
  std::string table = step.at("table").get<std::string>();
  auto qualified = [&] { return sql_name(schema) + "." + sql_name(table); };
  if (op == "drop") {
    if (!check_only) run("drop table if exists " + qualified());
    return;
  }
  if (op == "rename") {  // a table stepping aside for a swap of names (the module's own step)
    if (!check_only) run("alter table " + qualified() + " rename to " + sql_name(step.at("to").get<std::string>()));
    return;
  }
  // The table lives in the replicating module here, under this database's name for it.
  const std::string ddl = step.at("ddl").get<std::string>() + " using " + sql_name(module_name) + step.value("tail", "");
  // A peer's text runs here only as what it claims to be: one CREATE TABLE of this table in
  // this module (no maintained body), one CREATE INDEX on it. Anything else — a second
  // statement smuggled into a part, another table, a comment hiding the module clause — is
  // refused before anything runs.
  const std::string final_table = step.contains("renameTo") ? step["renameTo"].get<std::string>() : table;
  auto refuse = [&](const std::string& what) {
    throw Error(StatusCode::kFormat, "sync apply: the peer's definition of " + qualified() + " is refused: " + what +
                                         "; nothing of the schema change ran");
  };
  // Exactly one statement of `kind`, or the page is refused.
  auto one = [&](const std::string& text, ast::StmtKind kind, const char* what) {
    std::vector<ast::StatementPtr> stmts;
    try {
      stmts = Parser::parse(text);
    } catch (const std::exception& e) {
      refuse(std::string(what) + " does not parse (" + e.what() + ")");
    }
    if (stmts.size() != 1 || stmts[0]->kind != kind) refuse(std::string(what) + " is not one statement of its kind");
    return stmts;
  };
  auto create_stmt = [&]() {
    auto stmts = one(ddl, ast::StmtKind::kCreateTable, "the table");
    auto& c = static_cast<ast::CreateTableStmt&>(*stmts[0]);
    if ((!c.table.schema.empty() && !iequals(c.table.schema, schema)) || !iequals(c.table.name, final_table))
      refuse("it names another table");
    if (!iequals(c.module_name, module_name) || !c.module_args.empty() || c.maintained) refuse("it names another module or a body");
    return stmts;
  };
  auto check_index = [&](const std::string& text, const std::string& on) {
    auto stmts = one(text, ast::StmtKind::kCreateIndex, "an index");
    auto& c = static_cast<ast::CreateIndexStmt&>(*stmts[0]);
    if (!iequals(c.table.name, on) || (!c.index.schema.empty() && !iequals(c.index.schema, schema)))
      refuse("an index is on another table");
  };
  auto stmts = create_stmt();  // validated before anything runs
  for (auto& [name, text] : step.at("indexes").items()) check_index(text.get<std::string>(), final_table);
  if (check_only) return;
  if (op == "create") {
    run(ddl);
    for (auto& [name, text] : step.at("indexes").items()) run(text.get<std::string>());
    return;
  }
  if (step.contains("renameTo")) {
    run("alter table " + qualified() + " rename to " + sql_name(step["renameTo"].get<std::string>()));
    table = step["renameTo"].get<std::string>();
  }
  if (step.contains("renameColumns"))
    for (const auto& r : step["renameColumns"])
      run("alter table " + qualified() + " rename column " + sql_name(r.at(0).get<std::string>()) + " to " +
          sql_name(r.at(1).get<std::string>()));
  // A column dropped and made again at the peer since ours was made: ours goes (its values
  // are not the new column's), the differ below adds the new one.
  if (step.contains("dropColumns"))
    for (const auto& c : step["dropColumns"]) run("alter table " + qualified() + " drop column " + sql_name(c.get<std::string>()));
  // Renames onto names that were held (a swap; a rename into a dropped column's name) run
  // in two steps around the drops: to names of their own above, to their targets here.
  if (step.contains("renameColumnsFinal"))
    for (const auto& r : step["renameColumnsFinal"])
      run("alter table " + qualified() + " rename column " + sql_name(r.at(0).get<std::string>()) + " to " +
          sql_name(r.at(1).get<std::string>()));
  std::shared_ptr<TableEntry> live = catalog_.find(schema, table);
  if (!live) throw Error(StatusCode::kNotFound, "sync apply: the peer's schema change names table " + qualified() + ", which is not here");
  // The declarative differ: only the ALTER steps still needed (idempotent by construction).

  TableMigration m = diff_table(*this, live->schema, static_cast<const ast::CreateTableStmt&>(*stmts[0]));
  for (const MigrationStep& a : m.actions) run("alter table " + qualified() + " " + a.text);
  live = catalog_.find(schema, table);
  std::map<std::string, std::string> have;
  for (const IndexSchema& ix : live->schema.indexes)
    if (!ix.constraint) have[to_lower(ix.name)] = create_index_ddl(live->schema, ix);
  const nlohmann::json& wanted = step.at("indexes");
  for (const auto& [name, ddl] : have)
    if (!wanted.contains(name) || wanted[name].get<std::string>() != ddl) run("drop index " + sql_name(schema) + "." + sql_name(name));
  for (auto& [name, ddl] : wanted.items())
    if (!have.count(name) || have[name] != ddl.get<std::string>()) run(ddl.get<std::string>());
}

bool DatabaseImpl::held_schema_steps(const std::shared_ptr<VtabModule>& module) {
  std::optional<std::string> r = module->replication("schema_held", "{}");
  return r && nlohmann::json::parse(*r).value("held", uint64_t{0}) > 0;
}

void DatabaseImpl::run_schema_phase(const std::shared_ptr<VtabModule>& module, const std::string& module_name,
                                    uint64_t token, const char* phase, const nlohmann::json& steps) {
  const bool was_remote = set_remote_origin(true);
  struct Restore {
    DatabaseImpl* db;
    bool was;
    ~Restore() { db->set_remote_origin(was); }
  } restore{this, was_remote};
  if (std::string_view(phase) != "after") {
    // One scope: the phase's DDL and the versions it records land together or not at all.
    run_schema_change([&] {
      nlohmann::json args{{"token", token}, {"phase", phase}};
      (void)module->replication("schema_phase", args.dump());
      for (const auto& step : steps) run_schema_step(step, module_name);
    });
    return;
  }
  // After the data, one scope per table: a tightening step the rows here violate (set not
  // null over a local NULL, a unique index over duplicates) rolls back alone and is held by
  // the module, which resolves it again with every later page; the stream goes on.
  for (const auto& step : steps) {
    nlohmann::json args{{"token", token}, {"phase", phase}, {"schema", step.at("schema")}, {"table", step.at("table")}};
    try {
      run_schema_change([&] {
        (void)module->replication("schema_phase", args.dump());
        run_schema_step(step, module_name);
      });
    } catch (const Error& e) {
      switch (e.code()) {
        case StatusCode::kConstraint: case StatusCode::kMismatch: case StatusCode::kRange:
        case StatusCode::kSchema: case StatusCode::kUnsupported: case StatusCode::kNotFound:
        case StatusCode::kError:
          break;  // the step's own failure against the rows here: held
        default:
          // A peer's text refused (FORMAT, SYNTAX: the page is refused, nothing of it waits),
          // or the database's own failure (I/O, corruption, interrupt): the page fails.
          throw;
      }
      nlohmann::json hold{{"token", token}, {"schema", step.at("schema")}, {"table", step.at("table")}, {"error", e.what()}};
      std::optional<std::string> r = module->replication("schema_hold", hold.dump());
      const bool fresh = r && nlohmann::json::parse(*r).value("new", false);
      spdlog::log(fresh ? spdlog::level::warn : spdlog::level::debug,
                  "sync apply: the peer's schema change of {}.{} waits (held; retried with every page): {}",
                  step.at("schema").get<std::string>(), step.at("table").get<std::string>(), e.what());
    }
  }
}

std::pair<std::string, std::shared_ptr<VtabModule>> DatabaseImpl::replicating_module() {
  std::pair<std::string, std::shared_ptr<VtabModule>> found;
  for (const auto& [name, m] : opened_modules()) {
    if (!replicates(m.get())) continue;  // asked once per module (a status is not free)
    if (found.second && found.second != m)
      throw Error(StatusCode::kMisuse, "modules '" + found.first + "' and '" + name +
                                           "' both replicate this database's tables; one sync driver per database");
    found = {name, m};
  }
  if (found.second) return found;
  throw Error(StatusCode::kNotFound,
              "no module of this database replicates (SDK 1.12 replication): open it with sync-store "
              "(docs/sync-store.md)");
}

Status DatabaseImpl::sync_request(const std::string& op, const std::string& args, std::string* reply) {
  try {
    // The steps of an apply are the engine's own (sync_apply runs them in order, inside its
    // transaction and schema-change scopes): relayed alone they would record a schema phase
    // whose DDL never ran, or arm a plan no commit carries.
    static const std::set<std::string> kApplySteps{"resolve",     "resolve_schema", "schema_phase", "schema_stage",
                                                   "schema_hold", "schema_done",    "capture_schema",
                                                   "arm",         "finish",         "abandon"};
    if (kApplySteps.count(op))
      throw Error(StatusCode::kMisuse, "sync request '" + op + "' is a step of Database::sync_apply, not a request of its own");
    auto [name, module] = replicating_module();
    std::optional<std::string> r = module->replication(op, args);
    if (!r) throw Error(StatusCode::kUnsupported, "module '" + name + "' stopped answering replication requests");
    if (reply) *reply = std::move(*r);
  } catch (const std::exception& e) {
    return status_of(e);
  }
  return Status::Ok();
}

namespace {
// One apply at a time per replicating module: connections sharing a module share its
// replica, whose apply is a sequence of requests (resolve, phases, arm, finish) over one
// pending plan. A second apply meanwhile is refused BUSY (retryable), never interleaved.
std::unique_lock<std::mutex> apply_slot(const VtabModule* module) {
  static std::mutex mu;
  static std::map<const VtabModule*, std::unique_ptr<std::mutex>> slots;
  std::mutex* slot;
  {
    std::lock_guard lock(mu);
    auto& s = slots[module];
    if (!s) s = std::make_unique<std::mutex>();
    slot = s.get();
  }
  return std::unique_lock<std::mutex>(*slot, std::try_to_lock);
}
}  // namespace

Status DatabaseImpl::sync_apply(const std::string& changes, std::string* result) {
  try {
    if (in_transaction())
      throw Error(StatusCode::kMisuse, "sync apply runs as its own transaction: commit or roll back the open one first");
    auto [name, module] = replicating_module();
    std::unique_lock<std::mutex> slot = apply_slot(module.get());
    if (!slot.owns_lock())
      throw Error(StatusCode::kBusy, "another sync apply is in progress on this replica (module '" + name +
                                         "', from another connection): retry when it has finished");
    // The page's schema changes: loosening DDL before its data, tightening DDL after it.
    uint64_t schema_token = 0;
    nlohmann::json schema_plan;
    if (mentions_schema(changes) || held_schema_steps(module)) {
      schema_plan = nlohmann::json::parse(*module->replication("resolve_schema", changes));
      schema_token = schema_plan.value("token", uint64_t{0});
    }
    struct SchemaDone {
      const std::shared_ptr<VtabModule>& module;
      uint64_t token;
      ~SchemaDone() {
        if (!token) return;
        try {
          (void)module->replication("schema_done", "{\"token\":" + std::to_string(token) + "}");
        } catch (const std::exception&) {
        }
      }
    } schema_done{module, schema_token};
    if (schema_token) {
      // Every peer text of the page is checked before anything runs: a refused one refuses
      // the page whole, the rows included (an "after" step runs after the data has landed).
      for (const char* phase : {"before", "after"})
        for (const auto& step : schema_plan.at(phase)) run_schema_step(step, name, /*check_only=*/true);
    }
    // The "before" phase and the page's rows are one scope, one batch: rows refused after
    // the phase ran (a key that does not fit the table as the phase left it, a constraint
    // here) take the phase back with them, and a crash between the two is impossible.
    std::string r;
    auto before_and_rows = [&] {
      if (schema_token) {
        run_schema_phase(module, name, schema_token, "before", schema_plan.at("before"));
        (void)module->replication("schema_stage", "{\"token\":" + std::to_string(schema_token) + "}");
      }
      r = write_page_rows(module, changes);
    };
    if (schema_token) run_schema_change(before_and_rows); else before_and_rows();
    if (schema_token) {
      run_schema_phase(module, name, schema_token, "after", schema_plan.at("after"));
      nlohmann::json counts = nlohmann::json::parse(
          *module->replication("schema_done", "{\"token\":" + std::to_string(schema_token) + "}"));
      schema_done.token = 0;
      nlohmann::json res = nlohmann::json::parse(r);
      res["schema"] = counts;
      r = res.dump();
    } else if (schema_plan.contains("skipped")) {
      nlohmann::json res = nlohmann::json::parse(r);
      res["schema"] = {{"applied", 0}, {"skipped", schema_plan["skipped"]}};
      r = res.dump();
    }
    if (result) *result = std::move(r);
    return Status::Ok();
  } catch (const std::exception& e) {
    return status_of(e);
  }
}

std::string DatabaseImpl::write_page_rows(const std::shared_ptr<VtabModule>& module, const std::string& changes) {
  // A row this database cannot write (a local constraint refuses it) would fail the page
  // every time and wedge the stream: the module holds that row's changes aside as rejected
  // (reported in the result and in status) and the page is resolved again without it.
  constexpr int kMaxRejects = 64;
  for (int attempt = 0;; ++attempt) {
    const SyncPlan plan = read_plan(*module->replication("resolve", changes));
    const uint64_t token = plan.token;
    const std::string tok = "{\"token\":" + std::to_string(token);
    std::optional<size_t> failed_row;
    std::string failure;
    try {
      failed_row = write_sync_rows(plan.rows, module, tok, &failure);
    } catch (...) {
      try {
        (void)module->replication("abandon", tok + "}");
      } catch (const std::exception&) {
      }
      throw;
    }
    if (!failed_row) {
      try {
        return *module->replication("finish", tok + "}");
      } catch (...) {
        try {
          (void)module->replication("abandon", tok + "}");
        } catch (const std::exception&) {
        }
        throw;
      }
    }
    nlohmann::json abandon{{"token", token}, {"reject", *failed_row}, {"error", failure}};
    (void)module->replication("abandon", abandon.dump());
    if (attempt + 1 >= kMaxRejects)
      throw Error(StatusCode::kConstraint, "sync apply: " + std::to_string(kMaxRejects) +
                                               " rows of the page were refused here; last: " + failure);
  }
}

std::optional<size_t> DatabaseImpl::write_sync_rows(const std::vector<SyncPlanRow>& rows, const std::shared_ptr<VtabModule>& module,
                                                    const std::string& token, std::string* failure) {
  if (rows.empty()) return std::nullopt;
  Status s = exec("begin");
  if (!s.ok()) throw Error(s.code(), s.message());
  const bool was_remote = set_remote_origin(true);
  struct Restore {
    DatabaseImpl* db;
    bool was_remote;
    bool open = true;
    ~Restore() {
      if (open) (void)db->exec("rollback");
      db->set_remote_origin(was_remote);
    }
  } restore{this, was_remote};
  std::map<std::string, std::unique_ptr<Statement>> prepared;  // by SQL text
  for (size_t n = 0; n < rows.size(); ++n) {
    const SyncPlanRow& r = rows[n];
    const std::string& schema_name = r.schema;
    const std::string& table_name = r.table;
    const std::string table = sql_name(schema_name) + "." + sql_name(table_name);
    const bool del = r.op == "delete";
    const bool existed = r.existed;
    // Generated columns are the engine's to compute: never written.
    std::shared_ptr<TableEntry> entry = catalog_.find(schema_name, table_name);
    auto generated = [&](const std::string& column) {
      if (!entry) return false;
      for (const auto& c : entry->schema.columns)
        if (iequals(c.name, column)) return c.generated();
      return false;
    };
    std::string sql;
    std::vector<Value> binds;
    if (del) {
      const std::vector<std::string>& key = r.key;
      sql = "delete from " + table + " where true";  // a singleton table (`primary key ()`): no key
      for (size_t i = 0; i < key.size(); ++i) {
        sql += " and " + sql_name(key[i]) + " = ?";
        binds.push_back(r.values[i]);
      }
    } else if (existed) {
      // In place, by the stored key: its key columns keep their stored spelling.
      const std::vector<std::string>& key = r.key;
      const std::vector<std::string>& cols = r.columns;
      // Columns a snapshot found deleted at its source take their default, as the row the
      // source re-created without them did (NULL without one; a NOT NULL column without one
      // keeps the value the plan carries: the source could not have re-created the row
      // without a fact for it, which the snapshot brings).
      auto default_of = [&](const std::string& column) -> std::optional<std::string> {
        if (!(r.present & SyncPlanRow::kDefaulted) || !entry) return std::nullopt;
        bool listed = false;
        for (const std::string& d : r.defaulted) listed = listed || iequals(d, column);
        if (!listed) return std::nullopt;
        for (const auto& c : entry->schema.columns)
          if (iequals(c.name, column)) {
            if (c.default_expr) return "(" + expr_to_sql(*c.default_expr) + ")";
            return c.not_null ? std::nullopt : std::optional<std::string>("null");
          }
        return std::nullopt;
      };
      std::string set;
      for (size_t i = 0; i < cols.size(); ++i) {
        const std::string& c = cols[i];
        bool unchanged_key = false;  // a key column is set only to change its spelling
        for (size_t k = 0; k < key.size(); ++k)
          if (key[k] == c) unchanged_key = same_wire_value(r.key_values[k], r.values[i]);
        if (unchanged_key || generated(c)) continue;
        if (std::optional<std::string> d = default_of(c)) {
          set += (set.empty() ? "" : ", ") + sql_name(c) + " = " + *d;
          continue;
        }
        set += (set.empty() ? "" : ", ") + sql_name(c) + " = ?";
        binds.push_back(r.values[i]);
      }
      if (set.empty()) continue;  // a row of key columns only: nothing to change
      sql = "update " + table + " set " + set + " where true";
      for (size_t i = 0; i < key.size(); ++i) {
        sql += " and " + sql_name(key[i]) + " = ?";
        binds.push_back(r.key_values[i]);
      }
    } else {
      const std::vector<std::string>& cols = r.columns;
      sql = "insert into " + table + " (";
      std::string marks;
      for (size_t i = 0; i < cols.size(); ++i) {
        const std::string& c = cols[i];
        if (generated(c)) continue;
        sql += (marks.empty() ? "" : ", ") + sql_name(c);
        marks += marks.empty() ? "?" : ", ?";
        binds.push_back(r.values[i]);
      }
      sql += ") values (" + marks + ")";
    }
    auto& stmt = prepared[sql];
    if (!stmt) {
      std::vector<std::unique_ptr<Statement>> out;
      Status ps = prepare(sql, &out);
      if (!ps.ok()) throw Error(ps.code(), ps.message());
      stmt = std::move(out.at(0));
    }
    for (size_t i = 0; i < binds.size(); ++i) {
      Status bs = stmt->bind(static_cast<int>(i + 1), binds[i]);
      if (!bs.ok()) throw Error(bs.code(), bs.message());
    }
    bool has = true;
    while (has) {
      Status st = stmt->step(&has);
      if (st.ok()) continue;
      if (st.code() != StatusCode::kConstraint && st.code() != StatusCode::kMismatch) 
        throw Error(st.code(), "sync apply: writing a remote row into " + table + ": " + st.message());
      *failure = "writing a remote row into " + table + ": " + st.to_string();
      return n;  // Restore rolls the transaction back
    }
    (void)stmt->reset();
  }
  prepared.clear();
  (void)module->replication("arm", token + "}");
  restore.open = false;
  Status cs = exec("commit");
  if (!cs.ok()) {
    (void)exec("rollback");
    throw Error(cs.code(), cs.message());
  }
  return std::nullopt;
}

}  // namespace quereus
