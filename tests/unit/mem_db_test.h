// A fresh database over the mem plugin, for unit tests that drive the engine end to end
// through the embedding API (main/database.h).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "main/database.h"
#include "plugin/plugin_loader.h"

namespace quereus {

class MemDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_shared<Registry>();
    PluginLoader loader(registry_, {QUEREUS_PLUGIN_DIR});
    PluginSpec spec;
    spec.path = "mem";
    ASSERT_TRUE(loader.load(spec).ok());
    ASSERT_TRUE(Database::Open(registry_, {}, &db_).ok());
  }

  // Runs `sql`; the test stops unless it succeeds.
  void exec(const std::string& sql) {
    Status st = db_->exec(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.to_string();
  }
  // Runs `sql`; a failure is reported and the test goes on.
  void ok(const std::string& sql) {
    Status st = db_->exec(sql);
    EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
  }
  // Expects `sql` to fail with `code` and a message containing `text`.
  void fails(const std::string& sql, StatusCode code, const std::string& text) {
    Status st = db_->exec(sql);
    ASSERT_FALSE(st.ok()) << sql;
    EXPECT_EQ(st.code(), code) << st.to_string();
    EXPECT_NE(st.message().find(text), std::string::npos) << st.to_string();
  }
  // The rows of the last statement of `sql`; the first failure's status in *error when
  // given (otherwise a failure is reported).
  std::vector<Row> query(const std::string& sql, Status* error = nullptr) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db_->prepare(sql, &stmts);
    std::vector<Row> rows;
    for (auto& s : stmts) {
      rows.clear();
      bool has = st.ok();
      while (has) {
        st = s->step(&has);
        if (!st.ok()) break;
        if (has) rows.push_back(s->row());
      }
      if (!st.ok()) break;
    }
    if (error) *error = st;
    else EXPECT_TRUE(st.ok()) << st.to_string();
    return rows;
  }

  std::shared_ptr<Registry> registry_;
  std::unique_ptr<Database> db_;
};

}  // namespace quereus
