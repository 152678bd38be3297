// DDL of views: CREATE VIEW (the body is planned at once, so a missing name fails the
// CREATE; the catalog keeps its own canonical copy of the definition) and DROP VIEW.
#pragma once

#include "parser/ast.h"
#include "catalog/ddl_origin.h"

namespace quereus {

class DdlContext;
struct ExecContext;

void create_view(DdlContext& db, const ast::CreateViewStmt& s, ExecContext& ctx,
                 DdlOrigin origin = DdlOrigin::kStatement);
// DROP VIEW [IF EXISTS]: refused while an assertion reads the view.
void drop_view(DdlContext& db, const ast::DropStmt& s);

}  // namespace quereus
