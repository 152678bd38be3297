// Shared DDL pieces (see ddl_common.h).
#include "ddl/ddl_common.h"

#include "catalog/registry.h"
#include "common/strings.h"
#include "ddl/ddl_context.h"
#include "planner/scalar_expr.h"
#include "parser/ast_clone.h"

namespace quereus {

bool takes_binary_only(qrs_logical_type t) {
  return t == QRS_LT_DATE || t == QRS_LT_TIME || t == QRS_LT_DATETIME || t == QRS_LT_TIMESPAN || t == QRS_LT_JSON;
}

ColumnSchema build_column(DdlContext& db, const ast::ColumnDef& cd) {
  ColumnSchema col;
  col.name = cd.name;
  col.type_name = cd.type_name;
  col.logical_type = logical_type_from_name(cd.type_name);
  col.not_null = !db.options().default_nullable;
  // The session's default collation applies to text columns; other types compare BINARY.
  col.collation = db.registry().find_collation(col.logical_type == QRS_LT_TEXT ? db.options().default_collation
                                                                               : std::string("BINARY"));
  for (const ast::ColumnConstraint& k : cd.constraints) {
    using K = ast::ColumnConstraint::Kind;
    switch (k.kind) {
      case K::kNotNull:
        col.not_null = true;
        if (k.on_conflict != ast::ConflictClause::kNone) col.not_null_conflict = declared_conflict(k.on_conflict);
        break;
      case K::kNull:
        col.not_null = false;
        col.not_null_conflict.reset();
        break;
      case K::kDefault: col.default_expr = own_expr(*k.expr); break;
      case K::kCollate: {
        // A registered collation suits any collatable column; DATE / TIME / DATETIME /
        // TIMESPAN / JSON compare by their own semantics and take BINARY only (schema.md,
        // "Column COLLATE validation").
        const std::string type = cd.type_name.empty() ? std::string("ANY") : to_upper(cd.type_name);
        auto coll = db.registry().find_collation(k.collation);
        if (!coll) throw Error(StatusCode::kError, "Unknown collation '" + k.collation + "' for type '" + type + "'");
        if (takes_binary_only(col.logical_type) && !iequals(coll->name(), "BINARY"))
          throw Error(StatusCode::kError,
                      "Unknown collation '" + k.collation + "' for type '" + type + "' (it supports BINARY only)");
        col.collation = coll;
        col.collation_declared = true;
        break;
      }
      case K::kGenerated:
        col.generated_expr = own_expr(*k.expr);
        col.generated_stored = k.generated_stored;
        break;
      default: break;  // PRIMARY KEY, UNIQUE, CHECK, REFERENCES: the caller's
    }
  }
  return col;
}

std::shared_ptr<const ast::Expr> own_expr(const ast::Expr& e) { return ast::clone(e); }

std::string describe_unique(const TableSchema& ts, const IndexSchema& ix) {
  if (ix.constraint_named) return "the UNIQUE constraint '" + ix.name + "'";
  std::string cols;
  for (const IndexColumn& k : ix.columns) cols += (cols.empty() ? "" : ", ") + ts.columns[k.column].name;
  return "the UNIQUE constraint on (" + cols + ")";
}

bool derives_same_structure(const IndexSchema& existing, const std::string& name, const std::string& derived) {
  return existing.constraint && (name.empty() || !existing.constraint_named) && iequals(existing.name, derived);
}

void set_check_ops(CheckSchema& ck, const std::vector<ast::RowOp>& ops) {
  if (ops.empty()) return;
  ck.on_insert = ck.on_update = ck.on_delete = false;
  for (ast::RowOp op : ops) {
    if (op == ast::RowOp::kInsert) ck.on_insert = true;
    if (op == ast::RowOp::kUpdate) ck.on_update = true;
    if (op == ast::RowOp::kDelete) ck.on_delete = true;
  }
}

qrs_conflict declared_conflict(ast::ConflictClause c) {
  switch (c) {
    case ast::ConflictClause::kRollback: return QRS_CONFLICT_ROLLBACK;
    case ast::ConflictClause::kFail: return QRS_CONFLICT_FAIL;
    case ast::ConflictClause::kIgnore: return QRS_CONFLICT_IGNORE;
    case ast::ConflictClause::kReplace: return QRS_CONFLICT_REPLACE;
    default: return QRS_CONFLICT_ABORT;
  }
}

ReferentialAction referential_action(ast::FkAction a) {
  switch (a) {
    case ast::FkAction::kSetNull: return ReferentialAction::kSetNull;
    case ast::FkAction::kSetDefault: return ReferentialAction::kSetDefault;
    case ast::FkAction::kCascade: return ReferentialAction::kCascade;
    case ast::FkAction::kNoAction: return ReferentialAction::kNoAction;
    case ast::FkAction::kRestrict:
    case ast::FkAction::kNone: break;
  }
  return ReferentialAction::kRestrict;
}

}  // namespace quereus
