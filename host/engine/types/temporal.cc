// Temporal core: calendar math (days-from-civil), ISO 8601 scanning and printing, ISO
// durations, the conversions behind date()/time()/datetime()/timespan() and the
// temporal arithmetic table.
#include "types/temporal.h"

#include <cctype>
#include <cmath>
#include <ctime>

#include "common/status.h"
#include "types/json_value.h"

namespace quereus::temporal {

namespace {

constexpr int64_t kNanosPerMinute = 60 * kNanosPerSecond;
constexpr int64_t kNanosPerHour = 60 * kNanosPerMinute;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `count` digits at s[i].
bool read_digits(std::string_view s, size_t i, int count, int64_t* out) {
  if (i + count > s.size()) return false;
  int64_t v = 0;
  for (int k = 0; k < count; ++k) {
    char c = s[i + k];
    if (!is_digit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

// Fraction digits ("5" → 500'000'000 ns); at most 9 digits.
bool read_fraction(std::string_view s, size_t* i, int64_t* nanos, int* ndigits = nullptr) {
  size_t k = *i;
  if (k >= s.size() || (s[k] != '.' && s[k] != ',')) return false;
  ++k;
  size_t start = k;
  int64_t v = 0;
  while (k < s.size() && is_digit(s[k])) {
    if (k - start >= 9) return false;  // more than nine digits
    v = v * 10 + (s[k] - '0');
    ++k;
  }
  size_t n = k - start;
  if (n == 0) return false;
  for (size_t p = n; p < 9; ++p) v *= 10;
  *nanos = v;
  if (ndigits) *ndigits = static_cast<int>(n);
  *i = k;
  return true;
}

std::string pad(int64_t v, int width) {
  std::string s = std::to_string(v < 0 ? -v : v);
  if (static_cast<int>(s.size()) < width) s.insert(0, width - s.size(), '0');
  return v < 0 ? "-" + s : s;
}

Nanos abs128(Nanos v) { return v < 0 ? -v : v; }

// floor division / modulo for 128-bit values.
Nanos floor_div(Nanos a, Nanos b) {
  Nanos q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::string nanos_to_string(Nanos v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  std::string s;
  Nanos x = neg ? -v : v;
  while (x > 0) { s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(x % 10))); x /= 10; }
  return neg ? "-" + s : s;
}

}  // namespace

// ---------------------------------------------------------------- calendar

bool is_leap_year(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int64_t y, int m) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2 && is_leap_year(y)) return 29;
  return kDays[m - 1];
}

int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void civil_from_days(int64_t z, int64_t* year, int* month, int* day) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (m <= 2);
  *month = m;
  *day = d;
}

int iso_weekday(int64_t epoch_day) {
  int64_t r = (epoch_day % 7 + 7) % 7;  // 0 = Thursday
  return static_cast<int>((r + 3) % 7 + 1);
}

PlainDate PlainDate::from_epoch_day(int64_t d) {
  PlainDate p;
  civil_from_days(d, &p.year, &p.month, &p.day);
  return p;
}

int64_t PlainTime::nanos_of_day() const {
  return hour * kNanosPerHour + minute * kNanosPerMinute + second * kNanosPerSecond + nanos;
}

PlainTime PlainTime::from_nanos_of_day(int64_t n) {
  PlainTime t;
  t.hour = static_cast<int>(n / kNanosPerHour);
  n %= kNanosPerHour;
  t.minute = static_cast<int>(n / kNanosPerMinute);
  n %= kNanosPerMinute;
  t.second = static_cast<int>(n / kNanosPerSecond);
  t.nanos = n % kNanosPerSecond;
  return t;
}

Nanos PlainDateTime::epoch_nanos() const {
  return static_cast<Nanos>(date.epoch_day()) * kNanosPerDay + time.nanos_of_day();
}

PlainDateTime PlainDateTime::from_epoch_nanos(Nanos ns) {
  Nanos day = floor_div(ns, kNanosPerDay);
  PlainDateTime dt;
  dt.date = PlainDate::from_epoch_day(static_cast<int64_t>(day));
  dt.time = PlainTime::from_nanos_of_day(static_cast<int64_t>(ns - day * kNanosPerDay));
  return dt;
}

static int weeks_in_iso_year(int64_t y) {
  int jan1 = iso_weekday(days_from_civil(y, 1, 1));
  if (jan1 == 4 || (jan1 == 3 && is_leap_year(y))) return 53;
  return 52;
}

void iso_week(const PlainDate& d, int* week, int64_t* week_year) {
  int64_t ed = d.epoch_day();
  int doy = static_cast<int>(ed - days_from_civil(d.year, 1, 1)) + 1;
  int wd = iso_weekday(ed);
  int w = (doy - wd + 10) / 7;
  int64_t y = d.year;
  if (w < 1) {
    --y;
    w = weeks_in_iso_year(y);
  } else if (w > weeks_in_iso_year(y)) {
    ++y;
    w = 1;
  }
  *week = w;
  *week_year = y;
}

// ---------------------------------------------------------------- printing

std::string format_date(const PlainDate& d) {
  std::string y;
  if (d.year >= 0 && d.year <= 9999) y = pad(d.year, 4);
  else y = (d.year < 0 ? "-" : "+") + pad(d.year < 0 ? -d.year : d.year, 6);
  return y + "-" + pad(d.month, 2) + "-" + pad(d.day, 2);
}

std::string format_time(const PlainTime& t, int frac_digits) {
  std::string s = pad(t.hour, 2) + ":" + pad(t.minute, 2) + ":" + pad(t.second, 2);
  if (frac_digits == 0) return s;
  std::string f = pad(t.nanos, 9);
  if (frac_digits < 0) {
    while (!f.empty() && f.back() == '0') f.pop_back();
    if (f.empty()) return s;
    return s + "." + f;
  }
  return s + "." + f.substr(0, static_cast<size_t>(frac_digits));
}

std::string format_datetime(const PlainDateTime& dt, char separator, int frac_digits) {
  return format_date(dt.date) + separator + format_time(dt.time, frac_digits);
}

// ---------------------------------------------------------------- parsing

namespace {

// Time of day at s[*i]: HH[:MM[:SS[.f]]] or HH[MM[SS[.f]]]. `require_extended` rejects the
// basic (colon-less) forms beyond a bare hour.
bool scan_time(std::string_view s, size_t* i, PlainTime* t, bool require_extended) {
  size_t k = *i;
  int64_t h, m = 0, sec = 0, ns = 0;
  if (!read_digits(s, k, 2, &h)) return false;
  k += 2;
  if (k < s.size() && s[k] == ':') {
    if (!read_digits(s, k + 1, 2, &m)) return false;
    k += 3;
    if (k < s.size() && s[k] == ':') {
      if (!read_digits(s, k + 1, 2, &sec)) return false;
      k += 3;
      if (k < s.size() && (s[k] == '.' || s[k] == ',') && !read_fraction(s, &k, &ns)) return false;
    }
  } else if (k + 1 < s.size() && is_digit(s[k])) {
    if (require_extended) return false;
    if (!read_digits(s, k, 2, &m)) return false;
    k += 2;
    if (k + 1 < s.size() && is_digit(s[k])) {
      if (!read_digits(s, k, 2, &sec)) return false;
      k += 2;
      if (k < s.size() && (s[k] == '.' || s[k] == ',') && !read_fraction(s, &k, &ns)) return false;
    }
  }
  if (h > 23 || m > 59 || sec > 60) return false;
  if (sec == 60) sec = 59;  // leap second
  t->hour = static_cast<int>(h);
  t->minute = static_cast<int>(m);
  t->second = static_cast<int>(sec);
  t->nanos = ns;
  *i = k;
  return true;
}

bool scan_date(std::string_view s, size_t* i, PlainDate* d) {
  size_t k = *i;
  int64_t y, m, dd;
  if (k < s.size() && (s[k] == '+' || s[k] == '-')) {
    bool neg = s[k] == '-';
    if (!read_digits(s, k + 1, 6, &y)) return false;
    if (neg && y == 0) return false;
    if (neg) y = -y;
    k += 7;
  } else {
    if (!read_digits(s, k, 4, &y)) return false;
    k += 4;
  }
  if (k < s.size() && s[k] == '-') {
    if (!read_digits(s, k + 1, 2, &m) || k + 3 >= s.size() || s[k + 3] != '-' || !read_digits(s, k + 4, 2, &dd))
      return false;
    k += 6;
  } else {
    if (!read_digits(s, k, 2, &m) || !read_digits(s, k + 2, 2, &dd)) return false;
    k += 4;
  }
  if (m < 1 || m > 12 || dd < 1 || dd > days_in_month(y, static_cast<int>(m))) return false;
  d->year = y;
  d->month = static_cast<int>(m);
  d->day = static_cast<int>(dd);
  *i = k;
  return true;
}

// Z, ±HH[:MM] / ±HHMM, then any [annotations].
bool scan_suffix(std::string_view s, size_t* i, IsoParts* p) {
  size_t k = *i;
  if (p->has_time && k < s.size()) {
    if (s[k] == 'Z' || s[k] == 'z') {
      p->has_z = true;
      ++k;
    } else if (s[k] == '+' || s[k] == '-') {
      int sign = s[k] == '-' ? -1 : 1;
      int64_t oh, om = 0;
      if (!read_digits(s, k + 1, 2, &oh)) return false;
      k += 3;
      if (k < s.size() && s[k] == ':') {
        if (!read_digits(s, k + 1, 2, &om)) return false;
        k += 3;
      } else if (k + 1 < s.size() && is_digit(s[k])) {
        if (!read_digits(s, k, 2, &om)) return false;
        k += 2;
      }
      if (oh > 23 || om > 59) return false;
      p->has_offset = true;
      p->offset_nanos = sign * (oh * kNanosPerHour + om * kNanosPerMinute);
    }
  }
  while (k < s.size() && s[k] == '[') {
    size_t close = s.find(']', k);
    if (close == std::string_view::npos) return false;
    std::string_view inner = s.substr(k + 1, close - k - 1);
    if (!inner.empty() && inner[0] == '!') inner.remove_prefix(1);
    if (inner.empty()) return false;
    if (inner.find('=') == std::string_view::npos && p->annotation.empty()) p->annotation = std::string(inner);
    k = close + 1;
  }
  *i = k;
  return true;
}

}  // namespace

std::optional<IsoParts> scan_iso(std::string_view s) {
  IsoParts p;
  size_t i = 0;
  if (scan_date(s, &i, &p.date)) {
    p.has_date = true;
    if (i < s.size() && (s[i] == 'T' || s[i] == 't' || s[i] == ' ')) {
      ++i;
      if (!scan_time(s, &i, &p.time, false)) return std::nullopt;
      p.has_time = true;
    }
  } else {
    i = 0;
    bool prefixed = !s.empty() && (s[0] == 'T' || s[0] == 't');
    if (prefixed) i = 1;
    if (!scan_time(s, &i, &p.time, !prefixed)) return std::nullopt;
    p.has_time = true;
  }
  if (!scan_suffix(s, &i, &p)) return std::nullopt;
  if (i != s.size()) return std::nullopt;
  return p;
}

bool matches_strict_iso(std::string_view s, bool allow_date_only, bool require_offset) {
  // YYYY-MM-DD
  auto d = [&](size_t k) { return k < s.size() && is_digit(s[k]); };
  for (size_t k : {0, 1, 2, 3, 5, 6, 8, 9}) if (!d(k)) return false;
  if (s.size() < 10 || s[4] != '-' || s[7] != '-') return false;
  if (s.size() == 10) return allow_date_only && !require_offset;
  if (s[10] != 'T' && s[10] != ' ') return false;
  if (!d(11) || !d(12) || s.size() < 16 || s[13] != ':' || !d(14) || !d(15)) return false;
  size_t k = 16;
  if (k < s.size() && s[k] == ':') {
    if (!d(k + 1) || !d(k + 2)) return false;
    k += 3;
    if (k < s.size() && s[k] == '.') {
      size_t start = ++k;
      while (d(k)) ++k;
      if (k == start || k - start > 9) return false;
    }
  }
  if (k == s.size()) return !require_offset;
  if (s[k] == 'Z') return k + 1 == s.size();
  if (s[k] != '+' && s[k] != '-') return false;
  return k + 6 == s.size() && d(k + 1) && d(k + 2) && s[k + 3] == ':' && d(k + 4) && d(k + 5);
}

// ---------------------------------------------------------------- durations

int Duration::sign() const {
  for (int64_t v : {years, months, weeks, days, hours, minutes, seconds, milliseconds, microseconds, nanoseconds}) {
    if (v < 0) return -1;
    if (v > 0) return 1;
  }
  return 0;
}

Duration Duration::negated() const {
  Duration d;
  d.years = -years; d.months = -months; d.weeks = -weeks; d.days = -days;
  d.hours = -hours; d.minutes = -minutes; d.seconds = -seconds;
  d.milliseconds = -milliseconds; d.microseconds = -microseconds; d.nanoseconds = -nanoseconds;
  return d;
}

Nanos Duration::clock_nanos() const {
  return static_cast<Nanos>(hours) * kNanosPerHour + static_cast<Nanos>(minutes) * kNanosPerMinute +
         static_cast<Nanos>(seconds) * kNanosPerSecond + static_cast<Nanos>(milliseconds) * 1'000'000 +
         static_cast<Nanos>(microseconds) * 1'000 + nanoseconds;
}

Nanos Duration::time_nanos() const { return static_cast<Nanos>(days) * kNanosPerDay + clock_nanos(); }

static bool valid_duration(const Duration& d) {
  bool pos = false, neg = false;
  for (int64_t v : {d.years, d.months, d.weeks, d.days, d.hours, d.minutes, d.seconds, d.milliseconds,
                    d.microseconds, d.nanoseconds}) {
    if (v > 0) pos = true;
    if (v < 0) neg = true;
  }
  return !(pos && neg);
}

std::string format_duration(const Duration& d) {
  int sign = d.sign();
  auto a = [](int64_t v) { return v < 0 ? -v : v; };
  std::string out = sign < 0 ? "-P" : "P";
  if (d.years) out += std::to_string(a(d.years)) + "Y";
  if (d.months) out += std::to_string(a(d.months)) + "M";
  if (d.weeks) out += std::to_string(a(d.weeks)) + "W";
  if (d.days) out += std::to_string(a(d.days)) + "D";
  Nanos sub = abs128(static_cast<Nanos>(d.milliseconds) * 1'000'000 + static_cast<Nanos>(d.microseconds) * 1'000 +
                     d.nanoseconds);
  Nanos secs = a(d.seconds) + sub / kNanosPerSecond;
  int64_t frac = static_cast<int64_t>(sub % kNanosPerSecond);
  std::string time;
  if (d.hours) time += std::to_string(a(d.hours)) + "H";
  if (d.minutes) time += std::to_string(a(d.minutes)) + "M";
  bool zero = sign == 0;
  if (secs != 0 || frac != 0 || zero) {
    time += nanos_to_string(secs);
    if (frac) {
      std::string f = pad(frac, 9);
      while (!f.empty() && f.back() == '0') f.pop_back();
      time += "." + f;
    }
    time += "S";
  }
  if (!time.empty()) out += "T" + time;
  return out;
}

std::optional<Duration> parse_duration(std::string_view s) {
  size_t i = 0;
  int sign = 1;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    sign = s[i] == '-' ? -1 : 1;
    ++i;
  } else if (s.substr(0, 3) == "\xE2\x88\x92") {  // U+2212 minus sign
    sign = -1;
    i = 3;
  }
  if (i >= s.size() || (s[i] != 'P' && s[i] != 'p')) return std::nullopt;
  ++i;
  Duration d;
  bool any = false;
  // Date part: integers with designators Y, M, W, D in order.
  const char kDateUnits[] = {'Y', 'M', 'W', 'D'};
  int next_unit = 0;
  while (i < s.size() && is_digit(s[i])) {
    int64_t v = 0;
    size_t start = i;
    while (i < s.size() && is_digit(s[i])) {
      if (i - start > 15) return std::nullopt;
      v = v * 10 + (s[i] - '0');
      ++i;
    }
    if (i >= s.size()) return std::nullopt;
    char u = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
    int idx = -1;
    for (int k = next_unit; k < 4; ++k)
      if (kDateUnits[k] == u) { idx = k; break; }
    if (idx < 0) return std::nullopt;
    ++i;
    next_unit = idx + 1;
    any = true;
    switch (idx) {
      case 0: d.years = v; break;
      case 1: d.months = v; break;
      case 2: d.weeks = v; break;
      case 3: d.days = v; break;
    }
  }
  if (i < s.size() && (s[i] == 'T' || s[i] == 't')) {
    ++i;
    const char kTimeUnits[] = {'H', 'M', 'S'};
    int next = 0;
    bool any_time = false, fractional = false;
    while (i < s.size()) {
      if (fractional) return std::nullopt;  // a fraction must be on the last unit
      if (!is_digit(s[i])) return std::nullopt;
      int64_t v = 0;
      size_t start = i;
      while (i < s.size() && is_digit(s[i])) {
        if (i - start > 15) return std::nullopt;
        v = v * 10 + (s[i] - '0');
        ++i;
      }
      int64_t frac = 0;
      if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
        if (!read_fraction(s, &i, &frac)) return std::nullopt;
        fractional = true;
      }
      if (i >= s.size()) return std::nullopt;
      char u = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
      int idx = -1;
      for (int k = next; k < 3; ++k)
        if (kTimeUnits[k] == u) { idx = k; break; }
      if (idx < 0) return std::nullopt;
      ++i;
      next = idx + 1;
      any_time = true;
      // Spread a fraction into the smaller units, as Temporal does.
      int64_t extra = 0;
      switch (idx) {
        case 0: d.hours = v; extra = frac * 3600; break;
        case 1: d.minutes = v; extra = frac * 60; break;
        case 2: d.seconds = v; extra = frac; break;
      }
      if (extra) {
        if (idx == 0) { d.minutes = extra / kNanosPerMinute; extra %= kNanosPerMinute; }
        if (idx <= 1) { d.seconds += extra / kNanosPerSecond; extra %= kNanosPerSecond; }
        d.milliseconds = extra / 1'000'000;
        d.microseconds = (extra / 1'000) % 1'000;
        d.nanoseconds = extra % 1'000;
      }
    }
    if (!any_time) return std::nullopt;
    any = true;
  }
  if (i != s.size() || !any) return std::nullopt;
  return sign < 0 ? d.negated() : d;
}

std::optional<Duration> parse_human_duration(std::string_view input) {
  std::string s;
  for (char c : input) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  s = s.substr(b, e - b);
  bool negative = !s.empty() && s[0] == '-';
  if (negative) {
    s.erase(0, 1);
    size_t k = 0;
    while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
    s.erase(0, k);
  }
  static const char* kUnits[] = {"year", "month", "week", "day", "hour", "minute", "second", "min", "sec"};
  double sums[7] = {0, 0, 0, 0, 0, 0, 0};  // years … seconds
  bool any = false;
  size_t i = 0;
  while (i < s.size()) {
    if (!is_digit(s[i])) { ++i; continue; }
    size_t k = i;
    while (k < s.size() && is_digit(s[k])) ++k;
    if (k + 1 < s.size() && s[k] == '.' && is_digit(s[k + 1])) {
      ++k;
      while (k < s.size() && is_digit(s[k])) ++k;
    }
    double value = std::strtod(s.substr(i, k - i).c_str(), nullptr);
    size_t u = k;
    while (u < s.size() && std::isspace(static_cast<unsigned char>(s[u]))) ++u;
    int matched = -1;
    size_t len = 0;
    for (int n = 0; n < 9; ++n) {
      std::string_view unit = kUnits[n];
      if (s.compare(u, unit.size(), unit) == 0) {
        matched = n;
        len = unit.size();
        if (u + len < s.size() && s[u + len] == 's') ++len;
        break;
      }
    }
    if (matched < 0) { ++i; continue; }
    any = true;
    int field = matched == 7 ? 5 : (matched == 8 ? 6 : matched);
    sums[field] += value;
    i = u + len;
  }
  if (!any) return std::nullopt;
  // Temporal wants whole units, except that seconds may carry a fraction (milliseconds and
  // below): '1 minute 30.5 seconds' is PT1M30.5S (functions.md, timespan_seconds).
  double whole_seconds = std::floor(sums[6]);
  double frac_seconds = sums[6] - whole_seconds;
  sums[6] = whole_seconds;
  for (double v : sums)
    if (v != std::floor(v) || !std::isfinite(v) || v > 9e15) return std::nullopt;
  Duration d;
  int64_t frac_nanos = static_cast<int64_t>(std::llround(frac_seconds * 1e9));
  d.milliseconds = frac_nanos / 1'000'000;
  d.microseconds = frac_nanos / 1'000 % 1'000;
  d.nanoseconds = frac_nanos % 1'000;
  d.years = static_cast<int64_t>(sums[0]);
  d.months = static_cast<int64_t>(sums[1]);
  d.weeks = static_cast<int64_t>(sums[2]);
  d.days = static_cast<int64_t>(sums[3]);
  d.hours = static_cast<int64_t>(sums[4]);
  d.minutes = static_cast<int64_t>(sums[5]);
  d.seconds = static_cast<int64_t>(sums[6]);
  return negative ? d.negated() : d;
}

std::optional<Duration> duration_from_seconds(double seconds) {
  if (!std::isfinite(seconds) || seconds != std::floor(seconds) || std::fabs(seconds) > 9.007199254740991e15)
    return std::nullopt;
  Duration d;
  d.seconds = static_cast<int64_t>(seconds);
  return d;
}

static PlainDate add_months_constrained(const PlainDate& date, int64_t years, int64_t months) {
  int64_t total = date.year * 12 + (date.month - 1) + years * 12 + months;
  PlainDate r;
  r.year = total >= 0 ? total / 12 : -((-total + 11) / 12);
  r.month = static_cast<int>(total - r.year * 12) + 1;
  r.day = std::min(date.day, days_in_month(r.year, r.month));
  return r;
}

static PlainDate add_iso_date(const PlainDate& date, int64_t years, int64_t months, int64_t weeks, int64_t days) {
  PlainDate r = add_months_constrained(date, years, months);
  return PlainDate::from_epoch_day(r.epoch_day() + weeks * 7 + days);
}

PlainDate add_to_date(const PlainDate& date, const Duration& d) {
  int64_t extra_days = static_cast<int64_t>(d.clock_nanos() / kNanosPerDay);
  return add_iso_date(date, d.years, d.months, d.weeks, d.days + extra_days);
}

PlainDateTime add_to_datetime(const PlainDateTime& dt, const Duration& d) {
  Nanos t = static_cast<Nanos>(dt.time.nanos_of_day()) + d.clock_nanos();
  Nanos carry = floor_div(t, kNanosPerDay);
  PlainDateTime r;
  r.time = PlainTime::from_nanos_of_day(static_cast<int64_t>(t - carry * kNanosPerDay));
  r.date = add_iso_date(dt.date, d.years, d.months, d.weeks, d.days + static_cast<int64_t>(carry));
  return r;
}

PlainTime add_to_time(const PlainTime& t, const Duration& d) {
  Nanos n = static_cast<Nanos>(t.nanos_of_day()) + d.clock_nanos();
  n %= kNanosPerDay;
  if (n < 0) n += kNanosPerDay;
  return PlainTime::from_nanos_of_day(static_cast<int64_t>(n));
}

Duration balance_nanos(Nanos total, char largest) {
  bool neg = total < 0;
  Nanos n = abs128(total);
  Duration d;
  if (largest == 'd') { d.days = static_cast<int64_t>(n / kNanosPerDay); n %= kNanosPerDay; }
  if (largest == 'd' || largest == 'h') { d.hours = static_cast<int64_t>(n / kNanosPerHour); n %= kNanosPerHour; }
  if (largest != 's') { d.minutes = static_cast<int64_t>(n / kNanosPerMinute); n %= kNanosPerMinute; }
  d.seconds = static_cast<int64_t>(n / kNanosPerSecond);
  n %= kNanosPerSecond;
  d.milliseconds = static_cast<int64_t>(n / 1'000'000);
  d.microseconds = static_cast<int64_t>((n / 1'000) % 1'000);
  d.nanoseconds = static_cast<int64_t>(n % 1'000);
  return neg ? d.negated() : d;
}

// Elapsed nanoseconds of `d` starting at 2024-01-01T00:00.
static Nanos relative_nanos(const Duration& d) {
  PlainDate ref{2024, 1, 1};
  PlainDate end = add_iso_date(ref, d.years, d.months, d.weeks, d.days);
  return static_cast<Nanos>(end.epoch_day() - ref.epoch_day()) * kNanosPerDay + d.clock_nanos();
}

double duration_total(const Duration& d, int64_t unit_nanos) {
  Nanos n = relative_nanos(d);
  Nanos whole = n / unit_nanos, rem = n % unit_nanos;
  return static_cast<double>(whole) + static_cast<double>(rem) / static_cast<double>(unit_nanos);
}

int compare_durations(const Duration& a, const Duration& b) {
  Nanos x = relative_nanos(a), y = relative_nanos(b);
  return x < y ? -1 : (x > y ? 1 : 0);
}

int compare_timespan_texts(std::string_view a, std::string_view b) {
  auto x = parse_duration(a), y = parse_duration(b);
  if (x && y) return compare_durations(*x, *y);
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// ---------------------------------------------------------------- time zones

int64_t local_offset_seconds(int64_t epoch_seconds) {
  time_t t = static_cast<time_t>(epoch_seconds);
  struct tm tm_local {};
  if (!localtime_r(&t, &tm_local)) return 0;
  return tm_local.tm_gmtoff;
}

// ---------------------------------------------------------------- conversions

namespace {

const char* js_typeof(const Value& v) {
  switch (v.type()) {
    case ValueType::kBoolean: return "boolean";
    case ValueType::kInteger:
    case ValueType::kReal: return "number";
    case ValueType::kText: return "string";
    default: return "object";
  }
}

// A JSON scalar value seen as the reference's native JS value: a JSON string is a string,
// a JSON number a number. Other values are returned unchanged.
Value unwrap_json_scalar(const Value& v) {
  if (v.type() != ValueType::kJson) return v;
  auto j = jsonv::parse(v.str());
  if (j && (j->is_string() || j->is_number())) return jsonv::to_sql_scalar(*j);
  return v;
}

// The wall clock in UTC of a datetime-shaped string (Temporal's ZonedDateTime, Instant and
// PlainDateTime `from`, in that order); nullopt when it is not one.
std::optional<PlainDateTime> datetime_string_to_utc_wall(std::string_view s) {
  auto p = scan_iso(s);
  if (!p || !p->has_date) return std::nullopt;
  PlainDateTime wall{p->date, p->has_time ? p->time : PlainTime{}};
  if (p->has_time && (p->has_z || p->has_offset)) {
    Nanos ns = wall.epoch_nanos() - (p->has_offset ? p->offset_nanos : 0);
    return PlainDateTime::from_epoch_nanos(ns);
  }
  if (p->has_z) return std::nullopt;
  return wall;
}

std::optional<PlainDateTime> from_epoch_millis(double ms) {
  if (!std::isfinite(ms) || ms != std::floor(ms) || std::fabs(ms) > 8.64e15) return std::nullopt;
  return PlainDateTime::from_epoch_nanos(static_cast<Nanos>(static_cast<int64_t>(ms)) * 1'000'000);
}

}  // namespace

std::optional<std::string> to_date_text(const Value& in, std::string* error) {
  Value v = unwrap_json_scalar(in);
  if (v.type() == ValueType::kText) {
    const std::string& s = v.str();
    if (auto wall = datetime_string_to_utc_wall(s)) return format_date(wall->date);
    if (auto p = scan_iso(s); p && p->has_date && !p->has_z) return format_date(p->date);
    *error = "Cannot convert '" + s + "' to DATE: Invalid ISO 8601 date string";
    return std::nullopt;
  }
  if (v.is_numeric()) {
    if (auto wall = from_epoch_millis(v.to_double())) return format_date(wall->date);
    *error = "Cannot convert '" + v.to_text() + "' to DATE: epoch milliseconds out of range or not an integer";
    return std::nullopt;
  }
  *error = std::string("Cannot convert ") + js_typeof(v) + " to DATE";
  return std::nullopt;
}

std::optional<std::string> to_time_text(const Value& in, std::string* error) {
  Value v = unwrap_json_scalar(in);
  if (v.type() == ValueType::kText) {
    const std::string& s = v.str();
    if (auto wall = datetime_string_to_utc_wall(s)) return format_time(wall->time);
    if (auto p = scan_iso(s); p && p->has_time && !p->has_z) return format_time(p->time);
    *error = "Cannot convert '" + s + "' to TIME: Invalid ISO 8601 time string";
    return std::nullopt;
  }
  if (v.is_numeric()) {
    double secs = v.to_double();
    if (secs < 0 || !std::isfinite(secs)) {
      *error = "Cannot convert '" + v.to_text() + "' to TIME: value must be a non-negative finite number of seconds";
      return std::nullopt;
    }
    int64_t total_ms = static_cast<int64_t>(std::llround(secs * 1000));
    PlainTime t;
    t.hour = static_cast<int>((total_ms / 3'600'000) % 24);
    t.minute = static_cast<int>((total_ms % 3'600'000) / 60'000);
    t.second = static_cast<int>((total_ms % 60'000) / 1000);
    t.nanos = (total_ms % 1000) * 1'000'000;
    return format_time(t);
  }
  *error = std::string("Cannot convert ") + js_typeof(v) + " to TIME";
  return std::nullopt;
}

std::optional<std::string> to_datetime_text(const Value& in, std::string* error) {
  Value v = unwrap_json_scalar(in);
  if (v.type() == ValueType::kText) {
    if (auto wall = datetime_string_to_utc_wall(v.str())) return format_datetime(*wall);
    *error = "Cannot convert '" + v.str() + "' to DATETIME: Invalid ISO 8601 datetime string";
    return std::nullopt;
  }
  if (v.is_numeric()) {
    if (auto wall = from_epoch_millis(v.to_double())) return format_datetime(*wall);
    *error = "Cannot convert '" + v.to_text() + "' to DATETIME: epoch milliseconds out of range or not an integer";
    return std::nullopt;
  }
  *error = std::string("Cannot convert ") + js_typeof(v) + " to DATETIME";
  return std::nullopt;
}

std::optional<std::string> to_timespan_text(const Value& in, std::string* error) {
  Value v = unwrap_json_scalar(in);
  if (v.is_numeric()) {
    if (auto d = duration_from_seconds(v.to_double())) return format_duration(*d);
    *error = "Cannot convert '" + v.to_text() + "' to TIMESPAN: seconds must be an integer";
    return std::nullopt;
  }
  if (v.type() == ValueType::kText) {
    if (auto d = parse_duration(v.str())) return format_duration(*d);
    if (auto d = parse_human_duration(v.str())) return format_duration(*d);
    *error = "Cannot convert '" + v.str() + "' to TIMESPAN";
    return std::nullopt;
  }
  *error = std::string("Cannot convert ") + js_typeof(v) + " to TIMESPAN";
  return std::nullopt;
}

// ---------------------------------------------------------------- arithmetic

namespace {

enum class Kind { kNone, kDate, kTime, kDateTime, kTimespan, kNumber };

Kind kind_of(const Value& v) {
  if (v.is_numeric()) return Kind::kNumber;
  if (v.type() != ValueType::kText) return Kind::kNone;
  const std::string& s = v.str();
  auto d = [&](size_t k) { return k < s.size() && is_digit(s[k]); };
  bool date_prefix = d(0) && d(1) && d(2) && d(3) && s.size() >= 10 && s[4] == '-' && d(5) && d(6) && s[7] == '-' &&
                     d(8) && d(9);
  if (date_prefix && s.size() == 10) return Kind::kDate;
  if (date_prefix && s.size() > 10 && s[10] == 'T') return Kind::kDateTime;
  if (d(0) && d(1) && s.size() >= 8 && s[2] == ':' && d(3) && d(4) && s[5] == ':' && d(6) && d(7)) return Kind::kTime;
  if (!s.empty() && (s[0] == 'P' || (s.size() > 1 && s[0] == '-' && s[1] == 'P'))) return Kind::kTimespan;
  return Kind::kNone;
}

bool is_temporal(Kind k) { return k != Kind::kNone && k != Kind::kNumber; }

// types.md "Temporal arithmetic": "The number side must be a JS number; a value past 2^53
// arrives as a bigint and is rejected as unsupported." An integer outside ±(2^53 - 1) is
// the reference's bigint (FORMAT.md §6.2), so `timespan * 9007199254740992` is refused
// rather than scaled through a double that has lost its last digits.
bool beyond_safe_integer(const Value& v) {
  constexpr int64_t kMaxSafe = (int64_t{1} << 53) - 1;
  if (v.type() == ValueType::kBigInt) return true;
  return v.type() == ValueType::kInteger && (v.as_int() > kMaxSafe || v.as_int() < -kMaxSafe);
}

[[noreturn]] void unsupported() { throw Error(StatusCode::kUnsupported, "Unsupported temporal operation"); }

std::optional<PlainDateTime> as_datetime(const Value& v, Kind k) {
  auto p = scan_iso(v.str());
  if (!p || !p->has_date || p->has_z) return std::nullopt;
  if (k == Kind::kDate) return PlainDateTime{p->date, PlainTime{}};
  return PlainDateTime{p->date, p->has_time ? p->time : PlainTime{}};
}

std::optional<PlainTime> as_time(const Value& v) {
  auto p = scan_iso(v.str());
  if (!p || !p->has_time || p->has_z) return std::nullopt;
  return p->time;
}

Value scale(const Duration& d, double n) {
  if (d.has_calendar_units()) {
    Duration r;
    int64_t* dst[] = {&r.years, &r.months, &r.weeks, &r.days, &r.hours, &r.minutes, &r.seconds,
                      &r.milliseconds, &r.microseconds, &r.nanoseconds};
    const int64_t src[] = {d.years, d.months, d.weeks, d.days, d.hours, d.minutes, d.seconds,
                           d.milliseconds, d.microseconds, d.nanoseconds};
    for (int i = 0; i < 10; ++i) {
      double x = static_cast<double>(src[i]) * n;
      if (x != std::floor(x) || !std::isfinite(x)) throw Error(StatusCode::kRange, "Duration fields must be integers");
      // The field is held in 64 bits; past them the conversion is undefined.
      if (std::fabs(x) > 9.007199254740991e15) throw Error(StatusCode::kRange, "Duration field out of range");
      *dst[i] = static_cast<int64_t>(x);
    }
    if (!valid_duration(r)) throw Error(StatusCode::kRange, "Mixed-sign duration");
    return Value::Text(format_duration(r));
  }
  double total = duration_total(d, kNanosPerSecond) * n;
  auto r = duration_from_seconds(total);
  if (!r) throw Error(StatusCode::kRange, "Duration seconds must be an integer");
  return Value::Text(format_duration(*r));
}

Value divide(const Duration& d, double n) {
  if (n == 0) return Value();
  if (!d.has_calendar_units()) {
    auto r = duration_from_seconds(duration_total(d, kNanosPerSecond) / n);
    if (!r) throw Error(StatusCode::kRange, "Duration seconds must be an integer");
    return Value::Text(format_duration(*r));
  }
  // Divide field by field, carrying remainders down (years→months, weeks→days→…→ns);
  // months do not carry into days.
  double f[10] = {static_cast<double>(d.years), static_cast<double>(d.months), static_cast<double>(d.weeks),
                  static_cast<double>(d.days), static_cast<double>(d.hours), static_cast<double>(d.minutes),
                  static_cast<double>(d.seconds), static_cast<double>(d.milliseconds),
                  static_cast<double>(d.microseconds), static_cast<double>(d.nanoseconds)};
  struct Step { int from, to; double factor; };
  const Step kCascade[] = {{0, 1, 12}, {2, 3, 7}, {3, 4, 24}, {4, 5, 60}, {5, 6, 60}, {6, 7, 1000}, {7, 8, 1000}, {8, 9, 1000}};
  for (const Step& s : kCascade) {
    double q = std::trunc(f[s.from] / n);
    double rem = f[s.from] - q * n;
    f[s.from] = q;
    f[s.to] += rem * s.factor;
  }
  f[9] = std::trunc(f[9] / n);
  f[1] = std::trunc(f[1] / n);
  Duration r;
  int64_t* dst[] = {&r.years, &r.months, &r.weeks, &r.days, &r.hours, &r.minutes, &r.seconds,
                    &r.milliseconds, &r.microseconds, &r.nanoseconds};
  for (int i = 0; i < 10; ++i) {
    if (f[i] != std::floor(f[i]) || !std::isfinite(f[i])) throw Error(StatusCode::kRange, "Duration fields must be integers");
    if (std::fabs(f[i]) > 9.007199254740991e15) throw Error(StatusCode::kRange, "Duration field out of range");
    *dst[i] = static_cast<int64_t>(f[i]);
  }
  if (!valid_duration(r)) throw Error(StatusCode::kRange, "Mixed-sign duration");
  return Value::Text(format_duration(r));
}

char largest_unit_of(const Duration& d) {
  if (d.years) return 'y';
  if (d.months) return 'o';
  if (d.weeks) return 'w';
  if (d.days) return 'd';
  if (d.hours) return 'h';
  if (d.minutes) return 'm';
  return 's';
}

int unit_rank(char u) {
  switch (u) {
    case 'y': return 9; case 'o': return 8; case 'w': return 7; case 'd': return 6;
    case 'h': return 5; case 'm': return 4; default: return 3;
  }
}

Value add_durations(const Duration& a, const Duration& b) {
  if (a.has_calendar_units() || b.has_calendar_units())
    throw Error(StatusCode::kRange, "a starting point is required for years, months or weeks balancing");
  char la = largest_unit_of(a), lb = largest_unit_of(b);
  char largest = unit_rank(la) >= unit_rank(lb) ? la : lb;
  return Value::Text(format_duration(balance_nanos(a.time_nanos() + b.time_nanos(), largest)));
}

}  // namespace

bool temporal_arithmetic(char op, const Value& a, const Value& b, Value* out) {
  Kind ka = kind_of(a), kb = kind_of(b);
  if (!is_temporal(ka) && !is_temporal(kb)) {
    if (!(a.is_null() && is_temporal(kb)) && !(b.is_null() && is_temporal(ka))) return false;
  }
  if (a.is_null() || b.is_null()) {
    *out = Value();
    return true;
  }
  if (ka == Kind::kNone || kb == Kind::kNone) unsupported();
  auto dur = [](const Value& v) {
    auto d = parse_duration(v.str());
    if (!d) throw Error(StatusCode::kRange, "Invalid duration: " + v.str());
    return *d;
  };
  auto dt = [](const Value& v, Kind k) {
    auto d = as_datetime(v, k);
    if (!d) throw Error(StatusCode::kRange, "Invalid ISO 8601 string: " + v.str());
    return *d;
  };
  auto tm = [](const Value& v) {
    auto t = as_time(v);
    if (!t) throw Error(StatusCode::kRange, "Invalid ISO 8601 time: " + v.str());
    return *t;
  };
  bool a_instant = ka == Kind::kDate || ka == Kind::kDateTime;
  bool b_instant = kb == Kind::kDate || kb == Kind::kDateTime;
  switch (op) {
    case '-':
      if (a_instant && b_instant) {
        // The reference collapses both sides to their calendar dates first (types.md,
        // "Temporal arithmetic"): datetime('…20T10:00') - datetime('…15T08:00') is P5D.
        Nanos diff = static_cast<Nanos>(dt(a, ka).date.epoch_day() - dt(b, kb).date.epoch_day()) * kNanosPerDay;
        *out = Value::Text(format_duration(balance_nanos(diff, 'd')));
        return true;
      }
      if (ka == Kind::kTime && kb == Kind::kTime) {
        Nanos diff = static_cast<Nanos>(tm(a).nanos_of_day()) - tm(b).nanos_of_day();
        *out = Value::Text(format_duration(balance_nanos(diff, 'h')));
        return true;
      }
      if (kb == Kind::kTimespan) {
        Duration d = dur(b).negated();
        if (ka == Kind::kDate) { *out = Value::Text(format_date(add_to_date(dt(a, ka).date, d))); return true; }
        if (ka == Kind::kDateTime) { *out = Value::Text(format_datetime(add_to_datetime(dt(a, ka), d))); return true; }
        if (ka == Kind::kTime) { *out = Value::Text(format_time(add_to_time(tm(a), d))); return true; }
        if (ka == Kind::kTimespan) {
          *out = add_durations(dur(a), d);
          return true;
        }
      }
      unsupported();
    case '+': {
      const Value* x = &a;
      const Value* y = &b;
      Kind kx = ka, ky = kb;
      if (kx == Kind::kTimespan && ky != Kind::kTimespan) { std::swap(x, y); std::swap(kx, ky); }
      if (ky != Kind::kTimespan) unsupported();
      Duration d = dur(*y);
      if (kx == Kind::kDate) { *out = Value::Text(format_date(add_to_date(dt(*x, kx).date, d))); return true; }
      if (kx == Kind::kDateTime) { *out = Value::Text(format_datetime(add_to_datetime(dt(*x, kx), d))); return true; }
      if (kx == Kind::kTime) { *out = Value::Text(format_time(add_to_time(tm(*x), d))); return true; }
      if (kx == Kind::kTimespan) { *out = add_durations(dur(*x), d); return true; }
      unsupported();
    }
    case '*':
      if (beyond_safe_integer(a) || beyond_safe_integer(b)) unsupported();
      if (ka == Kind::kTimespan && kb == Kind::kNumber) { *out = scale(dur(a), b.to_double()); return true; }
      if (ka == Kind::kNumber && kb == Kind::kTimespan) { *out = scale(dur(b), a.to_double()); return true; }
      unsupported();
    case '/':
      if (beyond_safe_integer(b)) unsupported();
      if (ka == Kind::kTimespan && kb == Kind::kNumber) { *out = divide(dur(a), b.to_double()); return true; }
      if (ka == Kind::kTimespan && kb == Kind::kTimespan) {
        Duration x = dur(a), y = dur(b);
        if (x.has_calendar_units() || y.has_calendar_units()) { *out = Value(); return true; }
        Nanos ny = y.time_nanos();
        if (ny == 0) { *out = Value(); return true; }
        *out = Value::Real(static_cast<double>(x.time_nanos()) / static_cast<double>(ny));
        return true;
      }
      unsupported();
    default: unsupported();
  }
}

std::optional<std::string> negate_timespan(std::string_view text) {
  auto d = parse_duration(text);
  if (!d) return std::nullopt;
  return format_duration(d->negated());
}

}  // namespace quereus::temporal
