// The pragma table (main/pragmas.cc): every pragma reads back what was set, through
// either spelling; a refused value leaves the setting as it was; SQL and the embedding
// API reach the same table.
#include <string>
#include <vector>

#include "main/database_impl.h"
#include "main/pragmas.h"
#include "mem_db_test.h"

namespace quereus {
namespace {

class PragmasTest : public MemDbTest {
 protected:
  DatabaseImpl& impl() { return static_cast<DatabaseImpl&>(*db_); }
  std::string read(const std::string& name) {
    auto rows = query("pragma " + name);
    if (rows.size() != 1 || rows[0].size() != 2) return "<no row>";
    return rows[0][1].to_text();
  }
};

TEST_F(PragmasTest, EveryPragmaReadsBackWhatWasSet) {
  struct Case {
    const char* name;
    const char* set;       // as written after `=`
    const char* expected;  // the read-back, as text
  };
  const Case cases[] = {
      {"default_vtab_module", "'memory'", "memory"},
      {"default_column_nullability", "'nullable'", "nullable"},
      {"ddl_transaction_policy", "'strict'", "strict"},
      {"foreign_keys", "off", "false"},
      {"default_collation", "'NOCASE'", "NOCASE"},
      {"nondeterministic_schema", "on", "true"},
      {"optimizer_disabled_passes", "'hash_join'", "hash_join"},
      {"module_pushdown", "off", "false"},
      {"schema_path", "'temp, main'", "temp,main"},
      {"statement_timeout_ms", "250", "250"},
      {"materialized_view_rebuild_row_threshold", "0", "0"},
      {"max_length", "5000", "5000"},
      // Accepted with no effect (sql-txn.md 9.4): they read back the one mode they have.
      {"journal_mode", "'memory'", "memory"},
      {"synchronous", "'off'", "off"},
      // The reference's options with no counterpart here (usage.md, "Available Options").
      {"default_vtab_args", "'{}'", "{}"},
      {"runtime_stats", "true", "true"},
      {"validate_plan", "on", "true"},
      {"trace_plan_stack", "1", "true"},
      {"runtime_fuse_scalars", "false", "false"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    exec(std::string("pragma ") + c.name + " = " + c.set);
    EXPECT_EQ(read(c.name), c.expected);
  }
  // Every entry of the table is covered above.
  for (const Pragma& p : pragmas()) {
    bool covered = false;
    for (const Case& c : cases) covered = covered || std::string(c.name) == p.name;
    EXPECT_TRUE(covered) << p.name << " has no read-back case";
  }
}

TEST_F(PragmasTest, AliasesReachTheSameSetting) {
  exec("pragma search_path = 'temp'");
  EXPECT_EQ(read("schema_path"), "temp");
  exec("pragma allow_nondeterministic_schema_expressions = on");
  EXPECT_EQ(read("nondeterministic_schema"), "true");
  ASSERT_NE(find_pragma("SEARCH_PATH"), nullptr);
  EXPECT_EQ(find_pragma("search_path"), find_pragma("schema_path"));
  // An entry may have several aliases.
  EXPECT_EQ(find_pragma("nullable_default"), find_pragma("default_column_nullability"));
  EXPECT_EQ(find_pragma("column_nullability_default"), find_pragma("default_column_nullability"));
  EXPECT_EQ(find_pragma("fk_enforcement"), find_pragma("foreign_keys"));
}

TEST_F(PragmasTest, ARefusedValueLeavesTheSettingAsItWas) {
  exec("pragma default_column_nullability = 'nullable'");
  fails("pragma default_column_nullability = 'maybe'", StatusCode::kError, "must be 'nullable' or 'not_null'");
  EXPECT_EQ(read("default_column_nullability"), "nullable");
  fails("pragma optimizer_disabled_passes = 'no_such_pass'", StatusCode::kError, "Unknown optimizer pass");
  EXPECT_EQ(read("optimizer_disabled_passes"), "");
  fails("pragma statement_timeout_ms = -1", StatusCode::kError, "statement_timeout_ms");
  EXPECT_EQ(read("statement_timeout_ms"), "0");
  fails("pragma materialized_view_rebuild_row_threshold = -5", StatusCode::kError,
        "materialized_view_rebuild_row_threshold");
  EXPECT_EQ(read("materialized_view_rebuild_row_threshold"), "10000");
  fails("pragma default_collation = 'klingon'", StatusCode::kError, "Unknown collation");
  fails("pragma default_vtab_args = '{\"k\": 1}'", StatusCode::kError, "default_vtab_args other than an empty object");
  EXPECT_EQ(read("default_vtab_args"), "{}");
  fails("pragma no_such_setting = 1", StatusCode::kError, "Unknown pragma");
  fails("pragma no_such_setting", StatusCode::kError, "Unknown pragma");
}

TEST_F(PragmasTest, TheEmbeddingApiUsesTheSameTable) {
  ASSERT_TRUE(db_->set_option("Foreign_Keys", Value::Text("off")).ok());
  EXPECT_EQ(read("foreign_keys"), "false");
  Status st = db_->set_option("ddl_transaction_policy", Value::Text("sometimes"));
  EXPECT_EQ(st.code(), StatusCode::kError);
  EXPECT_EQ(read_pragma(impl(), "ddl_transaction_policy").to_text(), "permissive");
}

}  // namespace
}  // namespace quereus
