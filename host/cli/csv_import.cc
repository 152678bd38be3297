// .import over libcsv: the file is fed line by line, so errors can name a line.
#include "cli/csv_import.h"

#include <csv.h>
#include <strings.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "cli/dump.h"

namespace quereus {

namespace {

using Record = std::vector<std::optional<std::string>>;

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

struct Parse {
  Record current;
  std::function<bool(Record&)> on_record;  // false stops the import
  bool stopped = false;
};

void on_field(void* s, size_t len, void* data) {
  auto* p = static_cast<Parse*>(data);
  if (p->stopped) return;
  if (s == nullptr)
    p->current.emplace_back(std::nullopt);
  else
    p->current.emplace_back(std::string(static_cast<const char*>(s), len));
}

void on_record(int, void* data) {
  auto* p = static_cast<Parse*>(data);
  if (!p->stopped && !p->on_record(p->current)) p->stopped = true;
  p->current.clear();
}

Status run(Database& db, const std::string& sql) { return db.exec(sql); }

}  // namespace

Status import_delimited(Database& db, const ImportOptions& options, std::ostream& progress, ImportResult* result) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(options.file.c_str(), "rb"), &std::fclose);
  if (!f) return Status(StatusCode::kCantOpen, "cannot open '" + options.file + "'");
  struct stat st {};
  const double size = ::fstat(fileno(f.get()), &st) == 0 ? static_cast<double>(st.st_size) : 0;
  bool tsv = options.tsv;
  if (!options.format_given) {
    const std::string& n = options.file;
    auto ends = [&](const char* ext) {
      const size_t l = std::strlen(ext);
      return n.size() >= l && strcasecmp(n.c_str() + n.size() - l, ext) == 0;
    };
    tsv = ends(".tsv") || ends(".tab");
  }

  // The table's columns, if it exists.
  struct Column {
    std::string name;
    Coerce coerce;
    bool generated;
  };
  std::vector<Column> columns;
  bool exists = false;
  {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status s = db.prepare("select name, type, \"generated\" from table_info(" + dump_literal(Value::Text(options.table)) + ")",
                          &stmts);
    for (bool has = true; s.ok() && (s = stmts[0]->step(&has)).ok() && has;) {
      const Row& r = stmts[0]->row();
      columns.push_back({r[0].to_text(), coercion_for(r[1].to_text()), r[2].as_int() != 0});
      exists = true;
    }
  }

  // Inside an open transaction a savepoint undoes a failed import.
  const bool own_transaction = !db.in_transaction();
  if (Status s = run(db, own_transaction ? "begin" : "savepoint qrs_import"); !s.ok()) return s;
  int line = 0;
  uint64_t records = 0;
  std::unique_ptr<Statement> insert;
  std::vector<int> target;  // record field → column index
  Status failure;
  auto where = [&]() { return options.file + ":" + std::to_string(line) + ": "; };

  auto prepare_insert = [&](const Record& first, bool names) -> Status {
    if (!exists) {
      std::string ddl = "create table " + quote_name(options.table) + " (";
      for (size_t i = 0; i < first.size(); ++i) {
        std::string name = names && first[i] && !first[i]->empty() ? *first[i] : "c" + std::to_string(i + 1);
        ddl += (i ? ", " : "") + quote_name(name) + " text null";
        columns.push_back({name, Coerce::kText, false});
      }
      ddl += ")";
      if (Status s = run(db, ddl); !s.ok()) return s;
      exists = true;
      result->created = true;
    }
    std::vector<int> writable;
    for (size_t c = 0; c < columns.size(); ++c)
      if (!columns[c].generated) writable.push_back(static_cast<int>(c));
    if (names) {
      for (const auto& field : first) {
        const std::string n = field.value_or("");
        int found = -1;
        for (int c : writable)
          if (strcasecmp(columns[c].name.c_str(), n.c_str()) == 0) found = c;
        if (found < 0) return Status(StatusCode::kError, "the header names '" + n + "', which is not a column of " + options.table);
        target.push_back(found);
      }
    } else {
      if (first.size() != writable.size())
        return Status(StatusCode::kError, "expected " + std::to_string(writable.size()) + " fields (the columns of " +
                                              options.table + "), found " + std::to_string(first.size()));
      target = writable;
    }
    std::string sql = "insert into " + quote_name(options.table) + " (", params;
    for (size_t i = 0; i < target.size(); ++i) {
      sql += (i ? ", " : "") + quote_name(columns[target[i]].name);
      params += i ? ", ?" : "?";
    }
    sql += ") values (" + params + ")";
    std::vector<std::unique_ptr<Statement>> stmts;
    if (Status s = db.prepare(sql, &stmts); !s.ok()) return s;
    insert = std::move(stmts[0]);
    return Status::Ok();
  };

  Parse parse;
  parse.on_record = [&](Record& rec) -> bool {
    ++records;
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
      failure = Status(StatusCode::kInterrupt, "interrupted");
      return false;
    }
    if (records <= options.skip) return true;
    if (rec.size() == 1 && !rec[0]) return true;  // a blank line
    if (!insert) {
      failure = prepare_insert(rec, options.header);
      if (!failure.ok()) return false;
      if (options.header) return true;
    }
    if (rec.size() != target.size()) {
      failure = Status(StatusCode::kError, "expected " + std::to_string(target.size()) + " fields, found " +
                                               std::to_string(rec.size()));
      return false;
    }
    for (size_t i = 0; i < rec.size(); ++i) {
      Value v = rec[i] ? coerce(*rec[i], columns[target[i]].coerce) : Value();
      if (Status s = insert->bind(static_cast<int>(i + 1), v); !s.ok()) return failure = s, false;
    }
    bool has = false;
    if (Status s = insert->step(&has); !s.ok()) return failure = s, false;
    if (Status s = insert->reset(); !s.ok()) return failure = s, false;
    ++result->rows;
    if (options.progress && result->rows % kProgressRows == 0) {
      progress << "\rimported " << result->rows << " rows";
      if (size > 0) progress << " (" << static_cast<int>(100.0 * std::ftell(f.get()) / size) << "%)";
      progress << std::flush;
    }
    return true;
  };

  csv_parser parser;
  csv_init(&parser, CSV_APPEND_NULL | CSV_EMPTY_IS_NULL);
  if (tsv) csv_set_delim(&parser, '\t');
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t n;
  while (!parse.stopped && (n = ::getline(&buf, &cap, f.get())) > 0) {
    ++line;
    if (csv_parse(&parser, buf, static_cast<size_t>(n), on_field, on_record, &parse) != static_cast<size_t>(n)) {
      failure = Status(StatusCode::kFormat, csv_strerror(csv_error(&parser)));
      break;
    }
  }
  std::free(buf);
  if (!parse.stopped && failure.ok()) csv_fini(&parser, on_field, on_record, &parse);
  csv_free(&parser);
  if (options.progress && result->rows >= kProgressRows) progress << "\n";
  insert.reset();
  if (!failure.ok()) {
    (void)run(db, own_transaction ? "rollback" : "rollback to qrs_import; release qrs_import");
    result->rows = 0;
    return Status(failure.code(), where() + failure.raw_message());
  }
  if (Status s = run(db, own_transaction ? "commit" : "release qrs_import"); !s.ok()) {
    if (own_transaction) (void)run(db, "rollback");
    return s;
  }
  return Status::Ok();
}

}  // namespace quereus
