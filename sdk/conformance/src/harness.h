// Internal to libquereus-conformance: the test harness every group uses.
//
// Each test runs in a fresh Env: a new Registry with the plugin under test loaded by the
// host's PluginLoader, and a Database whose default module is that module (a persistent
// module gets a fresh directory). Tests speak SQL through the Env's helpers, which throw
// Failure with the statement and what was expected vs got; where a point is only visible
// at the vtable level they reach the table's module adapter through vtab().
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "config/options.h"
#include "main/database.h"
#include "main/database_impl.h"
#include "catalog/registry.h"
#include "plugin/plugin_loader.h"
#include "quereus/conformance.hpp"
#include "catalog/module.h"

namespace quereus::conformance::detail {

// A failed check: what went wrong (statement, expected vs got).
struct Failure {
  std::string message;
};
// The module does not declare what the test needs.
struct Skip {
  std::string reason;
};

[[noreturn]] inline void fail(std::string message) { throw Failure{std::move(message)}; }
[[noreturn]] inline void skip(std::string reason) { throw Skip{std::move(reason)}; }

// Everything fixed for the run.
struct SuiteContext {
  std::string plugin_path;   // absolute
  std::string module;        // registry name of the module under test
  PluginManifest manifest;
  SettingList options;       // the module options (before {data_dir} substitution)
  std::string data_root;     // parent of the per-test directories
  uint64_t seed = 0;
  ModuleCapabilities caps;
  bool path_given = false;   // the options name `path`
  mutable int next_dir = 0;
  std::string fresh_dir() const;
};

// One row rendered as "cell|cell|…" (NULL as "NULL", values as Value::to_text()).
std::string render_row(const Row& row);
std::string render_rows(const std::vector<std::string>& rows);

class Env {
 public:
  explicit Env(const SuiteContext& ctx);
  ~Env();
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  Database& db() { return *db_; }
  DatabaseImpl& impl();
  const SuiteContext& ctx() const { return ctx_; }

  // Runs every statement; fails naming the statement and its error.
  void exec(const std::string& sql);
  // Runs and returns the error status (OK when it succeeded).
  Status try_exec(const std::string& sql);
  // The statement must fail; with `code`, with that status code; with `fragment`, its
  // message must contain it. Returns the status.
  Status fails(const std::string& sql, std::optional<StatusCode> code = std::nullopt,
               const std::string& fragment = "");
  // The rows of a query, rendered (render_row).
  std::vector<std::string> query(const std::string& sql);
  std::vector<Row> query_rows(const std::string& sql);
  // The single cell of a one-row, one-column query, rendered.
  std::string scalar(const std::string& sql);
  // Runs a DML statement with `returning *` appended and returns how many rows it wrote
  // (what a `changes()` would report).
  size_t affected(const std::string& dml);
  void expect_affected(const std::string& dml, size_t n);
  // The query's rows must equal `expected` in order.
  void expect(const std::string& sql, const std::vector<std::string>& expected);
  // The query's rows must equal `expected` as a multiset (order ignored).
  void expect_unordered(const std::string& sql, std::vector<std::string> expected);

  // Closes the Database and opens it again over the same directory and registry.
  void reopen();
  // The table's catalog entry (its schema, module instance and engine-side table).
  std::shared_ptr<TableEntry> table(const std::string& name);
  // A fresh connected instance of the table through the module adapter (module->connect),
  // for vtable-level checks.
  std::unique_ptr<VtabTable> vtab(const std::string& name);

 private:
  void open();
  const SuiteContext& ctx_;
  std::string dir_;
  std::unique_ptr<PluginLoader> loader_;
  std::shared_ptr<Registry> registry_;
  std::unique_ptr<Database> db_;
};

struct TestCase {
  int group = 0;
  std::string name;
  std::function<void(Env&)> run;
};

using TestList = std::vector<TestCase>;
void add_load_tests(TestList& out);      // 1
void add_crud_tests(TestList& out);      // 2
void add_key_tests(TestList& out);       // 3
void add_ordering_tests(TestList& out);  // 4
void add_honesty_tests(TestList& out);   // 5
void add_txn_tests(TestList& out);       // 6
void add_halloween_tests(TestList& out); // 7
void add_alter_tests(TestList& out);     // 8
void add_persistence_tests(TestList& out);  // 9
void add_backing_tests(TestList& out);      // 10
void add_lens_tests(TestList& out);         // 11
void add_advertise_tests(TestList& out);    // 12

// Checks with a uniform message.
void expect_eq(const std::string& what, const std::string& expected, const std::string& got);

// Runs a vtable write on `t` inside its own transaction (begin … commit) when the module
// takes part in transactions.
UpdateResult vt_write(VtabTable& t, RowOp op, std::span<const Value> values, std::span<const Value> old_key,
                      ConflictAction on_conflict);
// Every row a cursor opened with `args` emits.
std::vector<Row> vt_scan(VtabTable& t, const ScanArgs& args);

}  // namespace quereus::conformance::detail
