// Shared DDL pieces (see ddl_common.h).
#include "core/ddl_common.h"

#include "parser/ast_printer.h"
#include "parser/parser.h"

namespace quereus {

std::shared_ptr<const ast::Expr> own_expr(const ast::Expr& e) {
  return std::shared_ptr<const ast::Expr>(Parser::parse_expression(expr_to_string(e)).release());
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
