// Lexer: SQL text → tokens (first half of the parser stage; see lexer.h).
#include "parser/lexer.h"

#include <algorithm>
#include <array>
#include <utility>

namespace quereus {

namespace {

struct KeywordEntry {
  std::string_view word;  // lowercase
  Keyword keyword;
};

// Sorted by `word` for binary search.
constexpr std::array kKeywords = {
    KeywordEntry{"abort", Keyword::kAbort},
    KeywordEntry{"action", Keyword::kAction},
    KeywordEntry{"add", Keyword::kAdd},
    KeywordEntry{"all", Keyword::kAll},
    KeywordEntry{"alter", Keyword::kAlter},
    KeywordEntry{"always", Keyword::kAlways},
    KeywordEntry{"analyze", Keyword::kAnalyze},
    KeywordEntry{"and", Keyword::kAnd},
    KeywordEntry{"apply", Keyword::kApply},
    KeywordEntry{"as", Keyword::kAs},
    KeywordEntry{"asc", Keyword::kAsc},
    KeywordEntry{"assertion", Keyword::kAssertion},
    KeywordEntry{"autoincrement", Keyword::kAutoincrement},
    KeywordEntry{"begin", Keyword::kBegin},
    KeywordEntry{"between", Keyword::kBetween},
    KeywordEntry{"by", Keyword::kBy},
    KeywordEntry{"cascade", Keyword::kCascade},
    KeywordEntry{"case", Keyword::kCase},
    KeywordEntry{"cast", Keyword::kCast},
    KeywordEntry{"check", Keyword::kCheck},
    KeywordEntry{"collate", Keyword::kCollate},
    KeywordEntry{"commit", Keyword::kCommit},
    KeywordEntry{"conflict", Keyword::kConflict},
    KeywordEntry{"constraint", Keyword::kConstraint},
    KeywordEntry{"create", Keyword::kCreate},
    KeywordEntry{"cross", Keyword::kCross},
    KeywordEntry{"current", Keyword::kCurrent},
    KeywordEntry{"declare", Keyword::kDeclare},
    KeywordEntry{"default", Keyword::kDefault},
    KeywordEntry{"deferrable", Keyword::kDeferrable},
    KeywordEntry{"deferred", Keyword::kDeferred},
    KeywordEntry{"delete", Keyword::kDelete},
    KeywordEntry{"desc", Keyword::kDesc},
    KeywordEntry{"diff", Keyword::kDiff},
    KeywordEntry{"distinct", Keyword::kDistinct},
    KeywordEntry{"drop", Keyword::kDrop},
    KeywordEntry{"else", Keyword::kElse},
    KeywordEntry{"end", Keyword::kEnd},
    KeywordEntry{"except", Keyword::kExcept},
    KeywordEntry{"exists", Keyword::kExists},
    KeywordEntry{"explain", Keyword::kExplain},
    KeywordEntry{"fail", Keyword::kFail},
    KeywordEntry{"false", Keyword::kFalse},
    KeywordEntry{"following", Keyword::kFollowing},
    KeywordEntry{"foreign", Keyword::kForeign},
    KeywordEntry{"from", Keyword::kFrom},
    KeywordEntry{"full", Keyword::kFull},
    KeywordEntry{"generated", Keyword::kGenerated},
    KeywordEntry{"group", Keyword::kGroup},
    KeywordEntry{"having", Keyword::kHaving},
    KeywordEntry{"if", Keyword::kIf},
    KeywordEntry{"ignore", Keyword::kIgnore},
    KeywordEntry{"immediate", Keyword::kImmediate},
    KeywordEntry{"in", Keyword::kIn},
    KeywordEntry{"index", Keyword::kIndex},
    KeywordEntry{"initially", Keyword::kInitially},
    KeywordEntry{"inner", Keyword::kInner},
    KeywordEntry{"insert", Keyword::kInsert},
    KeywordEntry{"intersect", Keyword::kIntersect},
    KeywordEntry{"into", Keyword::kInto},
    KeywordEntry{"is", Keyword::kIs},
    KeywordEntry{"join", Keyword::kJoin},
    KeywordEntry{"key", Keyword::kKey},
    KeywordEntry{"lateral", Keyword::kLateral},
    KeywordEntry{"left", Keyword::kLeft},
    KeywordEntry{"like", Keyword::kLike},
    KeywordEntry{"limit", Keyword::kLimit},
    KeywordEntry{"natural", Keyword::kNatural},
    KeywordEntry{"no", Keyword::kNo},
    KeywordEntry{"not", Keyword::kNot},
    KeywordEntry{"null", Keyword::kNull},
    KeywordEntry{"offset", Keyword::kOffset},
    KeywordEntry{"on", Keyword::kOn},
    KeywordEntry{"or", Keyword::kOr},
    KeywordEntry{"order", Keyword::kOrder},
    KeywordEntry{"outer", Keyword::kOuter},
    KeywordEntry{"over", Keyword::kOver},
    KeywordEntry{"partition", Keyword::kPartition},
    KeywordEntry{"pragma", Keyword::kPragma},
    KeywordEntry{"preceding", Keyword::kPreceding},
    KeywordEntry{"primary", Keyword::kPrimary},
    KeywordEntry{"range", Keyword::kRange},
    KeywordEntry{"recursive", Keyword::kRecursive},
    KeywordEntry{"references", Keyword::kReferences},
    KeywordEntry{"release", Keyword::kRelease},
    KeywordEntry{"rename", Keyword::kRename},
    KeywordEntry{"replace", Keyword::kReplace},
    KeywordEntry{"restrict", Keyword::kRestrict},
    KeywordEntry{"returning", Keyword::kReturning},
    KeywordEntry{"right", Keyword::kRight},
    KeywordEntry{"rollback", Keyword::kRollback},
    KeywordEntry{"row", Keyword::kRow},
    KeywordEntry{"rows", Keyword::kRows},
    KeywordEntry{"savepoint", Keyword::kSavepoint},
    KeywordEntry{"select", Keyword::kSelect},
    KeywordEntry{"set", Keyword::kSet},
    KeywordEntry{"stored", Keyword::kStored},
    KeywordEntry{"table", Keyword::kTable},
    KeywordEntry{"temp", Keyword::kTemp},
    KeywordEntry{"temporary", Keyword::kTemporary},
    KeywordEntry{"then", Keyword::kThen},
    KeywordEntry{"to", Keyword::kTo},
    KeywordEntry{"transaction", Keyword::kTransaction},
    KeywordEntry{"true", Keyword::kTrue},
    KeywordEntry{"unbounded", Keyword::kUnbounded},
    KeywordEntry{"union", Keyword::kUnion},
    KeywordEntry{"unique", Keyword::kUnique},
    KeywordEntry{"update", Keyword::kUpdate},
    KeywordEntry{"using", Keyword::kUsing},
    KeywordEntry{"values", Keyword::kValues},
    KeywordEntry{"view", Keyword::kView},
    KeywordEntry{"virtual", Keyword::kVirtual},
    KeywordEntry{"when", Keyword::kWhen},
    KeywordEntry{"where", Keyword::kWhere},
    KeywordEntry{"with", Keyword::kWith},
    KeywordEntry{"xor", Keyword::kXor},
};

constexpr size_t kMaxKeywordLength = 13;  // "autoincrement"

constexpr bool is_sorted_table() {
  for (size_t i = 1; i < kKeywords.size(); ++i) {
    if (!(kKeywords[i - 1].word < kKeywords[i].word)) return false;
  }
  return true;
}
static_assert(is_sorted_table(), "keyword table must be sorted");

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
inline bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool is_word_char(char c) { return is_word_start(c) || is_digit(c); }
inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
inline char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

Keyword lookup_keyword(std::string_view word) {
  if (word.size() < 2 || word.size() > kMaxKeywordLength) return Keyword::kNone;
  char buf[kMaxKeywordLength];
  for (size_t i = 0; i < word.size(); ++i) buf[i] = lower(word[i]);
  std::string_view key(buf, word.size());
  auto it = std::lower_bound(kKeywords.begin(), kKeywords.end(), key,
                             [](const KeywordEntry& e, std::string_view k) { return e.word < k; });
  if (it != kKeywords.end() && it->word == key) return it->keyword;
  return Keyword::kNone;
}

std::string_view keyword_text(Keyword kw) {
  for (const auto& e : kKeywords) {
    if (e.keyword == kw) return e.word;
  }
  return {};
}

Lexer::Lexer(std::string_view sql, LexerOptions options) : src_(sql), options_(options) {}

void Lexer::fail(const std::string& message, int line, int column) const {
  throw Error(StatusCode::kSyntax, message, SourceSite{line, column});
}

std::vector<Token> Lexer::tokenize(std::string_view sql, LexerOptions options) {
  Lexer lexer(sql, options);
  std::vector<Token> tokens;
  tokens.reserve(sql.size() / 5 + 2);
  for (;;) {
    tokens.push_back(lexer.next());
    if (tokens.back().kind == TokenKind::kEof) break;
  }
  return tokens;
}

void Lexer::advance(size_t n) { pos_ += n; }

// Columns count code points, not bytes, so a multi-byte character before a token does
// not shift the reported column. The count is cached so a long line costs O(length).
int Lexer::column_at(size_t pos) {
  if (col_pos_ < line_start_) {
    col_pos_ = line_start_;
    col_ = 1;
  }
  for (; col_pos_ < pos; ++col_pos_) {
    if ((static_cast<unsigned char>(src_[col_pos_]) & 0xC0) != 0x80) ++col_;
  }
  return col_;
}

void Lexer::skip_space_and_comments() {
  const size_t n = src_.size();
  while (pos_ < n) {
    char c = src_[pos_];
    if (c == '\n') {
      ++pos_;
      ++line_;
      line_start_ = pos_;
    } else if (is_space(c)) {
      ++pos_;
    } else if (c == '-' && pos_ + 1 < n && src_[pos_ + 1] == '-') {
      while (pos_ < n && src_[pos_] != '\n') ++pos_;
    } else if (c == '/' && pos_ + 1 < n && src_[pos_ + 1] == '/') {
      while (pos_ < n && src_[pos_] != '\n') ++pos_;
    } else if (c == '/' && pos_ + 1 < n && src_[pos_ + 1] == '*') {
      const int start_line = line_;
      const int start_col = column_at(pos_);
      pos_ += 2;
      int depth = 1;  // nested /* */ as in the reference
      while (depth > 0) {
        if (pos_ >= n) fail("Unterminated comment", start_line, start_col);
        char d = src_[pos_];
        if (d == '/' && pos_ + 1 < n && src_[pos_ + 1] == '*') {
          depth++;
          pos_ += 2;
        } else if (d == '*' && pos_ + 1 < n && src_[pos_ + 1] == '/') {
          depth--;
          pos_ += 2;
        } else {
          if (d == '\n') {
            ++line_;
            line_start_ = pos_ + 1;
          }
          ++pos_;
        }
      }
    } else {
      break;
    }
  }
}

Token Lexer::next() {
  skip_space_and_comments();
  Token tok;
  tok.offset = static_cast<uint32_t>(pos_);
  tok.line = line_;
  tok.column = column_at(pos_);
  const size_t n = src_.size();
  if (pos_ >= n) {
    tok.kind = TokenKind::kEof;
    return tok;
  }
  const char c = src_[pos_];
  const char c1 = pos_ + 1 < n ? src_[pos_ + 1] : '\0';
  const char c2 = pos_ + 2 < n ? src_[pos_ + 2] : '\0';
  auto punct = [&](TokenKind k, size_t len) {
    tok.kind = k;
    advance(len);
  };
  switch (c) {
    case '(':
      punct(TokenKind::kLParen, 1);
      break;
    case ')':
      punct(TokenKind::kRParen, 1);
      break;
    case ',':
      punct(TokenKind::kComma, 1);
      break;
    case ';':
      punct(TokenKind::kSemicolon, 1);
      break;
    case '{':
      punct(TokenKind::kLBrace, 1);
      break;
    case '}':
      punct(TokenKind::kRBrace, 1);
      break;
    case '+':
      punct(TokenKind::kPlus, 1);
      break;
    case '*':
      punct(TokenKind::kStar, 1);
      break;
    case '/':
      punct(TokenKind::kSlash, 1);
      break;
    case '%':
      punct(TokenKind::kPercent, 1);
      break;
    case '~':
      punct(TokenKind::kTilde, 1);
      break;
    case '&':
      punct(TokenKind::kAmp, 1);
      break;
    case '-':
      if (c1 == '>') {
        if (c2 == '>')
          punct(TokenKind::kArrow2, 3);
        else
          punct(TokenKind::kArrow, 2);
      } else {
        punct(TokenKind::kMinus, 1);
      }
      break;
    case '|':
      if (c1 == '|')
        punct(TokenKind::kConcat, 2);
      else
        punct(TokenKind::kPipe, 1);
      break;
    case '=':
      if (c1 == '=')
        punct(TokenKind::kEqEq, 2);
      else
        punct(TokenKind::kEq, 1);
      break;
    case '!':
      if (c1 == '=')
        punct(TokenKind::kNe, 2);
      else
        fail("Unexpected character: !", tok.line, tok.column);
      break;
    case '<':
      if (c1 == '=')
        punct(TokenKind::kLe, 2);
      else if (c1 == '>')
        punct(TokenKind::kNe, 2);
      else if (c1 == '<')
        punct(TokenKind::kShl, 2);
      else
        punct(TokenKind::kLt, 1);
      break;
    case '>':
      if (c1 == '=')
        punct(TokenKind::kGe, 2);
      else if (c1 == '>')
        punct(TokenKind::kShr, 2);
      else
        punct(TokenKind::kGt, 1);
      break;
    case '.':
      if (is_digit(c1))
        lex_number(tok);
      else
        punct(TokenKind::kDot, 1);
      break;
    case '\'':
      lex_string(tok);
      break;
    case '"':
      lex_quoted_identifier(tok, '"');
      break;
    case '`':
      lex_quoted_identifier(tok, '`');
      break;
    case '[':
      lex_quoted_identifier(tok, ']');
      break;
    case '?':
    case ':':
    case '$':
    case '@':
      lex_parameter(tok);
      break;
    default:
      if ((c == 'x' || c == 'X') && c1 == '\'') {
        lex_blob(tok);
      } else if (is_digit(c)) {
        lex_number(tok);
      } else if (is_word_start(c)) {
        lex_word(tok);
      } else {
        // Report the whole UTF-8 character (e.g. "→"), never a broken byte.
        size_t len = 1;
        unsigned char u = static_cast<unsigned char>(c);
        if (u >= 0xF0)
          len = 4;
        else if (u >= 0xE0)
          len = 3;
        else if (u >= 0xC0)
          len = 2;
        len = std::min(len, n - pos_);
        fail("Unexpected character: " + std::string(src_.substr(pos_, len)), tok.line, tok.column);
      }
  }
  tok.length = static_cast<uint32_t>(pos_ - tok.offset);
  return tok;
}

void Lexer::lex_word(Token& tok) {
  const size_t start = pos_;
  while (pos_ < src_.size() && is_word_char(src_[pos_])) ++pos_;
  std::string_view word = src_.substr(start, pos_ - start);
  tok.keyword = lookup_keyword(word);
  tok.kind = tok.keyword == Keyword::kNone ? TokenKind::kIdentifier : TokenKind::kKeyword;
  tok.text.assign(word);
}

void Lexer::lex_number(Token& tok) {
  const size_t start = pos_;
  const size_t n = src_.size();
  bool is_float = false;
  if (src_[pos_] == '0' && pos_ + 2 < n && (src_[pos_ + 1] == 'x' || src_[pos_ + 1] == 'X') &&
      is_hex(src_[pos_ + 2])) {
    pos_ += 2;
    while (pos_ < n && is_hex(src_[pos_])) ++pos_;
    tok.kind = TokenKind::kInteger;
    tok.text.assign(src_.substr(start, pos_ - start));
    return;
  }
  while (pos_ < n && is_digit(src_[pos_])) ++pos_;
  // sql.md's float_literal is `digit+ "." digit*`: a trailing dot (`5.`, `5.e2`) is a REAL.
  // A second dot after it (`1..2`) is left alone, as no literal has one.
  if (pos_ < n && src_[pos_] == '.' && !(pos_ + 1 < n && src_[pos_ + 1] == '.')) {
    is_float = true;
    ++pos_;
    while (pos_ < n && is_digit(src_[pos_])) ++pos_;
  }
  if (pos_ < n && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
    size_t p = pos_ + 1;
    if (p < n && (src_[p] == '+' || src_[p] == '-')) ++p;
    if (p >= n || !is_digit(src_[p])) {
      fail("Invalid number literal: expected digits after exponent", tok.line, tok.column);
    }
    while (p < n && is_digit(src_[p])) ++p;
    pos_ = p;
    is_float = true;
  }
  tok.kind = is_float ? TokenKind::kFloat : TokenKind::kInteger;
  tok.text.assign(src_.substr(start, pos_ - start));
}

void Lexer::lex_string(Token& tok) {
  const size_t n = src_.size();
  ++pos_;  // opening quote
  size_t chunk = pos_;
  for (;;) {
    if (pos_ >= n) fail("Unterminated string literal", tok.line, tok.column);
    char c = src_[pos_];
    if (c == '\'') {
      tok.text.append(src_.substr(chunk, pos_ - chunk));
      ++pos_;
      if (pos_ < n && src_[pos_] == '\'') {  // '' is one quote
        tok.text.push_back('\'');
        ++pos_;
        chunk = pos_;
        continue;
      }
      break;
    }
    if (c == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
  tok.kind = TokenKind::kString;
}

void Lexer::lex_quoted_identifier(Token& tok, char close) {
  const size_t n = src_.size();
  ++pos_;
  size_t chunk = pos_;
  for (;;) {
    if (pos_ >= n) fail("Unterminated quoted identifier", tok.line, tok.column);
    char c = src_[pos_];
    if (c == close) {
      tok.text.append(src_.substr(chunk, pos_ - chunk));
      ++pos_;
      // "" and `` escape the quote; ] cannot be escaped (as in SQLite).
      if (close != ']' && pos_ < n && src_[pos_] == close) {
        tok.text.push_back(close);
        ++pos_;
        chunk = pos_;
        continue;
      }
      break;
    }
    if (c == '\n') {
      ++line_;
      line_start_ = pos_ + 1;
    }
    ++pos_;
  }
  tok.kind = TokenKind::kQuotedIdentifier;
}

void Lexer::lex_blob(Token& tok) {
  const size_t n = src_.size();
  pos_ += 2;  // x'
  int pending = -1;
  for (;;) {
    if (pos_ >= n) fail("Unterminated blob literal", tok.line, tok.column);
    char c = src_[pos_];
    if (c == '\'') {
      ++pos_;
      break;
    }
    if (is_hex(c)) {
      if (pending < 0) {
        pending = hex_value(c);
      } else {
        tok.text.push_back(static_cast<char>((pending << 4) | hex_value(c)));
        pending = -1;
      }
    } else if (is_space(c)) {
      if (c == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      }
    } else {
      fail("Invalid character in blob literal", tok.line, tok.column);
    }
    ++pos_;
  }
  if (pending >= 0) {
    fail("Blob literal must have an even number of hex digits", tok.line, tok.column);
  }
  tok.kind = TokenKind::kBlob;
}

void Lexer::lex_parameter(Token& tok) {
  const size_t n = src_.size();
  const size_t start = pos_;
  const char sigil = src_[pos_];
  if (sigil == '@' && !options_.at_parameters) {
    fail("Unexpected character: @", tok.line, tok.column);
  }
  ++pos_;
  if (sigil == '?') {
    if (options_.numbered_parameters) {
      while (pos_ < n && is_digit(src_[pos_])) ++pos_;
    }
  } else {
    // :name, $name, @name; an all-digit name (:1) names a positional slot.
    const size_t name_start = pos_;
    while (pos_ < n && is_word_char(src_[pos_])) ++pos_;
    if (pos_ == name_start) {
      fail("Expected identifier or number after parameter prefix", tok.line, tok.column);
    }
  }
  tok.kind = TokenKind::kParameter;
  tok.text.assign(src_.substr(start, pos_ - start));
}

}  // namespace quereus
