// Canonical printer: AST → SQL text (FORMAT.md §6.3). Part of the parser stage.
//
// Lowercase keywords and function names, ", " between arguments, one space around
// binary operators, and parentheses only where the parse would otherwise differ. The
// parenthesis rules are the reference's (a binary child of lower precedence, or of
// equal precedence on the right of a non-associative operator; any binary operand of
// a unary or postfix operator), plus the few extra cases the reference gets wrong
// (e.g. `(-a) || b`, `(a = b) between …`), so print → parse → print is a fixed point.
#include "parser/ast_printer.h"

#include <string_view>

#include "parser/lexer.h"

namespace quereus {

namespace {

using namespace ast;

// Parse levels, lowest binding first (see parser.cc).
enum Level : int {
  kLvlOr = 1,
  kLvlAnd = 2,
  kLvlNot = 3,
  kLvlIs = 4,
  kLvlEq = 5,
  kLvlCmp = 6,
  kLvlBit = 7,
  kLvlAdd = 8,
  kLvlMul = 9,
  kLvlUnary = 10,
  kLvlConcat = 11,
  kLvlCollate = 12,
  kLvlPrimary = 13,
};

int binary_level(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr:
    case BinaryOp::kXor:
      return kLvlOr;
    case BinaryOp::kAnd:
      return kLvlAnd;
    case BinaryOp::kIs:
    case BinaryOp::kIsNot:
      return kLvlIs;
    case BinaryOp::kEq:
    case BinaryOp::kEqEq:
    case BinaryOp::kNe:
      return kLvlEq;
    case BinaryOp::kLt:
    case BinaryOp::kLe:
    case BinaryOp::kGt:
    case BinaryOp::kGe:
    case BinaryOp::kLike:
    case BinaryOp::kGlob:
    case BinaryOp::kMatch:
    case BinaryOp::kRegexp:
      return kLvlCmp;
    case BinaryOp::kNotLike:
    case BinaryOp::kNotGlob:
      return kLvlNot;  // printed "not (a like b)"
    case BinaryOp::kBitAnd:
    case BinaryOp::kBitOr:
    case BinaryOp::kShl:
    case BinaryOp::kShr:
      return kLvlBit;
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
      return kLvlAdd;
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
      return kLvlMul;
    case BinaryOp::kConcat:
      return kLvlConcat;
  }
  return kLvlPrimary;
}

const char* binary_text(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr:
      return "or";
    case BinaryOp::kAnd:
      return "and";
    case BinaryOp::kXor:
      return "xor";
    case BinaryOp::kEq:
      return "=";
    case BinaryOp::kEqEq:
      return "==";
    case BinaryOp::kNe:
      return "!=";
    case BinaryOp::kLt:
      return "<";
    case BinaryOp::kLe:
      return "<=";
    case BinaryOp::kGt:
      return ">";
    case BinaryOp::kGe:
      return ">=";
    case BinaryOp::kIs:
      return "is";
    case BinaryOp::kIsNot:
      return "is not";
    case BinaryOp::kLike:
    case BinaryOp::kNotLike:
      return "like";
    case BinaryOp::kGlob:
    case BinaryOp::kNotGlob:
      return "glob";
    case BinaryOp::kMatch:
      return "match";
    case BinaryOp::kRegexp:
      return "regexp";
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kConcat:
      return "||";
    case BinaryOp::kBitAnd:
      return "&";
    case BinaryOp::kBitOr:
      return "|";
    case BinaryOp::kShl:
      return "<<";
    case BinaryOp::kShr:
      return ">>";
  }
  return "?";
}

// `x is [not] true|false`: printed like the postfix IS NULL.
bool is_truth_test(const BinaryExpr& b) {
  if (b.op != BinaryOp::kIs && b.op != BinaryOp::kIsNot) return false;
  if (!b.right || b.right->kind != ExprKind::kLiteral) return false;
  auto k = static_cast<const Literal&>(*b.right).literal_kind;
  return k == LiteralKind::kTrue || k == LiteralKind::kFalse;
}

// The reference emitter's precedence table (FORMAT.md §6.3); 0 for operators it does
// not know.
int ref_prec(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr:
    case BinaryOp::kXor:
      return 1;
    case BinaryOp::kAnd:
      return 2;
    case BinaryOp::kEq:
    case BinaryOp::kEqEq:
    case BinaryOp::kNe:
      return 3;
    case BinaryOp::kLt:
    case BinaryOp::kLe:
    case BinaryOp::kGt:
    case BinaryOp::kGe:
    case BinaryOp::kLike:
    case BinaryOp::kGlob:
    case BinaryOp::kMatch:
    case BinaryOp::kRegexp:
      return 4;
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
      return 5;
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
      return 6;
    case BinaryOp::kConcat:
      return 7;
    default:
      return 0;
  }
}

bool ref_associative(BinaryOp op) {
  return op == BinaryOp::kAnd || op == BinaryOp::kOr || op == BinaryOp::kXor ||
         op == BinaryOp::kAdd || op == BinaryOp::kMul || op == BinaryOp::kConcat;
}

// What the reference sees as a binary node: NOT LIKE and IS TRUE are unary there.
bool ref_binary(const Expr& e) {
  if (e.kind != ExprKind::kBinary) return false;
  const auto& b = static_cast<const BinaryExpr&>(e);
  return !is_truth_test(b) && b.op != BinaryOp::kNotLike && b.op != BinaryOp::kNotGlob;
}

int expr_level(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kBinary:
      return binary_level(static_cast<const BinaryExpr&>(e).op);
    case ExprKind::kUnary:
      return static_cast<const UnaryExpr&>(e).op == UnaryOp::kNot ? kLvlNot : kLvlUnary;
    case ExprKind::kIsNull:
      return kLvlIs;
    case ExprKind::kBetween:
      return kLvlCmp;
    case ExprKind::kIn:
      return static_cast<const InExpr&>(e).negated ? kLvlNot : kLvlCmp;
    case ExprKind::kExists:
      return static_cast<const ExistsExpr&>(e).negated ? kLvlNot : kLvlPrimary;
    case ExprKind::kCollate:
      return kLvlCollate;
    default:
      return kLvlPrimary;
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

bool bare_callable(std::string_view lower_name) {
  // Reserved words the parser accepts bare as function names.
  static constexpr std::string_view kNames[] = {"key",     "action",   "set",        "default",
                                                "check",   "unique",   "references", "on",
                                                "cascade", "restrict", "like",       "replace"};
  for (auto n : kNames) {
    if (n == lower_name) return true;
  }
  return false;
}

const char* conflict_text(ConflictClause c) {
  switch (c) {
    case ConflictClause::kRollback:
      return "rollback";
    case ConflictClause::kAbort:
      return "abort";
    case ConflictClause::kFail:
      return "fail";
    case ConflictClause::kIgnore:
      return "ignore";
    case ConflictClause::kReplace:
      return "replace";
    case ConflictClause::kNone:
      break;
  }
  return "";
}

const char* fk_action_text(FkAction a) {
  switch (a) {
    case FkAction::kSetNull:
      return "set null";
    case FkAction::kSetDefault:
      return "set default";
    case FkAction::kCascade:
      return "cascade";
    case FkAction::kRestrict:
      return "restrict";
    case FkAction::kNoAction:
      return "no action";
    case FkAction::kNone:
      break;
  }
  return "";
}

// Two modes. SQL mode (statement_to_string, select_to_string) parenthesizes so that
// the text re-parses to the same tree. Names mode (expr_to_string, the result column
// names of FORMAT.md §6.3) follows the reference emitter exactly, including the few
// places where its output would not re-parse the same way (`--1`, `a * b / c` for
// `a * (b / c)`), because the corpus expects its names.
class Printer {
 public:
  explicit Printer(bool names) : names_(names) {}
  std::string out;

  void expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kLiteral:
        literal(static_cast<const Literal&>(e));
        break;
      case ExprKind::kColumn: {
        const auto& c = static_cast<const ColumnRef&>(e);
        if (!c.schema.empty()) {
          out += quote_identifier(c.schema);
          out += '.';
        }
        if (!c.table.empty()) {
          out += quote_identifier(c.table);
          out += '.';
        }
        out += quote_identifier(c.column);
        break;
      }
      case ExprKind::kParameter: {
        const auto& p = static_cast<const Parameter&>(e);
        if (!p.spelling.empty()) {
          out += p.spelling;
        } else if (!p.name.empty()) {
          out += ':';
          out += p.name;
        } else {
          out += '?';
        }
        break;
      }
      case ExprKind::kUnary:
        unary(static_cast<const UnaryExpr&>(e));
        break;
      case ExprKind::kBinary:
        binary(static_cast<const BinaryExpr&>(e));
        break;
      case ExprKind::kFunction:
        function(static_cast<const FunctionCall&>(e));
        break;
      case ExprKind::kCast: {
        const auto& c = static_cast<const CastExpr&>(e);
        out += "cast(";
        expr(*c.operand);
        out += " as ";
        out += lower(c.type_name);
        out += ')';
        break;
      }
      case ExprKind::kCollate: {
        const auto& c = static_cast<const CollateExpr&>(e);
        child(*c.operand, kLvlCollate);
        out += " collate ";
        out += quote_identifier(lower(c.collation));
        break;
      }
      case ExprKind::kCase: {
        const auto& c = static_cast<const CaseExpr&>(e);
        out += "case";
        if (c.base) {
          out += ' ';
          expr(*c.base);
        }
        for (const auto& [when, then] : c.whens) {
          out += " when ";
          expr(*when);
          out += " then ";
          expr(*then);
        }
        if (c.else_expr) {
          out += " else ";
          expr(*c.else_expr);
        }
        out += " end";
        break;
      }
      case ExprKind::kBetween: {
        const auto& b = static_cast<const BetweenExpr&>(e);
        child(*b.operand, kLvlCmp);
        out += b.negated ? " not between " : " between ";
        child(*b.low, kLvlBit);
        out += " and ";
        child(*b.high, kLvlBit);
        break;
      }
      case ExprKind::kIn: {
        // NOT IN prints as the reference names it: `not x in (…)`.
        const auto& in = static_cast<const InExpr&>(e);
        if (in.negated) out += "not ";
        child(*in.operand, kLvlCmp);
        out += " in (";
        if (in.subquery) {
          select(*in.subquery);
        } else {
          for (size_t i = 0; i < in.list.size(); ++i) {
            if (i) out += ", ";
            expr(*in.list[i]);
          }
        }
        out += ')';
        break;
      }
      case ExprKind::kExists: {
        const auto& ex = static_cast<const ExistsExpr&>(e);
        out += ex.negated ? "not exists (" : "exists (";
        select(*ex.subquery);
        out += ')';
        break;
      }
      case ExprKind::kSubquery:
        out += '(';
        select(*static_cast<const SubqueryExpr&>(e).subquery);
        out += ')';
        break;
      case ExprKind::kIsNull: {
        const auto& n = static_cast<const IsNullExpr&>(e);
        postfix_operand(*n.operand);
        out += n.negated ? " is not null" : " is null";
        break;
      }
    }
  }

  void wrap(const Expr& e, bool parens) {
    if (parens) {
      out += '(';
      expr(e);
      out += ')';
    } else {
      expr(e);
    }
  }

  // Prints `e` where the parser reads an operand of level `min_level` or higher.
  // (The reference never parenthesizes these operands.)
  void child(const Expr& e, int min_level) {
    if (!names_ && expr_level(e) < min_level) {
      out += '(';
      expr(e);
      out += ')';
    } else {
      expr(e);
    }
  }

  // The operand of a prefix/postfix operator: any binary operand is parenthesized (the
  // reference's rule), and so is anything that binds more loosely.
  void unary_operand(const Expr& e, int min_level) {
    if (names_) {
      wrap(e, ref_binary(e));
    } else {
      wrap(e, ref_binary(e) || expr_level(e) < min_level);
    }
  }

  // An operand of binary operator `parent` (whose parse level is `level`).
  void binary_operand(const Expr& e, BinaryOp parent, int level, bool right) {
    const int pp = ref_prec(parent);
    if (names_ && pp > 0) {
      bool parens = false;
      if (ref_binary(e)) {
        const int cp = ref_prec(static_cast<const BinaryExpr&>(e).op);
        parens = cp < pp || (cp == pp && right && !ref_associative(parent));
      }
      wrap(e, parens);
      return;
    }
    // Chains parse left-deep, so a right operand at the same level is parenthesized
    // even for an associative operator: `a or (b xor c)` must not print as a chain.
    wrap(e, expr_level(e) < (right ? level + 1 : level));
  }
  void postfix_operand(const Expr& e) { unary_operand(e, kLvlIs); }

  void literal(const Literal& l) {
    switch (l.literal_kind) {
      case LiteralKind::kNull:
        out += "null";
        break;
      case LiteralKind::kTrue:
        out += "true";
        break;
      case LiteralKind::kFalse:
        out += "false";
        break;
      case LiteralKind::kInteger:
      case LiteralKind::kReal:
        out += l.text;
        break;
      case LiteralKind::kString:
        out += '\'';
        for (char c : l.text) {
          if (c == '\'') out += '\'';
          out += c;
        }
        out += '\'';
        break;
      case LiteralKind::kBlob: {
        static const char kHex[] = "0123456789abcdef";
        out += "x'";
        for (unsigned char c : l.text) {
          out += kHex[c >> 4];
          out += kHex[c & 15];
        }
        out += '\'';
        break;
      }
    }
  }

  void unary(const UnaryExpr& u) {
    switch (u.op) {
      case UnaryOp::kNot:
        out += "not ";
        unary_operand(*u.operand, kLvlNot);
        return;
      case UnaryOp::kNegate:
        out += '-';
        break;
      case UnaryOp::kPlus:
        out += '+';
        break;
      case UnaryOp::kBitNot:
        out += '~';
        break;
    }
    size_t mark = out.size();
    unary_operand(*u.operand, kLvlUnary);
    // "--1" would start a comment: write "-(-1)" (names keep the reference's "--1").
    if (!names_ && u.op == UnaryOp::kNegate && out.size() > mark && out[mark] == '-') {
      out.insert(mark, 1, '(');
      out += ')';
    }
  }

  void binary(const BinaryExpr& b) {
    if (is_truth_test(b)) {
      postfix_operand(*b.left);
      out += b.op == BinaryOp::kIs ? " is " : " is not ";
      expr(*b.right);
      return;
    }
    BinaryOp op = b.op;
    if (op == BinaryOp::kNotLike || op == BinaryOp::kNotGlob) {
      // The reference parses NOT LIKE as NOT (a LIKE b) and names it so.
      out += "not (";
      op = op == BinaryOp::kNotLike ? BinaryOp::kLike : BinaryOp::kGlob;
    }
    const int level = binary_level(op);
    binary_operand(*b.left, op, level, /*right=*/false);
    out += ' ';
    out += binary_text(op);
    out += ' ';
    binary_operand(*b.right, op, level, /*right=*/true);
    if (b.escape) {
      out += " escape ";
      child(*b.escape, kLvlBit);
    }
    if (op != b.op) out += ')';
  }

  void function(const FunctionCall& f) {
    std::string name = lower(f.name);
    if (name == "count" && f.args.empty() && !f.distinct) {
      out += "count(*)";
    } else if (f.args.empty() && !f.star && !f.over &&
               (name == "current_timestamp" || name == "current_date" || name == "current_time")) {
      out += name;  // SQLite's keyword spelling, which the parser reads back as this call
    } else {
      out += bare_callable(name) ? name : quote_identifier(name);
      out += '(';
      if (f.distinct) out += "distinct ";
      if (f.star) {
        out += '*';
      } else {
        for (size_t i = 0; i < f.args.size(); ++i) {
          if (i) out += ", ";
          expr(*f.args[i]);
        }
      }
      out += ')';
    }
    if (f.over) {
      out += " over (";
      window(*f.over);
      out += ')';
    }
  }

  void ordering(const std::vector<OrderingTerm>& terms) {
    for (size_t i = 0; i < terms.size(); ++i) {
      if (i) out += ", ";
      expr(*terms[i].expr);
      if (terms[i].desc) out += " desc";
      if (terms[i].nulls == OrderingTerm::Nulls::kFirst) out += " nulls first";
      if (terms[i].nulls == OrderingTerm::Nulls::kLast) out += " nulls last";
    }
  }

  void frame_bound(const FrameBound& b) {
    switch (b.kind) {
      case FrameBound::Kind::kUnboundedPreceding:
        out += "unbounded preceding";
        break;
      case FrameBound::Kind::kUnboundedFollowing:
        out += "unbounded following";
        break;
      case FrameBound::Kind::kCurrentRow:
        out += "current row";
        break;
      case FrameBound::Kind::kPreceding:
        expr(*b.offset);
        out += " preceding";
        break;
      case FrameBound::Kind::kFollowing:
        expr(*b.offset);
        out += " following";
        break;
    }
  }

  void window(const WindowSpec& w) {
    bool space = false;
    if (!w.partition_by.empty()) {
      out += "partition by ";
      for (size_t i = 0; i < w.partition_by.size(); ++i) {
        if (i) out += ", ";
        expr(*w.partition_by[i]);
      }
      space = true;
    }
    if (!w.order_by.empty()) {
      if (space) out += ' ';
      out += "order by ";
      ordering(w.order_by);
      space = true;
    }
    if (w.frame) {
      if (space) out += ' ';
      const WindowFrame& f = *w.frame;
      out += f.unit == WindowFrame::Unit::kRows    ? "rows "
             : f.unit == WindowFrame::Unit::kRange ? "range "
                                                   : "groups ";
      if (f.has_end) {
        out += "between ";
        frame_bound(f.start);
        out += " and ";
        frame_bound(f.end);
      } else {
        frame_bound(f.start);
      }
      switch (f.exclude) {
        case WindowFrame::Exclude::kNone:
          break;
        case WindowFrame::Exclude::kNoOthers:
          out += " exclude no others";
          break;
        case WindowFrame::Exclude::kCurrentRow:
          out += " exclude current row";
          break;
        case WindowFrame::Exclude::kGroup:
          out += " exclude group";
          break;
        case WindowFrame::Exclude::kTies:
          out += " exclude ties";
          break;
      }
    }
  }

  // ------------------------------------------------------------ queries

  void with_clause(const WithClause& w) {
    out += w.recursive ? "with recursive " : "with ";
    for (size_t i = 0; i < w.ctes.size(); ++i) {
      const CommonTableExpr& c = w.ctes[i];
      if (i) out += ", ";
      out += quote_identifier(c.name);
      optional_names(c.columns);
      out += " as ";
      if (c.materialization == CommonTableExpr::Materialization::kMaterialized) {
        out += "materialized ";
      } else if (c.materialization == CommonTableExpr::Materialization::kNotMaterialized) {
        out += "not materialized ";
      }
      out += '(';
      select(*c.select);
      out += ')';
    }
    if (w.max_recursion) {
      out += " option (maxrecursion " + std::to_string(*w.max_recursion) + ")";
    }
    out += ' ';
  }

  void names(const std::vector<std::string>& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out += ", ";
      out += quote_identifier(list[i]);
    }
  }

  // ` (a, b)` after a name, when the list is not empty (column lists of views, CTEs, …).
  void optional_names(const std::vector<std::string>& list) {
    if (list.empty()) return;
    out += " (";
    names(list);
    out += ')';
  }

  void result_columns(const std::vector<ResultColumn>& cols) {
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i) out += ", ";
      const ResultColumn& rc = cols[i];
      switch (rc.kind) {
        case ResultColumn::Kind::kStar:
          out += '*';
          break;
        case ResultColumn::Kind::kTableStar:
          out += quote_identifier(rc.table);
          out += ".*";
          break;
        case ResultColumn::Kind::kExpr:
          expr(*rc.expr);
          if (!rc.alias.empty()) {
            out += " as ";
            out += quote_identifier(rc.alias);
          }
          if (!rc.inverse.empty()) {
            out += " with inverse ";
            named_exprs(rc.inverse, /*parens=*/true);
          }
          break;
      }
    }
  }

  void named_exprs(const std::vector<NamedExpr>& list, bool parens) {
    if (parens) out += '(';
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out += ", ";
      out += quote_identifier(list[i].name);
      out += " = ";
      expr(*list[i].value);
    }
    if (parens) out += ')';
  }

  // ` with tags (k = v, …)` (or `(k, …)` for DROP TAGS lists, whose values are null).
  void tag_list(const TagList& tags) {
    out += '(';
    for (size_t i = 0; i < tags.size(); ++i) {
      if (i) out += ", ";
      out += quote_identifier(tags[i].name);
      if (tags[i].value) {
        out += " = ";
        expr(*tags[i].value);
      }
    }
    out += ')';
  }
  void tags_clause(const TagList& tags) {
    if (tags.empty()) return;
    out += " with tags ";
    tag_list(tags);
  }

  void existence_columns(const std::vector<ExistenceColumn>& cols) {
    for (size_t i = 0; i < cols.size(); ++i) {
      out += i ? ", exists " : " exists ";
      if (cols[i].side == ExistenceColumn::Side::kLeft) out += "left ";
      if (cols[i].side == ExistenceColumn::Side::kRight) out += "right ";
      out += "as ";
      out += quote_identifier(cols[i].name);
    }
  }

  void schema_path(const std::vector<std::string>& path) {
    if (path.empty()) return;
    out += " with schema ";
    names(path);
  }

  void dml_clauses(const DmlClauses& d) {
    if (!d.context.empty()) {
      out += " with context ";
      named_exprs(d.context, /*parens=*/false);
    }
    tags_clause(d.tags);
    schema_path(d.schema_path);
  }

  void assignments(const std::vector<Assignment>& list) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (i) out += ", ";
      const Assignment& a = list[i];
      if (a.columns.size() == 1) {
        out += quote_identifier(a.columns[0]);
      } else {
        out += '(';
        names(a.columns);
        out += ')';
      }
      out += " = ";
      expr(*a.value);
    }
  }

  void module_clause(const std::string& module, const std::vector<ModuleArg>& args) {
    if (module.empty()) return;
    out += " using ";
    out += quote_identifier(module);
    if (!args.empty()) {
      out += '(';
      module_args(args);
      out += ')';
    }
  }
  void module_args(const std::vector<ModuleArg>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
      if (i) out += ", ";
      if (!args[i].key.empty()) {
        out += quote_identifier(args[i].key);
        out += " = ";
      }
      expr(*args[i].value);
    }
  }

  // The statement's own object: qualified by target_schema when written unqualified.
  void target(const QualifiedName& q) {
    if (q.schema.empty() && !target_schema.empty()) {
      out += quote_identifier(target_schema);
      out += '.';
    }
    qualified(q);
  }
  std::string target_schema;

  void qualified(const QualifiedName& q) {
    if (!q.schema.empty()) {
      out += quote_identifier(q.schema);
      out += '.';
    }
    out += quote_identifier(q.name);
  }

  void source(const TableSource& s) {
    if (s.lateral) out += "lateral ";
    switch (s.kind) {
      case TableSource::Kind::kTable:
        qualified(s.table);
        break;
      case TableSource::Kind::kSubquery:
        out += '(';
        select(*s.subquery);
        out += ')';
        break;
      case TableSource::Kind::kFunction:
        out += quote_identifier(lower(s.function_name));
        out += '(';
        for (size_t i = 0; i < s.function_args.size(); ++i) {
          if (i) out += ", ";
          expr(*s.function_args[i]);
        }
        out += ')';
        break;
      case TableSource::Kind::kJoin: {
        source(*s.left);
        switch (s.join) {
          case JoinKind::kInner:
            out += " inner join ";
            break;
          case JoinKind::kLeft:
            out += " left join ";
            break;
          case JoinKind::kRight:
            out += " right join ";
            break;
          case JoinKind::kFull:
            out += " full join ";
            break;
          case JoinKind::kCross:
            out += " cross join ";
            break;
        }
        source(*s.right);
        if (s.on) {
          out += " on ";
          expr(*s.on);
        } else if (!s.using_columns.empty()) {
          out += " using (";
          names(s.using_columns);
          out += ')';
        }
        existence_columns(s.exists_columns);
        return;
      }
    }
    if (!s.alias.empty()) {
      out += " as ";
      out += quote_identifier(s.alias);
      optional_names(s.alias_columns);
    }
  }

  void core(const SelectCore& c) {
    if (c.nested) {
      out += '(';
      select(*c.nested);
      out += ')';
      return;
    }
    if (!c.values.empty()) {
      out += "values ";
      for (size_t r = 0; r < c.values.size(); ++r) {
        if (r) out += ", ";
        out += '(';
        for (size_t i = 0; i < c.values[r].size(); ++i) {
          if (i) out += ", ";
          expr(*c.values[r][i]);
        }
        out += ')';
      }
      return;
    }
    out += c.distinct ? "select distinct " : "select ";
    result_columns(c.columns);
    if (c.from) {
      out += " from ";
      source(*c.from);
    }
    if (c.where) {
      out += " where ";
      expr(*c.where);
    }
    if (!c.group_by.empty()) {
      out += " group by ";
      for (size_t i = 0; i < c.group_by.size(); ++i) {
        if (i) out += ", ";
        expr(*c.group_by[i]);
      }
    }
    if (c.having) {
      out += " having ";
      expr(*c.having);
    }
  }

  void select(const Select& s) {
    if (s.dml) {
      statement(*s.dml);
      return;
    }
    if (s.with) with_clause(*s.with);
    core(s.core);
    for (const CompoundLeg& leg : s.compounds) {
      static const char* const kOps[] = {" union", " union all", " intersect", " except", " diff"};
      out += kOps[static_cast<int>(leg.op)];
      existence_columns(leg.membership);
      out += ' ';
      core(leg.core);
    }
    if (!s.order_by.empty()) {
      out += " order by ";
      ordering(s.order_by);
    }
    if (s.limit) {
      out += " limit ";
      expr(*s.limit);
    }
    if (s.offset) {
      out += " offset ";
      expr(*s.offset);
    }
    schema_path(s.schema_path);
    if (!s.defaults.empty()) {
      out += " with defaults ";
      named_exprs(s.defaults, /*parens=*/true);
    }
  }

  // ------------------------------------------------------------ statements

  void returning(const std::vector<ResultColumn>& cols) {
    if (cols.empty()) return;
    out += " returning ";
    result_columns(cols);
  }

  void default_value(const Expr& e) {
    // Literals (and signed numbers) print bare; anything else is parenthesized so the
    // following constraints cannot be read into it (DEFAULT takes a whole expression).
    // A scalar subquery prints its own parentheses.
    bool bare = e.kind == ExprKind::kLiteral || e.kind == ExprKind::kSubquery;
    if (e.kind == ExprKind::kUnary) {
      const auto& u = static_cast<const UnaryExpr&>(e);
      bare = (u.op == UnaryOp::kNegate || u.op == UnaryOp::kPlus) &&
             u.operand->kind == ExprKind::kLiteral;
    }
    if (bare) {
      expr(e);
    } else {
      out += '(';
      expr(e);
      out += ')';
    }
  }

  void check_on(const std::vector<RowOp>& ops) {
    if (ops.empty()) return;
    out += " on ";
    for (size_t i = 0; i < ops.size(); ++i) {
      if (i) out += ", ";
      out += ops[i] == RowOp::kInsert ? "insert" : ops[i] == RowOp::kUpdate ? "update" : "delete";
    }
  }

  void on_conflict(ConflictClause c) {
    if (c == ConflictClause::kNone) return;
    out += " on conflict ";
    out += conflict_text(c);
  }

  void fk_tail(const QualifiedName& table, const std::vector<std::string>& cols, FkAction del,
               FkAction upd, const FkDeferral& d) {
    out += "references ";
    qualified(table);
    if (!cols.empty()) {
      out += '(';
      names(cols);
      out += ')';
    }
    if (del != FkAction::kNone) {
      out += " on delete ";
      out += fk_action_text(del);
    }
    if (upd != FkAction::kNone) {
      out += " on update ";
      out += fk_action_text(upd);
    }
    if (d.deferrable == FkDeferral::Deferrable::kDeferrable) out += " deferrable";
    if (d.deferrable == FkDeferral::Deferrable::kNotDeferrable) out += " not deferrable";
    if (d.initially == FkDeferral::Initially::kDeferred) out += " initially deferred";
    if (d.initially == FkDeferral::Initially::kImmediate) out += " initially immediate";
  }

  void column_constraint(const ColumnConstraint& c) {
    if (!c.name.empty()) {
      out += "constraint ";
      out += quote_identifier(c.name);
      out += ' ';
    }
    switch (c.kind) {
      case ColumnConstraint::Kind::kPrimaryKey:
        out += "primary key";
        if (c.desc) out += " desc";
        on_conflict(c.on_conflict);
        break;
      case ColumnConstraint::Kind::kNotNull:
        out += "not null";
        on_conflict(c.on_conflict);
        break;
      case ColumnConstraint::Kind::kNull:
        out += "null";
        on_conflict(c.on_conflict);
        break;
      case ColumnConstraint::Kind::kUnique:
        out += "unique";
        on_conflict(c.on_conflict);
        break;
      case ColumnConstraint::Kind::kCheck:
        out += "check";
        check_on(c.check_on);
        out += " (";
        expr(*c.expr);
        out += ')';
        on_conflict(c.on_conflict);
        break;
      case ColumnConstraint::Kind::kDefault:
        out += "default ";
        default_value(*c.expr);
        break;
      case ColumnConstraint::Kind::kCollate:
        out += "collate ";
        out += quote_identifier(lower(c.collation));
        break;
      case ColumnConstraint::Kind::kForeignKey:
        fk_tail(c.fk_table, c.fk_columns, c.fk_on_delete, c.fk_on_update, c.fk_deferral);
        break;
      case ColumnConstraint::Kind::kGenerated:
        out += "generated always as (";
        expr(*c.expr);
        out += ')';
        if (c.generated_stored) out += " stored";
        break;
    }
    tags_clause(c.tags);
  }

  void column_def(const ColumnDef& col) {
    out += quote_identifier(col.name);
    if (!col.type_name.empty()) {
      out += ' ';
      out += col.type_name;
    }
    for (const ColumnConstraint& c : col.constraints) {
      out += ' ';
      column_constraint(c);
    }
    tags_clause(col.tags);
  }

  // Items of a schema declaration are written without CREATE.
  const char* create_keyword() const { return in_declare_ ? "" : "create "; }

  static const char* object_keyword(ObjectKind k) {
    switch (k) {
      case ObjectKind::kTable: return "table";
      case ObjectKind::kIndex: return "index";
      case ObjectKind::kView: return "view";
      case ObjectKind::kMaterializedView: return "materialized view";
      case ObjectKind::kAssertion: return "assertion";
    }
    return "";
  }

  void tag_verb(TagVerb verb, const TagList& tags) {
    out += verb == TagVerb::kSet ? " set tags " : verb == TagVerb::kAdd ? " add tags " : " drop tags ";
    tag_list(tags);
  }

  void string_literal(const std::string& text) {
    out += '\'';
    for (char c : text) {
      if (c == '\'') out += '\'';
      out += c;
    }
    out += '\'';
  }

  // `old to new`, both quoted as needed.
  void renamed(const std::string& from, const std::string& to) {
    out += quote_identifier(from);
    out += " to ";
    out += quote_identifier(to);
  }

  void alter_table(const AlterTableStmt& s) {
    using A = AlterTableStmt::Action;
    using C = AlterTableStmt::ColumnAction;
    out += "alter table ";
    target(s.table);
    switch (s.action) {
      case A::kRenameTable:
        out += " rename to ";
        out += quote_identifier(s.new_name);
        break;
      case A::kRenameColumn:
        out += " rename column ";
        renamed(s.name, s.new_name);
        break;
      case A::kAddColumn:
        out += " add column ";
        column_def(*s.column);
        break;
      case A::kDropColumn:
        out += " drop column ";
        out += quote_identifier(s.name);
        break;
      case A::kAddConstraint:
        out += " add ";
        table_constraint(*s.constraint);
        break;
      case A::kDropConstraint:
        out += " drop constraint ";
        out += quote_identifier(s.name);
        break;
      case A::kRenameConstraint:
        out += " rename constraint ";
        renamed(s.name, s.new_name);
        break;
      case A::kAlterPrimaryKey:
        out += " alter primary key (";
        indexed_columns(s.key);
        out += ')';
        break;
      case A::kAlterColumn:
        out += " alter column ";
        out += quote_identifier(s.name);
        switch (s.column_action) {
          case C::kSetNotNull: out += " set not null"; break;
          case C::kDropNotNull: out += " drop not null"; break;
          case C::kSetDataType:
            out += " set data type ";
            out += s.type_name;
            break;
          case C::kSetDefault:
            out += " set default ";
            default_value(*s.default_value);
            break;
          case C::kDropDefault: out += " drop default"; break;
          case C::kSetCollate:
            out += " set collate ";
            out += quote_identifier(lower(s.collation));
            break;
        }
        break;
      case A::kTags:
        if (s.tag_target == AlterTableStmt::TagTarget::kColumn) {
          out += " alter column ";
          out += quote_identifier(s.name);
        } else if (s.tag_target == AlterTableStmt::TagTarget::kConstraint) {
          out += " alter constraint ";
          out += quote_identifier(s.name);
        }
        tag_verb(s.tag_verb, s.tags);
        break;
      case A::kSetMaintained:
        out += " set maintained";
        optional_names(s.maintained_columns);
        out += " as ";
        select(*s.maintained);
        break;
      case A::kDropMaintained:
        out += " drop maintained";
        break;
    }
  }

  void indexed_columns(const std::vector<IndexedColumn>& cols) {
    for (size_t i = 0; i < cols.size(); ++i) {
      if (i) out += ", ";
      out += quote_identifier(cols[i].name);
      if (!cols[i].collation.empty()) {
        out += " collate ";
        out += quote_identifier(lower(cols[i].collation));
      }
      if (cols[i].desc) out += " desc";
    }
  }

  void table_constraint(const TableConstraint& c) {
    if (!c.name.empty()) {
      out += "constraint ";
      out += quote_identifier(c.name);
      out += ' ';
    }
    switch (c.kind) {
      case TableConstraint::Kind::kPrimaryKey:
        out += "primary key (";
        indexed_columns(c.columns);
        out += ')';
        on_conflict(c.on_conflict);
        break;
      case TableConstraint::Kind::kUnique:
        out += "unique (";
        indexed_columns(c.columns);
        out += ')';
        on_conflict(c.on_conflict);
        break;
      case TableConstraint::Kind::kCheck:
        out += "check";
        check_on(c.check_on);
        out += " (";
        expr(*c.expr);
        out += ')';
        on_conflict(c.on_conflict);
        break;
      case TableConstraint::Kind::kForeignKey:
        out += "foreign key (";
        indexed_columns(c.columns);
        out += ") ";
        fk_tail(c.fk_table, c.fk_columns, c.fk_on_delete, c.fk_on_update, c.fk_deferral);
        break;
    }
    tags_clause(c.tags);
  }

  void statement(const Statement& st) {
    switch (st.kind) {
      case StmtKind::kSelect:
        select(*static_cast<const SelectStmt&>(st).select);
        break;
      case StmtKind::kInsert: insert_stmt(static_cast<const InsertStmt&>(st)); break;
      case StmtKind::kUpdate: update_stmt(static_cast<const UpdateStmt&>(st)); break;
      case StmtKind::kDelete: delete_stmt(static_cast<const DeleteStmt&>(st)); break;
      case StmtKind::kCreateTable: create_table(static_cast<const CreateTableStmt&>(st)); break;
      case StmtKind::kCreateMaterializedView:
        create_materialized_view(static_cast<const CreateMaterializedViewStmt&>(st));
        break;
      case StmtKind::kCreateAssertion: {
        const auto& s = static_cast<const CreateAssertionStmt&>(st);
        out += create_keyword();
        out += "assertion ";
        qualified(s.name);
        out += " check (";
        expr(*s.check);
        out += ')';
        break;
      }
      case StmtKind::kDrop: {
        const auto& s = static_cast<const DropStmt&>(st);
        out += "drop ";
        out += object_keyword(s.object);
        if (s.if_exists) out += " if exists";
        out += ' ';
        target(s.name);
        break;
      }
      case StmtKind::kRefreshMaterializedView:
        out += "refresh materialized view ";
        qualified(static_cast<const RefreshMaterializedViewStmt&>(st).view);
        break;
      case StmtKind::kAlterTable:
        alter_table(static_cast<const AlterTableStmt&>(st));
        break;
      case StmtKind::kAlterTags: {
        const auto& s = static_cast<const AlterTagsStmt&>(st);
        out += "alter ";
        out += object_keyword(s.object);
        out += ' ';
        qualified(s.name);
        tag_verb(s.verb, s.tags);
        break;
      }
      case StmtKind::kDeclareSchema: declare_schema(static_cast<const DeclareSchemaStmt&>(st)); break;
      case StmtKind::kSeed: seed(static_cast<const SeedStmt&>(st)); break;
      case StmtKind::kDeclareLens: declare_lens(static_cast<const DeclareLensStmt&>(st)); break;
      case StmtKind::kApplySchema: apply_schema(static_cast<const ApplySchemaStmt&>(st)); break;
      case StmtKind::kDiffSchema:
        out += "diff schema ";
        out += quote_identifier(static_cast<const DiffSchemaStmt&>(st).name);
        break;
      case StmtKind::kExplainSchema:
        out += "explain schema ";
        out += quote_identifier(static_cast<const ExplainSchemaStmt&>(st).name);
        if (const auto& v = static_cast<const ExplainSchemaStmt&>(st).version) {
          out += " version ";
          string_literal(*v);
        }
        break;
      case StmtKind::kBegin:
      case StmtKind::kCommit:
      case StmtKind::kRollback:
      case StmtKind::kSavepoint:
      case StmtKind::kRelease:
        transaction_control(st);
        break;
      case StmtKind::kPragma: {
        const auto& s = static_cast<const PragmaStmt&>(st);
        out += "pragma ";
        qualified(s.name);
        if (s.value) {
          out += " = ";
          expr(*s.value);
        }
        break;
      }
      case StmtKind::kCreateIndex: create_index(static_cast<const CreateIndexStmt&>(st)); break;
      case StmtKind::kCreateView: create_view(static_cast<const CreateViewStmt&>(st)); break;
      case StmtKind::kAnalyze: analyze(static_cast<const AnalyzeStmt&>(st)); break;
      case StmtKind::kCopy: copy(static_cast<const CopyStmt&>(st)); break;
    }
  }

 private:
  // `insert|replace … into t … [on conflict …]`.
  void insert_stmt(const InsertStmt& s) {
    if (s.with) with_clause(*s.with);
    if (s.replace) {
      out += "replace into ";
    } else {
      out += "insert ";
      if (s.or_action != ConflictClause::kNone) {
        out += "or ";
        out += conflict_text(s.or_action);
        out += ' ';
      }
      out += "into ";
    }
    qualified(s.table);
    if (!s.alias.empty()) {
      out += " as ";
      out += quote_identifier(s.alias);
    }
    optional_names(s.columns);
    if (s.default_values) {
      out += " default values";
    } else if (s.source) {
      out += ' ';
      select(*s.source);
    }
    for (const UpsertClause& u : s.upserts) upsert(u);
    dml_clauses(s);
    returning(s.returning);
  }

  // One ` on conflict … do nothing|do update set …` clause.
  void upsert(const UpsertClause& u) {
    out += " on conflict";
    if (!u.target.empty()) {
      out += " (";
      indexed_columns(u.target);
      out += ')';
      if (u.target_where) {
        out += " where ";
        expr(*u.target_where);
      }
    }
    if (u.do_nothing) {
      out += " do nothing";
    } else {
      out += " do update set ";
      assignments(u.set);
      if (u.where) {
        out += " where ";
        expr(*u.where);
      }
    }
  }

  // `update [or …] t set … [where …]`.
  // `t [as a]` or `(select …) as a`.
  template <class Stmt>
  void write_target(const Stmt& s) {
    if (s.target_query) {
      out += '(';
      select(*s.target_query);
      out += ')';
    } else {
      qualified(s.table);
    }
    if (!s.alias.empty()) {
      out += " as ";
      out += quote_identifier(s.alias);
    }
    optional_names(s.target_columns);
  }

  void update_stmt(const UpdateStmt& s) {
    if (s.with) with_clause(*s.with);
    out += "update ";
    if (s.or_action != ConflictClause::kNone) {
      out += "or ";
      out += conflict_text(s.or_action);
      out += ' ';
    }
    write_target(s);
    out += " set ";
    assignments(s.assignments);
    if (s.where) {
      out += " where ";
      expr(*s.where);
    }
    dml_clauses(s);
    returning(s.returning);
  }

  // `delete from t [where …]`.
  void delete_stmt(const DeleteStmt& s) {
    if (s.with) with_clause(*s.with);
    out += "delete from ";
    write_target(s);
    if (s.where) {
      out += " where ";
      expr(*s.where);
    }
    dml_clauses(s);
    returning(s.returning);
  }

  // `create [temp] table t (columns, constraints) [using …] [with context …] [maintained as …]`.
  void create_table(const CreateTableStmt& s) {
    out += create_keyword();
    out += s.temporary ? "temp table " : "table ";
    if (s.if_not_exists) out += "if not exists ";
    target(s.table);
    out += " (";
    bool first = true;
    for (const ColumnDef& col : s.columns) {
      if (!first) out += ", ";
      first = false;
      column_def(col);
    }
    for (const TableConstraint& c : s.constraints) {
      if (!first) out += ", ";
      first = false;
      table_constraint(c);
    }
    out += ')';
    module_clause(s.module_name, s.module_args);
    if (!s.context.empty()) {
      out += " with context (";
      for (size_t i = 0; i < s.context.size(); ++i) {
        if (i) out += ", ";
        column_def(s.context[i]);
      }
      out += ')';
    }
    if (s.maintained) {
      out += " maintained";
      optional_names(s.maintained_columns);
      out += " as ";
      select(*s.maintained);
    }
    tags_clause(s.tags);
  }

  // `create materialized view v [(columns)] [using …] as select …`.
  void create_materialized_view(const CreateMaterializedViewStmt& s) {
    out += create_keyword();
    out += "materialized view ";
    if (s.if_not_exists) out += "if not exists ";
    qualified(s.view);
    optional_names(s.columns);
    module_clause(s.module_name, s.module_args);
    out += " as ";
    select(*s.select);
    tags_clause(s.tags);
  }

  // `declare [logical] schema s [version …] [using (…)] { items }`.
  void declare_schema(const DeclareSchemaStmt& s) {
    out += s.logical ? "declare logical schema " : "declare schema ";
    out += quote_identifier(s.name);
    if (!s.version.empty()) {
      out += " version ";
      string_literal(s.version);
    }
    if (!s.options.empty()) {
      out += " using (";
      module_args(s.options);
      out += ')';
    }
    out += " {";
    bool saved = in_declare_;
    in_declare_ = true;
    for (size_t i = 0; i < s.items.size(); ++i) {
      out += i ? "; " : " ";
      statement(*s.items[i]);
    }
    in_declare_ = saved;
    out += s.items.empty() ? "}" : " }";
  }

  // `seed t [(columns)] values (…), …`.
  void seed(const SeedStmt& s) {
    out += "seed ";
    out += quote_identifier(s.table);
    optional_names(s.columns);
    out += " values ";
    for (size_t r = 0; r < s.rows.size(); ++r) {
      if (r) out += ", ";
      out += '(';
      for (size_t i = 0; i < s.rows[r].size(); ++i) {
        if (i) out += ", ";
        expr(*s.rows[r][i]);
      }
      out += ')';
    }
    if (s.rows.empty()) out += "()";
  }

  // `declare lens for logical over basis { view v as select …; … }`.
  void declare_lens(const DeclareLensStmt& s) {
    out += "declare lens for ";
    out += quote_identifier(s.logical_schema);
    out += " over ";
    out += quote_identifier(s.basis_schema);
    out += " {";
    for (size_t i = 0; i < s.views.size(); ++i) {
      out += i ? "; view " : " view ";
      out += quote_identifier(s.views[i].name);
      out += " as ";
      select(*s.views[i].select);
    }
    out += s.views.empty() ? "}" : " }";
  }

  // `apply schema s [to version …] [with seed] [options (…)]`.
  void apply_schema(const ApplySchemaStmt& s) {
    out += "apply schema ";
    out += quote_identifier(s.name);
    if (!s.to_version.empty()) {
      out += " to version ";
      string_literal(s.to_version);
    }
    if (s.with_seed) out += " with seed";
    if (!s.options.empty()) {
      out += " options ";
      named_exprs(s.options, /*parens=*/true);
    }
  }

  // begin / commit / rollback [to …] / savepoint / release.
  void transaction_control(const Statement& st) {
    switch (st.kind) {
      case StmtKind::kBegin: {
        const auto& s = static_cast<const BeginStmt&>(st);
        out += "begin";
        if (!s.mode.empty()) {
          out += ' ';
          out += lower(s.mode);
        }
        break;
      }
      case StmtKind::kCommit:
        out += "commit";
        break;
      case StmtKind::kRollback: {
        const auto& s = static_cast<const RollbackStmt&>(st);
        out += "rollback";
        if (!s.savepoint.empty()) {
          out += " to ";
          out += quote_identifier(s.savepoint);
        }
        break;
      }
      case StmtKind::kSavepoint:
        out += "savepoint ";
        out += quote_identifier(static_cast<const SavepointStmt&>(st).name);
        break;
      case StmtKind::kRelease:
        out += "release ";
        out += quote_identifier(static_cast<const ReleaseStmt&>(st).name);
        break;
      default: break;
    }
  }

  // `create [unique] index i on t (columns) [where …]`.
  void create_index(const CreateIndexStmt& s) {
    out += create_keyword();
    out += s.unique ? "unique index " : "index ";
    if (s.if_not_exists) out += "if not exists ";
    target(s.index);
    out += " on ";
    qualified(s.table);
    out += " (";
    indexed_columns(s.columns);
    out += ')';
    if (s.where) {
      out += " where ";
      expr(*s.where);
    }
    tags_clause(s.tags);
  }

  // `create view v [(columns)] as select …`.
  void create_view(const CreateViewStmt& s) {
    out += create_keyword();
    out += "view ";
    if (s.if_not_exists) out += "if not exists ";
    qualified(s.view);
    optional_names(s.columns);
    out += " as ";
    select(*s.select);
    tags_clause(s.tags);
  }

  // `copy t [(cols)] to|from 'path' [(option value, …)]` or `copy (select …) to 'path' …`.
  void copy(const CopyStmt& s) {
    out += "copy ";
    if (s.query) {
      out += '(';
      select(*s.query);
      out += ')';
    } else {
      qualified(s.table);
      optional_names(s.columns);
    }
    out += s.to ? " to " : " from ";
    string_literal(s.path);
    if (s.options.empty()) return;
    out += " (";
    for (size_t i = 0; i < s.options.size(); ++i) {
      if (i) out += ", ";
      out += s.options[i].name;
      if (s.options[i].has_value) {
        out += ' ';
        string_literal(s.options[i].value);
      }
    }
    out += ')';
  }

  // `analyze [schema.table | schema.* | table]`.
  void analyze(const AnalyzeStmt& s) {
    out += "analyze";
    if (!s.schema.empty()) {
      out += ' ';
      out += quote_identifier(s.schema);
      out += s.all_in_schema ? ".*" : ".";
      if (!s.all_in_schema) out += quote_identifier(s.table);
    } else if (!s.table.empty()) {
      out += ' ';
      out += quote_identifier(s.table);
    }
  }

  bool names_;
  bool in_declare_ = false;
};

}  // namespace

std::string quote_identifier(std::string_view name) {
  bool simple = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      simple = false;
      break;
    }
  }
  if (simple && lookup_keyword(name) == Keyword::kNone) return std::string(name);
  std::string out;
  out.reserve(name.size() + 2);
  out += '"';
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string expr_to_string(const ast::Expr& expr) {
  Printer p(/*names=*/true);
  p.expr(expr);
  return std::move(p.out);
}

std::string expr_to_sql(const ast::Expr& expr) {
  Printer p(/*names=*/false);
  p.expr(expr);
  return std::move(p.out);
}

std::string select_to_string(const ast::Select& select) {
  Printer p(/*names=*/false);
  p.select(select);
  return std::move(p.out);
}

std::string statement_to_string(const ast::Statement& stmt) {
  Printer p(/*names=*/false);
  p.statement(stmt);
  return std::move(p.out);
}

std::string statement_to_string(const ast::Statement& stmt, std::string_view schema) {
  Printer p(/*names=*/false);
  p.target_schema = std::string(schema);
  p.statement(stmt);
  return std::move(p.out);
}

}  // namespace quereus
