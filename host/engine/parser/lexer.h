// Lexer: the first half of the parser stage. SQL text → tokens.
//
//   Lexer → Parser (parser/parser.h) → ast::Statement list → planner/
//
// Hand-written (no regex): one pass over the bytes, one Token per call. Keywords are
// recognised case-insensitively from a fixed table (the reference's reserved words);
// every other word is an identifier, so contextual words such as NULLS or FILTER are
// matched by the parser on the identifier text. Errors are thrown as
// Error(StatusCode::kSyntax, message, site) with 1-based line and column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace quereus {

enum class TokenKind : uint8_t {
  kEof,
  kIdentifier,        // bare word that is not a keyword; text = the word as written
  kQuotedIdentifier,  // "x", `x` or [x]; text = the unquoted name
  kKeyword,           // reserved word; `keyword` says which, text = as written
  kString,            // '…'; text = the unescaped value
  kBlob,              // x'…'; text = the raw bytes
  kInteger,           // digits or 0x hex; text = the spelling
  kFloat,             // 1.5, 1e3, .5; text = the spelling
  kParameter,         // ?, ?NNN, :name, $name, @name; text = the spelling
  // clang-format off
  // punctuation
  kLParen, kRParen, kComma, kDot, kSemicolon, kLBrace, kRBrace,
  // operators
  kPlus, kMinus, kStar, kSlash, kPercent, kTilde,
  kEq,      // =
  kEqEq,    // ==
  kNe,      // != or <>
  kLt, kLe, kGt, kGe,
  kConcat,  // ||
  kPipe,    // |
  kAmp,     // &
  kShl,     // <<
  kShr,     // >>
  kArrow,   // ->
  kArrow2,  // ->>
  // clang-format on
};

// The reserved words (the reference lexer's keyword table). A word in this list is
// never a bare identifier, except where the parser accepts it contextually, and the
// canonical printer quotes identifiers spelled like one.
enum class Keyword : uint8_t {
  // clang-format off
  kNone, kAbort, kAction, kAdd, kAll, kAlter, kAlways, kAnalyze, kAnd, kApply, kAs, kAsc,
  kAssertion, kAutoincrement, kBegin, kBetween, kBy, kCascade, kCase, kCast, kCheck,
  kCollate, kCommit, kConflict, kConstraint, kCreate, kCross, kCurrent, kDeclare, kDefault,
  kDeferrable, kDeferred, kDelete, kDesc, kDiff, kDistinct, kDrop, kElse, kEnd, kExcept,
  kExists, kExplain, kFail, kFalse, kFollowing, kForeign, kFrom, kFull, kGenerated, kGroup,
  kHaving, kIf, kIgnore, kImmediate, kIn, kIndex, kInitially, kInner, kInsert, kIntersect,
  kInto, kIs, kJoin, kKey, kLateral, kLeft, kLike, kLimit, kNatural, kNo, kNot, kNull,
  kOffset, kOn, kOr, kOrder, kOuter, kOver, kPartition, kPragma, kPreceding, kPrimary,
  kRange, kRecursive, kReferences, kRelease, kRename, kReplace, kRestrict, kReturning,
  kRight, kRollback, kRow, kRows, kSavepoint, kSelect, kSet, kStored, kTable, kTemp,
  kTemporary, kThen, kTo, kTransaction, kTrue, kUnbounded, kUnion, kUnique, kUpdate,
  kUsing, kValues, kView, kVirtual, kWhen, kWhere, kWith, kXor,
  // clang-format on
};

// Returns the keyword spelled by `word` (any case), or Keyword::kNone.
Keyword lookup_keyword(std::string_view word);
// The lowercase spelling of a keyword ("" for kNone).
std::string_view keyword_text(Keyword kw);

struct Token {
  TokenKind kind = TokenKind::kEof;
  Keyword keyword = Keyword::kNone;  // kKeyword only
  uint32_t offset = 0;               // byte offset of the first byte in the source
  uint32_t length = 0;               // byte length in the source
  int line = 1;                      // 1-based
  int column = 1;                    // 1-based, in bytes
  std::string text;                  // see TokenKind

  SourceSite site() const { return SourceSite{line, column}; }
  uint32_t end() const { return offset + length; }
  bool is(TokenKind k) const { return kind == k; }
  bool is(Keyword k) const { return kind == TokenKind::kKeyword && keyword == k; }
};

struct LexerOptions {
  // SQLite-style `?NNN` and `@name` parameters. The reference dialect has neither
  // (`@x` is "Unexpected character", `?1` is `?` followed by a stray number), so the
  // parser leaves them off; they exist for embedders that want SQLite's spelling.
  bool numbered_parameters = false;
  bool at_parameters = false;
};

class Lexer {
 public:
  explicit Lexer(std::string_view sql, LexerOptions options = {});

  // The next token; kEof (repeatedly) at the end. Comments and whitespace are skipped.
  // Throws Error(kSyntax) on an unterminated string/identifier/comment/blob, a bad
  // number or blob, or a character that starts no token.
  Token next();

  // Lexes the whole input; the last token is kEof.
  static std::vector<Token> tokenize(std::string_view sql, LexerOptions options = {});

 private:
  [[noreturn]] void fail(const std::string& message, int line, int column) const;
  void skip_space_and_comments();
  void advance(size_t n);     // moves pos_ over n bytes of a single line
  int column_at(size_t pos);  // 1-based column of `pos` on the current line
  void lex_word(Token& tok);
  void lex_number(Token& tok);
  void lex_string(Token& tok);
  void lex_quoted_identifier(Token& tok, char close);
  void lex_blob(Token& tok);
  void lex_parameter(Token& tok);

  std::string_view src_;
  LexerOptions options_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;  // byte offset where the current line starts
  size_t col_pos_ = 0;     // column cache: col_ is the column of byte col_pos_
  int col_ = 1;
};

}  // namespace quereus
