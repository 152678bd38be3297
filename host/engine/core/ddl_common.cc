// Shared DDL pieces (see ddl_common.h).
#include "core/ddl_common.h"

#include "parser/ast_printer.h"
#include "parser/parser.h"

namespace quereus {

std::shared_ptr<const ast::Expr> own_expr(const ast::Expr& e) {
  return std::shared_ptr<const ast::Expr>(Parser::parse_expression(expr_to_string(e)).release());
}

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

const char* fk_action_name(ast::FkAction a) {
  switch (a) {
    case ast::FkAction::kSetNull: return "setNull";
    case ast::FkAction::kSetDefault: return "setDefault";
    case ast::FkAction::kCascade: return "cascade";
    case ast::FkAction::kNoAction: return "noAction";
    default: return "restrict";
  }
}

}  // namespace quereus
