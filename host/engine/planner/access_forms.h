// Access forms (SDK 1.11; spec/lens.md "Auxiliary-access read-path routing";
// docs/decompositions.md "Auxiliary access"): the registry of recognizers that read a
// WHERE conjunct as a predicate of a named form over one column — "prefix", "contains",
// or a form a plugin function declares (ScalarFunction::access_form). The optimizer
// offers a recognized conjunct to a table whose module plans forms as a QRS_OP_FORM
// filter; the planner routes a logical table's read through an auxiliary that advertises
// the form. A conjunct no recognizer reads stays an ordinary predicate: the read scans.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "parser/ast.h"
#include "planner/scalar_expr.h"

namespace quereus {

struct ScalarFunction;

// A conjunct read as `column <form> value`.
struct FormMatch {
  std::string form;              // lower-case form name
  const ScalarExpr* column = nullptr;  // the access column (a ColumnScalar, not checked)
  ScalarPtr value;               // the form's argument (row independence not checked)
};

// The built-in recognizers:
//   prefix     `col like 'lit%'`   (lit free of wildcards; no ESCAPE) — value 'lit'
//   contains   `col like '%lit%'`, `instr(col, v) > 0` — value 'lit' / v
// and a call of a function declaring an access form.
std::optional<FormMatch> recognize_form(const ScalarExpr& conjunct);

// The same reading over the syntax tree, for routing before a query is planned:
// the form and the access column's reference, with every other part of the conjunct free
// of column references and subqueries (a fragment that reads another column would dangle
// once moved onto the auxiliary). `find_function` resolves a call by lower-case name
// and argument count.
struct AstFormMatch {
  std::string form;
  const ast::ColumnRef* column = nullptr;
};
std::optional<AstFormMatch> recognize_form(
    const ast::Expr& conjunct, const std::function<const ScalarFunction*(const std::string&, int)>& find_function);

}  // namespace quereus
