// LIKE and GLOB (see patterns.h).
#include "types/patterns.h"

#include <cctype>

namespace quereus {

// LIKE and GLOB match iteratively in O(pattern x subject) time and constant stack: a
// pattern is a sequence of segments separated by runs of '%' ('*'); every other token
// consumes a number of bytes fixed by the subject position, so a segment matches at a
// given position or not. Matching each segment at its earliest position is then optimal
// (the following wildcard absorbs whatever lies between), which needs only one resume
// point: the last wildcard seen and the subject position it has absorbed up to.

namespace {

// The result of matching one non-wildcard token of a pattern at a subject position.
enum class TokenMatch { kMatch, kMismatch, kNever };

inline bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

inline int ascii_lower(unsigned char c) { return std::tolower(c); }

// LIKE: '_' is one UTF-8 character, ESCAPE x makes the next character literal, others
// compare ASCII case-insensitively. Advances *p and *s on a match.
TokenMatch like_token(const char*& p, const char* pe, const char*& s, const char* se, int esc) {
  unsigned char c = static_cast<unsigned char>(*p);
  if (esc >= 0 && c == esc && p + 1 < pe) {
    if (s >= se || ascii_lower(static_cast<unsigned char>(*s)) != ascii_lower(static_cast<unsigned char>(p[1])))
      return TokenMatch::kMismatch;
    p += 2;
    ++s;
    return TokenMatch::kMatch;
  }
  if (s >= se) return TokenMatch::kMismatch;
  if (c == '_') {
    ++s;
    while (s < se && is_utf8_continuation(*s)) ++s;
    ++p;
    return TokenMatch::kMatch;
  }
  if (ascii_lower(c) != ascii_lower(static_cast<unsigned char>(*s))) return TokenMatch::kMismatch;
  ++p;
  ++s;
  return TokenMatch::kMatch;
}

// GLOB: '?' is one byte, '[...]' a byte class ('^' negates, 'a-z' ranges, a ']' first is
// literal), others compare exactly. An unterminated class never matches.
TokenMatch glob_token(const char*& p, const char* pe, const char*& s, const char* se, int /*esc*/) {
  char c = *p;
  if (c == '[') {
    const char* q = p + 1;
    bool negate = false;
    if (q < pe && *q == '^') {
      negate = true;
      ++q;
    }
    bool matched = false;
    bool first = true;
    const bool have = s < se;
    while (q < pe && (first || *q != ']')) {
      first = false;
      if (q + 2 < pe && q[1] == '-' && q[2] != ']') {
        if (have && *s >= q[0] && *s <= q[2]) matched = true;
        q += 3;
      } else {
        if (have && *s == *q) matched = true;
        ++q;
      }
    }
    if (q >= pe) return TokenMatch::kNever;
    if (!have || matched == negate) return TokenMatch::kMismatch;
    p = q + 1;
    ++s;
    return TokenMatch::kMatch;
  }
  if (s >= se) return TokenMatch::kMismatch;
  if (c != '?' && c != *s) return TokenMatch::kMismatch;
  ++p;
  ++s;
  return TokenMatch::kMatch;
}

// `interrupt` (may be null) is polled at every backtrack: the work is bounded by pattern
// x subject, which for long inputs is still long enough to want a timeout.
template <typename TokenFn>
bool wildcard_match(std::string_view pattern, std::string_view text, char star, int esc, TokenFn token,
                    InterruptCheck* interrupt) {
  const char* p = pattern.data();
  const char* const pe = p + pattern.size();
  const char* s = text.data();
  const char* const se = s + text.size();
  const char* resume_p = nullptr;  // the pattern just after the last wildcard run
  const char* resume_s = nullptr;  // the subject position that wildcard has absorbed up to
  for (;;) {
    // An escaped wildcard (ESCAPE '%' then '%x') is a literal, matched as a token.
    const bool escaped = esc >= 0 && static_cast<unsigned char>(star) == esc && p + 1 < pe;
    if (p < pe && *p == star && !escaped) {
      while (p < pe && *p == star) ++p;
      if (p == pe) return true;
      resume_p = p;
      resume_s = s;
      continue;
    }
    if (p == pe) {
      if (s == se) return true;
    } else {
      const char* p2 = p;
      const char* s2 = s;
      TokenMatch m = token(p2, pe, s2, se, esc);
      if (m == TokenMatch::kNever) return false;
      if (m == TokenMatch::kMatch) {
        p = p2;
        s = s2;
        continue;
      }
    }
    // Mismatch: let the last wildcard absorb one more byte and retry its segment.
    if (resume_p == nullptr || resume_s >= se) return false;
    if (interrupt) interrupt->poll();
    ++resume_s;
    p = resume_p;
    s = resume_s;
  }
}

}  // namespace

bool like_match(std::string_view pattern, std::string_view text, int escape, InterruptCheck* interrupt) {
  return wildcard_match(pattern, text, '%', escape, like_token, interrupt);
}

bool glob_match(std::string_view pattern, std::string_view text, InterruptCheck* interrupt) {
  return wildcard_match(pattern, text, '*', -1, glob_token, interrupt);
}

}  // namespace quereus
