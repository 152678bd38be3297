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

#include <utility>

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
  explicit ParserImpl(std::string_view sql) : sql_(sql), toks_(Lexer::tokenize(sql)) {}

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
      if (!check(TokenKind::kSemicolon) && !at_end()) {
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
  static constexpr int kMaxDepth = 1000;
  static constexpr int kNestCost = 4;
  void add_depth(int units) {
    depth_ += units;
    if (depth_ > kMaxDepth) {
      depth_ = 0;
      fail_at(peek(),
              "Expression tree is too large (maximum depth " + std::to_string(kMaxDepth) + ")");
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
          fail_unsupported(t, "ALTER statements are not supported yet");
        case Keyword::kDeclare:
        case Keyword::kApply:
        case Keyword::kExplain:
        case Keyword::kDiff:
          fail_unsupported(t, "Declarative schema statements (" + lowercase(t.text) +
                                  " …) are not supported yet");
        default:
          break;
      }
    }
    if (t.kind == TokenKind::kIdentifier && (iequals(t.text, "refresh"))) {
      fail_unsupported(t, "REFRESH MATERIALIZED VIEW is not supported yet");
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
    parse_leg(sel->core, /*first=*/true);
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
      reject_existence_clause();
      SelectCore leg;
      parse_leg(leg, /*first=*/false);
      sel->compounds.emplace_back(op, std::move(leg));
    }
    parse_order_limit(*sel);
    reject_trailing_with_clause();
    // `(select …)` alone (no compound, ORDER BY or LIMIT around it) is the inner query.
    if (sel->compounds.empty() && sel->order_by.empty() && !sel->limit && sel->core.nested &&
        !(with && sel->core.nested->with)) {
      auto inner = std::move(sel->core.nested);
      if (with) inner->with = std::move(with);
      return inner;
    }
    sel->with = std::move(with);
    return sel;
  }

  void parse_leg(SelectCore& core, bool first) {
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
    } else if (!first && starts_query(0, false)) {
      core.nested = parse_query(/*require_returning=*/true);
    } else {
      fail_expected(first
                        ? "Expected SELECT or VALUES"
                        : "Expected SELECT, VALUES, or DML statement after set operation keyword");
    }
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
        fail_unsupported(peek(), "SELECT with multiple FROM sources (joins) not supported");
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
    reject_trailing_with_clause();
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
        reject_trailing_with_clause();
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
    return true;
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
      bool lateral = match(Keyword::kLateral);
      auto join = std::make_unique<TableSource>();
      join->kind = TableSource::Kind::kJoin;
      join->site = start.site();
      join->join = kind;
      join->left = std::move(left);
      join->right = parse_table_source();
      join->right->lateral = lateral;
      if (match(Keyword::kOn)) {
        join->on = parse_expr();
      } else if (match(Keyword::kUsing)) {
        expect(TokenKind::kLParen, "Expected '(' after 'USING'");
        do {
          join->using_columns.push_back(expect_name(NameCtx::kGeneral, "Expected column name"));
        } while (match(TokenKind::kComma));
        expect(TokenKind::kRParen, "Expected ')' after USING columns");
      } else if (kind != JoinKind::kCross) {
        fail_expected("Expected 'ON' or 'USING' after JOIN");
      }
      reject_existence_clause();
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

  // Quereus extensions of later milestones, recognised so the error says what they are.
  void reject_trailing_with_clause() {
    if (check(Keyword::kWith) &&
        (check_word("context", 1) || check_word("tags", 1) || check_word("schema", 1) ||
         check_word("defaults", 1) || check_word("inverse", 1))) {
      fail_unsupported(peek(),
                       "WITH " + lowercase(peek(1).text) + " clauses are not supported yet");
    }
  }
  void reject_existence_clause() {
    if (check(Keyword::kExists) &&
        (check(Keyword::kAs, 1) || check(Keyword::kLeft, 1) || check(Keyword::kRight, 1))) {
      fail_unsupported(peek(), "EXISTS … AS existence columns are not supported yet");
    }
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
    reject_trailing_with_clause();
    if (check(Keyword::kValues) || check(Keyword::kSelect) || check(Keyword::kWith) ||
        (check(TokenKind::kLParen) && starts_query(1, true))) {
      stmt->source = parse_query(/*require_returning=*/false);
    } else if (check(Keyword::kInsert) || check(Keyword::kUpdate) || check(Keyword::kDelete)) {
      stmt->source = parse_query(/*require_returning=*/true);
    } else {
      fail_expected("Expected VALUES, SELECT, or DML (with RETURNING) after INSERT");
    }
    if (check(Keyword::kOn) && check(Keyword::kConflict, 1)) {
      fail_unsupported(peek(), "ON CONFLICT (upsert) clauses are not supported yet");
    }
    reject_trailing_with_clause();
    if (match(Keyword::kReturning)) stmt->returning = parse_result_columns();
    return stmt;
  }

  std::unique_ptr<UpdateStmt> parse_update(std::unique_ptr<WithClause> with, const Token& start) {
    auto stmt = make_at<UpdateStmt>(start);
    stmt->with = std::move(with);
    expect(Keyword::kUpdate, "Expected UPDATE");
    // UPDATE OR <action> is deliberately unsupported (the reference reads OR as a
    // missing table name and says so).
    stmt->table = expect_qualified_name(NameCtx::kTable, "Expected table name");
    if (match(Keyword::kAs))
      stmt->alias = expect_name(NameCtx::kGeneral, "Expected alias after 'AS'");
    reject_trailing_with_clause();
    expect(Keyword::kSet, "Expected 'SET' after table name in UPDATE");
    do {
      Assignment a;
      a.columns.push_back(expect_name(NameCtx::kGeneral, "Expected column name in SET clause"));
      expect(TokenKind::kEq, "Expected '=' after column name in SET clause");
      a.value = parse_expr();
      stmt->assignments.push_back(std::move(a));
    } while (match(TokenKind::kComma));
    if (check(Keyword::kFrom)) fail_unsupported(peek(), "UPDATE … FROM is not supported");
    if (match(Keyword::kWhere)) stmt->where = parse_expr();
    reject_trailing_with_clause();
    if (match(Keyword::kReturning)) stmt->returning = parse_result_columns();
    return stmt;
  }

  std::unique_ptr<DeleteStmt> parse_delete(std::unique_ptr<WithClause> with, const Token& start) {
    auto stmt = make_at<DeleteStmt>(start);
    stmt->with = std::move(with);
    expect(Keyword::kDelete, "Expected DELETE");
    match(Keyword::kFrom);
    stmt->table = expect_qualified_name(NameCtx::kTable, "Expected table name");
    if (match(Keyword::kAs))
      stmt->alias = expect_name(NameCtx::kGeneral, "Expected alias after 'AS'");
    reject_trailing_with_clause();
    if (match(Keyword::kWhere)) stmt->where = parse_expr();
    reject_trailing_with_clause();
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
    if (check_word("materialized")) {
      fail_unsupported(peek(), "CREATE MATERIALIZED VIEW is not supported yet");
    }
    if (check(Keyword::kAssertion))
      fail_unsupported(peek(), "CREATE ASSERTION is not supported yet");
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
      fail_unsupported(peek(), "CREATE TABLE AS SELECT is not supported.");
    }
    expect(TokenKind::kLParen, "Expected '(' or 'AS' after table name");
    do {
      if (check(TokenKind::kRParen) && !stmt->columns.empty()) break;  // trailing comma
      if (check(Keyword::kConstraint) || check(Keyword::kPrimary) || check(Keyword::kUnique) ||
          check(Keyword::kCheck) || check(Keyword::kForeign)) {
        stmt->constraints.push_back(parse_table_constraint());
      } else {
        stmt->columns.push_back(parse_column_def());
      }
    } while (match(TokenKind::kComma));
    if (!check(TokenKind::kRParen) &&
        (check(Keyword::kConstraint) || check(Keyword::kPrimary) || check(Keyword::kUnique) ||
         check(Keyword::kCheck) || check(Keyword::kForeign) || check_name(NameCtx::kGeneral))) {
      fail_at(peek(), "Expected ',' between table elements. Did you forget a comma before " +
                          describe(peek()) + "?");
    }
    expect(TokenKind::kRParen, "Expected ')' after table definition");
    if (match(Keyword::kUsing)) {
      stmt->module_name = expect_name(NameCtx::kGeneral, "Expected module name after 'USING'");
      if (match(TokenKind::kLParen)) {
        if (!check(TokenKind::kRParen)) {
          do {
            stmt->module_args.push_back(parse_module_arg());
          } while (match(TokenKind::kComma));
        }
        expect(TokenKind::kRParen, "Expected ')' after module arguments");
      }
    }
    reject_trailing_with_clause();
    if (check_word("maintained"))
      fail_unsupported(peek(), "Maintained tables are not supported yet");
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
    while (at_column_constraint()) col.constraints.push_back(parse_column_constraint());
    reject_trailing_with_clause();
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
    reject_trailing_with_clause();
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
    reject_trailing_with_clause();
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
    reject_trailing_with_clause();
    return stmt;
  }

  StatementPtr parse_drop() {
    const Token& start = advance();  // DROP
    if (match(Keyword::kTable)) {
      auto stmt = make_at<DropTableStmt>(start);
      stmt->if_exists = parse_if_exists();
      stmt->table = expect_qualified_name(NameCtx::kTable, "Expected table name");
      return stmt;
    }
    if (match(Keyword::kView)) {
      auto stmt = make_at<DropViewStmt>(start);
      stmt->if_exists = parse_if_exists();
      stmt->view = expect_qualified_name(NameCtx::kTable, "Expected view name");
      return stmt;
    }
    if (match(Keyword::kIndex)) {
      auto stmt = make_at<DropIndexStmt>(start);
      stmt->if_exists = parse_if_exists();
      stmt->index = expect_qualified_name(NameCtx::kTable, "Expected index name");
      return stmt;
    }
    if (check_word("materialized")) {
      fail_unsupported(peek(), "DROP MATERIALIZED VIEW is not supported yet");
    }
    if (check(Keyword::kAssertion)) fail_unsupported(peek(), "DROP ASSERTION is not supported yet");
    fail_expected("Expected TABLE, VIEW, MATERIALIZED VIEW, INDEX, or ASSERTION after DROP");
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
        if ((op == BinaryOp::kLike || op == BinaryOp::kGlob) && match_word("escape")) {
          b->escape = parse_bits();
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
      fail_unsupported(peek(), "FILTER clause on aggregate functions is not supported");
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

std::vector<ast::StatementPtr> Parser::parse(std::string_view sql) {
  ParserImpl p(sql);
  return p.parse_all();
}

ast::ExprPtr Parser::parse_expression(std::string_view sql) {
  ParserImpl p(sql);
  return p.parse_single_expression();
}

}  // namespace quereus
