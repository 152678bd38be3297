// printf(FORMAT, ...) / format(FORMAT, ...): SQLite's SQL printf, conversion by conversion
// (docs/sql-dialect.md "printf"). The reference docs do not describe printf; SQLite's
// function is the one users know, so its answers are the target, checked against the
// sqlite3 binary (tests/logic/153-printf). Two deliberate differences, both from our type
// rules: a text conversion (%s %q %Q %w %c) renders its argument by the one value-to-text
// conversion (types.md "Value to text": 1.0 is `1`, true is `true`), and widths and
// precisions of text conversions count characters, never splitting a UTF-8 sequence
// (SQLite counts bytes unless the `!` flag is given).
//
// A format is read left to right. `%` starts a conversion: flags (`-` left-justify, `+` / ` `
// sign, `0` zero-pad, `#` alternate form, `!` second alternate form, `,` digit groups), a
// width (digits or `*`), a precision (`.` then digits or `*`), `l` / `ll`, and the
// conversion character. An unknown conversion character ends the output there, as SQLite's
// does; a `%` at the very end is kept.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "common/status.h"
#include "functions/function_util.h"
#include "functions/printf.h"
#include "types/conversions.h"

namespace quereus {

namespace {

using fnutil::Args;

// The largest width or precision a conversion may ask for: beyond it the result would be
// larger than any value the engine keeps (SQLite answers "string or blob too big").
constexpr int64_t kMaxPad = 16 * 1024 * 1024;

// The format's arguments, taken in order; a missing one reads as NULL (0, 0.0, no text).
class ArgReader {
 public:
  explicit ArgReader(Args a) : a_(a) {}
  Value take() { return next_ < a_.size() ? a_[next_++] : Value(); }
  int64_t integer() {
    Value v = take();
    if (v.is_null()) return 0;
    Value i = cast_value(v, QRS_LT_INTEGER);
    if (i.type() == ValueType::kInteger || i.type() == ValueType::kBoolean) return i.as_int();
    // A number past int64 (a bigint, a huge real) saturates, as SQLite's conversion does.
    Value r = cast_value(v, QRS_LT_REAL);
    if (r.is_null()) return 0;
    double d = r.as_real();
    if (std::isnan(d)) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return static_cast<int64_t>(d);
  }
  double real() {
    Value v = take();
    if (v.is_null()) return 0.0;
    Value r = cast_value(v, QRS_LT_REAL);
    return r.is_null() ? 0.0 : r.as_real();
  }
  std::optional<std::string> text() {
    Value v = take();
    if (v.is_null()) return std::nullopt;
    return value_to_text(v);
  }

 private:
  Args a_;
  size_t next_ = 1;
};

struct Spec {
  bool left = false, zeropad = false, alt = false, alt2 = false;
  char sign = 0;       // '+', ' ' or 0: what a non-negative signed number is prefixed with
  char thousands = 0;  // ',' when digit groups were asked for
  int64_t width = 0;
  int64_t precision = -1;  // -1: none given
};

// The first `n` characters of s (all of it when n < 0).
std::string first_chars(const std::string& s, int64_t n) {
  if (n < 0) return s;
  size_t i = 0;
  for (int64_t k = 0; k < n && i < s.size(); ++k) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
  }
  return s.substr(0, i);
}

size_t char_count(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Pads `text` (of `chars` characters) with spaces to the spec's width.
void emit(std::string& out, const std::string& text, size_t chars, const Spec& sp) {
  const int64_t fill = sp.width - static_cast<int64_t>(chars);
  if (fill > 0 && !sp.left) out.append(static_cast<size_t>(fill), ' ');
  out += text;
  if (fill > 0 && sp.left) out.append(static_cast<size_t>(fill), ' ');
}

// d i u r (decimal), x X o p (radix): SQLite's integer conversions.
std::string integer_conversion(char conv, int64_t arg, Spec sp) {
  const bool is_signed = conv == 'd' || conv == 'i' || conv == 'r';
  const int base = conv == 'o' ? 8 : (conv == 'x' || conv == 'X' || conv == 'p') ? 16 : 10;
  const char* digits = conv == 'x' ? "0123456789abcdef" : "0123456789ABCDEF";
  const char thousands = (conv == 'd' || conv == 'i' || conv == 'u') ? sp.thousands : 0;
  uint64_t v;
  char prefix = 0;
  if (is_signed) {
    if (arg < 0) {
      v = arg == INT64_MIN ? uint64_t{1} << 63 : static_cast<uint64_t>(-arg);
      prefix = '-';
    } else {
      v = static_cast<uint64_t>(arg);
      prefix = sp.sign;
    }
  } else {
    v = static_cast<uint64_t>(arg);
  }
  const bool alt = sp.alt && v != 0 && (conv == 'o' || conv == 'x' || conv == 'X' || conv == 'p');
  int64_t precision = sp.precision;
  if (sp.zeropad && precision < sp.width - (prefix != 0)) precision = sp.width - (prefix != 0);
  std::string body;  // built backwards
  size_t ndigits = 0;  // what the precision counts: the ordinal suffix too, as SQLite's does
  if (conv == 'r') {
    static const char kOrd[] = "thstndrd";
    int x = static_cast<int>(v % 10);
    if (x >= 4 || (v / 10) % 10 == 1) x = 0;
    body += kOrd[x * 2 + 1];
    body += kOrd[x * 2];
    ndigits = 2;
  }
  do {
    body += digits[v % static_cast<uint64_t>(base)];
    v /= static_cast<uint64_t>(base);
    ++ndigits;
  } while (v > 0);
  while (precision > static_cast<int64_t>(ndigits)) {
    body += '0';
    ++ndigits;
  }
  std::string out(body.rbegin(), body.rend());
  if (thousands) {
    // A separator between each group of three digits, counted from the right (the ordinal
    // suffix never goes with digit groups: %r takes no ',').
    std::string grouped;
    for (size_t k = 0; k < out.size(); ++k) {
      if (k > 0 && (out.size() - k) % 3 == 0) grouped += thousands;
      grouped += out[k];
    }
    out = std::move(grouped);
  }
  std::string head;
  if (prefix) head += prefix;
  if (alt) head += conv == 'o' ? "0" : conv == 'X' ? "0X" : "0x";
  return head + out;
}

// One decimal digit of *val (in [0, 10)) while significant digits remain, else '0'.
char next_digit(long double* val, int* significant) {
  if (*significant <= 0) return '0';
  --*significant;
  int digit = static_cast<int>(*val);
  *val = (*val - digit) * 10.0;
  return static_cast<char>('0' + digit);
}

// f e E g G: SQLite's (3.40) floating-point conversions: at most 16 significant digits
// (26 with `!`), then zeros; ties and near-ties round away from zero on the printed digit.
std::string float_conversion(char conv, double arg, Spec sp) {
  enum Kind { kFloat, kExp, kGeneric } kind = conv == 'f' ? kFloat : (conv == 'e' || conv == 'E') ? kExp : kGeneric;
  const bool upper = conv == 'E' || conv == 'G';
  int64_t precision = sp.precision < 0 ? 6 : std::min<int64_t>(sp.precision, kMaxPad);
  long double value = arg;
  char prefix = sp.sign;
  if (value < 0) {
    value = -value;
    prefix = '-';
  }
  if (kind == kGeneric && precision > 0) --precision;
  int64_t idx = precision & 0xfff;
  static const double kRound[] = {5.0e-01, 5.0e-02, 5.0e-03, 5.0e-04, 5.0e-05,
                                  5.0e-06, 5.0e-07, 5.0e-08, 5.0e-09, 5.0e-10};
  double rounder = kRound[idx % 10];
  while (idx >= 10) {
    rounder *= 1.0e-10;
    idx -= 10;
  }
  if (kind == kFloat) {
    double rx = static_cast<double>(value);
    uint64_t bits;
    std::memcpy(&bits, &rx, sizeof bits);
    int ex = -1023 + static_cast<int>((bits >> 52) & 0x7ff);
    if (precision + (ex / 3) < 15) rounder = static_cast<double>(rounder + value * 3e-16);
    value += rounder;
  }
  std::string out;
  if (std::isnan(static_cast<double>(value))) return "NaN";
  int exp = 0;
  if (value > 0.0L) {
    long double scale = 1.0L;
    // The constants are doubles widened, as in SQLite's source (1e100 and 1e-8 are not
    // the long doubles nearest those decimals).
    while (value >= 1e100 * scale && exp <= 350) { scale *= 1e100; exp += 100; }
    while (value >= 1e10 * scale && exp <= 350) { scale *= 1e10; exp += 10; }
    while (value >= 10.0 * scale && exp <= 350) { scale *= 10.0; exp++; }
    value /= scale;
    while (value < 1e-8) { value *= 1e8; exp -= 8; }
    while (value < 1.0) { value *= 10.0; exp--; }
    if (exp > 350) {
      if (prefix) out += prefix;
      return out + "Inf";
    }
  }
  if (kind != kFloat) {
    value += rounder;
    if (value >= 10.0) {
      value *= 0.1;
      exp++;
    }
  }
  bool strip_zeros;
  if (kind == kGeneric) {
    strip_zeros = !sp.alt;
    if (exp < -4 || exp > precision) {
      kind = kExp;
    } else {
      precision -= exp;
      kind = kFloat;
    }
  } else {
    strip_zeros = sp.alt2;
  }
  int e2 = kind == kExp ? 0 : exp;
  int significant = 16 + (sp.alt2 ? 10 : 0);
  const bool point = precision > 0 || sp.alt || sp.alt2;
  if (prefix) out += prefix;
  if (e2 < 0) {
    out += '0';
  } else {
    for (; e2 >= 0; e2--) out += next_digit(&value, &significant);
  }
  if (point) out += '.';
  for (e2++; e2 < 0 && precision > 0; precision--, e2++) out += '0';
  while (precision-- > 0) out += next_digit(&value, &significant);
  if (strip_zeros && point) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') {
      if (sp.alt2) out += '0';
      else out.pop_back();
    }
  }
  if (kind == kExp) {
    out += upper ? 'E' : 'e';
    int e = exp;
    out += e < 0 ? '-' : '+';
    if (e < 0) e = -e;
    if (e >= 100) {
      out += static_cast<char>('0' + e / 100);
      e %= 100;
    }
    out += static_cast<char>('0' + e / 10);
    out += static_cast<char>('0' + e % 10);
  }
  // Zero padding goes between the sign and the digits.
  if (sp.zeropad && !sp.left && static_cast<int64_t>(out.size()) < sp.width) {
    const size_t at = prefix ? 1 : 0;
    out.insert(at, static_cast<size_t>(sp.width - static_cast<int64_t>(out.size())), '0');
  }
  return out;
}

// q Q w: the text with each quote doubled (' for q and Q, " for w); Q also encloses it in
// quotes and spells NULL as NULL, q and w spell it (NULL). A precision cuts the input.
std::string escape_conversion(char conv, const std::optional<std::string>& arg, const Spec& sp) {
  const char quote = conv == 'w' ? '"' : '\'';
  const std::string text = first_chars(arg ? *arg : conv == 'Q' ? "NULL" : "(NULL)", sp.precision);
  std::string out;
  const bool enclose = arg && conv == 'Q';
  if (enclose) out += quote;
  for (char c : text) {
    out += c;
    if (c == quote) out += c;
  }
  if (enclose) out += quote;
  return out;
}

int64_t bounded(int64_t n, const char* what) {
  if (n > kMaxPad)
    throw Error(StatusCode::kTooBig, std::string("printf: ") + what + " " + std::to_string(n) +
                                         " is too large (at most " + std::to_string(kMaxPad) + ")");
  return n;
}

}  // namespace

Value printf_fn(Args a) {
  if (a.empty() || a[0].is_null()) return Value();
  const std::string fmt = value_to_text(a[0]);
  ArgReader args(a);
  std::string out;
  // As SQLite's: the result is NULL when nothing was ever written — an empty format, or
  // one whose first conversion ends it (`printf('%y')`); an empty conversion still counts.
  bool wrote = false;
  auto result = [&] { return wrote ? Value::Text(out) : Value(); };
  const size_t n = fmt.size();
  for (size_t i = 0; i < n; ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      wrote = true;
      continue;
    }
    if (++i >= n) {  // a '%' that ends the format is kept
      out += '%';
      wrote = true;
      break;
    }
    Spec sp;
    // Flags, width, precision and length modifiers, in SQLite's order of reading.
    bool done = false;
    while (!done && i < n) {
      const char c = fmt[i];
      switch (c) {
        case '-': sp.left = true; ++i; break;
        case '+': sp.sign = '+'; ++i; break;
        case ' ': sp.sign = ' '; ++i; break;
        case '#': sp.alt = true; ++i; break;
        case '!': sp.alt2 = true; ++i; break;
        case '0': sp.zeropad = true; ++i; break;
        case ',': sp.thousands = ','; ++i; break;
        case 'l':
          ++i;
          if (i < n && fmt[i] == 'l') ++i;
          done = true;
          break;
        case '*': {
          int64_t w = static_cast<int32_t>(args.integer());
          if (w < 0) {
            sp.left = true;
            w = w >= -2147483647 ? -w : 0;  // as SQLite's: INT32_MIN has no magnitude
          }
          sp.width = bounded(w, "width");
          ++i;
          if (i < n && fmt[i] != '.' && fmt[i] != 'l') done = true;
          break;
        }
        case '.': {
          ++i;
          if (i < n && fmt[i] == '*') {
            int64_t p = static_cast<int32_t>(args.integer());
            sp.precision = bounded(p >= 0 ? p : p >= -2147483647 ? -p : -1, "precision");  // INT32_MIN: none
            ++i;
          } else {
            uint64_t p = 0;
            while (i < n && fmt[i] >= '0' && fmt[i] <= '9') p = (p * 10 + static_cast<uint64_t>(fmt[i++] - '0')) & 0xffffffffu;
            sp.precision = bounded(static_cast<int64_t>(p & 0x7fffffff), "precision");
          }
          if (!(i < n && fmt[i] == 'l')) done = true;
          break;
        }
        default:
          if (c >= '1' && c <= '9') {
            uint64_t w = 0;
            while (i < n && fmt[i] >= '0' && fmt[i] <= '9') w = (w * 10 + static_cast<uint64_t>(fmt[i++] - '0')) & 0xffffffffu;
            sp.width = bounded(static_cast<int64_t>(w & 0x7fffffff), "width");
            if (!(i < n && (fmt[i] == '.' || fmt[i] == 'l'))) done = true;
          } else {
            done = true;
          }
          break;
      }
    }
    if (i >= n) break;  // the format ended inside a conversion: nothing more is written
    const char conv = fmt[i];
    const bool wrote_before = wrote;
    wrote = true;
    switch (conv) {
      case 'd': case 'i': case 'u': case 'r': case 'x': case 'X': case 'o': case 'p': {
        std::string s = integer_conversion(conv, args.integer(), sp);
        emit(out, s, s.size(), sp);
        break;
      }
      case 'f': case 'e': case 'E': case 'g': case 'G': {
        std::string s = float_conversion(conv, args.real(), sp);
        emit(out, s, s.size(), sp);
        break;
      }
      case 's': case 'z': {
        std::optional<std::string> t = args.text();
        std::string s = first_chars(t ? *t : "", sp.precision);
        emit(out, s, char_count(s), sp);
        break;
      }
      case 'q': case 'Q': case 'w': {
        std::string s = escape_conversion(conv, args.text(), sp);
        emit(out, s, char_count(s), sp);
        break;
      }
      case 'c': {
        // The argument's first character, repeated `precision` times.
        std::optional<std::string> t = args.text();
        std::string ch = first_chars(t ? *t : "", 1);
        std::string s;
        for (int64_t k = 0; k < std::max<int64_t>(sp.precision, 1); ++k) s += ch;
        emit(out, s, ch.empty() ? 0 : static_cast<size_t>(std::max<int64_t>(sp.precision, 1)), sp);
        break;
      }
      case '%': emit(out, "%", 1, sp); break;
      case 'n': break;  // C's "characters so far": writes nothing, takes no argument
      default:
        // Not a conversion (SQLite's internal %T / %S included): the output ends here.
        wrote = wrote_before;
        return result();
    }
    if (out.size() > static_cast<size_t>(kMaxPad) * 4)
      throw Error(StatusCode::kTooBig, "printf: the result is too large");
  }
  return result();
}

}  // namespace quereus
