// libFuzzer target for SQL execution: statements run against a fresh in-memory database
// (the `mem` plugin) over one of a few fixed schemas, under ASan + UBSan. An error is the
// expected outcome of most inputs; a crash, a sanitizer report or an escaped exception
// is a finding. Unbounded statements (a recursive CTE without an end) are cut by
// libFuzzer's -timeout / -rss_limit_mb, which scripts/fuzz.sh does not count as findings.
//
// Input: the first byte picks the schema; the rest is SQL, run one ';'-separated piece at
// a time so that a failing statement does not hide the ones after it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "main/database.h"
#include "catalog/registry.h"
#include "plugin/plugin_loader.h"

namespace {

constexpr const char* kSchemas[] = {
    // 0: nothing
    "",
    // 1: two keyed tables, an index, a view
    "create table t (a integer primary key, b text null, c real null);"
    "create table u (x integer, y text, primary key (x, y));"
    "create index t_b on t (b);"
    "create view v as select a, b from t where a > 1;"
    "insert into t values (1, 'one', 1.5), (2, 'two', null), (3, null, -0.0);"
    "insert into u values (1, 'a'), (1, 'b'), (2, 'a');",
    // 2: foreign keys, checks, uniqueness, defaults, generated columns
    "create table p (id integer primary key, name text unique, n integer default 7 check (n >= 0));"
    "create table c (id integer primary key, pid integer null references p(id) on delete cascade,"
    " tag text collate nocase null, g integer generated always as (id * 2) stored);"
    "insert into p values (1, 'x', 1), (2, 'y', 2);"
    "insert into c (id, pid, tag) values (10, 1, 'A'), (11, 2, 'b'), (12, null, null);",
    // 3: every type, a descending composite key, JSON and blobs
    "create table k (a text, b integer, j json null, bl blob null, f boolean null, primary key (a desc, b));"
    "insert into k values ('a', 1, '{\"x\":[1,2]}', x'00ff', true), ('b', -9223372036854775808, null, null, false);",
};

// Loads `mem` into `registry`; aborts when it cannot (a broken build, not a finding).
void load_mem(quereus::PluginLoader& loader) {
  quereus::Status s = loader.load(quereus::PluginSpec{"mem", std::nullopt, {}, "sql_fuzz"});
  if (!s.ok()) {
    std::fprintf(stderr, "sql_fuzz: %s\n", s.to_string().c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const char* schema = kSchemas[data[0] % (sizeof(kSchemas) / sizeof(kSchemas[0]))];
  std::string_view sql(reinterpret_cast<const char*>(data) + 1, size - 1);
  // One loader for the whole run keeps mem.so mapped, so each input's load is cheap.
  static quereus::PluginLoader* keeper = [] {
    static quereus::PluginLoader l(std::make_shared<quereus::Registry>(), {QUEREUS_FUZZ_PLUGIN_DIR});
    load_mem(l);
    return &l;
  }();
  (void)keeper;
  // A fresh registry per input: mem's tables live in its module instance, made by the
  // plugin's entry, so nothing of one input leaks into the next.
  auto registry = std::make_shared<quereus::Registry>();
  quereus::PluginLoader loader(registry, {QUEREUS_FUZZ_PLUGIN_DIR});
  load_mem(loader);
  std::unique_ptr<quereus::Database> db;
  if (!quereus::Database::Open(registry, quereus::DatabaseOptions{}, &db).ok()) std::abort();
  if (quereus::Status s = db->exec(schema); !s.ok()) {
    std::fprintf(stderr, "sql_fuzz: schema failed: %s\n", s.to_string().c_str());
    std::abort();
  }
  while (!sql.empty()) {
    size_t end = sql.find(';');
    std::string_view piece = sql.substr(0, end);
    sql.remove_prefix(end == std::string_view::npos ? sql.size() : end + 1);
    (void)db->exec(piece);  // errors are expected; only crashes count
  }
  return 0;
}
