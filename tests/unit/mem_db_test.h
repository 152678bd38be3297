// A fresh database over the mem plugin, for unit tests that drive the engine end to end
// through the embedding API (core/database.h).
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "core/database.h"
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

  std::shared_ptr<Registry> registry_;
  std::unique_ptr<Database> db_;
};

}  // namespace quereus
