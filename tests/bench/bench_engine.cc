// Benchmark: the engine adapters — ours through main/database.h, SQLite through sqlite3.h.
#include "bench_engine.h"

#include <sqlite3.h>

#include <vector>

#include "main/database.h"

namespace quereus::bench {

namespace {

// ---------------------------------------------------------------- ours

void check(const Status& s, const std::string& what) {
  if (!s.ok()) throw BenchError(what + ": " + s.to_string());
}

class QuereusStatement : public BenchStatement {
 public:
  explicit QuereusStatement(std::unique_ptr<Statement> stmt) : stmt_(std::move(stmt)) {}

  void bind_int(int index, int64_t value) override {
    check(stmt_->bind(index, Value::Integer(value)), "bind");
  }
  void bind_text(int index, std::string_view value) override {
    check(stmt_->bind(index, Value::Text(std::string(value))), "bind");
  }
  bool step() override {
    bool has_row = false;
    check(stmt_->step(&has_row), std::string(stmt_->sql()));
    return has_row;
  }
  bool is_null(int column) const override { return at(column).is_null(); }
  int64_t int_at(int column) const override {
    const Value& v = at(column);
    switch (v.type()) {
      case ValueType::kInteger:
      case ValueType::kBoolean:
        return v.as_int();
      case ValueType::kReal:
        return static_cast<int64_t>(v.as_real());
      default:
        throw BenchError("column " + std::to_string(column) + " is " + value_type_name(v.type()) +
                         ", not integer");
    }
  }
  std::string_view text_at(int column) const override {
    const Value& v = at(column);
    if (v.type() != ValueType::kText)
      throw BenchError("column " + std::to_string(column) + " is " + value_type_name(v.type()) + ", not text");
    return v.str();
  }
  void reset() override { check(stmt_->reset(), "reset"); }

 private:
  const Value& at(int column) const {
    const Row& row = stmt_->row();
    if (column < 0 || static_cast<size_t>(column) >= row.size())
      throw BenchError("no column " + std::to_string(column));
    return row[column];
  }

  std::unique_ptr<Statement> stmt_;
};

class QuereusEngine : public BenchEngine {
 public:
  QuereusEngine(std::unique_ptr<Database> db, std::shared_ptr<Registry> registry, std::string module,
                std::string data_dir, bool sync)
      : db_(std::move(db)), registry_(std::move(registry)), module_(std::move(module)), dir_(std::move(data_dir)),
        sync_(sync) {}
  std::unique_ptr<BenchEngine> peer() override {
    if (module_ != "sync-store" || dir_.empty()) return nullptr;
    DatabaseOptions options;
    options.name = "peer";
    options.default_module = module_;
    options.module_options[module_] = {{"path", Value::Text(dir_ + "/peer")}, {"sync", Value::Boolean(sync_)}};
    std::unique_ptr<Database> db;
    check(Database::Open(registry_, options, &db), "Database::Open (peer)");
    return std::make_unique<QuereusEngine>(std::move(db), registry_, "", "", sync_);
  }
  bool sync_apply(const std::string& page) override {
    if (module_ != "sync-store") return false;
    std::string result;
    check(db_->sync_apply(page, &result), "sync_apply");
    return true;
  }
  std::optional<std::string> sync_request(const std::string& op, const std::string& args) override {
    if (module_ != "sync-store") return std::nullopt;
    std::string reply;
    check(db_->sync_request(op, args, &reply), "sync_request " + op);
    return reply;
  }

  void exec(const std::string& sql) override { check(db_->exec(sql), sql); }
  std::unique_ptr<BenchStatement> prepare(const std::string& sql) override {
    std::vector<std::unique_ptr<Statement>> stmts;
    check(db_->prepare(sql, &stmts), sql);
    if (stmts.size() != 1) throw BenchError("expected one statement: " + sql);
    return std::make_unique<QuereusStatement>(std::move(stmts[0]));
  }

 private:
  std::unique_ptr<Database> db_;
  std::shared_ptr<Registry> registry_;
  std::string module_, dir_;
  bool sync_;
};

// ---------------------------------------------------------------- SQLite

class SqliteStatement : public BenchStatement {
 public:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStatement() override { sqlite3_finalize(stmt_); }

  void bind_int(int index, int64_t value) override {
    check(sqlite3_bind_int64(stmt_, index, value), "bind");
  }
  void bind_text(int index, std::string_view value) override {
    check(sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_STATIC), "bind");
  }
  bool step() override {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw BenchError(std::string(sqlite3_sql(stmt_)) + ": " + sqlite3_errmsg(db_));
  }
  bool is_null(int column) const override { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  int64_t int_at(int column) const override { return sqlite3_column_int64(stmt_, column); }
  std::string_view text_at(int column) const override {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return p ? std::string_view(p, sqlite3_column_bytes(stmt_, column)) : std::string_view();
  }
  void reset() override { sqlite3_reset(stmt_); }  // a step() error was already thrown

 private:
  void check(int rc, const char* what) const {
    if (rc != SQLITE_OK) throw BenchError(std::string(what) + ": " + sqlite3_errmsg(db_));
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class SqliteEngine : public BenchEngine {
 public:
  bool is_sqlite() const override { return true; }
  SqliteEngine(const std::string& file, bool sync) {
    const int rc = sqlite3_open_v2(file.empty() ? ":memory:" : file.c_str(), &db_,
                                   SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw BenchError("sqlite3_open_v2: " + msg);
    }
    if (!file.empty()) exec(std::string("pragma journal_mode = wal; pragma synchronous = ") + (sync ? "full" : "off"));
  }
  ~SqliteEngine() override { sqlite3_close_v2(db_); }

  void exec(const std::string& sql) override {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw BenchError(sql + ": " + msg);
    }
  }
  std::unique_ptr<BenchStatement> prepare(const std::string& sql) override {
    sqlite3_stmt* stmt = nullptr;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, &tail) != SQLITE_OK)
      throw BenchError(sql + ": " + sqlite3_errmsg(db_));
    if (!stmt) throw BenchError("expected one statement: " + sql);
    return std::make_unique<SqliteStatement>(db_, stmt);
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace

std::unique_ptr<BenchEngine> open_quereus(std::shared_ptr<Registry> registry, const std::string& module,
                                          const std::string& data_dir, bool sync) {
  DatabaseOptions options;
  options.default_module = module;
  if (!data_dir.empty())
    options.module_options[module] = {{"path", Value::Text(data_dir)}, {"sync", Value::Boolean(sync)}};
  std::unique_ptr<Database> db;
  check(Database::Open(registry, options, &db), "Database::Open");
  return std::make_unique<QuereusEngine>(std::move(db), std::move(registry), module, data_dir, sync);
}

std::unique_ptr<BenchEngine> open_sqlite(const std::string& file, bool sync) {
  return std::make_unique<SqliteEngine>(file, sync);
}

}  // namespace quereus::bench
