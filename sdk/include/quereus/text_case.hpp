// quereus/text_case.hpp — Unicode case mapping as the engine does it: `lower()` and
// `upper()`, and the NOCASE collation's fold. Header-only; a file that includes it links
// utf8proc (Debian: libutf8proc-dev; CMake: pkg_check_modules(... libutf8proc)).
//
// The mapping is JavaScript's locale-independent toLowerCase / toUpperCase, which the
// reference engine uses: each code point through Unicode's simple case mapping (utf8proc),
// plus the unconditional special casings that change the length ('ß' → "SS", the Latin
// ligatures, 'İ' → "i̇") and the final sigma ('ΣΑΣ' → "σας"). Bytes that are not UTF-8 are
// kept as they are.
//
// NOCASE compares the lower-case mappings of its operands as bytes (code point order), so a
// module that keys text under NOCASE stores `nocase_fold(s)` and gets the engine's order.
#ifndef QUEREUS_TEXT_CASE_HPP_
#define QUEREUS_TEXT_CASE_HPP_

#include <utf8proc.h>

#include <string>
#include <string_view>

namespace quereus::sdk {

// True when every byte of `s` is ASCII (the common case, folded without utf8proc).
inline bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

// `s` in lower (upper = false) or upper case.
inline std::string map_case(std::string_view s, bool upper) {
  std::string out;
  out.reserve(s.size());
  auto put = [&](utf8proc_int32_t cp) {
    utf8proc_uint8_t buf[4];
    const utf8proc_ssize_t m = utf8proc_encode_char(cp, buf);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(m));
  };
  auto is_letter = [](utf8proc_int32_t cp) {
    const utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT;
  };
  auto p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s.size());
  utf8proc_int32_t prev = -1;
  while (left > 0) {
    if (*p < 0x80) {  // ASCII
      char c = static_cast<char>(*p);
      if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
      if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      out += c;
      prev = *p;
      ++p;
      --left;
      continue;
    }
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {
      out += static_cast<char>(*p);
      prev = -1;
      ++p;
      --left;
      continue;
    }
    p += n;
    left -= n;
    if (upper) {
      switch (cp) {
        case 0x00DF: out += "SS"; break;
        case 0xFB00: out += "FF"; break;
        case 0xFB01: out += "FI"; break;
        case 0xFB02: out += "FL"; break;
        case 0xFB03: out += "FFI"; break;
        case 0xFB04: out += "FFL"; break;
        case 0xFB05:
        case 0xFB06: out += "ST"; break;
        case 0x0149: put(0x02BC); out += 'N'; break;
        default: put(utf8proc_toupper(cp));
      }
    } else if (cp == 0x0130) {
      out += 'i';
      put(0x0307);
    } else if (cp == 0x03A3) {
      utf8proc_int32_t next = -1;
      if (left > 0) (void)utf8proc_iterate(p, left, &next);
      put(prev >= 0 && is_letter(prev) && !(next >= 0 && is_letter(next)) ? 0x03C2 : 0x03C3);
    } else {
      put(utf8proc_tolower(cp));
    }
    prev = cp;
  }
  return out;
}

// The NOCASE fold: the lower-case mapping (ASCII text folded in place).
inline std::string nocase_fold(std::string_view s) {
  if (!is_ascii(s)) return map_case(s, false);
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

// NOCASE comparison: the folds compared as bytes (-1, 0, 1). ASCII operands fold byte by
// byte without building the folds.
inline int nocase_compare(std::string_view a, std::string_view b) {
  auto bytes = [](std::string_view x, std::string_view y) {
    const size_t n = x.size() < y.size() ? x.size() : y.size();
    for (size_t i = 0; i < n; ++i) {
      unsigned char u = static_cast<unsigned char>(x[i]), v = static_cast<unsigned char>(y[i]);
      if (u >= 'A' && u <= 'Z') u = static_cast<unsigned char>(u + 32);
      if (v >= 'A' && v <= 'Z') v = static_cast<unsigned char>(v + 32);
      if (u != v) return u < v ? -1 : 1;
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  };
  if (is_ascii(a) && is_ascii(b)) return bytes(a, b);
  const int c = nocase_fold(a).compare(nocase_fold(b));  // unsigned bytes
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

// One code point's simple lower-case mapping (LIKE compares code point by code point).
inline int32_t simple_lower(int32_t cp) {
  if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
  return utf8proc_tolower(cp);
}

}  // namespace quereus::sdk

#endif  // QUEREUS_TEXT_CASE_HPP_
