// Parser: the first stage of the pipeline. SQL text → AST (parser/ast.h).
//
//   lexer (parser/lexer.h) → Parser → ast::Statement list → planner/
//
// Recursive descent over the whole token vector (the lexer runs first, so a lexical
// error anywhere in a batch fails the batch, as in the reference). The dialect is the
// reference Quereus one: where it deliberately rejects SQLite syntax (comma joins,
// NATURAL JOIN, UPDATE OR, UPDATE … FROM, DEFAULT VALUES, FILTER, named windows), so
// do we, with the reference's wording.
//
// Expression precedence, lowest first (the reference's levels):
//   OR XOR < AND < NOT < IS/ISNULL/NOTNULL < = == != <> < comparison (< <= > >= BETWEEN
//   IN LIKE GLOB MATCH REGEXP) < bit ops (& | << >>) < + - < * / % < unary - + ~ < ||
//   < COLLATE < -> ->> < primary
#include "parser/parser.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "parser/ast_clone.h"
#include "parser/ast_walk.h"
#include "parser/lexer.h"

namespace quereus {

namespace {

using namespace ast;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x + 32);
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y + 32);
    if (x != y) return false;
  }
  return true;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

// Where a name may be a reserved word (the reference's CONTEXTUAL_KEYWORDS and the
// per-site extras).
enum class NameCtx {
  kStrict,    // identifiers only
  kGeneral,   // + key, action, set, default, check, unique, references, on, cascade, restrict, like
  kTable,     // kGeneral + temp, temporary
  kFunction,  // kGeneral + replace
};

bool contextual_keyword(Keyword kw, NameCtx ctx) {
  if (ctx == NameCtx::kStrict) return false;
  switch (kw) {
    case Keyword::kKey:
    case Keyword::kAction:
    case Keyword::kSet:
    case Keyword::kDefault:
    case Keyword::kCheck:
    case Keyword::kUnique:
    case Keyword::kReferences:
    case Keyword::kOn:
    case Keyword::kCascade:
    case Keyword::kRestrict:
    case Keyword::kLike:
    case Keyword::kGenerated:  // table_info()'s `generated` column (functions.md)
    case Keyword::kStored:
      return true;
    case Keyword::kTemp:
    case Keyword::kTemporary:
      return ctx == NameCtx::kTable;
    case Keyword::kReplace:
      return ctx == NameCtx::kFunction;
    default:
      return false;
  }
}

template <typename T>
std::unique_ptr<T> make_at(const Token& t) {
  auto node = std::make_unique<T>();
  node->site = t.site();
  return node;
}

class ParserImpl {
 public:
  ParserImpl(std::string_view sql, const Limits& limits) : sql_(sql), toks_(Lexer::tokenize(sql)) {
    max_depth_ = limits.max_expr_depth;
    max_compound_ = limits.max_compound_select;
    max_join_tables_ = limits.max_join_tables;
  }

  std::vector<StatementPtr> parse_all() {
    std::vector<StatementPtr> out;
    for (;;) {
      while (check(TokenKind::kSemicolon)) advance();
      if (at_end()) break;
      param_counter_ = 0;
      const Token& first = peek();
      StatementPtr stmt = parse_statement();
      stmt->text_begin = first.offset;
      stmt->text_end = prev().end();
      if (stmt->site.line == 0) stmt->site = first.site();
      out.push_back(std::move(stmt));
      // A declaration block closes with '}', after which the ';' is optional.
      if (!check(TokenKind::kSemicolon) && !at_end() && prev().kind != TokenKind::kRBrace) {
        fail_expected("Expected ';' between statements");
      }
    }
    return out;
  }

  ExprPtr parse_single_expression() {
    ExprPtr e = parse_expr();
    while (check(TokenKind::kSemicolon)) advance();
    if (!at_end()) fail_expected("Expected end of expression");
    return e;
  }

 private:
  // The depth of the tree being built is bounded so that hostile input fails with an
  // error instead of exhausting the stack (here, in the printer, or when the tree is
  // destroyed). A nesting level (parentheses, subquery, prefix operator) costs
  // kNestCost units, one more operand in a chain like `a + b + c` costs 1.
  // parens_.size() at the top level of the schema-declaration item being parsed; -1
  // outside a declaration block.
  int declare_depth_ = -1;
  // The bounds of Limits (common/limits.h) the parser enforces.
  int64_t max_depth_ = 0;
  int64_t max_compound_ = 0;
  int64_t max_join_tables_ = 0;
  static constexpr int kNestCost = 4;
  void add_depth(int units) {
    depth_ += units;
    if (depth_ > max_depth_) {
      depth_ = 0;
      fail_at(peek(),
              "Expression tree is too large (maximum depth " + std::to_string(max_depth_) + ")");
    }
  }
  class DepthGuard {
   public:
    explicit DepthGuard(ParserImpl& p) : p_(p) { p_.add_depth(kNestCost); }
    ~DepthGuard() { p_.depth_ -= kNestCost; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    ParserImpl& p_;
  };
  // Counts the operands of one left-deep chain (see kMaxDepth).
  class ChainGuard {
   public:
    explicit ChainGuard(ParserImpl& p) : p_(p) {}
    // Called once per loop iteration; the first iteration (the first operand) is free.
    void next() {
      if (first_) {
        first_ = false;
        return;
      }
      ++n_;
      p_.add_depth(1);
    }
    ~ChainGuard() { p_.depth_ -= n_; }
    ChainGuard(const ChainGuard&) = delete;
    ChainGuard& operator=(const ChainGuard&) = delete;

   private:
    ParserImpl& p_;
    int n_ = 0;
    bool first_ = true;
  };

  // ------------------------------------------------------------ token helpers

  // How a token is quoted in messages: its source text, or "end of input".
  std::string describe(const Token& t) const {
    if (t.kind == TokenKind::kEof) return "end of input";
    std::string_view text = sql_.substr(t.offset, t.length);
    if (t.kind == TokenKind::kString) return std::string(text);  // already quoted
    return "'" + std::string(text) + "'";
  }

  const Token& peek(size_t k = 0) const {
    size_t i = pos_ + k;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  const Token& prev() const { return toks_[pos_ == 0 ? 0 : pos_ - 1]; }
  bool at_end() const { return peek().kind == TokenKind::kEof; }

  const Token& advance() {
    const Token& t = toks_[pos_];
    if (t.kind == TokenKind::kEof) return t;
    ++pos_;
    if (t.kind == TokenKind::kLParen) {
      parens_.push_back(&t);
    } else if (t.kind == TokenKind::kRParen && !parens_.empty()) {
      parens_.pop_back();
    }
    return t;
  }

  bool check(TokenKind k, size_t off = 0) const { return peek(off).kind == k; }
  bool check(Keyword kw, size_t off = 0) const { return peek(off).is(kw); }
  // A bare (unquoted) identifier spelled `word`: contextual keywords such as NULLS.
  bool check_word(std::string_view word, size_t off = 0) const {
    const Token& t = peek(off);
    return t.kind == TokenKind::kIdentifier && iequals(t.text, word);
  }
  bool match(TokenKind k) {
    if (!check(k)) return false;
    advance();
    return true;
  }
  bool match(Keyword kw) {
    if (!check(kw)) return false;
    advance();
    return true;
  }
  bool match_word(std::string_view word) {
    if (!check_word(word)) return false;
    advance();
    return true;
  }

  [[noreturn]] void fail_at(const Token& t, const std::string& message,
                            StatusCode code = StatusCode::kSyntax) const {
    throw Error(code, message, t.site());
  }
  // "<expectation> but found '<token>'", at the current token. When a ')' is missing
  // the message also points at the '(' it would close.
  [[noreturn]] void fail_expected(const std::string& expectation) const {
    std::string msg = expectation + " but found " + describe(peek());
    // A parenthesized join (`from (a join b on …)`), refused on purpose: say what to write.
    if (expectation == "Expected table name" && check(TokenKind::kLParen) && is_name(peek(1), NameCtx::kTable))
      msg += "; parenthesized joins are not supported: write the joins without parentheses (`a join b on … join c "
             "on …`), or make the inner join a subquery: `(select … from a join b on …) as ab`";
    throw Error(StatusCode::kSyntax, msg, peek().site());
  }
  [[noreturn]] void fail_unsupported(const Token& t, const std::string& message) const {
    throw Error(StatusCode::kUnsupported, message, t.site());
  }

  const Token& expect(TokenKind k, const char* expectation) {
    if (check(k)) return advance();
    if (k == TokenKind::kRParen && !parens_.empty()) {
      const Token& open = *parens_.back();
      std::string msg = std::string(expectation) + " but found " + describe(peek()) +
                        " (unterminated '(' opened at line " + std::to_string(open.line) +
                        ", column " + std::to_string(open.column) + ")";
      throw Error(StatusCode::kSyntax, msg, peek().site());
    }
    fail_expected(expectation);
  }
  const Token& expect(Keyword kw, const char* expectation) {
    if (check(kw)) return advance();
    fail_expected(expectation);
  }
  void expect_word(std::string_view word, const char* expectation) {
    if (!match_word(word)) fail_expected(expectation);
  }

  bool is_name(const Token& t, NameCtx ctx) const {
    if (t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kQuotedIdentifier) return true;
    return t.kind == TokenKind::kKeyword && contextual_keyword(t.keyword, ctx);
  }
  bool check_name(NameCtx ctx, size_t off = 0) const { return is_name(peek(off), ctx); }
  std::string expect_name(NameCtx ctx, const char* expectation) {
    if (!check_name(ctx)) fail_expected(expectation);
    return advance().text;
  }

  // A collation name: any word, so an unknown name such as `natural` reaches the
  // planner's "Unknown collation" check instead of failing here.
  std::string expect_collation_name() {
    const Token& t = peek();
    if (t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kQuotedIdentifier ||
        t.kind == TokenKind::kKeyword) {
      return advance().text;
    }
    fail_expected("Expected collation name after COLLATE");
  }

  // [schema.]name
  QualifiedName expect_qualified_name(NameCtx ctx, const char* expectation) {
    QualifiedName q;
    q.site = peek().site();
    if (!check_name(ctx)) fail_expected(expectation);
    if (check(TokenKind::kDot, 1) && is_name(peek(2), ctx)) {
      q.schema = advance().text;
      advance();  // .
    }
    q.name = advance().text;
    return q;
  }

  // True when the tokens from `off` start a query expression, after any number of '('.
  bool starts_query(size_t off, bool allow_parens) const {
    while (allow_parens && check(TokenKind::kLParen, off)) ++off;
    const Token& t = peek(off);
    return t.is(Keyword::kSelect) || t.is(Keyword::kValues) || t.is(Keyword::kWith) ||
           t.is(Keyword::kInsert) || t.is(Keyword::kUpdate) || t.is(Keyword::kDelete) ||
           starts_replace_into(off);
  }
  // REPLACE INTO … (and not the replace() function).
  bool starts_replace_into(size_t off) const {
    return check(Keyword::kReplace, off) && check(Keyword::kInto, off + 1);
  }

  // ------------------------------------------------------------ statements

  StatementPtr parse_statement() {
    const Token& start = peek();
    std::unique_ptr<WithClause> with;
    if (check(Keyword::kWith)) with = parse_with();

    const Token& t = peek();
    if (t.is(Keyword::kSelect) || t.is(Keyword::kValues) || t.kind == TokenKind::kLParen) {
      auto stmt = make_at<SelectStmt>(start);
      stmt->select = parse_select_body(std::move(with));
      stmt->select->site = start.site();
      return stmt;
    }
    if (t.is(Keyword::kInsert) || starts_replace_into(0))
      return parse_insert(std::move(with), start);
    if (t.is(Keyword::kUpdate)) return parse_update(std::move(with), start);
    if (t.is(Keyword::kDelete)) return parse_delete(std::move(with), start);
    if (with) fail_expected("Expected SELECT, VALUES, INSERT, UPDATE, or DELETE after WITH clause");

    if (t.kind == TokenKind::kKeyword) {
      switch (t.keyword) {
        case Keyword::kCreate:
          return parse_create();
        case Keyword::kDrop:
          return parse_drop();
        case Keyword::kBegin:
          return parse_begin();
        case Keyword::kCommit:
        case Keyword::kEnd: {
          auto stmt = make_at<CommitStmt>(advance());
          match(Keyword::kTransaction);
          return stmt;
        }
        case Keyword::kRollback:
          return parse_rollback();
        case Keyword::kSavepoint: {
          auto stmt = make_at<SavepointStmt>(advance());
          stmt->name = expect_name(NameCtx::kGeneral, "Expected savepoint name after SAVEPOINT");
          return stmt;
        }
        case Keyword::kRelease: {
          auto stmt = make_at<ReleaseStmt>(advance());
          match(Keyword::kSavepoint);
          stmt->name =
              expect_name(NameCtx::kGeneral, "Expected savepoint name after RELEASE [SAVEPOINT]");
          return stmt;
        }
        case Keyword::kPragma:
          return parse_pragma();
        case Keyword::kAnalyze:
          return parse_analyze();
        case Keyword::kAlter:
          return parse_alter();
        case Keyword::kDeclare:
          return parse_declare();
        case Keyword::kApply:
          return parse_apply();
        case Keyword::kDiff: {
          auto stmt = make_at<DiffSchemaStmt>(advance());
          expect_word("schema", "Expected SCHEMA after DIFF");
          stmt->name = expect_name(NameCtx::kTable, "Expected schema name");
          return stmt;
        }
        case Keyword::kExplain: {
          const Token& at = advance();
          if (!check_word("schema")) {
            fail_unsupported(at, "EXPLAIN is supported only as EXPLAIN SCHEMA name; use "
                                  "query_plan('<sql>') to see a query's plan");
          }
          advance();
          auto stmt = make_at<ExplainSchemaStmt>(at);
          stmt->name = expect_name(NameCtx::kTable, "Expected schema name");
          if (match_word("version")) {
            if (!check(TokenKind::kString)) fail_expected("Expected version string after VERSION");
            stmt->version = advance().text;
          }
          return stmt;
        }
        default:
          break;
      }
    }
    if (check_word("copy")) return parse_copy();
    if (check_word("refresh")) {
      auto stmt = make_at<RefreshMaterializedViewStmt>(advance());
      expect_word("materialized", "Expected MATERIALIZED after REFRESH");
      expect(Keyword::kView, "Expected VIEW after REFRESH MATERIALIZED");
      stmt->view = expect_qualified_name(NameCtx::kTable, "Expected materialized view name");
      return stmt;
    }
    fail_expected("Expected statement type (SELECT, INSERT, UPDATE, DELETE, VALUES, CREATE, etc.)");
  }

  std::unique_ptr<WithClause> parse_with() {
    expect(Keyword::kWith, "Expected WITH");
    auto with = std::make_unique<WithClause>();
    with->recursive = match(Keyword::kRecursive);
    do {
      CommonTableExpr cte;
      cte.site = peek().site();
      cte.name = expect_name(NameCtx::kGeneral, "Expected CTE name");
      if (match(TokenKind::kLParen)) {
        if (!check(TokenKind::kRParen)) {
          do {
            cte.columns.push_back(
                expect_name(NameCtx::kGeneral, "Expected column name in CTE definition"));
          } while (match(TokenKind::kComma) && !check(TokenKind::kRParen));
        }
        expect(TokenKind::kRParen, "Expected ')' after CTE column list");
      }
      expect(Keyword::kAs, "Expected 'AS' after CTE name");
      if (match_word("materialized")) {
        cte.materialization = CommonTableExpr::Materialization::kMaterialized;
      } else if (check(Keyword::kNot) && check_word("materialized", 1)) {
        advance();
        advance();
        cte.materialization = CommonTableExpr::Materialization::kNotMaterialized;
      }
      expect(TokenKind::kLParen, "Expected '(' before CTE query");
      cte.select = parse_query(/*require_returning=*/true);
      expect(TokenKind::kRParen, "Expected ')' after CTE query");
      with->ctes.push_back(std::move(cte));
    } while (match(TokenKind::kComma));
    if (check_word("option") && check(TokenKind::kLParen, 1)) {
      advance();
      advance();
      expect_word("maxrecursion", "Expected MAXRECURSION in OPTION clause");
      const std::string& n = peek().text;
      if (!check(TokenKind::kInteger) || n.size() > 18 ||
          n.find_first_of("xX") != std::string::npos) {
        fail_expected("Expected integer value after MAXRECURSION");
      }
      with->max_recursion = std::stoll(advance().text);
      expect(TokenKind::kRParen, "Expected ')' after OPTION clause");
    }
    return with;
  }

  // A query expression in a relation position: [WITH] SELECT … | VALUES … | (query) |
  // INSERT/UPDATE/DELETE … RETURNING (stored as Select::dml).
  std::unique_ptr<Select> parse_query(bool require_returning) {
    DepthGuard guard(*this);
    const Token& start = peek();
    std::unique_ptr<WithClause> with;
    if (check(Keyword::kWith)) with = parse_with();
    const Token& t = peek();
    if (t.is(Keyword::kInsert) || starts_replace_into(0) || t.is(Keyword::kUpdate) ||
        t.is(Keyword::kDelete)) {
      auto sel = std::make_unique<Select>();
      sel->site = start.site();
      StatementPtr stmt;
      const std::vector<ResultColumn>* returning = nullptr;
      const char* kind = "INSERT";
      if (t.is(Keyword::kUpdate)) {
        auto u = parse_update(std::move(with), start);
        returning = &u->returning;
        kind = "UPDATE";
        stmt = std::move(u);
      } else if (t.is(Keyword::kDelete)) {
        auto d = parse_delete(std::move(with), start);
        returning = &d->returning;
        kind = "DELETE";
        stmt = std::move(d);
      } else {
        auto i = parse_insert(std::move(with), start);
        returning = &i->returning;
        stmt = std::move(i);
      }
      if (require_returning && returning->empty()) {
        fail_at(prev(), std::string(kind) + " in a relation position must have a RETURNING clause");
      }
      stmt->text_begin = start.offset;
      stmt->text_end = prev().end();
      sel->dml = std::move(stmt);
      return sel;
    }
    if (!(t.is(Keyword::kSelect) || t.is(Keyword::kValues) || t.kind == TokenKind::kLParen)) {
      fail_expected("Expected SELECT, VALUES, INSERT, UPDATE, or DELETE in query expression");
    }
    auto sel = parse_select_body(std::move(with));
    sel->site = start.site();
    return sel;
  }

  static bool is_plain(const Select& s) {
    return !s.with && s.compounds.empty() && s.order_by.empty() && !s.limit && !s.offset && !s.dml;
  }

  // leg { compound-op leg } [ORDER BY …] [LIMIT …]; `with` (already parsed) is attached.
  std::unique_ptr<Select> parse_select_body(std::unique_ptr<WithClause> with) {
    auto sel = std::make_unique<Select>();
    sel->site = peek().site();
    bool parenthesized = parse_leg(sel->core, /*first=*/true);
    for (;;) {
      CompoundOp op;
      if (match(Keyword::kUnion)) {
        op = match(Keyword::kAll) ? CompoundOp::kUnionAll : CompoundOp::kUnion;
      } else if (match(Keyword::kIntersect)) {
        op = CompoundOp::kIntersect;
      } else if (match(Keyword::kExcept)) {
        op = CompoundOp::kExcept;
      } else if (match(Keyword::kDiff)) {
        op = CompoundOp::kDiff;
      } else {
        break;
      }
      // Parenthesized operands group as written (left-associative): after `(A) op (B)`,
      // a further operator takes the whole of it as its left operand. Unparenthesized
      // chains keep their right-leaning grouping (sql-select.md 2.1).
      if (parenthesized && !sel->compounds.empty()) {
        auto group = std::make_unique<Select>();
        group->site = sel->site;
        group->core = std::move(sel->core);
        group->compounds = std::move(sel->compounds);
        sel->core = SelectCore{};
        sel->compounds.clear();
        sel->core.nested = std::move(group);
      }
      CompoundLeg leg;
      leg.op = op;
      if (check(Keyword::kExists) && (check(Keyword::kLeft, 1) || check(Keyword::kRight, 1))) {
        if (op == CompoundOp::kDiff) {
          fail_at(peek(), "Membership columns (EXISTS LEFT/RIGHT AS) are not allowed on DIFF");
        }
        leg.membership = parse_existence_columns(/*require_side=*/true);
      }
      if (static_cast<int64_t>(sel->compounds.size()) + 2 > max_compound_) {
        fail_at(prev(), "Too many terms in compound SELECT (maximum " + std::to_string(max_compound_) +
                            ", the limit max_compound_select)");
      }
      parenthesized = parse_leg(leg.core, /*first=*/false);
      sel->compounds.push_back(std::move(leg));
    }
    parse_select_trailers(*sel);  // the reference also accepts them before ORDER BY
    parse_order_limit(*sel);
    parse_select_trailers(*sel);
    // `(select …)` alone (no compound, ORDER BY, LIMIT or trailing clause around it) is
    // the inner query.
    if (sel->compounds.empty() && sel->order_by.empty() && !sel->limit && sel->core.nested &&
        sel->schema_path.empty() && sel->defaults.empty() &&
        !(with && sel->core.nested->with)) {
      auto inner = std::move(sel->core.nested);
      if (with) inner->with = std::move(with);
      return inner;
    }
    sel->with = std::move(with);
    return sel;
  }

  // One operand of a compound; true when it was written in parentheses.
  bool parse_leg(SelectCore& core, bool first) {
    if (check(Keyword::kSelect)) {
      parse_select_core(core);
    } else if (check(Keyword::kValues)) {
      parse_values(core);
    } else if (check(TokenKind::kLParen) && starts_query(1, true)) {
      advance();
      auto inner = parse_query(/*require_returning=*/true);
      expect(TokenKind::kRParen, "Expected ')' after parenthesized query");
      if (is_plain(*inner)) {
        core = std::move(inner->core);
      } else {
        core.nested = std::move(inner);
      }
      return true;
    } else if (!first && starts_query(0, false)) {
      core.nested = parse_query(/*require_returning=*/true);
    } else {
      fail_expected(first
                        ? "Expected SELECT or VALUES"
                        : "Expected SELECT, VALUES, or DML statement after set operation keyword");
    }
    return false;
  }

  void parse_values(SelectCore& core) {
    expect(Keyword::kValues, "Expected VALUES");
    do {
      expect(TokenKind::kLParen, "Expected '(' before values");
      std::vector<ExprPtr> row;
      if (!check(TokenKind::kRParen)) {
        do {
          row.push_back(parse_expr());
        } while (match(TokenKind::kComma));
      }
      expect(TokenKind::kRParen, "Expected ')' after values");
      core.values.push_back(std::move(row));
    } while (match(TokenKind::kComma));
  }

  void parse_select_core(SelectCore& core) {
    expect(Keyword::kSelect, "Expected SELECT");
    if (match(Keyword::kDistinct)) {
      core.distinct = true;
    } else {
      match(Keyword::kAll);
    }
    core.columns = parse_result_columns();
    if (match(Keyword::kFrom)) {
      core.from = parse_join_chain();
      if (check(TokenKind::kComma)) {
        fail_unsupported(peek(), "SELECT with multiple FROM sources (joins) not supported; write `a join b on …` "
                                 "(`a cross join b` for every pairing) instead of `a, b`");
      }
    }
    if (match(Keyword::kWhere)) core.where = parse_expr();
    if (check(Keyword::kGroup)) {
      advance();
      expect(Keyword::kBy, "Expected 'BY' after 'GROUP'");
      do {
        core.group_by.push_back(parse_expr());
      } while (match(TokenKind::kComma));
    }
    if (match(Keyword::kHaving)) core.having = parse_expr();
    if (check_word("window") && is_name(peek(1), NameCtx::kGeneral)) {
      fail_unsupported(peek(),
                       "Window name references are not yet supported. Use explicit window specs.");
    }
  }

  std::vector<ResultColumn> parse_result_columns() {
    std::vector<ResultColumn> cols;
    do {
      ResultColumn rc;
      rc.site = peek().site();
      if (match(TokenKind::kStar)) {
        rc.kind = ResultColumn::Kind::kStar;
      } else if (check_name(NameCtx::kGeneral) && check(TokenKind::kDot, 1) &&
                 check(TokenKind::kStar, 2)) {
        rc.kind = ResultColumn::Kind::kTableStar;
        rc.table = advance().text;
        advance();
        advance();
      } else {
        rc.kind = ResultColumn::Kind::kExpr;
        rc.expr = parse_expr();
        if (match(Keyword::kAs)) {
          if (check_name(NameCtx::kGeneral) || check(TokenKind::kString)) {
            rc.alias = advance().text;
          } else {
            fail_expected("Expected identifier or string after 'AS'");
          }
        } else if (implicit_alias_here()) {
          rc.alias = advance().text;
        }
        if (check(Keyword::kWith) && check_word("inverse", 1)) {
          advance();
          advance();
          rc.inverse = parse_named_exprs("WITH INVERSE", /*parens=*/true);
        }
      }
      cols.push_back(std::move(rc));
    } while (match(TokenKind::kComma));
    return cols;
  }

  // An alias written without AS: a (quoted) identifier not followed by '(' or '.'.
  bool implicit_alias_here() const {
    const Token& t = peek();
    if (t.kind != TokenKind::kIdentifier && t.kind != TokenKind::kQuotedIdentifier) return false;
    if (check(TokenKind::kLParen, 1) || check(TokenKind::kDot, 1)) return false;
    // `… window w as (…)` is the (unsupported) WINDOW clause, not an alias.
    if (t.kind == TokenKind::kIdentifier && iequals(t.text, "window") &&
        is_name(peek(1), NameCtx::kGeneral)) {
      return false;
    }
    // Inside a schema declaration an item keyword at the item's top level starts the
    // next item (sql-ddl.md "Item keywords and bare aliases").
    if (t.kind == TokenKind::kIdentifier && declare_depth_ >= 0 &&
        static_cast<int>(parens_.size()) == declare_depth_ && is_declare_item_word(t.text)) {
      return false;
    }
    return true;
  }

  static bool is_declare_item_word(std::string_view w) {
    for (const char* k : {"materialized", "seed", "domain", "collation", "import"}) {
      if (iequals(w, k)) return true;
    }
    return false;
  }

  void parse_order_limit(Select& sel) {
    if (check(Keyword::kOrder)) {
      advance();
      expect(Keyword::kBy, "Expected 'BY' after 'ORDER'");
      sel.order_by = parse_ordering_terms();
    }
    if (match(Keyword::kLimit)) {
      sel.limit = parse_expr();
      if (match(Keyword::kOffset)) {
        sel.offset = parse_expr();
      } else if (match(TokenKind::kComma)) {
        // LIMIT offset, count
        sel.offset = std::move(sel.limit);
        sel.limit = parse_expr();
      }
    }
  }

  std::vector<OrderingTerm> parse_ordering_terms() {
    std::vector<OrderingTerm> terms;
    do {
      OrderingTerm term;
      term.expr = parse_expr();
      if (match(Keyword::kDesc)) {
        term.desc = true;
      } else {
        match(Keyword::kAsc);
      }
      if (match_word("nulls")) {
        if (match_word("first")) {
          term.nulls = OrderingTerm::Nulls::kFirst;
        } else if (match_word("last")) {
          term.nulls = OrderingTerm::Nulls::kLast;
        } else {
          fail_expected("Expected 'FIRST' or 'LAST' after 'NULLS'");
        }
      }
      terms.push_back(std::move(term));
    } while (match(TokenKind::kComma));
    return terms;
  }

  // ------------------------------------------------------------ FROM

  bool at_join_keyword() const {
    return check(Keyword::kJoin) || check(Keyword::kInner) || check(Keyword::kLeft) ||
           check(Keyword::kRight) || check(Keyword::kFull) || check(Keyword::kCross);
  }

  TableSourcePtr parse_join_chain() {
    TableSourcePtr left = parse_table_source();
    int64_t tables = 1;
    for (;;) {
      if (check(Keyword::kNatural)) {
        fail_unsupported(peek(), "NATURAL JOIN is not supported; use JOIN … ON or USING");
      }
      if (!at_join_keyword()) break;
      const Token& start = peek();
      JoinKind kind = JoinKind::kInner;
      if (match(Keyword::kLeft)) {
        match(Keyword::kOuter);
        kind = JoinKind::kLeft;
      } else if (match(Keyword::kRight)) {
        match(Keyword::kOuter);
        kind = JoinKind::kRight;
      } else if (match(Keyword::kFull)) {
        match(Keyword::kOuter);
        kind = JoinKind::kFull;
      } else if (match(Keyword::kCross)) {
        kind = JoinKind::kCross;
      } else {
        match(Keyword::kInner);
      }
      expect(Keyword::kJoin, "Expected 'JOIN'");
      if (++tables > max_join_tables_) {
        fail_at(prev(), "At most " + std::to_string(max_join_tables_) +
                            " tables in a join (the limit max_join_tables)");
      }
      bool lateral = match(Keyword::kLateral);
      auto join = std::make_unique<TableSource>();
      join->kind = TableSource::Kind::kJoin;
      join->site = start.site();
      join->join = kind;
      join->left = std::move(left);
      join->right = parse_table_source();
      join->right->lateral = lateral;
      // A table-valued function whose arguments read a column (`join json_each(t.tags) j
      // on …`) reads the sources before it, as in SQLite: it is a lateral source.
      if (!lateral && join->right->kind == TableSource::Kind::kFunction &&
          std::any_of(join->right->function_args.begin(), join->right->function_args.end(), [](const ExprPtr& a) {
            return a && any_expr_deep(*a, [](const Expr& x) { return x.kind == ExprKind::kColumn; });
          }))
        join->right->lateral = true;
      if (match(Keyword::kOn)) {
        join->on = parse_expr();
      } else if (match(Keyword::kUsing)) {
        expect(TokenKind::kLParen, "Expected '(' after 'USING'");
        do {
          join->using_columns.push_back(expect_name(NameCtx::kGeneral, "Expected column name"));
        } while (match(TokenKind::kComma));
        expect(TokenKind::kRParen, "Expected ')' after USING columns");
      } else if (kind != JoinKind::kCross && !join->right->lateral) {
        // A lateral join's ON is optional, and so is that of a table-valued function reading
        // the sources before it (`join json_each(t.doc) e`, as SQLite allows).
        fail_expected("Expected 'ON' or 'USING' after JOIN");
      }
      if (check(Keyword::kExists) &&
          (check(Keyword::kAs, 1) || check(Keyword::kLeft, 1) || check(Keyword::kRight, 1))) {
        join->exists_columns = parse_existence_columns(/*require_side=*/false);
      }
      left = std::move(join);
    }
    return left;
  }

  TableSourcePtr parse_table_source() {
    const Token& start = peek();
    auto src = std::make_unique<TableSource>();
    src->site = start.site();
    if (check(TokenKind::kLParen) && starts_query(1, true)) {
      advance();
      src->kind = TableSource::Kind::kSubquery;
      src->subquery = parse_query(/*require_returning=*/true);
      expect(TokenKind::kRParen, "Expected ')' after subquery");
      parse_source_alias(*src, /*allow_columns=*/true);
      return src;
    }
    if (check(TokenKind::kLParen) && !starts_query(1, true) && is_name(peek(1), NameCtx::kTable))
      fail_expected("Expected table name");  // the reference's text; the hint follows
    if (check_name(NameCtx::kTable) && check(TokenKind::kLParen, 1)) {
      src->kind = TableSource::Kind::kFunction;
      src->function_name = advance().text;
      advance();  // (
      if (!check(TokenKind::kRParen)) {
        do {
          src->function_args.push_back(parse_expr());
        } while (match(TokenKind::kComma));
      }
      expect(TokenKind::kRParen, "Expected ')' after table function arguments");
      parse_source_alias(*src, /*allow_columns=*/true);
      return src;
    }
    if (!check_name(NameCtx::kTable)) fail_expected("Expected table name");
    src->kind = TableSource::Kind::kTable;
    src->table = expect_qualified_name(NameCtx::kTable, "Expected table name");
    parse_source_alias(*src, /*allow_columns=*/false);
    return src;
  }

  void parse_source_alias(TableSource& src, bool allow_columns) {
    if (match(Keyword::kAs)) {
      src.alias = expect_name(NameCtx::kGeneral, "Expected alias after 'AS'");
    } else if (implicit_alias_here()) {
      src.alias = advance().text;
    }
    if (allow_columns && !src.alias.empty() && match(TokenKind::kLParen)) {
      if (!check(TokenKind::kRParen)) {
        do {
          src.alias_columns.push_back(
              expect_name(NameCtx::kGeneral, "Expected column name in alias column list"));
        } while (match(TokenKind::kComma) && !check(TokenKind::kRParen));
      }
      expect(TokenKind::kRParen, "Expected ')' after alias column list");
    }
  }

  // ------------------------------------------------------------ DML

  ConflictClause parse_conflict_action(const char* expectation) {
    if (match(Keyword::kRollback)) return ConflictClause::kRollback;
    if (match(Keyword::kAbort)) return ConflictClause::kAbort;
    if (match(Keyword::kFail)) return ConflictClause::kFail;
    if (match(Keyword::kIgnore)) return ConflictClause::kIgnore;
    if (match(Keyword::kReplace)) return ConflictClause::kReplace;
    fail_expected(expectation);
  }

  // ------------------------------------------------------------ Quereus clauses

  // EXISTS [LEFT|RIGHT] AS name { , EXISTS … }
  std::vector<ExistenceColumn> parse_existence_columns(bool require_side) {
    std::vector<ExistenceColumn> cols;
    do {
      ExistenceColumn c;
      c.site = peek().site();
      expect(Keyword::kExists, "Expected EXISTS");
      if (match(Keyword::kLeft)) {
        c.side = ExistenceColumn::Side::kLeft;
      } else if (match(Keyword::kRight)) {
        c.side = ExistenceColumn::Side::kRight;
      } else if (require_side) {
        fail_expected("Expected LEFT or RIGHT after EXISTS");
      }
      expect(Keyword::kAs, "Expected AS in existence column");
      c.name = expect_name(NameCtx::kGeneral, "Expected existence column name after AS");
      cols.push_back(std::move(c));
    } while (check(TokenKind::kComma) && check(Keyword::kExists, 1) && advance().kind != TokenKind::kEof);
    return cols;
  }

  // name = expr { , name = expr }, in parentheses when `parens` (else parentheses are
  // optional). `what` names the clause in messages; duplicate names are rejected.
  std::vector<NamedExpr> parse_named_exprs(const std::string& what, bool parens) {
    std::vector<NamedExpr> out;
    bool open = parens || (check(TokenKind::kLParen) && check_name(NameCtx::kGeneral, 1) &&
                           check(TokenKind::kEq, 2));
    if (open) expect(TokenKind::kLParen, ("Expected '(' after " + what).c_str());
    if (!(open && check(TokenKind::kRParen))) {
      do {
        NamedExpr e;
        e.site = peek().site();
        e.name = expect_name(NameCtx::kGeneral, ("Expected column name in " + what).c_str());
        for (const NamedExpr& prev_entry : out) {
          if (iequals(prev_entry.name, e.name)) {
            fail_at(prev(), what == "WITH CONTEXT"
                                ? "mutation context variable '" + e.name + "' supplied more than once"
                                : "Duplicate column '" + e.name + "' in " + what);
          }
        }
        expect(TokenKind::kEq, ("Expected '=' after name in " + what).c_str());
        e.value = parse_expr();
        out.push_back(std::move(e));
      } while (match(TokenKind::kComma));
    }
    if (open) expect(TokenKind::kRParen, ("Expected ')' after " + what).c_str());
    return out;
  }

  // WITH TAGS has been consumed: ( [key = literal { , … }] ), or for DROP TAGS (key, …).
  TagList parse_tag_list(bool keys_only) {
    TagList tags;
    expect(TokenKind::kLParen, "Expected '(' after TAGS");
    if (!check(TokenKind::kRParen)) {
      do {
        NamedExpr t;
        t.site = peek().site();
        if (!(check(TokenKind::kIdentifier) || check(TokenKind::kQuotedIdentifier) ||
              check(TokenKind::kKeyword))) {
          fail_expected("Expected tag key");
        }
        t.name = advance().text;
        if (!keys_only) {
          expect(TokenKind::kEq, "Expected '=' after tag key");
          const Token& v = peek();
          bool literal = v.kind == TokenKind::kString || v.kind == TokenKind::kInteger ||
                         v.kind == TokenKind::kFloat || v.is(Keyword::kNull) ||
                         v.is(Keyword::kTrue) || v.is(Keyword::kFalse) ||
                         ((v.kind == TokenKind::kMinus || v.kind == TokenKind::kPlus) &&
                          (peek(1).kind == TokenKind::kInteger || peek(1).kind == TokenKind::kFloat));
          if (!literal) fail_expected("Expected tag value (string, number, TRUE, FALSE, or NULL)");
          t.value = parse_simple_value("Expected tag value");
        }
        tags.push_back(std::move(t));
      } while (match(TokenKind::kComma));
    }
    expect(TokenKind::kRParen, "Expected ')' after tags");
    return tags;
  }

  bool at_with_word(std::string_view word) const {
    return check(Keyword::kWith) && check_word(word, 1);
  }

  // WITH TAGS ( … ) when present.
  bool parse_optional_tags(TagList& tags) {
    if (!at_with_word("tags")) return false;
    if (!tags.empty()) fail_at(peek(), "Duplicate WITH TAGS clause");
    advance();
    advance();
    tags = parse_tag_list(/*keys_only=*/false);
    return true;
  }

  // WITH SCHEMA a, b: the search path for unqualified names.
  std::vector<std::string> parse_schema_path() {
    advance();  // WITH
    advance();  // SCHEMA
    std::vector<std::string> path;
    do {
      path.push_back(expect_name(NameCtx::kTable, "Expected schema name after WITH SCHEMA"));
    } while (match(TokenKind::kComma));
    return path;
  }

  // The trailing clauses of a query expression: WITH SCHEMA … and WITH DEFAULTS (…).
  void parse_select_trailers(Select& sel) {
    for (;;) {
      if (at_with_word("schema") && sel.schema_path.empty()) {
        sel.schema_path = parse_schema_path();
      } else if (at_with_word("defaults") && sel.defaults.empty()) {
        advance();
        advance();
        sel.defaults = parse_named_exprs("WITH DEFAULTS", /*parens=*/true);
      } else {
        return;
      }
    }
  }

  // WITH CONTEXT / WITH TAGS / WITH SCHEMA on a DML statement, in any order.
  void parse_dml_clauses(DmlClauses& d) {
    for (;;) {
      if (at_with_word("context")) {
        if (!d.context.empty()) fail_at(peek(), "Duplicate WITH CONTEXT clause");
        advance();
        advance();
        d.context = parse_named_exprs("WITH CONTEXT", /*parens=*/false);
      } else if (at_with_word("tags")) {
        parse_optional_tags(d.tags);
      } else if (at_with_word("schema")) {
        if (!d.schema_path.empty()) fail_at(peek(), "Duplicate WITH SCHEMA clause");
        d.schema_path = parse_schema_path();
      } else {
        return;
      }
    }
  }

  // SET a = e, … (row-value targets `(a, b) = …` are rejected, as in the reference)
  std::vector<Assignment> parse_assignments() {
    std::vector<Assignment> out;
    do {
      Assignment a;
      a.columns.push_back(expect_name(NameCtx::kGeneral, "Expected column name in SET clause"));
      expect(TokenKind::kEq, "Expected '=' after column name in SET clause");
      a.value = parse_expr();
      out.push_back(std::move(a));
    } while (match(TokenKind::kComma));
    return out;
  }

  // ON CONFLICT [(cols) [WHERE e]] DO NOTHING | DO UPDATE SET … [WHERE e]
  UpsertClause parse_upsert() {
    UpsertClause u;
    u.site = peek().site();
    advance();  // ON
    advance();  // CONFLICT
    if (match(TokenKind::kLParen)) {
      do {
        u.target.push_back(parse_pk_column());
      } while (match(TokenKind::kComma));
      expect(TokenKind::kRParen, "Expected ')' after conflict target columns");
      if (match(Keyword::kWhere)) u.target_where = parse_expr();
    }
    expect_word("do", "Expected DO after ON CONFLICT");
    if (match_word("nothing")) {
      u.do_nothing = true;
    } else if (match(Keyword::kUpdate)) {
      u.do_nothing = false;
      expect(Keyword::kSet, "Expected SET after DO UPDATE");
      u.set = parse_assignments();
      if (match(Keyword::kWhere)) u.where = parse_expr();
    } else {
      fail_expected("Expected NOTHING or UPDATE after DO");
    }
    return u;
  }

  std::unique_ptr<InsertStmt> parse_insert(std::unique_ptr<WithClause> with, const Token& start) {
    auto stmt = make_at<InsertStmt>(start);
    stmt->with = std::move(with);
    if (match(Keyword::kReplace)) {
      stmt->replace = true;
      stmt->or_action = ConflictClause::kReplace;
    } else {
      expect(Keyword::kInsert, "Expected INSERT");
      if (match(Keyword::kOr)) {
        stmt->or_action = parse_conflict_action(
            "Expected conflict resolution (ROLLBACK, ABORT, FAIL, IGNORE, REPLACE) after OR");
      }
    }
    match(Keyword::kInto);
    stmt->table = expect_qualified_name(NameCtx::kTable, "Expected table name");
    if (match(TokenKind::kLParen)) {
      do {
        stmt->columns.push_back(expect_name(NameCtx::kGeneral, "Expected column name"));
      } while (match(TokenKind::kComma));
      expect(TokenKind::kRParen, "Expected ')' after column list");
    }
    parse_dml_clauses(*stmt);
    if (check(Keyword::kValues) || check(Keyword::kSelect) || check(Keyword::kWith) ||
        (check(TokenKind::kLParen) && starts_query(1, true))) {
      stmt->source = parse_query(/*require_returning=*/false);
    } else if (check(Keyword::kInsert) || check(Keyword::kUpdate) || check(Keyword::kDelete)) {
      stmt->source = parse_query(/*require_returning=*/true);
    } else {
      fail_expected("Expected VALUES, SELECT, or DML (with RETURNING) after INSERT");
    }
    while (check(Keyword::kOn) && check(Keyword::kConflict, 1)) {
      if (stmt->or_action != ConflictClause::kNone) {
        fail_at(peek(), "Cannot use both 'INSERT OR ...' and 'ON CONFLICT' in the same statement");
      }
      stmt->upserts.push_back(parse_upsert());
    }
    parse_dml_clauses(*stmt);
    if (match(Keyword::kReturning)) stmt->returning = parse_result_columns();
    return stmt;
  }



  // An UPDATE / DELETE target: `[schema.]table [as alias]`, or an inline subquery
  // `(select …) [as] alias [(column, …)]` (the alias is required: it names the target).
  template <class Stmt>
  void parse_write_target(Stmt& stmt) {
    if (check(TokenKind::kLParen) && starts_query(1, true)) {
      advance();
      stmt.target_query = parse_query(/*require_returning=*/true);
      expect(TokenKind::kRParen, "Expected ')' after the subquery target");
      const bool as = match(Keyword::kAs);
      if (!as && (check(Keyword::kSet) || check(Keyword::kWhere) || check(Keyword::kReturning)))
        fail_expected("A subquery write target requires an alias naming it");
      stmt.alias = expect_name(NameCtx::kGeneral, "A subquery write target requires an alias naming it");
      if (match(TokenKind::kLParen)) {
        do stmt.target_columns.push_back(expect_name(NameCtx::kGeneral, "Expected a column name"));
        while (match(TokenKind::kComma));
        expect(TokenKind::kRParen, "Expected ')' after the target's column list");
      }
      stmt.table.name = stmt.alias;
      stmt.table.site = stmt.target_query->site;
      return;
    }
    stmt.table = expect_qualified_name(NameCtx::kTable, "Expected table name");
    if (match(Keyword::kAs))
      stmt.alias = expect_name(NameCtx::kGeneral, "Expected alias after 'AS'");
  }

  std::unique_ptr<UpdateStmt> parse_update(std::unique_ptr<WithClause> with, const Token& start) {
    auto stmt = make_at<UpdateStmt>(start);
    stmt->with = std::move(with);
    expect(Keyword::kUpdate, "Expected UPDATE");
    // UPDATE OR <action> is deliberately unsupported (the reference reads OR as a
    // missing table name and says so).
    parse_write_target(*stmt);
    parse_dml_clauses(*stmt);
    expect(Keyword::kSet, "Expected 'SET' after table name in UPDATE");
    stmt->assignments = parse_assignments();
    TableSourcePtr from;
    if (match(Keyword::kFrom)) {
      from = parse_join_chain();
      // SQLite's multi-table form `from u, v`: each comma is a cross join.
      while (check(TokenKind::kComma)) {
        const Token& comma = advance();
        auto join = std::make_unique<TableSource>();
        join->kind = TableSource::Kind::kJoin;
        join->site = comma.site();
        join->join = JoinKind::kCross;
        join->left = std::move(from);
        join->right = parse_join_chain();
        from = std::move(join);
      }
    }
    if (match(Keyword::kWhere)) stmt->where = parse_expr();
    parse_dml_clauses(*stmt);
    if (match(Keyword::kReturning)) stmt->returning = parse_result_columns();
    if (from) desugar_update_from(*stmt, *from);
    return stmt;
  }

  // `update t set c = e, … from F where W` (sql-dml.md 2.3, "With CTE") is the correlated
  // form `update t set c = (select e from F where W limit 1), … where exists (select 1
  // from F where W)`: a target row is updated when some FROM row matches it, from the
  // first matching row; the target's columns are outer references inside F's scope.
  void desugar_update_from(UpdateStmt& stmt, const TableSource& from) {
    auto matching = [&](ExprPtr item, bool first_only) {
      auto sel = std::make_unique<Select>();
      sel->site = from.site;
      ResultColumn rc;
      rc.expr = std::move(item);
      sel->core.columns.push_back(std::move(rc));
      sel->core.from = clone(from);
      if (stmt.where) sel->core.where = clone(*stmt.where);
      if (first_only) {
        auto one = std::make_unique<Literal>();
        one->literal_kind = LiteralKind::kInteger;
        one->text = "1";
        one->site = from.site;
        sel->limit = std::move(one);
      }
      return sel;
    };
    for (Assignment& a : stmt.assignments) {
      auto sub = std::make_unique<SubqueryExpr>();
      sub->site = a.value->site;
      sub->subquery = matching(std::move(a.value), true);
      a.value = std::move(sub);
    }
    auto one = std::make_unique<Literal>();
    one->literal_kind = LiteralKind::kInteger;
    one->text = "1";
    one->site = from.site;
    auto exists = std::make_unique<ExistsExpr>();
    exists->site = from.site;
    exists->subquery = matching(std::move(one), false);
    stmt.where = std::move(exists);
  }

  std::unique_ptr<DeleteStmt> parse_delete(std::unique_ptr<WithClause> with, const Token& start) {
    auto stmt = make_at<DeleteStmt>(start);
    stmt->with = std::move(with);
    expect(Keyword::kDelete, "Expected DELETE");
    match(Keyword::kFrom);
    parse_write_target(*stmt);
    parse_dml_clauses(*stmt);
    if (match(Keyword::kWhere)) stmt->where = parse_expr();
    parse_dml_clauses(*stmt);
    if (match(Keyword::kReturning)) stmt->returning = parse_result_columns();
    return stmt;
  }

  // ------------------------------------------------------------ DDL

  bool parse_if_not_exists() {
    if (!check(Keyword::kIf)) return false;
    advance();
    expect(Keyword::kNot, "Expected 'NOT' after 'IF'");
    expect(Keyword::kExists, "Expected 'EXISTS' after 'IF NOT'");
    return true;
  }
  bool parse_if_exists() {
    if (!check(Keyword::kIf)) return false;
    advance();
    expect(Keyword::kExists, "Expected 'EXISTS' after 'IF'");
    return true;
  }

  StatementPtr parse_create() {
    const Token& start = advance();  // CREATE
    bool temporary = false;
    if (match(Keyword::kTemp) || match(Keyword::kTemporary)) temporary = true;
    if (check(Keyword::kTable)) return parse_create_table(start, temporary);
    if (temporary) fail_expected("Expected TABLE after CREATE TEMP");
    if (check(Keyword::kView)) return parse_create_view(start);
    if (check(Keyword::kIndex) || check(Keyword::kUnique)) return parse_create_index(start);
    if (check_word("materialized")) return parse_create_materialized_view(start);
    if (check(Keyword::kAssertion)) return parse_create_assertion(start);
    if (check(Keyword::kVirtual))
      fail_unsupported(peek(), "CREATE VIRTUAL TABLE is not supported yet");
    fail_expected(
        "Expected TABLE, [UNIQUE] INDEX, VIEW, MATERIALIZED VIEW, ASSERTION, or VIRTUAL after "
        "CREATE");
  }

  StatementPtr parse_create_table(const Token& start, bool temporary) {
    advance();  // TABLE
    auto stmt = make_at<CreateTableStmt>(start);
    stmt->temporary = temporary;
    stmt->if_not_exists = parse_if_not_exists();
    stmt->table = expect_qualified_name(NameCtx::kTable, "Expected table name");
    if (check(Keyword::kAs)) {
      fail_unsupported(peek(), "CREATE TABLE AS SELECT is not supported. Create the table, then fill it: "
                               "`insert into t select …`");
    }
    // Inside a schema declaration USING may precede the column list, which may be
    // written in braces.
    while (declare_depth_ >= 0) {
      if (stmt->module_name.empty() && match(Keyword::kUsing)) {
        parse_using_module(stmt->module_name, stmt->module_args);
      } else if (!parse_optional_tags(stmt->tags)) {
        break;
      }
    }
    const bool braces = declare_depth_ >= 0 && check(TokenKind::kLBrace);
    const TokenKind close = braces ? TokenKind::kRBrace : TokenKind::kRParen;
    if (braces) {
      advance();
    } else {
      expect(TokenKind::kLParen, "Expected '(' or 'AS' after table name");
    }
    do {
      if (check(close) && !stmt->columns.empty()) break;  // trailing comma
      if (check(Keyword::kConstraint) || check(Keyword::kPrimary) || check(Keyword::kUnique) ||
          check(Keyword::kCheck) || check(Keyword::kForeign)) {
        stmt->constraints.push_back(parse_table_constraint());
      } else {
        stmt->columns.push_back(parse_column_def());
      }
    } while (match(TokenKind::kComma));
    if (!check(close) &&
        (check(Keyword::kConstraint) || check(Keyword::kPrimary) || check(Keyword::kUnique) ||
         check(Keyword::kCheck) || check(Keyword::kForeign) || check_name(NameCtx::kGeneral))) {
      fail_at(peek(), "Expected ',' between table elements. Did you forget a comma before " +
                          describe(peek()) + "?");
    }
    if (braces) {
      expect(TokenKind::kRBrace, "Expected '}' after table definition");
    } else {
      expect(TokenKind::kRParen, "Expected ')' after table definition");
    }
    if (stmt->module_name.empty() && match(Keyword::kUsing)) {
      parse_using_module(stmt->module_name, stmt->module_args);
    }
    parse_table_trailers(*stmt);
    if (match_word("maintained")) {
      if (match(TokenKind::kLParen)) {
        stmt->maintained_columns = parse_name_list("Expected column name in MAINTAINED column list");
        expect(TokenKind::kRParen, "Expected ')' after MAINTAINED column list");
      }
      expect(Keyword::kAs, "Expected AS after MAINTAINED");
      stmt->maintained = parse_query(/*require_returning=*/true);
      parse_table_trailers(*stmt);
    }
    return stmt;
  }

  // WITH CONTEXT (var type [NULL|NOT NULL], …) and WITH TAGS (…) after a table
  // definition, in any order.
  void parse_table_trailers(CreateTableStmt& stmt) {
    for (;;) {
      if (parse_optional_tags(stmt.tags)) continue;
      if (at_with_word("context")) {
        if (!stmt.context.empty()) fail_at(peek(), "Duplicate WITH CONTEXT clause");
        advance();
        advance();
        expect(TokenKind::kLParen, "Expected '(' after WITH CONTEXT");
        do {
          ColumnDef var;
          var.site = peek().site();
          var.name = expect_name(NameCtx::kGeneral, "Expected context variable name");
          if (check(TokenKind::kIdentifier)) var.type_name = parse_type_name("Expected type name");
          if (match(Keyword::kNull)) {
            ColumnConstraint c;
            c.kind = ColumnConstraint::Kind::kNull;
            var.constraints.push_back(std::move(c));
          } else if (check(Keyword::kNot) && check(Keyword::kNull, 1)) {
            advance();
            advance();
            ColumnConstraint c;
            c.kind = ColumnConstraint::Kind::kNotNull;
            var.constraints.push_back(std::move(c));
          }
          stmt.context.push_back(std::move(var));
        } while (match(TokenKind::kComma));
        expect(TokenKind::kRParen, "Expected ')' after context variables");
        continue;
      }
      return;
    }
  }

  // USING has been consumed: module [(args)].
  void parse_using_module(std::string& name, std::vector<ModuleArg>& args) {
    name = expect_name(NameCtx::kGeneral, "Expected module name after 'USING'");
    if (match(TokenKind::kLParen)) {
      if (!check(TokenKind::kRParen)) {
        do {
          args.push_back(parse_module_arg());
        } while (match(TokenKind::kComma));
      }
      expect(TokenKind::kRParen, "Expected ')' after module arguments");
    }
  }

  std::vector<std::string> parse_name_list(const char* expectation) {
    std::vector<std::string> names;
    do {
      names.push_back(expect_name(NameCtx::kGeneral, expectation));
    } while (match(TokenKind::kComma));
    return names;
  }

  // CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [(cols)] [USING m(args)] AS q [WITH TAGS]
  StatementPtr parse_create_materialized_view(const Token& start) {
    advance();  // MATERIALIZED
    expect(Keyword::kView, "Expected VIEW after MATERIALIZED");
    auto stmt = make_at<CreateMaterializedViewStmt>(start);
    stmt->if_not_exists = parse_if_not_exists();
    stmt->view = expect_qualified_name(NameCtx::kTable, "Expected materialized view name");
    if (match(TokenKind::kLParen)) {
      stmt->columns = parse_name_list("Expected column name in view column list");
      expect(TokenKind::kRParen, "Expected ')' after view column list");
    }
    if (match(Keyword::kUsing)) parse_using_module(stmt->module_name, stmt->module_args);
    expect(Keyword::kAs, "Expected 'AS' before materialized view body");
    stmt->select = parse_query(/*require_returning=*/true);
    parse_optional_tags(stmt->tags);
    return stmt;
  }

  // CREATE ASSERTION name CHECK (expr)
  StatementPtr parse_create_assertion(const Token& start) {
    advance();  // ASSERTION
    auto stmt = make_at<CreateAssertionStmt>(start);
    stmt->name = expect_qualified_name(NameCtx::kTable, "Expected assertion name");
    expect(Keyword::kCheck, "Expected CHECK after assertion name");
    stmt->check =
        parse_paren_expr("Expected '(' after CHECK", "Expected ')' after CHECK expression");
    return stmt;
  }

  // A literal value for module arguments and pragmas: a string, a signed number,
  // TRUE / FALSE / NULL, or a bare word (kept as a string).
  ExprPtr parse_simple_value(const char* expectation) {
    const Token& t = peek();
    if (t.kind == TokenKind::kString || t.kind == TokenKind::kInteger ||
        t.kind == TokenKind::kFloat || t.kind == TokenKind::kBlob || t.is(Keyword::kNull) ||
        t.is(Keyword::kTrue) || t.is(Keyword::kFalse)) {
      return parse_primary();
    }
    if (t.kind == TokenKind::kMinus || t.kind == TokenKind::kPlus) {
      if (!(peek(1).kind == TokenKind::kInteger || peek(1).kind == TokenKind::kFloat)) {
        advance();
        fail_expected("Expected number after sign");
      }
      auto u = make_at<UnaryExpr>(advance());
      u->op = t.kind == TokenKind::kMinus ? UnaryOp::kNegate : UnaryOp::kPlus;
      u->operand = parse_primary();
      return u;
    }
    if (t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kQuotedIdentifier ||
        t.kind == TokenKind::kKeyword) {
      auto lit = make_at<Literal>(t);
      lit->literal_kind = LiteralKind::kString;
      lit->text = advance().text;
      return lit;
    }
    fail_expected(expectation);
  }

  ModuleArg parse_module_arg() {
    ModuleArg arg;
    if ((check(TokenKind::kIdentifier) || check(TokenKind::kQuotedIdentifier)) &&
        check(TokenKind::kEq, 1)) {
      arg.key = advance().text;
      advance();  // =
      arg.value = parse_simple_value("Expected module argument value");
    } else {
      arg.value =
          parse_simple_value("Expected module argument (string, number, or name=value pair)");
    }
    return arg;
  }

  // identifier [ '(' signed-number-or-word { ',' … } ')' ], canonicalised "name(a, b)".
  std::string parse_type_name(const char* expectation) {
    if (!(check(TokenKind::kIdentifier) || check(TokenKind::kQuotedIdentifier))) {
      fail_expected(expectation);
    }
    std::string type = advance().text;
    if (match(TokenKind::kLParen)) {
      type += '(';
      bool first = true;
      do {
        if (!first) type += ", ";
        first = false;
        std::string sign;
        if (match(TokenKind::kMinus)) {
          sign = "-";
        } else if (match(TokenKind::kPlus)) {
          sign = "+";
        }
        const Token& a = peek();
        if (a.kind == TokenKind::kInteger || a.kind == TokenKind::kFloat ||
            a.kind == TokenKind::kIdentifier) {
          type += sign + advance().text;
        } else {
          fail_expected("Expected type parameter");
        }
      } while (match(TokenKind::kComma));
      expect(TokenKind::kRParen, "Expected ')' after type parameters");
      type += ')';
    }
    return type;
  }

  bool at_column_constraint() const {
    return check(Keyword::kConstraint) || check(Keyword::kPrimary) || check(Keyword::kNot) ||
           check(Keyword::kNull) || check(Keyword::kUnique) || check(Keyword::kCheck) ||
           check(Keyword::kDefault) || check(Keyword::kCollate) || check(Keyword::kReferences) ||
           check(Keyword::kGenerated) || check(Keyword::kAs);
  }

  ColumnDef parse_column_def() {
    ColumnDef col;
    col.site = peek().site();
    col.name = expect_name(NameCtx::kGeneral, "Expected column name");
    if (check(TokenKind::kIdentifier)) col.type_name = parse_type_name("Expected type name");
    for (;;) {
      if (at_column_constraint()) {
        col.constraints.push_back(parse_column_constraint());
        ColumnConstraint& c = col.constraints.back();
        using CK = ColumnConstraint::Kind;
        bool taggable = c.kind == CK::kPrimaryKey || c.kind == CK::kUnique || c.kind == CK::kCheck ||
                        c.kind == CK::kForeignKey;
        if (!c.name.empty() && taggable) parse_optional_tags(c.tags);
      } else if (!parse_optional_tags(col.tags)) {
        break;
      }
    }
    return col;
  }

  ConflictClause parse_on_conflict() {
    if (!(check(Keyword::kOn) && check(Keyword::kConflict, 1))) return ConflictClause::kNone;
    advance();
    advance();
    return parse_conflict_action(
        "Expected conflict resolution algorithm (ROLLBACK, ABORT, FAIL, IGNORE, REPLACE)");
  }

  std::vector<RowOp> parse_check_on() {
    std::vector<RowOp> ops;
    if (!match(Keyword::kOn)) return ops;
    do {
      if (match(Keyword::kInsert))
        ops.push_back(RowOp::kInsert);
      else if (match(Keyword::kUpdate))
        ops.push_back(RowOp::kUpdate);
      else if (match(Keyword::kDelete))
        ops.push_back(RowOp::kDelete);
      else
        fail_expected("Expected INSERT, UPDATE, or DELETE after ON");
    } while (match(TokenKind::kComma));
    return ops;
  }

  ExprPtr parse_paren_expr(const char* open_msg, const char* close_msg) {
    expect(TokenKind::kLParen, open_msg);
    ExprPtr e = parse_expr();
    expect(TokenKind::kRParen, close_msg);
    return e;
  }

  ColumnConstraint parse_column_constraint() {
    ColumnConstraint c;
    c.site = peek().site();
    if (match(Keyword::kConstraint)) {
      c.name = expect_name(NameCtx::kGeneral, "Expected constraint name after CONSTRAINT");
    }
    if (match(Keyword::kPrimary)) {
      expect(Keyword::kKey, "Expected KEY after PRIMARY");
      c.kind = ColumnConstraint::Kind::kPrimaryKey;
      if (match(Keyword::kDesc)) {
        c.desc = true;
      } else {
        match(Keyword::kAsc);
      }
      c.on_conflict = parse_on_conflict();
      if (check(Keyword::kAutoincrement)) {
        fail_unsupported(
            peek(),
            "AUTOINCREMENT is not supported. Quereus uses key-based addressing without "
            "implicit side-effects.");
      }
    } else if (match(Keyword::kNot)) {
      expect(Keyword::kNull, "Expected NULL after NOT");
      c.kind = ColumnConstraint::Kind::kNotNull;
      c.on_conflict = parse_on_conflict();
    } else if (match(Keyword::kNull)) {
      c.kind = ColumnConstraint::Kind::kNull;
      c.on_conflict = parse_on_conflict();
    } else if (match(Keyword::kUnique)) {
      c.kind = ColumnConstraint::Kind::kUnique;
      c.on_conflict = parse_on_conflict();
    } else if (match(Keyword::kCheck)) {
      c.kind = ColumnConstraint::Kind::kCheck;
      c.check_on = parse_check_on();
      c.expr = parse_paren_expr("Expected '(' after CHECK", "Expected ')' after CHECK expression");
      c.on_conflict = parse_on_conflict();
    } else if (match(Keyword::kDefault)) {
      c.kind = ColumnConstraint::Kind::kDefault;
      c.expr = parse_expr();
    } else if (match(Keyword::kCollate)) {
      c.kind = ColumnConstraint::Kind::kCollate;
      c.collation = expect_collation_name();
    } else if (match(Keyword::kReferences)) {
      c.kind = ColumnConstraint::Kind::kForeignKey;
      parse_fk_tail(c.fk_table, c.fk_columns, c.fk_on_delete, c.fk_on_update, c.fk_deferral);
    } else if (check(Keyword::kGenerated) || check(Keyword::kAs)) {
      if (match(Keyword::kGenerated)) {
        expect(Keyword::kAlways, "Expected ALWAYS after GENERATED");
      }
      expect(Keyword::kAs, "Expected AS after GENERATED ALWAYS");
      c.kind = ColumnConstraint::Kind::kGenerated;
      c.expr = parse_paren_expr("Expected '(' after AS", "Expected ')' after generated expression");
      if (match(Keyword::kStored)) {
        c.generated_stored = true;
      } else {
        match(Keyword::kVirtual);
      }
    } else {
      fail_expected(
          "Expected column constraint type (PRIMARY KEY, NOT NULL, UNIQUE, CHECK, DEFAULT, "
          "COLLATE, REFERENCES, GENERATED)");
    }
    return c;
  }

  FkAction parse_fk_action() {
    if (match(Keyword::kSet)) {
      if (match(Keyword::kNull)) return FkAction::kSetNull;
      if (match(Keyword::kDefault)) return FkAction::kSetDefault;
      fail_expected("Expected NULL or DEFAULT after SET");
    }
    if (match(Keyword::kCascade)) return FkAction::kCascade;
    if (match(Keyword::kRestrict)) return FkAction::kRestrict;
    if (match(Keyword::kNo)) {
      expect(Keyword::kAction, "Expected ACTION after NO");
      return FkAction::kNoAction;
    }
    fail_expected(
        "Expected foreign key action (SET NULL, SET DEFAULT, CASCADE, RESTRICT, NO ACTION)");
  }

  void parse_initially(FkDeferral& d) {
    if (!match(Keyword::kInitially)) return;
    if (match(Keyword::kDeferred))
      d.initially = FkDeferral::Initially::kDeferred;
    else if (match(Keyword::kImmediate))
      d.initially = FkDeferral::Initially::kImmediate;
    else
      fail_expected("Expected DEFERRED or IMMEDIATE after INITIALLY");
  }

  // After REFERENCES: table [(cols)] { ON DELETE|UPDATE action | [NOT] DEFERRABLE … | MATCH x }
  void parse_fk_tail(QualifiedName& table, std::vector<std::string>& columns, FkAction& on_delete,
                     FkAction& on_update, FkDeferral& deferral) {
    table = expect_qualified_name(NameCtx::kTable, "Expected foreign table name");
    if (match(TokenKind::kLParen)) {
      do {
        columns.push_back(expect_name(NameCtx::kGeneral, "Expected identifier in list"));
      } while (match(TokenKind::kComma));
      expect(TokenKind::kRParen, "Expected ')' after foreign columns");
    }
    for (;;) {
      if (check(Keyword::kOn) && (check(Keyword::kDelete, 1) || check(Keyword::kUpdate, 1))) {
        advance();
        if (match(Keyword::kDelete)) {
          on_delete = parse_fk_action();
        } else {
          advance();
          on_update = parse_fk_action();
        }
      } else if (match(Keyword::kDeferrable)) {
        deferral.deferrable = FkDeferral::Deferrable::kDeferrable;
        parse_initially(deferral);
      } else if (check(Keyword::kNot) && check(Keyword::kDeferrable, 1)) {
        advance();
        advance();
        deferral.deferrable = FkDeferral::Deferrable::kNotDeferrable;
        parse_initially(deferral);
      } else if (check_word("match") && check_name(NameCtx::kGeneral, 1)) {
        advance();
        advance();  // MATCH SIMPLE/FULL/PARTIAL: accepted and ignored, as in SQLite
      } else {
        break;
      }
    }
  }

  IndexedColumn parse_pk_column() {
    IndexedColumn ic;
    ic.name = expect_name(NameCtx::kGeneral, "Expected identifier in list");
    if (match(Keyword::kCollate)) {
      ic.collation = expect_collation_name();
    }
    if (match(Keyword::kDesc)) {
      ic.desc = true;
    } else {
      match(Keyword::kAsc);
    }
    return ic;
  }

  TableConstraint parse_table_constraint() {
    TableConstraint c;
    c.site = peek().site();
    if (match(Keyword::kConstraint)) {
      c.name = expect_name(NameCtx::kGeneral, "Expected constraint name after CONSTRAINT");
    }
    if (match(Keyword::kPrimary)) {
      expect(Keyword::kKey, "Expected KEY after PRIMARY");
      c.kind = TableConstraint::Kind::kPrimaryKey;
      expect(TokenKind::kLParen, "Expected '(' before PRIMARY KEY columns");
      if (!check(TokenKind::kRParen)) {  // primary key () = singleton table
        do {
          c.columns.push_back(parse_pk_column());
        } while (match(TokenKind::kComma));
      }
      expect(TokenKind::kRParen, "Expected ')' after PRIMARY KEY columns");
      c.on_conflict = parse_on_conflict();
    } else if (match(Keyword::kUnique)) {
      c.kind = TableConstraint::Kind::kUnique;
      expect(TokenKind::kLParen, "Expected '(' before UNIQUE columns");
      do {
        c.columns.push_back(parse_pk_column());
      } while (match(TokenKind::kComma));
      expect(TokenKind::kRParen, "Expected ')' after UNIQUE columns");
      c.on_conflict = parse_on_conflict();
    } else if (match(Keyword::kCheck)) {
      c.kind = TableConstraint::Kind::kCheck;
      c.check_on = parse_check_on();
      c.expr = parse_paren_expr("Expected '(' after CHECK", "Expected ')' after CHECK expression");
      c.on_conflict = parse_on_conflict();
    } else if (match(Keyword::kForeign)) {
      expect(Keyword::kKey, "Expected KEY after FOREIGN");
      c.kind = TableConstraint::Kind::kForeignKey;
      expect(TokenKind::kLParen, "Expected '(' before FOREIGN KEY columns");
      do {
        IndexedColumn ic;
        ic.name = expect_name(NameCtx::kGeneral, "Expected identifier in list");
        c.columns.push_back(std::move(ic));
      } while (match(TokenKind::kComma));
      expect(TokenKind::kRParen, "Expected ')' after FOREIGN KEY columns");
      expect(Keyword::kReferences, "Expected REFERENCES after FOREIGN KEY columns");
      parse_fk_tail(c.fk_table, c.fk_columns, c.fk_on_delete, c.fk_on_update, c.fk_deferral);
    } else {
      fail_expected("Expected table constraint type (PRIMARY KEY, UNIQUE, CHECK, FOREIGN KEY)");
    }
    parse_optional_tags(c.tags);
    return c;
  }

  StatementPtr parse_create_index(const Token& start) {
    auto stmt = make_at<CreateIndexStmt>(start);
    stmt->unique = match(Keyword::kUnique);
    expect(Keyword::kIndex, "Expected 'INDEX' after CREATE UNIQUE");
    stmt->if_not_exists = parse_if_not_exists();
    stmt->index = expect_qualified_name(NameCtx::kTable, "Expected index name");
    expect(Keyword::kOn, "Expected 'ON' after index name");
    stmt->table = expect_qualified_name(NameCtx::kTable, "Expected table name");
    expect(TokenKind::kLParen, "Expected '(' before indexed columns");
    do {
      const Token& col_start = peek();
      ExprPtr e = parse_expr();
      IndexedColumn ic;
      Expr* base = e.get();
      if (base->kind == ExprKind::kCollate) {
        auto* coll = static_cast<CollateExpr*>(base);
        ic.collation = coll->collation;
        base = coll->operand.get();
      }
      if (base->kind != ExprKind::kColumn || !static_cast<ColumnRef*>(base)->table.empty()) {
        fail_unsupported(col_start, "Indices on expressions are not supported");
      }
      ic.name = static_cast<ColumnRef*>(base)->column;
      if (match(Keyword::kDesc)) {
        ic.desc = true;
      } else {
        match(Keyword::kAsc);
      }
      stmt->columns.push_back(std::move(ic));
    } while (match(TokenKind::kComma));
    expect(TokenKind::kRParen, "Expected ')' after indexed columns");
    if (match(Keyword::kWhere)) stmt->where = parse_expr();
    parse_optional_tags(stmt->tags);
    return stmt;
  }

  StatementPtr parse_create_view(const Token& start) {
    advance();  // VIEW
    auto stmt = make_at<CreateViewStmt>(start);
    stmt->if_not_exists = parse_if_not_exists();
    stmt->view = expect_qualified_name(NameCtx::kTable, "Expected view name");
    if (match(TokenKind::kLParen)) {
      if (!check(TokenKind::kRParen)) {
        do {
          stmt->columns.push_back(
              expect_name(NameCtx::kGeneral, "Expected column name in view column list"));
        } while (match(TokenKind::kComma) && !check(TokenKind::kRParen));
      }
      expect(TokenKind::kRParen, "Expected ')' after view column list");
    }
    expect(Keyword::kAs, "Expected 'AS' before view body in CREATE VIEW");
    stmt->select = parse_query(/*require_returning=*/true);
    parse_optional_tags(stmt->tags);
    return stmt;
  }

  StatementPtr parse_drop() {
    const Token& start = advance();  // DROP
    auto stmt = make_at<DropStmt>(start);
    if (match(Keyword::kTable)) {
      stmt->object = ObjectKind::kTable;
    } else if (match(Keyword::kView)) {
      stmt->object = ObjectKind::kView;
    } else if (match(Keyword::kIndex)) {
      stmt->object = ObjectKind::kIndex;
    } else if (match_word("materialized")) {
      expect(Keyword::kView, "Expected VIEW after MATERIALIZED");
      stmt->object = ObjectKind::kMaterializedView;
    } else if (match(Keyword::kAssertion)) {
      stmt->object = ObjectKind::kAssertion;
    } else {
      fail_expected("Expected TABLE, VIEW, MATERIALIZED VIEW, INDEX, or ASSERTION after DROP");
    }
    stmt->if_exists = parse_if_exists();
    static const char* const kWhat[] = {"Expected table name", "Expected index name",
                                        "Expected view name", "Expected materialized view name",
                                        "Expected assertion name"};
    stmt->name = expect_qualified_name(NameCtx::kTable, kWhat[static_cast<int>(stmt->object)]);
    return stmt;
  }

  // ------------------------------------------------------------ ALTER

  // {SET|ADD|DROP} TAGS (…); the verb has not been consumed.
  bool parse_tag_verb(TagVerb& verb, TagList& tags) {
    // `drop tags` / `add tags integer` without a list name a column called "tags".
    if (!check_word("tags", 1) || !check(TokenKind::kLParen, 2)) return false;
    if (check(Keyword::kSet)) {
      verb = TagVerb::kSet;
    } else if (check(Keyword::kAdd)) {
      verb = TagVerb::kAdd;
    } else if (check(Keyword::kDrop)) {
      verb = TagVerb::kDrop;
    } else {
      return false;
    }
    advance();
    advance();
    tags = parse_tag_list(/*keys_only=*/verb == TagVerb::kDrop);
    return true;
  }

  StatementPtr parse_alter() {
    const Token& start = advance();  // ALTER
    if (check(Keyword::kView) || check(Keyword::kIndex) || check_word("materialized"))
      return parse_alter_tags(start);
    expect(Keyword::kTable, "Expected TABLE, VIEW, MATERIALIZED VIEW, or INDEX after ALTER");
    auto stmt = make_at<AlterTableStmt>(start);
    stmt->table = expect_qualified_name(NameCtx::kTable, "Expected table name");
    parse_alter_table_action(*stmt);
    return stmt;
  }

  // ALTER VIEW | INDEX | MATERIALIZED VIEW name, then a TAGS verb.
  StatementPtr parse_alter_tags(const Token& start) {
    auto stmt = make_at<AlterTagsStmt>(start);
    if (match(Keyword::kView)) {
      stmt->object = ObjectKind::kView;
    } else if (match(Keyword::kIndex)) {
      stmt->object = ObjectKind::kIndex;
    } else {
      advance();
      expect(Keyword::kView, "Expected VIEW after MATERIALIZED");
      stmt->object = ObjectKind::kMaterializedView;
    }
    stmt->name = expect_qualified_name(NameCtx::kTable, "Expected name after ALTER");
    if (!parse_tag_verb(stmt->verb, stmt->tags)) {
      fail_expected("Expected SET TAGS, ADD TAGS, or DROP TAGS");
    }
    return stmt;
  }

  // What follows ALTER TABLE name: a TAGS verb, RENAME, ADD, DROP, SET MAINTAINED or ALTER.
  void parse_alter_table_action(AlterTableStmt& stmt) {
    using A = AlterTableStmt::Action;
    if (parse_tag_verb(stmt.tag_verb, stmt.tags)) {
      stmt.action = A::kTags;
      stmt.tag_target = AlterTableStmt::TagTarget::kTable;
      return;
    }
    if (match(Keyword::kRename)) {
      if (match(Keyword::kTo)) {
        stmt.action = A::kRenameTable;
        stmt.new_name = expect_name(NameCtx::kTable, "Expected new table name after RENAME TO");
        return;
      }
      if (match(Keyword::kConstraint)) {
        stmt.action = A::kRenameConstraint;
        stmt.name = expect_name(NameCtx::kGeneral, "Expected constraint name");
      } else {
        match_word("column");
        stmt.action = A::kRenameColumn;
        stmt.name = expect_name(NameCtx::kGeneral, "Expected column name after RENAME COLUMN");
      }
      expect(Keyword::kTo, "Expected TO after the old name");
      stmt.new_name = expect_name(NameCtx::kGeneral, "Expected new name after TO");
      return;
    }
    if (match(Keyword::kAdd)) {
      if (check(Keyword::kConstraint) || check(Keyword::kPrimary) || check(Keyword::kUnique) ||
          check(Keyword::kCheck) || check(Keyword::kForeign)) {
        stmt.action = A::kAddConstraint;
        stmt.constraint = std::make_unique<TableConstraint>(parse_table_constraint());
        return;
      }
      match_word("column");
      stmt.action = A::kAddColumn;
      stmt.column = std::make_unique<ColumnDef>(parse_column_def());
      return;
    }
    if (match(Keyword::kDrop)) {
      if (match(Keyword::kConstraint)) {
        stmt.action = A::kDropConstraint;
        stmt.name = expect_name(NameCtx::kGeneral, "Expected constraint name after DROP CONSTRAINT");
        return;
      }
      if (match_word("maintained")) {
        stmt.action = A::kDropMaintained;
        return;
      }
      match_word("column");
      stmt.action = A::kDropColumn;
      stmt.name = expect_name(NameCtx::kGeneral, "Expected column name after DROP COLUMN");
      return;
    }
    if (check(Keyword::kSet) && check_word("maintained", 1)) {
      advance();
      advance();
      stmt.action = A::kSetMaintained;
      if (match(TokenKind::kLParen)) {
        stmt.maintained_columns = parse_name_list("Expected column name in MAINTAINED column list");
        expect(TokenKind::kRParen, "Expected ')' after MAINTAINED column list");
      }
      expect(Keyword::kAs, "Expected AS after SET MAINTAINED");
      stmt.maintained = parse_query(/*require_returning=*/true);
      return;
    }
    if (match(Keyword::kAlter)) {
      parse_alter_table_alter(stmt);
      return;
    }
    fail_expected(
        "Expected RENAME, ADD, DROP, ALTER, SET MAINTAINED, or a TAGS verb after ALTER TABLE name");
  }

  // ALTER TABLE t ALTER …: PRIMARY KEY (…), CONSTRAINT c + TAGS verb, or [COLUMN] c + an action.
  void parse_alter_table_alter(AlterTableStmt& stmt) {
    using A = AlterTableStmt::Action;
    if (match(Keyword::kPrimary)) {
      expect(Keyword::kKey, "Expected KEY after ALTER PRIMARY");
      stmt.action = A::kAlterPrimaryKey;
      expect(TokenKind::kLParen, "Expected '(' before PRIMARY KEY columns");
      if (!check(TokenKind::kRParen)) {
        do {
          stmt.key.push_back(parse_pk_column());
        } while (match(TokenKind::kComma));
      }
      expect(TokenKind::kRParen, "Expected ')' after PRIMARY KEY columns");
      return;
    }
    if (match(Keyword::kConstraint)) {
      stmt.name = expect_name(NameCtx::kGeneral, "Expected constraint name");
      if (!parse_tag_verb(stmt.tag_verb, stmt.tags)) {
        fail_expected("Expected SET TAGS, ADD TAGS, or DROP TAGS after constraint name");
      }
      stmt.action = A::kTags;
      stmt.tag_target = AlterTableStmt::TagTarget::kConstraint;
      return;
    }
    match_word("column");
    stmt.name = expect_name(NameCtx::kGeneral, "Expected column name after ALTER COLUMN");
    if (parse_tag_verb(stmt.tag_verb, stmt.tags)) {
      stmt.action = A::kTags;
      stmt.tag_target = AlterTableStmt::TagTarget::kColumn;
      return;
    }
    parse_alter_column_action(stmt);
  }

  // ALTER COLUMN c SET … | DROP … | TYPE t.
  void parse_alter_column_action(AlterTableStmt& stmt) {
    using A = AlterTableStmt::Action;
    stmt.action = A::kAlterColumn;
    using C = AlterTableStmt::ColumnAction;
    if (match(Keyword::kSet)) {
      if (match(Keyword::kNot)) {
        expect(Keyword::kNull, "Expected NULL after SET NOT");
        stmt.column_action = C::kSetNotNull;
      } else if (match_word("data")) {
        expect_word("type", "Expected TYPE after SET DATA");
        stmt.column_action = C::kSetDataType;
        stmt.type_name = parse_type_name("Expected type name after SET DATA TYPE");
      } else if (match(Keyword::kDefault)) {
        stmt.column_action = C::kSetDefault;
        stmt.default_value = parse_expr();
      } else if (match(Keyword::kCollate)) {
        stmt.column_action = C::kSetCollate;
        stmt.collation = expect_collation_name();
      } else {
        fail_expected("Expected NOT NULL, DATA TYPE, DEFAULT, COLLATE, or TAGS after SET");
      }
    } else if (match(Keyword::kDrop)) {
      if (match(Keyword::kNot)) {
        expect(Keyword::kNull, "Expected NULL after DROP NOT");
        stmt.column_action = C::kDropNotNull;
      } else if (match(Keyword::kDefault)) {
        stmt.column_action = C::kDropDefault;
      } else {
        fail_expected("Expected NOT NULL, DEFAULT, or TAGS after DROP");
      }
    } else if (match_word("type")) {
      // ALTER COLUMN c TYPE t (PostgreSQL spelling of SET DATA TYPE)
      stmt.column_action = C::kSetDataType;
      stmt.type_name = parse_type_name("Expected type name after TYPE");
    } else {
      fail_expected("Expected SET or DROP after ALTER COLUMN name");
    }
  }

  // ------------------------------------------------------------ declarative schema

  StatementPtr parse_declare() {
    const Token& start = advance();  // DECLARE
    if (match_word("lens")) return parse_declare_lens(start);
    auto stmt = make_at<DeclareSchemaStmt>(start);
    stmt->logical = match_word("logical");
    expect_word("schema", stmt->logical ? "Expected SCHEMA after DECLARE LOGICAL"
                                        : "Expected SCHEMA, LOGICAL SCHEMA, or LENS after DECLARE");
    stmt->name = expect_name(NameCtx::kTable, "Expected schema name");
    for (;;) {
      if (match_word("version")) {
        if (!check(TokenKind::kString)) fail_expected("Expected version string after VERSION");
        stmt->version = advance().text;
      } else if (match(Keyword::kUsing)) {
        expect(TokenKind::kLParen, "Expected '(' after USING");
        if (!check(TokenKind::kRParen)) {
          do {
            stmt->options.push_back(parse_module_arg());
          } while (match(TokenKind::kComma));
        }
        expect(TokenKind::kRParen, "Expected ')' after USING options");
      } else {
        break;
      }
    }
    expect(TokenKind::kLBrace, "Expected '{' to begin the schema declaration");
    const int saved = declare_depth_;
    declare_depth_ = static_cast<int>(parens_.size());
    while (!check(TokenKind::kRBrace)) {
      if (match(TokenKind::kSemicolon)) continue;
      if (at_end()) fail_expected("Expected '}' to close the schema declaration");
      const Token& item_start = peek();
      StatementPtr item = parse_declare_item();
      if (!item) {
        ++stmt->skipped_items;
        continue;
      }
      item->text_begin = item_start.offset;
      item->text_end = prev().end();
      stmt->items.push_back(std::move(item));
    }
    declare_depth_ = saved;
    advance();  // }
    return stmt;
  }

  // One item of a schema declaration; null for a skipped (unmodelled) item kind.
  StatementPtr parse_declare_item() {
    const Token& start = peek();
    match(Keyword::kCreate);  // `create` is optional before an item
    if (check(Keyword::kTable)) return parse_create_table(start, /*temporary=*/false);
    if (check(Keyword::kIndex) || check(Keyword::kUnique)) return parse_create_index(start);
    if (check(Keyword::kView)) return parse_create_view(start);
    if (check_word("materialized")) return parse_create_materialized_view(start);
    if (check(Keyword::kAssertion)) return parse_create_assertion(start);
    if (check_word("seed")) return parse_seed(start);
    if (check_word("domain") || check_word("collation") || check_word("import")) {
      // Not modelled yet (as in the reference): skip to `;`, `}` or the next item keyword.
      advance();
      int depth = 0;
      while (!at_end()) {
        if (depth == 0 && (check(TokenKind::kSemicolon) || check(TokenKind::kRBrace))) break;
        if (depth == 0 && (check(Keyword::kTable) || check(Keyword::kIndex) ||
                           check(Keyword::kUnique) || check(Keyword::kView) ||
                           check(Keyword::kAssertion) ||
                           (check(TokenKind::kIdentifier) && is_declare_item_word(peek().text)))) {
          break;
        }
        if (check(TokenKind::kLParen) || check(TokenKind::kLBrace)) ++depth;
        if ((check(TokenKind::kRParen) || check(TokenKind::kRBrace)) && depth > 0) --depth;
        advance();
      }
      return nullptr;
    }
    fail_expected(
        "Expected TABLE, INDEX, VIEW, MATERIALIZED VIEW, SEED, or ASSERTION in schema declaration");
  }

  // SEED table [(cols)] ( (row), … ) | SEED table [(cols)] VALUES (row), …
  StatementPtr parse_seed(const Token& start) {
    advance();  // SEED
    auto stmt = make_at<SeedStmt>(start);
    stmt->table = expect_name(NameCtx::kTable, "Expected table name after SEED");
    auto parse_row = [&] {
      expect(TokenKind::kLParen, "Expected '(' before seed row");
      std::vector<ExprPtr> row;
      if (!check(TokenKind::kRParen)) {
        do {
          row.push_back(parse_expr());
        } while (match(TokenKind::kComma));
      }
      expect(TokenKind::kRParen, "Expected ')' after seed row");
      stmt->rows.push_back(std::move(row));
    };
    if (check(Keyword::kValues) && check(TokenKind::kLParen, 1) && check_name(NameCtx::kGeneral, 2) &&
        (check(TokenKind::kComma, 3) || check(TokenKind::kRParen, 3))) {
      // `seed t values (cols) values …` (the reference's long form)
      advance();
      advance();
      stmt->columns = parse_name_list("Expected column name in seed column list");
      expect(TokenKind::kRParen, "Expected ')' after seed column list");
    } else if (check(TokenKind::kLParen) && check_name(NameCtx::kGeneral, 1)) {
      advance();
      stmt->columns = parse_name_list("Expected column name in seed column list");
      expect(TokenKind::kRParen, "Expected ')' after seed column list");
    }
    if (match(Keyword::kValues)) {
      do {
        parse_row();
      } while (match(TokenKind::kComma));
      return stmt;
    }
    expect(TokenKind::kLParen, "Expected '(' or VALUES after seed table name");
    if (!check(TokenKind::kRParen)) {
      do {
        parse_row();
      } while (match(TokenKind::kComma));
    }
    expect(TokenKind::kRParen, "Expected ')' after seed rows");
    return stmt;
  }

  // DECLARE LENS FOR logical OVER basis { VIEW T AS <query> [;] … }
  StatementPtr parse_declare_lens(const Token& start) {
    auto stmt = make_at<DeclareLensStmt>(start);
    expect_word("for", "Expected FOR after DECLARE LENS");
    stmt->logical_schema = expect_name(NameCtx::kTable, "Expected logical schema name after FOR");
    expect(Keyword::kOver, "Expected OVER after the logical schema name");
    stmt->basis_schema = expect_name(NameCtx::kTable, "Expected basis schema name after OVER");
    expect(TokenKind::kLBrace, "Expected '{' to begin the lens declaration");
    const int saved = declare_depth_;
    declare_depth_ = static_cast<int>(parens_.size());
    while (!check(TokenKind::kRBrace)) {
      if (match(TokenKind::kSemicolon)) continue;
      if (at_end()) fail_expected("Expected '}' to close the lens declaration");
      DeclareLensStmt::View v;
      v.site = peek().site();
      expect(Keyword::kView, "Expected VIEW in lens declaration");
      v.name = expect_name(NameCtx::kTable, "Expected logical table name after VIEW");
      for (const auto& other : stmt->views) {
        if (iequals(other.name, v.name)) {
          fail_at(prev(), "Lens view '" + v.name + "' is declared more than once");
        }
      }
      expect(Keyword::kAs, "Expected AS after lens view name");
      v.select = parse_query(/*require_returning=*/true);
      if (!v.select->compounds.empty() || !v.select->core.values.empty()) {
        fail_at(start, "A lens body for '" + v.name +
                           "' must be a single SELECT (compound and VALUES bodies are not "
                           "supported)");
      }
      stmt->views.push_back(std::move(v));
    }
    declare_depth_ = saved;
    advance();  // }
    return stmt;
  }

  // APPLY SCHEMA name [TO VERSION 'v'] [WITH SEED] [OPTIONS (…)]
  StatementPtr parse_apply() {
    auto stmt = make_at<ApplySchemaStmt>(advance());
    expect_word("schema", "Expected SCHEMA after APPLY");
    stmt->name = expect_name(NameCtx::kTable, "Expected schema name");
    if (match(Keyword::kTo)) {
      expect_word("version", "Expected VERSION after TO");
      if (!check(TokenKind::kString)) fail_expected("Expected version string after TO VERSION");
      stmt->to_version = advance().text;
    }
    if (check(Keyword::kWith) && check_word("seed", 1)) {
      advance();
      advance();
      stmt->with_seed = true;
    }
    if (match_word("options")) {
      expect(TokenKind::kLParen, "Expected '(' after OPTIONS");
      do {
        NamedExpr opt;
        opt.site = peek().site();
        opt.name = expect_name(NameCtx::kGeneral, "Expected option name");
        std::string key = lowercase(opt.name);
        if (key != "allow_destructive" && key != "rename_policy") {
          fail_at(prev(), "Unsupported apply schema option '" + opt.name +
                              "' (supported: allow_destructive, rename_policy; use DIFF SCHEMA "
                              "for a read-only preview)");
        }
        expect(TokenKind::kEq, "Expected '=' after option name");
        if (key == "allow_destructive") {
          if (!(check(Keyword::kTrue) || check(Keyword::kFalse))) {
            fail_expected("Expected 'true' or 'false' for allow_destructive");
          }
          opt.value = parse_primary();
        } else {
          if (!check(TokenKind::kString)) fail_expected("Expected a string for rename_policy");
          const std::string& v = peek().text;
          if (v != "allow" && v != "require-hint" && v != "deny") {
            fail_at(peek(), "Invalid rename_policy '" + v +
                                "' (expected 'allow', 'require-hint', or 'deny')");
          }
          opt.value = parse_primary();
        }
        stmt->options.push_back(std::move(opt));
      } while (match(TokenKind::kComma));
      expect(TokenKind::kRParen, "Expected ')' after OPTIONS");
    }
    return stmt;
  }

  StatementPtr parse_begin() {
    auto stmt = make_at<BeginStmt>(advance());
    if (match(Keyword::kDeferred)) {
      stmt->mode = "deferred";
    } else if (match(Keyword::kImmediate)) {
      stmt->mode = "immediate";
    } else if (match_word("exclusive")) {
      stmt->mode = "exclusive";
    }
    match(Keyword::kTransaction);
    return stmt;
  }

  StatementPtr parse_rollback() {
    auto stmt = make_at<RollbackStmt>(advance());
    match(Keyword::kTransaction);
    if (match(Keyword::kTo)) {
      match(Keyword::kSavepoint);
      stmt->savepoint = expect_name(NameCtx::kGeneral, "Expected savepoint name after ROLLBACK TO");
    }
    return stmt;
  }

  StatementPtr parse_pragma() {
    auto stmt = make_at<PragmaStmt>(advance());
    stmt->name = expect_qualified_name(NameCtx::kGeneral, "Expected pragma name");
    if (match(TokenKind::kEq)) {
      stmt->value =
          parse_simple_value("Expected pragma value (identifier, string, number, or NULL)");
    } else if (match(TokenKind::kLParen)) {
      stmt->value =
          parse_simple_value("Expected pragma value (identifier, string, number, or NULL)");
      expect(TokenKind::kRParen, "Expected ')' after pragma value");
    }
    return stmt;
  }

  StatementPtr parse_analyze() {
    auto stmt = make_at<AnalyzeStmt>(advance());
    if (at_end() || check(TokenKind::kSemicolon)) return stmt;
    std::string first = expect_name(NameCtx::kTable, "Expected table name after ANALYZE");
    if (match(TokenKind::kDot)) {
      stmt->schema = std::move(first);
      if (match(TokenKind::kStar)) {
        stmt->all_in_schema = true;
      } else {
        stmt->table = expect_name(NameCtx::kTable, "Expected table name after schema qualifier");
      }
    } else {
      stmt->table = std::move(first);
    }
    return stmt;
  }

  StatementPtr parse_copy() {
    auto stmt = make_at<CopyStmt>(advance());
    if (match(TokenKind::kLParen)) {
      stmt->query = parse_select_body(nullptr);
      expect(TokenKind::kRParen, "Expected ')' after the query of COPY (…)");
    } else {
      stmt->table = expect_qualified_name(NameCtx::kTable, "Expected table name or '(' query ')' after COPY");
      if (match(TokenKind::kLParen)) {
        do {
          stmt->columns.push_back(expect_name(NameCtx::kGeneral, "Expected column name"));
        } while (match(TokenKind::kComma));
        expect(TokenKind::kRParen, "Expected ')' after the column list");
      }
    }
    if (match(Keyword::kFrom)) {
      if (stmt->query) fail_expected("Expected TO (a query is copied to a file, not from one)");
      stmt->to = false;
    } else if (!match(Keyword::kTo)) {
      fail_expected("Expected TO or FROM");
    }
    if (!check(TokenKind::kString)) fail_expected("Expected the file's path as a string");
    stmt->path = advance().text;
    match(Keyword::kWith);
    if (match(TokenKind::kLParen)) {
      do {
        const Token& name = peek();
        if (name.kind != TokenKind::kIdentifier && name.kind != TokenKind::kKeyword)
          fail_expected("Expected a COPY option (FORMAT, HEADER, DELIMITER, NULL)");
        CopyStmt::Option o;
        o.site = name.site();
        o.name = advance().text;
        for (char& c : o.name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const Token& v = peek();
        if (v.kind == TokenKind::kIdentifier || v.kind == TokenKind::kKeyword || v.kind == TokenKind::kString ||
            v.kind == TokenKind::kInteger) {
          o.value = advance().text;
          o.has_value = true;
        }
        stmt->options.push_back(std::move(o));
      } while (match(TokenKind::kComma));
      expect(TokenKind::kRParen, "Expected ')' after the COPY options");
    }
    return stmt;
  }

  // ------------------------------------------------------------ expressions

  ExprPtr make_binary(const Token& at, BinaryOp op, ExprPtr left, ExprPtr right) {
    auto b = std::make_unique<BinaryExpr>();
    b->site = left ? left->site : at.site();
    b->op = op;
    b->left = std::move(left);
    b->right = std::move(right);
    return b;
  }

  ExprPtr parse_expr() {
    DepthGuard guard(*this);
    return parse_or();
  }

  ExprPtr parse_or() {
    ChainGuard chain(*this);
    ExprPtr left = parse_and();
    for (;;) {
      chain.next();
      BinaryOp op;
      if (check(Keyword::kOr))
        op = BinaryOp::kOr;
      else if (check(Keyword::kXor))
        op = BinaryOp::kXor;
      else
        break;
      const Token& t = advance();
      left = make_binary(t, op, std::move(left), parse_and());
    }
    return left;
  }

  ExprPtr parse_and() {
    ChainGuard chain(*this);
    ExprPtr left = parse_not();
    while (check(Keyword::kAnd)) {
      chain.next();
      const Token& t = advance();
      left = make_binary(t, BinaryOp::kAnd, std::move(left), parse_not());
    }
    return left;
  }

  ExprPtr parse_not() {
    if (check(Keyword::kNot)) {
      DepthGuard guard(*this);
      const Token& t = advance();
      ExprPtr operand = parse_not();
      if (operand->kind == ExprKind::kExists && !static_cast<ExistsExpr*>(operand.get())->negated) {
        auto* ex = static_cast<ExistsExpr*>(operand.get());
        ex->negated = true;
        ex->site = t.site();
        return operand;
      }
      auto u = make_at<UnaryExpr>(t);
      u->op = UnaryOp::kNot;
      u->operand = std::move(operand);
      return u;
    }
    return parse_is();
  }

  // Postfix IS [NOT] NULL / TRUE / FALSE, ISNULL, NOTNULL and the binary IS [NOT].
  ExprPtr parse_is() {
    ChainGuard chain(*this);
    ExprPtr left = parse_equality();
    for (;;) {
      chain.next();
      if (check(Keyword::kIs)) {
        const Token& t = advance();
        bool negated = match(Keyword::kNot);
        if (match(Keyword::kNull)) {
          auto n = std::make_unique<IsNullExpr>();
          n->site = left->site;
          n->negated = negated;
          n->operand = std::move(left);
          left = std::move(n);
          continue;
        }
        if (check_word("distinct") || check(Keyword::kDistinct)) {
          // IS [NOT] DISTINCT FROM x  ≡  IS NOT / IS
          advance();
          expect(Keyword::kFrom, "Expected FROM after IS DISTINCT");
          negated = !negated;
        }
        left = make_binary(t, negated ? BinaryOp::kIsNot : BinaryOp::kIs, std::move(left),
                           parse_equality());
        continue;
      }
      if (check_word("isnull") || check_word("notnull")) {
        bool negated = check_word("notnull");
        advance();
        auto n = std::make_unique<IsNullExpr>();
        n->site = left->site;
        n->negated = negated;
        n->operand = std::move(left);
        left = std::move(n);
        continue;
      }
      break;
    }
    return left;
  }

  ExprPtr parse_equality() {
    ChainGuard chain(*this);
    ExprPtr left = parse_comparison();
    for (;;) {
      chain.next();
      BinaryOp op;
      if (check(TokenKind::kEq))
        op = BinaryOp::kEq;
      else if (check(TokenKind::kEqEq))
        op = BinaryOp::kEqEq;
      else if (check(TokenKind::kNe))
        op = BinaryOp::kNe;
      else
        break;
      const Token& t = advance();
      left = make_binary(t, op, std::move(left), parse_comparison());
    }
    return left;
  }

  // LIKE, GLOB, MATCH and REGEXP (the last three are contextual words).
  bool at_pattern_op(size_t off, BinaryOp& op, BinaryOp& not_op) const {
    const Token& t = peek(off);
    if (t.is(Keyword::kLike)) {
      op = BinaryOp::kLike;
      not_op = BinaryOp::kNotLike;
      return true;
    }
    if (t.kind != TokenKind::kIdentifier) return false;
    if (iequals(t.text, "glob")) {
      op = BinaryOp::kGlob;
      not_op = BinaryOp::kNotGlob;
      return true;
    }
    if (iequals(t.text, "match")) {
      op = not_op = BinaryOp::kMatch;
      return true;
    }
    if (iequals(t.text, "regexp")) {
      op = not_op = BinaryOp::kRegexp;
      return true;
    }
    return false;
  }

  ExprPtr parse_comparison() {
    ChainGuard chain(*this);
    ExprPtr left = parse_bits();
    for (;;) {
      chain.next();
      const Token& t = peek();
      BinaryOp op;
      BinaryOp not_op;
      if (t.kind == TokenKind::kLt || t.kind == TokenKind::kLe || t.kind == TokenKind::kGt ||
          t.kind == TokenKind::kGe) {
        op = t.kind == TokenKind::kLt   ? BinaryOp::kLt
             : t.kind == TokenKind::kLe ? BinaryOp::kLe
             : t.kind == TokenKind::kGt ? BinaryOp::kGt
                                        : BinaryOp::kGe;
        advance();
        left = make_binary(t, op, std::move(left), parse_bits());
        continue;
      }
      bool negated = false;
      size_t off = 0;
      if (t.is(Keyword::kNot)) {
        BinaryOp o1, o2;
        if (!(check(Keyword::kBetween, 1) || check(Keyword::kIn, 1) || at_pattern_op(1, o1, o2))) {
          break;  // a NOT that belongs to someone else (e.g. DEFAULT 0 NOT NULL)
        }
        negated = true;
        off = 1;
      }
      if (check(Keyword::kBetween, off)) {
        if (negated) advance();
        advance();
        auto b = std::make_unique<BetweenExpr>();
        b->site = left->site;
        b->negated = negated;
        b->operand = std::move(left);
        b->low = parse_bits();
        expect(Keyword::kAnd, negated ? "Expected 'AND' after NOT BETWEEN lower bound"
                                      : "Expected 'AND' after BETWEEN lower bound");
        b->high = parse_bits();
        left = std::move(b);
        continue;
      }
      if (check(Keyword::kIn, off)) {
        if (negated) advance();
        advance();
        left = parse_in_rest(std::move(left), negated);
        continue;
      }
      if (at_pattern_op(off, op, not_op)) {
        const Token& not_tok = peek();
        if (negated) advance();
        advance();
        auto b = std::make_unique<BinaryExpr>();
        b->site = left->site;
        b->op = negated ? not_op : op;
        b->left = std::move(left);
        b->right = parse_bits();
        // ESCAPE belongs to LIKE only (sql.md's grammar; SQLite refuses GLOB … ESCAPE). A
        // bare `escape` after GLOB that is not followed by an operand is an alias.
        if (op == BinaryOp::kLike && match_word("escape")) {
          b->escape = parse_bits();
        } else if (op == BinaryOp::kGlob && check_word("escape")) {
          const TokenKind next = peek(1).kind;
          if (next == TokenKind::kString || next == TokenKind::kParameter || next == TokenKind::kLParen ||
              next == TokenKind::kBlob || next == TokenKind::kInteger)
            fail_at(peek(), "ESCAPE is allowed with LIKE only: GLOB has no escape character (write [*], [?] or [[] "
                            "for a literal wildcard)");
        }
        left = std::move(b);
        if (negated && op == not_op) {
          // NOT MATCH / NOT REGEXP have no operator of their own: NOT (a MATCH b).
          auto u = make_at<UnaryExpr>(not_tok);
          u->site = left->site;
          u->op = UnaryOp::kNot;
          u->operand = std::move(left);
          left = std::move(u);
        }
        continue;
      }
      break;
    }
    return left;
  }

  ExprPtr parse_in_rest(ExprPtr operand, bool negated) {
    auto in = std::make_unique<InExpr>();
    in->site = operand->site;
    in->negated = negated;
    in->operand = std::move(operand);
    expect(TokenKind::kLParen, negated ? "Expected '(' after NOT IN" : "Expected '(' after IN");
    if (starts_query(0, false)) {
      in->subquery = parse_query(/*require_returning=*/true);
      expect(TokenKind::kRParen, "Expected ')' after IN subquery");
    } else {
      if (!check(TokenKind::kRParen)) {
        do {
          in->list.push_back(parse_expr());
        } while (match(TokenKind::kComma));
      }
      expect(TokenKind::kRParen, "Expected ')' after IN values");
    }
    return in;
  }

  ExprPtr parse_bits() {
    ChainGuard chain(*this);
    ExprPtr left = parse_term();
    for (;;) {
      chain.next();
      BinaryOp op;
      if (check(TokenKind::kAmp))
        op = BinaryOp::kBitAnd;
      else if (check(TokenKind::kPipe))
        op = BinaryOp::kBitOr;
      else if (check(TokenKind::kShl))
        op = BinaryOp::kShl;
      else if (check(TokenKind::kShr))
        op = BinaryOp::kShr;
      else
        break;
      const Token& t = advance();
      left = make_binary(t, op, std::move(left), parse_term());
    }
    return left;
  }

  ExprPtr parse_term() {
    ChainGuard chain(*this);
    ExprPtr left = parse_factor();
    for (;;) {
      chain.next();
      BinaryOp op;
      if (check(TokenKind::kPlus))
        op = BinaryOp::kAdd;
      else if (check(TokenKind::kMinus))
        op = BinaryOp::kSub;
      else
        break;
      const Token& t = advance();
      left = make_binary(t, op, std::move(left), parse_factor());
    }
    return left;
  }

  ExprPtr parse_factor() {
    ChainGuard chain(*this);
    ExprPtr left = parse_unary();
    for (;;) {
      chain.next();
      BinaryOp op;
      if (check(TokenKind::kStar))
        op = BinaryOp::kMul;
      else if (check(TokenKind::kSlash))
        op = BinaryOp::kDiv;
      else if (check(TokenKind::kPercent))
        op = BinaryOp::kMod;
      else
        break;
      const Token& t = advance();
      left = make_binary(t, op, std::move(left), parse_unary());
    }
    return left;
  }

  ExprPtr parse_unary() {
    const Token& t = peek();
    if (t.kind == TokenKind::kMinus || t.kind == TokenKind::kPlus || t.kind == TokenKind::kTilde) {
      DepthGuard guard(*this);
      advance();
      auto u = make_at<UnaryExpr>(t);
      u->op = t.kind == TokenKind::kMinus  ? UnaryOp::kNegate
              : t.kind == TokenKind::kPlus ? UnaryOp::kPlus
                                           : UnaryOp::kBitNot;
      u->operand = parse_unary();
      return u;
    }
    return parse_concat();
  }

  ExprPtr parse_concat() {
    ChainGuard chain(*this);
    ExprPtr left = parse_collate();
    while (check(TokenKind::kConcat)) {
      chain.next();
      const Token& t = advance();
      // `a || -b`: the reference has no rule for a signed right operand; accept it
      // (the printer writes it back as `a || (-b)`).
      ExprPtr right =
          (check(TokenKind::kMinus) || check(TokenKind::kPlus) || check(TokenKind::kTilde))
              ? parse_unary()
              : parse_collate();
      left = make_binary(t, BinaryOp::kConcat, std::move(left), std::move(right));
    }
    return left;
  }

  ExprPtr parse_collate() {
    ChainGuard chain(*this);
    ExprPtr e = parse_json();
    while (check(Keyword::kCollate)) {
      chain.next();
      advance();
      auto c = std::make_unique<CollateExpr>();
      c->site = e->site;
      c->collation = expect_collation_name();
      c->operand = std::move(e);
      e = std::move(c);
    }
    return e;
  }

  // a -> p  ≡ json_extract(a, p);  a ->> p  ≡ cast(json_extract(a, p) as text).
  // A string path without '$' gets '$.'; an integer path n becomes '$[n]'.
  ExprPtr parse_json() {
    ChainGuard chain(*this);
    ExprPtr e = parse_primary();
    while (check(TokenKind::kArrow) || check(TokenKind::kArrow2)) {
      chain.next();
      const Token& op = advance();
      ExprPtr path;
      const Token& p = peek();
      if (p.kind == TokenKind::kString) {
        auto lit = make_at<Literal>(advance());
        lit->literal_kind = LiteralKind::kString;
        lit->text = (!p.text.empty() && p.text[0] == '$') ? p.text : "$." + p.text;
        path = std::move(lit);
      } else if (p.kind == TokenKind::kInteger) {
        auto lit = make_at<Literal>(advance());
        lit->literal_kind = LiteralKind::kString;
        lit->text = "$[" + p.text + "]";
        path = std::move(lit);
      } else {
        path = parse_primary();
      }
      auto fn = std::make_unique<FunctionCall>();
      fn->site = e->site;
      fn->name = "json_extract";
      fn->args.push_back(std::move(e));
      fn->args.push_back(std::move(path));
      if (op.kind == TokenKind::kArrow2) {
        auto cast = std::make_unique<CastExpr>();
        cast->site = fn->site;
        cast->type_name = "text";
        cast->operand = std::move(fn);
        e = std::move(cast);
      } else {
        e = std::move(fn);
      }
    }
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::kInteger:
      case TokenKind::kFloat: {
        auto lit = make_at<Literal>(advance());
        lit->text = t.text;
        lit->literal_kind = LiteralKind::kReal;
        if (t.kind == TokenKind::kInteger && fits_int64(t.text)) {
          lit->literal_kind = LiteralKind::kInteger;
        }
        return lit;
      }
      case TokenKind::kString: {
        auto lit = make_at<Literal>(advance());
        lit->literal_kind = LiteralKind::kString;
        lit->text = t.text;
        return lit;
      }
      case TokenKind::kBlob: {
        auto lit = make_at<Literal>(advance());
        lit->literal_kind = LiteralKind::kBlob;
        lit->text = t.text;
        return lit;
      }
      case TokenKind::kParameter: {
        auto p = make_at<Parameter>(advance());
        p->spelling = t.text;
        if (t.text[0] == '?') {
          if (t.text.size() > 1) {
            if (t.text.size() > 7) fail_at(t, "Parameter number out of range: " + t.text);
            p->index = std::stoi(t.text.substr(1));
            if (p->index > param_counter_) param_counter_ = p->index;
          } else {
            p->index = ++param_counter_;
          }
        } else {
          p->name = t.text.substr(1);
          // An all-digit name (`:1`, `$007`) is a 1-based positional slot: it binds from
          // the same array position a `?` would (sql.md 11.1).
          if (std::all_of(p->name.begin(), p->name.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
              p->name.size() <= 7) {
            p->index = std::stoi(p->name);
            if (p->index > param_counter_) param_counter_ = p->index;
            if (p->index == 0) fail_at(t, "Parameter number out of range: " + t.text);
          }
        }
        return p;
      }
      case TokenKind::kLParen: {
        const Token& open = advance();
        if (starts_query(0, false)) {
          auto sq = make_at<SubqueryExpr>(open);
          sq->subquery = parse_query(/*require_returning=*/true);
          expect(TokenKind::kRParen, "Expected ')' after subquery");
          return sq;
        }
        ExprPtr e = parse_expr();
        expect(TokenKind::kRParen, "Expected ')' after expression");
        return e;
      }
      case TokenKind::kKeyword:
        switch (t.keyword) {
          case Keyword::kNull:
          case Keyword::kTrue:
          case Keyword::kFalse: {
            auto lit = make_at<Literal>(advance());
            lit->literal_kind = t.keyword == Keyword::kNull   ? LiteralKind::kNull
                                : t.keyword == Keyword::kTrue ? LiteralKind::kTrue
                                                              : LiteralKind::kFalse;
            return lit;
          }
          case Keyword::kCase:
            return parse_case();
          case Keyword::kCast:
            if (check(TokenKind::kLParen, 1)) return parse_cast();
            break;
          case Keyword::kExists: {
            auto ex = make_at<ExistsExpr>(advance());
            expect(TokenKind::kLParen, "Expected '(' after EXISTS");
            ex->subquery = parse_query(/*require_returning=*/true);
            expect(TokenKind::kRParen, "Expected ')' after EXISTS subquery");
            return ex;
          }
          default:
            break;
        }
        break;
      default:
        break;
    }
    if (check_name(NameCtx::kFunction) && check(TokenKind::kLParen, 1)) return parse_function();
    // SQLite's CURRENT_TIMESTAMP / CURRENT_DATE / CURRENT_TIME: the clock, as a call of the
    // built-in of that name (non-deterministic, so a CHECK or DEFAULT refuses it with the
    // gate closed; determinism.md). Unquoted and alone only, so `"current_date"` and
    // `t.current_date` still name a column.
    if (t.kind == TokenKind::kIdentifier && !check(TokenKind::kDot, 1) && is_clock_keyword(t.text)) {
      auto fn = make_at<FunctionCall>(t);
      fn->name = to_lower_ascii(advance().text);
      return fn;
    }
    if (check_name(NameCtx::kGeneral)) {
      auto col = make_at<ColumnRef>(t);
      std::string a = advance().text;
      if (check(TokenKind::kDot) && check_name(NameCtx::kGeneral, 1)) {
        advance();
        std::string b = advance().text;
        if (check(TokenKind::kDot) && check_name(NameCtx::kGeneral, 1)) {
          advance();
          col->schema = std::move(a);
          col->table = std::move(b);
          col->column = advance().text;
        } else {
          col->table = std::move(a);
          col->column = std::move(b);
        }
      } else {
        col->column = std::move(a);
      }
      return col;
    }
    fail_expected("Expected expression");
  }

  static std::string to_lower_ascii(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  static bool is_clock_keyword(const std::string& word) {
    std::string w = to_lower_ascii(word);
    return w == "current_timestamp" || w == "current_date" || w == "current_time";
  }

  static bool fits_int64(const std::string& text) {
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
      size_t digits = text.size() - 2;
      size_t i = 2;
      while (i < text.size() && text[i] == '0') {
        ++i;
        --digits;
      }
      return digits <= 16;  // hex literals are 64-bit two's complement, as in SQLite
    }
    static const std::string kMax = "9223372036854775807";
    size_t i = 0;
    while (i + 1 < text.size() && text[i] == '0') ++i;
    std::string_view digits(text.data() + i, text.size() - i);
    if (digits.size() != kMax.size()) return digits.size() < kMax.size();
    return digits <= kMax;
  }

  ExprPtr parse_case() {
    auto c = make_at<CaseExpr>(advance());
    if (!check(Keyword::kWhen)) c->base = parse_expr();
    while (match(Keyword::kWhen)) {
      ExprPtr when = parse_expr();
      expect(Keyword::kThen, "Expected 'THEN' after WHEN condition in CASE expression");
      ExprPtr then = parse_expr();
      c->whens.emplace_back(std::move(when), std::move(then));
    }
    if (c->whens.empty()) fail_expected("Expected WHEN in CASE expression");
    if (match(Keyword::kElse)) c->else_expr = parse_expr();
    expect(Keyword::kEnd, "Expected 'END' to terminate CASE expression");
    return c;
  }

  ExprPtr parse_cast() {
    auto c = make_at<CastExpr>(advance());
    expect(TokenKind::kLParen, "Expected '(' after CAST");
    c->operand = parse_expr();
    expect(Keyword::kAs, "Expected 'AS' in CAST expression");
    c->type_name = parse_type_name("Expected type name after 'AS' in CAST expression");
    expect(TokenKind::kRParen, "Expected ')' after CAST expression type");
    return c;
  }

  ExprPtr parse_function() {
    auto fn = make_at<FunctionCall>(peek());
    fn->name = advance().text;
    advance();  // (
    if (!check(TokenKind::kRParen)) {
      fn->distinct = match(Keyword::kDistinct);
      // `f(ALL x)`: the SQL-standard spelling of the default (every value, duplicates kept).
      if (!fn->distinct) match(Keyword::kAll);
      if (check(TokenKind::kStar)) {
        if (fn->distinct) {
          fail_at(peek(), "'*' cannot be used with other arguments in function call");
        }
        advance();
        fn->star = true;
      } else {
        do {
          fn->args.push_back(parse_expr());
        } while (match(TokenKind::kComma));
      }
    }
    expect(TokenKind::kRParen, "Expected ')' after function arguments");
    if (check_word("filter") && check(TokenKind::kLParen, 1)) {
      fail_unsupported(peek(), "FILTER clause on aggregate functions is not supported; move the condition into "
                               "the argument: `sum(case when <cond> then x end)`, `count(case when <cond> then 1 end)`");
    }
    if (match(Keyword::kOver)) fn->over = parse_window_spec();
    return fn;
  }

  std::shared_ptr<WindowSpec> parse_window_spec() {
    if (!check(TokenKind::kLParen)) {
      fail_unsupported(peek(),
                       "Window name references are not yet supported. Use explicit window specs.");
    }
    advance();
    auto spec = std::make_shared<WindowSpec>();
    if (check(Keyword::kPartition)) {
      advance();
      expect(Keyword::kBy, "Expected 'BY' after 'PARTITION'");
      do {
        spec->partition_by.push_back(parse_expr());
      } while (match(TokenKind::kComma));
    }
    if (check(Keyword::kOrder)) {
      advance();
      expect(Keyword::kBy, "Expected 'BY' after 'ORDER'");
      spec->order_by = parse_ordering_terms();
    }
    if (check(Keyword::kRows) || check(Keyword::kRange) || check_word("groups")) {
      auto frame = std::make_unique<WindowFrame>();
      const Token& u = advance();
      frame->unit = u.is(Keyword::kRows)    ? WindowFrame::Unit::kRows
                    : u.is(Keyword::kRange) ? WindowFrame::Unit::kRange
                                            : WindowFrame::Unit::kGroups;
      if (match(Keyword::kBetween)) {
        frame->start = parse_frame_bound();
        expect(Keyword::kAnd, "Expected 'AND' after frame start bound");
        frame->has_end = true;
        frame->end = parse_frame_bound();
      } else {
        frame->start = parse_frame_bound();
      }
      if (match_word("exclude")) {
        if (match(Keyword::kNo)) {
          expect_word("others", "Expected OTHERS after EXCLUDE NO");
          frame->exclude = WindowFrame::Exclude::kNoOthers;
        } else if (match(Keyword::kCurrent)) {
          expect(Keyword::kRow, "Expected ROW after EXCLUDE CURRENT");
          frame->exclude = WindowFrame::Exclude::kCurrentRow;
        } else if (match(Keyword::kGroup)) {
          frame->exclude = WindowFrame::Exclude::kGroup;
        } else if (match_word("ties")) {
          frame->exclude = WindowFrame::Exclude::kTies;
        } else {
          fail_expected("Expected NO OTHERS, CURRENT ROW, GROUP or TIES after EXCLUDE");
        }
      }
      spec->frame = std::move(frame);
    }
    expect(TokenKind::kRParen, "Expected ')' after window specification");
    return spec;
  }

  FrameBound parse_frame_bound() {
    FrameBound b;
    if (match(Keyword::kUnbounded)) {
      if (match(Keyword::kPreceding))
        b.kind = FrameBound::Kind::kUnboundedPreceding;
      else if (match(Keyword::kFollowing))
        b.kind = FrameBound::Kind::kUnboundedFollowing;
      else
        fail_expected("Expected PRECEDING or FOLLOWING after UNBOUNDED");
      return b;
    }
    if (match(Keyword::kCurrent)) {
      expect(Keyword::kRow, "Expected 'ROW' after 'CURRENT'");
      b.kind = FrameBound::Kind::kCurrentRow;
      return b;
    }
    b.offset = parse_expr();
    if (match(Keyword::kPreceding))
      b.kind = FrameBound::Kind::kPreceding;
    else if (match(Keyword::kFollowing))
      b.kind = FrameBound::Kind::kFollowing;
    else
      fail_expected("Expected PRECEDING or FOLLOWING after frame value");
    return b;
  }

  std::string_view sql_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int param_counter_ = 0;
  int depth_ = 0;
  std::vector<const Token*> parens_;  // open '(' tokens, for "unterminated '('" messages
};

}  // namespace

std::vector<ast::StatementPtr> Parser::parse(std::string_view sql, const Limits& limits) {
  ParserImpl p(sql, limits);
  return p.parse_all();
}

ast::ExprPtr Parser::parse_expression(std::string_view sql, const Limits& limits) {
  ParserImpl p(sql, limits);
  return p.parse_single_expression();
}

}  // namespace quereus
