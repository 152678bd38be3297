// Temporal core shared by the date/time functions, the TIMESPAN functions and (through
// the conversion entry points at the bottom) CAST, column coercion and the runtime's
// temporal arithmetic: a proleptic Gregorian calendar, ISO 8601 parsing and printing in
// the shapes the reference's Temporal objects use, and ISO 8601 durations.
//
// All of it is pure computation over UTC wall clocks, except the `*_local` helpers, which
// consult the process time zone (localtime_r) and are therefore not replicable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "types/value.h"

namespace quereus::temporal {

// Nanosecond counts that outgrow int64 (instants far from 1970, long durations).
using Nanos = __int128;

constexpr int64_t kNanosPerSecond = 1'000'000'000;
constexpr int64_t kNanosPerDay = 86'400 * kNanosPerSecond;

// ---------------------------------------------------------------- calendar

bool is_leap_year(int64_t year);
int days_in_month(int64_t year, int month);
// Days since 1970-01-01 of a proleptic Gregorian date (month 1..12, day 1..31).
int64_t days_from_civil(int64_t year, int month, int day);
void civil_from_days(int64_t days, int64_t* year, int* month, int* day);
// ISO weekday of an epoch day: 1 = Monday … 7 = Sunday.
int iso_weekday(int64_t epoch_day);

struct PlainDate {
  int64_t year = 1970;
  int month = 1;
  int day = 1;
  int64_t epoch_day() const { return days_from_civil(year, month, day); }
  static PlainDate from_epoch_day(int64_t d);
};

struct PlainTime {
  int hour = 0, minute = 0, second = 0;
  int64_t nanos = 0;  // 0 … 999'999'999
  int64_t nanos_of_day() const;
  static PlainTime from_nanos_of_day(int64_t n);  // REQUIRES: 0 <= n < kNanosPerDay
};

struct PlainDateTime {
  PlainDate date;
  PlainTime time;
  // Nanoseconds since 1970-01-01T00:00 of this wall clock read as UTC.
  Nanos epoch_nanos() const;
  static PlainDateTime from_epoch_nanos(Nanos ns);
};

// ISO weeks: the ISO 8601 week number (1..53) and its week-numbering year.
void iso_week(const PlainDate& d, int* week, int64_t* week_year);

// ---------------------------------------------------------------- printing

// "YYYY-MM-DD"; years outside 0..9999 as "±YYYYYY".
std::string format_date(const PlainDate& d);
// "HH:MM:SS" plus a fraction. `frac_digits` -1: shortest (trailing zeros dropped, none
// when zero), as Temporal prints; 0: none; 3: always milliseconds.
std::string format_time(const PlainTime& t, int frac_digits = -1);
// Temporal's PlainDateTime#toString: "YYYY-MM-DDTHH:MM:SS[.fff…]".
std::string format_datetime(const PlainDateTime& dt, char separator = 'T', int frac_digits = -1);

// ---------------------------------------------------------------- parsing

// One ISO 8601 date/time string as scanned; what it means depends on the caller.
struct IsoParts {
  bool has_date = false;
  bool has_time = false;
  PlainDate date;
  PlainTime time;
  bool has_z = false;            // a `Z` designator
  bool has_offset = false;       // a numeric ±HH[:MM] offset
  int64_t offset_nanos = 0;      // the numeric offset
  std::string annotation;        // a [zone] annotation's content, if any
};

// Scans the ISO 8601 grammar Temporal accepts: date (YYYY-MM-DD, YYYYMMDD, ±YYYYYY-MM-DD),
// optional time after `T`/`t`/space (HH[:MM[:SS[.f{1,9}]]] or the basic forms), optional
// `Z` or offset, optional [annotation]; or a time alone (optionally `T`-prefixed).
// Validates field ranges (second 60 reads as 59). nullopt when malformed.
std::optional<IsoParts> scan_iso(std::string_view s);

// The strict ISO shape of the epoch functions and of the offset-bearing fast path:
// YYYY-MM-DD[(T| )HH:MM[:SS[.f{1,9}]][Z|±HH:MM]].
bool matches_strict_iso(std::string_view s, bool allow_date_only, bool require_offset);

// ---------------------------------------------------------------- durations

// An ISO 8601 duration as Temporal.Duration holds it: every field carries the same sign.
struct Duration {
  int64_t years = 0, months = 0, weeks = 0, days = 0;
  int64_t hours = 0, minutes = 0, seconds = 0;
  int64_t milliseconds = 0, microseconds = 0, nanoseconds = 0;

  bool has_calendar_units() const { return years != 0 || months != 0 || weeks != 0; }
  int sign() const;
  Duration negated() const;
  // Days, hours … nanoseconds as nanoseconds (days as 24 h).
  Nanos time_nanos() const;
  // Hours … nanoseconds only.
  Nanos clock_nanos() const;
};

// "P1Y2M3DT4H5M6.5S", "-PT1H", "PT0S" — Temporal.Duration#toString.
std::string format_duration(const Duration& d);
// Temporal.Duration.from(string): the ISO grammar, case-insensitive, fractions on the
// smallest time unit only. nullopt when malformed.
std::optional<Duration> parse_duration(std::string_view s);
// "1 hour 30 minutes", "2 days", "-90 minutes" (the reference's human-readable form).
std::optional<Duration> parse_human_duration(std::string_view s);
// Temporal.Duration.from({seconds}): nullopt unless `seconds` is integral and finite.
std::optional<Duration> duration_from_seconds(double seconds);
// The duration's length in `unit_nanos` units, calendar units resolved against
// 2024-01-01 (the reference's fixed reference date).
double duration_total(const Duration& d, int64_t unit_nanos);
// Orders two durations by elapsed time relative to 2024-01-01.
int compare_durations(const Duration& a, const Duration& b);
// compare_durations over TIMESPAN texts (the semantic ordering of a TIMESPAN column);
// texts that are not ISO durations compare bytewise. Returns -1, 0 or 1.
int compare_timespan_texts(std::string_view a, std::string_view b);

// Date and time arithmetic with Temporal's rules (month ends constrain).
PlainDate add_to_date(const PlainDate& date, const Duration& d);
PlainDateTime add_to_datetime(const PlainDateTime& dt, const Duration& d);
PlainTime add_to_time(const PlainTime& t, const Duration& d);
// Exact nanoseconds balanced into a duration whose largest unit is `largest`
// ('d' days, 'h' hours, 'm' minutes, 's' seconds).
Duration balance_nanos(Nanos total_nanos, char largest);

// ---------------------------------------------------------------- time zones

// Offset of the process time zone from UTC at an instant (not replicable).
int64_t local_offset_seconds(int64_t epoch_seconds);

// ---------------------------------------------------------------- conversions
//
// The conversion functions date(x), time(x), datetime(x), timespan(x) — and what CAST /
// column coercion to DATE, TIME, DATETIME and TIMESPAN should produce. Each returns the
// type's canonical text, or nullopt with *error set to the reference's message
// ("Cannot convert '<v>' to DATE: …"). NULL input is the caller's concern.

std::optional<std::string> to_date_text(const Value& v, std::string* error);
std::optional<std::string> to_time_text(const Value& v, std::string* error);
std::optional<std::string> to_datetime_text(const Value& v, std::string* error);
std::optional<std::string> to_timespan_text(const Value& v, std::string* error);

// ---------------------------------------------------------------- arithmetic
//
// The reference's temporal operation table, with operand kinds sniffed from the values
// (date "YYYY-MM-DD", datetime "YYYY-MM-DDT…", time "HH:MM:SS…", timespan "P…"/"-P…",
// number). Returns false when neither operand is temporal (the caller does ordinary
// arithmetic); otherwise sets *out and returns true. Throws Error(kUnsupported,
// "Unsupported temporal operation") for a temporal pair the table lacks. NULL operands
// give NULL. `op` is one of '+', '-', '*', '/', '%'.
bool temporal_arithmetic(char op, const Value& a, const Value& b, Value* out);
// Unary minus of a TIMESPAN text ("PT1H" → "-PT1H"); nullopt when not a duration.
std::optional<std::string> negate_timespan(std::string_view text);

}  // namespace quereus::temporal
