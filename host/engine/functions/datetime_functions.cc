// Built-in functions: the datetime family — date, time, datetime, julianday, strftime
// (SQLite's modifiers and format specifiers plus the reference's extensions), the epoch
// functions epoch_s / epoch_ms / epoch_s_frac, the conversion functions date(x), time(x),
// datetime(x), timespan(x), the timespan_* extractors and IsISODate / IsISODateTime.
//
// date(x), time(x) and datetime(x) with one argument are the conversion functions (the
// canonical DATE / TIME / DATETIME spelling: '2024-01-15T09:00:00'); with modifiers they
// are SQLite's display functions (TEXT: '2024-01-15 09:00:00').
//
// Determinism: every function that accepts a time string also accepts 'now', so date,
// time, datetime, julianday, strftime and the epoch functions are registered
// non-deterministic (and so not replicable, never folded or moved by the optimizer). The
// 'localtime' modifier reads the process time zone, another reason. They carry
// kClockArgs: the schema gate (require_deterministic) accepts a call whose arguments
// cannot be 'now' or 'localtime' (`date('2020-01-01')`, `date(d)` over a DATE
// column), as determinism.md rejects only the 'now' forms. current_timestamp,
// current_date and current_time (SQLite's keywords) always read the clock. timespan(),
// the timespan_* functions and IsISODate / IsISODateTime are pure.
#include <chrono>
#include <cmath>
#include <optional>

#include "common/status.h"
#include "catalog/registry.h"
#include "functions/builtins.h"
#include "functions/function_util.h"
#include "types/temporal.h"

namespace quereus {

namespace {

using fnutil::Args;
using fnutil::add_scalar;
using namespace temporal;

constexpr int64_t kNanosPerMilli = 1'000'000;
constexpr double kJulianDayUnixEpoch = 2440587.5;
constexpr double kMillisPerDay = 86'400'000.0;
constexpr double kMinEpochSeconds = -2208988800.0;  // ~1900
constexpr double kMaxEpochSeconds = 32503680000.0;  // ~3000

// An instant with the zone its wall clock is read in (UTC, or the process zone after
// the 'localtime' modifier).
struct Zoned {
  Nanos epoch_nanos = 0;
  bool local = false;

  int64_t offset_seconds() const {
    if (!local) return 0;
    return local_offset_seconds(static_cast<int64_t>(floor_div(epoch_nanos, kNanosPerSecond)));
  }
  PlainDateTime wall() const {
    return PlainDateTime::from_epoch_nanos(epoch_nanos + static_cast<Nanos>(offset_seconds()) * kNanosPerSecond);
  }
  // The instant whose wall clock in this zone is `w` (the earlier one in an overlap).
  void set_wall(const PlainDateTime& w) {
    Nanos as_utc = w.epoch_nanos();
    if (!local) { epoch_nanos = as_utc; return; }
    auto off = [](Nanos ns) {
      return static_cast<Nanos>(local_offset_seconds(static_cast<int64_t>(floor_div(ns, kNanosPerSecond)))) *
             kNanosPerSecond;
    };
    Nanos guess = as_utc - off(as_utc);
    Nanos second = as_utc - off(guess);
    epoch_nanos = second;
  }
  int64_t epoch_millis() const { return static_cast<int64_t>(floor_div(epoch_nanos, kNanosPerMilli)); }

  static Nanos floor_div(Nanos a, Nanos b) {
    Nanos q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }
};

Nanos now_nanos() {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<Nanos>(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
}

std::string lower_trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  std::string out = s.substr(b, e - b);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::optional<Zoned> from_epoch_millis(double ms) {
  double r = std::nearbyint(ms);
  if (!std::isfinite(r) || std::fabs(r) > 8.64e15) return std::nullopt;
  return Zoned{static_cast<Nanos>(static_cast<int64_t>(r)) * kNanosPerMilli, false};
}

// Numbers: Julian day, Unix seconds or Unix milliseconds, by magnitude (or seconds when
// 'unixepoch' is given). datetime.md "Input Parsing": "Numbers generally between 1,000,000
// and 4,000,000 are interpreted as Julian days" — both ends included (they read as seconds).
std::optional<Zoned> parse_numeric(double v, bool unix_epoch) {
  if (unix_epoch) return from_epoch_millis(v * 1000);
  if (v >= 1'000'000 && v <= 4'000'000) return from_epoch_millis((v - kJulianDayUnixEpoch) * kMillisPerDay);
  if (v > kMinEpochSeconds && v < kMaxEpochSeconds) return from_epoch_millis(v * 1000);
  if (v > kMinEpochSeconds * 1000 && v < kMaxEpochSeconds * 1000) {
    if (v != std::floor(v)) return std::nullopt;
    return from_epoch_millis(v);
  }
  return std::nullopt;
}

// ISO strings: offset-bearing datetimes as instants, bare datetimes and dates as UTC wall
// clocks, a time alone on 2000-01-01.
std::optional<Zoned> parse_iso_string(const std::string& s) {
  auto p = scan_iso(s);
  if (!p) return std::nullopt;
  if (p->has_date) {
    PlainDateTime wall{p->date, p->has_time ? p->time : PlainTime{}};
    if (p->has_time && (p->has_z || p->has_offset)) {
      Nanos off = p->has_offset ? p->offset_nanos : 0;
      if (!p->has_offset && !p->annotation.empty() && p->annotation != "UTC" && p->annotation != "Etc/UTC")
        return std::nullopt;
      return Zoned{wall.epoch_nanos() - off, false};
    }
    if (p->has_z) return std::nullopt;
    if (!p->annotation.empty()) {
      // A [±HH:MM] zone annotation places the wall clock; named zones other than UTC are
      // read as UTC.
      const std::string& a = p->annotation;
      if ((a[0] == '+' || a[0] == '-') && a.size() >= 3) {
        auto q = scan_iso("2000-01-01T00:00" + a);
        if (q && q->has_offset) return Zoned{wall.epoch_nanos() - q->offset_nanos, false};
      }
    }
    return Zoned{wall.epoch_nanos(), false};
  }
  if (p->has_z) return std::nullopt;
  PlainDateTime wall{PlainDate{2000, 1, 1}, p->time};
  return Zoned{wall.epoch_nanos(), false};
}

std::optional<Zoned> parse_time_value(const Value& v, bool unix_epoch) {
  if (v.is_numeric()) return parse_numeric(v.to_double(), unix_epoch);
  if (v.type() != ValueType::kText) return std::nullopt;
  std::string s = trim(v.str());
  std::string l = s;
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (l == "now") return Zoned{now_nanos(), false};
  return parse_iso_string(s);
}

// ---------------------------------------------------------------- modifiers

// "+N unit[s]" with unit day|hour|minute|second|month|year.
bool parse_relative(const std::string& m, double* value, std::string* unit) {
  size_t i = 0, n = m.size();
  while (i < n && std::isspace(static_cast<unsigned char>(m[i]))) ++i;
  std::string num;
  if (i < n && (m[i] == '+' || m[i] == '-')) {
    num += m[i++];
    while (i < n && std::isspace(static_cast<unsigned char>(m[i]))) ++i;
  }
  size_t ds = i;
  while (i < n && std::isdigit(static_cast<unsigned char>(m[i]))) num += m[i++];
  if (i == ds) return false;
  if (i < n && m[i] == '.') {
    size_t fs = ++i;
    num += '.';
    while (i < n && std::isdigit(static_cast<unsigned char>(m[i]))) num += m[i++];
    if (i == fs) return false;
  }
  size_t ws = i;
  while (i < n && std::isspace(static_cast<unsigned char>(m[i]))) ++i;
  if (i == ws) return false;
  static const char* kUnits[] = {"day", "hour", "minute", "second", "month", "year"};
  for (const char* u : kUnits) {
    std::string_view uv(u);
    if (m.compare(i, uv.size(), uv) == 0) {
      size_t k = i + uv.size();
      if (k < n && m[k] == 's') ++k;
      while (k < n && std::isspace(static_cast<unsigned char>(m[k]))) ++k;
      if (k != n) return false;
      *value = std::strtod(num.c_str(), nullptr);
      *unit = u;
      return true;
    }
  }
  return false;
}

// True when `m` has the shape of a relative modifier, "<count> <unit>" with a unit
// parse_relative knows, whatever the count: one whose count is no number ('+abc days',
// '++1 day', '1.2.3 hours') failed to apply and is not an unrecognized modifier.
bool relative_shape(const std::string& m) {
  if (m.rfind("start of", 0) == 0) return false;
  size_t end = m.find_last_not_of(" \t\n\r");
  if (end == std::string::npos) return false;
  size_t start = m.find_last_of(" \t\n\r", end);
  if (start == std::string::npos) return false;
  std::string word = m.substr(start + 1, end - start);
  if (word.size() > 1 && word.back() == 's') word.pop_back();
  static const char* kUnits[] = {"day", "hour", "minute", "second", "month", "year"};
  bool unit = false;
  for (const char* u : kUnits) unit |= word == u;
  return unit && m.find_first_not_of(" \t\n\r") < start;
}

// Applies one arithmetic modifier; nullopt when it fails (the whole call is then NULL):
// datetime.md "Modifiers" — unrecognized modifiers are ignored, one that fails to apply
// (an invalid count, a weekday outside 0-6) makes the result NULL.
std::optional<Zoned> apply_modifier(Zoned z, const std::string& modifier) {
  std::string m = lower_trim(modifier);
  double value;
  std::string unit;
  bool relative = parse_relative(m, &value, &unit);
  if (!relative && relative_shape(m)) return std::nullopt;
  if (relative) {
    if (!std::isfinite(value) || std::fabs(value) > 9e15) return std::nullopt;
    // datetime.md lists fractions for seconds only ("Fractional seconds supported"):
    // a fractional count of any other unit fails to apply (Temporal rejects fractional
    // duration fields), so the call is NULL — days, months and years were truncated.
    if (unit != "second" && value != std::floor(value)) return std::nullopt;
    if (unit == "year" || unit == "month" || unit == "day") {
      Duration d;
      int64_t n = static_cast<int64_t>(value);
      if (unit == "year") d.years = n;
      else if (unit == "month") d.months = n;
      else d.days = n;
      PlainDateTime w = z.wall();
      w.date = add_to_date(w.date, d);
      z.set_wall(w);
      return z;
    }
    if (unit == "second") {
      double whole = std::trunc(value);
      double frac_ns = std::nearbyint((value - whole) * 1e9);
      z.epoch_nanos += static_cast<Nanos>(static_cast<int64_t>(whole)) * kNanosPerSecond + static_cast<int64_t>(frac_ns);
      return z;
    }
    int64_t per = unit == "hour" ? 3600 : 60;
    z.epoch_nanos += static_cast<Nanos>(static_cast<int64_t>(value)) * per * kNanosPerSecond;
    return z;
  }
  if (m == "start of day" || m == "start of month" || m == "start of year") {
    PlainDateTime w = z.wall();
    w.time = PlainTime{};
    if (m != "start of day") w.date.day = 1;
    if (m == "start of year") w.date.month = 1;
    z.set_wall(w);
    return z;
  }
  if (m.rfind("weekday", 0) == 0) {
    size_t i = 7;
    size_t ws = i;
    while (i < m.size() && std::isspace(static_cast<unsigned char>(m[i]))) ++i;
    if (i > ws && i + 1 == m.size() && m[i] >= '0' && m[i] <= '6') {
      int target = m[i] == '0' ? 7 : m[i] - '0';
      PlainDateTime w = z.wall();
      int days = ((target - iso_weekday(w.date.epoch_day())) + 7) % 7;
      if (days > 0) {
        w.date = PlainDate::from_epoch_day(w.date.epoch_day() + days);
        z.set_wall(w);
      }
      return z;
    }
    return std::nullopt;  // 'weekday' with no day number 0-6
  }
  return z;  // unrecognized modifiers are ignored
}

struct Processed {
  std::optional<Zoned> dt;
  bool subsec = false;
};

// Separates the control modifiers (unixepoch, localtime, utc, subsec) from the arithmetic
// ones, parses the time value, converts the zone, then applies the arithmetic modifiers.
Processed process_args(Args args) {
  Processed out;
  if (args.empty()) return out;
  auto is_word = [](const Value& v, const char* w) { return v.type() == ValueType::kText && lower_trim(v.str()) == w; };
  bool has_unixepoch = false;
  for (const Value& a : args) has_unixepoch |= is_word(a, "unixepoch");
  size_t first_mod = 1;
  Value time_val = args[0];
  if (has_unixepoch && is_word(args[0], "unixepoch")) {
    time_val = args.size() > 1 ? args[1] : Value();
    first_mod = 2;
  }
  bool local = false;
  std::vector<std::string> arithmetic;
  for (size_t i = first_mod; i < args.size(); ++i) {
    if (args[i].type() != ValueType::kText) continue;
    std::string l = lower_trim(args[i].str());
    if (l == "unixepoch") continue;
    if (l == "localtime") { local = true; continue; }
    if (l == "utc") { local = false; continue; }
    if (l == "subsec") { out.subsec = true; continue; }
    arithmetic.push_back(args[i].str());
  }
  auto dt = parse_time_value(time_val, has_unixepoch && time_val.is_numeric());
  if (!dt) return out;
  dt->local = local;
  for (const std::string& m : arithmetic) {
    dt = apply_modifier(*dt, m);
    if (!dt) return out;
  }
  out.dt = dt;
  return out;
}

// The strict parse of the epoch functions: ISO date/datetime strings and 'now' only.
std::optional<Zoned> process_strict(Args args) {
  if (args.empty() || args[0].type() != ValueType::kText) return std::nullopt;
  std::string s = trim(args[0].str());
  std::optional<Zoned> dt;
  if (lower_trim(s) == "now") dt = Zoned{now_nanos(), false};
  else if (matches_strict_iso(s, true, false)) dt = parse_iso_string(s);
  if (!dt) return std::nullopt;
  std::vector<std::string> arithmetic;
  bool local = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i].type() != ValueType::kText) continue;
    std::string l = lower_trim(args[i].str());
    if (l == "localtime") local = true;
    else if (l == "utc") local = false;
    else arithmetic.push_back(args[i].str());
  }
  dt->local = local;
  for (const std::string& m : arithmetic) {
    dt = apply_modifier(*dt, m);
    if (!dt) return std::nullopt;
  }
  return dt;
}

double julian_day(const Zoned& z) { return static_cast<double>(z.epoch_millis()) / kMillisPerDay + kJulianDayUnixEpoch; }

int64_t epoch_seconds(const Zoned& z) {
  int64_t ms = z.epoch_millis();
  return ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
}

std::string format_time_of(const PlainDateTime& w, bool subsec) { return format_time(w.time, subsec ? 3 : 0); }

// ---------------------------------------------------------------- strftime

std::string pad(int64_t v, int width, char fill = '0') {
  std::string s = std::to_string(v);
  if (static_cast<int>(s.size()) < width) s.insert(0, width - s.size(), fill);
  return s;
}

std::string last_two(int64_t year) {
  std::string s = std::to_string(year);
  return s.size() > 2 ? s.substr(s.size() - 2) : s;
}

std::string strftime_format(const std::string& fmt, const Zoned& z) {
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  PlainDateTime w = z.wall();
  const PlainDate& d = w.date;
  const PlainTime& t = w.time;
  auto hour12 = [&] { return t.hour % 12 == 0 ? 12 : t.hour % 12; };
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 >= fmt.size()) { out += fmt[i]; continue; }
    char c = fmt[++i];
    switch (c) {
      case 'Y': out += pad(d.year, 4); break;
      case 'm': out += pad(d.month, 2); break;
      case 'd': out += pad(d.day, 2); break;
      case 'j': out += pad(d.epoch_day() - days_from_civil(d.year, 1, 1) + 1, 3); break;
      case 'F': out += pad(d.year, 4) + "-" + pad(d.month, 2) + "-" + pad(d.day, 2); break;
      case 'D': out += pad(d.month, 2) + "/" + pad(d.day, 2) + "/" + last_two(d.year); break;
      case 'C': out += pad(d.year >= 0 ? d.year / 100 : -((-d.year + 99) / 100), 2); break;
      case 'y': out += last_two(d.year); break;
      case 'h': out += kMonths[d.month - 1]; break;
      case 'e': out += pad(d.day, 2, ' '); break;
      case 'H': out += pad(t.hour, 2); break;
      case 'M': out += pad(t.minute, 2); break;
      case 'S': out += pad(t.second, 2); break;
      case 'f': out += "." + pad(t.nanos / 1'000'000, 3); break;
      case 's':
      case 'E': out += std::to_string(epoch_seconds(z)); break;
      case 'Q': out += std::to_string(z.epoch_millis()); break;
      case 'I': out += pad(hour12(), 2); break;
      case 'k': out += pad(t.hour, 2, ' '); break;
      case 'l': out += pad(hour12(), 2, ' '); break;
      case 'p': out += t.hour < 12 ? "AM" : "PM"; break;
      case 'P': out += t.hour < 12 ? "am" : "pm"; break;
      case 'T': out += pad(t.hour, 2) + ":" + pad(t.minute, 2) + ":" + pad(t.second, 2); break;
      case 'R': out += pad(t.hour, 2) + ":" + pad(t.minute, 2); break;
      case 'r':
        out += pad(hour12(), 2) + ":" + pad(t.minute, 2) + ":" + pad(t.second, 2) + (t.hour < 12 ? " AM" : " PM");
        break;
      case 'w': out += std::to_string(iso_weekday(d.epoch_day()) % 7); break;
      case 'u': out += std::to_string(iso_weekday(d.epoch_day())); break;
      case 'W':
      case 'V': {
        int week;
        int64_t wy;
        iso_week(d, &week, &wy);
        out += pad(week, 2);
        break;
      }
      case 'G':
      case 'g': {
        int week;
        int64_t wy;
        iso_week(d, &week, &wy);
        out += c == 'G' ? pad(wy, 4) : last_two(wy);
        break;
      }
      case 'J': out += format_real(julian_day(z)); break;
      case 'z': {
        int64_t off = z.offset_seconds();
        char sign = off < 0 ? '-' : '+';
        off = off < 0 ? -off : off;
        out += sign + pad(off / 3600, 2) + pad((off % 3600) / 60, 2);
        break;
      }
      case '%': out += '%'; break;
      default:  // unsupported specifiers are kept literally
        out += '%';
        out += c;
    }
  }
  return out;
}

// ---------------------------------------------------------------- conversion functions

using Converter = std::optional<std::string> (*)(const Value&, std::string*);

Value convert(const Value& v, Converter conv, const char* type) {
  if (v.is_null()) return Value();
  std::string error;
  auto r = conv(v, &error);
  if (!r) throw Error(StatusCode::kMismatch, std::string("Cannot convert to ") + type + ": " + error);
  return Value::Text(*r);
}

bool is_now(const Value& v) { return v.type() == ValueType::kText && v.str() == "now"; }

Value date_conversion(Args a) {
  if (is_now(a[0])) return Value::Text(format_date(PlainDateTime::from_epoch_nanos(now_nanos()).date));
  return convert(a[0], to_date_text, "DATE");
}

Value time_conversion(Args a) {
  if (is_now(a[0])) return Value::Text(format_time(PlainDateTime::from_epoch_nanos(now_nanos()).time, 0));
  return convert(a[0], to_time_text, "TIME");
}

Value datetime_conversion(Args a) {
  if (is_now(a[0])) {
    // JavaScript's Date#toISOString: milliseconds and a Z.
    PlainDateTime w = PlainDateTime::from_epoch_nanos(now_nanos());
    return Value::Text(format_date(w.date) + "T" + format_time(w.time, 3) + "Z");
  }
  return convert(a[0], to_datetime_text, "DATETIME");
}

// ---------------------------------------------------------------- timespan extractors

std::optional<Duration> duration_arg(const Value& v) {
  if (v.type() != ValueType::kText) return std::nullopt;
  return parse_duration(v.str());
}

void add_extractor(Registry& r, const char* name, int64_t Duration::*field) {
  add_scalar(r, name, 1, [field](Args a) {
    auto d = duration_arg(a[0]);
    if (!d) return Value();
    return Value::Integer((*d).*field);
  });
}

void add_total(Registry& r, const char* name, int64_t unit_nanos) {
  add_scalar(r, name, 1, [unit_nanos](Args a) {
    auto d = duration_arg(a[0]);
    if (!d) return Value();
    return fnutil::js_number_value(duration_total(*d, unit_nanos));
  });
}

// ---------------------------------------------------------------- ISO validation

bool iso_date_shape(const std::string& s) {
  if (s.size() != 10) return false;
  for (size_t k : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
  return s[4] == '-' && s[7] == '-';
}

Value is_iso_date(Args a) {
  if (a[0].type() != ValueType::kText) return Value::Boolean(false);
  std::string s = trim(a[0].str());
  if (!iso_date_shape(s)) return Value::Boolean(false);
  auto p = scan_iso(s);
  return Value::Boolean(p && p->has_date && !p->has_time);
}

Value is_iso_datetime(Args a) {
  if (a[0].type() != ValueType::kText) return Value::Boolean(false);
  std::string s = trim(a[0].str());
  if (s.size() < 16 || s[10] != 'T' || !matches_strict_iso(s, false, false)) return Value::Boolean(false);
  return Value::Boolean(scan_iso(s).has_value());
}

}  // namespace

void register_datetime_functions(Registry& r) {
  // Accepts 'now': neither deterministic nor replicable; the schema gate judges each call.
  constexpr uint32_t kNow = kClockArgs;

  // Conversion functions (one argument).
  add_scalar(r, "date", 1, date_conversion, kNow).returns(QRS_LT_DATE);
  add_scalar(r, "time", 1, time_conversion, kNow).returns(QRS_LT_TIME);
  add_scalar(r, "datetime", 1, datetime_conversion, kNow).returns(QRS_LT_DATETIME);
  add_scalar(r, "timespan", 1, [](Args a) { return convert(a[0], to_timespan_text, "TIMESPAN"); })
      .returns(QRS_LT_TIMESPAN);

  // SQLite-style display functions with modifiers.
  add_scalar(r, "date", -1, [](Args a) {
    auto p = process_args(a);
    return p.dt ? Value::Text(format_date(p.dt->wall().date)) : Value();
  }, kNow).returns(QRS_LT_TEXT);
  add_scalar(r, "time", -1, [](Args a) {
    auto p = process_args(a);
    return p.dt ? Value::Text(format_time_of(p.dt->wall(), p.subsec)) : Value();
  }, kNow).returns(QRS_LT_TEXT);
  add_scalar(r, "datetime", -1, [](Args a) {
    auto p = process_args(a);
    if (!p.dt) return Value();
    PlainDateTime w = p.dt->wall();
    return Value::Text(format_date(w.date) + " " + format_time_of(w, p.subsec));
  }, kNow).returns(QRS_LT_TEXT);
  add_scalar(r, "julianday", -1, [](Args a) {
    auto p = process_args(a);
    return p.dt ? Value::Real(julian_day(*p.dt)) : Value();
  }, kNow).returns(QRS_LT_REAL);
  add_scalar(r, "strftime", -1, [](Args a) {
    if (a.empty() || a[0].type() != ValueType::kText) return Value();
    auto p = process_args(a.subspan(1));
    return p.dt ? Value::Text(strftime_format(a[0].str(), *p.dt)) : Value();
  }, kNow).returns(QRS_LT_TEXT);

  // SQLite's CURRENT_TIMESTAMP / CURRENT_DATE / CURRENT_TIME (the parser reads the bare
  // keywords as these calls): the current UTC time as datetime('now'), date('now') and
  // time('now') display it. They read the clock, so neither deterministic nor replicable.
  add_scalar(r, "current_timestamp", 0, [](Args) {
    PlainDateTime w = PlainDateTime::from_epoch_nanos(now_nanos());
    return Value::Text(format_date(w.date) + " " + format_time(w.time, 0));
  }, 0).returns(QRS_LT_TEXT);
  add_scalar(r, "current_date", 0, [](Args) {
    return Value::Text(format_date(PlainDateTime::from_epoch_nanos(now_nanos()).date));
  }, 0).returns(QRS_LT_TEXT);
  add_scalar(r, "current_time", 0, [](Args) {
    return Value::Text(format_time(PlainDateTime::from_epoch_nanos(now_nanos()).time, 0));
  }, 0).returns(QRS_LT_TEXT);

  // Unix epoch functions (strict parsing).
  add_scalar(r, "epoch_s", -1, [](Args a) {
    auto dt = process_strict(a);
    return dt ? Value::Integer(epoch_seconds(*dt)) : Value();
  }, kNow).returns(QRS_LT_INTEGER);
  add_scalar(r, "epoch_ms", -1, [](Args a) {
    auto dt = process_strict(a);
    return dt ? Value::Integer(dt->epoch_millis()) : Value();
  }, kNow).returns(QRS_LT_INTEGER);
  add_scalar(r, "epoch_s_frac", -1, [](Args a) {
    auto dt = process_strict(a);
    return dt ? Value::Real(static_cast<double>(dt->epoch_millis()) / 1000.0) : Value();
  }, kNow).returns(QRS_LT_REAL);

  add_scalar(r, "isisodate", 1, is_iso_date).returns(QRS_LT_BOOLEAN);
  add_scalar(r, "isisodatetime", 1, is_iso_datetime).returns(QRS_LT_BOOLEAN);
  // The spellings sql-functions.md ("5.4 Date and Time Functions") gives them.
  add_scalar(r, "is_iso_date", 1, is_iso_date).returns(QRS_LT_BOOLEAN);
  add_scalar(r, "is_iso_datetime", 1, is_iso_datetime).returns(QRS_LT_BOOLEAN);

  add_extractor(r, "timespan_years", &Duration::years);
  add_extractor(r, "timespan_months", &Duration::months);
  add_extractor(r, "timespan_weeks", &Duration::weeks);
  add_extractor(r, "timespan_days", &Duration::days);
  add_extractor(r, "timespan_hours", &Duration::hours);
  add_extractor(r, "timespan_minutes", &Duration::minutes);
  add_scalar(r, "timespan_seconds", 1, [](Args a) {
    auto d = duration_arg(a[0]);
    if (!d) return Value();
    double s = static_cast<double>(d->seconds) + static_cast<double>(d->milliseconds) / 1000 +
               static_cast<double>(d->microseconds) / 1e6 + static_cast<double>(d->nanoseconds) / 1e9;
    return fnutil::js_number_value(s);
  });
  add_total(r, "timespan_total_seconds", kNanosPerSecond);
  add_total(r, "timespan_total_minutes", 60 * kNanosPerSecond);
  add_total(r, "timespan_total_hours", 3600 * kNanosPerSecond);
  add_total(r, "timespan_total_days", kNanosPerDay);
}

}  // namespace quereus
