// read_csv(path [, options]) and read_jsonl(path [, options]): a data file as a table.
//
// The columns are learned when the statement is prepared — from the header (CSV) or the
// keys (JSON lines), typed by the values of the first `sample` records — and the rows are
// then streamed, one in memory at a time, when it runs. A value that does not fit the
// type learned from the sample fails the statement naming file, line and column.
// docs/sql-dialect.md "Files" is the user's view.
#include <strings.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "catalog/registry.h"
#include "common/status.h"
#include "eval/exec_context.h"
#include "main/introspection.h"
#include "io/record_reader.h"
#include "main/database_impl.h"
#include "types/json_value.h"

namespace quereus {

namespace {

// ---------------------------------------------------------------- options

// The options object (the optional second argument): JSON text whose keys are among `known`.
std::map<std::string, nlohmann::json> options_of(const char* fn, std::span<const Value> args,
                                                 std::initializer_list<const char*> known) {
  std::map<std::string, nlohmann::json> out;
  if (args.size() < 2 || args[1].is_null()) return out;
  std::optional<jsonv::Json> j = jsonv::from_sql_document(args[1]);
  if (!j || !j->is_object())
    throw Error(StatusCode::kError, std::string(fn) + "(): the options must be a JSON object, as '{\"header\": false}'");
  for (auto it = j->begin(); it != j->end(); ++it) {
    bool ok = false;
    std::string list;
    for (const char* k : known) {
      ok = ok || it.key() == k;
      list += (list.empty() ? "" : ", ") + std::string(k);
    }
    if (!ok) throw Error(StatusCode::kError, std::string(fn) + "(): unknown option '" + it.key() + "' (options: " + list + ")");
    out[it.key()] = it.value();
  }
  return out;
}

bool bool_option(const char* fn, const std::map<std::string, nlohmann::json>& o, const char* key, bool dflt) {
  auto it = o.find(key);
  if (it == o.end()) return dflt;
  if (!it->second.is_boolean()) throw Error(StatusCode::kError, std::string(fn) + "(): option '" + key + "' must be true or false");
  return it->second.get<bool>();
}

int64_t int_option(const char* fn, const std::map<std::string, nlohmann::json>& o, const char* key, int64_t dflt,
                   int64_t min) {
  auto it = o.find(key);
  if (it == o.end()) return dflt;
  if (!it->second.is_number_integer() || it->second.get<int64_t>() < min)
    throw Error(StatusCode::kError,
                std::string(fn) + "(): option '" + key + "' must be an integer >= " + std::to_string(min));
  return it->second.get<int64_t>();
}

char char_option(const char* fn, const std::map<std::string, nlohmann::json>& o, const char* key, char dflt) {
  auto it = o.find(key);
  if (it == o.end()) return dflt;
  std::string s = it->second.is_string() ? it->second.get<std::string>() : "";
  if (s == "tab" || s == "\\t") s = "\t";
  if (s.size() != 1 || s[0] == '\n' || s[0] == '\r')
    throw Error(StatusCode::kError, std::string(fn) + "(): option '" + key + "' must be one character (or \"tab\")");
  return s[0];
}

std::string path_argument(DatabaseImpl& db, const char* fn, std::span<const Value> args) {
  db.require_file_access(false, std::string(fn) + "()");
  if (args.empty() || args[0].type() != ValueType::kText || args[0].str().empty())
    throw Error(StatusCode::kError, std::string(fn) + "(): the first argument must be the file's path (text)");
  return args[0].str();
}

bool ends_with_nocase(const std::string& s, const char* ext) {
  const size_t l = std::strlen(ext);
  return s.size() >= l && strcasecmp(s.c_str() + s.size() - l, ext) == 0;
}

// Column names made unique without regard to case (a repeat gets _2, _3, … — a suffix no
// other name holds) and never empty (c1, c2, …).
std::vector<std::string> unique_names(std::vector<std::string> names) {
  auto lower = [](std::string n) {
    for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return n;
  };
  std::set<std::string> used;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) names[i] = "c" + std::to_string(i + 1);
    const std::string base = names[i];
    for (int k = 2; used.count(lower(names[i])); ++k) names[i] = base + "_" + std::to_string(k);
    used.insert(lower(names[i]));
  }
  return names;
}

const char* type_label(uint32_t t) {
  switch (t) {
    case QRS_LT_INTEGER: return "INTEGER";
    case QRS_LT_REAL: return "REAL";
    case QRS_LT_BOOLEAN: return "BOOLEAN";
    case QRS_LT_JSON: return "JSON";
    case QRS_LT_TEXT: return "TEXT";
    default: return "ANY";
  }
}

// ---------------------------------------------------------------- CSV / TSV

struct CsvSettings {
  std::string path;
  io::DelimitedOptions delimited;
  bool header = true;
  int64_t skip = 0;
  bool infer = true;
  int64_t sample = 10000;
  std::optional<std::string> null_text;
};

CsvSettings csv_settings(DatabaseImpl& db, std::span<const Value> args) {
  CsvSettings s;
  s.path = path_argument(db, "read_csv", args);
  auto o = options_of("read_csv", args, {"header", "delimiter", "quote", "skip", "infer", "sample", "null"});
  const bool tsv = ends_with_nocase(s.path, ".tsv") || ends_with_nocase(s.path, ".tab");
  s.delimited.delimiter = char_option("read_csv", o, "delimiter", tsv ? '\t' : ',');
  s.delimited.quote = char_option("read_csv", o, "quote", '"');
  s.header = bool_option("read_csv", o, "header", true);
  s.skip = int_option("read_csv", o, "skip", 0, 0);
  s.infer = bool_option("read_csv", o, "infer", true);
  s.sample = int_option("read_csv", o, "sample", 10000, 1);
  if (auto it = o.find("null"); it != o.end()) {
    if (!it->second.is_string()) throw Error(StatusCode::kError, "read_csv(): option 'null' must be a string");
    s.null_text = it->second.get<std::string>();
  }
  return s;
}

bool is_blank(const io::Record& r) { return r.size() == 1 && !r[0]; }
// A blank line is a row only in a one-column file (its NULL); elsewhere it is skipped.
bool skipped(const io::Record& r, size_t columns) { return columns != 1 && is_blank(r); }

// A field's value: nullopt (an empty unquoted field) and the `null` text are NULL.
bool is_null_field(const std::optional<std::string>& f, const CsvSettings& s) {
  return !f || (s.null_text && !s.null_text->empty() && *f == *s.null_text);
}

// What a field's text reads as: INTEGER (no leading zero, so codes like 007 stay text),
// REAL (a finite decimal), BOOLEAN (true / false), else TEXT.
uint32_t classify(const std::string& t) {
  if (t.empty() || std::isspace(static_cast<unsigned char>(t.front())) ||
      std::isspace(static_cast<unsigned char>(t.back())))
    return QRS_LT_TEXT;
  if (strcasecmp(t.c_str(), "true") == 0 || strcasecmp(t.c_str(), "false") == 0) return QRS_LT_BOOLEAN;
  const char c0 = t[0];
  if (!(std::isdigit(static_cast<unsigned char>(c0)) || c0 == '-' || c0 == '+' || c0 == '.')) return QRS_LT_TEXT;
  const size_t digits = c0 == '-' || c0 == '+' ? 1 : 0;
  if (t.size() > digits + 1 && t[digits] == '0' && std::isdigit(static_cast<unsigned char>(t[digits + 1])))
    return QRS_LT_TEXT;
  // Decimal notation only: no hex (0x1A), no hex floats, no inf / nan.
  if (t.find_first_not_of("0123456789+-.eE") != std::string::npos) return QRS_LT_TEXT;
  if (t.find_first_not_of("0123456789", digits) == std::string::npos && t.size() > digits)
    return QRS_LT_INTEGER;  // past int64 too: an exact big integer
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(t.c_str(), &end);
  if (*end == '\0' && std::isfinite(d)) return QRS_LT_REAL;
  return QRS_LT_TEXT;
}

// An integer field's value: int64, or an exact big integer past it.
Value integer_value(const std::string& t) {
  errno = 0;
  const long long v = std::strtoll(t.c_str(), nullptr, 10);
  if (errno != ERANGE) return Value::Integer(v);
  std::string digits = t[0] == '+' ? t.substr(1) : t;
  return Value::BigInteger(std::move(digits));
}

uint32_t widen(uint32_t have, uint32_t next) {
  if (have == QRS_LT_ANY) return next;  // nothing seen yet
  if (have == next) return have;
  if ((have == QRS_LT_INTEGER && next == QRS_LT_REAL) || (have == QRS_LT_REAL && next == QRS_LT_INTEGER))
    return QRS_LT_REAL;
  return QRS_LT_TEXT;
}

// Reads past the skipped records and the header; returns the header's names.
std::vector<std::string> open_records(io::DelimitedReader& reader, const CsvSettings& s, io::Record* first) {
  io::Record r;
  for (int64_t i = 0; i < s.skip; ++i)
    if (!reader.next(&r)) break;
  std::vector<std::string> names;
  bool have = false;
  while ((have = reader.next(&r)) && is_blank(r)) {
  }
  if (!have) throw Error(StatusCode::kFormat, s.path + ": no records, so no columns");
  if (s.header) {
    for (auto& f : r) names.push_back(f.value_or(""));
    first->clear();
  } else {
    names.resize(r.size());
    *first = std::move(r);
  }
  return names;
}

std::vector<TableFunctionColumn> csv_shape(DatabaseImpl& db, std::span<const Value> args) {
  const CsvSettings s = csv_settings(db, args);
  io::DelimitedReader reader(s.path, s.delimited);
  io::Record first;
  const std::vector<std::string> names = unique_names(open_records(reader, s, &first));
  std::vector<uint32_t> types(names.size(), QRS_LT_ANY);
  auto observe = [&](const io::Record& r) {
    if (r.size() != names.size())
      reader.file().fail("expected " + std::to_string(names.size()) + " fields, found " + std::to_string(r.size()));
    for (size_t c = 0; c < r.size(); ++c)
      if (!is_null_field(r[c], s)) types[c] = widen(types[c], s.infer ? classify(*r[c]) : uint32_t{QRS_LT_TEXT});
  };
  int64_t seen = 0;
  if (!first.empty()) {
    observe(first);
    ++seen;
  }
  for (io::Record r; seen < s.sample && reader.next(&r);)
    if (!skipped(r, names.size())) {
      observe(r);
      ++seen;
    }
  std::vector<TableFunctionColumn> out;
  for (size_t c = 0; c < names.size(); ++c)
    out.push_back({names[c], types[c] == QRS_LT_ANY ? static_cast<uint32_t>(QRS_LT_TEXT) : types[c], true});
  return out;
}

class CsvCursor : public TableFunctionCursor {
 public:
  CsvCursor(CsvSettings s, std::span<const TableFunctionColumn> columns, io::ReadProgress* progress)
      : s_(std::move(s)), columns_(columns.begin(), columns.end()), reader_(s_.path, s_.delimited), progress_(progress) {
    reader_.file().set_progress(progress_);
    const std::vector<std::string> names = unique_names(open_records(reader_, s_, &pending_));
    bool same = names.size() == columns_.size();
    for (size_t i = 0; same && i < names.size(); ++i) same = strcasecmp(names[i].c_str(), columns_[i].name.c_str()) == 0;
    if (!same)
      throw Error(StatusCode::kSchema, s_.path + " no longer has the columns it had when the statement was prepared (" +
                                           std::to_string(columns_.size()) + ": " + columns_.front().name +
                                           ", …); prepare the statement again");
    has_pending_ = !pending_.empty();
  }

  bool next(Row& out) override {
    io::Record r;
    if (has_pending_) {
      r = std::move(pending_);
      has_pending_ = false;
    } else {
      while (true) {
        if (!reader_.next(&r)) return false;
        if (!skipped(r, columns_.size())) break;
      }
    }
    if (r.size() != columns_.size())
      reader_.file().fail("expected " + std::to_string(columns_.size()) + " fields, found " + std::to_string(r.size()));
    out.clear();
    out.reserve(r.size());
    for (size_t c = 0; c < r.size(); ++c) out.push_back(convert(r[c], c));
    if (progress_) ++progress_->rows;
    return true;
  }

 private:
  Value convert(std::optional<std::string>& f, size_t c) {
    if (is_null_field(f, s_)) return Value();
    const uint32_t type = columns_[c].type;
    if (type == QRS_LT_TEXT) return Value::Text(std::move(*f));
    const std::string& t = *f;
    const uint32_t got = classify(t);
    if (type == QRS_LT_INTEGER && got == QRS_LT_INTEGER) return integer_value(t);
    if (type == QRS_LT_REAL && (got == QRS_LT_REAL || got == QRS_LT_INTEGER)) return Value::Real(std::strtod(t.c_str(), nullptr));
    if (type == QRS_LT_BOOLEAN && got == QRS_LT_BOOLEAN) return Value::Boolean(strcasecmp(t.c_str(), "true") == 0);
    reader_.file().fail("'" + t + "' in column '" + columns_[c].name + "' is not " + type_label(type) +
                        ", the type read_csv learned from the first " + std::to_string(s_.sample) +
                        " records; raise '{\"sample\": N}' or read text with '{\"infer\": false}'");
  }

  CsvSettings s_;
  std::vector<TableFunctionColumn> columns_;
  io::DelimitedReader reader_;
  io::Record pending_;  // the first data record when there is no header
  bool has_pending_ = false;
  io::ReadProgress* progress_;
};

// ---------------------------------------------------------------- JSON lines

struct JsonlSettings {
  std::string path;
  int64_t sample = 10000;
};

JsonlSettings jsonl_settings(DatabaseImpl& db, std::span<const Value> args) {
  JsonlSettings s;
  s.path = path_argument(db, "read_jsonl", args);
  auto o = options_of("read_jsonl", args, {"sample"});
  s.sample = int_option("read_jsonl", o, "sample", 10000, 1);
  return s;
}

// The SQL value of a JSON member: null → NULL, booleans, integers (past int64: REAL),
// numbers, strings; objects and arrays → JSON values.
Value member_value(const nlohmann::ordered_json& j) {
  using T = nlohmann::ordered_json::value_t;
  switch (j.type()) {
    case T::null: return Value();
    case T::boolean: return Value::Boolean(j.get<bool>());
    case T::number_integer: return Value::Integer(j.get<int64_t>());
    case T::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      return u <= static_cast<uint64_t>(INT64_MAX) ? Value::Integer(static_cast<int64_t>(u))
                                                   : Value::Real(static_cast<double>(u));
    }
    case T::number_float: return Value::Real(j.get<double>());
    case T::string: return Value::Text(j.get<std::string>());
    default: {
      std::optional<jsonv::Json> parsed = jsonv::parse(j.dump());
      return parsed ? jsonv::to_value(*parsed) : Value::Text(j.dump());
    }
  }
}

uint32_t member_type(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return QRS_LT_ANY;
    case ValueType::kBoolean: return QRS_LT_BOOLEAN;
    case ValueType::kInteger: return QRS_LT_INTEGER;
    case ValueType::kReal: return QRS_LT_REAL;
    case ValueType::kText: return QRS_LT_TEXT;
    default: return QRS_LT_JSON;
  }
}

std::vector<TableFunctionColumn> jsonl_shape(DatabaseImpl& db, std::span<const Value> args) {
  const JsonlSettings s = jsonl_settings(db, args);
  io::JsonLinesReader reader(s.path);
  std::vector<TableFunctionColumn> out;
  std::map<std::string, size_t> index;
  std::vector<bool> mixed;
  nlohmann::ordered_json j;
  int64_t seen = 0;
  for (; seen < s.sample && reader.next(&j); ++seen) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      auto [at, added] = index.emplace(it.key(), out.size());
      if (added) {
        out.push_back({it.key(), QRS_LT_ANY, true});
        mixed.push_back(false);
      }
      const uint32_t t = member_type(member_value(it.value()));
      TableFunctionColumn& col = out[at->second];
      if (t == QRS_LT_ANY || mixed[at->second]) continue;
      const uint32_t w = col.type == QRS_LT_ANY ? t : widen(col.type, t);
      if (w == QRS_LT_TEXT && (col.type != QRS_LT_TEXT || t != QRS_LT_TEXT)) {
        mixed[at->second] = true;  // values of different kinds: the column is ANY
        col.type = QRS_LT_ANY;
      } else {
        col.type = w;
      }
    }
  }
  if (seen == 0) throw Error(StatusCode::kFormat, s.path + ": no JSON objects, so no columns");
  // Keys differing only in case, or empty, become distinct column names.
  std::vector<std::string> keys;
  for (auto& c : out) keys.push_back(c.name);
  std::vector<std::string> names = unique_names(keys);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].source = out[i].name;
    out[i].name = names[i];
  }
  return out;
}

class JsonlCursor : public TableFunctionCursor {
 public:
  JsonlCursor(JsonlSettings s, std::span<const TableFunctionColumn> columns, io::ReadProgress* progress)
      : s_(std::move(s)), columns_(columns.begin(), columns.end()), reader_(s_.path), progress_(progress) {
    reader_.file().set_progress(progress_);
    for (size_t i = 0; i < columns_.size(); ++i) index_[columns_[i].source] = i;
  }

  bool next(Row& out) override {
    nlohmann::ordered_json j;
    if (!reader_.next(&j)) return false;
    out.assign(columns_.size(), Value());
    for (auto it = j.begin(); it != j.end(); ++it) {
      auto at = index_.find(it.key());
      if (at == index_.end())
        reader_.file().fail("key '" + it.key() + "' is not among the columns read_jsonl learned from the first " +
                            std::to_string(s_.sample) + " lines; raise '{\"sample\": N}'");
      Value v = member_value(it.value());
      const TableFunctionColumn& col = columns_[at->second];
      const uint32_t t = member_type(v);
      if (t != QRS_LT_ANY && col.type != QRS_LT_ANY && t != col.type) {
        if (col.type == QRS_LT_REAL && t == QRS_LT_INTEGER) v = Value::Real(static_cast<double>(v.as_int()));
        else
          reader_.file().fail("the value of '" + it.key() + "' is not " + type_label(col.type) +
                              ", the type read_jsonl learned from the first " + std::to_string(s_.sample) +
                              " lines; raise '{\"sample\": N}'");
      }
      out[at->second] = std::move(v);
    }
    if (progress_) ++progress_->rows;
    return true;
  }

 private:
  JsonlSettings s_;
  std::vector<TableFunctionColumn> columns_;
  std::map<std::string, size_t> index_;
  io::JsonLinesReader reader_;
  io::ReadProgress* progress_;
};

void add_file_function(Registry& r, const char* name, decltype(TableFunction::shape) shape,
                       decltype(TableFunction::open) open) {
  TableFunction f;
  f.name = name;
  f.min_args = 1;
  f.num_args = 2;
  f.flags = 0;  // a file can change between reads
  f.shape = std::move(shape);
  f.open = std::move(open);
  f.rows = [name = std::string(name)](DatabaseImpl&, std::span<const Value>) -> std::vector<Row> {
    throw Error(StatusCode::kInternal, name + "() is read through its cursor");
  };
  r.add_table_function(std::move(f), "builtin");
}

}  // namespace

void register_file_functions(Registry& r) {
  if (r.find_table_function("read_csv")) return;  // registered by an earlier Database::Open
  add_file_function(r, "read_csv", csv_shape,
                    [](DatabaseImpl& db, ExecContext& ctx, std::span<const Value> args,
                       std::span<const TableFunctionColumn> cols) {
                      return std::unique_ptr<TableFunctionCursor>(
                          std::make_unique<CsvCursor>(csv_settings(db, args), cols, ctx.read_progress));
                    });
  add_file_function(r, "read_jsonl", jsonl_shape,
                    [](DatabaseImpl& db, ExecContext& ctx, std::span<const Value> args,
                       std::span<const TableFunctionColumn> cols) {
                      return std::unique_ptr<TableFunctionCursor>(
                          std::make_unique<JsonlCursor>(jsonl_settings(db, args), cols, ctx.read_progress));
                    });
}

}  // namespace quereus
