// Built-in table-valued functions: catalog introspection (schema(), table_info(),
// column_info(), the constraint / index / view / assertion / function listings) and plan
// inspection (query_plan()).
#include <algorithm>
#include <tuple>

#include "common/status.h"

#include "catalog/ddl_names.h"
#include "transaction/assertion_explain.h"
#include "main/database_impl.h"
#include "catalog/registry.h"
#include "ddl/tags.h"
#include "rewrite/view_writes.h"
#include "functions/builtins.h"
#include "main/introspection.h"

#include "ddl/schema_ddl.h"
#include "catalog/derivation.h"
#include "maintained/maintenance.h"
#include "types/json_value.h"
#include "optimizer/optimizer.h"
#include "parser/ast_printer.h"
#include "parser/parser.h"
#include "planner/planner.h"
#include "planner/properties.h"
#include "types/logical_type.h"

namespace quereus {

namespace {

std::string type_label(uint32_t t) { return logical_type_name(t); }

std::string dq(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// Canonical CREATE INDEX text (schema().sql of an index row).
std::string index_sql(const TableSchema& ts, const IndexSchema& ix) {
  std::string s = std::string("CREATE ") + (ix.unique ? "UNIQUE " : "") + "INDEX " + dq(ix.name) + " ON " + dq(ts.name) + " (";
  for (size_t i = 0; i < ix.columns.size(); ++i) {
    if (i) s += ", ";
    s += dq(ts.columns[ix.columns[i].column].name) + " COLLATE " + ix.columns[i].collation->name();
    if (ix.columns[i].desc) s += " DESC";
  }
  s += ")";
  if (ix.where) s += " WHERE " + expr_to_sql(*ix.where);
  return s;
}

Value tags_value(const TagSet& tags) { return tags.empty() ? Value() : Value::Text(tags.to_json()); }

// Whether an index is listed as one (schema(), index_info()): every CREATE INDEX, and a
// UNIQUE constraint's structure only when its constraint exposes it.
bool listed_as_index(const IndexSchema& ix) { return !ix.constraint || exposes_implicit_index(ix); }

// The tags an index row shows: an exposed structure's own, not its constraint's.
const TagSet& index_tags(const IndexSchema& ix) { return ix.constraint ? ix.exposed_index_tags : ix.tags; }

}  // namespace

namespace {

void expression_rows(const ScalarExpr& e, int64_t parent, int64_t& next_id, std::vector<Row>& out) {
  const char* type = "Expression";
  std::string detail;
  switch (e.kind) {
    case ScalarKind::kLiteral:
      type = "Literal";
      detail = static_cast<const LiteralScalar&>(e).value.to_text();
      break;
    case ScalarKind::kColumn: {
      auto& c = static_cast<const ColumnScalar&>(e);
      type = "ColumnReference";
      detail = "#" + std::to_string(c.attr_id) + (c.level ? " (outer " + std::to_string(c.level) + ")" : "");
      break;
    }
    case ScalarKind::kParam: {
      auto& p = static_cast<const ParamScalar&>(e);
      type = "ParameterReference";
      detail = p.name.empty() ? "?" + std::to_string(p.index) : ":" + p.name;
      break;
    }
    case ScalarKind::kUnary: case ScalarKind::kNot: type = "UnaryOp"; break;
    case ScalarKind::kFunction:
      type = "ScalarFunctionCall";
      detail = static_cast<const FunctionScalar&>(e).fn->name;
      break;
    case ScalarKind::kCast: type = "Cast"; break;
    case ScalarKind::kCollate: type = "Cast"; break;
    case ScalarKind::kCase: type = "Case"; break;
    case ScalarKind::kIn: type = "In"; break;
    case ScalarKind::kInSubquery: type = "InSubquery"; break;
    case ScalarKind::kExists: type = "Exists"; break;
    case ScalarKind::kSubquery: type = "ScalarSubquery"; break;
    case ScalarKind::kBetween: type = "Between"; break;
    case ScalarKind::kIsNull: type = "IsNull"; break;
    default: type = "BinaryOp"; break;
  }
  const int64_t id = next_id++;
  out.push_back({Value::Integer(id), Value::Integer(parent), Value::Text(type), Value::Text("EXPR"),
                 Value::Text(detail.empty() ? std::string(type) : std::string(type) + " " + detail),
                 Value::Text("{}")});
  for (const ScalarPtr* c : e.operands()) expression_rows(**c, id, next_id, out);
}

void plan_rows(const RelNode& n, int64_t id, int64_t parent, int64_t& next_id, std::vector<Row>& out,
               std::vector<const RelNode*>* nodes = nullptr) {
  static const char* kNames[] = {"TableScan", "Values", "SingleRow", "Filter", "Project", "Join", "Aggregate",
                                 "Sort", "Limit", "Distinct", "SetOperation", "WorkingTable", "RecursiveCTE",
                                 "Window", "TableFunction", "SemiJoin", "Cache", "DmlRelation"};
  Row r;
  r.push_back(Value::Integer(id));
  r.push_back(parent < 0 ? Value() : Value::Integer(parent));
  r.push_back(Value::Text(kNames[static_cast<int>(n.kind)]));
  std::string d = n.describe();
  auto sp = d.find(' ');
  r.push_back(Value::Text(sp == std::string::npos ? d : d.substr(0, sp)));
  r.push_back(Value::Text(d));
  r.push_back(Value::Text(derive_properties(n).to_json()));
  out.push_back(std::move(r));
  if (nodes) nodes->push_back(&n);
  for (const ScalarExpr* e : node_expressions(n)) expression_rows(*e, id, next_id, out);
  if (nodes) nodes->resize(out.size(), nullptr);
  for (auto* c : n.children()) {
    int64_t cid = next_id++;
    plan_rows(*c, cid, id, next_id, out, nodes);
  }
}


// ---- view lineage (view_info(), column_info())

// Where one output column of a plan node comes from: a base table column, or nothing
// (computed, aggregated, or not writable through the view).
using BaseSite = ViewWriteSurface::Site;

// A view's output columns with where a write through each lands: the write-through
// analysis itself (rewrite/view_writes.h, on the lineage service), so the surfaces agree
// with what a write does. A view it cannot write through reads as all read-only.
ViewWriteSurface view_lineage(DatabaseImpl& db, const ViewEntry& v) {
  ViewWriteSurface out = describe_view_writes(db, v);
  if (out.ok) return out;
  try {
    Planner planner(db);
    QueryPlan plan = planner.plan_view_body(*v.definition->select, v.schema_name);
    out.names = v.columns.empty() ? plan.names : v.columns;
  } catch (const Error&) {
    out.names = v.columns;
  }
  out.sites.assign(out.names.size(), BaseSite{});
  out.sides.clear();
  return out;
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    o += ch;
  }
  return o + "\"";
}

// The view_info() row of one view: insertable / updatable / deletable and its targets.
// Deletable and insertable are decided per base relation of the body (a self-join's two
// aliases are two relations over one table): every relation that must be covered has its
// key projected (deletable) and a value for each NOT NULL column without a default —
// projected, pinned by the body, or filled by the view (insertable).
Row view_info_row(DatabaseImpl& db, const ViewEntry& v) {
  ViewWriteSurface lin = view_lineage(db, v);
  std::vector<std::shared_ptr<TableEntry>> targets;
  for (const auto* list : {&lin.sites, &lin.reach})
    for (const BaseSite& s : *list)
      if (s.table && std::find(targets.begin(), targets.end(), s.table) == targets.end()) targets.push_back(s.table);
  auto has = [](const std::vector<BaseSite>& sites, int side, int c) {
    for (const BaseSite& s : sites)
      if (s.table && s.side == side && s.column == c) return true;
    return false;
  };
  bool insertable = !targets.empty(), deletable = !targets.empty();
  for (size_t side = 0; side < lin.sides.size(); ++side) {
    const auto& [t, optional] = lin.sides[side];
    if (optional) continue;
    const int si = static_cast<int>(side);
    for (const KeyColumn& k : t->schema.primary_key)
      if (!has(lin.reach, si, k.column)) deletable = false;
    for (size_t c = 0; c < t->schema.columns.size(); ++c) {
      const ColumnSchema& col = t->schema.columns[c];
      int ci = static_cast<int>(c);
      // A generated column needs no value; a registry inverse is not written by an INSERT.
      if (col.not_null && !col.default_expr && !col.generated() && !has(lin.inserted, si, ci) &&
          !has(lin.filled, si, ci))
        insertable = false;
    }
  }
  insertable = insertable && !lin.insert_refused;
  std::string json = "[";
  for (const auto& t : targets) json += (json.size() > 1 ? "," : "") + json_string(t->schema.name);
  json += "]";
  auto yn = [](bool b) { return Value::Text(b ? "YES" : "NO"); };
  return {Value::Text(v.schema_name), Value::Text(v.name), yn(insertable), yn(!targets.empty()), yn(deletable),
          Value::Text(json)};
}

// Splits an optional `schema.` qualifier off a name argument.
std::pair<std::string, std::string> split_qualified(const std::string& arg) {
  if (auto dot = arg.find('.'); dot != std::string::npos) return {arg.substr(0, dot), arg.substr(dot + 1)};
  return {"", arg};
}

// Registers a catalog function: never deterministic (it reads the live catalog).
void add_catalog_function(Registry& r, std::string name, int min_args, int num_args,
                          std::vector<TableFunctionColumn> columns, decltype(TableFunction::rows) rows) {
  TableFunction f;
  f.name = std::move(name);
  f.min_args = min_args;
  f.num_args = num_args;
  f.flags = 0;
  f.columns = std::move(columns);
  f.rows = std::move(rows);
  r.add_table_function(std::move(f), "builtin");
}

// schema(): every table, index, view and function, with its DDL and tags. A table's DDL
// is the one its catalog persists (ddl/schema_ddl.h), so it recreates the table exactly.
void register_schema_listing(Registry& r) {
  TableFunction schema_fn;
  schema_fn.name = "schema";
  schema_fn.columns = {{"schema", QRS_LT_TEXT, false}, {"type", QRS_LT_TEXT, false}, {"name", QRS_LT_TEXT, false},
                       {"tbl_name", QRS_LT_TEXT, false}, {"sql", QRS_LT_TEXT, true}, {"tags", QRS_LT_TEXT, true}};
  schema_fn.rows = [](DatabaseImpl& db, std::span<const Value>) {
    std::vector<Row> rows;
    for (auto& t : db.catalog().tables()) {
      const TableSchema& ts = t->schema;
      // A maintained table is listed once, as the materialized view it is.
      const char* type = ts.derivation ? "materialized_view" : "table";
      rows.push_back({Value::Text(ts.schema_name), Value::Text(type), Value::Text(ts.name), Value::Text(ts.name),
                      Value::Text(create_table_ddl(ts)), tags_value(ts.tags)});
      // A UNIQUE constraint's index is part of the constraint, not a schema object,
      // unless the constraint exposes it.
      for (const IndexSchema& ix : ts.indexes)
        if (listed_as_index(ix))
          rows.push_back({Value::Text(ts.schema_name), Value::Text("index"), Value::Text(ix.name), Value::Text(ts.name),
                          Value::Text(index_sql(ts, ix)), tags_value(index_tags(ix))});
    }
    for (auto& v : db.catalog().views())
      rows.push_back({Value::Text(v->schema_name), Value::Text("view"), Value::Text(v->name), Value::Text(v->name),
                      Value::Text(v->sql), tags_value(v->tags)});
    // Functions (scalar, aggregate, table-valued) are schema objects too; never tagged.
    db.registry().for_each_function([&](const std::string& name, int argc, const char*, uint32_t) {
      std::string sig = name + "(" + (argc < 0 ? "..." : std::to_string(argc)) + ")";
      rows.push_back({Value::Text("main"), Value::Text("function"), Value::Text(name), Value::Text(name),
                      Value::Text(sig), Value()});
    });
    return rows;
  };
  r.add_table_function(std::move(schema_fn), "builtin");
}

// table_info() and foreign_key_info(): a table's columns and its foreign keys.
void register_table_info_functions(Registry& r) {
  TableFunction info;
  info.name = "table_info";
  info.num_args = 1;
  info.min_args = 1;
  info.columns = {{"cid", QRS_LT_INTEGER, false}, {"name", QRS_LT_TEXT, false}, {"type", QRS_LT_TEXT, false},
                  {"notnull", QRS_LT_INTEGER, false}, {"dflt_value", QRS_LT_TEXT, true}, {"pk", QRS_LT_INTEGER, false},
                  {"tags", QRS_LT_TEXT, true}, {"collation", QRS_LT_TEXT, false}, {"generated", QRS_LT_INTEGER, false}};
  info.rows = [](DatabaseImpl& db, std::span<const Value> args) {
    std::string name = args[0].to_text(), schema;
    if (auto dot = name.find('.'); dot != std::string::npos) {
      schema = name.substr(0, dot);
      name = name.substr(dot + 1);
    }
    auto t = db.require_table(schema, name);
    std::vector<Row> rows;
    const TableSchema& ts = t->schema;
    for (size_t i = 0; i < ts.columns.size(); ++i) {
      const ColumnSchema& c = ts.columns[i];
      int pk = 0;
      for (size_t k = 0; k < ts.primary_key.size(); ++k)
        // A table without a PRIMARY KEY is keyed on every column, and reports so: the
        // synthesized key is the same schema as the written-out one (sql-constraints.md §7.1).
        if (ts.primary_key[k].column == static_cast<int>(i)) pk = static_cast<int>(k) + 1;
      rows.push_back({Value::Integer(static_cast<int64_t>(i)), Value::Text(c.name),
                      Value::Text(c.type_name.empty() ? type_label(c.logical_type) : to_upper(c.type_name)),
                      Value::Integer(c.not_null ? 1 : 0),
                      c.default_expr ? Value::Text(expr_to_string(*c.default_expr)) : Value(), Value::Integer(pk ? 1 : 0),
                      tags_value(c.tags), Value::Text(c.collation ? c.collation->name() : "BINARY"),
                      Value::Integer(!c.generated() ? 0 : c.generated_stored ? 2 : 1)});
    }
    return rows;
  };
  r.add_table_function(std::move(info), "builtin");

  TableFunction fk_info;
  fk_info.name = "foreign_key_info";
  fk_info.num_args = 1;
  fk_info.min_args = 1;
  fk_info.flags = 0;  // the catalog changes
  fk_info.columns = {{"id", QRS_LT_INTEGER, false},         {"name", QRS_LT_TEXT, true},
                     {"table", QRS_LT_TEXT, false},         {"from", QRS_LT_TEXT, false},
                     {"referenced_table", QRS_LT_TEXT, false}, {"referenced_schema", QRS_LT_TEXT, true},
                     {"to", QRS_LT_TEXT, true},             {"on_update", QRS_LT_TEXT, false},
                     {"on_delete", QRS_LT_TEXT, false},     {"deferred", QRS_LT_INTEGER, false},
                     {"seq", QRS_LT_INTEGER, false},        {"tags", QRS_LT_TEXT, true}};
  fk_info.rows = [](DatabaseImpl& db, std::span<const Value> args) {
    if (args[0].type() != ValueType::kText)
      throw Error(StatusCode::kError, "foreign_key_info() requires a table name string argument");
    auto find = [&db](const std::string& schema, const std::string& name) -> std::shared_ptr<TableEntry> {
      for (const std::string& s : ddl_lookup_schemas(schema))
        if (auto t = db.catalog().find(s, name)) return t;
      return nullptr;
    };
    std::string name = args[0].str(), schema;
    if (auto dot = name.find('.'); dot != std::string::npos) {
      schema = name.substr(0, dot);
      name = name.substr(dot + 1);
    }
    auto t = find(schema, name);
    if (!t) throw Error(StatusCode::kError, "Table '" + args[0].str() + "' not found");
    const TableSchema& ts = t->schema;
    std::vector<Row> rows;
    for (size_t id = 0; id < ts.foreign_keys.size(); ++id) {
      const ForeignKeySchema& fk = ts.foreign_keys[id];
      // Without a parent column list the key targets the parent's primary key; a parent
      // that does not resolve, or a key narrower than the child's list, reports NULL.
      std::shared_ptr<TableEntry> parent;
      if (fk.referenced_columns.empty()) parent = find(fk.referenced_schema, fk.referenced_table);
      for (size_t seq = 0; seq < fk.columns.size(); ++seq) {
        Value to;
        if (!fk.referenced_columns.empty()) {
          if (seq < fk.referenced_columns.size()) to = Value::Text(fk.referenced_columns[seq]);
        } else if (parent && seq < parent->schema.primary_key.size()) {
          to = Value::Text(parent->schema.columns[parent->schema.primary_key[seq].column].name);
        }
        rows.push_back({Value::Integer(static_cast<int64_t>(id)), Value::Text(fk.name), Value::Text(ts.name),
                        Value::Text(ts.columns[fk.columns[seq]].name), Value::Text(fk.referenced_table),
                        Value::Text(fk.referenced_schema), std::move(to), Value::Text(referential_action_name(fk.on_update)),
                        Value::Text(referential_action_name(fk.on_delete)), Value::Integer(fk.deferred ? 1 : 0),
                        Value::Integer(static_cast<int64_t>(seq)), tags_value(fk.tags)});
      }
    }
    return rows;
  };
  r.add_table_function(std::move(fk_info), "builtin");
}

// function_info([name]): the registered scalar, aggregate and table functions, and the
// window-only ones.
void register_function_info(Registry& r) {
  TableFunction finfo;
  finfo.name = "function_info";
  finfo.num_args = 1;
  finfo.min_args = 0;
  finfo.columns = {{"name", QRS_LT_TEXT, false}, {"num_args", QRS_LT_INTEGER, false}, {"type", QRS_LT_TEXT, false},
                   {"deterministic", QRS_LT_INTEGER, false}, {"flags", QRS_LT_INTEGER, false},
                   {"signature", QRS_LT_TEXT, false}};
  finfo.rows = [](DatabaseImpl& db, std::span<const Value> args) {
    std::string filter = args.empty() || args[0].is_null() ? "" : to_lower(args[0].to_text());
    std::vector<Row> rows;
    db.registry().for_each_function([&](const std::string& name, int argc, const char* type, uint32_t flags) {
      if (!filter.empty() && name != filter) return;
      std::string sig = name + "(" + (argc < 0 ? "..." : std::to_string(argc)) + ")";
      rows.push_back({Value::Text(name), Value::Integer(argc), Value::Text(type),
                      Value::Integer(flags & kDeterministic ? 1 : 0), Value::Integer(flags & ~kClockArgs), Value::Text(sig)});
    });
    // The window-only functions (ranking and navigation), which the planner evaluates
    // itself rather than through the registry: type 'window' (functions.md, function_info).
    static const std::pair<const char*, int> kWindowOnly[] = {
        {"row_number", 0}, {"rank", 0},        {"dense_rank", 0},  {"percent_rank", 0},
        {"cume_dist", 0},  {"ntile", 1},       {"lag", -1},        {"lead", -1},
        {"first_value", 1}, {"last_value", 1}, {"nth_value", 2}};
    for (const auto& [name, argc] : kWindowOnly) {
      if (!filter.empty() && filter != name) continue;
      std::string sig = std::string(name) + "(" + (argc < 0 ? "..." : std::to_string(argc)) + ")";
      rows.push_back({Value::Text(name), Value::Integer(argc), Value::Text("window"), Value::Integer(1),
                      Value::Integer(kDeterministic), Value::Text(sig)});
    }
    return rows;
  };
  r.add_table_function(std::move(finfo), "builtin");
}

// column_info(relation): a table's or view's columns and the base column each writes.
void register_column_info(Registry& r) {
  TableFunction col_info;
  col_info.name = "column_info";
  col_info.num_args = 1;
  col_info.min_args = 1;
  col_info.flags = 0;  // the catalog changes
  col_info.columns = {{"schema", QRS_LT_TEXT, false},       {"name", QRS_LT_TEXT, false},
                      {"cid", QRS_LT_INTEGER, false},       {"column_name", QRS_LT_TEXT, false},
                      {"is_updatable", QRS_LT_TEXT, false}, {"base_table", QRS_LT_TEXT, true},
                      {"base_column", QRS_LT_TEXT, true}};
  col_info.rows = [](DatabaseImpl& db, std::span<const Value> args) {
    auto [schema, name] = split_qualified(args[0].to_text());
    DatabaseImpl::Relation rel = db.resolve_relation(schema, name);
    std::vector<Row> rows;
    auto add = [&rows](const std::string& s, const std::string& n, size_t cid, const std::string& col,
                       const BaseSite& site) {
      // A generated column is computed, never written: read-only with no base trace.
      // A column written through several authored puts is updatable with no single trace.
      const bool traced = site.table != nullptr && site.column >= 0;
      const bool updatable =
          site.table != nullptr && (!traced || !site.table->schema.columns[site.column].generated());
      const bool base = traced && updatable;
      rows.push_back({Value::Text(s), Value::Text(n), Value::Integer(static_cast<int64_t>(cid)), Value::Text(col),
                      Value::Text(updatable ? "YES" : "NO"), base ? Value::Text(site.table->schema.name) : Value(),
                      base ? Value::Text(site.table->schema.columns[site.column].name) : Value()});
    };
    if (rel.table && rel.table->schema.derivation) {
      // A maintained table's columns write through its body, as a view's do.
      auto view = maintained_view_entry(*rel.table);
      ViewWriteSurface lin = view_lineage(db, *view);
      for (size_t i = 0; i < lin.names.size(); ++i)
        add(view->schema_name, view->name, i, lin.names[i], lin.sites[i]);
    } else if (rel.table) {
      const TableSchema& ts = rel.table->schema;
      for (size_t i = 0; i < ts.columns.size(); ++i)
        add(ts.schema_name, ts.name, i, ts.columns[i].name, BaseSite{rel.table, static_cast<int>(i)});
    } else {
      ViewWriteSurface lin = view_lineage(db, *rel.view);
      for (size_t i = 0; i < lin.names.size(); ++i)
        add(rel.view->schema_name, rel.view->name, i, lin.names[i], lin.sites[i]);
    }
    return rows;
  };
  r.add_table_function(std::move(col_info), "builtin");
}

// check_constraint_info(), unique_constraint_info() and index_info() of a table.
void register_constraint_functions(Registry& r) {
  add_catalog_function(r, "check_constraint_info", 1, 1,
                       {{"id", QRS_LT_INTEGER, false},         {"name", QRS_LT_TEXT, true},
                        {"expr", QRS_LT_TEXT, false},          {"operations", QRS_LT_TEXT, false},
                        {"deferrable", QRS_LT_INTEGER, false}, {"initially_deferred", QRS_LT_INTEGER, false},
                        {"tags", QRS_LT_TEXT, true}},
                       [](DatabaseImpl& db, std::span<const Value> args) {
    auto [schema, name] = split_qualified(args[0].to_text());
    auto t = db.require_table(schema, name);
    std::vector<Row> rows;
    for (size_t id = 0; id < t->schema.checks.size(); ++id) {
      const CheckSchema& c = t->schema.checks[id];
      std::string ops;
      for (auto [on, op] : {std::pair{c.on_insert, "insert"}, std::pair{c.on_update, "update"}, std::pair{c.on_delete, "delete"}})
        if (on) ops += (ops.empty() ? "" : ",") + std::string(op);
      rows.push_back({Value::Integer(static_cast<int64_t>(id)), c.named ? Value::Text(c.name) : Value(),
                      Value::Text(c.expr ? expr_to_string(*c.expr) : ""), Value::Text(ops), Value::Integer(0),
                      Value::Integer(0), tags_value(c.tags)});
    }
    return rows;
  });

  // No UNIQUE constraints (the primary key is excluded) nor secondary indexes exist
  // yet: these list nothing, but still reject an unknown table.
  add_catalog_function(r, "unique_constraint_info", 1, 1,
                       {{"id", QRS_LT_INTEGER, false},  {"name", QRS_LT_TEXT, true},
                        {"seq", QRS_LT_INTEGER, false}, {"column_name", QRS_LT_TEXT, false},
                        {"partial", QRS_LT_INTEGER, false}, {"tags", QRS_LT_TEXT, true}},
                       [](DatabaseImpl& db, std::span<const Value> args) {
    auto [schema, name] = split_qualified(args[0].to_text());
    const TableSchema& ts = db.require_table(schema, name)->schema;
    // UNIQUE constraints, then unique CREATE INDEXes (each acts as one).
    std::vector<Row> rows;
    int64_t id = 0;
    for (bool constraints : {true, false})
      for (const IndexSchema& ix : ts.indexes) {
        if (!ix.unique || ix.constraint != constraints) continue;
        Value cname = ix.constraint && !ix.constraint_named ? Value() : Value::Text(ix.name);
        for (size_t k = 0; k < ix.columns.size(); ++k)
          rows.push_back({Value::Integer(id), cname, Value::Integer(static_cast<int64_t>(k)),
                          Value::Text(ts.columns[ix.columns[k].column].name), Value::Integer(ix.where ? 1 : 0),
                          tags_value(ix.tags)});
        ++id;
      }
    return rows;
  });

  // functions.md "index_info": a column's collation, NULL where neither the index nor the
  // column names one (BINARY, the default; table_info() shows that as 'BINARY').
  auto collation_or_null = [](const Collation& c) { return iequals(c.name(), "BINARY") ? Value() : Value::Text(c.name()); };
  add_catalog_function(r, "index_info", 1, 1,
                       {{"index_name", QRS_LT_TEXT, false}, {"seq", QRS_LT_INTEGER, false},
                        {"column_name", QRS_LT_TEXT, false}, {"desc", QRS_LT_INTEGER, false},
                        {"collation", QRS_LT_TEXT, true},    {"unique", QRS_LT_INTEGER, false},
                        {"partial", QRS_LT_INTEGER, false},  {"tags", QRS_LT_TEXT, true}},
                       [collation_or_null](DatabaseImpl& db, std::span<const Value> args) {
    auto [schema, name] = split_qualified(args[0].to_text());
    const TableSchema& ts = db.require_table(schema, name)->schema;
    std::vector<Row> rows;
    for (const IndexSchema& ix : ts.indexes) {
      if (!listed_as_index(ix)) continue;
      for (size_t k = 0; k < ix.columns.size(); ++k)
        rows.push_back({Value::Text(ix.name), Value::Integer(static_cast<int64_t>(k)),
                        Value::Text(ts.columns[ix.columns[k].column].name), Value::Integer(ix.columns[k].desc ? 1 : 0),
                        collation_or_null(*ix.columns[k].collation), Value::Integer(ix.unique ? 1 : 0),
                        Value::Integer(ix.where ? 1 : 0), tags_value(index_tags(ix))});
    }
    return rows;
  });
}

// view_info([view]): whether each view is insertable, updatable and deletable.
void register_view_info(Registry& r) {
  add_catalog_function(r, "view_info", 0, 1,
                       {{"schema", QRS_LT_TEXT, false},       {"name", QRS_LT_TEXT, false},
                        {"is_insertable_into", QRS_LT_TEXT, false}, {"is_updatable", QRS_LT_TEXT, false},
                        {"is_deletable", QRS_LT_TEXT, false}, {"effective_targets", QRS_LT_TEXT, false}},
                       [](DatabaseImpl& db, std::span<const Value> args) {
    std::string schema, name;
    if (!args.empty() && !args[0].is_null()) std::tie(schema, name) = split_qualified(args[0].to_text());
    std::vector<Row> rows;
    for (const auto& v : db.catalog().views()) {
      if (!name.empty() && !iequals(v->name, name)) continue;
      if (!schema.empty() && !iequals(v->schema_name, schema)) continue;
      rows.push_back(view_info_row(db, *v));
    }
    return rows;
  });
}

// materialized_view_info(): each maintained table, how it is maintained and whether it is
// live, stale (its body no longer plans: reads refuse it) or frozen (its body's shape or
// key moved: it serves its last rows, unmaintained).
void register_materialized_view_info(Registry& r) {
  add_catalog_function(r, "materialized_view_info", 0, 0,
                       {{"schema", QRS_LT_TEXT, false},   {"name", QRS_LT_TEXT, false},
                        {"strategy", QRS_LT_TEXT, false}, {"sources", QRS_LT_TEXT, false},
                        {"state", QRS_LT_TEXT, false},    {"reason", QRS_LT_TEXT, true},
                        {"fills", QRS_LT_INTEGER, false},  {"rebuilds", QRS_LT_INTEGER, false},
                        {"recomputed_groups", QRS_LT_INTEGER, false}, {"folded_rows", QRS_LT_INTEGER, false},
                        {"rows_written", QRS_LT_INTEGER, false}, {"collisions", QRS_LT_INTEGER, false}},
                       [](DatabaseImpl& db, std::span<const Value>) {
    std::vector<Row> rows;
    for (auto& t : db.catalog().tables()) {
      if (!t->schema.derivation) continue;
      const Derivation& d = *t->schema.derivation;
      std::string sources;
      for (const auto& [schema, name] : d.sources) sources += (sources.empty() ? "" : ", ") + schema + "." + name;
      std::string strategy = strategy_name(d.strategy), state = "live";
      Value reason;
      try {
        strategy = strategy_name(db.maintenance().plan_of(*t)->strategy);
      } catch (const Error& e) {
        state = t->stale.empty() ? "frozen" : "stale";
        reason = Value::Text(e.raw_message());
      }
      MaintenanceCounters n = db.maintenance().counters(*t);
      auto count = [](uint64_t v) { return Value::Integer(static_cast<int64_t>(v)); };
      rows.push_back({Value::Text(t->schema.schema_name), Value::Text(t->schema.name), Value::Text(strategy),
                      Value::Text(sources), Value::Text(state), reason, count(n.fills), count(n.rebuilds),
                      count(n.recomputed_groups), count(n.folded_rows), count(n.rows_written),
                      count(n.collisions)});
    }
    return rows;
  });
}

// assertion_info() and explain_assertion(name): the assertions and how each is checked.
void register_assertion_functions(Registry& r) {
  TableFunction a_info;
  a_info.name = "assertion_info";
  a_info.num_args = 0;
  a_info.min_args = 0;
  a_info.flags = 0;
  a_info.columns = {{"schema_name", QRS_LT_TEXT, false},       {"name", QRS_LT_TEXT, false},
                    {"violation_sql", QRS_LT_TEXT, false},     {"deferrable", QRS_LT_INTEGER, false},
                    {"initially_deferred", QRS_LT_INTEGER, false}, {"dependent_tables", QRS_LT_TEXT, false}};
  a_info.rows = [](DatabaseImpl& db, std::span<const Value>) {
    std::vector<Row> rows;
    for (const auto& a : db.assertions().list()) {
      // One entry per base-table reference the body makes (through views as well).
      jsonv::Json deps = jsonv::Json::array();
      int n = 0;
      for (const auto& r : a->references) {
        if (r.is_view) continue;
        std::string base = r.schema + "." + to_lower(r.name);
        jsonv::Json entry = jsonv::Json::object();
        entry["relationKey"] = base + "#" + std::to_string(n++);
        entry["base"] = base;
        deps.push_back(std::move(entry));
      }
      // Assertions are checked at COMMIT: deferrable and initially deferred.
      rows.push_back({Value::Text(a->schema_name), Value::Text(a->name), Value::Text(a->violation_sql),
                      Value::Integer(1), Value::Integer(1), Value::Text(jsonv::canonical(deps))});
    }
    return rows;
  };
  r.add_table_function(std::move(a_info), "builtin");

  add_catalog_function(r, "explain_assertion", 1, 1,
                       {{"assertion", QRS_LT_TEXT, false},      {"relation_key", QRS_LT_TEXT, false},
                        {"base", QRS_LT_TEXT, false},           {"classification", QRS_LT_TEXT, false},
                        {"prepared_pk_params", QRS_LT_TEXT, true}, {"violation_sql", QRS_LT_TEXT, false}},
                       [](DatabaseImpl& db, std::span<const Value> args) {
    return explain_assertion_rows(db, args[0].to_text());
  });
}

}  // namespace

std::vector<Row> plan_listing(const RelNode& root, std::vector<const RelNode*>* nodes) {
  std::vector<Row> rows;
  int64_t next_id = 1;
  plan_rows(root, 0, -1, next_id, rows, nodes);
  return rows;
}

namespace {

// query_plan(sql): the optimized plan of one SELECT, one row per node; scheduler_program(sql).
void register_query_plan(Registry& r) {
  TableFunction qp;
  qp.name = "query_plan";
  qp.num_args = 1;
  qp.min_args = 1;
  qp.columns = {{"id", QRS_LT_INTEGER, false}, {"parent_id", QRS_LT_INTEGER, true}, {"node_type", QRS_LT_TEXT, false},
                {"op", QRS_LT_TEXT, false}, {"detail", QRS_LT_TEXT, false},
                {"properties", QRS_LT_TEXT, false}};
  qp.rows = [](DatabaseImpl& db, std::span<const Value> args) {
    auto stmts = Parser::parse(args[0].to_text());
    if (stmts.size() != 1 || stmts[0]->kind != ast::StmtKind::kSelect)
      throw Error(StatusCode::kError, "query_plan() takes exactly one SELECT statement");
    Planner planner(db);
    QueryPlan plan = planner.plan_select(*static_cast<const ast::SelectStmt&>(*stmts[0]).select, nullptr);
    Optimizer optimizer(db.options().optimizer);
    RelPtr root = optimizer.finish_query(optimizer.optimize(plan.root));
    return plan_listing(*root);
  };
  TableFunction program = qp;
  r.add_table_function(std::move(qp), "builtin");

  // scheduler_program(sql): the plan as the steps that run it, operands before the step
  // that consumes them (functions.md, "Debug/Explain Functions"). There is no separate
  // instruction program here: each plan node and expression is one step, `addr` its
  // position in execution order, `description` what it does.
  program.name = "scheduler_program";
  program.columns = {{"addr", QRS_LT_INTEGER, false}, {"description", QRS_LT_TEXT, false},
                     {"node_type", QRS_LT_TEXT, false}};
  auto plan = program.rows;
  program.rows = [plan](DatabaseImpl& db, std::span<const Value> args) {
    std::vector<Row> nodes = plan(db, args);
    std::vector<Row> rows;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
      rows.push_back({Value::Integer(static_cast<int64_t>(rows.size())), (*it)[4], (*it)[2]});
    return rows;
  };
  r.add_table_function(std::move(program), "builtin");
}

// schema_ddl(): the statements that recreate the catalog exactly, in an order that can be
// run (tables, indexes, views, materialized views, assertions, declarations): the same text
// a persistent module's catalog stores (ddl/schema_ddl.h). The shell's .dump reads it.
void register_schema_ddl(Registry& r) {
  add_catalog_function(
      r, "schema_ddl", 0, 0,
      {{"schema", QRS_LT_TEXT, false}, {"type", QRS_LT_TEXT, false}, {"name", QRS_LT_TEXT, false},
       {"tbl_name", QRS_LT_TEXT, false}, {"ddl", QRS_LT_TEXT, false}},
      [](DatabaseImpl& db, std::span<const Value>) {
        std::vector<Row> rows;
        auto add = [&](const std::string& schema, const char* type, const std::string& name, const std::string& table,
                       std::string ddl) {
          rows.push_back({Value::Text(schema), Value::Text(type), Value::Text(name), Value::Text(table),
                          Value::Text(std::move(ddl))});
        };
        const auto tables = db.catalog().tables();
        for (const auto& t : tables)
          if (!t->schema.derivation) add(t->schema.schema_name, "table", t->schema.name, t->schema.name, create_table_ddl(t->schema));
        for (const auto& t : tables)
          for (const IndexSchema& ix : t->schema.indexes)
            if (!ix.constraint)
              add(t->schema.schema_name, "index", ix.name, t->schema.name, create_index_ddl(t->schema, ix));
        for (const auto& v : db.catalog().views())
          if (!v->lens)  // a logical table: its apply (below) recreates it
            add(v->schema_name, "view", v->name, v->name, statement_to_string(*v->definition, v->schema_name));
        for (const auto& t : tables)
          if (t->schema.derivation)
            add(t->schema.schema_name, "materialized_view", t->schema.name, t->schema.name, create_table_ddl(t->schema));
        for (const auto& a : db.assertions().list()) add(a->schema_name, "assertion", a->name, "", assertion_ddl(*a));
        for (const auto& [name, decl] : db.declared_schemas().declared)
          add(name, "declaration", name, "", statement_to_string(*decl));
        // Lens blocks, then the logical schemas deployed (docs/lenses.md).
        for (const auto& [name, lens] : db.declared_schemas().lenses)
          add(name, "lens", name, "", statement_to_string(*lens));
        for (const auto& [name, dep] : db.declared_schemas().deployments)
          add(name, "apply", name, "", "apply schema " + name);
        return rows;
      });
}

}  // namespace

void register_introspection_functions(Registry& r) {
  if (r.find_table_function("schema")) return;  // registered by an earlier Database::Open
  register_schema_listing(r);
  register_table_info_functions(r);
  register_function_info(r);
  register_column_info(r);
  register_constraint_functions(r);
  register_view_info(r);
  register_materialized_view_info(r);
  register_assertion_functions(r);
  register_query_plan(r);
  register_schema_ddl(r);
}

}  // namespace quereus
