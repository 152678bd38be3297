#include "ddl/schema_ddl.h"

#include <cstdio>

#include "types/json_value.h"
#include "parser/ast.h"
#include "parser/ast_printer.h"
#include "catalog/derivation.h"

namespace quereus {

namespace {

const char* conflict_word(qrs_conflict c) {
  switch (c) {
    case QRS_CONFLICT_ROLLBACK: return "rollback";
    case QRS_CONFLICT_FAIL: return "fail";
    case QRS_CONFLICT_IGNORE: return "ignore";
    case QRS_CONFLICT_REPLACE: return "replace";
    default: return "abort";
  }
}

std::string on_conflict(const std::optional<qrs_conflict>& c) {
  return c ? std::string(" on conflict ") + conflict_word(*c) : std::string();
}

// An action as SQL spells it.
std::string fk_action(ReferentialAction a) {
  switch (a) {
    case ReferentialAction::kSetNull: return "set null";
    case ReferentialAction::kSetDefault: return "set default";
    case ReferentialAction::kNoAction: return "no action";
    case ReferentialAction::kCascade: return "cascade";
    case ReferentialAction::kRestrict: break;
  }
  return "restrict";
}

std::string q(const std::string& name) { return quote_identifier(name); }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return s;
}

std::string column_list(const TableSchema& t, const std::vector<int>& cols) {
  std::string s;
  for (size_t i = 0; i < cols.size(); ++i) s += (i ? ", " : "") + q(t.columns[cols[i]].name);
  return s;
}

// " with tags (k = v, …)"; "" when untagged.
std::string tags_clause(const TagSet& tags) {
  if (tags.empty()) return "";
  std::string s = " with tags (";
  bool first = true;
  for (const auto& [key, v] : tags.entries()) {
    if (!first) s += ", ";
    first = false;
    s += quote_identifier(key) + " = ";
    if (const auto* text = std::get_if<std::string>(&v)) s += sql_literal(Value::Text(*text));
    else s += tag_json(v);  // null, true / false, a number
  }
  return s + ")";
}

}  // namespace

std::string sql_literal(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return "null";
    case ValueType::kInteger:
    case ValueType::kBigInt: return v.to_text();
    case ValueType::kBoolean: return v.as_bool() ? "true" : "false";
    case ValueType::kReal: {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", v.as_real());
      std::string s = buf;
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // stays REAL when parsed
      return s;
    }
    case ValueType::kBlob: {
      static const char* hex = "0123456789abcdef";
      std::string s = "x'";
      for (unsigned char c : v.str()) {
        s += hex[c >> 4];
        s += hex[c & 15];
      }
      return s + "'";
    }
    case ValueType::kText:
    case ValueType::kJson: {
      std::string s = "'";
      for (char c : v.str()) {
        s += c;
        if (c == '\'') s += '\'';
      }
      return s + "'";
    }
  }
  return "null";
}

std::vector<std::pair<std::string, std::string>> table_objects(const TableSchema& t) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ColumnSchema& c : t.columns) {
    std::string s = q(c.name);
    if (!c.type_name.empty()) s += " " + c.type_name;
    s += c.not_null ? " not null" : " null";
    s += on_conflict(c.not_null_conflict);
    if (c.collation && (c.collation_declared || c.collation->name() != "BINARY"))
      s += " collate " + q(lower(c.collation->name()));
    if (c.default_expr) s += " default (" + expr_to_sql(*c.default_expr) + ")";
    if (c.generated_expr) {
      s += " generated always as (" + expr_to_sql(*c.generated_expr) + ")";
      s += c.generated_stored ? " stored" : " virtual";
    }
    s += tags_clause(c.tags);
    out.emplace_back("col:" + lower(c.name), std::move(s));
  }
  {
    std::string s;
    // A table declared without a PRIMARY KEY is keyed on the columns it had then; once a
    // column is added the text must name that key, or reading it back would key the table
    // on every column it has now (its stored rows and index entries would disagree).
    bool implicit_all = t.primary_key.size() == t.columns.size();
    for (size_t i = 0; implicit_all && i < t.primary_key.size(); ++i)
      implicit_all = t.primary_key[i].column == static_cast<int>(i) && !t.primary_key[i].desc;
    if (t.primary_key_declared || !implicit_all) {
      s += "primary key (";
      for (size_t i = 0; i < t.primary_key.size(); ++i) {
        if (i) s += ", ";
        s += q(t.columns[t.primary_key[i].column].name);
        if (t.primary_key[i].desc) s += " desc";
      }
      s += ")" + on_conflict(t.pk_conflict) + tags_clause(t.primary_key_tags);
    }
    out.emplace_back("pk", std::move(s));
  }
  for (const IndexSchema& ix : t.indexes) {
    if (!ix.constraint) continue;
    std::string s;
    if (ix.constraint_named) s += "constraint " + q(ix.name) + " ";
    s += "unique (";
    for (size_t i = 0; i < ix.columns.size(); ++i) {
      if (i) s += ", ";
      const IndexColumn& c = ix.columns[i];
      s += q(t.columns[c.column].name);
      const ColumnSchema& col = t.columns[c.column];
      if (c.collation && col.collation && c.collation->name() != col.collation->name())
        s += " collate " + q(lower(c.collation->name()));
      if (c.desc) s += " desc";
    }
    s += ")" + on_conflict(ix.on_conflict) + tags_clause(ix.tags);
    out.emplace_back("uniq:" + lower(ix.name), std::move(s));
  }
  for (const CheckSchema& c : t.checks) {
    std::string s;
    if (c.named) s += "constraint " + q(c.name) + " ";
    s += "check";
    bool default_ops = c.on_insert && c.on_update && !c.on_delete;
    if (!default_ops) {
      std::string ops;
      if (c.on_insert) ops += "insert";
      if (c.on_update) ops += std::string(ops.empty() ? "" : ", ") + "update";
      if (c.on_delete) ops += std::string(ops.empty() ? "" : ", ") + "delete";
      s += " on " + ops;
    }
    s += " (" + expr_to_sql(*c.expr) + ")" + on_conflict(c.on_conflict) + tags_clause(c.tags);
    // An unnamed CHECK is known by its text (two peers adding the same one add one).
    out.emplace_back("check:" + (c.named ? lower(c.name) : s), s);
  }
  for (const ForeignKeySchema& fk : t.foreign_keys) {
    std::string s = "constraint " + q(fk.name) + " foreign key (" + column_list(t, fk.columns) + ") references ";
    if (!fk.referenced_schema.empty()) s += q(fk.referenced_schema) + ".";
    s += q(fk.referenced_table);
    if (!fk.referenced_columns.empty()) {
      s += "(";
      for (size_t i = 0; i < fk.referenced_columns.size(); ++i) s += (i ? ", " : "") + q(fk.referenced_columns[i]);
      s += ")";
    }
    s += " on delete " + fk_action(fk.on_delete) + " on update " + fk_action(fk.on_update);
    if (fk.deferred) s += " deferrable initially deferred";
    s += tags_clause(fk.tags);
    out.emplace_back("fk:" + lower(fk.name), std::move(s));
  }
  std::string s;
  if (!t.context.empty()) {
    s += " with context (";
    for (size_t i = 0; i < t.context.size(); ++i) {
      const ContextVariable& v = t.context[i];
      if (i) s += ", ";
      s += q(v.name);
      if (!v.type_name.empty()) s += " " + v.type_name;
      s += v.not_null ? " not null" : " null";
    }
    s += ")";
  }
  if (t.derivation) {
    // A maintained table: its body (and its explicit rename list) ride the table form,
    // the one canonical rendering of every materialized view (materialized-views.md).
    s += " maintained";
    if (!t.derivation->columns.empty()) {
      s += " (";
      for (size_t i = 0; i < t.derivation->columns.size(); ++i) s += (i ? ", " : "") + q(t.derivation->columns[i]);
      s += ")";
    }
    s += " as " + select_to_string(*t.derivation->body);
  }
  s += tags_clause(t.tags);
  out.emplace_back("tail", std::move(s));
  for (const IndexSchema& ix : t.indexes)
    if (!ix.constraint) out.emplace_back("idx:" + lower(ix.name), create_index_ddl(t, ix));
  return out;
}

std::string create_table_ddl(const TableSchema& t) {
  std::string s = "create table " + q(t.schema_name) + "." + q(t.name) + " (", tail;
  bool first = true;
  for (auto& [object, text] : table_objects(t)) {
    if (object == "tail") tail = text;
    if (object == "tail" || object.starts_with("idx:") || text.empty()) continue;
    s += (first ? "" : ", ") + text;
    first = false;
  }
  s += ") using " + q(t.module_name);
  if (!t.module_options.empty()) {
    s += "(";
    for (size_t i = 0; i < t.module_options.size(); ++i) {
      if (i) s += ", ";
      s += q(t.module_options[i].first) + " = " + sql_literal(t.module_options[i].second);
    }
    s += ")";
  }
  return s + tail;
}

std::string create_index_ddl(const TableSchema& t, const IndexSchema& ix) {
  std::string s = std::string("create ") + (ix.unique ? "unique " : "") + "index " + q(t.schema_name) + "." + q(ix.name) +
                  " on " + q(t.name) + " (";
  for (size_t i = 0; i < ix.columns.size(); ++i) {
    if (i) s += ", ";
    const IndexColumn& c = ix.columns[i];
    s += q(t.columns[c.column].name);
    if (c.collation) s += " collate " + q(lower(c.collation->name()));
    if (c.desc) s += " desc";
  }
  s += ")";
  if (ix.where) s += " where " + expr_to_sql(*ix.where);
  return s + tags_clause(ix.tags);
}

std::string table_bundle(const TableSchema& t) {
  std::string s = create_table_ddl(t);
  for (const IndexSchema& ix : t.indexes) {
    if (!ix.constraint) s += ";\n" + create_index_ddl(t, ix);
    else if (std::string tags = tags_clause(ix.exposed_index_tags); !tags.empty())
      // The exposed structure's own tags: " with tags (…)" as " set tags (…)".
      s += ";\nalter index " + q(t.schema_name) + "." + q(ix.name) + " set" + tags.substr(5);
  }
  return s;
}

}  // namespace quereus
