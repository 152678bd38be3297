// Metadata tags (see tags.h): the reserved-tag registry, the catalog form of a tag list
// and the catalog-only tag verbs.
#include "ddl/tags.h"

#include "catalog/derivation.h"

#include "catalog/ddl_names.h"

#include <algorithm>
#include <array>
#include <vector>

#include "common/status.h"
#include "ddl/ddl_context.h"
#include "parser/ast_printer.h"
#include "planner/scalar_expr.h"
#include "catalog/catalog.h"
#include "catalog/reserved_tags.h"

namespace quereus {

namespace {

// A tag value (the parser admits only literals, optionally signed numbers).
TagValue literal_tag(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::kUnary) {
    const auto& u = static_cast<const ast::UnaryExpr&>(e);
    TagValue v = literal_tag(*u.operand);
    if (u.op == ast::UnaryOp::kNegate) {
      if (auto* i = std::get_if<int64_t>(&v)) return *i == INT64_MIN ? TagValue(-static_cast<double>(*i)) : TagValue(-*i);
      if (auto* d = std::get_if<double>(&v)) return -*d;
    }
    return v;
  }
  if (e.kind != ast::ExprKind::kLiteral)
    throw Error(StatusCode::kError, "Tag values must be literals (string, number, TRUE, FALSE, or NULL)", e.site);
  const auto& l = static_cast<const ast::Literal&>(e);
  switch (l.literal_kind) {
    case ast::LiteralKind::kNull: return std::monostate{};
    case ast::LiteralKind::kTrue: return true;
    case ast::LiteralKind::kFalse: return false;
    case ast::LiteralKind::kString: return l.text;
    case ast::LiteralKind::kInteger:
    case ast::LiteralKind::kReal: {
      Value v = parse_number(l.text, false);
      if (v.type() == ValueType::kInteger) return v.as_int();
      if (v.type() == ValueType::kReal) return v.as_real();
      return l.text;
    }
    case ast::LiteralKind::kBlob: break;
  }
  throw Error(StatusCode::kError, "Tag values must be literals (string, number, TRUE, FALSE, or NULL)", e.site);
}

TagValue tag_of(const ast::NamedExpr& t) { return t.value ? literal_tag(*t.value) : TagValue(); }

void validate_column_sites(const ast::ColumnDef& cd) {
  validate_reserved_tags(cd.tags, TagSite::kPhysicalColumn);
  for (const ast::ColumnConstraint& c : cd.constraints) validate_reserved_tags(c.tags, TagSite::kPhysicalConstraint);
}

// The constraint of `ts` a named-constraint tag verb addresses (CHECK, then UNIQUE,
// then FOREIGN KEY): its tag slot, or NOTFOUND / ambiguous.
TagSet& constraint_tags(TableSchema& ts, const std::string& name) {
  std::vector<std::pair<const char*, TagSet*>> hits;
  for (CheckSchema& ck : ts.checks)
    if (ck.named && iequals(ck.name, name)) {
      hits.emplace_back("CHECK", &ck.tags);
      break;
    }
  for (IndexSchema& ix : ts.indexes)
    if (ix.constraint && ix.constraint_named && iequals(ix.name, name)) {
      hits.emplace_back("UNIQUE", &ix.tags);
      break;
    }
  for (ForeignKeySchema& fk : ts.foreign_keys)
    if (iequals(fk.name, name)) {
      hits.emplace_back("FOREIGN KEY", &fk.tags);
      break;
    }
  if (hits.empty())
    throw Error(StatusCode::kNotFound, "Constraint '" + name + "' not found on table '" + ts.name + "'");
  if (hits.size() > 1) {
    std::string kinds;
    for (size_t i = 0; i < hits.size(); ++i) kinds += std::string(i ? " and " : "") + hits[i].first;
    throw Error(StatusCode::kError, "Constraint name '" + name + "' is ambiguous on table '" + ts.name +
                                        "': it names a " + kinds + " constraint");
  }
  return *hits.front().second;
}

std::string resolve_schema(const ast::QualifiedName& n) { return n.schema.empty() ? "" : to_lower(n.schema); }

}  // namespace

void validate_reserved_tags(const ast::TagList& tags, TagSite site) {
  for (const ast::NamedExpr& t : tags) {
    if (t.name.compare(0, 8, "quereus.") != 0) continue;
    const TagValue value = tag_of(t);
    validate_reserved_tag(t.name, t.value ? &value : nullptr, site, t.site);
  }
}

TagSet tag_set(const ast::TagList& tags) {
  TagSet out;
  for (const ast::NamedExpr& t : tags) out.set(t.name, tag_of(t));
  return out;
}

namespace {

TagSet apply_verb(const TagSet& current, ast::TagVerb verb, const ast::TagList& tags, const std::string& what);

}  // namespace

// The engine's own tag (quereus.mv.stale: a maintained table a source ALTER left stale)
// is not the tag verbs' to set or remove: only REFRESH removes it.
TagSet apply_tag_verb(const TagSet& current, ast::TagVerb verb, const ast::TagList& tags, const std::string& what) {
  TagSet out = apply_verb(current, verb, tags, what);
  out.erase(kStaleTag);
  if (const TagValue* v = current.find(kStaleTag)) out.set(std::string(kStaleTag), *v);
  return out;
}

namespace {

TagSet apply_verb(const TagSet& current, ast::TagVerb verb, const ast::TagList& tags, const std::string& what) {
  switch (verb) {
    case ast::TagVerb::kSet: return tag_set(tags);
    case ast::TagVerb::kAdd: {
      TagSet out = current;
      for (const ast::NamedExpr& t : tags) out.set(t.name, tag_of(t));
      return out;
    }
    case ast::TagVerb::kDrop: {
      std::string missing;
      for (const ast::NamedExpr& t : tags)
        if (!current.contains(t.name) && missing.find("'" + t.name + "'") == std::string::npos)
          missing += (missing.empty() ? "'" : ", '") + t.name + "'";
      if (!missing.empty())
        throw Error(StatusCode::kNotFound, "Cannot drop tags from " + what + ": tag " + missing + " not found");
      TagSet out = current;
      for (const ast::NamedExpr& t : tags) out.erase(t.name);
      return out;
    }
  }
  return current;
}

}  // namespace

bool exposes_implicit_index(const IndexSchema& ix) {
  return ix.constraint && ix.tags.is_true("quereus.expose_implicit_index");
}

void validate_create_table_tags(const ast::CreateTableStmt& s) {
  validate_reserved_tags(s.tags, TagSite::kPhysicalTable);
  for (const ast::ColumnDef& cd : s.columns) validate_column_sites(cd);
  for (const ast::TableConstraint& tc : s.constraints) validate_reserved_tags(tc.tags, TagSite::kPhysicalConstraint);
}

void attach_create_table_tags(const ast::CreateTableStmt& s, TableSchema& ts) {
  using CK = ast::ColumnConstraint::Kind;
  using TK = ast::TableConstraint::Kind;
  ts.tags = tag_set(s.tags);
  // CREATE TABLE adds CHECKs, FOREIGN KEYs and UNIQUEs column by column, then the
  // table-level ones, each in declaration order: walk the statement the same way.
  size_t check = 0, fk = 0, unique = 0;
  auto put = [](auto& list, size_t& next, const ast::TagList& tags) {
    if (next < list.size()) list[next].tags = tag_set(tags);
    ++next;
  };
  for (size_t i = 0; i < s.columns.size() && i < ts.columns.size(); ++i) {
    const ast::ColumnDef& cd = s.columns[i];
    ts.columns[i].tags = tag_set(cd.tags);
    for (const ast::ColumnConstraint& c : cd.constraints) {
      if (c.kind == CK::kCheck) put(ts.checks, check, c.tags);
      if (c.kind == CK::kForeignKey) put(ts.foreign_keys, fk, c.tags);
      if (c.kind == CK::kPrimaryKey) ts.primary_key_tags = tag_set(c.tags);
    }
  }
  for (const ast::ColumnDef& cd : s.columns)
    for (const ast::ColumnConstraint& c : cd.constraints)
      if (c.kind == CK::kUnique) put(ts.indexes, unique, c.tags);
  for (const ast::TableConstraint& tc : s.constraints) {
    if (tc.kind == TK::kCheck) put(ts.checks, check, tc.tags);
    if (tc.kind == TK::kForeignKey) put(ts.foreign_keys, fk, tc.tags);
    if (tc.kind == TK::kUnique) put(ts.indexes, unique, tc.tags);
    if (tc.kind == TK::kPrimaryKey) ts.primary_key_tags = tag_set(tc.tags);
  }
}

void validate_column_tags(const ast::ColumnDef& cd) { validate_column_sites(cd); }

bool tags_drift(const TagSet& live, const ast::TagList& declared) {
  TagSet a = live, b = tag_set(declared);
  for (std::string_view hint : {std::string_view("quereus.id"), std::string_view("quereus.previous_name"), kStaleTag}) {
    a.erase(hint);
    b.erase(hint);
  }
  return a != b;
}

void attach_column_tags(const ast::ColumnDef& cd, TableSchema& ts, int column) {
  ts.columns[column].tags = tag_set(cd.tags);
  for (const ast::ColumnConstraint& c : cd.constraints) {
    if (c.name.empty() || c.tags.empty()) continue;
    TagSet set = tag_set(c.tags);
    using CK = ast::ColumnConstraint::Kind;
    if (c.kind == CK::kCheck)
      for (CheckSchema& ck : ts.checks)
        if (iequals(ck.name, c.name)) ck.tags = set;
    if (c.kind == CK::kForeignKey)
      for (ForeignKeySchema& fk : ts.foreign_keys)
        if (iequals(fk.name, c.name)) fk.tags = set;
    if (c.kind == CK::kUnique)
      for (IndexSchema& ix : ts.indexes)
        if (ix.constraint && iequals(ix.name, c.name)) ix.tags = set;
  }
}

void alter_table_tags(DdlContext& db, TableEntry& table, const ast::AlterTableStmt& s) {
  using Target = ast::AlterTableStmt::TagTarget;
  TableSchema& ts = table.schema;
  TagSite site = s.tag_target == Target::kTable    ? TagSite::kPhysicalTable
                 : s.tag_target == Target::kColumn ? TagSite::kPhysicalColumn
                                                   : TagSite::kPhysicalConstraint;
  if (s.tag_verb != ast::TagVerb::kDrop) validate_reserved_tags(s.tags, site);
  TagSet* slot = &ts.tags;
  std::string what = "table '" + ts.name + "'";
  if (s.tag_target == Target::kColumn) {
    int idx = ts.find_column(s.name);
    if (idx < 0) throw Error(StatusCode::kNotFound, "Column '" + s.name + "' not found in table '" + ts.name + "'");
    slot = &ts.columns[idx].tags;
    what = "column '" + ts.columns[idx].name + "' of table '" + ts.name + "'";
  } else if (s.tag_target == Target::kConstraint) {
    slot = &constraint_tags(ts, s.name);
    what = "constraint '" + s.name + "' of table '" + ts.name + "'";
  }
  *slot = apply_tag_verb(*slot, s.tag_verb, s.tags, what);
  db.bump_schema_version();
  db.persist_table(table);
}

void alter_object_tags(DdlContext& db, const ast::AlterTagsStmt& s, DdlOrigin origin) {
  const std::string given = resolve_schema(s.name);
  std::vector<std::string> schemas = ddl_lookup_schemas(given);
  switch (s.object) {
    case ast::ObjectKind::kView: {
      if (s.verb != ast::TagVerb::kDrop) validate_reserved_tags(s.tags, TagSite::kViewDdl);
      std::shared_ptr<const ViewEntry> view;
      for (const std::string& schema : schemas)
        if (!view) view = db.catalog().find_view(schema, s.name.name);
      if (!view) throw Error(StatusCode::kNotFound, "View '" + s.name.name + "' not found", s.name.site);
      if (view->lens)
        throw Error(StatusCode::kError,
                    "'" + s.name.name + "' is a logical table: its tags are declared in its logical schema",
                    s.name.site);
      auto changed = std::make_shared<ViewEntry>(*view);
      changed->tags = apply_tag_verb(view->tags, s.verb, s.tags, "view '" + view->name + "'");
      if (origin == DdlOrigin::kStatement) db.persist_view(*changed);
      db.catalog().remove_view(view->schema_name, view->name);
      db.catalog().add_view(std::move(changed));
      break;
    }
    case ast::ObjectKind::kMaterializedView: {
      // A materialized view is a maintained table: its tags are the table's.
      if (s.verb != ast::TagVerb::kDrop) validate_reserved_tags(s.tags, TagSite::kViewDdl);
      std::shared_ptr<TableEntry> table;
      for (const std::string& schema : schemas)
        if (!table) table = db.catalog().find(schema, s.name.name);
      if (!table || !table->schema.derivation)
        throw Error(StatusCode::kNotFound, "Materialized view '" + s.name.name + "' not found", s.name.site);
      table->schema.tags =
          apply_tag_verb(table->schema.tags, s.verb, s.tags, "materialized view '" + table->schema.name + "'");
      db.bump_schema_version();
      if (origin == DdlOrigin::kStatement) db.persist_table(*table);
      break;
    }
    case ast::ObjectKind::kIndex: {
      if (s.verb != ast::TagVerb::kDrop) validate_reserved_tags(s.tags, TagSite::kPhysicalIndex);
      // Tag-addressable: CREATE INDEX indexes and exposed constraint structures; a
      // hidden one's tags live on its constraint (ALTER TABLE … ALTER CONSTRAINT).
      for (const std::string& schema : schemas)
        for (const auto& t : db.catalog().tables()) {
          if (t->schema.schema_name != schema) continue;
          for (IndexSchema& ix : t->schema.indexes) {
            if (!iequals(ix.name, s.name.name) || (ix.constraint && !exposes_implicit_index(ix))) continue;
            TagSet& slot = ix.constraint ? ix.exposed_index_tags : ix.tags;
            slot = apply_tag_verb(slot, s.verb, s.tags, "index '" + ix.name + "'");
            db.bump_schema_version();
            if (origin == DdlOrigin::kStatement) db.persist_table(*t);
            return;
          }
        }
      throw Error(StatusCode::kNotFound, "Index '" + s.name.name + "' not found", s.name.site);
    }
    case ast::ObjectKind::kTable:
    case ast::ObjectKind::kAssertion:
      throw Error(StatusCode::kInternal, "ALTER … TAGS on an unexpected object kind", s.site);
  }
  db.bump_schema_version();
}

}  // namespace quereus
