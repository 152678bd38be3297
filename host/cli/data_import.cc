// .import: a file's records → TableWriter (the table, its transaction, one prepared
// INSERT). Files are read line by line, so errors can name a line.
#include "cli/data_import.h"

#include <strings.h>

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
#include "io/record_reader.h"

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

// ---- CSV / TSV and JSON lines, through the engine's readers (io/record_reader.h)

void read_delimited(io::DelimitedReader& reader, const ImportOptions& options, TableWriter& writer,
                    const std::function<void()>& after_row) {
  uint64_t records = 0;
  io::Record rec;
  while (reader.next(&rec)) {
    ++records;
    if (records <= options.skip) continue;
    if (rec.size() == 1 && !rec[0]) continue;  // a blank line
    if (!writer.ready()) {
      std::vector<std::string> names;
      if (options.header)
        for (const auto& field : rec) names.push_back(field.value_or(""));
      if (Status s = writer.set_fields(names, rec.size(), "text null"); !s.ok()) throw Error(s.code(), s.raw_message());
      if (options.header) continue;
    }
    std::vector<Value> values;
    values.reserve(rec.size());
    for (auto& field : rec) values.push_back(field ? Value::Text(std::move(*field)) : Value());
    if (Status s = writer.add(values); !s.ok()) throw Error(s.code(), s.raw_message());
    after_row();
  }
}

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

void read_jsonl(io::JsonLinesReader& reader, TableWriter& writer, const std::function<void()>& after_row) {
  std::vector<std::string> keys;
  nlohmann::ordered_json j;
  while (reader.next(&j)) {
    if (!writer.ready()) {
      for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
      if (Status s = writer.set_fields(keys, keys.size(), "any null"); !s.ok()) throw Error(s.code(), s.raw_message());
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
    if (found != j.size())
      for (auto it = j.begin(); it != j.end(); ++it)
        if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
          throw Error(StatusCode::kError, "key '" + it.key() + "' is not among the first line's keys");
    if (Status s = writer.add(values); !s.ok()) throw Error(s.code(), s.raw_message());
    after_row();
  }
}

bool ends_with_nocase(const std::string& s, const char* ext) {
  const size_t l = std::strlen(ext);
  return s.size() >= l && strcasecmp(s.c_str() + s.size() - l, ext) == 0;
}

}  // namespace

Status import_file(Database& db, const ImportOptions& options, std::ostream& progress, ImportResult* result) {
  ImportFormat format = options.format;
  if (format == ImportFormat::kAuto) {
    const std::string& n = options.file;
    format = ends_with_nocase(n, ".tsv") || ends_with_nocase(n, ".tab")      ? ImportFormat::kTsv
             : ends_with_nocase(n, ".jsonl") || ends_with_nocase(n, ".ndjson") ? ImportFormat::kJsonl
                                                                                : ImportFormat::kCsv;
  }
  std::unique_ptr<io::DelimitedReader> delimited;
  std::unique_ptr<io::JsonLinesReader> jsonl;
  io::InputFile* file = nullptr;
  try {
    if (format == ImportFormat::kJsonl) {
      jsonl = std::make_unique<io::JsonLinesReader>(options.file);
      file = &jsonl->file();
    } else {
      io::DelimitedOptions d;
      d.delimiter = format == ImportFormat::kTsv ? '\t' : ',';
      delimited = std::make_unique<io::DelimitedReader>(options.file, d);
      file = &delimited->file();
    }
  } catch (const Error& e) {
    return e.status();
  }
  const double size = static_cast<double>(file->size());
  auto after_row = [&]() {
    if (options.progress && result->rows % kProgressRows == 0) {
      progress << "\rimported " << result->rows << " rows";
      if (size > 0) progress << " (" << static_cast<int>(100.0 * static_cast<double>(file->offset()) / size) << "%)";
      progress << std::flush;
    }
  };
  TableWriter writer(db, options, result);
  if (Status s = writer.open(); !s.ok()) return s;
  Status failure;
  try {
    if (jsonl) read_jsonl(*jsonl, writer, after_row);
    else read_delimited(*delimited, options, writer, after_row);
  } catch (const Error& e) {
    // The readers name file and line already; the table's refusals do not.
    const std::string prefix = options.file + ":";
    failure = e.raw_message().rfind(prefix, 0) == 0
                  ? e.status()
                  : Status(e.code(), prefix + std::to_string(file->line()) + ": " + e.raw_message());
  }
  if (options.progress && result->rows >= kProgressRows) progress << "\n";
  return writer.close(failure);
}

}  // namespace quereus
