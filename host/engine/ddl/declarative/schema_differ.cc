#include "ddl/declarative/schema_differ.h"

#include <memory>
#include <optional>
#include <utility>

#include "common/status.h"
#include "catalog/registry.h"
#include "ddl/ddl_context.h"
#include "ddl/ddl_common.h"
#include "parser/ast_clone.h"
#include "parser/ast_printer.h"
#include "planner/scalar_expr.h"

namespace quereus {
namespace {

// The canonical text of an ALTER TABLE action, without its `alter table <t> ` head.
std::string action_text(ast::AlterTableStmt& a) {
  a.table = {};
  a.table.name = "x";
  std::string text = statement_to_string(a);
  static const std::string kHead = "alter table x ";
  return text.substr(kHead.size());
}

using Action = ast::AlterTableStmt::Action;
using ColumnAction = ast::AlterTableStmt::ColumnAction;

std::unique_ptr<ast::AlterTableStmt> alter(Action action, std::string name = {}) {
  auto a = std::make_unique<ast::AlterTableStmt>();
  a->action = action;
  a->name = std::move(name);
  return a;
}

std::unique_ptr<ast::AlterTableStmt> alter_column_step(const std::string& column, ColumnAction what) {
  auto a = alter(Action::kAlterColumn, column);
  a->column_action = what;
  return a;
}

std::string conflict_sig(std::optional<qrs_conflict> c) { return c ? std::to_string(static_cast<int>(*c)) : "-"; }

std::optional<qrs_conflict> conflict_of(ast::ConflictClause c) {
  if (c == ast::ConflictClause::kNone) return std::nullopt;
  return declared_conflict(c);
}

// A declared column as the catalog would hold it.
struct DeclaredColumn {
  ast::ColumnDef* def = nullptr;
  bool not_null = true;
  std::string collation;  // upper-case, resolved as CREATE TABLE resolves it
  ast::Expr* default_expr = nullptr;
  const ast::ColumnConstraint* generated = nullptr;
  std::optional<qrs_conflict> not_null_conflict;
};

// A UNIQUE, CHECK or FOREIGN KEY constraint, declared or live, with the definition it
// is compared by.
struct Constraint {
  char kind = 'u';   // 'u' UNIQUE, 'c' CHECK, 'f' FOREIGN KEY
  std::string name;  // declared: "" when unnamed; live: its (possibly minted) name
  bool named = false;
  std::string sig;
  MigrationStep add;  // declared: the ADD action
  bool matched = false;
};

class TableDiffer {
 public:
  TableDiffer(DdlContext& db, const TableSchema& live, const ast::CreateTableStmt& decl, RenamePolicy policy)
      : db_(db), live_(live), decl_(decl), policy_(policy) {}

  TableMigration run() {
    // A private copy of the declaration: constraints are moved out of it into ALTERs.
    own_ = std::unique_ptr<ast::CreateTableStmt>(static_cast<ast::CreateTableStmt*>(ast::clone(decl_).release()));
    check_table_level();
    resolve_columns();
    std::vector<MigrationStep> rename_columns, add_columns, alter_columns, drop_columns;
    // Hinted renames first: RENAME COLUMN <old> TO <declared>; from then on the live
    // column is compared under its new name.
    if (policy_ != RenamePolicy::kDeny)
      for (DeclaredColumn& dc : columns_) {
        if (live_.find_column(dc.def->name) >= 0) continue;
        int idx = hinted_column(dc);
        if (idx < 0) continue;
        auto a = alter(Action::kRenameColumn, live_.columns[idx].name);
        a->new_name = dc.def->name;
        rename_columns.push_back({std::move(a), "RENAME COLUMN " + quote_identifier(live_.columns[idx].name) + " TO " +
                                                    quote_identifier(dc.def->name)});
        live_.columns[idx].name = dc.def->name;
      }
    for (DeclaredColumn& dc : columns_) {
      int idx = live_.find_column(dc.def->name);
      if (idx < 0) {
        add_columns.push_back(add_column(dc));
      } else {
        alter_column(dc, live_.columns[idx], alter_columns);
      }
    }
    for (const ColumnSchema& lc : live_.columns)
      if (!declared_column(lc.name))
        drop_columns.push_back({alter(Action::kDropColumn, lc.name), "DROP COLUMN " + quote_identifier(lc.name)});
    if (policy_ == RenamePolicy::kRequireHint && !add_columns.empty() && !drop_columns.empty())
      throw Error(StatusCode::kError,
                  "rename_policy = 'require-hint': table '" + live_.schema_name + "." + live_.name +
                      "' would drop column '" + drop_columns.front().stmt->name + "' and add column '" +
                      add_columns.front().stmt->column->name +
                      "'; mark a rename with a \"quereus.previous_name\" or \"quereus.id\" tag",
                  decl_.site);
    std::vector<MigrationStep> drop_constraints, add_constraints;
    diff_constraints(drop_constraints, add_constraints);
    TableMigration m;
    auto append = [&](std::vector<MigrationStep>& v) {
      for (auto& a : v) m.actions.push_back(std::move(a));
    };
    append(rename_columns);
    append(add_columns);
    append(alter_columns);
    append(drop_constraints);
    if (auto pk = primary_key_action()) m.actions.push_back(std::move(*pk));
    append(add_constraints);
    append(drop_columns);
    m.readded = std::move(readded_);
    return m;
  }

 private:
  [[noreturn]] void refuse(const std::string& what) const {
    throw Error(StatusCode::kUnsupported,
                "Table '" + live_.schema_name + "." + live_.name + "' differs from its declaration in " + what +
                    ", which the declarative schema differ cannot migrate yet",
                decl_.site);
  }

  void check_table_level() {
    const std::string module = own_->module_name.empty() ? db_.options().default_vtab_module : own_->module_name;
    if (!iequals(module, live_.module_name))
      refuse("its module ('" + live_.module_name + "' is declared as '" + module + "')");
    // (A MAINTAINED AS body is the derivation: declared_schema.cc compares it and emits the
    // attach / re-attach / detach around these column steps.)
    bool context_same = own_->context.size() == live_.context.size();
    for (size_t i = 0; context_same && i < own_->context.size(); ++i)
      context_same = iequals(own_->context[i].name, live_.context[i].name) &&
                     iequals(own_->context[i].type_name, live_.context[i].type_name);
    if (!context_same) refuse("its WITH CONTEXT variables");
  }

  // The live column a declared column renames: the one carrying its "quereus.id", else
  // the first live name of its "quereus.previous_name" list not declared itself; -1.
  int hinted_column(const DeclaredColumn& dc) const {
    if (std::optional<std::string> id = rename_hint_id(dc.def->tags)) {
      for (size_t i = 0; i < live_.columns.size(); ++i) {
        const TagValue* v = live_.columns[i].tags.find("quereus.id");
        if (v && std::holds_alternative<std::string>(*v) && std::get<std::string>(*v) == *id)
          return declared_column(live_.columns[i].name) ? -1 : static_cast<int>(i);
      }
    }
    for (const std::string& old : rename_hint_names(dc.def->tags)) {
      int idx = live_.find_column(old);
      if (idx >= 0 && !declared_column(live_.columns[idx].name)) return idx;
    }
    return -1;
  }

  const DeclaredColumn* declared_column(const std::string& name) const {
    for (const DeclaredColumn& dc : columns_)
      if (iequals(dc.def->name, name)) return &dc;
    return nullptr;
  }

  std::string resolved_collation(const std::string& written, const std::string& type_name) const {
    if (!written.empty()) {
      auto coll = db_.registry().find_collation(written);
      if (!coll) throw Error(StatusCode::kError, "Unknown collation: " + written, decl_.site);
      return coll->name();
    }
    if (logical_type_from_name(type_name) == QRS_LT_TEXT) {
      auto coll = db_.registry().find_collation(db_.options().default_collation);
      if (coll) return coll->name();
    }
    return "BINARY";
  }

  void resolve_columns() {
    for (ast::ColumnDef& cd : own_->columns) {
      DeclaredColumn dc;
      dc.def = &cd;
      dc.not_null = !db_.options().default_nullable;
      std::string written_collation;
      for (ast::ColumnConstraint& c : cd.constraints) {
        using K = ast::ColumnConstraint::Kind;
        switch (c.kind) {
          case K::kNotNull:
            dc.not_null = true;
            dc.not_null_conflict = conflict_of(c.on_conflict);
            break;
          case K::kNull: dc.not_null = false; break;
          case K::kDefault: dc.default_expr = c.expr.get(); break;
          case K::kCollate: written_collation = c.collation; break;
          case K::kGenerated: dc.generated = &c; break;
          case K::kPrimaryKey:
            pk_declared_ = true;
            declared_pk_.push_back({cd.name, c.desc});
            pk_conflict_ = conflict_of(c.on_conflict);
            break;
          default: break;
        }
      }
      dc.collation = resolved_collation(written_collation, cd.type_name);
      columns_.push_back(dc);
    }
    for (const ast::TableConstraint& tc : own_->constraints) {
      if (tc.kind != ast::TableConstraint::Kind::kPrimaryKey) continue;
      pk_declared_ = true;  // `primary key ()` too: a singleton table, keyed on nothing
      for (const ast::IndexedColumn& ic : tc.columns) declared_pk_.push_back({ic.name, ic.desc});
      pk_conflict_ = conflict_of(tc.on_conflict);
    }
  }

  // ADD COLUMN, with the column's inline constraints (its PRIMARY KEY membership is the
  // ALTER PRIMARY KEY step's).
  MigrationStep add_column(DeclaredColumn& dc) {
    auto a = alter(Action::kAddColumn);
    a->column = std::make_unique<ast::ColumnDef>();
    a->column->name = dc.def->name;
    a->column->type_name = dc.def->type_name;
    a->column->tags = std::move(dc.def->tags);
    for (ast::ColumnConstraint& c : dc.def->constraints)
      if (c.kind != ast::ColumnConstraint::Kind::kPrimaryKey) a->column->constraints.push_back(std::move(c));
    dc.def->constraints.clear();  // moved: the constraint diff skips added columns
    dc.default_expr = nullptr;
    added_.insert(to_lower(dc.def->name));
    static const std::string kHead = "add column ";
    std::string text = "ADD COLUMN " + action_text(*a).substr(kHead.size());
    return {std::move(a), std::move(text)};
  }

  std::string default_text(const ast::Expr& e) {
    ast::AlterTableStmt a;
    a.action = ast::AlterTableStmt::Action::kAlterColumn;
    a.column_action = ast::AlterTableStmt::ColumnAction::kSetDefault;
    a.name = "c";
    a.default_value = ast::clone(e);
    static const std::string kHead = "alter column c set default ";
    return action_text(a).substr(kHead.size());
  }

  // ALTER COLUMN steps, ordered so each is legal when it runs: a replaced or dropped
  // default goes before a retype (a default only the old type holds must not veto it),
  // the collation moves on whichever side of the retype keeps it legal (BINARY first
  // when leaving text, the new collation after becoming text), a loosened NOT NULL goes
  // first and a tightened one last (its backfill reads the new default).
  void alter_column(DeclaredColumn& dc, const ColumnSchema& lc, std::vector<MigrationStep>& out) {
    const std::string head = "ALTER COLUMN " + quote_identifier(lc.name) + " ";
    if (!iequals(lc.name, dc.def->name)) {
      // Same column, different casing: there is no case-only rename step yet.
      refuse("the casing of column '" + lc.name + "' (declared '" + dc.def->name + "')");
    }
    const bool generated_same =
        (dc.generated == nullptr) == (lc.generated_expr == nullptr) &&
        (!dc.generated || (expr_to_sql(*dc.generated->expr) == expr_to_sql(*lc.generated_expr) &&
                           dc.generated->generated_stored == lc.generated_stored));
    if (!generated_same) refuse("the generated expression of column '" + lc.name + "'");
    if (dc.not_null && lc.not_null && conflict_sig(dc.not_null_conflict) != conflict_sig(lc.not_null_conflict))
      refuse("the NOT NULL ON CONFLICT action of column '" + lc.name + "'");
    const bool retype = !iequals(dc.def->type_name, lc.type_name);
    const std::string declared_default = dc.default_expr ? expr_to_sql(*dc.default_expr) : "";
    const std::string live_default = lc.default_expr ? expr_to_sql(*lc.default_expr) : "";
    const bool default_changes = (dc.default_expr != nullptr) != (lc.default_expr != nullptr) ||
                                 declared_default != live_default;
    const bool collation_changes = !iequals(dc.collation, lc.collation->name());
    auto step = [&](ColumnAction what, const std::string& text) -> ast::AlterTableStmt& {
      out.push_back({alter_column_step(lc.name, what), head + text});
      return *out.back().stmt;
    };
    auto set_collate = [&] { step(ColumnAction::kSetCollate, "SET COLLATE " + dc.collation).collation = dc.collation; };
    if (!dc.not_null && lc.not_null) step(ColumnAction::kDropNotNull, "DROP NOT NULL");
    if (default_changes && lc.default_expr && (retype || !dc.default_expr)) step(ColumnAction::kDropDefault, "DROP DEFAULT");
    const bool becomes_text = logical_type_from_name(dc.def->type_name) == QRS_LT_TEXT;
    if (collation_changes && !(retype && becomes_text)) set_collate();
    if (retype) step(ColumnAction::kSetDataType, "SET DATA TYPE " + dc.def->type_name).type_name = dc.def->type_name;
    if (collation_changes && retype && becomes_text) set_collate();
    if (default_changes && dc.default_expr)
      step(ColumnAction::kSetDefault, "SET DEFAULT " + default_text(*dc.default_expr)).default_value =
          ast::clone(*dc.default_expr);
    if (dc.not_null && !lc.not_null) step(ColumnAction::kSetNotNull, "SET NOT NULL");
  }

  // ---------------------------------------------------------------- constraints

  std::string fk_sig(const std::vector<std::string>& cols, const std::string& ref_schema, const std::string& ref_table,
                     const std::vector<std::string>& ref_cols, ReferentialAction on_update,
                     ReferentialAction on_delete, bool deferred) const {
    std::string sig = "f(";
    for (const auto& c : cols) sig += to_lower(c) + ",";
    sig += ")" + to_lower(ref_schema) + "." + to_lower(ref_table) + "(";
    for (const auto& c : ref_cols) sig += to_lower(c) + ",";
    return sig + ")" + referential_action_name(on_update) + "/" + referential_action_name(on_delete) +
           (deferred ? "/deferred" : "");
  }

  std::string check_sig(const std::string& expr, bool ins, bool upd, bool del, std::optional<qrs_conflict> c) const {
    return std::string("c(") + expr + ")" + (ins ? "i" : "") + (upd ? "u" : "") + (del ? "d" : "") + conflict_sig(c);
  }

  Constraint declared_constraint(ast::TableConstraint tc) {
    Constraint c;
    c.name = tc.name;
    c.named = !tc.name.empty();
    using K = ast::TableConstraint::Kind;
    if (tc.kind == K::kUnique) {
      c.kind = 'u';
      c.sig = "u(";
      for (const ast::IndexedColumn& ic : tc.columns) {
        const DeclaredColumn* dc = declared_column(ic.name);
        std::string coll = ic.collation.empty() ? (dc ? dc->collation : "BINARY") : resolved_collation(ic.collation, "");
        c.sig += to_lower(ic.name) + (ic.desc ? " desc " : " ") + coll + ",";
      }
      c.sig += ")" + conflict_sig(conflict_of(tc.on_conflict));
    } else if (tc.kind == K::kCheck) {
      c.kind = 'c';
      bool ins = tc.check_on.empty(), upd = tc.check_on.empty(), del = false;
      for (ast::RowOp op : tc.check_on) {
        if (op == ast::RowOp::kInsert) ins = true;
        if (op == ast::RowOp::kUpdate) upd = true;
        if (op == ast::RowOp::kDelete) del = true;
      }
      c.sig = check_sig(expr_to_sql(*tc.expr), ins, upd, del, conflict_of(tc.on_conflict));
    } else {
      c.kind = 'f';
      std::vector<std::string> cols;
      for (const ast::IndexedColumn& ic : tc.columns) cols.push_back(ic.name);
      c.sig = fk_sig(cols, tc.fk_table.schema.empty() ? live_.schema_name : tc.fk_table.schema, tc.fk_table.name,
                     tc.fk_columns, referential_action(tc.fk_on_update), referential_action(tc.fk_on_delete),
                     tc.fk_deferral.initially == ast::FkDeferral::Initially::kDeferred);
    }
    auto a = alter(Action::kAddConstraint);
    a->constraint = std::make_unique<ast::TableConstraint>(std::move(tc));
    static const std::string kHead = "add ";
    c.add.text = "ADD " + action_text(*a).substr(kHead.size());
    c.add.stmt = std::move(a);
    return c;
  }

  std::vector<Constraint> declared_constraints() {
    std::vector<Constraint> out;
    using CK = ast::ColumnConstraint::Kind;
    for (ast::ColumnDef& cd : own_->columns) {
      if (added_.count(to_lower(cd.name))) continue;  // they come with ADD COLUMN
      for (ast::ColumnConstraint& cc : cd.constraints) {
        if (cc.kind != CK::kUnique && cc.kind != CK::kCheck && cc.kind != CK::kForeignKey) continue;
        ast::TableConstraint tc;
        tc.name = cc.name;
        tc.on_conflict = cc.on_conflict;
        tc.tags = std::move(cc.tags);
        tc.site = cc.site;
        if (cc.kind == CK::kUnique) {
          tc.kind = ast::TableConstraint::Kind::kUnique;
          tc.columns.push_back({cd.name, "", false});
        } else if (cc.kind == CK::kCheck) {
          tc.kind = ast::TableConstraint::Kind::kCheck;
          tc.expr = std::move(cc.expr);
          tc.check_on = cc.check_on;
        } else {
          tc.kind = ast::TableConstraint::Kind::kForeignKey;
          tc.columns.push_back({cd.name, "", false});
          tc.fk_table = cc.fk_table;
          tc.fk_columns = cc.fk_columns;
          tc.fk_on_delete = cc.fk_on_delete;
          tc.fk_on_update = cc.fk_on_update;
          tc.fk_deferral = cc.fk_deferral;
        }
        out.push_back(declared_constraint(std::move(tc)));
      }
    }
    for (ast::TableConstraint& tc : own_->constraints)
      if (tc.kind != ast::TableConstraint::Kind::kPrimaryKey) out.push_back(declared_constraint(std::move(tc)));
    return out;
  }

  std::vector<Constraint> live_constraints() const {
    std::vector<Constraint> out;
    for (const IndexSchema& ix : live_.indexes) {
      if (!ix.constraint) continue;
      Constraint c;
      c.kind = 'u';
      c.name = ix.name;
      c.named = ix.constraint_named;
      c.sig = "u(";
      for (const IndexColumn& col : ix.columns)
        c.sig += to_lower(live_.columns[col.column].name) + (col.desc ? " desc " : " ") +
                 (col.collation ? col.collation->name() : "BINARY") + ",";
      c.sig += ")" + conflict_sig(ix.on_conflict);
      out.push_back(std::move(c));
    }
    for (const CheckSchema& ck : live_.checks) {
      Constraint c;
      c.kind = 'c';
      c.name = ck.name;
      c.named = ck.named;
      c.sig = check_sig(expr_to_sql(*ck.expr), ck.on_insert, ck.on_update, ck.on_delete, ck.on_conflict);
      out.push_back(std::move(c));
    }
    for (const ForeignKeySchema& fk : live_.foreign_keys) {
      Constraint c;
      c.kind = 'f';
      c.name = fk.name;
      c.named = true;
      std::vector<std::string> cols;
      for (int idx : fk.columns) cols.push_back(live_.columns[idx].name);
      c.sig = fk_sig(cols, fk.referenced_schema, fk.referenced_table, fk.referenced_columns, fk.on_update,
                     fk.on_delete, fk.deferred);
      out.push_back(std::move(c));
    }
    return out;
  }

  // A named declared constraint pairs with the live one of its name (a changed definition
  // is dropped and re-added); an unnamed one pairs with any live constraint of the same
  // definition. Unpaired live constraints are dropped, unpaired declared ones added.
  void diff_constraints(std::vector<MigrationStep>& drops, std::vector<MigrationStep>& adds) {
    std::vector<Constraint> declared = declared_constraints();
    std::vector<Constraint> live = live_constraints();
    for (Constraint& d : declared) {
      if (!d.named) continue;
      for (Constraint& l : live) {
        if (l.matched || !iequals(l.name, d.name)) continue;
        if (l.kind == d.kind && l.sig == d.sig) {
          l.matched = d.matched = true;
        } else {
          readded_.insert(to_lower(d.name));
        }
        break;
      }
    }
    for (Constraint& d : declared) {
      if (d.named) continue;
      for (Constraint& l : live)
        if (!l.matched && l.kind == d.kind && l.sig == d.sig) {
          l.matched = d.matched = true;
          break;
        }
    }
    for (const Constraint& l : live) {
      if (l.matched) continue;
      drops.push_back({alter(Action::kDropConstraint, l.name), "DROP CONSTRAINT " + quote_identifier(l.name)});
    }
    for (Constraint& d : declared)
      if (!d.matched) adds.push_back(std::move(d.add));
  }

  // ALTER PRIMARY KEY when an explicitly declared key differs from the live one.
  std::optional<MigrationStep> primary_key_action() const {
    if (!pk_declared_) {
      if (live_.primary_key_declared)
        refuse("its PRIMARY KEY (declared without one; the live table keys on " + live_key_text() + ")");
      return std::nullopt;
    }
    if (live_.primary_key_declared && conflict_sig(pk_conflict_) != conflict_sig(live_.pk_conflict))
      refuse("its PRIMARY KEY ON CONFLICT action");
    bool same = live_.primary_key_declared && live_.primary_key.size() == declared_pk_.size();
    for (size_t i = 0; same && i < declared_pk_.size(); ++i)
      same = iequals(live_.columns[live_.primary_key[i].column].name, declared_pk_[i].first) &&
             live_.primary_key[i].desc == declared_pk_[i].second;
    if (same) return std::nullopt;
    auto a = alter(Action::kAlterPrimaryKey);
    std::string text = "ALTER PRIMARY KEY (";
    for (size_t i = 0; i < declared_pk_.size(); ++i) {
      text += (i ? ", " : "") + quote_identifier(declared_pk_[i].first) + (declared_pk_[i].second ? " DESC" : "");
      a->key.push_back({declared_pk_[i].first, "", declared_pk_[i].second});
    }
    return MigrationStep{std::move(a), text + ")"};
  }

  std::string live_key_text() const {
    std::string text = "(";
    for (size_t i = 0; i < live_.primary_key.size(); ++i)
      text += (i ? ", " : "") + live_.columns[live_.primary_key[i].column].name;
    return text + ")";
  }

  DdlContext& db_;
  TableSchema live_;  // a copy: hinted column renames are applied to it
  const ast::CreateTableStmt& decl_;
  std::unique_ptr<ast::CreateTableStmt> own_;
  std::vector<DeclaredColumn> columns_;
  std::vector<std::pair<std::string, bool>> declared_pk_;  // (column, desc)
  bool pk_declared_ = false;  // a PRIMARY KEY clause was written (an empty one included)
  std::optional<qrs_conflict> pk_conflict_;
  std::set<std::string> added_;
  std::set<std::string> readded_;
  RenamePolicy policy_;
};

std::string hint_text(const ast::TagList& tags, std::string_view key) {
  for (const ast::NamedExpr& t : tags)
    if (iequals(t.name, key) && t.value && t.value->kind == ast::ExprKind::kLiteral)
      return static_cast<const ast::Literal&>(*t.value).text;
  return {};
}

}  // namespace

std::optional<std::string> rename_hint_id(const ast::TagList& tags) {
  std::string id = hint_text(tags, "quereus.id");
  if (id.empty()) return std::nullopt;
  return id;
}

std::vector<std::string> rename_hint_names(const ast::TagList& tags) {
  std::vector<std::string> out;
  const std::string names = hint_text(tags, "quereus.previous_name");
  size_t start = 0;
  while (start <= names.size() && !names.empty()) {
    size_t comma = names.find(',', start);
    std::string old = names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    old.erase(0, old.find_first_not_of(" \t"));
    old.erase(old.find_last_not_of(" \t") + 1);
    if (!old.empty()) out.push_back(old);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

TableMigration diff_table(DdlContext& db, const TableSchema& live, const ast::CreateTableStmt& decl,
                          RenamePolicy policy) {
  return TableDiffer(db, live, decl, policy).run();
}

}  // namespace quereus
