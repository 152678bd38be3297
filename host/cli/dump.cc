// .dump: schema from schema_ddl(), rows from SELECT *, as one transaction.
#include "cli/dump.h"

#include <strings.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

#include "parser/lexer.h"

namespace quereus {

namespace {

Status each_row(Database& db, const std::string& sql, const std::function<void(const Row&)>& f) {
  std::vector<std::unique_ptr<Statement>> stmts;
  Status s = db.prepare(sql, &stmts);
  for (auto& st : stmts)
    for (bool has = true; s.ok() && (s = st->step(&has)).ok() && has;) f(st->row());
  return s;
}

bool named(const std::vector<std::string>& tables, const std::string& name) {
  if (tables.empty()) return true;
  return std::any_of(tables.begin(), tables.end(),
                     [&](const std::string& t) { return strcasecmp(t.c_str(), name.c_str()) == 0; });
}

struct Object {
  std::string schema, type, name, table, ddl;
};

// Views and materialized views in an order where each comes after those it names (the
// names its DDL's identifiers spell); what cannot be ordered keeps its place at the end.
std::vector<const Object*> in_dependency_order(const std::vector<const Object*>& objects) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::vector<std::set<size_t>> needs(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    std::set<std::string> words;
    try {
      for (const Token& t : Lexer::tokenize(objects[i]->ddl))
        if (t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kQuotedIdentifier) words.insert(lower(t.text));
    } catch (const Error&) {
    }
    for (size_t j = 0; j < objects.size(); ++j)
      if (j != i && words.count(lower(objects[j]->name))) needs[i].insert(j);
  }
  std::vector<const Object*> out;
  std::vector<bool> done(objects.size(), false);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < objects.size(); ++i) {
      if (done[i]) continue;
      bool ready = true;
      for (size_t j : needs[i]) ready = ready && done[j];
      if (ready) {
        out.push_back(objects[i]);
        done[i] = true;
        progress = true;
      }
    }
  }
  for (size_t i = 0; i < objects.size(); ++i)
    if (!done[i]) out.push_back(objects[i]);
  return out;
}

}  // namespace

std::string quote_name(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string dump_literal(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return "null";
    case ValueType::kInteger: return std::to_string(v.as_int());
    case ValueType::kBigInt: return v.str();
    case ValueType::kBoolean: return v.as_bool() ? "true" : "false";
    case ValueType::kReal: {
      const double d = v.as_real();
      if (std::isnan(d)) return "(0.0 / 0.0)";
      if (std::isinf(d)) return d > 0 ? "1e999" : "-1e999";
      if (d == 0 && std::signbit(d)) return "-0.0";
      std::string s = format_real(d);
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
    case ValueType::kText:
    case ValueType::kJson: {
      std::string s = "'";
      for (char c : v.str()) s += c == '\'' ? std::string("''") : std::string(1, c);
      return s + "'";
    }
    case ValueType::kBlob: {
      static const char* kHex = "0123456789abcdef";
      std::string s = "x'";
      for (unsigned char c : v.str()) s += {kHex[c >> 4], kHex[c & 15]};
      return s + "'";
    }
  }
  return "null";
}

Status write_dump(Database& db, const std::vector<std::string>& tables, std::ostream& out) {
  std::vector<Object> objects;
  Status s = each_row(db, "select schema, type, name, tbl_name, ddl from schema_ddl()", [&](const Row& r) {
    objects.push_back({r[0].to_text(), r[1].to_text(), r[2].to_text(), r[3].to_text(), r[4].to_text()});
  });
  if (!s.ok()) return s;
  bool fk_on = true;
  (void)each_row(db, "pragma foreign_keys", [&](const Row& r) {
    if (!r.empty()) fk_on = r[0].type() == ValueType::kBoolean ? r[0].as_bool() : r[0].to_text() != "0";
  });
  out << "-- Quereus dump: run with `quereus FILE` or `.read FILE`\n";
  out << "pragma foreign_keys = off;\nbegin;\n";
  auto keep = [&](const Object& o) {
    if (o.schema == "temp") return false;
    if (tables.empty()) return true;
    return (o.type == "table" || o.type == "index") && named(tables, o.table);
  };
  for (const Object& o : objects)
    if (o.type == "table" && keep(o)) out << o.ddl << ";\n";
  for (const Object& o : objects) {
    if (o.type != "table" || !keep(o)) continue;
    // Generated columns are computed again: only the stored ones are written.
    std::vector<std::string> columns;
    const std::string qualified = quote_name(o.schema) + "." + quote_name(o.name);
    s = each_row(db, "select name, \"generated\" from table_info(" + dump_literal(Value::Text(o.schema + "." + o.name)) + ")",
                 [&](const Row& r) {
                   if (r[1].as_int() == 0) columns.push_back(quote_name(r[0].to_text()));
                 });
    if (!s.ok()) return s;
    std::string list;
    for (const std::string& c : columns) list += (list.empty() ? "" : ", ") + c;
    const std::string head = "insert into " + qualified + " (" + list + ") values (";
    s = each_row(db, "select " + list + " from " + qualified, [&](const Row& r) {
      out << head;
      for (size_t i = 0; i < r.size(); ++i) out << (i ? ", " : "") << dump_literal(r[i]);
      out << ");\n";
    });
    if (!s.ok()) return s;
  }
  auto emit = [&](const Object& o) { out << o.ddl << (o.ddl.empty() || o.ddl.back() != ';' ? ";\n" : "\n"); };
  for (const Object& o : objects)
    if (o.type == "index" && keep(o)) emit(o);
  std::vector<const Object*> views;
  for (const Object& o : objects)
    if ((o.type == "view" || o.type == "materialized_view") && keep(o)) views.push_back(&o);
  for (const Object* o : in_dependency_order(views)) emit(*o);
  for (const std::string type : {"assertion", "declaration", "lens", "apply"})
    for (const Object& o : objects)
      if (o.type == type && keep(o)) emit(o);
  out << "commit;\n";
  if (fk_on) out << "pragma foreign_keys = on;\n";
  out.flush();
  return Status::Ok();
}

}  // namespace quereus
