// .import: a file's records → TableWriter (the table, its transaction, one prepared
// INSERT). Files are read line by line, so errors can name a line.
#include "cli/data_import.h"

#include <csv.h>
#include <strings.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "cli/dump.h"

namespace quereus {

namespace {

enum class Coerce { kText, kInteger, kReal, kBoolean };

Coerce coercion_for(std::string type) {
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (type.find("int") != std::string::npos) return Coerce::kInteger;
  if (type.find("real") != std::string::npos || type.find("float") != std::string::npos ||
      type.find("double") != std::string::npos || type.find("numeric") != std::string::npos ||
      type.find("decimal") != std::string::npos)
    return Coerce::kReal;
  if (type.find("bool") != std::string::npos) return Coerce::kBoolean;
  return Coerce::kText;
}

// Text converted to the column's type when it reads as one; otherwise the text itself,
// which the engine then accepts or refuses.
Value coerce(const std::string& s, Coerce c) {
  const char* b = s.c_str();
  char* end = nullptr;
  switch (c) {
    case Coerce::kInteger: {
      errno = 0;
      const long long v = std::strtoll(b, &end, 10);
      if (!s.empty() && *end == '\0' && errno == 0) return Value::Integer(v);
      [[fallthrough]];
    }
    case Coerce::kReal: {
      const double d = std::strtod(b, &end);
      if (!s.empty() && *end == '\0') return Value::Real(d);
      break;
    }
    case Coerce::kBoolean:
      if (strcasecmp(b, "true") == 0 || s == "1" || strcasecmp(b, "yes") == 0) return Value::Boolean(true);
      if (strcasecmp(b, "false") == 0 || s == "0" || strcasecmp(b, "no") == 0) return Value::Boolean(false);
      break;
    case Coerce::kText: break;
  }
  return Value::Text(s);
}

Status exec(Database& db, const std::string& sql) { return db.exec(sql); }

// The target of an import: finds or creates the table, holds the transaction and the
// prepared INSERT, and takes rows.
class TableWriter {
 public:
  TableWriter(Database& db, const ImportOptions& options, ImportResult* result)
      : db_(db), options_(options), result_(result) {}

  // Reads the table's columns (if it exists) and opens the transaction.
  Status open() {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status s = db_.prepare(
        "select name, type, \"generated\" from table_info(" + dump_literal(Value::Text(options_.table)) + ")", &stmts);
    for (bool has = true; s.ok() && (s = stmts[0]->step(&has)).ok() && has;) {
      const Row& r = stmts[0]->row();
      columns_.push_back({r[0].to_text(), coercion_for(r[1].to_text()), r[2].as_int() != 0});
    }
    exists_ = !columns_.empty();
    // Inside an open transaction a savepoint undoes a failed import.
    own_transaction_ = !db_.in_transaction();
    return exec(db_, own_transaction_ ? "begin" : "savepoint qrs_import");
  }

  // The fields of every row: named (each name a column), or `count` by position. A missing
  // table is created with a column per field of type `new_type`.
  Status set_fields(const std::vector<std::string>& names, size_t count, const char* new_type) {
    if (!exists_) {
      std::string ddl = "create table " + quote_name(options_.table) + " (";
      for (size_t i = 0; i < count; ++i) {
        const std::string name = i < names.size() && !names[i].empty() ? names[i] : "c" + std::to_string(i + 1);
        ddl += (i ? ", " : "") + quote_name(name) + " " + new_type;
        columns_.push_back({name, Coerce::kText, false});
      }
      if (Status s = exec(db_, ddl + ")"); !s.ok()) return s;
      exists_ = true;
      result_->created = true;
    }
    std::vector<int> writable;
    for (size_t c = 0; c < columns_.size(); ++c)
      if (!columns_[c].generated) writable.push_back(static_cast<int>(c));
    if (!names.empty()) {
      for (const std::string& n : names) {
        int found = -1;
        for (int c : writable)
          if (strcasecmp(columns_[c].name.c_str(), n.c_str()) == 0) found = c;
        if (found < 0) return Status(StatusCode::kError, "'" + n + "' is not a column of " + options_.table);
        target_.push_back(found);
      }
    } else {
      if (count != writable.size())
        return Status(StatusCode::kError, "expected " + std::to_string(writable.size()) + " fields (the columns of " +
                                              options_.table + "), found " + std::to_string(count));
      target_ = writable;
    }
    std::string sql = "insert into " + quote_name(options_.table) + " (", params;
    for (size_t i = 0; i < target_.size(); ++i) {
      sql += (i ? ", " : "") + quote_name(columns_[target_[i]].name);
      params += i ? ", ?" : "?";
    }
    std::vector<std::unique_ptr<Statement>> stmts;
    if (Status s = db_.prepare(sql + ") values (" + params + ")", &stmts); !s.ok()) return s;
    insert_ = std::move(stmts[0]);
    return Status::Ok();
  }
  bool ready() const { return insert_ != nullptr; }
  size_t field_count() const { return target_.size(); }

  // One row, a value per field; TEXT values are converted to their column's type.
  Status add(const std::vector<Value>& values) {
    if (options_.cancel && options_.cancel->load(std::memory_order_relaxed))
      return Status(StatusCode::kInterrupt, "interrupted");
    if (values.size() != target_.size())
      return Status(StatusCode::kError, "expected " + std::to_string(target_.size()) + " fields, found " +
                                            std::to_string(values.size()));
    for (size_t i = 0; i < values.size(); ++i) {
      const Value& v = values[i];
      const Value bound = v.type() == ValueType::kText ? coerce(v.str(), columns_[target_[i]].coerce) : v;
      if (Status s = insert_->bind(static_cast<int>(i + 1), bound); !s.ok()) return s;
    }
    bool has = false;
    if (Status s = insert_->step(&has); !s.ok()) return s;
    if (Status s = insert_->reset(); !s.ok()) return s;
    ++result_->rows;
    return Status::Ok();
  }

  // Commits, or (after `failure`) undoes everything.
  Status close(const Status& failure) {
    insert_.reset();
    if (!failure.ok()) {
      (void)exec(db_, own_transaction_ ? "rollback" : "rollback to qrs_import; release qrs_import");
      result_->rows = 0;
      return failure;
    }
    if (Status s = exec(db_, own_transaction_ ? "commit" : "release qrs_import"); !s.ok()) {
      if (own_transaction_) (void)exec(db_, "rollback");
      return s;
    }
    return Status::Ok();
  }

 private:
  struct Column {
    std::string name;
    Coerce coerce;
    bool generated;
  };
  Database& db_;
  const ImportOptions& options_;
  ImportResult* result_;
  std::vector<Column> columns_;
  bool exists_ = false;
  bool own_transaction_ = true;
  std::vector<int> target_;  // field → column index
  std::unique_ptr<Statement> insert_;
};

// ---- CSV / TSV through libcsv

struct CsvParse {
  std::vector<std::optional<std::string>> current;
  std::function<Status(std::vector<std::optional<std::string>>&)> on_record;
  Status failure;
};

void on_field(void* s, size_t len, void* data) {
  auto* p = static_cast<CsvParse*>(data);
  if (!p->failure.ok()) return;
  if (s == nullptr)
    p->current.emplace_back(std::nullopt);
  else
    p->current.emplace_back(std::string(static_cast<const char*>(s), len));
}

void on_record(int, void* data) {
  auto* p = static_cast<CsvParse*>(data);
  if (p->failure.ok()) p->failure = p->on_record(p->current);
  p->current.clear();
}

Status read_delimited(FILE* f, char delimiter, const ImportOptions& options, TableWriter& writer,
                      const std::function<void()>& after_row, int* line) {
  uint64_t records = 0;
  CsvParse parse;
  parse.on_record = [&](std::vector<std::optional<std::string>>& rec) -> Status {
    ++records;
    if (records <= options.skip) return Status::Ok();
    if (rec.size() == 1 && !rec[0]) return Status::Ok();  // a blank line
    if (!writer.ready()) {
      std::vector<std::string> names;
      if (options.header)
        for (const auto& field : rec) names.push_back(field.value_or(""));
      Status s = writer.set_fields(names, rec.size(), "text null");
      if (!s.ok() || options.header) return s;
    }
    std::vector<Value> values;
    values.reserve(rec.size());
    for (auto& field : rec) values.push_back(field ? Value::Text(std::move(*field)) : Value());
    Status s = writer.add(values);
    if (s.ok()) after_row();
    return s;
  };
  csv_parser parser;
  csv_init(&parser, CSV_APPEND_NULL | CSV_EMPTY_IS_NULL);
  csv_set_delim(&parser, static_cast<unsigned char>(delimiter));
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t n;
  while (parse.failure.ok() && (n = ::getline(&buf, &cap, f)) > 0) {
    ++*line;
    size_t bom = *line == 1 && n >= 3 && std::memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;  // as Excel writes
    n -= static_cast<ssize_t>(bom);
    if (csv_parse(&parser, buf + bom, static_cast<size_t>(n), on_field, on_record, &parse) != static_cast<size_t>(n)) {
      parse.failure = Status(StatusCode::kFormat, csv_strerror(csv_error(&parser)));
      break;
    }
  }
  std::free(buf);
  if (parse.failure.ok()) csv_fini(&parser, on_field, on_record, &parse);
  csv_free(&parser);
  return parse.failure;
}

// ---- JSON lines through nlohmann::json

Value json_value(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value();
    case nlohmann::ordered_json::value_t::boolean: return Value::Boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::Integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      return u <= static_cast<uint64_t>(INT64_MAX) ? Value::Integer(static_cast<int64_t>(u))
                                                   : Value::Real(static_cast<double>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::Real(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::Text(j.get<std::string>());
    default: return Value::Text(j.dump());  // objects and arrays as their JSON text
  }
}

Status read_jsonl(FILE* f, TableWriter& writer, const std::function<void()>& after_row, int* line) {
  std::vector<std::string> keys;
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t n;
  Status failure;
  while (failure.ok() && (n = ::getline(&buf, &cap, f)) > 0) {
    ++*line;
    std::string_view text(buf, static_cast<size_t>(n));
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) continue;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      failure = Status(StatusCode::kFormat, j.is_discarded() ? "not valid JSON" : "a line must be a JSON object");
      break;
    }
    if (!writer.ready()) {
      for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
      if ((failure = writer.set_fields(keys, keys.size(), "any null")), !failure.ok()) break;
    }
    std::vector<Value> values(keys.size());
    size_t found = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = j.find(keys[i]);
      if (it != j.end()) {
        values[i] = json_value(*it);
        ++found;
      }
    }
    if (found != j.size()) {
      for (auto it = j.begin(); it != j.end(); ++it)
        if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
          failure = Status(StatusCode::kError, "key '" + it.key() + "' is not among the first line's keys");
          break;
        }
      if (!failure.ok()) break;
    }
    if ((failure = writer.add(values)), failure.ok()) after_row();
  }
  std::free(buf);
  return failure;
}

bool ends_with_nocase(const std::string& s, const char* ext) {
  const size_t l = std::strlen(ext);
  return s.size() >= l && strcasecmp(s.c_str() + s.size() - l, ext) == 0;
}

}  // namespace

Status import_file(Database& db, const ImportOptions& options, std::ostream& progress, ImportResult* result) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(options.file.c_str(), "rb"), &std::fclose);
  if (!f) return Status(StatusCode::kCantOpen, "cannot open '" + options.file + "'");
  struct stat st {};
  const double size = ::fstat(fileno(f.get()), &st) == 0 ? static_cast<double>(st.st_size) : 0;
  ImportFormat format = options.format;
  if (format == ImportFormat::kAuto) {
    const std::string& n = options.file;
    format = ends_with_nocase(n, ".tsv") || ends_with_nocase(n, ".tab")      ? ImportFormat::kTsv
             : ends_with_nocase(n, ".jsonl") || ends_with_nocase(n, ".ndjson") ? ImportFormat::kJsonl
                                                                                : ImportFormat::kCsv;
  }
  auto after_row = [&]() {
    if (options.progress && result->rows % kProgressRows == 0) {
      progress << "\rimported " << result->rows << " rows";
      if (size > 0) progress << " (" << static_cast<int>(100.0 * std::ftell(f.get()) / size) << "%)";
      progress << std::flush;
    }
  };
  TableWriter writer(db, options, result);
  if (Status s = writer.open(); !s.ok()) return s;
  int line = 0;
  Status failure = format == ImportFormat::kJsonl
                       ? read_jsonl(f.get(), writer, after_row, &line)
                       : read_delimited(f.get(), format == ImportFormat::kTsv ? '\t' : ',', options, writer,
                                        after_row, &line);
  if (options.progress && result->rows >= kProgressRows) progress << "\n";
  if (!failure.ok()) failure = Status(failure.code(), options.file + ":" + std::to_string(line) + ": " + failure.raw_message());
  return writer.close(failure);
}

}  // namespace quereus
