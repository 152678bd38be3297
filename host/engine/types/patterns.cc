// LIKE and GLOB (see patterns.h).
#include "types/patterns.h"

#include <utf8proc.h>

#include <cstdint>

namespace quereus {

// LIKE and GLOB match iteratively in O(pattern x subject) time and constant stack: a
// pattern is a sequence of segments separated by runs of '%' ('*'); every other token
// consumes a number of bytes fixed by the subject position (one character), so a segment
// matches at a given position or not. Matching each segment at its earliest position is then optimal
// (the following wildcard absorbs whatever lies between), which needs only one resume
// point: the last wildcard seen and the subject position it has absorbed up to.

namespace {

// The result of matching one non-wildcard token of a pattern at a subject position.
enum class TokenMatch { kMatch, kMismatch, kNever };

inline bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The code point at `s` (advancing it), or a byte that is not UTF-8 as 0x110000 + byte, so
// it matches only itself.
inline int32_t next_code_point(const char*& s, const char* se) {
  const auto u = static_cast<unsigned char>(*s);
  if (u < 0x80) {
    ++s;
    return u;
  }
  utf8proc_int32_t cp = 0;
  const utf8proc_ssize_t n =
      utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s), static_cast<utf8proc_ssize_t>(se - s), &cp);
  if (n <= 0) {
    ++s;
    return 0x110000 + u;
  }
  s += n;
  return cp;
}

// LIKE: '_' is one character, ESCAPE x makes the next character literal, others compare
// exactly, code point by code point: LIKE is case-sensitive, as in the reference (which has
// no case_sensitive_like switch); `lower(x) like lower(p)` is the case-blind form. As in
// SQLite, the escape character takes precedence over the wildcards (ESCAPE '_' leaves no
// one-character wildcard, ESCAPE '%' no run wildcard: wildcard_match is then given none),
// and an escape that ends the pattern matches nothing. `esc` is a code point, -1 for none.
// Advances *p and *s on a match.
TokenMatch like_token(const char*& p, const char* pe, const char*& s, const char* se, int esc) {
  const char* q = p;
  int32_t pc = next_code_point(q, pe);
  if (esc >= 0 && pc == esc) {
    if (q >= pe) return TokenMatch::kNever;  // nothing left to escape
    pc = next_code_point(q, pe);
  } else if (pc == '_') {
    if (s >= se) return TokenMatch::kMismatch;
    (void)next_code_point(s, se);
    p = q;
    return TokenMatch::kMatch;
  }
  if (s >= se) return TokenMatch::kMismatch;
  if (next_code_point(s, se) != pc) return TokenMatch::kMismatch;
  p = q;
  return TokenMatch::kMatch;
}

// GLOB: '?' is one character, '[...]' a class of characters ('^' negates, 'a-z' ranges by
// code point, a ']' first is literal), others compare exactly. An unterminated class never
// matches.
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
    const char* s2 = s;
    const int32_t sc = have ? next_code_point(s2, se) : -1;
    while (q < pe && (first || *q != ']')) {
      first = false;
      const int32_t lo = next_code_point(q, pe);
      if (q + 1 < pe && *q == '-' && q[1] != ']') {
        ++q;
        const int32_t hi = next_code_point(q, pe);
        if (have && sc >= lo && sc <= hi) matched = true;
      } else if (have && sc == lo) {
        matched = true;
      }
    }
    if (q >= pe) return TokenMatch::kNever;
    if (!have || matched == negate) return TokenMatch::kMismatch;
    p = q + 1;
    s = s2;
    return TokenMatch::kMatch;
  }
  if (s >= se) return TokenMatch::kMismatch;
  if (c == '?') {
    (void)next_code_point(s, se);
    ++p;
    return TokenMatch::kMatch;
  }
  if (c != *s) return TokenMatch::kMismatch;
  ++p;
  ++s;
  return TokenMatch::kMatch;
}

// `interrupt` (may be null) is polled at every backtrack: the work is bounded by pattern
// x subject, which for long inputs is still long enough to want a timeout.
template <typename TokenFn>
bool wildcard_match(std::string_view pattern, std::string_view text, int star, int esc, TokenFn token,
                    InterruptCheck* interrupt) {
  const char* p = pattern.data();
  const char* const pe = p + pattern.size();
  const char* s = text.data();
  const char* const se = s + text.size();
  const char* resume_p = nullptr;  // the pattern just after the last wildcard run
  const char* resume_s = nullptr;  // the subject position that wildcard has absorbed up to
  for (;;) {
    // `star` is -1 when the escape character is the wildcard's (ESCAPE '%'). An escaped
    // wildcard is consumed with its escape as one token, so never seen here.
    if (p < pe && static_cast<unsigned char>(*p) == star) {
      while (p < pe && static_cast<unsigned char>(*p) == star) ++p;
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
    // Mismatch: let the last wildcard absorb one more character and retry its segment.
    if (resume_p == nullptr || resume_s >= se) return false;
    if (interrupt) interrupt->poll();
    ++resume_s;
    while (resume_s < se && is_utf8_continuation(*resume_s)) ++resume_s;
    p = resume_p;
    s = resume_s;
  }
}

}  // namespace

int like_escape_code_point(std::string_view escape) {
  if (escape.empty()) return -1;
  const char* e = escape.data();
  const char* const ee = e + escape.size();
  const int32_t cp = next_code_point(e, ee);
  return e == ee ? cp : -1;
}

bool like_match(std::string_view pattern, std::string_view text, int escape, InterruptCheck* interrupt) {
  return wildcard_match(pattern, text, escape == '%' ? -1 : '%', escape, like_token, interrupt);
}

bool glob_match(std::string_view pattern, std::string_view text, InterruptCheck* interrupt) {
  return wildcard_match(pattern, text, '*', -1, glob_token, interrupt);
}

}  // namespace quereus
